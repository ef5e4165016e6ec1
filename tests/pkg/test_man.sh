#!/usr/bin/env bash
# The man pages of docs/man/: each renders with no warning (man --warnings),
# lexgrog reads its NAME line (what mandb and whatis read), it has the
# sections a page must have, and its OPTIONS are the program's: every long
# option of the program's getopt table is there, and no other (flowcut-web's
# once web/ is in the tree).  No root needed.
#
# Output: one "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line
# per test (tests/run.sh counts them).  MAN names the folder (default
# docs/man/).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
MAN=${MAN:-$top/docs/man}

. "$here/tap.sh"

# the program's sources, whose getopt tables name its options
sources() { # program
	case $1 in
	flowcut-npu) echo "$top/npu/npu_main.c" ;;
	flowcutd) echo "$top/driver/flowcutd.c" ;;
	flowcutctl) echo "$top/ctl/flowcutctl.c" ;;
	flowcut-web) ls "$top"/web/*.c 2>/dev/null ;;
	flowcut-inspect) echo "$top/inspector/flowcut-inspect.c" ;;
	esac
}

# the long options of a getopt table: { "name", no_argument, ...
table_options() { # files...
	sed -n 's/.*{ *"\([a-z0-9-]*\)", *\(no\|required\|optional\)_argument.*/\1/p' "$@" | sort -u
}

# the options a page's OPTIONS section gives as items (.TP, then .B or .BI \-\-name)
page_options() { # page
	awk '/^\.SH / { in_o = ($0 ~ /^\.SH OPTIONS/); next }
		in_o && prev == ".TP" && $1 ~ /^\.BI?$/ && $2 ~ /^\\-\\-/ { o = $2; sub(/^\\-\\-/, "", o);
			gsub(/\\-/, "-", o); print o }
		{ prev = $1 }' "$1" | sort -u
}

pages=("$MAN"/*.8)
[ -e "${pages[0]}" ] || { result "man pages in $MAN" 1 "none found"; exit 0; }
for page in "${pages[@]}"; do
	name=$(basename "$page" .8)
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 0 ] && [ -z "$out" ]
	result "$name(8): man --warnings says nothing" $? "exit $rc" "$out"

	out=$(lexgrog "$page" 2>&1)
	rc=$?
	[ $rc -eq 0 ] && grep -q "\"$name - " <<<"$out"
	result "$name(8): lexgrog reads its NAME line as $name - ..." $? "exit $rc" "$out"

	missing=()
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS FILES "SEE ALSO"; do
		grep -q "^\.SH \"\?$s\"\?\$" "$page" || missing+=("no section $s")
	done
	result "$name(8): NAME, SYNOPSIS, DESCRIPTION, OPTIONS, FILES, SEE ALSO" ${#missing[@]} "${missing[@]}"

	src=$(sources "$name")
	if [ -z "$src" ]; then
		echo "ok - $name(8): its OPTIONS are the program's getopt table # SKIP no source of $name in the tree"
		continue
	fi
	# shellcheck disable=SC2086 # one or more files
	prog=$(table_options $src)
	doc=$(page_options "$page")
	[ -n "$prog" ] || { result "$name(8): its OPTIONS are the program's getopt table" 1 \
		"no getopt table read in $src"; continue; }
	undocumented=$(comm -23 <(echo "$prog") <(echo "$doc"))
	unknown=$(comm -13 <(echo "$prog") <(echo "$doc"))
	[ -z "$undocumented$unknown" ]
	result "$name(8): its OPTIONS are the program's getopt table" $? \
		"${undocumented:+in the program, not the page: $(echo $undocumented)}" \
		"${unknown:+in the page, not the program: $(echo $unknown)}"
done
