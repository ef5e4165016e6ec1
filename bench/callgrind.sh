#!/usr/bin/env bash
# Instructions per frame in fp_process_burst(), counted by callgrind: the
# figure that does not move with machine noise.  Usage:
#   bench/callgrind.sh [BUILD]     (default build/; needs valgrind)
set -euo pipefail
build=${1:-build}
frames=${FRAMES:-200000}
conns=${CONNS:-1000000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-9s %9s %9s %14s %10s\n' run conns frames instructions Ir/frame
for run in hit-1k hit-big miss-big; do
	c=$conns; [ "$run" = hit-1k ] && c=1000
	valgrind --tool=callgrind --toggle-collect=fp_process_burst \
		--callgrind-out-file="$out/$run" "$build/flowcut-bench" fastpath \
		--only "$run" --conns "$c" --frames "$frames" --warmup 0 >"$out/$run.log" 2>&1 || {
		cat "$out/$run.log" >&2; exit 1; }
	ir=$(awk '/^summary:/ { print $2 }' "$out/$run")
	printf '%-9s %9s %9s %14s %10.1f\n' "$run" "$c" "$frames" "$ir" \
		"$(echo "$ir / $frames" | bc -l)"
done
