#!/usr/bin/env bash
# A ruleset reload that forbids a live stream, with many states in the
# host's conntrack: how long the fast path goes on forwarding what the new
# rules forbid (issue 14: under 10 ms whatever the table's size).
#
#   lab/reload.sh [--states N] [--runs K] [--json FILE]
#
# Each run, in a lab of its own (lab/lab.sh up + start): N assured UDP
# states with flowcutd's mark bit put into the host's conntrack
# (build/flowcut-ctgen, default 200,000: 198.18.200.1 > 198.19.200.1, on no
# route of the lab, so only their count weighs), a UDP stream (iperf3, 20 Mbit/s, 1,000-byte
# datagrams) offloaded, then `nft -f` of the lab's ruleset with one rule
# more, `udp dport 5202 drop` ahead of the others.  Read at the server
# (tcpdump's own timestamps, the same clock as the `nft -f`'s start): the
# last datagram of the stream it took in after the reload began, as ms
# after that start, and how many came after it.  Beside it, in the same
# run, flowcutd's own log line of the change (the revision set, and the
# marks of every state cleared after it).  K runs (default 5): the median
# and the range printed; FILE the rows as JSON (default $OUT/reload.json).
#
# Root only.  Exit 0 when every run's stream was offloaded before the
# reload and stopped after it, 1 otherwise, 2 on bad usage.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
OUT=${OUT:-$BUILD/lab}
lab=$here/lab.sh
ctl=$BUILD/flowcutctl
states=200000 runs=5 json=''
while [ $# -gt 0 ]; do
	case "$1" in
	--states) states=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	--json) json=$2; shift 2 ;;
	*) sed -n 6p "$0" >&2; exit 2 ;;
	esac
done
case "$states$runs" in *[!0-9]*|'') sed -n 6p "$0" >&2; exit 2 ;; esac
json=${json:-$OUT/reload.json}
mkdir -p "$OUT" "$(dirname "$json")"
L=rl$$
run=/run/flowcut-lab/$L
cleanup() { "$lab" down "$L" >/dev/null 2>&1; }
trap cleanup EXIT
trap 'exit 1' INT TERM
ex() { "$lab" exec "$L" "$@"; }
fwd() { "$ctl" --link "$run/link" --json counters --all | sed -n 's/.*"FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU": \([0-9]*\).*/\1/p'; }
wait_for() { local n=$1; shift; for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done; return 1; }
# the stream forwards in the fast path: its count climbs over 0.3 s
forwarding() { local a b; a=$(fwd) || return 1; sleep 0.3; b=$(fwd) || return 1; [ "$b" -gt $((a + 50)) ]; }

rows=() ok=0
for r in $(seq "$runs"); do
	cleanup
	"$lab" up "$L" >/dev/null && "$lab" start "$L" >/dev/null || { echo "reload: no lab" >&2; exit 1; }
	fill=$(ex host "$BUILD/flowcut-ctgen" "$states" --mark 0x40000000 --src 198.18.200.1 --dst 198.19.200.1) || { echo "reload: $fill" >&2; exit 1; }
	ex server iperf3 -s -D -1 -p 5202 >/dev/null 2>&1
	sleep 0.3
	ex client timeout 40 iperf3 -u -c 198.18.1.2 -p 5202 -b 20M -t 30 -l 1000 >/dev/null 2>&1 &
	stream=$!
	# offloaded, and flowcutd done with the states' events (forwarding for a second on end)
	if ! wait_for 200 forwarding || ! sleep 1 || ! forwarding; then
		echo "reload: run $r: the stream was not offloaded" >&2
		kill "$stream" 2>/dev/null; wait "$stream" 2>/dev/null
		continue
	fi
	n=$(ex host conntrack -C)
	{ sed '/ct state established,related accept/i\		udp dport 5202 drop' "$top/lab/ruleset.nft"; } >"$run/forbid.nft"
	"$lab" exec "$L" server tcpdump -i s0 -n -tt --time-stamp-precision=micro -w "$run/srv.pcap" udp port 5202 \
		2>"$run/tcpdump.err" &
	tcpd=$!
	wait_for 50 grep -q listening "$run/tcpdump.err"
	lines=$(wc -l <"$run/flowcutd.log")
	t0=$(date +%s.%N)
	ex host nft -f "$run/forbid.nft"
	t1=$(date +%s.%N)
	sleep 3
	kill -INT "$tcpd" 2>/dev/null; wait "$tcpd" 2>/dev/null
	kill "$stream" 2>/dev/null; wait "$stream" 2>/dev/null
	read -r last after last1 <<<"$(tcpdump -r "$run/srv.pcap" -n -tt --time-stamp-precision=micro 2>/dev/null |
		awk -v t0="$t0" -v t1="$t1" '$1 >= t0 { n++; last = $1 }
			END { printf "%.3f %d %.3f\n", n ? (last - t0) * 1000 : 0, n, n ? (last - t1) * 1000 : 0 }')"
	nft_ms=$(printf "%.3f" "$(echo "($t1 - $t0) * 1000" | bc)")
	echo "run $r: $n states in conntrack; the last forbidden datagram at the server $last ms after" \
	     "the nft -f began ($after after it), $last1 ms after it returned (nft -f itself: $nft_ms ms)"
	rows+=("{\"run\": $r, \"states\": $n, \"last_ms\": $last, \"after\": $after, \"after_return_ms\": $last1, \"nft_ms\": $nft_ms}")
	[ "$after" -lt 1000 ] && ok=$((ok + 1))
done
[ ${#rows[@]} -gt 0 ] || exit 1
printf '%s\n' "${rows[@]}" | python3 -c '
import json, statistics, sys
rows = [json.loads(l) for l in sys.stdin]
ms = sorted(r["last_ms"] for r in rows)
ret = sorted(r["after_return_ms"] for r in rows)
nft = sorted(r["nft_ms"] for r in rows)
print("reload with %d states, %d runs: the last forbidden datagram at the server, median (range) ms"
      % (rows[0]["states"], len(ms)))
print("  after nft -f began:    %.2f (%.2f to %.2f)" % (statistics.median(ms), ms[0], ms[-1]))
print("  after nft -f returned: %.2f (%.2f to %.2f)" % (statistics.median(ret), ret[0], ret[-1]))
print("  nft -f itself, the peer: %.2f (%.2f to %.2f)" % (statistics.median(nft), nft[0], nft[-1]))
json.dump({"rows": rows, "median_ms": statistics.median(ms), "min_ms": ms[0], "max_ms": ms[-1],
           "median_after_return_ms": statistics.median(ret), "median_nft_ms": statistics.median(nft)},
          open(sys.argv[1], "w"), indent=2)' "$json"
[ "$ok" -eq "$runs" ]
