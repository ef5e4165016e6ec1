#!/usr/bin/env bash
# flowcut beside the kernel it offloads, in one run (issue 19): the same
# traffic through two appliances built side by side of the same kind of
# veths, offloads off on every one -
#
#   kernel   NAME-kclient c0 --- fp0 [NAME-krouter: Linux forwarding,
#            lab/ruleset.nft, conntrack] fp1 --- s0 NAME-kserver
#   flowcut  the lab (lab/lab.sh), its connections offloaded
#
# - and per run, each side in turn: one TCP stream (Mbit/s), 16 TCP streams
# (Mbit/s, summed), and a flood of 64-byte UDP frames of one flow (trafgen,
# from the ends' core, as fast as it sends; the flow made a state the
# firewall has assured first, so flowcut has it offloaded): the frames a
# second the far end's port took in (s0's rx_packets: frames forwarded),
# and the CPU a frame forwarded - the coprocessor's busy time (its wire
# ports' BUSY_NS: each burst from its read to its sending, the transmit's
# system call included, empty polls not) over the frames it sent, against
# the machine's softirq time for the kernel; beside it the worker thread's
# user and system time, polling included.  Prints each figure's median and
# range over the runs, and flowcut's ratio to the kernel.
#
#   lab/peer.sh [--runs N] [--secs S] [--wire af_packet|af_xdp] [--workers N] [--pin]
#               [--json FILE] [--png FILE] [--perf FILE]
#
#   --runs N   runs (default 5; issue 19's table wants at least 5)
#   --secs S   each measurement's time: iperf3's -t, the flood's window (default 5)
#   --wire W   flowcut's wire (lab.sh's FLOWCUT_WIRE; default af_xdp, af_packet for
#              --workers over 1 or where AF_XDP cannot run)
#   --workers N  flowcut-npu's workers, a queue each on every port (lab.sh's
#              FLOWCUT_NPU_WORKERS; default 1)
#   --pin      both ends' iperf3 and trafgen on core 0 (below)
#   --json F   every run's figures ("rows"), each figure's runs ("series") and the summary
#   --png F    the medians drawn, flowcut's bar beside the kernel's (gnuplot)
#   --perf F   perf record -g of the coprocessor's worker thread during the
#              last run's flood (F), and where its time went, split
#              (lab/measure.py perfsplit)
#
# Not pinned by default: each side as the scheduler runs it, the kernel at
# its best here.  --pin puts both ends' iperf3 and trafgen on core 0, for both sides;
# flowcut-npu's worker is on core 1 in any case (lab.sh's EAL --lcores 0@0,1@1), the
# kernel forwards in the softirq of the core that sends (core 0; trafgen
# puts its one process on core 0 itself, pinned or not).  Giving
# the kernel's forwarding core 1 with RPS (fp0's and fp1's rps_cpus) was
# tried and left out: on this guest the IPIs cost it more than the core
# gave (docs/measurements.md, 2026-12-05).
# Exit 0, 1 when a side did not come up or a measurement failed, 2 on usage.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
runs=5 secs=5 wire=${FLOWCUT_WIRE:-} workers=${FLOWCUT_NPU_WORKERS:-1} json='' png='' pin=0 perf=''
usage() { sed -n '22,36p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=${2:?}; shift ;;
	--secs) secs=${2:?}; shift ;;
	--wire) wire=${2:?}; shift ;;
	--workers) workers=${2:?}; shift ;;
	--json) json=${2:?}; shift ;;
	--png) png=${2:?}; shift ;;
	--pin) pin=1 ;;
	--perf) perf=${2:?}; shift ;;
	*) usage ;;
	esac
	shift
done
case "$runs$secs$workers" in *[!0-9]*) usage ;; esac
[ "$runs" -ge 1 ] && [ "$secs" -ge 1 ] && [ "$workers" -ge 1 ] || usage
if [ "$(id -u)" -ne 0 ]; then
	echo "peer.sh: the lab needs root (network namespaces)" >&2
	exit 1
fi
# the wire unless said is lab.sh's to choose (wire_name), read back once it started
export FLOWCUT_NPU_WORKERS=$workers
if [ -n "$wire" ]; then export FLOWCUT_WIRE=$wire; else unset FLOWCUT_WIRE; fi
[ "$(nproc)" -ge 2 ] || pin=0
ends=()	# what the ends (iperf3, trafgen, the flow's datagrams) run under
[ "$pin" = 1 ] && ends=(taskset -c 0)
L=fcpeer$$ K=fck$$
lab=$here/lab.sh
out=$(mktemp -d)
kns() { ip netns exec "$K-$1" "${@:2}"; }
ex() { "$lab" exec "$L" "$@"; }
on() { # side role command...: in that side's namespace of the role
	if [ "$1" = kernel ]; then kns "${@:2}"; else ex "${@:2}"; fi
}
ctl() { "$BUILD/flowcutctl" --link "/run/flowcut-lab/$L/link" "$@"; }

kernel_down() { # what still runs in its namespaces first (a held socket, trafgen)
	local r pid
	for r in client router server; do
		for pid in $(ip netns pids "$K-$r" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
		ip netns del "$K-$r" 2>/dev/null
	done
}
cleanup() {
	"$lab" down "$L" >/dev/null 2>&1
	kernel_down
	rm -rf "$out"
}
trap cleanup EXIT

offloads_off() { # ns dev
	kns "$1" ethtool -K "$2" tx off tso off gso off gro off >/dev/null 2>&1 || true
}

# The kernel's appliance: the lab's addresses and ruleset, its ports named
# as the lab host's (fp0, fp1), so the ruleset reads the same.
kernel_up() {
	for r in client router server; do
		ip netns add "$K-$r" || return 1
		kns "$r" ip link set lo up
		kns "$r" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
	done
	ip link add c0 netns "$K-client" type veth peer name fp0 netns "$K-router" || return 1
	ip link add s0 netns "$K-server" type veth peer name fp1 netns "$K-router" || return 1
	kns router ip addr add 198.18.0.1/24 dev fp0
	kns router ip addr add 198.18.1.1/24 dev fp1
	kns router ip addr add 2001:2::1/64 dev fp0 nodad
	kns router ip addr add 2001:2:0:1::1/64 dev fp1 nodad
	kns client ip addr add 198.18.0.2/24 dev c0
	kns client ip addr add 2001:2::2/64 dev c0 nodad
	kns server ip addr add 198.18.1.2/24 dev s0
	kns server ip addr add 2001:2:0:1::2/64 dev s0 nodad
	for d in router:fp0 router:fp1 client:c0 server:s0; do
		kns "${d%%:*}" ip link set "${d#*:}" up
		offloads_off "${d%%:*}" "${d#*:}"
	done
	kns client ip route add default via 198.18.0.1
	kns server ip route add default via 198.18.1.1
	kns router sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
	kns router nft -f "$here/ruleset.nft"
}

# iperf3 between SIDE's client and server: "client ARGS..." prints the
# receiver's Mbit/s of its JSON (the sum's)
run_iperf() { # side args...
	local side=$1 f
	shift
	f=$out/iperf.json
	on "$side" server "${ends[@]}" iperf3 -s -D -1 >/dev/null 2>&1
	sleep 0.3
	on "$side" client "${ends[@]}" timeout $((secs + 20)) iperf3 -c 198.18.1.2 -t "$secs" -J "$@" >"$f" 2>/dev/null
	python3 -c 'import json, sys
print("%.1f" % (json.load(open(sys.argv[1]))["end"]["sum_received"]["bits_per_second"] / 1e6))' "$f"
}

# CPU ticks (1/100 s): the machine's softirq; the coprocessor's worker
# thread's user and system time ("U S").
softirq_ticks() { awk '/^cpu /{print $8}' /proc/stat; }
# the workers' thread ids, comma-separated (perf -t's spelling)
worker_tid() {
	local pid t out=''
	pid=$(cat "/run/flowcut-lab/$L/npu.pid")
	for t in /proc/"$pid"/task/*; do
		case "$(cat "$t/comm")" in *worker*) out+="${out:+,}${t##*/}" ;; esac
	done
	[ -n "$out" ] && echo "$out"
}
worker_ticks() { # the workers' "U S", summed
	local t u=0 s=0 a b
	for t in ${wtid//,/ }; do
		read -r a b < <(awk '{print $14, $15}' "/proc/$(cat "/run/flowcut-lab/$L/npu.pid")/task/$t/stat")
		u=$((u + a)) s=$((s + b))
	done
	echo "$u $s"
}
# the coprocessor's figures so far, "BUSY HOST MISSED SENT": its wire
# ports' busy time, ns (BUSY_NS, summed), the frames its fast path sent to
# the host (FROM_WIRE_TO_KN_*: not offloaded, or not offloadable), the
# frames its ports lost before it read them (lab/measure.py's WIRE_LOSS:
# RX_MISSED, RX_NOMBUF, RX_ERRORS and, on AF_XDP, the veth's own
# KERNEL_RX_DROPPED), and the frames they sent (TX_FRAMES), all of one
# published window
npu_figures() {
	ctl --json counters --all | PYTHONPATH=$here python3 -c 'import json, sys
from measure import WIRE_LOSS
d = json.load(sys.stdin)
w = d.get("wire", [])
print(sum(p.get("BUSY_NS", 0) for p in w),
      sum(v for k, v in d.items() if k.startswith("FROM_WIRE_TO_KN_")),
      sum(p.get(k, 0) for p in w for k in WIRE_LOSS),
      sum(p.get("TX_FRAMES", 0) for p in w))'
}
# frames the server's port took in (s0's rx_packets, the kernel's count):
# the far end's figure, whatever its stack then did with them
s0_frames() { on "$1" server cat /sys/class/net/s0/statistics/rx_packets; }

# The 64-byte flood's flow: 198.18.0.2:7000 -> 198.18.1.2:7001, UDP.
# made_assured SIDE makes it a state conntrack has assured, and prints the
# client's next hop's MAC (the flood's destination): the server's socket
# answers one datagram and is then held, never read (the flood dropped at
# its full queue, as little as a far end can do with a frame), until
# flood_done kills it; the client sends one, reads the answer, and one
# more 2.2 s later - conntrack assures a UDP state it saw a reply of on
# its first frame 2 s after the state was made, and flowcutd offloads none
# before.  (Until 2026-12-06 the flood was iperf3's own UDP test, whose
# first 2 s went through the host for that reason, and whose ends'
# per-datagram system calls on the ends' core bounded both sides alike.)
made_assured() { # side
	rm -f "$out/held.pid"
	on "$1" server timeout $((secs + 60)) python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.bind(("198.18.1.2", 7001))
open(sys.argv[1] + ".new", "w").write("%d\n" % os.getpid())
os.rename(sys.argv[1] + ".new", sys.argv[1])
d, a = s.recvfrom(64)
s.sendto(d, a)
time.sleep(3600)' "$out/held.pid" >/dev/null 2>&1 &
	on "$1" client python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.0.2", 7000))
s.settimeout(0.5)
for _ in range(20):	# the server may not be bound yet
	s.sendto(b"flowcut", ("198.18.1.2", 7001))
	try:
		s.recvfrom(64)
		break
	except socket.timeout:
		pass
else:
	sys.exit("peer.sh: the flood'"'"'s flow had no answer")
time.sleep(2.2)
s.sendto(b"flowcut", ("198.18.1.2", 7001))' || return 1
	on "$1" client ip neigh show 198.18.0.1 dev c0 | awk '$2 == "lladdr" { print $3; exit }'
}
flood_done() {
	[ -s "$out/held.pid" ] && kill "$(cat "$out/held.pid")" 2>/dev/null
	rm -f "$out/held.pid"
}
# flowcut's fast path forwards the flood's flow (up to 5 s): a valid
# connection, CUT_THRU
flow_offloaded() {
	local i
	for i in $(seq 50); do
		ctl --json conns | python3 "$here/measure.py" conns --proto udp --port 7001 --valid --cut-thru \
			--print count >/dev/null && return 0
		sleep 0.1
	done
	return 1
}
# trafgen's frames of the flow: 60 bytes (64 on a wire, with its FCS)
flood_cfg() { # next-hop-mac client-mac
	echo "{ eth(da=$1, sa=$2, type=0x0800),"
	echo "  ipv4(sa=198.18.0.2, da=198.18.1.2, ttl=64, df),"
	echo "  udp(sp=7000, dp=7001),"
	echo "  fill(0x66, 18) }"
}

# One side's row: "tcp1 tcp16 udp_fps cpu_ns_a_frame user_ns sys_ns
# softirq_ns to_host lost": the flood's figures are over a window of SECS
# that starts 0.5 s into it, a frame being one the far end's port took in
# (s0's rx_packets): a forwarded frame.  The kernel's CPU a frame is its
# softirq time; the coprocessor's, its workers' busy time (BUSY_NS), and
# beside it the worker thread's user and system time, idle polling
# included (0 for the kernel), and the machine's softirq time a frame for
# both.  to_host: the flood's frames flowcut's fast path sent to the host
# in the window (none when it is offloaded; 0 for the kernel); lost: what
# its ports lost before reading them (RX_MISSED, RX_NOMBUF)
measure() { # side last
	local side=$1 last=$2 t1 t16 s0 s1 f0 f1 tw0 tw1 u0 u1 cpu un=0 sn=0 ppid='' tg gw cmac fwd alive=0
	local -a n0=(0 0 0 0) n1=(0 0 0 0)
	t1=$(run_iperf "$side") || return 1
	t16=$(run_iperf "$side" -P 16) || return 1
	gw=$(made_assured "$side") && [ -n "$gw" ] ||
		{ echo "peer.sh: $side: the flood's flow was not set up" >&2; flood_done; return 1; }
	cmac=$(on "$side" client cat /sys/class/net/c0/address)
	flood_cfg "$gw" "$cmac" >"$out/flood.cfg"
	if [ "$side" = flowcut ]; then
		flow_offloaded || { echo "peer.sh: the flood's flow was not offloaded in 5 s" >&2; flood_done; return 1; }
		wtid=$(worker_tid) || { flood_done; return 1; }
	fi
	# bounded in time (timeout; SIGINT) and count (-n: 4 million a second of it)
	on "$side" client "${ends[@]}" timeout -s INT -k 3 $((secs + 3)) \
		trafgen -i "$out/flood.cfg" -o c0 -P 1 -Q -n $(( (secs + 3) * 4000000 )) >"$out/trafgen.out" 2>&1 &
	tg=$!
	sleep 0.5
	if [ "$side" = flowcut ]; then
		read -r -a n0 <<<"$(npu_figures)"
		if [ "$last" = 1 ] && [ -n "$perf" ]; then
			perf record -q -g -t "$wtid" -o "$perf" -- sleep $((secs > 2 ? secs - 1 : 1)) \
				>/dev/null 2>&1 &
			ppid=$!
		fi
		u0=$(worker_ticks)
	fi
	# the window: the far end's frames, the softirq and the worker's time
	# read back to back at each end, its length as measured
	s0=$(softirq_ticks) f0=$(s0_frames "$side") tw0=$EPOCHREALTIME
	sleep "$secs"
	s1=$(softirq_ticks) f1=$(s0_frames "$side") tw1=$EPOCHREALTIME
	kill -0 "$tg" 2>/dev/null && alive=1
	if [ "$side" = flowcut ]; then
		u1=$(worker_ticks)
		sleep 0.1	# the counters window: 50 ms
		read -r -a n1 <<<"$(npu_figures)"
	fi
	wait "$tg"
	[ -n "$ppid" ] && wait "$ppid"
	flood_done
	if [ "$alive" = 0 ]; then
		echo "peer.sh: $side: trafgen ended before the window did:" >&2
		cat "$out/trafgen.out" >&2
		return 1
	fi
	[ "${#n0[@]}" = 4 ] && [ "${#n1[@]}" = 4 ] ||
		{ echo "peer.sh: the coprocessor's counters could not be read" >&2; return 1; }
	fwd=$((f1 - f0))
	[ "$fwd" -gt 0 ] || { echo "peer.sh: $side: the flood forwarded nothing" >&2; return 1; }
	if [ "$side" = flowcut ]; then
		un=$(( (${u1% *} - ${u0% *}) * 10000000 / fwd ))
		sn=$(( (${u1#* } - ${u0#* }) * 10000000 / fwd ))
		# the figures are the fast path's only if the flood went through it
		[ $(( (n1[1] - n0[1]) * 100 )) -le "$fwd" ] || {
			echo "peer.sh: the flood's window sent $((n1[1] - n0[1])) frames to the host, of $fwd forwarded: not offloaded" >&2
			return 1
		}
		# its busy time over the frames it sent, both of the same windows
		[ "$((n1[3] - n0[3]))" -gt 0 ] || { echo "peer.sh: the coprocessor sent nothing" >&2; return 1; }
		cpu=$(( (n1[0] - n0[0]) / (n1[3] - n0[3]) ))
	else
		cpu=$(( (s1 - s0) * 10000000 / fwd ))
	fi
	echo "$t1 $t16 $(awk -v f="$fwd" -v a="$tw0" -v b="$tw1" 'BEGIN { printf "%.0f", f / (b - a) }') $cpu $un $sn" \
		$(( (s1 - s0) * 10000000 / fwd )) $((n1[1] - n0[1])) $((n1[2] - n0[2]))
}

kernel_up || { echo "peer.sh: the kernel's appliance did not come up" >&2; exit 1; }
"$lab" up "$L" >/dev/null && "$lab" start "$L" >/dev/null ||
	{ echo "peer.sh: the flowcut lab did not come up" >&2; exit 1; }
wire=$(cat "/run/flowcut-lab/$L/wire")	# as lab.sh took it (af_packet where AF_XDP cannot run: said)
echo "peer.sh: $runs runs of ${secs} s each, flowcut's wire $wire, $workers worker(s), $([ "$pin" = 1 ] &&
	echo "both ends on core 0, the coprocessor's worker on core 1" || echo "not pinned"), $(date -u +%Y-%m-%dT%H:%MZ)"
for i in $(seq "$runs"); do
	for side in kernel flowcut; do
		row=$(measure "$side" "$([ "$i" = "$runs" ] && echo 1 || echo 0)") || { echo "peer.sh: run $i, $side: a measurement failed" >&2; exit 1; }
		echo "$i $side $row" | tee -a "$out/rows"
	done
done
python3 - "$out/rows" "$wire" "$json" "$out/plot.dat" "$pin" "$workers" <<'EOF'
import json, statistics, sys
rows, wire, jpath, dat, pin, workers = sys.argv[1:7]
data = {"kernel": [], "flowcut": []}
runrows = []
for ln in open(rows):
	i, side, *v = ln.split()
	runrows.append({"run": int(i), "side": side, "tcp1_mbits": float(v[0]), "tcp16_mbits": float(v[1]),
			"udp64_fps": float(v[2]), "cpu_ns_a_frame": float(v[3]),
			"worker_user_ns_a_frame": float(v[4]), "worker_system_ns_a_frame": float(v[5]),
			"softirq_ns_a_frame": float(v[6]), "flood_to_host": int(v[7]),
			"flood_lost_at_ingress": int(v[8])})
	v = v[:7]
	data[side].append([float(x) for x in v])
# the kernel's CPU a frame is its softirq time, whole; the coprocessor's,
# its workers' busy time (BUSY_NS: a burst's read to its sending, the
# transmit's system call and what the veth runs in it included); beside
# it the worker thread's CPU time, user and system, idle polling included
for r in data["kernel"]:
	r[4] = r[5] = r[3]
names = ["one TCP stream, Mbit/s", "16 TCP streams, Mbit/s",
	 "UDP flood, 64-byte frames a second forwarded (into the server's port)",
	 "CPU a frame forwarded, ns (the coprocessor's busy time, BUSY_NS / the machine's softirq)",
	 "- the worker thread's user time, polling included / softirq",
	 "- the worker thread's system time (the wire: skb, veth, the receiver's stack) / softirq",
	 "the machine's softirq a frame, ns (flowcut: the ends' stacks, the veth's XDP and its copy)"]
summary = {}
print()
print("| %s | kernel: median (range) | flowcut (%s): median (range) | flowcut / kernel |" % ("figure", wire))
print("| --- | ---: | ---: | ---: |")
for k, n in enumerate(names):
	kv = [r[k] for r in data["kernel"]]
	fv = [r[k] for r in data["flowcut"]]
	km, fm = statistics.median(kv), statistics.median(fv)
	summary[n] = {"kernel": kv, "flowcut": fv, "kernel_median": km, "flowcut_median": fm,
		      "ratio": fm / km if km else None}
	print("| %s | %s (%s-%s) | %s (%s-%s) | %s |" % (n, "{:,.0f}".format(km),
	      "{:,.0f}".format(min(kv)), "{:,.0f}".format(max(kv)), "{:,.0f}".format(fm),
	      "{:,.0f}".format(min(fv)), "{:,.0f}".format(max(fv)),
	      "%.2fx" % (fm / km) if km else "-"))
with open(dat, "w") as f:	# the plot: each figure's medians, the kernel's as 1
	for k, n in enumerate(names):
		s = summary[n]
		r = s["ratio"] if s["ratio"] is not None else 0
		f.write('"%s" 1 %.3f\n' % (["TCP, 1", "TCP, 16", "64 B frames/s",
					     "CPU/frame", "worker usr", "worker sys",
					     "softirq/frame"][k], r))
if jpath:
	json.dump({"wire": wire, "workers": int(workers), "pinned": pin == "1", "rows": runrows, "series": {n: summary[n] for n in names},
		   "summary": summary}, open(jpath, "w"), indent=1)
EOF
if [ -n "$perf" ]; then
	echo
	echo "the last run's flood, the coprocessor's worker (perf record -g -t, $perf):"
	python3 "$here/measure.py" perfsplit "$perf" "$(awk '$2 == "flowcut" { c = $7 + $8 } END { print c }' "$out/rows")" ||
		{ echo "peer.sh: perf's samples could not be split" >&2; exit 1; }
fi
if [ -n "$png" ]; then
	gnuplot <<-EOF || { echo "peer.sh: gnuplot failed" >&2; exit 1; }
	set terminal pngcairo size 1000,500 font ",11" noenhanced
	set output "$png"
	set key outside below
	set title "flowcut ($wire) beside the kernel, medians of $runs runs (the kernel = 1; CPU: lower is better)"
	set style data histograms
	set style histogram clustered gap 1
	set style fill solid 0.8 border -1
	set yrange [0:*]
	set offsets 0, 0, 0.2, 0
	set ylabel "ratio to the kernel"
	set grid ytics
	plot "$out/plot.dat" using 2:xtic(1) title "kernel (forwarding, ruleset.nft, conntrack)" lc rgb "#888888", \
	     "" using 3 title "flowcut offloaded" lc rgb "#1f77b4"
	EOF
fi
