#!/usr/bin/env bash
# `flowcutctl web-secret [--make]` as rows, on a secret file in a folder of
# the test's own (--secret PATH: never /etc): the file as it is set up ->
# the exit status, the words the line says, and never the secret itself.
# --make writes a 0600 root file of 64 hex digits when missing, leaves
# one that is there as it is, and makes no folder.  Root (the file must be
# root's); FC_PROGS names the build (default build/).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
ctl=${FC_PROGS:-$top/build}/flowcutctl
. "$top/tests/pkg/tap.sh"

if [ "$(id -u)" -ne 0 ]; then echo "ok - flowcutctl web-secret # SKIP not root"; exit 0; fi
[ -x "$ctl" ] || { result "flowcutctl web-secret" 1 "$ctl not built"; exit 0; }
dir=$(mktemp -d /tmp/test_web_secret.XXXXXX)
trap 'rm -rf "$dir"' EXIT
f=$dir/web.secret
good=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef

# name | set-up (bash, $f the file) | arguments | exit status | the output holds
rows=(
	"missing|:|web-secret|1|missing: flowcutd accepts no secret"
	"made by --make|:|web-secret --make|0|made; flowcutd accepts it"
	"0600 root, 64 hex digits|printf '%s\n' $good >\$f; chmod 600 \$f|web-secret|0|there; flowcutd accepts it"
	"--make over one there leaves it|printf '%s\n' $good >\$f; chmod 600 \$f|web-secret --make|0|there; flowcutd accepts it"
	"0644: refused|printf '%s\n' $good >\$f; chmod 644 \$f|web-secret|1|mode 0644: group or others have a bit"
	"--make over a refused one leaves it refused|printf '%s\n' $good >\$f; chmod 640 \$f|web-secret --make|1|mode 0640"
	"nobody's: refused|printf '%s\n' $good >\$f; chmod 600 \$f; chown nobody \$f|web-secret|1|owned by uid $(id -u nobody), not root"
	"63 digits: refused|printf '%s\n' ${good:1} >\$f; chmod 600 \$f|web-secret|1|not one line of 64 hex digits"
	"a symlink: refused|printf '%s\n' $good >\$f.real; chmod 600 \$f.real; ln -s \$f.real \$f|web-secret|1|a symlink"
	"--json: accepted|printf '%s\n' $good >\$f; chmod 600 \$f|--json web-secret|0|\"accepted\": true"
	"no folder: --make makes none|f=\$dir/none/web.secret|web-secret --make|1|its folder is missing"
	"an unknown word|:|web-secret --now|2|it takes --make and --json alone"
)
for row in "${rows[@]}"; do
	IFS='|' read -r name setup args want holds <<<"$row"
	rm -rf "${dir:?}"/* && f=$dir/web.secret
	eval "$setup"
	# shellcheck disable=SC2086 # the arguments, split
	out=$("$ctl" --secret "$f" $args 2>&1)
	rc=$?
	why=()
	[ "$rc" -eq "$want" ] || why+=("exit $rc, not $want")
	grep -qF -- "$holds" <<<"$out" || why+=("the output does not say '$holds'")
	if [ -f "$f" ] && [ ! -L "$f" ]; then
		secret=$(head -c 64 "$f")
		[ -n "$secret" ] && grep -qF -- "$secret" <<<"$out" && why+=("the output holds the secret")
	fi
	if [ "$name" = "made by --make" ]; then
		[ "$(stat -c '%a %u' "$f")" = "600 0" ] || why+=("made $(stat -c '%a %u' "$f"), not 600 root")
		grep -qxE '[0-9a-f]{64}' "$f" || why+=("made, not one line of 64 hex digits")
	fi
	[ "$name" = "--make over one there leaves it" ] && [ "$(cat "$f")" != "$good" ] &&
		why+=("the one there was written over")
	result "flowcutctl web-secret: $name" ${#why[@]} "${why[@]}" "$out"
done
