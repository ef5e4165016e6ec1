#!/usr/bin/env bash
# The verdict alone (the seed's lab-verdict.sh), in the lab: a stream in the
# fast path, its connection's verdict set to DROP at second 10 and back to
# CUT_THRU at second 16 with `flowcutctl conn verdict`, the host's state
# left alone - for each row of the seed's truth table: the connection's
# microflows FWD or IPS (made so by "Cut in hardware" off or on) x the fast
# path's IPS switch off or on (`flowcutctl cfg IPS=...` after the setting).
# Per second: what arrives at the far end, the frames the host takes in,
# the frames dropped on the coprocessor; per row, the counters that name
# what the fast path did while the verdict was DROP and after it.
#
#   lab/verdict.sh [--udp | --tcp] [--rate R] [-4 | -6] [--rows LIST]
#                  [--drop-at S] [--drop-for S] [--length S]
#                  [--json FILE] [--png FILE]
#
#   --udp, --tcp    the stream (default UDP)
#   --rate R        iperf3 -b (default 400M for UDP, none for TCP)
#   -4, -6          the family (default 4)
#   --rows LIST     microflows:switch, comma-separated (default the seed's
#                   four: fwd:off,fwd:on,ips:off,ips:on), in one lab, in order
#   --drop-at S     the verdict DROP at second S (default 10)
#   --drop-for S    CUT_THRU again S seconds later (default 6)
#   --length S      the stream's length (default drop-at + 2 x drop-for + 1)
#   --json FILE     rows and per-second figures ($OUT/verdict.json);
#   --png FILE      the plot ($OUT/verdict.png)
#
# Exit: 0 when every row did what coprocessor-model.md's truth table says
# (FWD, or IPS with the switch off: the stream goes on, counted TO_WIRE or
# TO_WIRE_IPS_DISABLED; IPS with the switch on: nothing arrives, counted
# DROP_IPS_VERDICT, and it comes back counted TO_WIRE_VERDICT_CUT_THRU),
# 1 when a row did not, 2 on bad usage or no lab.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lab/measure.sh
. "$here/measure.sh"

proto=udp rate='' fam=4 rowlist=fwd:off,fwd:on,ips:off,ips:on at=10 dfor=6 length='' json='' png=''
usage() { sed -n '12,14p' "$0" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--udp) proto=udp ;;
	--tcp) proto=tcp ;;
	--rate) rate=${2:?}; shift ;;
	-4) fam=4 ;;
	-6) fam=6 ;;
	--rows) rowlist=${2:?}; shift ;;
	--drop-at) at=${2:?}; shift ;;
	--drop-for) dfor=${2:?}; shift ;;
	--length) length=${2:?}; shift ;;
	--json) json=${2:?}; shift ;;
	--png) png=${2:?}; shift ;;
	-h|--help) sed -n '2,32p' "$0"; exit 0 ;;
	*) say "verdict.sh: unknown option '$1'"; usage ;;
	esac
	shift
done
for v in "$at" "$dfor" ${length:+"$length"}; do
	case "$v" in '' | *[!0-9]*) say "verdict.sh: '$v' is not a number of seconds"; usage ;; esac
done
[ "$at" -ge 4 ] || { say "verdict.sh: --drop-at must be 4 or more (a UDP flow is offloaded after 2 s)"; exit 2; }
[ "$dfor" -ge 2 ] || { say "verdict.sh: --drop-for must be 2 or more"; exit 2; }
back=$((at + dfor))
length=${length:-$((back + dfor + 1))}
[ "$length" -gt "$back" ] || { say "verdict.sh: the stream must outlast the DROP"; exit 2; }
for r in ${rowlist//,/ }; do
	case "$r" in fwd:on|fwd:off|ips:on|ips:off) ;; *) say "verdict.sh: a row is fwd|ips:on|off, not '$r'"; exit 2 ;; esac
done
[ "$proto" = udp ] && rate=${rate:-400M}
dst=198.18.1.2
[ "$fam" = 6 ] && dst=2001:2:0:1::2
port=5202
udp_args=()
[ "$proto" = udp ] && udp_args=(-u -l 1000)
what="${proto^^}${rate:+ $(sed 's/M$/ Mbit\/s/; s/G$/ Gbit\/s/' <<<"$rate")}, IPv$fam"

m_init fcverdict
json=${json:-$OUT/verdict.json} png=${png:-$OUT/verdict.png}
rows=$m_tmp/rows.jsonl
m_up || exit 1

# the stream's connection: "ID ACTION", the one alive with the most frames
stream_conn() {	# alive now: an earlier run may have left one, quiet
	fctl --json conns | python3 "$measure" conns --proto "$proto" --port "$port" --alive --print best-action || true
}
ips_switch() { fctl --json cfg | python3 -c 'import json,sys; print("on" if json.load(sys.stdin)["IPS"] else "off")'; }
# the counter of a frame's outcome that moved most in a window: "NAME N"
outcome() { # file from to
	python3 "$measure" counters "$@" | awk -F= '$1 ~ /^FROM_WIRE_/ && $1 != "FROM_WIRE_RX" && $2 > n { n = $2; c = $1 }
		END { if (c) print substr(c, 11), n; else print "none 0" }'
}

bad=0
run_row() { # index microflows switch
	local i=$1 mf=$2 sw=$3 rec=$m_tmp/verdict-$1.jsonl id act hw=off
	local before_mbps during_mbps after_mbps during_far during_host during_what after_what ok far_frames far_mbps host_frames
	[ "$mf" = ips ] && hw=on
	m_setting cut_in_hardware "$hw" || return 1
	fctl cfg "IPS=$sw" >/dev/null || { say "verdict.sh: flowcutctl cfg IPS=$sw failed"; return 1; }
	[ "$(ips_switch)" = "$sw" ] || { say "verdict.sh: the IPS switch is not $sw"; return 1; }
	ex server iperf3 -s -D -1 -p "$port" -I "$m_tmp/server.pid" >/dev/null 2>&1 ||
		{ say "verdict.sh: the iperf3 server did not start"; return 1; }
	sleep 0.3
	m_t0 0.5
	m_record_start "$rec" $((length + 2))
	m_at 0
	"$lab" exec "$L" client timeout $((length + 5)) iperf3 -c "$dst" -p "$port" -t "$length" \
		${rate:+-b "$rate"} "${udp_args[@]}" >"$m_tmp/iperf-$i.out" 2>&1 &
	local client=$!
	m_at $((at - 1))
	read -r id act < <(stream_conn)
	if [ -z "${id:-}" ]; then
		say "verdict.sh: row $mf:$sw: the stream is not in the fast path at second $((at - 1))"
		kill "$client" 2>/dev/null; wait "$client" 2>/dev/null; m_record_stop
		return 1
	fi
	[ "$act" = "${mf^^}" ] || say "verdict.sh: row $mf:$sw: the connection's action is $act"
	m_at "$at"
	fctl conn verdict "$id" drop >/dev/null || say "verdict.sh: conn verdict $id drop failed"
	m_at "$back"
	fctl conn verdict "$id" cut-thru >/dev/null || say "verdict.sh: conn verdict $id cut-thru failed"
	m_at "$length"
	[ "$(ips_switch)" = "$sw" ] || { say "verdict.sh: row $mf:$sw: the IPS switch changed under the run"; bad=1; }
	sleep 1
	kill "$client" 2>/dev/null
	wait "$client" 2>/dev/null
	# a server whose client did not end well would hold the port
	kill "$(cat "$m_tmp/server.pid" 2>/dev/null)" 2>/dev/null
	rm -f "$m_tmp/server.pid"
	m_record_stop

	m_window "$rec" $((at - 4)) "$at"
	before_mbps=$far_mbps
	m_window "$rec" $((at + 1)) "$back"
	during_mbps=$far_mbps during_far=$far_frames during_host=$host_frames
	during_what=$(outcome "$rec" $((at + 1)) "$back")
	m_window "$rec" $((back + 1)) "$length"
	after_mbps=$far_mbps
	after_what=$(outcome "$rec" $((back + 1)) "$length")
	# the model's row (coprocessor-model.md, the seed's truth table)
	ok=no
	if [ "$mf:$sw" = ips:on ]; then
		[ "$during_far" -le 10 ] && [ "${during_what%% *}" = DROP_IPS_VERDICT ] &&
			[ "${after_what%% *}" = TO_WIRE_VERDICT_CUT_THRU ] && ok=yes
	else
		want=TO_WIRE
		[ "$mf" = ips ] && want=TO_WIRE_IPS_DISABLED
		awk -v d="$during_mbps" -v b="$before_mbps" 'BEGIN { exit !(d > b / 2) }' &&
			[ "${during_what%% *}" = "$want" ] && ok=yes
	fi
	[ "$ok" = yes ] || bad=1
	python3 "$measure" series "$rec" >"$m_tmp/verdict-$i.dat"
	python3 "$measure" row "$rows" microflows="${mf^^}" switch="$sw" stream="$what" \
		before_mbps="$before_mbps" during_mbps="$during_mbps" after_mbps="$after_mbps" \
		during_far_frames="$during_far" during_host_frames="$during_host" \
		during_counted="$(num "${during_what#* }") ${during_what%% *}" \
		after_counted="$(num "${after_what#* }") ${after_what%% *}" as_model="$ok" conn_id="$id"
	panels+=("${mf^^} microflows, the IPS switch $sw: $during_mbps Mbit/s with the verdict DROP (grey), counted ${during_what%% *}@$m_tmp/verdict-$i.dat@$at:verdict DROP,$back:verdict CUT_THRU@$((at + 1)):$back")
}

panels=() series=()
i=0
sw0=$(ips_switch)
echo "verdict.sh: $what through the appliance; verdict DROP at second $at, CUT_THRU at $back;" \
     "rows $rowlist; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for r in ${rowlist//,/ }; do
	i=$((i + 1))
	run_row "$i" "${r%%:*}" "${r#*:}" || { say "verdict.sh: row $r failed"; exit 1; }
	series+=("row$i=$m_tmp/verdict-$i.jsonl")
done
m_restore
sleep 1.1
fctl cfg "IPS=$sw0" >/dev/null

echo
python3 "$measure" table "$rows" \
	"microflows=the connection's microflows|switch=the fast path's IPS switch|before_mbps=at the far end before, Mbit/s|during_mbps=with the verdict DROP, Mbit/s|after_mbps=CUT_THRU again, Mbit/s|during_counted=counted with DROP|after_counted=counted with CUT_THRU again|during_host_frames=frames to the host with DROP|as_model=as the truth table says"
echo
echo "the seed: FWD, either switch: the stream went on (5.2 Gbit/s); IPS, switch off: sent on," \
     "FROM_WIRE_TO_WIRE_IPS_DISABLED; IPS, switch on: dropped, FROM_WIRE_DROP_IPS_VERDICT, forwarded again"
python3 "$measure" json "$json" --rows "$rows" --meta script=lab/verdict.sh date="$(date +%F)" \
	machine="$(m_machine)" drop_at="$at" cut_thru_at="$back" length="$length" \
	--series "${series[@]}"
python3 "$measure" plot "$png" "lab/verdict.sh: $what, the verdict DROP at second $at, CUT_THRU at $back" "${panels[@]}"
echo "json: $json"
echo "plot: $png"
exit "$bad"
