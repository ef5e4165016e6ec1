#!/usr/bin/env bash
# The lab's measurement scripts (lab/cut.sh, lab/verdict.sh, lab/many.sh, lab/peer.sh),
# each run short: it must end 0 (its own checks held), print its table,
# write its JSON with a row per run, and draw a PNG.  The full-length runs
# are measurements (docs/measurements.md), not tests.  Each script builds
# its own lab and tears it down; each run here is bounded by `timeout`.
#
# Output: one "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line
# per script (tests/run.sh counts them).  Root only (namespaces).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac

tests=(
	"lab/cut.sh: a UDP flood cut, Cut in hardware on and off (short)|150|cut|2|frames to the host, s 6-9|lab/cut.sh --cut-at 4 --window 3 --after 12 --idle-timeout 5 --hw on,off"
	"lab/verdict.sh: the seed's truth table in the lab, four rows (short)|180|verdict|4|as the truth table says|lab/verdict.sh --drop-at 4 --drop-for 2 --rate 100M"
	"lab/many.sh: 2 clients x 8 streams, FWD then IPS, one run each (short)|150|many|2|streams that finished|lab/many.sh --runs 1 --secs 3 --clients 2 --streams 8"
	"lab/peer.sh: the kernel beside flowcut on af_xdp, one run (short)|150|peer|2|flowcut / kernel|lab/peer.sh --runs 1 --secs 1 --wire af_xdp"
)

if [ "$(id -u)" -ne 0 ] || ! command -v gnuplot >/dev/null; then
	for t in "${tests[@]}"; do echo "ok - ${t%%|*} # SKIP needs root, network namespaces and gnuplot"; done
	exit 0
fi

out=$(mktemp -d /tmp/test_scripts.XXXX)
trap 'rm -rf "$out"' EXIT

# the script's run: exit 0, its table, a JSON of N rows, a PNG
check() { # name secs tag rows table-line command
	local name=$1 secs=$2 tag=$3 nrows=$4 line=$5 cmd=$6 log=$out/$3.log
	# shellcheck disable=SC2086
	if ! (cd "$top" && timeout "$secs" $cmd --json "$out/$tag.json" --png "$out/$tag.png") >"$log" 2>&1; then
		echo "# $cmd: exit $?"; return 1
	fi
	grep -qF "$line" "$log" || { echo "# no table (no line '$line')"; return 1; }
	[ "$(head -c 8 "$out/$tag.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		{ echo "# $out/$tag.png is not a PNG"; return 1; }
	python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
sys.exit(0 if len(d["rows"]) == int(sys.argv[2]) and d["series"] else 1)' "$out/$tag.json" "$nrows" ||
		{ echo "# $out/$tag.json: not $nrows rows with their series"; return 1; }
}

for t in "${tests[@]}"; do
	IFS='|' read -r name secs tag nrows line cmd <<<"$t"
	case "$name" in *${ONLY:-}*) ;; *) continue ;; esac
	if check "$name" "$secs" "$tag" "$nrows" "$line" "$cmd"; then
		echo "ok - $name"
		sed -n '/^$/,$p' "$out/$tag.log" | sed 's/^/# /'
	else
		echo "not ok - $name"
		tail -30 "$out/$tag.log" | sed 's/^/#   /'
	fi
done
