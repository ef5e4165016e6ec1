#!/usr/bin/env bash
# The appliance out of network namespaces.
#
#   lab/lab.sh up NAME      make the namespaces, cables and the host's ruleset
#   lab/lab.sh start NAME   start flowcut-npu, flowcut-inspect, flowcutd and flowcut-web, address the host's ports
#   lab/lab.sh start-npu NAME, start-flowcutd NAME, start-web NAME   start one again (after a kill)
#   lab/lab.sh inspector-pid NAME   flowcut-inspect's pid now (its keeper starts it again when it ends)
#   lab/lab.sh stop-web NAME   stop flowcut-web alone
#   lab/lab.sh stop NAME    stop them
#   lab/lab.sh down NAME    stop them and remove everything NAME made
#   lab/lab.sh exec NAME ROLE CMD...   run CMD in NAME-ROLE (client npu host server)
#   lab/lab.sh alive NAME PID   0 if PID runs, 1 if it ended (a zombie has: below)
#   lab/lab.sh wire NAME    the wire start takes: FLOWCUT_WIRE (af_xdp), af_packet where AF_XDP cannot run (said)
#
#   client            npu (the coprocessor's wire side)           server
#   NAME-client       NAME-npu                                    NAME-server
#   c0 ------------- w0  [flowcut-npu, net_af_packet or net_af_xdp]  w1 --- s0
#   198.18.0.2/24                                                198.18.1.2/24
#   2001:2::2/64        link: /run/flowcut-lab/NAME/link  2001:2:0:1::2/64
#                                 |
#                     NAME-host: flowcutd, TAPs fp0 fp1
#                     fp0 198.18.0.1/24 2001:2::1/64   fp1 198.18.1.1/24 2001:2:0:1::1/64
#                     nftables (lab/ruleset.nft), forwarding on
#
# Only 198.18.0.0/15 and 2001:2::/48, only inside these namespaces.  Every
# step is idempotent enough that `down` cleans up after a failed `up`.
# Environment: BUILD (default build), FLOWCUTD_ARGS (extra flowcutd options),
# FLOWCUT_NPU_WRAP and FLOWCUTD_WRAP (a command put in front of flowcut-npu,
# of flowcutd: e.g. "setpriv --bounding-set=... --" to run each with its
# systemd unit's capabilities; default none), FLOWCUT_NPU_CONNS (flowcut-npu's
# --conns, its table's size: its own default when unset; its EAL memory, -m,
# grows with it past 256 MB, about 600 B a connection), FLOWCUT_NPU_HOST_NEW_RATE
# (flowcut-npu's --host-new-rate, the SYNs a second that miss handed to the
# host, 0 = no limit: its own default when unset; docs/lab.md), FLOWCUT_WIRE
# (the coprocessor's wire ports: af_xdp, the default, which falls back to
# af_packet, said, where AF_XDP cannot run; or af_packet; docs/lab.md),
# FLOWCUT_NPU_WORKERS (flowcut-npu's --workers, default 1: each port and
# veth gets a queue a worker; set it for `up` and `start` both),
# FLOWCUT_AF_PACKET_ARGS (more net_af_packet devargs, e.g. framecnt=4096).
# The lab's settings file is /run/flowcut-lab/NAME/settings.conf; `up` writes
# it watching the ruleset's sets inet filter blocked4 and blocked6:
#   build/flowcutctl --settings /run/flowcut-lab/NAME/settings.conf settings set KEY VALUE
# flowcutd's control socket is /run/flowcut-lab/NAME-ctl/flowcutd.sock, in a
# folder of its own that flowcutd makes (0700, or 0750 for the settings'
# control_read_group: the lab's folder NAME holds the link and stays 0700);
# a cut by hand runs in the host's namespace (flowcutd's nftables table is there):
#   lab/lab.sh exec NAME host build/flowcutctl cut 198.18.1.2 [--for SECONDS]
#   lab/lab.sh exec NAME host build/flowcutctl --control /run/flowcut-lab/NAME-ctl/flowcutd.sock cut --conn ID
# The operator's page, flowcut-web, runs in NAME-host on 127.0.0.1:9842 and
# [::1]:9842 (that namespace's loopback: the machine's own port 9842 is not
# taken), as the system user flowcut-lab-web (no login, a uid of its own: not
# nobody, which other daemons share) in the group flowcut-lab, which `up`
# makes when the machine has none (and leaves: labs run side by side) and
# names as the settings' control_read_group; its log is $run/web.log, the operator's
# secret flowcutd writes is $run/web.secret (flowcutd --secret), the read
# credential (reads and /metrics) $run-web/read.secret.  Open it with
#   lab/lab.sh exec NAME host curl -s -u "reader:$(cat /run/flowcut-lab/NAME-web/read.secret)" http://127.0.0.1:9842/
#   lab/lab.sh exec NAME host chromium --headless --no-sandbox --dump-dom "http://reader:$(cat /run/flowcut-lab/NAME-web/read.secret)@[::1]:9842/"
# (docs/lab.md: why no port of the machine is forwarded to it).
# The inspector's parser, flowcut-inspect, runs in NAME-host as the system
# user flowcut-lab-inspect (no group but its own, nothing to write), its
# socket $run/inspect.sock made as root before it drops to that user, its
# log $run/inspect.log; a keeper loop starts it again 0.2 s after it ends,
# as its unit's Restart=always does (deploy/flowcut-inspect.service).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac

usage() { sed -n '2,12p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
cmd=$1 name=$2
shift 2
run=/run/flowcut-lab/$name
ns() { ip netns exec "$name-$1" "${@:2}"; }

offloads_off() { # ns dev
	ns "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1 || true
}

up() {
	install -d -m 0700 "$run"	# 0700: the link lives in it
	for r in client npu host server; do
		ip netns add "$name-$r"
		ns "$r" ip link set lo up
		ns "$r" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	done
	# a queue a worker (FLOWCUT_NPU_WORKERS): a veth hands a frame to the
	# peer's receive queue of the sender's transmit queue, which the
	# sender picks by the flow's hash - the wire's RSS
	local q=${FLOWCUT_NPU_WORKERS:-1}
	ip link add c0 netns "$name-client" numtxqueues "$q" numrxqueues "$q" \
		type veth peer name w0 netns "$name-npu" numtxqueues "$q" numrxqueues "$q"
	ip link add s0 netns "$name-server" numtxqueues "$q" numrxqueues "$q" \
		type veth peer name w1 netns "$name-npu" numtxqueues "$q" numrxqueues "$q"
	for d in w0 w1; do
		# the coprocessor's wire side speaks no IP of its own
		ns npu sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"
		ns npu ip link set "$d" up
		offloads_off npu "$d"
	done
	ns client ip addr add 198.18.0.2/24 dev c0
	ns client ip addr add 2001:2::2/64 dev c0 nodad
	ns client ip link set c0 up
	ns client ip route add default via 198.18.0.1
	ns client ip -6 route add default via 2001:2::1
	offloads_off client c0
	ns server ip addr add 198.18.1.2/24 dev s0
	ns server ip addr add 2001:2:0:1::2/64 dev s0 nodad
	ns server ip link set s0 up
	ns server ip route add default via 198.18.1.1
	ns server ip -6 route add default via 2001:2:0:1::1
	offloads_off server s0
	ns host sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	ns host nft -f "$here/ruleset.nft"
	# flowcut-web reads flowcutd's state as a member of control_read_group
	getent group flowcut-lab >/dev/null || groupadd --system flowcut-lab 2>/dev/null ||
		getent group flowcut-lab >/dev/null	# another lab made it meanwhile
	getent passwd flowcut-lab-web >/dev/null ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			--gid flowcut-lab flowcut-lab-web 2>/dev/null || getent passwd flowcut-lab-web >/dev/null
	# the inspector's parser: a user of its own, in no group of flowcut's
	getent passwd flowcut-lab-inspect >/dev/null ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin \
			--user-group flowcut-lab-inspect 2>/dev/null || getent passwd flowcut-lab-inspect >/dev/null
	grep -qs "^control_read_group = flowcut-lab\$" "$run/settings.conf" ||
		"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set control_read_group flowcut-lab >/dev/null
	# flowcutd cuts what is added to the ruleset's block sets
	for s in blocked4 blocked6; do
		grep -qs "^watched_set = inet filter $s\$" "$run/settings.conf" ||
			"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set watched_set inet filter "$s" >/dev/null
	done
}

# The wire: FLOWCUT_WIRE, af_xdp unless set; but af_packet where AF_XDP
# cannot run here (a kernel without AF_XDP sockets, or no CAP_NET_RAW to
# open one), or, unless af_xdp was asked for, for more than one worker
# (wire_vdevs), said on stderr.  Prints af_packet or af_xdp; start writes
# it to $run/wire.
wire_name() {
	local v=${FLOWCUT_WIRE:-af_xdp} why
	if [ -z "${FLOWCUT_WIRE:-}" ] && [ "${FLOWCUT_NPU_WORKERS:-1}" != 1 ]; then
		echo "lab: $FLOWCUT_NPU_WORKERS workers: the wire is af_packet (af_xdp takes one here)" >&2
		v=af_packet
	fi
	if [ "$v" = af_xdp ] && ! why=$(python3 -c '
import socket, sys
try:
	socket.socket(44, socket.SOCK_RAW).close()	# AF_XDP
except OSError as e:
	sys.exit(e.strerror)' 2>&1); then
		echo "lab: AF_XDP cannot run here (socket(AF_XDP): $why): the wire is af_packet" >&2
		v=af_packet
	fi
	echo "$v"
}

# The coprocessor's wire ports on w0 and w1: FLOWCUT_WIRE=af_xdp (the
# default) or af_packet (docs/lab.md: what each counts, what each costs).
# busy_budget=0: net_af_xdp's default (64) makes a recvfrom() on every read
# that finds the socket empty, to drive the kernel's busy polling - a
# system call per empty poll, half the worker's time in a flood here
# (docs/measurements.md, 2026-12-05); the veth's NAPI runs in the sender's
# context anyway.
wire_vdevs() { # wire (wire_name's)
	local v=$1 q=${FLOWCUT_NPU_WORKERS:-1}
	case "$v" in
	af_packet)
		# FLOWCUT_AF_PACKET_ARGS: more of net_af_packet's devargs (e.g.
		# framecnt=2048,qdisc_bypass=0), for measuring the wire's tuning.
		# DPDK's 512-frame rings stay the default: 4,096 lost 20-100 times
		# fewer frames at the ring here, but the PMD maps its rings locked
		# (MAP_LOCKED, 32 MB for two ports), and under the unit's
		# capabilities (no CAP_IPC_LOCK, RLIMIT_MEMLOCK 8 MiB) its mmap
		# failed, EAGAIN: no ports (docs/lab.md, 2026-12-05)
		local more=${FLOWCUT_AF_PACKET_ARGS:+,$FLOWCUT_AF_PACKET_ARGS}
		case "$more" in *[!a-z0-9_=,]*) echo "lab: FLOWCUT_AF_PACKET_ARGS=$more: name=value,..." >&2; return 2 ;; esac
		echo "--vdev net_af_packet0,iface=w0,qpairs=$q$more --vdev net_af_packet1,iface=w1,qpairs=$q$more" ;;
	af_xdp)
		# DPDK 22.11's net_af_xdp takes as many queues as the interface
		# has combined channels, and a veth has none (rx and tx ones only)
		if [ "$q" != 1 ]; then
			echo "lab: FLOWCUT_WIRE=af_xdp takes one worker: DPDK 22.11's net_af_xdp opens" \
				"at most the veth's combined channels, and a veth has none" >&2
			return 2
		fi
		echo "--vdev net_af_xdp0,iface=w0,busy_budget=0 --vdev net_af_xdp1,iface=w1,busy_budget=0" ;;
	*) echo "lab: FLOWCUT_WIRE=$v: af_packet or af_xdp" >&2; return 2 ;;
	esac
}

# EAL's lcores: the control thread on CPU 0, worker k on CPU k (round the
# machine's CPUs: on 2, a second worker shares CPU 0 with the control thread)
npu_lcores() {
	local w=${FLOWCUT_NPU_WORKERS:-1} n k out=0@0
	n=$(nproc)
	case "$w" in '' | *[!0-9]* | 0) echo "lab: FLOWCUT_NPU_WORKERS=$w: a count of 1 or more" >&2; return 2 ;; esac
	for k in $(seq "$w"); do out+=",$k@$((k % n))"; done
	echo "$out"
}

# Each appends to its log, so a program started again keeps its history.
start_npu() {
	local conns=${FLOWCUT_NPU_CONNS:-} mem=256 wire vdevs
	wire=$(wire_name) && vdevs=$(wire_vdevs "$wire") && npu_lcores >/dev/null || return 2
	install -d -m 0700 "$run"	# 0700: the link lives in it
	echo "$wire" >"$run/wire"
	if [ -n "$conns" ]; then
		mem=$((128 + conns * 600 / 1048576))
		[ "$mem" -ge 256 ] || mem=256
	fi
	# shellcheck disable=SC2086
	ip netns exec "$name-npu" ${FLOWCUT_NPU_WRAP:-} "$BUILD/flowcut-npu" --no-huge -m "$mem" --no-pci --no-telemetry --no-shconf \
		--file-prefix "$name-npu" --lcores "$(npu_lcores)" --log-level=error \
		$vdevs \
		-- --link "$run/link" --ports 2 ${conns:+--conns "$conns"} --workers "${FLOWCUT_NPU_WORKERS:-1}" \
		${FLOWCUT_NPU_HOST_NEW_RATE:+--host-new-rate "$FLOWCUT_NPU_HOST_NEW_RATE"} >>"$run/npu.log" 2>&1 &
	echo $! >"$run/npu.pid"
}

# flowcut-inspect under a keeper (its own session: stop kills both), restarted 0.2 s after it ends
start_inspector() {
	install -d -m 0700 "$run"
	[ -f "$run/inspect.pid" ] && alive "$(cat "$run/inspect.pid")" && return 0
	ip netns exec "$name-host" setsid bash -c \
		'while :; do "$0" --listen "$1" --user flowcut-lab-inspect; sleep 0.2; done' \
		"$BUILD/flowcut-inspect" "$run/inspect.sock" >>"$run/inspect.log" 2>&1 &
	echo $! >"$run/inspect.pid"
}

inspector_pid() {
	local k
	k=$(cat "$run/inspect.pid" 2>/dev/null) || return 1
	for _ in $(seq 50); do
		pgrep -P "$k" -x flowcut-inspect && return 0
		sleep 0.1
	done
	return 1
}

start_flowcutd() {
	install -d -m 0700 "$run"	# 0700: the link lives in it
	start_inspector
	# shellcheck disable=SC2086
	ip netns exec "$name-host" ${FLOWCUTD_WRAP:-} "$BUILD/flowcutd" --link "$run/link" --ports 2 \
		--stats "$run/flowcutd.json" --settings "$run/settings.conf" \
		--control "$run-ctl/flowcutd.sock" --secret "$run/web.secret" \
		--inspector "$run/inspect.sock" \
		${FLOWCUTD_ARGS:-} >>"$run/flowcutd.log" 2>&1 &
	echo $! >"$run/flowcutd.pid"
}

# The page's read credential (what the installer writes to
# /etc/flowcut/read.secret): $run-web/read.secret, root:flowcut-lab 0640 in
# a folder of its own (root:flowcut-lab 0750: $run stays 0700), made once
read_secret() {
	install -d -m 0750 -g flowcut-lab "$run-web"
	[ -s "$run-web/read.secret" ] && return 0
	(umask 077; od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$run-web/read.secret.tmp" &&
		echo >>"$run-web/read.secret.tmp")
	chgrp flowcut-lab "$run-web/read.secret.tmp" && chmod 0640 "$run-web/read.secret.tmp" &&
		mv "$run-web/read.secret.tmp" "$run-web/read.secret"
}

# flowcut-web as flowcut-lab-web, in the group flowcut-lab (the settings'
# control_read_group), on sockets made by root first and handed in
# (lab/sockkeep.py: what flowcut-web.socket does for the appliance), so no
# local user can take its port, even while it restarts; web.pid is
# flowcut-web's, web-keeper.pid the keeper's
start_web() {
	rm -f "$run/web.pid"
	read_secret
	ip netns exec "$name-host" python3 "$here/sockkeep.py" --listen 127.0.0.1:9842 --listen "[::1]:9842" \
		--user flowcut-lab-web --group flowcut-lab --pidfile "$run/web.pid" -- \
		"$BUILD/flowcut-web" --control "$run-ctl/flowcutd.sock" --read-secret "$run-web/read.secret" \
		>>"$run/web.log" 2>&1 &
	echo $! >"$run/web-keeper.pid"
	for _ in $(seq 50); do
		ns host curl -s --max-time 2 -o /dev/null http://127.0.0.1:9842/health && return 0
		sleep 0.1
	done
	echo "lab: flowcut-web does not answer on 127.0.0.1:9842" >&2
	cat "$run/web.log" >&2
	return 1
}

start() {
	local before
	before=$(grep -c programmed "$run/flowcutd.log" 2>/dev/null || true)
	start_npu || return
	start_flowcutd
	for _ in $(seq 100); do
		ns host ip link show fp1 >/dev/null 2>&1 && break
		sleep 0.1
	done
	ns host ip link show fp1 >/dev/null 2>&1 || { echo "lab: flowcutd made no TAPs" >&2; cat "$run/flowcutd.log" >&2; return 1; }
	ns host ip addr replace 198.18.0.1/24 dev fp0
	ns host ip addr replace 2001:2::1/64 dev fp0 nodad
	ns host ip addr replace 198.18.1.1/24 dev fp1
	ns host ip addr replace 2001:2:0:1::1/64 dev fp1 nodad
	# ready when this flowcutd (not an earlier one's log line) has programmed
	# (30 s: a coprocessor starting on a loaded machine may miss a deadline)
	for _ in $(seq 300); do
		[ "$(grep -c programmed "$run/flowcutd.log")" -gt "${before:-0}" ] &&
			alive "$(cat "$run/flowcutd.pid")" && { start_web; return; }
		sleep 0.1
	done
	echo "lab: the coprocessor was not programmed" >&2
	cat "$run/npu.log" "$run/flowcutd.log" >&2
	return 1
}

# A process runs (its pid, 0) or has ended (1).  Not kill -0: the lab's
# daemons outlive the lab.sh that started them, and an ended orphan stays a
# zombie until its reaper collects it - on these machines PID 1 (the
# sandbox's init) does so only every second or two, which made every stop
# wait 2-3 s a daemon (6.4 s a lab down, 2026-12-05).  A zombie holds nothing
# (sockets, TAPs, the link's mapping are released at exit).
alive() { # pid
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

stop_one() { # pidfile
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 250); do alive "$pid" || break; sleep 0.02; done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$1"
}

stop() {
	stop_one "$run/web-keeper.pid"
	stop_one "$run/flowcutd.pid"
	stop_one "$run/npu.pid"
	if [ -f "$run/inspect.pid" ]; then	# the keeper's session: it and flowcut-inspect
		kill -9 -- "-$(cat "$run/inspect.pid")" 2>/dev/null || true
		rm -f "$run/inspect.pid"
	fi
	# and whatever else still runs in the lab's namespaces (iperf3, ...)
	for r in client npu host server; do
		for pid in $(ip netns pids "$name-$r" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null || true
		done
	done
}

down() {
	stop
	for r in client npu host server; do
		ip netns del "$name-$r" 2>/dev/null || true
	done
	rm -rf "$run" "$run-ctl" "$run-web" "/var/run/dpdk/$name-npu"
}

case "$cmd" in
up) up ;;
start) start ;;
start-npu) start_npu ;;
wire) wire_name ;;
start-flowcutd) start_flowcutd ;;
start-web) start_web ;;
inspector-pid) inspector_pid ;;
stop-web) stop_one "$run/web-keeper.pid" ;;
stop) stop ;;
down) down ;;
# alive NAME PID: whether PID runs (a zombie does not): 0 or 1
alive) [ $# -ge 1 ] || usage; alive "$1" ;;
# exec: the command replaces this script, so killing it kills the command
exec) [ $# -ge 2 ] || usage; r=$1; shift; exec ip netns exec "$name-$r" "$@" ;;
*) usage ;;
esac
