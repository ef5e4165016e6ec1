#!/usr/bin/env bash
# The cost (the seed's lab-verdict-many.sh), in the lab: a thousand
# connections at once - eight iperf3 clients of 128 TCP streams each
# (-P 128) against eight iperf3 servers - first with the connections made
# FWD and the IPS switch off ("Cut in hardware" off), then with IPS and the
# switch on (on), several runs each.  Per run: the delivered Mbit/s (the
# clients' receivers, summed), the host's CPU (flowcutd) beside the
# coprocessor's (flowcut-npu) and the machine's softirq work, how many
# streams finished, how many connections flowcutd offloaded; per setting,
# the runs' median and spread, and whether the two settings deliver the
# same within it.
#
#   lab/many.sh [--runs N] [--secs S] [--clients N] [--streams N]
#               [--settings LIST] [--limit S] [--pin] [--json FILE] [--png FILE]
#
#   --runs N        runs per setting (default 5)
#   --secs S        each client's iperf3 -t (default 10)
#   --clients N     clients, and servers (default 8)
#   --streams N     streams per client, iperf3 -P (default 128, iperf3's most)
#   --settings LIST fwd,ips (default): fwd = "Cut in hardware" off (FWD
#                   microflows, the IPS switch off), ips = on
#   --limit S       the most a client may take, connecting included (default
#                   secs + 90); one that takes longer is killed, its streams
#                   not counted as finished
#   --pin           the clients' and servers' iperf3 on core 0, core 1 left
#                   to the coprocessor's worker (lab.sh's EAL --lcores 0@0,1@1)
#                   and the kernel's work it does there, as an appliance's
#                   coprocessor has a core of its own
#   --json FILE     runs, summary and per-second figures ($OUT/many.json);
#   --png FILE      the plot ($OUT/many.png)
#
# Exit: 0 when every stream of every run finished, 1 when one did not,
# 2 on bad usage or no lab.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/measure.sh
. "$here/measure.sh"

runs=5 secs=10 nclients=8 streams=128 settings=fwd,ips limit='' json='' png='' ends=()
usage() { sed -n '13,14p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=${2:?}; shift ;;
	--secs) secs=${2:?}; shift ;;
	--clients) nclients=${2:?}; shift ;;
	--streams) streams=${2:?}; shift ;;
	--settings) settings=${2:?}; shift ;;
	--limit) limit=${2:?}; shift ;;
	--pin) ends=(taskset -c 0) ;;
	--json) json=${2:?}; shift ;;
	--png) png=${2:?}; shift ;;
	-h|--help) sed -n '2,33p' "$0"; exit 0 ;;
	*) say "many.sh: unknown option '$1'"; usage ;;
	esac
	shift
done
for v in "$runs" "$secs" "$nclients" "$streams" ${limit:+"$limit"}; do
	case "$v" in '' | *[!0-9]* | 0) say "many.sh: '$v' is not a positive number"; usage ;; esac
done
[ "$streams" -le 128 ] || { say "many.sh: iperf3 takes at most 128 streams a client (-P)"; exit 2; }
for s in ${settings//,/ }; do
	case "$s" in fwd|ips) ;; *) say "many.sh: a setting is fwd or ips, not '$s'"; exit 2 ;; esac
done
limit=${limit:-$((secs + 90))}
total=$((nclients * streams))
dst=198.18.1.2

m_init fcmany
json=${json:-$OUT/many.json} png=${png:-$OUT/many.png}
rows=$m_tmp/rows.jsonl
m_up || exit 1
# iperf3 connects a client's 128 streams one after another, and the streams
# of the clients already sending load the lab's wire until frames are lost
# at the coprocessor's ingress (its rings overflow): a SYN lost
# there holds up every stream after it, 1, 2, 4, 8 s... as the kernel backs
# off.  Linear SYN timeouts (1 s each, as the first four are anyway) keep a
# lost SYN at 1 s; more retries keep a stream from giving up ("unable to
# connect stream: Connection timed out" after about 2 minutes).
ex client sysctl -qw net.ipv4.tcp_syn_linear_timeouts=12 net.ipv4.tcp_syn_retries=14 ||
	say "many.sh: no linear SYN timeouts here (Linux 6.7 or later): lost SYNs cost more"

# waits (at most 30 s) until the last run's connections have left the
# fast path: a run starts with an empty table
drained() {
	local n
	for _ in $(seq 60); do
		n=$(fctl --json status | sed -n 's/.*"connections": \([0-9]*\).*/\1/p')
		[ "${n:-1}" -eq 0 ] && break
		sleep 0.5
	done
	echo "${n:-?}"
}

# frames lost at the coprocessor's ingress so far, every port: its wire
# figures (docs/counters.md, "The wire's own"), the kernel's drops included
wire_lost() {
	fctl --json counters --all | python3 "$measure" wire-lost
}

bad=0
run_one() { # setting run
	local s=$1 k=$2 rec=$m_tmp/many-$1-$2.jsonl p c pids=() off0 off1 left took lost0 lost1
	local streams_done mbps failed errors host_frames flowcutd_cpu npu_cpu softirq_cpu busy_cpu conns_max load far_mbps
	left=$(drained)
	for ((c = 0; c < nclients; c++)); do
		p=$((5201 + c))
		ex server "${ends[@]}" iperf3 -s -D -1 -p "$p" -I "$m_tmp/srv-$p.pid" >/dev/null 2>&1 ||
			{ say "many.sh: iperf3 server on $p did not start"; return 1; }
	done
	sleep 0.5
	off0=$(fcd_stat offloaded) lost0=$(wire_lost)
	m_t0 0.3
	m_record_start "$rec" $((limit + 5))
	m_at 0
	for ((c = 0; c < nclients; c++)); do
		"$lab" exec "$L" client timeout "$limit" "${ends[@]}" iperf3 -c "$dst" -p $((5201 + c)) -P "$streams" \
			-t "$secs" --json >"$m_tmp/cli-$s-$k-$c.json" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}" 2>/dev/null
	took=$(m_elapsed)
	sleep 1.1	# flowcutd's stats, once a second
	off1=$(fcd_stat offloaded) lost1=$(wire_lost)
	m_record_stop
	# a server whose client never came is still waiting: end it by its pid
	for ((c = 0; c < nclients; c++)); do
		p=$((5201 + c))
		[ -f "$m_tmp/srv-$p.pid" ] && kill "$(cat "$m_tmp/srv-$p.pid")" 2>/dev/null
		rm -f "$m_tmp/srv-$p.pid"
	done
	eval "$(python3 "$measure" clients "$m_tmp/cli-$s-$k-"*.json | sed 's/^streams=/streams_done=/')"
	m_window "$rec" 0 "${took%.*}"	# far_mbps: the far end's mean over the run
	[ "$streams_done" -eq "$total" ] || bad=1
	[ -n "$errors" ] && say "many.sh: $s run $k: $errors"
	python3 "$measure" row "$rows" flows="$(label "$s")" run="$k" delivered_mbps="$mbps" far_mbps="$far_mbps" \
		host_cpu="$flowcutd_cpu" softirq_cpu="$softirq_cpu" npu_cpu="$npu_cpu" busy_cpu="$busy_cpu" \
		streams="$streams_done" streams_total="$total" clients_failed="$failed" \
		offloaded=$((off1 - off0)) wire_lost=$((lost1 - lost0)) conns_max="$conns_max" host_frames="$host_frames" \
		took_s="$took" conns_before="$left" load="$load" errors="$errors" t0="$t0"
	echo "many.sh: $(label "$s"), run $k: $mbps Mbit/s, $streams_done of $total streams," \
	     "$((off1 - off0)) offloaded, $((lost1 - lost0)) frames lost at the coprocessor's ingress," \
	     "flowcutd $flowcutd_cpu %, $took s" >&2
}
label() { case "$1" in fwd) echo "FWD, the switch off" ;; ips) echo "IPS, the switch on" ;; esac; }

panels=() series=()
m_idle_floor 5
echo "many.sh: $nclients clients x $streams TCP streams, $secs s, $runs runs per setting ($settings);" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg); with no traffic, flowcutd $idle_fcd %," \
     "flowcut-npu $idle_npu % of the machine" >&2
for s in ${settings//,/ }; do
	hw=off
	[ "$s" = ips ] && hw=on
	m_setting cut_in_hardware "$hw" || exit 1
	first='' marks=''
	for ((k = 1; k <= runs; k++)); do
		run_one "$s" "$k" || { say "many.sh: $s run $k failed"; exit 1; }
		first=${first:-$t0}
		marks+="$(awk -v a="$t0" -v f="$first" 'BEGIN { printf "%.1f", a - f }'):run $k,"
		python3 "$measure" series "$m_tmp/many-$s-$k.jsonl" --t0 "$first" >>"$m_tmp/many-$s.dat"
		series+=("$s$k=$m_tmp/many-$s-$k.jsonl")
		echo >>"$m_tmp/many-$s.dat"	# a gap between runs
	done
	panels+=("$(label "$s"): $runs runs of $nclients x $streams streams@$m_tmp/many-$s.dat@${marks%,}")
done
m_restore

summ=$m_tmp/summary.jsonl
python3 "$measure" summary "$rows" "$summ"
echo
python3 "$measure" table "$rows" --lines \
	"flows=flows|run=run|delivered_mbps=delivered, Mbit/s|far_mbps=far end, mean|host_cpu=its CPU: flowcutd, %|softirq_cpu=softirq, %|npu_cpu=flowcut-npu, %|streams=streams that finished|offloaded=offloaded|wire_lost=lost at ingress|conns_max=most in the table|took_s=took, s"
echo
python3 "$measure" table "$summ" --lines \
	"flows=flows|delivered_mbps=delivered, median|delivered_range=range, Mbit/s|spread_mbps=spread|host_cpu=its CPU: flowcutd, median %|host_cpu_range=range|streams=streams that finished|all_finished=runs with all|offloaded=offloaded|wire_lost=lost at ingress|same_within_spread=the same within the spread"
echo
echo "the seed (XGS 3300): FWD 8,011 Mbit/s, 14.4 %, 640 of 1,024; IPS 7,371 Mbit/s, 14.9 %, 1,024 of 1,024" \
     "(over the day: 7,692 to 8,012 with FWD, 7,371 to 8,086 with IPS)"
python3 "$measure" json "$json" --rows "$rows" --extra summary="$summ" --meta script=lab/many.sh \
	date="$(date +%F)" machine="$(m_machine)" clients="$nclients" streams_per_client="$streams" \
	secs="$secs" runs="$runs" flowcutd_idle_cpu="$idle_fcd" npu_idle_cpu="$idle_npu" \
	--series "${series[@]}"
python3 "$measure" plot "$png" "lab/many.sh: $nclients iperf3 clients x $streams TCP streams, $secs s a run" "${panels[@]}"
echo "json: $json"
echo "plot: $png"
exit "$bad"
