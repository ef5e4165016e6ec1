#!/usr/bin/env bash
# What the operator's page costs the host (issue 18): during the lab's cut
# flood (a 400 Mbit/s UDP stream offloaded, its server cut in hardware, as
# `make demo`), the CPU (utime+stime from /proc/PID/stat) of flowcut-web
# and of flowcutd over three windows of SECS (30) seconds each:
#   scraped      /metrics fetched once a second (curl in the host's namespace,
#                as Prometheus would; the scraper's own CPU is not the host's
#                and is not counted)
#   not scraped  flowcut-web running, its sampler alone (two requests a second)
#   no page      flowcut-web stopped: flowcutd alone
# and prints each as % of one core, the scrape's cost (scraped - not scraped)
# and the page's whole cost (scraped - no page).  A measurement, not a test:
#   lab/web_cost.sh [SECS]
# Root only; a lab of its own (wc<pid>), torn down on any exit.  BUILD names
# the build folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/../tests/lab/lib.sh"	# ex counter wait_for udp_stream stream_offloaded lab_up lab_down
secs=${1:-30}
L=wc$$
run=/run/flowcut-lab/$L
hz=$(getconf CLK_TCK)
trap 'lab_down' EXIT

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }	# utime + stime of a pid
# the CPU of flowcut-web (pid $1, or 0: none) and flowcutd over secs, as
# "WEB_PCT FLOWCUTD_PCT", % of one core
window() { # web-pid [scrape]
	local w0=0 w1=0 f0 f1 fd scr=
	fd=$(cat "$run/flowcutd.pid")
	[ "$1" != 0 ] && w0=$(ticks "$1")
	f0=$(ticks "$fd")
	if [ -n "${2:-}" ]; then
		ex host bash -c "while :; do curl -s -o /dev/null -u reader:$(cat "$run-web/read.secret") \
			http://127.0.0.1:9842/metrics; sleep 1; done" &
		scr=$!
	fi
	sleep "$secs"
	[ "$1" != 0 ] && w1=$(ticks "$1")
	f1=$(ticks "$fd")
	[ -n "$scr" ] && { kill "$scr"; wait "$scr" 2>/dev/null; }
	awk -v w=$((w1 - w0)) -v f=$((f1 - f0)) -v hz="$hz" -v s="$secs" \
		'BEGIN { printf "%.3f %.3f\n", w / hz / s * 100, f / hz / s * 100 }'
}

lab_up >/dev/null || { echo "web_cost: the lab did not start" >&2; exit 1; }
udp_stream 198.18.1.2 400M $((secs * 3 + 30))
wait_for 60 stream_offloaded udp || { echo "web_cost: the flood was never offloaded" >&2; exit 1; }
ex host "$ctl" cut 198.18.1.2 --for $((secs * 3 + 60)) >/dev/null || exit 1
sleep 2
d0=$(counter FROM_WIRE_DROP_IPS_VERDICT) t0=$(date +%s%N)
web=$(cat "$run/web.pid")
read -r sw sf < <(window "$web" scrape)
read -r nw nf < <(window "$web")
"$lab" stop-web "$L"
read -r _ cf < <(window 0)
d1=$(counter FROM_WIRE_DROP_IPS_VERDICT) t1=$(date +%s%N)
echo "# the flood: $(( (d1 - d0) * 1000000000 / (t1 - t0) )) frames a second dropped on the coprocessor (DROP_IPS_VERDICT) over the run"
echo "# CPU over $secs s each, % of one core (utime+stime, /proc, $hz ticks a second)"
printf '%-38s %12s %10s %10s\n' window flowcut-web flowcutd both
printf '%-38s %12s %10s %10s\n' "scraped once a second" "$sw" "$sf" "$(awk -v a="$sw" -v b="$sf" 'BEGIN { printf "%.3f", a + b }')"
printf '%-38s %12s %10s %10s\n' "not scraped (its sampler alone)" "$nw" "$nf" "$(awk -v a="$nw" -v b="$nf" 'BEGIN { printf "%.3f", a + b }')"
printf '%-38s %12s %10s %10s\n' "no flowcut-web" "-" "$cf" "$cf"
awk -v sw="$sw" -v sf="$sf" -v nw="$nw" -v nf="$nf" -v cf="$cf" 'BEGIN {
	printf "the scrape costs %.3f %% of a core (scraped - not scraped); the page in all %.3f %% (scraped - no flowcut-web)\n",
		sw + sf - nw - nf, sw + sf - cf }'
