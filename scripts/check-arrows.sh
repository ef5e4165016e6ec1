#!/usr/bin/env bash
# Checks that every #include follows an arrow of the house: the table of
# USES_ lines in the Makefile (read through `make arrows`).
#
#   scripts/check-arrows.sh [ROOT]     check the tree at ROOT (default: here)
#   scripts/check-arrows.sh --self-test
#                                      show on a copy of the tree that a
#                                      crossing include is refused, by this
#                                      check and by the compiler
#
# A folder's .c and .h files may include, with quotes, headers of their own
# folder and of the folders on the folder's line; <flowcut/...> is everyone's;
# <rte_*.h> needs "dpdk" on the line.  Every folder with C sources must have a
# line, and the arrows must not go round.  Exit 0 when all hold, 1 with one
# line per broken arrow ("FILE:LINE: ..."), 2 for a usage error.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)

self_test() {
	local tmp rc=0 out
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' RETURN
	(cd "$top" && find . -name '*.[ch]' -not -path './build*' -not -path './.git/*' \
		-exec cp --parents {} "$tmp" \; && cp Makefile "$tmp/" && cp -r scripts "$tmp/") || return 1
	if ! out=$("$tmp/scripts/check-arrows.sh" "$tmp" 2>&1); then
		echo "self-test: the unchanged tree is refused:"; echo "$out"; return 1
	fi
	# driver/ including the fast path: refused, naming the file and the arrow
	sed -i '0,/#include "fd_tap.h"/s//&\n#include "fp.h"/' "$tmp/driver/port/fd_tap.c"
	out=$("$tmp/scripts/check-arrows.sh" "$tmp" 2>&1)
	if [ $? -ne 1 ] || ! grep -q '^driver/port/fd_tap.c:4: .*fastpath/fp.h.*driver/port -> fastpath' <<<"$out"; then
		echo "self-test: driver/port/fd_tap.c including fp.h not refused as driver -> fastpath:"; echo "$out"; rc=1
	fi
	# and the compiler refuses it too: fp.h is not on driver/'s include path
	out=$(make -s -C "$tmp" BUILD="$tmp/build" "$tmp/build/obj/release/driver/port/fd_tap.o" 2>&1)
	if [ $? -eq 0 ] || ! grep -q 'fp.h: No such file' <<<"$out"; then
		echo "self-test: the compiler did not refuse fp.h in driver/port/fd_tap.c:"; echo "$out"; rc=1
	fi
	# a room of the driver including one above it (ct/ -> offload/): refused
	# by the check and by the compiler, as between top-level folders
	sed -i '0,/#include "fd_ct.h"/s//&\n#include "fd_offload.h"/' "$tmp/driver/ct/fd_ct.c"
	out=$("$tmp/scripts/check-arrows.sh" "$tmp" 2>&1)
	if [ $? -ne 1 ] || ! grep -q '^driver/ct/fd_ct.c:[0-9]*: .*driver/offload/fd_offload.h.*driver/ct -> driver/offload' <<<"$out"; then
		echo "self-test: driver/ct/fd_ct.c including fd_offload.h not refused as driver/ct -> driver/offload:"; echo "$out"; rc=1
	fi
	out=$(make -s -C "$tmp" BUILD="$tmp/build" "$tmp/build/obj/release/driver/ct/fd_ct.o" 2>&1)
	if [ $? -eq 0 ] || ! grep -q 'fd_offload.h: No such file' <<<"$out"; then
		echo "self-test: the compiler did not refuse fd_offload.h in driver/ct/fd_ct.c:"; echo "$out"; rc=1
	fi
	# link/ including DPDK: refused
	sed -i '0,/#include "lk.h"/s//&\n#include <rte_mbuf.h>/' "$tmp/link/lk.c"
	out=$("$tmp/scripts/check-arrows.sh" "$tmp" 2>&1)
	if [ $? -ne 1 ] || ! grep -q '^link/lk.c:4: .*rte_mbuf.h.*link -> dpdk' <<<"$out"; then
		echo "self-test: link/lk.c including rte_mbuf.h not refused as link -> dpdk:"; echo "$out"; rc=1
	fi
	[ $rc -eq 0 ] && echo "self-test: crossing includes refused (driver/port -> fastpath, driver/ct -> driver/offload, link -> dpdk)"
	return $rc
}

case "${1:-}" in
--self-test) self_test; exit ;;
-h|--help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
-*) echo "check-arrows: unknown option $1" >&2; exit 2 ;;
esac
root=${1:-$top}
cd "$root" || exit 2

declare -A uses
table=$(make -s --no-print-directory arrows) || { echo "check-arrows: 'make arrows' failed in $root" >&2; exit 2; }
while IFS= read -r line; do
	set -- ${line#*:}
	uses[${line%%:*}]="$*"
done <<<"$table"

bad=0
broken() { echo "$1"; bad=1; }

# every folder with C sources has a line
while IFS= read -r d; do
	[ -n "${uses[$d]+x}" ] || [ "$d" = include/flowcut ] ||
		broken "$d/: C sources, but no USES_$d line in the Makefile's table"
done < <(find . -name '*.[ch]' -not -path './build*' -not -path './.git/*' -printf '%h\n' | sed 's|^\./||' | sort -u)

# the header's folder: its own first, as the compiler looks, then any table folder
where() { # folder header
	local f
	[ -e "$1/$2" ] && { echo "$1"; return; }
	for f in "${!uses[@]}"; do [ -e "$f/$2" ] && { echo "$f"; return; }; done
}

for folder in "${!uses[@]}"; do
	for file in "$folder"/*.[ch]; do
		[ -e "$file" ] || continue
		while IFS=: read -r n inc; do
			case "$inc" in
			*'"'*)
				h=${inc#*\"}; h=${h%%\"*}
				to=$(where "$folder" "$h")
				if [ -z "$to" ]; then
					broken "$file:$n: includes \"$h\", found in no folder of the table"
				elif [ "$to" != "$folder" ] && [[ " ${uses[$folder]} " != *" $to "* ]]; then
					broken "$file:$n: includes $to/$h, but $folder -> $to is not an arrow (USES_$folder := ${uses[$folder]})"
				fi ;;
			*'<rte_'*)
				h=${inc#*<}; h=${h%%>*}
				[[ " ${uses[$folder]} " == *" dpdk "* ]] ||
					broken "$file:$n: includes <$h>, but $folder -> dpdk is not an arrow (USES_$folder := ${uses[$folder]})"
				;;
			esac
		done < <(grep -n '^[[:space:]]*#[[:space:]]*include' "$file")
	done
done

# the arrows go one way: no folder reaches itself
reach() { # folder path...
	local to
	for to in ${uses[$1]}; do
		[ "$to" = dpdk ] && continue
		if [ "$to" = "${2:-$1}" ]; then
			broken "Makefile: the arrows go round: $(printf '%s -> ' "${@:2}" "$1")$to"; continue
		fi
		[[ " ${*} " == *" $to "* ]] && continue	# a round met on the way, told from its own start
		[ -n "${uses[$to]+x}" ] || { broken "Makefile: USES_$1 names $to, which has no line"; continue; }
		reach "$to" "${@:2}" "$1"
	done
}
for folder in "${!uses[@]}"; do reach "$folder"; done

[ $bad -eq 0 ] && echo "arrows hold: ${#uses[@]} folders, every #include along the table"
exit $bad
