#!/usr/bin/env bash
# Issue 16's figure "a state qualifying to the first frame the fast path
# forwards" (flowcutd.json's first_frame_us_p50/p99, driver/offload/
# fd_first.h), beside qualify to FLOW_CREATE_FP answered (offload_us_*),
# with streams that send steadily, so the time to the first frame is the
# fast path's and not the sender's gap: STREAMS UDP streams by iperf3
# (-P), 64-byte datagrams at 1 Mbit/s each - one every 0.512 ms a stream,
# paced every 100 us (--pacing-timer) - for 8 s.  A UDP state qualifies
# when conntrack makes it assured (seen both ways, 2 s on: iperf3's
# server answers the first datagram); its first frame forwarded is then
# the stream's next datagram after FLOW_CREATE_FP landed, at most a gap
# later.  With N > 0, N assured states by build/flowcut-ctgen are made and
# offloaded first (lab/scale.sh's), and the streams' offloads measured
# among them.  Every offload is sampled while fewer than 256 wait, so the
# ctgen states' samples (never forwarding) are let go (unseen) before the
# streams start.
#
#   lab/first.sh [N [STREAMS]]      (N: 0 by default; STREAMS: 8)
#
# Root only; a lab of its own (f16first<pid>), torn down on exit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
export BUILD
# shellcheck source=lab/scale.sh
. "$here/scale.sh"		# scale_in_fp, scale_wait_fp, SCALE_BIT
n=${1:-0} k=${2:-8}
case "$n$k" in *[!0-9]*) sed -n 20p "$0" >&2; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { echo "first: root only" >&2; exit 2; }
L=f16first$$
run=/run/flowcut-lab/$L
ctmax=/proc/sys/net/netfilter/nf_conntrack_max
ctmax0=$(cat "$ctmax")
want=$((n + n / 10 + 1000))
cleanup() {
	"$here/lab.sh" down "$L" >/dev/null 2>&1
	[ "$(cat "$ctmax")" = "$want" ] && [ "$ctmax0" -lt "$want" ] && echo "$ctmax0" >"$ctmax"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
[ "$ctmax0" -lt "$want" ] && { echo "$want" >"$ctmax" || exit 1; }
conns=$((n + n / 4 + 1000))
[ "$conns" -ge 65536 ] || conns=65536
export FLOWCUT_NPU_CONNS=${FLOWCUT_NPU_CONNS:-$conns}
"$here/lab.sh" up "$L" >/dev/null && "$here/lab.sh" start "$L" >/dev/null || { echo "first: no lab" >&2; exit 1; }
stat_of() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(" ".join(str(d.get(k, "none")) for k in sys.argv[2:]))' "$run/flowcutd.json" "$@"; }
ex() { "$here/lab.sh" exec "$L" "$@"; }
# one echo: its state offloaded forwards nothing more (a second echo would be a sample of the gap)
ex client ping -c 1 -W 1 198.18.1.2 >/dev/null 2>&1 || echo "first: no ping from the client to the server" >&2
if [ "$n" -gt 0 ]; then
	ex host "$BUILD/flowcut-ctgen" "$n" --mark "$SCALE_BIT" >"$run/ctgen.out" 2>&1 ||
		{ echo "first: flowcut-ctgen failed: $(tail -1 "$run/ctgen.out")" >&2; exit 1; }
	scale_wait_fp "$n" $((30 + n / 5000)) || exit 1
	sleep 4		# the ctgen states' samples read through (3.1 s) and let go
fi
read -r s0 u0 <<<"$(stat_of first_frame_samples first_frame_unseen)"
ex server iperf3 -s -D -1 -p 5310 >/dev/null 2>&1
sleep 0.3
ex client iperf3 -u -c 198.18.1.2 -p 5310 -b 1M -l 64 --pacing-timer 100 -t 8 -P "$k" \
	>"$run/iperf3.out" 2>&1 || echo "first: iperf3: $(tail -1 "$run/iperf3.out")" >&2
sleep 4			# the last samples' reads
read -r s1 u1 sk o50 o99 f50 f99 off <<<"$(stat_of first_frame_samples first_frame_unseen \
	first_frame_skipped offload_us_p50 offload_us_p99 first_frame_us_p50 first_frame_us_p99 offloaded)"
echo "first: $(date -u +%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg) (a shared machine, not a quiet one)"
echo "first: $n ctgen states, $k streams of 64-byte datagrams, one every 0.512 ms a stream (the sender's gap); offloaded $off"
echo "first: qualify -> FLOW_CREATE_FP answered: p50 $o50 us, p99 $o99 us (every offload since start)"
echo "first: qualify -> first frame forwarded: p50 $f50 us, p99 $f99 us ($((s1 - s0)) samples: the $k streams' and iperf3's control connection's; unseen $((u1 - u0)) in the streams' run, $u0 before; skipped $sk)"
