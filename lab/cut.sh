#!/usr/bin/env bash
# The seed's cut (its lab-cut-hw.sh), in the lab: one stream through the
# appliance, in the fast path - UDP at a fixed rate (the flood a listed
# sender keeps up) or TCP - and at second 10 its far end (the server) added
# to a set the host's firewall drops, the way an operator or a ban tool adds
# it (`nft add element`, in the host's namespace); flowcutd cuts as it cuts
# on any change of that set.  It reads, per second and over the seed's
# windows: what still arrives at the far end, the frames the host's front
# ports take in (fp0 + fp1), the host's CPU (flowcutd) beside the
# coprocessor's (flowcut-npu) and the machine's softirq work, and the frames
# dropped on the coprocessor; at second 22 whether the connection is still
# in the fast path; after the stream stops, that the connection leaves the
# fast path within 20 s of its last frame and the address is still blocked
# on the host.
#
#   lab/cut.sh [--udp | --tcp] [--rate R] [-4 | -6] [--hw on|off[,on|off]...]
#              [--cut-at S] [--window S] [--length S] [--after S]
#              [--idle-timeout S] [--json FILE] [--png FILE]
#
#   --udp, --tcp      the stream (default UDP)
#   --rate R          iperf3 -b (default 400M for UDP, none for TCP)
#   -4, -6            the family (default 4)
#   --hw LIST         "Cut in hardware" for each run, in one lab, in order
#                     (default on); set with flowcutctl settings set, put back
#   --cut-at S        the set change at second S (default 10)
#   --window S        the host is read from S+2 to S+2+window (default 10;
#                     the coprocessor's drops from S-2); the fast path is
#                     looked at at the window's end
#   --length S        the stream's length (default cut-at + window + 3)
#   --after S         the longest the connection may take to leave the fast
#                     path after its last frame (default 20): a UDP sender's
#                     last is the stream's end, a TCP sender's kernel
#                     retransmits a while longer
#   --idle-timeout S  the setting idle_timeout for the run (default 10, so a
#                     quiet connection leaves within --after; flowcut's own
#                     default is 60), put back afterwards
#   --json FILE       the rows and the per-second figures (default
#                     $OUT/cut.json); --png FILE the plot ($OUT/cut.png)
#
# Exit: 0 when every run's checks held (the stream was in the fast path
# before the cut, its connection left the fast path, the address still
# blocked), 1 when one did not, 2 on bad usage or no lab.
# Figures: docs/lab.md says what each includes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/measure.sh
. "$here/measure.sh"

# The set whose change cuts: the lab ruleset's own block sets, which the
# lab's flowcutd watches (settings: watched_set, written by lab.sh up), as an
# operator or a ban tool would add to them.  flowcutd's own cut sets
# ("inet flowcut cut4" / "cut6", `flowcutctl cut`) work the same way.
CUT_SET4="inet filter blocked4"
CUT_SET6="inet filter blocked6"

proto=udp rate='' fam=4 hws=on cut_at=10 window=10 length='' after=20 idle=10
json='' png=''
usage() { sed -n '15,17p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--udp) proto=udp ;;
	--tcp) proto=tcp ;;
	--rate) rate=${2:?}; shift ;;
	-4) fam=4 ;;
	-6) fam=6 ;;
	--hw) hws=${2:?}; shift ;;
	--cut-at) cut_at=${2:?}; shift ;;
	--window) window=${2:?}; shift ;;
	--length) length=${2:?}; shift ;;
	--after) after=${2:?}; shift ;;
	--idle-timeout) idle=${2:?}; shift ;;
	--json) json=${2:?}; shift ;;
	--png) png=${2:?}; shift ;;
	-h|--help) sed -n '2,41p' "$0"; exit 0 ;;
	*) say "cut.sh: unknown option '$1'"; usage ;;
	esac
	shift
done
for v in "$cut_at" "$window" "$after" "$idle" ${length:+"$length"}; do
	case "$v" in '' | *[!0-9]*) say "cut.sh: '$v' is not a number of seconds"; usage ;; esac
done
[ "$cut_at" -ge 3 ] || { say "cut.sh: --cut-at must be 3 or more (a UDP flow is offloaded after 2 s)"; exit 2; }
end=$((cut_at + 2 + window))	# the window's end: the seed's second 22
length=${length:-$((end + 1))}
[ "$length" -gt "$end" ] || { say "cut.sh: the stream (--length $length) must outlast the window (second $end)"; exit 2; }
for hw in ${hws//,/ }; do
	case "$hw" in on|off) ;; *) say "cut.sh: --hw takes on or off, not '$hw'"; exit 2 ;; esac
done
[ "$proto" = udp ] && rate=${rate:-400M}
if [ "$fam" = 6 ]; then dst=2001:2:0:1::2 set=$CUT_SET6; else dst=198.18.1.2 set=$CUT_SET4; fi
read -r -a nftset <<<"$set"	# family table set: three words for nft
udp_args=()
[ "$proto" = udp ] && udp_args=(-u -l 1000)
port=5202
what="${proto^^}${rate:+ $(sed 's/M$/ Mbit\/s/; s/G$/ Gbit\/s/' <<<"$rate")}, IPv$fam"

m_init fccut
json=${json:-$OUT/cut.json} png=${png:-$OUT/cut.png}
rows=$m_tmp/rows.jsonl
m_up || exit 1
m_setting idle_timeout "$idle" || exit 1

# the stream's connection in the fast path: its id, or nothing (the one
# alive with the most frames: TCP has its control connection beside it)
stream_conn() {	# alive now: an earlier run may have left one, quiet
	fctl --json conns | python3 "$measure" conns --proto "$proto" --port "$port" --alive --print best || true
}
# "dropping", "forwarding" or "" (not in the fast path): connection ID;
# fails when flowcutctl does
conn_state() {
	local out
	out=$(fctl --json conns) || return 1
	python3 "$measure" conns --id "$1" --print state <<<"$out" || true
}
# waits for connection ID to leave the fast path; says when, in seconds
# after the stream stopped (second --length) and after the last frame the
# fast path saw of it (read from its idle time)
gone_after() { # id after
	local t_stop=$length t_last='' st out now_
	while awk -v e="$(m_elapsed)" -v s="$t_stop" -v a="$2" 'BEGIN { exit !(e - s < 3 * a) }'; do
		out=$(fctl --json conns) || { sleep 0.5; continue; }
		st=$(python3 "$measure" conns --id "$1" --print idle <<<"$out")
		now_=$(m_elapsed)
		if [ -z "$st" ]; then
			awk -v n="$now_" -v s="$t_stop" -v l="${t_last:-$t_stop}" -v a="$2" 'BEGIN {
				g = n - l; printf "%s, %.0f / %.0f\n",
					g <= a ? "yes" : "LATE", n - s, g }'
			return
		fi
		t_last=$(awk -v n="$now_" -v i="$st" 'BEGIN { printf "%.2f", n - i }')
		sleep 0.5
	done
	echo "NO, still there $((3 * $2)) s after the stream"
}
# the far end still blocked on the host: in the set, and a ping dropped;
# then taken out of the set, and a ping answered (so the probe could see)
blocked() {
	local ping=(ping -c 2 -W 1 -i 0.3)
	[ "$fam" = 6 ] && ping=(ping -6 -c 2 -W 1 -i 0.3)
	ex host nft list set "${nftset[@]}" | grep -qF "$dst" || { echo "no, not in the set"; return; }
	if ex client "${ping[@]}" "$dst" >/dev/null 2>&1; then echo "no, a ping got through"; return; fi
	ex host nft delete element "${nftset[@]}" "{ $dst }" || { echo "yes (not taken out after)"; return; }
	for _ in 1 2 3; do ex client "${ping[@]}" "$dst" >/dev/null 2>&1 && { echo yes; return; }; done
	echo "yes (no ping answered once taken out either)"
	{ echo "cut.sh: no ping answered once $dst was taken out of $set; the fast path, conntrack, the host's neighbours:"
	  fctl conns; ex host conntrack -L 2>/dev/null; ex host ip neigh; } 2>&1 | sed 's/^/    /' >&2
}

bad=0
run_row() { # index on|off
	local i=$1 hw=$2 rec=$m_tmp/cut-$1.jsonl id='' c0 c1 still left='' blk cut_t drop_t
	local before_mbps host_frames flowcutd_cpu npu_cpu softirq_cpu busy_cpu far_frames far_mbps dropped load
	m_setting cut_in_hardware "$hw" || return 1
	say "  run $i: Cut in hardware $hw: the stream for $length s, the cut at second $cut_at..."
	read -r -a c0 < <(cuts)
	ex server iperf3 -s -D -1 -p "$port" -I "$m_tmp/server.pid" >/dev/null 2>&1 ||
		{ say "cut.sh: the iperf3 server did not start"; return 1; }
	sleep 0.3
	m_t0 0.5
	m_record_start "$rec" $((length + 4 * after))	# stopped once the checks are done
	m_at 0
	"$lab" exec "$L" client timeout $((length + 5)) iperf3 -c "$dst" -p "$port" -t "$length" \
		${rate:+-b "$rate"} "${udp_args[@]}" >"$m_tmp/iperf-$i.out" 2>&1 &
	local client=$!
	m_at $((cut_at - 1))
	id=$(stream_conn)
	[ -n "$id" ] || { say "cut.sh: the stream was not in the fast path at second $((cut_at - 1))"; bad=1; }
	m_at "$cut_at"
	cut_t=$(m_elapsed)
	ex host nft add element "${nftset[@]}" "{ $dst }" || { say "cut.sh: nft add element $set failed"; return 1; }
	m_at "$end"
	still=no
	if [ -n "$id" ]; then
		case "$(conn_state "$id" || echo failed)" in
		dropping) still="yes, dropping" ;;
		forwarding) still="yes, FORWARDING" ;;
		failed) still="unknown (flowcutctl failed)"; bad=1 ;;
		esac
	fi
	sleep 1.1	# flowcutd writes its stats once a second
	read -r -a c1 < <(cuts)
	m_at "$length"
	sleep 1
	kill "$client" 2>/dev/null	# its control connection was cut too: it waits for it
	wait "$client" 2>/dev/null
	# the server waits for its client's last word, which a cut never lets through
	kill "$(cat "$m_tmp/server.pid" 2>/dev/null)" 2>/dev/null
	rm -f "$m_tmp/server.pid"
	# the connection leaves the fast path once quiet for its idle timeout:
	# within --after seconds of its last frame (a UDP sender's last is the
	# stream's end; a TCP sender's kernel retransmits on, further apart each
	# time, until it gives up), looked at for at most 3 x --after
	left="-"
	if [ "$still" = no ]; then
		left="already gone at $end"
	elif [ -n "$id" ]; then
		left=$(gone_after "$id" "$after")
		case "$left" in yes*) ;; *) bad=1 ;; esac
	fi
	say "  run $i: the connection left the fast path: $left"
	blk=$(blocked)
	case "$blk" in yes*) ;; *) bad=1 ;; esac
	m_record_stop

	m_window "$rec" $((cut_at - 4)) "$cut_at"
	before_mbps=$far_mbps
	m_window "$rec" $((cut_at - 2)) "$end"
	drop_t=$dropped
	m_window "$rec" $((cut_at + 2)) "$end"
	python3 "$measure" series "$rec" >"$m_tmp/cut-$i.dat"
	python3 "$measure" row "$rows" stream="$what" hw="$hw" \
		the_cut="$(( c1[0] + c1[1] - c0[0] - c0[1] )) cut, $(( c1[0] - c0[0] )) dropped first" \
		dropped="$drop_t" host_frames="$host_frames" host_cpu="$flowcutd_cpu" \
		softirq_cpu="$softirq_cpu" npu_cpu="$npu_cpu" busy_cpu="$busy_cpu" load="$load" \
		before_mbps="$before_mbps" far_frames="$far_frames" still_at_end="$still" \
		left="$left" blocked="$blk" cut_at_s="$cut_t" conn_id="${id:--}"
	local mk="$cut_at:nft add element (the cut),$length:the stream stops"
	case "$left" in yes,*|LATE,*)
		local n=${left#*, }
		mk+=",$((length + ${n%% *})):left the fast path" ;;
	esac
	panels+=("$what, Cut in hardware $hw: $(num "$host_frames") frames to the host in s $((cut_at + 2))-$end (grey), $(num "$drop_t") dropped on the coprocessor in s $((cut_at - 2))-$end@$m_tmp/cut-$i.dat@$mk@$((cut_at + 2)):$end")
}

panels=() series=()
i=0
m_idle_floor 5
echo "cut.sh: $what through the appliance, the far end $dst added to $set at second $cut_at;" \
     "Cut in hardware: $hws; load average $(cut -d' ' -f1-3 /proc/loadavg);" \
     "with no traffic, flowcutd $idle_fcd %, flowcut-npu $idle_npu % of the machine" >&2
for hw in ${hws//,/ }; do
	i=$((i + 1))
	run_row "$i" "$hw" || { say "cut.sh: run $i ($hw) failed"; exit 1; }
	series+=("run$i=$m_tmp/cut-$i.jsonl")
done
m_restore

echo
python3 "$measure" table "$rows" \
	"stream=stream|hw=Cut in hardware|the_cut=the cut|dropped=dropped on the coprocessor, s $((cut_at - 2))-$end|host_frames=frames to the host, s $((cut_at + 2))-$end|host_cpu=its CPU: flowcutd, % of the machine|softirq_cpu=softirq, whole machine, %|npu_cpu=the coprocessor (flowcut-npu), %|before_mbps=at the far end before the cut, Mbit/s|far_frames=frames at the far end, s $((cut_at + 2))-$end|still_at_end=still in the fast path at $end|left=left the fast path, s after the stream / its last frame|blocked=the address still blocked on the host|load=load average"
echo
echo "the seed (XGS 3300, UDP 400 Mbit/s): on: 10 frames to the host, its CPUs 0.3 %, 690,389 dropped;" \
     "off: 610,533 frames, 2.4 %"
# the issue's targets, with the figures they are read from
python3 -c 'import json,sys
rows = [json.loads(x) for x in open(sys.argv[1])]
on = [r for r in rows if r["hw"] == "on"]
off = [r for r in rows if r["hw"] == "off"]
for r in on:
    print("target: Cut in hardware on, at most 10 frames to the host: %d, %s"
          % (r["host_frames"], "met" if r["host_frames"] <= 10 else "MISSED"))
if on and off:
    a, b = on[0]["host_cpu"], off[0]["host_cpu"]
    print("target: the host CPU on at most a tenth of off: %.2f %% against %.2f %%, %s"
          " (flowcutd with no traffic: %s %%)"
          % (a, b, "met" if a <= b / 10 else "MISSED", sys.argv[2]))' "$rows" "$idle_fcd"
python3 "$measure" json "$json" --rows "$rows" --meta script=lab/cut.sh date="$(date +%F)" \
	machine="$(m_machine)" set="$set" address="$dst" cut_at="$cut_at" window_end="$end" \
	length="$length" idle_timeout="$idle" flowcutd_idle_cpu="$idle_fcd" npu_idle_cpu="$idle_npu" \
	--series "${series[@]}"
python3 "$measure" plot "$png" "lab/cut.sh: $what, the far end added to $set at second $cut_at" "${panels[@]}"
echo "json: $json"
echo "plot: $png"
exit "$bad"
