#!/usr/bin/env bash
# Calm under a SYN flood (issue 16): while 4 offloaded iperf3 TCP streams run
# client -> server, random-source SYNs from the client's namespace at the
# highest rate the sender and the lab's wire carry, for 10 s; a cut made
# during the flood; then what flowcutd and conntrack counted.
#
#   lab/flood.sh [--rate PPS] [--secs S] [--count N]
#
#   --rate PPS   the flood's rate (trafgen -b); default none: trafgen's
#                TX_RING as fast as it goes, one process (-P 1), which on
#                this machine is the highest rate the wire carries (what
#                the coprocessor's w0 takes in is printed beside it)
#   --secs S     the flood's length (default 10); --count N its bound in
#                frames (default 20,000,000): it stops at whichever first
#
# The run: 4 iperf3 TCP streams (-P 4, FLOOD_STREAM_RATE each: 100M unless
# set, empty for no bound; see below) to 198.18.1.2:5201 first, alone,
# until all are in the fast path (their 5 connections, iperf3's control one
# among them; up to 15 s): t0.  Then, in seconds from t0:
#   0-5  the streams' rate before (iperf3's 1 s reports, their [SUM])
#   1, 5 two UDP flows of 20 Mbit/s (1,000-byte datagrams) to 198.18.1.3:5202
#        (A) and 198.18.1.4:5203 (B), extra addresses of the server, so a cut
#        of one touches neither the streams nor the other
#   5    the usual cut (made once A is in the fast path, at most 6 s on): `flowcutctl cut 198.18.1.3 --for 120` of A, with
#        nothing else going on but the streams and B; its time = from the
#        command's start to A's UDP connection dropping in the fast path
#        (flowcutctl conns polled every 2 ms or so: each poll takes a few);
#        lab/cut.sh times no cut, so this same-run figure is "usual"
#   10   the flood: trafgen, bounded by --secs (timeout) and --count (-n)
#   14   the cut during the flood: `flowcutctl cut 198.18.1.4` of B, timed
#        the same way
#   10-20 the streams' rate during the flood, and at its end whether all 5
#        of their connections are still in the fast path
#   24   flowcutd's stats and conntrack's (`conntrack -S`, nf_conntrack_count),
#        then "reconciled": the fast path's forwarding connections equal the
#        states conntrack holds with flowcutd's mark bit that qualify (TCP
#        ESTABLISHED, UDP ASSURED; the flood's SYN_SENT and SYN_RECV states
#        carry the bit too: flowcutd's table marks every forwarded state),
#        by original 5-tuple, waited for up to 10 s
#
# The flood: four frames round robin, IPv4 and IPv6, each a SYN from a random
# source and port to the server: to 5301, where an iperf3 server listens but
# no stream runs (the server's kernel answers SYN-ACK and retransmits it: a
# SYN_RECV state in the host's conntrack for 60 s, and replies through the
# appliance), and to 5399, where nothing listens (the server answers RST:
# a state that closes within 10 s).  Not 5201: a flood of the streams' own
# listener measures the server's accept queue, not the appliance.  Sources:
# 198.19.0.0/16 and 2001:2:0:ff::/64 (inside the lab's 198.18.0.0/15 and
# 2001:2::/48), which the host routes back out of fp0 through the client
# (routes added for the run), as a flood from outside would be: the host's
# answers go back the way the SYNs came.
#
# The new-connection limit (flowcut-npu's --host-new-rate, docs/fastpath.md)
# is the lab's: its default, or FLOWCUT_NPU_HOST_NEW_RATE (0: none).  Beside
# the table: the fast path's counters over the flood (received, misses to
# the host, SYNs dropped over the rate, the up ring full), the limit, and
# each thread's CPU over it ("cpu PROCESS/PID THREAD/TID PERCENT" lines, %
# of one core, 1 s in to 1 s before its end: trafgen, flowcut-npu's control
# thread and worker, flowcutd's main thread and its two relay threads,
# iperf3's ends, ksoftirqd; and the machine's whole, "cpu machine-busy").
#
# Prints a table and the figures as "key value" lines (build/lab/flood.txt).
# Root only; a lab of its own, torn down on exit.  Uses trafgen (netsniff-ng),
# iperf3, nft, conntrack.  Sourced (tests/lab/test_flood.sh), it only defines
# flood_run.
set -u

FLOOD_MARK=0x40000000	# flowcutd's mark bit (docs/settings.md)
# FLOOD_STREAM_RATE: each of the 4 streams' rate (iperf3 -b; 100M unless
# set; empty: as fast as they go), read in flood_run.
# Bounded, so the streams' rate before the flood is not this machine's
# spare CPU nor the lab wire's capacity: unbounded (2.2 Gbit/s here) they
# filled the server's veth backlog (net.core.netdev_max_backlog 1,000;
# /proc/net/softnet_stat counted the drops), which dropped frames of every
# flow to the server - one run in three lost iperf3's one UDP connect
# datagram of flow A (3.12 does not send it again: A never started, the
# calm cut had nothing to cut) - and what the streams kept during the
# flood measured trafgen's share of the two cores (0.63-0.89), not the
# appliance.  100M, not 250M (2026-12-05): the streams' frames, the
# flood's and the ends share the two cores with the coprocessor's worker;
# at 4 x 250M and 200,000 SYNs a second its receive ring lost 19-22 % of
# w0's frames (npu_wire_lost) and the streams kept 0.57-0.99; at 4 x 100M
# and 100,000 it lost 1-5 % and they kept 1.00, 9 runs of 9 (with rings
# of 4,096 frames, FLOWCUT_AF_PACKET_ARGS, 0-0.3 %; docs/measurements.md).

# flood_run OUT [RATE] [SECS] [COUNT]: the run in the lab $L (lab/lab.sh's,
# started), its figures as "key value" lines in OUT and the table on stdout
flood_run() {
	local out=$1 rate=${2:-} secs=${3:-10} count=${4:-20000000}
	local srate=${FLOOD_STREAM_RATE-100M}	# each stream's (above)
	local run=/run/flowcut-lab/$L lab=$top/lab/lab.sh ctl=$BUILD/flowcutctl
	local tmp=$run/flood t0 fmac cmac cfg ipid
	mkdir -p "$tmp"
	ex() { "$lab" exec "$L" "$@"; }
	fctl() { "$ctl" --link "$run/link" "$@"; }
	stat_of() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: print(d.get(k, "none"))' "$run/flowcutd.json" "$@"; }
	at() { # sleep until second $1 of the run
		sleep "$(awk -v t="$t0" -v s="$1" -v n="$(date +%s.%N)" 'BEGIN { d = t + s - n; printf "%.3f", (d > 0 ? d : 0) }')"
	}
	# the stream connections to 5201 the fast path forwards (iperf3's
	# control connection among them: 5 when all 4 streams are in)
	streams_in_fp() { fctl --json conns | python3 "$top/lab/measure.py" conns --proto tcp --port 5201 --forwarding --print count; }
	nic() { ex "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
	# the coprocessor's counters of the flood's path (flowcutctl counters),
	# and the frames port 0 (w0) lost before it read them (its wire figures)
	npu_cnt() { local j
		j=$(fctl --json counters --all)
		python3 -c 'import json,sys
d = json.load(sys.stdin)
print(" ".join(str(d.get("FROM_WIRE_" + k, 0)) for k in ("RX", "TO_KN_NON_ACCEL", "DROP_NEW_CONN_RATE")), d.get("NPU_UP_RING_FULL", 0))' <<<"$j" | tr '\n' ' '
		python3 "$top/lab/measure.py" wire-lost 0 <<<"$j"
	}
	# cpu_threads SECS: after 1 s, each thread's CPU over SECS, in % of one
	# core (utime + stime of /proc/PID/task/TID/stat): the lab's processes
	# (trafgen, flowcut-npu, flowcutd, iperf3: the pids of the lab's
	# namespaces) and ksoftirqd; and the machine's whole (/proc/stat)
	cpu_threads() {
		local pids='' r
		sleep 1
		for r in client npu host server; do pids="$pids $(ip netns pids "$L-$r" 2>/dev/null | tr '\n' ' ')"; done
		python3 - "$1" $pids <<-'EOF'
		import os, sys, time
		secs, pids = float(sys.argv[1]), sys.argv[2:]
		pids += [p for p in os.listdir("/proc") if p.isdigit() and
		         open("/proc/%s/comm" % p).read().startswith("ksoftirqd")]
		hz = os.sysconf("SC_CLK_TCK")
		def snap():
		    t = {}
		    for p in pids:
		        try: tids = os.listdir("/proc/%s/task" % p)
		        except OSError: continue
		        pc = open("/proc/%s/comm" % p).read().strip() if os.path.exists("/proc/%s/comm" % p) else "?"
		        for i in tids:
		            try: st = open("/proc/%s/task/%s/stat" % (p, i)).read()
		            except OSError: continue
		            comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
		            t[(pc, p, comm, i)] = int(rest[11]) + int(rest[12])
		    cpu = [int(x) for x in open("/proc/stat").readline().split()[1:]]
		    return t, sum(cpu) - cpu[3] - cpu[4], sum(cpu)
		(a, ba, ta), t0 = snap(), time.monotonic()
		time.sleep(secs)
		(b, bb, tb), t1 = snap(), time.monotonic()
		dt = t1 - t0
		for k in sorted(b, key=lambda k: (k[0], int(k[1]), int(k[3]))):
		    if k in a and (b[k] - a[k]) / hz / dt >= 0.005:
		        print("cpu %s/%s %s/%s %.1f" % (k[0], k[1], k[2], k[3], 100.0 * (b[k] - a[k]) / hz / dt))
		print("cpu machine-busy - %.1f" % (100.0 * os.cpu_count() * (bb - ba) / (tb - ta)))
		EOF
	}
	ct_stats() { # conntrack -S summed over the CPUs: insert_failed drop early_drop
		ex host conntrack -S 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "=")
			s[kv[1]] += kv[2] } } END { printf "%d %d %d\n", s["insert_failed"], s["drop"], s["early_drop"] }'
	}
	# what conntrack, the host's neighbours and flowcutd said of ADDRESS's flow
	not_offloaded() {
		ex host conntrack -L -d "$1"; ex host ip neigh; tail -20 "$run/flowcutd.log"
	}
	# the cut of ADDRESS timed: from the element in flowcutd's cut set (the
	# command returned) to its connection (the one whose first key's
	# destination is ADDRESS) dropping in the fast path, then the command's
	# own time (ip netns exec, flowcutctl's libnftables: 90-150 ms, most of
	# what was timed before, and more on a machine the flood keeps busy);
	# prints "MS CMD_MS", "never CMD_MS" after 5 s, or "not-offloaded" when
	# the flow was not in the fast path within 6 s (then no cut is made)
	timed_cut() {
		python3 - "$lab" "$L" "$ctl" "$run/link" "$1" <<-'EOF'
		import json, subprocess, sys, time
		lab, name, ctl, link, addr = sys.argv[1:]
		def state():	# None (not in the fast path), True (dropping), False
		    out = subprocess.run([ctl, "--link", link, "--json", "conns"], capture_output=True, text=True).stdout
		    for c in json.loads(out or "[]"):
		        k = c["dirs"][0]["key"].split()
		        if k[1] == "udp" and k[4].rsplit(":", 1)[0] == addr:
		            return c["verdict"] == "DROP" and c["dirs"][0]["action"] == "IPS" or \
		                all(d["action"] == "DROP" for d in c["dirs"])
		    return None
		t = time.monotonic()
		while state() is None:	# offloaded first (a UDP flow after 2 s)
		    if time.monotonic() - t > 6:
		        print("not-offloaded"); sys.exit(0)
		    time.sleep(0.05)
		c = time.monotonic()
		subprocess.run([lab, "exec", name, "host", ctl, "cut", addr, "--for", "120"],
		               check=True, stdout=subprocess.DEVNULL)
		t = time.monotonic()
		cmd = "%.1f" % ((t - c) * 1000)
		while time.monotonic() - t < 5:
		    if state():
		        print("%.1f" % ((time.monotonic() - t) * 1000), cmd); sys.exit(0)
		    time.sleep(0.002)
		print("never", cmd)
		EOF
	}

	# the run's own routes and addresses, listeners, the server's SYN counter
	ex host ip route replace 198.19.0.0/16 via 198.18.0.2 dev fp0
	ex host ip -6 route replace 2001:2:0:ff::/64 via 2001:2::2 dev fp0
	ex server ip addr add 198.18.1.3/24 dev s0
	ex server ip addr add 198.18.1.4/24 dev s0
	# the UDP flows' servers bound to their own address: unbound, a reply
	# leaves from s0's first address (198.18.1.2), conntrack never sees it
	# as the reply, and the flow stays UNREPLIED: never offloaded, never cut
	for p in 5201 5301; do ex server iperf3 -s -D -p "$p" >/dev/null 2>&1; done
	ex server iperf3 -s -D -p 5202 -B 198.18.1.3 >/dev/null 2>&1
	ex server iperf3 -s -D -p 5203 -B 198.18.1.4 >/dev/null 2>&1
	ex server nft -f - <<-'EOF'
	table inet flood {
		counter syn_open { }
		counter syn_closed { }
		chain pre { type filter hook prerouting priority -400; policy accept;
			tcp flags & (syn | ack) == syn tcp dport 5301 counter name syn_open
			tcp flags & (syn | ack) == syn tcp dport 5399 counter name syn_closed
		}
	}
	EOF
	ex client ping -c 2 -i 0.2 -W 1 198.18.1.2 >/dev/null 2>&1
	ex client ping -6 -c 2 -i 0.2 -W 1 2001:2:0:1::2 >/dev/null 2>&1
	# the host's neighbours of the cut flows' addresses (an offload waits for both next hops)
	ex client ping -c 1 -W 1 198.18.1.3 >/dev/null 2>&1
	ex client ping -c 1 -W 1 198.18.1.4 >/dev/null 2>&1
	# the flood's frames: to fp0's MAC (the client's next hop), from c0's
	fmac=$(ex host cat /sys/class/net/fp0/address)
	cmac=$(ex client cat /sys/class/net/c0/address)
	cfg=$tmp/syn.cfg
	flood_cfg "$fmac" "$cmac" >"$cfg"

	local s0 s1 p0 p1 r0 r1 c0 c1 w0 w1 h0 h1 a_ms b_ms a_cmd='' b_cmd=''
	local -a ct0 ct1
	read -r s0 p0 <<<"$(stat_of resyncs events_lost | tr '\n' ' ')"
	read -r r0 c0 <<<"$(stat_of resync_taken_out ct_events_lost | tr '\n' ' ')"
	read -r -a ct0 <<<"$(ct_stats)"
	# the two UDP flows to be cut (198.18.1.3 calm, 198.18.1.4 during the
	# flood) first, on an idle wire: iperf3 (3.12) starts a UDP test with
	# one datagram each way and never sends it again, and with the TCP
	# streams filling the server's veth backlog that datagram was lost (a
	# clean clone's run: flow b's control connection offloaded and idle,
	# no UDP state at all, its cut "not-offloaded")
	ex client timeout 70 iperf3 -c 198.18.1.3 -p 5202 -u -b 20M -l 1000 -t 60 >"$tmp/udp-a.out" 2>&1 &
	local ua=$!
	ex client timeout 70 iperf3 -c 198.18.1.4 -p 5203 -u -b 20M -l 1000 -t 60 >"$tmp/udp-b.out" 2>&1 &
	local ub=$!
	# the streams then, until all 4 are in the fast path (up to
	# 15 s); the run's clock starts then.  They run on until the figures are
	# read (killed then; 70 s at most)
	ex client timeout 70 iperf3 -c 198.18.1.2 -p 5201 -P 4 -t 60 -i 1 --forceflush \
		${srate:+-b "$srate"} \
		--timestamps='%s ' >"$tmp/streams.out" 2>&1 &
	ipid=$!
	local w
	for w in $(seq 150); do
		[ "$(streams_in_fp)" -ge 5 ] && break
		sleep 0.1
	done
	echo "$(streams_in_fp) $((w / 10))" >"$tmp/streams-offloaded"
	t0=$(awk -v n="$(date +%s.%N)" 'BEGIN { printf "%.3f", n + 0.5 }')
	at 1
	read -r a_ms a_cmd <<<"$(timed_cut 198.18.1.3)"
	# not offloaded: what conntrack and the host's neighbours said of it, kept
	[ "$a_ms" = not-offloaded ] && not_offloaded 198.18.1.3 >"$tmp/a-not-offloaded.txt" 2>&1
	at 10
	w0=$(nic npu w0) h0=$(nic host fp0)
	local -a nc0 nc1
	read -r -a nc0 <<<"$(npu_cnt)"
	local tf0 tf1
	tf0=$(date +%s.%N)
	# bounded in time (timeout, SIGINT: trafgen prints what it sent) and count (-n)
	timeout -s INT -k 3 "$secs" "$lab" exec "$L" client trafgen -i "$cfg" -o c0 -P 1 -n "$count" \
		${rate:+-b "${rate}pps"} >"$tmp/trafgen.out" 2>&1 &
	local tg=$!
	# where the CPU goes over the flood (1 s in to 1 s before its end)
	cpu_threads "$((secs - 2))" >"$tmp/cpu.txt" 2>&1 &
	local cp=$!
	at 14
	read -r b_ms b_cmd <<<"$(timed_cut 198.18.1.4)"
	[ "$b_ms" = not-offloaded ] && not_offloaded 198.18.1.4 >"$tmp/b-not-offloaded.txt" 2>&1
	wait "$tg"
	tf1=$(date +%s.%N)
	wait "$cp"
	w1=$(nic npu w0) h1=$(nic host fp0)
	sleep 0.1	# the counters window: refreshed every 50 ms
	read -r -a nc1 <<<"$(npu_cnt)"
	local after_flood
	after_flood=$(streams_in_fp)
	at 24
	sleep 1.1	# flowcutd writes its stats once a second
	read -r s1 p1 <<<"$(stat_of resyncs events_lost | tr '\n' ' ')"
	read -r r1 c1 <<<"$(stat_of resync_taken_out ct_events_lost | tr '\n' ' ')"
	read -r -a ct1 <<<"$(ct_stats)"
	local count_now rec='' sent tsecs syn_open syn_closed
	count_now=$(ex host cat /proc/sys/net/netfilter/nf_conntrack_count)
	# reconciled: waited for up to 10 s, while the streams still run (to 30)
	local i
	for i in $(seq 20); do
		rec=$(reconciled "$tmp") && break
		sleep 0.5
	done
	fctl --json conns >"$tmp/conns-end.json"
	kill "$ipid" "$ua" "$ub" 2>/dev/null
	wait "$ipid" "$ua" "$ub" 2>/dev/null
	sent=$(tr '\r' '\n' <"$tmp/trafgen.out" | sed -n 's/^ *\([0-9]*\) packets outgoing.*/\1/p' | head -1)
	tsecs=$(awk -v a="$tf0" -v b="$tf1" 'BEGIN { printf "%.2f", b - a }')
	syn_open=$(ex server nft list counter inet flood syn_open | sed -n 's/.*packets \([0-9]*\).*/\1/p')
	syn_closed=$(ex server nft list counter inet flood syn_closed | sed -n 's/.*packets \([0-9]*\).*/\1/p')
	{
		stream_rates "$tmp/streams.out" "$t0" 0 5 10 $((10 + secs))
		echo "stream_rate_each ${srate:-unbounded}"
		read -r w i <"$tmp/streams-offloaded"
		echo "streams_in_fp_before $w"
		echo "streams_offloaded_after_s $i"
		echo "streams_in_fp_after_flood $after_flood"
		echo "t0 $t0"
		echo "flood_start_s $(awk -v a="$tf0" -v t="$t0" 'BEGIN { printf "%.2f", a - t }')"
		echo "flood_secs $tsecs"
		echo "syns_sent ${sent:-0}"
		echo "syns_per_s $(awk -v n="${sent:-0}" -v s="$tsecs" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')"
		echo "wire_w0 $((w1 - w0))"
		echo "host_fp0 $((h1 - h0))"
		echo "npu_rx $((nc1[0] - nc0[0]))"
		echo "npu_to_host_miss $((nc1[1] - nc0[1]))"
		echo "npu_new_conn_rate_drop $((nc1[2] - nc0[2]))"
		echo "npu_up_ring_full $((nc1[3] - nc0[3]))"
		echo "npu_wire_lost $((nc1[4] - nc0[4]))"
		echo "host_new_rate ${FLOWCUT_NPU_HOST_NEW_RATE:-default}"
		echo "server_syns $((syn_open + syn_closed))"
		echo "server_syns_open $syn_open"
		echo "server_syns_closed $syn_closed"
		echo "cut_calm_ms $a_ms"
		echo "cut_flood_ms $b_ms"
		echo "cut_calm_cmd_ms ${a_cmd:-none}"
		echo "cut_flood_cmd_ms ${b_cmd:-none}"
		echo "resyncs $((s1 - s0))"
		echo "resync_taken_out $([ "$r1" = none ] && echo none || echo $((r1 - r0)))"
		echo "ct_events_lost $([ "$c1" = none ] && echo none || echo $((c1 - c0)))"
		echo "npu_events_lost $((p1 - p0))"
		echo "ct_insert_failed $((ct1[0] - ct0[0]))"
		echo "ct_drop $((ct1[1] - ct0[1]))"
		echo "ct_early_drop $((ct1[2] - ct0[2]))"
		echo "nf_conntrack_count $count_now"
		echo "reconciled ${rec:-no}"
		cat "$tmp/cpu.txt"
	} >"$out"
	# the run's raw files beside the figures (iperf3, trafgen, the conns read)
	cp "$run/flowcutd.log" "$run/npu.log" "$tmp/" 2>/dev/null
	rm -rf "$out.d" && cp -r "$tmp" "$out.d"
	flood_table "$out"
}

# the trafgen configuration: SYNs from random sources (198.19.0.0/16,
# 2001:2:0:ff::/64) and ports to the server's 5301 (listening) and 5399
# (closed); trafgen fills in the checksums of fields it changes per frame
flood_cfg() { # fp0-mac c0-mac
	local p fam
	for fam in 4 6; do
		for p in 5301 5399; do
			if [ "$fam" = 4 ]; then
				echo "{ eth(da=$1, sa=$2, type=0x0800),"
				echo "  ipv4(sa=198.19.0.0, da=198.18.1.2, ttl=64, df, id=drnd(), sa[2:2]=drnd()),"
			else
				# trafgen 0.6.8 leaves the EtherType 0 unless given
				echo "{ eth(da=$1, sa=$2, type=0x86dd),"
				echo "  ipv6(sa=2001:2:0:ff::, da=2001:2:0:1::2, hl=64, sa[8:4]=drnd(), sa[12:4]=drnd()),"
			fi
			echo "  tcp(sp=drnd(1024, 65535), dp=$p, seq=drnd(), syn, win=64240) }"
		done
	done
}

# the streams' rate from iperf3's [SUM] lines (each stamped with the second
# it was printed, the end of its 1 s interval): the intervals wholly inside
# [t0+a, t0+b] (before) and [t0+c, t0+d] (during); Mbit/s and the ratio
stream_rates() { # file t0 a b c d
	python3 - "$@" <<-'EOF'
	import math, re, sys
	f, t0, a, b, c, d = sys.argv[1], *map(float, sys.argv[2:])
	rows = []
	for line in open(f):
	    m = re.match(r"(\d+) \[SUM\]\s+\S+-\S+\s+sec\s+\S+ \S+\s+([\d.]+) (\w)bits/sec", line)
	    if m and "sender" not in line and "receiver" not in line:
	        v = float(m.group(2)) * {"K": 1e-3, "M": 1, "G": 1e3}.get(m.group(3), 1e-6)
	        rows.append((int(m.group(1)), v))
	def mean(lo, hi):
	    # an interval stamped s covers about [s-1, s]
	    v = [r for s, r in rows if s - 1 >= math.floor(t0 + lo) and s <= math.ceil(t0 + hi)]
	    return (sum(v) / len(v), len(v)) if v else (0.0, 0)
	(bm, bn), (dm, dn) = mean(a, b), mean(c, d)
	print("before_mbps %.0f" % bm); print("before_intervals %d" % bn)
	print("during_mbps %.0f" % dm); print("during_intervals %d" % dn)
	print("ratio %.2f" % (dm / bm if bm else 0))
	EOF
}

# "yes" (exit 0) when the fast path's forwarding connections are the states
# conntrack holds with the mark bit that qualify (TCP ESTABLISHED, UDP
# ASSURED), by their original 5-tuple; else the difference (exit 1)
reconciled() { # tmp
	fctl --json conns >"$1/conns-rec.json" || return 1
	ex host conntrack -L -m "$FLOOD_MARK/$FLOOD_MARK" >"$1/ct-rec.txt" 2>/dev/null
	python3 - "$1/conns-rec.json" "$1/ct-rec.txt" <<-'EOF'
	import ipaddress, json, re, sys
	def addr(a): return str(ipaddress.ip_address(a))
	fp = set()
	for c in json.load(open(sys.argv[1])):
	    if c["verdict"] == "DROP" or any(d["action"] == "DROP" for d in c["dirs"]):
	        continue	# cut: its state was killed
	    k = c["dirs"][0]["key"].split()	# "4 tcp A:p > B:q port 0 vlan 0"
	    if k[1] not in ("tcp", "udp"): continue	# the pings before the run
	    s, d = k[2].rsplit(":", 1), k[4].rsplit(":", 1)
	    fp.add((k[1], addr(s[0]), int(s[1]), addr(d[0]), int(d[1])))
	ct = set()
	for line in open(sys.argv[2]):
	    w = line.split()
	    if not w or w[0] not in ("tcp", "udp"): continue
	    if w[0] == "tcp" and w[3] != "ESTABLISHED": continue
	    if w[0] == "udp" and "[ASSURED]" not in line: continue
	    kv = {}
	    for x in w:
	        if "=" in x:
	            key, v = x.split("=", 1)
	            kv.setdefault(key, v)	# the first: the original direction
	    ct.add((w[0], addr(kv["src"]), int(kv["sport"]), addr(kv["dst"]), int(kv["dport"])))
	if fp == ct:
	    print("yes (%d)" % len(fp)); sys.exit(0)
	print("no: %d only in the fast path, %d only in conntrack" % (len(fp - ct), len(ct - fp)))
	sys.exit(1)
	EOF
}

flood_table() { # figures
	awk '{ k = $1; $1 = ""; v[k] = substr($0, 2) }
	END {
		printf "| streams in the fast path (of 5), before / after the flood | streams before, Mbit/s | during | ratio | SYNs sent (s) | SYNs/s | at the coprocessor (w0) | lost at its ring | its fast path: received / misses to the host / SYNs over the rate / up ring full | at the host (fp0) | at the server (5301 + 5399) | cut calm, ms (the command) | cut during, ms (the command) | resyncs | taken out | ct events lost | npu events lost | insert_failed / drop / early_drop | nf_conntrack_count | reconciled |\n"
		printf "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
		printf "| %s / %s | %s | %s | %s | %s (%s) | %s | %s | %s | %s / %s / %s / %s | %s | %s (%s + %s) | %s (%s) | %s (%s) | %s | %s | %s | %s | %s / %s / %s | %s | %s |\n",
			v["streams_in_fp_before"], v["streams_in_fp_after_flood"], v["before_mbps"], v["during_mbps"], v["ratio"], v["syns_sent"], v["flood_secs"], v["syns_per_s"],
			v["wire_w0"], v["npu_wire_lost"], v["npu_rx"], v["npu_to_host_miss"], v["npu_new_conn_rate_drop"], v["npu_up_ring_full"], v["host_fp0"], v["server_syns"], v["server_syns_open"], v["server_syns_closed"],
			v["cut_calm_ms"], v["cut_calm_cmd_ms"], v["cut_flood_ms"], v["cut_flood_cmd_ms"], v["resyncs"], v["resync_taken_out"], v["ct_events_lost"],
			v["npu_events_lost"], v["ct_insert_failed"], v["ct_drop"], v["ct_early_drop"],
			v["nf_conntrack_count"], v["reconciled"]
	}' "$1"
}

# run, not sourced: a lab of its own
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	top=$(cd "$here/.." && pwd)
	BUILD=${BUILD:-$top/build}
	case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
	export BUILD
	rate='' secs=10 count=20000000
	while [ $# -gt 0 ]; do
		case "$1" in
		--rate) rate=${2:?}; shift ;;
		--secs) secs=${2:?}; shift ;;
		--count) count=${2:?}; shift ;;
		*) sed -n 7,7p "$0" >&2; exit 2 ;;
		esac
		shift
	done
	for v in $rate "$secs" "$count"; do
		case "$v" in *[!0-9]*|'') echo "flood: '$v' is not a whole number" >&2; exit 2 ;; esac
	done
	[ "$secs" -ge 5 ] && [ "$secs" -le 14 ] || { echo "flood: --secs $secs: 5 to 14 (the streams run 30 s)" >&2; exit 2; }
	[ "$(id -u)" -eq 0 ] || { echo "flood: root only" >&2; exit 2; }
	command -v trafgen >/dev/null || { echo "flood: no trafgen (scripts/deps.sh installs netsniff-ng)" >&2; exit 2; }
	L=fl$$
	trap '"$here/lab.sh" down "$L" >/dev/null 2>&1' EXIT
	trap 'exit 1' INT TERM
	"$here/lab.sh" up "$L" >/dev/null && "$here/lab.sh" start "$L" >/dev/null || { echo "flood: no lab" >&2; exit 1; }
	mkdir -p "$BUILD/lab"
	flood_run "$BUILD/lab/flood.txt" "$rate" "$secs" "$count"
	echo "figures: $BUILD/lab/flood.txt"
fi
