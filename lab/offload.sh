#!/usr/bin/env bash
# Offload, in one run (`make demo` until the cut took its place): a TCP
# stream through the appliance, offloaded, then the same stream forwarded by the host alone (the gate
# shut), side by side in one run, with the host's and the coprocessor's
# counters; and the delay from a connection's state to its first frame
# forwarded in the fast path.  Builds its own lab and tears it down.
#
#   lab/offload.sh [SECONDS]     (default 5 per stream)
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
secs=${1:-5}
L=fcoffload$$
run=/run/flowcut-lab/$L
lab=$here/lab.sh
ctl() { "$BUILD/flowcutctl" --link "/run/flowcut-lab/$L/link" "$@"; }
ex() { "$lab" exec "$L" "$@"; }
counter() { ctl --json counters --all | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"; }
host_rx() { echo $(( $(ex host cat /sys/class/net/fp0/statistics/rx_packets) + $(ex host cat /sys/class/net/fp1/statistics/rx_packets) )); }

if [ "$(id -u)" -ne 0 ]; then
	echo "offload.sh: the lab needs root (network namespaces)" >&2
	exit 1
fi
trap '"$lab" down "$L" >/dev/null 2>&1' EXIT
"$lab" up "$L" && "$lab" start "$L" >/dev/null || { echo "offload.sh: the lab did not come up" >&2; exit 1; }

# one TCP stream; prints "Mbit/s host_frames coprocessor_frames"
stream() {
	local h0 c0 out
	h0=$(host_rx) c0=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	ex server iperf3 -s -D -1 >/dev/null 2>&1
	sleep 0.3
	out=$(ex client timeout $((secs + 10)) iperf3 -c 198.18.1.2 -t "$secs" -f m 2>&1 | grep receiver)
	echo "$(echo "$out" | awk '{for (i = 1; i < NF; i++) if ($(i+1) == "Mbits/sec") print $i}')" \
	     "$(( $(host_rx) - h0 ))" "$(( $(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU) - c0 ))"
}

# the delay from the state's creation (conntrack's NEW event) to the first
# frame the fast path forwards, for one TCP connection
delay() {
	local t_new t_fwd c0
	ex host conntrack -E -e NEW -p tcp --dport 5203 -o timestamp >"$run/events" 2>/dev/null &
	local ev=$!
	ex server iperf3 -s -D -1 -p 5203 >/dev/null 2>&1
	sleep 0.5
	c0=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	ex client timeout 10 iperf3 -c 198.18.1.2 -p 5203 -t 2 >/dev/null 2>&1 &
	t_fwd=
	for _ in $(seq 2000); do
		if [ "$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)" -gt "$c0" ]; then
			t_fwd=$(date +%s.%N)
			break
		fi
	done
	wait $! 2>/dev/null
	kill "$ev" 2>/dev/null
	# the data connection is iperf3's second: take the last NEW event
	t_new=$(sed -n 's/^\[\([0-9.]*\)\].*/\1/p' "$run/events" | tail -1)
	[ -n "$t_new" ] && [ -n "$t_fwd" ] && awk -v a="$t_new" -v b="$t_fwd" 'BEGIN { printf "%.1f", (b - a) * 1000 }'
}

echo "offload.sh: a ${secs} s TCP stream, client 198.18.0.2 -> server 198.18.1.2, through the appliance"
read -r off_mbps off_host off_np < <(stream)
conns=$(ctl conns | tail -1)
"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set offload off >/dev/null
for _ in $(seq 50); do [ "$(ctl --json cfg | sed -n 's/.*"OFFLOAD": \(true\|false\).*/\1/p')" = false ] && break; sleep 0.1; done
read -r host_mbps host_host host_np < <(stream)
"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set offload on >/dev/null
sleep 0.5
d=$(delay)

printf '\n%-34s %14s %14s\n' "" "offloaded" "host alone"
printf '%-34s %14s %14s\n' "the gate (fw_cfg OFFLOAD)" "on" "off"
printf '%-34s %14s %14s\n' "throughput, Mbit/s" "$off_mbps" "$host_mbps"
printf '%-34s %14s %14s\n' "frames the host took in" "$off_host" "$host_host"
printf '%-34s %14s %14s\n' "frames forwarded by the fast path" "$off_np" "$host_np"
echo
echo "the offloaded run's table: $conns, action IPS (Cut in hardware on)"
echo "state created -> first frame forwarded in the fast path (TCP): ${d:-?} ms"
echo "(read by polling the coprocessor's counters; a poll takes a few ms)"
echo
echo "the coprocessor's counters now:"
ctl counters | sed 's/^/  /'
