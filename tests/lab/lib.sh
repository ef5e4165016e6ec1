# shellcheck shell=bash
# What the lab suites (tests/lab/test_lab.sh, test_real.sh, test_lists.sh, test_web.sh) share:
# sourced, never run.  The suite then defines its tests as functions, lists
# them in the array `tests`, and calls lab_suite:
#
#   tests=("NAME|CMD" "NAME|SECS|CMD" ...)   SECS: the test's hard time limit
#                                            (default LAB_TIMEOUT, 60)
#   lab_suite PREFIX [per-test]
#
# Each test runs in a lab of its own (lab/lab.sh up + start), in a child
# bash under `timeout`, and the lab is torn down after it whether it passed,
# failed or was killed.  The lab is named PREFIX<pid>, or with "per-test"
# PREFIX<pid>-<n> (a name of its own for every test).  With "shared" one
# lab (PREFIX<pid>) is brought up before the first test and serves them
# all, torn down at the end (also on failure or interruption); each test
# is still bounded by its time limit (`timeout` ends its whole process
# group), then the suite's lab_reset runs, if it defines one (it puts back
# what a test left: its processes in the lab's namespaces, settings); a
# lab whose flowcutd or flowcut-npu has died is brought up anew for the
# next test.  Output: one
# "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line per test
# (tests/run.sh counts them; a test that exits 77 could not run here, and
# says why in $run/skip), "# ..." lines for figures.  ONLY=pattern runs
# the tests whose name matches; TRACE=1 runs them under bash -x.
#
# The child bash gets every function defined so far and the variables named
# in LAB_VARS (L run lab ctl top BUILD, plus any the suite adds).  A suite
# may define lab_on_fail (run in the lab of a test that failed, before it is
# torn down) and lab_at_exit (run once at the end, also when interrupted),
# redefine lab_down, and set LAB_TIMES=1 (each test's duration as a "#" line).
set -u
# Debian's python3 first, as the Makefile puts it (a pyenv shim costs 0.4 s a call)
export PATH=/usr/bin:/usr/sbin:$PATH
lib_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$lib_here/../.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
lab=$top/lab/lab.sh
ctl=$BUILD/flowcutctl
LAB_VARS=${LAB_VARS:-}
# the variables a case's shell gets: those set (an unset one, a LAB_VARS
# the caller did not give, stays unset there, its default in force)
lab_vars() {
	local v
	for v in L run lab ctl top BUILD $LAB_VARS; do
		[ -n "${!v+x}" ] && declare -p "$v"
	done
}

say() { echo "# $*"; }
ex() { "$lab" exec "$L" "$@"; }
rx() { ex host cat "/sys/class/net/$1/statistics/rx_packets"; }	# frames the host took in
srv_rx() { ex server cat /sys/class/net/s0/statistics/rx_packets; }
counter() { "$ctl" --link "/run/flowcut-lab/$L/link" --json counters --all | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"; }
conns() { "$ctl" --link "/run/flowcut-lab/$L/link" conns; }
cfg() { "$ctl" --link "/run/flowcut-lab/$L/link" --json cfg | sed -n 's/.*"fw_cfg": \([0-9]*\).*/\1/p'; }

lab_up() { "$lab" down "$L" >/dev/null 2>&1; "$lab" up "$L" && "$lab" start "$L"; }
lab_down() { "$lab" down "$L" >/dev/null 2>&1; }
lab_at_exit() { :; }
# the shared lab (lab_suite ... shared) still has its flowcutd and flowcut-npu
lab_shared_alive() {
	local p
	for p in flowcutd npu; do
		[ -s "$run/$p.pid" ] && "$lab" alive "$L" "$(cat "$run/$p.pid")" || return 1
	done
}

# waits (at most $1 tenths of a second) until "$2..." succeeds
wait_for() {
	local n=$1
	shift
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

# kills a daemon (its pid file) and waits until it is gone, its TAPs free
kill_and_wait() {
	local pid
	pid=$(cat "$1")
	kill -9 "$pid"
	wait_for 50 bash -c "! $lab alive $L $pid"
}

# flowcutd has programmed a coprocessor a second time
reprogrammed() { wait_for 50 bash -c "[ \$(grep -c programmed $run/flowcutd.log) -ge 2 ]"; }

# ---- streams, counters and fail2ban, for more than one suite ----

# the stream itself (not iperf3's TCP control connection) crosses the fast path:
# its protocol is in the table and frames are forwarded there
stream_offloaded() { # proto
	conns | grep -q " IPS  [46] $1 " &&
		[ "$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)" -ge 200 ] 2>/dev/null
}
# a UDP stream in the background (its pid in $stream): to dst at rate for
# seconds, to port (5202; iperf3's output in $run/udp.out, or udp-PORT.out)
# from source (the client's first address by default)
udp_stream() { # dst rate seconds [port [source]]
	local port=${4:-5202}
	ex server iperf3 -s -D -1 -p "$port" >/dev/null 2>&1
	sleep 0.3
	ex client timeout $(( $3 + 5 )) iperf3 -u -c "$1" -p "$port" ${5:+-B "$5"} -b "$2" -t "$3" -l 1000 \
		>"$run/udp${4:+-$4}.out" 2>&1 &
	stream=$!
}
# waits for the stream's end (not for daemons a test started again)
stream_end() { wait "$stream" 2>/dev/null || true; }

# frames the server took in: UDP to 5202, TCP to 5203 (counters of its own)
port_counters() {
	ex server nft -f - <<-EOF
	table inet cnt {
		counter p5202 {}
		counter p5203 {}
		chain in {
			type filter hook input priority -10; policy accept;
			udp dport 5202 counter name p5202
			tcp dport 5203 counter name p5203
		}
	}
	EOF
}
port_rx() { ex server nft list counter inet cnt "p$1" | sed -n 's/.*packets \([0-9]*\).*/\1/p'; }
# "FAMILY PORT": a connection to PORT forwards in the fast path now, at the
# revision in force (its orig packets climb over 0.2 s), not cut.  FAMILY
# is "4" or "6", or with the protocol "4 udp": iperf3's control connection
# is TCP to the same port, offloaded within a second, and its few frames
# would pass for a UDP stream's that is not offloaded yet (conntrack
# assures a UDP state only once it has lasted 2 s).
forwarding() {
	local a b
	a=$(fwd_packets "$1" "$2") || return 1
	sleep 0.2
	b=$(fwd_packets "$1" "$2") || return 1
	[ "$b" -gt "$a" ]
}
# When a connection was first seen forwarding in the fast path: samples of
# fwd_packets FAM PORT taken back to back (a status and a conns each, about
# 0.1 s) for at most TENTHS tenths of a second; prints the time (date
# +%s.%N) just after the first sample that shows more packets than the one
# before it, so at most one sample late.  `wait_for ... forwarding` is up
# to a check and a half late (its two samples 0.2 s apart, then 0.1 s of
# sleep): too coarse for a bound of a second.
forwarding_since() { # fam port tenths
	local prev="" n t end=$(( $(date +%s%N) + $3 * 100000000 ))
	while [ "$(date +%s%N)" -lt "$end" ]; do
		n=$(fwd_packets "$1" "$2") || n=""
		t=$(date +%s.%N)
		if [ -n "$n" ] && [ -n "$prev" ] && [ "$n" -gt "$prev" ]; then
			echo "$t"
			return 0
		fi
		prev=$n
		sleep 0.02
	done
	return 1
}
fwd_packets() {
	local st cs fam=${1%% *} proto=${1#* }
	[ "$proto" != "$1" ] || proto=''
	st=$("$ctl" --link "/run/flowcut-lab/$L/link" --json status) || return 1
	cs=$("$ctl" --link "/run/flowcut-lab/$L/link" --json conns) || return 1
	# FAM: "4", or with a protocol "4 udp"
	python3 "$top/lab/measure.py" conns --fam "$fam" ${proto:+--proto "$proto"} --port "$2" --valid --forwarding \
		--rev-of "$st" --print packets <<<"$cs"
}

# The window of test_lab's flood check (test_lists, test_web), from 1 s after the cut: win_start,
# then win_end LABEL once 10 s have passed since (win_rest sleeps what is
# left of them): says the figures; true when the host's front ports took in
# at most 10 frames and the coprocessor dropped at least 10,000.
win_start() {
	sleep 1
	w_host=$(( $(rx fp0) + $(rx fp1) )) w_drop=$(counter FROM_WIRE_DROP_IPS_VERDICT) w_t=$(date +%s%N)
}
win_rest() {
	local ms=$(( 10000 - ($(date +%s%N) - w_t) / 1000000 ))
	[ "$ms" -le 0 ] || sleep "$(( ms / 1000 )).$(printf %03d $(( ms % 1000 )))"
}
win_end() { # label
	local host drop s
	win_rest
	s=$(( ($(date +%s%N) - w_t) / 1000000 ))
	host=$(( $(rx fp0) + $(rx fp1) - w_host )) drop=$(( $(counter FROM_WIRE_DROP_IPS_VERDICT) - w_drop ))
	say "$1: the host took in $host frames in the $s ms from 1 s after the cut," \
	    "the coprocessor dropped $drop (DROP_IPS_VERDICT)"
	[ "$host" -le 10 ] && [ "$drop" -ge 10000 ]
}
# a 400 Mbit/s UDP flood to the server from ADDR, to PORT, forwarding in the
# fast path (its pid in $stream)
flood() { # family from port [rate]
	local d=198.18.1.2
	[ "$1" = 6 ] && d=2001:2:0:1::2
	udp_stream "$d" "${4:-400M}" 22 "$3" "$2"
	wait_for 60 forwarding "$1 udp" "$3" || { say "the flood from $2 was never offloaded"; conns; return 1; }
	sleep 0.5
}

# stops every flood: the processes of the lab's client namespace (iperf3
# clients), by their pids, and waits until they are gone - killing the
# background job alone may leave its iperf3 sending (into the next window)
floods_stop() {
	local p
	for p in $(ip netns pids "$L-client"); do kill "$p" 2>/dev/null; done
	wait_for 30 bash -c "[ -z \"\$(ip netns pids $L-client)\" ]"
}

# The real fail2ban (Debian's package) in the host's namespace, every file
# of its own in $run/f2b: f2b_conf makes $run/f2b/conf, a copy of
# /etc/fail2ban without Debian's jails (sshd on the machine's logs) and with
# its socket, pid, database and log in $run/f2b - the machine's fail2ban
# and its files are never touched; the suite writes conf/jail.local, then
# f2b_up JAIL starts it (ready when JAIL answers).
f2b() { ex host fail2ban-client -c "$run/f2b/conf" "$@"; }
f2b_conf() {
	rm -rf "$run/f2b"
	mkdir -p "$run/f2b"
	cp -r /etc/fail2ban "$run/f2b/conf"
	rm -f "$run/f2b/conf/jail.d/"*	# Debian's: sshd, on the machine's logs
	cat >"$run/f2b/conf/fail2ban.local" <<-EOF
	[Definition]
	logtarget = $run/f2b/fail2ban.log
	socket = $run/f2b/fail2ban.sock
	pidfile = $run/f2b/fail2ban.pid
	dbfile = $run/f2b/fail2ban.sqlite3
	EOF
}
f2b_up() { # jail
	timeout 20 "$lab" exec "$L" host fail2ban-client -c "$run/f2b/conf" start >/dev/null 2>&1 &&
		wait_for 50 f2b status "$1"
}
f2b_stop() { timeout 20 "$lab" exec "$L" host fail2ban-client -c "$run/f2b/conf" stop >/dev/null 2>&1; }

# runs "${tests[@]}" (see the top of this file), which the suite sets
# shellcheck disable=SC2154
lab_suite() { # prefix [per-test|shared]
	local base=$1$$ per=${2:-} t name cmd secs n=0 t0 rc wire_said='' why up shared_up=
	L=$base
	run=/run/flowcut-lab/$L
	if [ "$(id -u)" -ne 0 ] || ! ip netns add "$L-probe" 2>/dev/null; then
		for t in "${tests[@]}"; do echo "ok - ${t%%|*} # SKIP needs root and network namespaces"; done
		exit 0
	fi
	ip netns del "$L-probe"
	trap 'lab_down; lab_at_exit' EXIT
	for t in "${tests[@]}"; do
		n=$((n + 1))
		name=${t%%|*}
		cmd=${t#*|}
		secs=${LAB_TIMEOUT:-60}
		case "$cmd" in [0-9]*"|"*) secs=${cmd%%|*}; cmd=${cmd#*|} ;; esac
		# ONLY=pattern runs the tests whose name matches (for debugging)
		case "$name" in *${ONLY:-}*) ;; *) continue ;; esac
		if [ "$per" = per-test ]; then
			L=$base-$n
			run=/run/flowcut-lab/$L
		fi
		t0=$SECONDS
		up=''
		if [ "$per" = shared ] && [ -n "$shared_up" ]; then
			if lab_shared_alive; then
				up=1	# the suite's lab, up already
			else
				say "the shared lab's flowcutd or flowcut-npu is gone: brought up anew"
				lab_down
				shared_up=''
			fi
		fi
		if [ -z "$up" ] && lab_up >"/tmp/$base.up.log" 2>&1; then
			up=1
			[ "$per" = shared ] && shared_up=1
		fi
		# shellcheck disable=SC2086
		if [ -n "$up" ]; then
			# a lab that fell back from AF_XDP says so, once a suite
			if [ -z "$wire_said" ] && [ -s "$run/wire" ] && [ "$(cat "$run/wire")" != af_xdp ]; then
				why=$(grep '^lab: ' "/tmp/$base.up.log" | tail -1)
				echo "# the lab's wire: $(cat "$run/wire")${why:+ ($why)}"
				wire_said=1
			fi
			timeout "$secs" bash ${TRACE:+-x} -c "$(declare -f); $(lab_vars); $cmd"
			rc=$?
			if [ $rc -eq 0 ]; then
				echo "ok - $name"
			elif [ $rc -eq 77 ]; then	# the test could not run here: why in $run/skip
				echo "ok - $name # SKIP $(tail -1 "$run/skip" 2>/dev/null || echo "said above")"
			else
				echo "not ok - $name"
				if declare -F lab_on_fail >/dev/null; then lab_on_fail 2>&1 | sed 's/^/#   /'; fi
				sed 's/^/#   /' "$run/flowcutd.log" 2>/dev/null | tail -5
			fi
		else
			echo "not ok - $name"
			sed 's/^/#   /' "/tmp/$base.up.log" | tail -10
		fi
		if [ "$per" != shared ]; then
			lab_down
		elif [ -n "$shared_up" ] && declare -F lab_reset >/dev/null; then
			lab_reset 2>&1 | sed 's/^/#   /'
		fi
		[ -n "${LAB_TIMES:-}" ] && say "($name: $((SECONDS - t0)) s)"
	done
	rm -f "/tmp/$base.up.log"
}
