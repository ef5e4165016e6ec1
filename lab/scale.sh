#!/usr/bin/env bash
# Many offloaded connections and nothing changing (issue 16's loop and the
# bench's shape): N assured UDP states with flowcutd's mark bit
# (build/flowcut-ctgen, 198.18.0.2:sport > 198.18.1.2:dport, routed out of
# the lab's front ports) put into the lab host's conntrack, waited for in
# the fast path, then 10 s with nothing changing.  A ping from the client
# to the server first: the host's neighbours of both ends resolved (with
# none, flowcutd offloads none of the states; its own offload counted).
#
#   lab/scale.sh [N]        (default 1,000,000)
#
# Prints issue 16's table row: states, offloaded (flowcutctl status's
# connections), time to offload (from ctgen's start to the last sample
# below N, 10 Hz), flowcutd's CPU over the 10 s (utime+stime of
# /proc/PID/stat, % of a core), resyncs over the 10 s (and since start),
# offloads counted (flowcutd.json's offloaded, since start), flowcutd's
# RSS and that per state (RSS / N); resync_taken_out and ct_events_lost when
# flowcutd's stats have them.  Root only; a lab of its own, torn down on
# exit.  flowcut-npu at --conns max(65536, N + N/4) (lab.sh's
# FLOWCUT_NPU_CONNS); nf_conntrack_max, global on this kernel (read-only
# in a namespace), raised to N + N/10 when below and put back on exit.
#
# Sourced (tests/lab/test_scale.sh), it only defines scale_run.
set -u

# scale_run N OUT: the measurement in the lab $L (lab/lab.sh's, started),
# its figures as "key value" lines in OUT and the row on stdout
scale_run() {
	local n=$1 out=$2 run=/run/flowcut-lab/$L pid tck t0 t_off='' now conns=0 c0 c1
	local deadline r0 r1 o1 rss o0
	pid=$(cat "$run/flowcutd.pid")
	tck=$(getconf CLK_TCK)
	stat_of() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: print(d.get(k, "none"))' "$run/flowcutd.json" "$@"; }
	cpu_of() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
	in_fp() { "$BUILD/flowcutctl" --link "$run/link" --json status |
		sed -n 's/.*"connections": \([0-9]*\).*/\1/p'; }
	# the host's neighbours of both ends resolved (an offload needs both
	# next hops: states made with none resolved wait, none offloaded)
	"$top/lab/lab.sh" exec "$L" client ping -c 2 -i 0.2 -W 1 198.18.1.2 >/dev/null 2>&1 ||
		echo "scale: no ping from the client to the server" >&2
	o0=$(stat_of offloaded)
	t0=$(date +%s.%N)
	"$top/lab/lab.sh" exec "$L" host "$BUILD/flowcut-ctgen" "$n" --mark 0x40000000 \
		>"$run/ctgen.out" 2>&1 || { echo "scale: flowcut-ctgen failed:" >&2; tail -3 "$run/ctgen.out" >&2; }
	# offloaded: the fast path's count reaches N (bounded: 30 s + 1 s a 5,000)
	deadline=$(echo "$t0 + 30 + $n / 5000" | bc)
	while :; do
		conns=$(in_fp) || conns=0
		now=$(date +%s.%N)
		[ "${conns:-0}" -ge "$n" ] && { t_off=$(printf "%.2f" "$(echo "$now - $t0" | bc)"); break; }
		[ "$(echo "$now > $deadline" | bc)" = 1 ] && break
		sleep 0.1
	done
	# 10 s with nothing changing
	r0=$(stat_of resyncs)
	c0=$(cpu_of)
	sleep 10
	c1=$(cpu_of)
	read -r r1 o1 taken lost <<<"$(stat_of resyncs offloaded resync_taken_out ct_events_lost | tr '\n' ' ')"
	conns=$(in_fp) || conns=0
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
	{
		echo "states $n"
		echo "offloaded $conns"
		echo "time_to_offload_s ${t_off:-never}"
		echo "ctgen $(tail -1 "$run/ctgen.out")"
		echo "cpu_pct $(echo "scale=2; ($c1 - $c0) * 100 / $tck / 10" | bc)"
		echo "resyncs_in_10s $((r1 - r0))"
		echo "resyncs $r1"
		echo "offloads_counted $((o1 - o0))"
		echo "rss_kb $rss"
		echo "rss_b_per_conn $(( n > 0 ? rss * 1024 / n : 0 ))"
		echo "resync_taken_out $taken"
		echo "ct_events_lost $lost"
	} >"$out"
	awk '{ k = $1; $1 = ""; v[k] = substr($0, 2) }
	END {
		nc = none_said(v["resync_taken_out"]); ne = none_said(v["ct_events_lost"])
		printf "| states | offloaded | time to offload | flowcutd CPU idle, %% of a core | resyncs in the 10 s (since start) | offloads counted | flowcutd RSS | RSS a state | resync_taken_out | ct_events_lost |\n"
		printf "| %s | %s | %s s | %s | %s (%s) | %s | %.1f MB | %s B | %s | %s |\n", v["states"],
			v["offloaded"], v["time_to_offload_s"], v["cpu_pct"], v["resyncs_in_10s"], v["resyncs"],
			v["offloads_counted"], v["rss_kb"] / 1024, v["rss_b_per_conn"], nc, ne
		printf "ctgen: %s\n", v["ctgen"]
	}
	function none_said(x) { return x == "none" ? "not counted yet" : x }' "$out"
}

# run, not sourced: a lab of its own
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	top=$(cd "$here/.." && pwd)
	BUILD=${BUILD:-$top/build}
	case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
	export BUILD
	n=${1:-1000000}
	case "$n" in *[!0-9]*|'') sed -n 9p "$0" >&2; exit 2 ;; esac
	[ "$(id -u)" -eq 0 ] || { echo "scale: root only" >&2; exit 2; }
	L=sc$$
	ctmax=/proc/sys/net/netfilter/nf_conntrack_max
	ctmax0=$(cat "$ctmax")
	want=$((n + n / 10 + 1000))
	cleanup() {
		"$here/lab.sh" down "$L" >/dev/null 2>&1
		# put back only what this run set
		[ "$(cat "$ctmax")" = "$want" ] && [ "$ctmax0" -lt "$want" ] && echo "$ctmax0" >"$ctmax"
	}
	trap cleanup EXIT
	trap 'exit 1' INT TERM
	if [ "$ctmax0" -lt "$want" ]; then
		echo "$want" >"$ctmax" || { echo "scale: nf_conntrack_max $ctmax0 < $want" >&2; exit 1; }
	fi
	conns=$((n + n / 4))
	[ "$conns" -ge 65536 ] || conns=65536
	export FLOWCUT_NPU_CONNS=${FLOWCUT_NPU_CONNS:-$conns}
	"$here/lab.sh" up "$L" >/dev/null && "$here/lab.sh" start "$L" >/dev/null || { echo "scale: no lab" >&2; exit 1; }
	mkdir -p "$BUILD/lab"
	scale_run "$n" "$BUILD/lab/scale-$n.txt"
fi
