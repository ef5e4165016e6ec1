#!/usr/bin/env bash
# Writes each NAME.json from NAME.nft (and lab.json from lab/ruleset.nft),
# each with flowcut.nft, as the real `nft -j list ruleset` lists them in a
# scratch network namespace.  Root.  Run from anywhere; commit the output.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
ns=fc-rulecheck-$$
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
one() { # source.nft out.json
	ip netns del "$ns" 2>/dev/null || true
	ip netns add "$ns"
	cat "$1" "$here/flowcut.nft" | ip netns exec "$ns" nft -f -
	ip netns exec "$ns" nft -j list ruleset | python3 -m json.tool --indent 1 >"$2"
}
one "$here/../../lab/ruleset.nft" "$here/lab.json"
for f in "$here"/*.nft; do
	[ "$(basename "$f")" = flowcut.nft ] && continue
	one "$f" "${f%.nft}.json"
done
