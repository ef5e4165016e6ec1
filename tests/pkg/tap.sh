# shellcheck shell=bash
# One TAP line for the tests/ scripts that are not cmocka (tests/pkg/,
# tests/deploy/): sourced.  tests/run.sh counts "ok - NAME", "not ok -
# NAME" and "ok - NAME # SKIP why"; a failure's reasons follow as "# "
# lines, empty ones left out.
result() { # name ok? [why...]
	local name=$1 rc=$2
	shift 2
	if [ "$rc" -eq 0 ]; then echo "ok - $name"; return; fi
	echo "not ok - $name"
	printf '%s\n' "$@" | sed '/^$/d; s/^/# /'
}
