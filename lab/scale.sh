#!/usr/bin/env bash
# Many offloaded connections and nothing changing (issue 16's loop and the
# bench's shape): N assured UDP states with flowcutd's mark bit
# (build/flowcut-ctgen, 198.18.0.2:sport > 198.18.1.2:dport, routed out of
# the lab's front ports) put into the lab host's conntrack, waited for in
# the fast path, then 10 s with nothing changing.  A ping from the client
# to the server first: the host's neighbours of both ends resolved (with
# none, flowcutd offloads none of the states; its own offload counted).
#
#   lab/scale.sh [N] [--figures all|idle,resync,memory,leave,drain,cut]
#                           (N: 1,000,000 by default; no --figures: the row)
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
# in a namespace), raised to N + N/10 when below and put back on exit;
# conntrack's hashsize (global too) raised to a power of two >= N when
# below, said, and put back on exit (SCALE_HASHSIZE=keep: left as it is).
# Beside the rates, the CPU an offload: flowcutd's utime+stime from
# ctgen's start to the fast path at N, over N, and ctgen's an insert
# (/usr/bin/time: its user and system time, the kernel's inserts in it).
#
# Every run also prints the offloads a second from the NEW events: the
# fast path's count sampled at 10 Hz (CLOCK_MONOTONIC, python's
# time.monotonic) against ctgen's own stamps, overall (ctgen's start to
# the first sample at N) and between 10 % and 90 % of N, beside ctgen's
# insert rate.  --figures adds plan-a-million section 5's figures, each
# beside its same-run reference (one lab; the references first, at the
# small size, then conntrack flushed and the fast path empty again):
#   idle    flowcutd's CPU over 10 s at N, beside the same at 10,000
#   resync  `flowcutctl resync --wait` of the N states and its
#           resync_last_ms, beside `conntrack -L` and `conntrack -L -m
#           BIT/BIT` of the same states (their time, their lines)
#   memory  flowcutd's VmRSS at N minus at 0, over N; beside the kernel's
#           nf_conntrack slab objsize and flowcut-npu's VmRSS (over its
#           --conns)
#   leave   conntrack's delete of one state to its connection out of the
#           fast path (build/flowcut-ctleave: 100 samples, median and p99),
#           at N beside at 10,000
#   drain   flowcutd's own offload rate from the NEW events, the
#           generator off the CPU: rounds of SCALE_DRAIN_ROUND (250,000)
#           states made while flowcutd is stopped (SIGSTOP; their events
#           wait in its socket, 512 MiB, which holds about 300,000), then
#           flowcutd let go and timed (20 Hz) until the fast path holds
#           them, N in all, flowcutd on core 0 and flowcut-npu on core 1;
#           the rate over the rounds' times, flowcutd's CPU an offload, its
#           sleeps (voluntary switches) an offload, and ctgen's insert rate
#           with no consumer running (conntrack's own, the reference);
#           beside the main run's live rate.  In a second lab, after the
#           first (flowcutd at --lease 60000 there, for the stops)
#   cut     100,000 more states from 198.18.128.0/18 (16,384 sources,
#           routed back through the client), one `nft add element inet
#           filter blocked4 { 198.18.128.0/18 }` (a watched set): flowcutd's
#           "cut (set)" line (the last DROP answered, ms after it read the
#           change) and the time from the nft command to that line, at N
#           beside the 100,000 alone; then the element deleted (released)
# A figure that cannot be taken says why instead of a number.
#
# Sourced (tests/lab/test_scale.sh), it only defines the functions.
set -u

SCALE_BIT=0x40000000		# flowcutd's mark bit in the lab (docs/settings.md)
SCALE_CUT_PFX=198.18.128.0/18	# the cut's sources: 16,384 addresses
SCALE_CUT_N=${SCALE_CUT_N:-100000}	# the cut's states (at most 16,384 x 45,535)
SCALE_REF_N=${SCALE_REF_N:-10000}	# the references' size (idle, leave)
SCALE_DRAIN_ROUND=${SCALE_DRAIN_ROUND:-250000}	# states a drain round (they wait in the event socket)

# the lab's host namespace, the run's folder
scale_ex() { "$top/lab/lab.sh" exec "$L" host "$@"; }
scale_in_fp() { "$BUILD/flowcutctl" --link "/run/flowcut-lab/$L/link" --json status |
	sed -n 's/.*"connections": \([0-9]*\).*/\1/p'; }
scale_rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# scale_stat KEY...: flowcutd.json's values, a line each ("none": not there)
scale_stat() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2:]: print(d.get(k, "none"))' "/run/flowcut-lab/$L/flowcutd.json" "$@"; }
# scale_neigh: the host's neighbours of both ends resolved (an offload needs
# both next hops: states made with none resolved wait, none offloaded)
scale_neigh() {
	"$top/lab/lab.sh" exec "$L" client ping -c 2 -i 0.2 -W 1 198.18.1.2 >/dev/null 2>&1 ||
		echo "scale: no ping from the client to the server" >&2
}

# scale_wait_fp COUNT SECONDS: until the fast path holds COUNT (0: empty), or said
scale_wait_fp() {
	local want=$1 end=$((SECONDS + $2)) c
	while :; do
		c=$(scale_in_fp) || c=-1
		if [ "$want" -eq 0 ]; then [ "${c:-1}" -eq 0 ] && return 0
		else [ "${c:-0}" -ge "$want" ] && return 0; fi
		[ "$SECONDS" -ge "$end" ] && { echo "scale: the fast path holds $c, not $want, after $2 s" >&2; return 1; }
		sleep 0.1
	done
}

# scale_cpu PID SECONDS: its utime+stime over SECONDS, % of a core
scale_cpu() {
	local c0 c1 tck
	tck=$(getconf CLK_TCK)
	c0=$(awk '{ print $14 + $15 }' "/proc/$1/stat")
	sleep "$2"
	c1=$(awk '{ print $14 + $15 }' "/proc/$1/stat")
	echo "scale=2; ($c1 - $c0) * 100 / $tck / $2" | bc
}

# scale_sampler TARGET SECONDS FILE [HZ]: "monotonic count" at HZ (10) until TARGET or SECONDS
scale_sampler() {
	python3 - "$BUILD/flowcutctl" "/run/flowcut-lab/$L/link" "$1" "$2" "$3" "${4:-10}" <<'PY'
import re, subprocess, sys, time
ctl, link, target, limit, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
gap = 1.0 / float(sys.argv[6])
end = time.monotonic() + limit
with open(out, "w") as f:
    while True:
        t = time.monotonic()
        r = subprocess.run([ctl, "--link", link, "--json", "status"], capture_output=True, text=True)
        m = re.search(r'"connections": (\d+)', r.stdout)
        c = int(m.group(1)) if m else -1
        f.write("%.6f %d\n" % ((t + time.monotonic()) / 2, c))
        f.flush()
        if c >= target or time.monotonic() > end:
            break
        time.sleep(max(0.0, t + gap - time.monotonic()))
PY
}

# scale_rates SAMPLES CTGEN_OUT BASE N: the offload figures as "key value" lines
scale_rates() {
	python3 - "$@" <<'PY'
import re, sys
samples, ctout, base, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
pts = [tuple(map(float, l.split())) for l in open(samples) if l.strip()]
last = open(ctout).read().strip().splitlines()
m = re.search(r"in ([0-9.]+) s, ([0-9]+) a second.*from ([0-9.]+) to ([0-9.]+)", last[-1] if last else "")
if not m:
    print("offload_rate why: flowcut-ctgen printed no stamps (%s)" % (last[-1] if last else "nothing"))
    sys.exit(0)
t0, t1 = float(m.group(3)), float(m.group(4))
print("ctgen_rate_per_s %d" % (n / (t1 - t0) if t1 > t0 else 0))
def first(at):
    for t, c in pts:
        if c - base >= at:
            return t
    return None
tn, t10, t90 = first(n), first(n * 0.1), first(n * 0.9)
if tn is None:
    print("offload_rate why: the fast path reached %d of %d" % (max(c for _, c in pts) - base, n))
    sys.exit(0)
print("offload_s %.2f" % (tn - t0))
print("offload_rate_per_s %d" % (n / (tn - t0)))
if t90 is not None and t10 is not None and t90 > t10:
    print("offload_rate_mid_per_s %d" % (0.8 * n / (t90 - t10)))
PY
}


# scale_run N OUT [CTGEN OPTIONS]: the measurement in the lab $L
# (lab/lab.sh's, started), its figures as "key value" lines in OUT, the
# row and the offload rates on stdout
scale_run() {
	local n=$1 out=$2 run=/run/flowcut-lab/$L pid tck t0 t_off='' now conns=0 c0 c1
	local r0 r1 o1 rss o0 base sampler cf0 cf1
	shift 2
	pid=$(cat "$run/flowcutd.pid")
	tck=$(getconf CLK_TCK)
	cpu_of() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
	scale_neigh
	o0=$(scale_stat offloaded)
	base=$(scale_in_fp) || base=0
	# offloaded: the fast path's count reaches N (bounded: 30 s + 1 s a 5,000)
	scale_sampler $((base + n)) $((30 + n / 5000)) "$run/samples-$n.txt" &
	sampler=$!
	t0=$(date +%s.%N)
	cf0=$(cpu_of)
	# ctgen's CPU (its user + system time, the kernel's inserts in its sendmsg)
	/usr/bin/time -f "%U %S" -o "$run/ctgen.time" \
	"$top/lab/lab.sh" exec "$L" host "$BUILD/flowcut-ctgen" "$n" --mark "$SCALE_BIT" "$@" \
		>"$run/ctgen.out" 2>&1 || { echo "scale: flowcut-ctgen failed:" >&2; tail -3 "$run/ctgen.out" >&2; }
	wait "$sampler"
	cf1=$(cpu_of)
	conns=$(tail -1 "$run/samples-$n.txt" | cut -d' ' -f2)
	now=$(date +%s.%N)
	[ "${conns:-0}" -ge $((base + n)) ] && t_off=$(printf "%.2f" "$(echo "$now - $t0" | bc)")
	# 10 s with nothing changing
	r0=$(scale_stat resyncs)
	c0=$(cpu_of)
	sleep 10
	c1=$(cpu_of)
	read -r r1 o1 taken lost <<<"$(scale_stat resyncs offloaded resync_taken_out ct_events_lost | tr '\n' ' ')"
	conns=$(scale_in_fp) || conns=0
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
		scale_rates "$run/samples-$n.txt" "$run/ctgen.out" "$base" "$n"
		# CPU µs an offload (flowcutd's, ctgen's start to the fast path at N) and an insert
		echo "flowcutd_us_per_offload $(echo "scale=2; ($cf1 - $cf0) * 1000000 / $tck / $n" | bc)"
		echo "ctgen_us_per_insert $(awk -v n="$n" '{ printf "%.2f", ($1 + $2) * 1000000 / n }' "$run/ctgen.time")"
	} >"$out"
	awk '{ k = $1; $1 = ""; v[k] = substr($0, 2) }
	END {
		nc = none_said(v["resync_taken_out"]); ne = none_said(v["ct_events_lost"])
		printf "| states | offloaded | time to offload | flowcutd CPU idle, %% of a core | resyncs in the 10 s (since start) | offloads counted | flowcutd RSS | RSS a state | resync_taken_out | ct_events_lost |\n"
		printf "| %s | %s | %s s | %s | %s (%s) | %s | %.1f MB | %s B | %s | %s |\n", v["states"],
			v["offloaded"], v["time_to_offload_s"], v["cpu_pct"], v["resyncs_in_10s"], v["resyncs"],
			v["offloads_counted"], v["rss_kb"] / 1024, v["rss_b_per_conn"], nc, ne
		printf "ctgen: %s\n", v["ctgen"]
		if ("offload_rate_per_s" in v)
			printf "offloads/s from NEW: %s overall (%s s from ctgen'"'"'s start to the fast path at N), %s between 10 %% and 90 %%; ctgen'"'"'s insert rate %s/s\n",
				v["offload_rate_per_s"], v["offload_s"], ("offload_rate_mid_per_s" in v) ? v["offload_rate_mid_per_s"] : "(too few samples)", v["ctgen_rate_per_s"]
		else
			printf "offloads/s from NEW: not taken: %s\n", v["offload_rate"]
		printf "CPU: flowcutd %s us an offload, ctgen %s us an insert\n", v["flowcutd_us_per_offload"], v["ctgen_us_per_insert"]
	}
	function none_said(x) { return x == "none" ? "not counted yet" : x }' "$out"
}

# scale_drain N: flowcutd's own rate from the NEW events (the header's
# "drain"), "key value" lines; the fast path holds N more after it
scale_drain() {
	local n=$1 run=/run/flowcut-lab/$L pid npu tck base have=0 k=0 r t0 t1 secs=0 c0 c1 v0 v1
	local cpu=0 sleeps=0 why='' mask_d mask_n lost0 lost1 gen=0
	pid=$(cat "$run/flowcutd.pid")
	npu=$(cat "$run/npu.pid")
	tck=$(getconf CLK_TCK)
	mask_d=$(taskset -p "$pid" | sed 's/.*: //')
	mask_n=$(taskset -p "$npu" | sed 's/.*: //')
	taskset -a -p -c 0 "$pid" >/dev/null && taskset -a -p -c 1 "$npu" >/dev/null ||
		why="flowcutd and flowcut-npu not pinned (taskset)"
	lost0=$(scale_stat ct_events_lost)
	scale_neigh
	base=$(scale_in_fp) || base=0
	while [ "$have" -lt "$n" ] && [ -z "$why" ]; do
		r=$SCALE_DRAIN_ROUND
		[ $((n - have)) -lt "$r" ] && r=$((n - have))
		kill -STOP "$pid"
		# a round's states on destination ports of their own (64,512 a port: ctgen.h)
		if ! scale_ex "$BUILD/flowcut-ctgen" "$r" --mark "$SCALE_BIT" --dport $((${SCALE_DRAIN_DPORT:-20000} + k * 8)) \
			>"$run/ctgen-drain.out" 2>&1; then
			kill -CONT "$pid"
			why="flowcut-ctgen failed: $(tail -1 "$run/ctgen-drain.out")"
			break
		fi
		gen=$(echo "${gen:-0} + $(sed -n 's/.* states made in \([0-9.]*\) s,.*/\1/p' "$run/ctgen-drain.out" | tail -1)" | bc)
		c0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
		v0=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")
		t0=$(python3 -c 'import time; print("%.6f" % time.monotonic())')
		kill -CONT "$pid"
		scale_sampler $((base + have + r)) $((30 + r / 5000)) "$run/drain-$k.txt" 20
		c1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
		v1=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$pid/status")
		# the first sample at the round's count (its midpoint: scale_sampler's stamp)
		t1=$(awk -v want=$((base + have + r)) '$2 >= want { print $1; exit }' "$run/drain-$k.txt")
		[ -n "$t1" ] || { why="round $k: the fast path did not reach $((base + have + r)) ($(tail -1 "$run/drain-$k.txt"))"; break; }
		secs=$(echo "$secs + $t1 - $t0" | bc)
		cpu=$((cpu + c1 - c0))
		sleeps=$((sleeps + v1 - v0))
		have=$((have + r))
		k=$((k + 1))
	done
	[ -n "$mask_d" ] && taskset -a -p "$mask_d" "$pid" >/dev/null
	[ -n "$mask_n" ] && taskset -a -p "$mask_n" "$npu" >/dev/null
	if [ -n "$why" ]; then
		echo "drain not taken: $why"
		{ echo "scale: flowcutd's log and flowcut-npu's, their last lines:"
		  tail -5 "$run/flowcutd.log"; tail -5 "$run/npu.log"; } >&2
		return
	fi
	lost1=$(scale_stat ct_events_lost)
	echo "drain_offloads_per_s $(echo "$n / $secs" | bc) ($n in $k rounds, $(printf %.2f "$secs") s let go)"
	echo "drain_flowcutd_us_per_offload $(echo "scale=2; $cpu * 1000000 / $tck / $n" | bc)"
	echo "drain_flowcutd_sleeps_per_1000 $(echo "scale=2; $sleeps * 1000 / $n" | bc) (the main thread's voluntary switches)"
	echo "drain_ct_events_lost $((lost1 - lost0))"
	echo "drain_ctgen_inserts_per_s $(echo "$n / $gen" | bc) (conntrack's own, flowcutd stopped: the reference)"
}

# scale_leave N TAG [CTGEN OPTIONS]: flowcut-ctleave's 100 samples of N's states
scale_leave() {
	local n=$1 tag=$2 line
	shift 2
	line=$(scale_ex "$BUILD/flowcut-ctleave" --link "/run/flowcut-lab/$L/link" "$n" "$@" 2>"/run/flowcut-lab/$L/ctleave-$tag.err" | tail -1)
	case "$line" in
	*" samples: median "*) echo "leave_$tag ${line#flowcut-ctleave: }" ;;
	*) echo "leave_$tag not taken: ${line:-flowcut-ctleave printed nothing} ($(tail -1 "/run/flowcut-lab/$L/ctleave-$tag.err"))" ;;
	esac
}

# scale_cut TAG: SCALE_CUT_N states from SCALE_CUT_PFX offloaded, cut by one
# element of the watched set blocked4, the element deleted again
scale_cut() {
	local tag=$1 run=/run/flowcut-lab/$L before t0 t1 line=
	before=$(scale_in_fp) || before=0
	scale_ex "$BUILD/flowcut-ctgen" "$SCALE_CUT_N" --mark "$SCALE_BIT" --src "$SCALE_CUT_PFX" \
		--sport 20000 >"$run/ctgen-cut.out" 2>&1
	if ! scale_wait_fp $((before + SCALE_CUT_N)) $((30 + SCALE_CUT_N / 5000)) 2>"$run/cut.err"; then
		echo "cut_$tag not taken: $(cat "$run/cut.err")"
		return
	fi
	before=$(grep -c "cut (set) of" "$run/flowcutd.log")
	t0=$(date +%s%N)
	scale_ex nft add element inet filter blocked4 "{ $SCALE_CUT_PFX }"
	for _ in $(seq 3000); do
		[ "$(grep -c "cut (set) of" "$run/flowcutd.log")" -gt "$before" ] && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	line=$(grep "cut (set) of" "$run/flowcutd.log" | tail -n +$((before + 1)) | head -1)
	if [ -z "$line" ]; then
		echo "cut_$tag not taken: no \"cut (set)\" line in flowcutd's log 30 s after nft add element"
	else
		echo "cut_$tag nft_to_line_ms $(( (t1 - t0) / 1000000 )): ${line#flowcutd: }"
	fi
	before=$(grep -c "release of" "$run/flowcutd.log")
	scale_ex nft delete element inet filter blocked4 "{ $SCALE_CUT_PFX }"
	for _ in $(seq 300); do
		[ "$(grep -c "release of" "$run/flowcutd.log")" -gt "$before" ] && break
		sleep 0.1
	done
}

# scale_resync N: conntrack -L (all, by mark) timed, then flowcutctl resync --wait
scale_resync() {
	local t0 t1 lines ans
	t0=$(date +%s%N); lines=$(scale_ex conntrack -L 2>/dev/null | wc -l); t1=$(date +%s%N)
	echo "conntrack_L_ms $(( (t1 - t0) / 1000000 )) ($lines states)"
	t0=$(date +%s%N); lines=$(scale_ex conntrack -L -m "$SCALE_BIT/$SCALE_BIT" 2>/dev/null | wc -l); t1=$(date +%s%N)
	echo "conntrack_L_mark_ms $(( (t1 - t0) / 1000000 )) ($lines states)"
	if [ "$lines" -lt $(($1 / 2)) ]; then
		echo "resync not taken: only $lines marked states left of $1 (gone since: a state that left the fast path lives P - idle, docs/settings.md)"
		return
	fi
	ans=$("$BUILD/flowcutctl" --control "/run/flowcut-lab/$L-ctl/flowcutd.sock" resync --wait 2>&1)
	case "$ans" in
	"resync "*) echo "resync ${ans#resync }" ;;
	*) echo "resync not taken: $ans" ;;
	esac
}

# scale_figures N OUT LIST: the main run at N (scale_run) and the figures in
# LIST, their references first; "key value" lines in OUT, said on stdout
scale_figures() {
	local n=$1 out=$2 list=,$3, run=/run/flowcut-lab/$L pid npu rss0 rssn ref=''
	has() { case "$list" in *,all,*|*,"$1",*) return 0 ;; esac; return 1; }
	pid=$(cat "$run/flowcutd.pid")
	npu=$(cat "$run/npu.pid")
	: >"$out"
	# the cut's sources routed back through the client
	has cut && scale_ex ip route replace "$SCALE_CUT_PFX" via 198.18.0.2 dev fp0
	scale_neigh	# before the references' states (scale_run looks again for its own)
	rss0=$(scale_rss "$pid")
	# the references, at the small sizes
	if has cut; then scale_cut alone >>"$out"; ref=1; fi
	if has idle || has leave; then
		ref=1
		scale_ex "$BUILD/flowcut-ctgen" "$SCALE_REF_N" --mark "$SCALE_BIT" --sport 30000 \
			>"$run/ctgen-ref.out" 2>&1
		if scale_wait_fp "$SCALE_REF_N" 60; then
			has idle && echo "cpu_pct_at_$SCALE_REF_N $(scale_cpu "$pid" 10)" >>"$out"
			has leave && scale_leave "$SCALE_REF_N" "$SCALE_REF_N" --sport 30000 >>"$out"
		else
			echo "reference not taken: the $SCALE_REF_N states did not reach the fast path" >>"$out"
		fi
	fi
	if [ -n "$ref" ]; then	# all gone again: conntrack flushed, the fast path empty
		scale_ex conntrack -F >/dev/null 2>&1
		scale_wait_fp 0 120 || echo "scale: the references' connections did not all leave" >&2
	fi
	scale_run "$n" "$run/scale-row.txt"
	cat "$run/scale-row.txt" >>"$out"
	if has memory; then
		rssn=$(scale_rss "$pid")
		echo "rss_kb_at_0 $rss0" >>"$out"
		echo "mem_b_per_conn $(( (rssn - rss0) * 1024 / n ))" >>"$out"
		echo "nf_conntrack_objsize_b $(awk '$1 == "nf_conntrack" { print $4 }' /proc/slabinfo)" >>"$out"
		echo "npu_rss_kb $(scale_rss "$npu") (--conns $FLOWCUT_NPU_CONNS: $(( $(scale_rss "$npu") * 1024 / FLOWCUT_NPU_CONNS )) B a slot)" >>"$out"
	fi
	# the resync first: the N states age out of the fast path P (120 s)
	# after their offload, their bit cleared, and leave's and cut's
	# minutes after it found some or none of them marked
	has resync && scale_resync "$n" >>"$out"
	has leave && scale_leave "$n" "$n" >>"$out"
	has cut && scale_cut "at_$n" >>"$out"
	grep -v -e '^states ' -e '^offloaded ' -e '^time_to' -e '^ctgen ' -e '^cpu_pct ' -e '^resyncs' \
		-e '^offloads_counted' -e '^rss_' -e '^resync_taken_out ' -e '^ct_events_lost' \
		-e '^ctgen_rate' -e '^offload_' "$out" | sed 's/^/  /'
}

# run, not sourced: a lab of its own
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	here=$(cd "$(dirname "$0")" && pwd)
	top=$(cd "$here/.." && pwd)
	BUILD=${BUILD:-$top/build}
	case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
	export BUILD
	n=1000000 figs=
	while [ $# -gt 0 ]; do
		case "$1" in
		--figures) figs=${2:-}; shift 2 || { sed -n 10,11p "$0" >&2; exit 2; } ;;
		--figures=*) figs=${1#--figures=}; shift ;;
		*[!0-9]*|'') sed -n 10,11p "$0" >&2; exit 2 ;;
		*) n=$1; shift ;;
		esac
	done
	case ",$figs," in *,cut,*|*,all,*) extra=$SCALE_CUT_N ;; *) extra=0 ;; esac
	case ",$figs," in *,drain,*|*,all,*) drain=1 ;; *) drain= ;; esac
	[ "$(id -u)" -eq 0 ] || { echo "scale: root only" >&2; exit 2; }
	L=sc$$
	ctmax=/proc/sys/net/netfilter/nf_conntrack_max
	ctmax0=$(cat "$ctmax")
	want=$((n + n / 10 + 1000 + extra))
	# conntrack's buckets (global to the machine): a power of two >= N, as an
	# appliance for N sets it (docs/settings.md), for this run only;
	# SCALE_HASHSIZE=keep leaves it (the before of the find's cost)
	hs=/sys/module/nf_conntrack/parameters/hashsize
	hs0=$(cat "$hs") hs_want=$hs0
	if [ "${SCALE_HASHSIZE:-}" != keep ]; then
		hs_want=1; while [ "$hs_want" -lt "$n" ]; do hs_want=$((hs_want * 2)); done
		[ "$hs_want" -gt "$hs0" ] || hs_want=$hs0
	fi
	cleanup() {
		# a drain's round may have left flowcutd stopped
		kill -CONT "$(cat "/run/flowcut-lab/$L/flowcutd.pid" 2>/dev/null)" 2>/dev/null
		"$here/lab.sh" down "$L" >/dev/null 2>&1
		# put back only what this run set
		[ "$(cat "$ctmax")" = "$want" ] && [ "$ctmax0" -lt "$want" ] && echo "$ctmax0" >"$ctmax"
		if [ "$hs_want" != "$hs0" ] && [ "$(cat "$hs")" = "$hs_want" ]; then
			echo "$hs0" >"$hs" && echo "scale: conntrack's hashsize put back to $hs0" >&2
		fi
	}
	trap cleanup EXIT
	trap 'exit 1' INT TERM
	if [ "$ctmax0" -lt "$want" ]; then
		echo "$want" >"$ctmax" || { echo "scale: nf_conntrack_max $ctmax0 < $want" >&2; exit 1; }
	fi
	if [ "$hs_want" != "$hs0" ]; then
		echo "$hs_want" >"$hs" && echo "scale: conntrack's hashsize $hs0 -> $hs_want for this run" >&2 ||
			{ echo "scale: conntrack's hashsize $hs0 not raised to $hs_want" >&2; hs_want=$hs0; }
	fi
	conns=$((n + n / 4 + extra))
	[ "$conns" -ge 65536 ] || conns=65536
	export FLOWCUT_NPU_CONNS=${FLOWCUT_NPU_CONNS:-$conns}
	"$here/lab.sh" up "$L" >/dev/null && "$here/lab.sh" start "$L" >/dev/null || { echo "scale: no lab" >&2; exit 1; }
	mkdir -p "$BUILD/lab"
	if [ -n "$figs" ]; then
		scale_figures "$n" "$BUILD/lab/scale-$n.txt" "$figs"
	else
		scale_run "$n" "$BUILD/lab/scale-$n.txt"
	fi
	if [ -n "$drain" ]; then
		# a lab of its own: the first one's states would age out meanwhile
		# (the fast path's idle timeout, P: 120 s), their events beside
		# the drain's; flowcutd stopped for a round is not a lapse of its lease
		"$here/lab.sh" down "$L" >/dev/null 2>&1
		L=sd$$
		FLOWCUTD_ARGS="${FLOWCUTD_ARGS:-} --lease 60000" "$here/lab.sh" up "$L" >/dev/null &&
			FLOWCUTD_ARGS="${FLOWCUTD_ARGS:-} --lease 60000" "$here/lab.sh" start "$L" >/dev/null ||
			{ echo "scale: no lab for the drain" >&2; exit 1; }
		scale_drain "$n" | tee -a "$BUILD/lab/scale-$n.txt" | sed 's/^/  /'
	fi
fi
