#!/usr/bin/env bash
# Instructions per frame in fp_process_burst() and in the floor beside it
# (flowcut-bench's floor_burst(): fp_parse_frame + rte_hash_lookup_bulk_data;
# gcc may name it floor_burst.constprop.0, hence the pattern), counted by
# callgrind: the figures that do not move with machine noise.
# Usage:
#   bench/callgrind.sh [BUILD]     (default build/; needs valgrind)
# FRAMES (200000), CONNS (1000000); KEEP=DIR keeps the callgrind.out files
# there for callgrind_annotate.
set -euo pipefail
build=${1:-build}
frames=${FRAMES:-200000}
conns=${CONNS:-1000000}
out=${KEEP:-$(mktemp -d)}
mkdir -p "$out"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$out"' EXIT
printf '%-9s %-9s %9s %9s %14s %10s\n' run pass conns frames instructions Ir/frame
for run in hit-1k hit-big miss-big; do
	c=$conns; [ "$run" = hit-1k ] && c=1000
	for pass in floor fastpath; do
		fn=floor_burst; [ "$pass" = fastpath ] && fn=fp_process_burst
		f="$out/$run-$pass"
		valgrind --tool=callgrind --toggle-collect="$fn*" --callgrind-out-file="$f" \
			"$build/flowcut-bench" fastpath --only "$run" --pass "$pass" --reps 1 \
			--conns "$c" --frames "$frames" --warmup 0 >"$f.log" 2>&1 || {
			cat "$f.log" >&2; exit 1; }
		ir=$(awk '/^summary:/ { print $2 }' "$f")
		printf '%-9s %-9s %9s %9s %14s %10.1f\n' "$run" "$pass" "$c" "$frames" "$ir" \
			"$(echo "$ir / $frames" | bc -l)"
	done
done
