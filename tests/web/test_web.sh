#!/usr/bin/env bash
# flowcut-web live: the real program on a loopback port against a tiny
# control-socket peer (tests/web/peer.py: the other side of t18-proto.md,
# answering its documents), asked with curl, /metrics checked by Debian's
# promtool, the status page drawn by headless Chromium.  No root needed.
# Output: one "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line a
# case (tests/run.sh reads it as a cmocka suite).
# FC_PROGS: where flowcut-web is (default $BUILD, or build).
set -u
here=$(cd "$(dirname "$0")" && pwd)
web=${FC_PROGS:-${BUILD:-build}}/flowcut-web
port=${FW_TEST_PORT:-$((20000 + RANDOM % 20000))}
U=http://127.0.0.1:$port
dir=$(mktemp -d /tmp/fw-test.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$dir"; }
trap cleanup EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
no() { n=$((n + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && sed 's/^/# /' <<<"$2" | head -20; }
is() { # name want got
	if [ "$2" = "$3" ]; then ok "$1"; else no "$1" "want $2, got $3"; fi
}
code() { curl -s -o "$dir/body" -w '%{http_code}' "$@"; }

[ -x "$web" ] || { no "flowcut-web built ($web)"; exit 1; }
python3 "$here/peer.py" "$dir/ctl.sock" & pids+=($!)
for _ in $(seq 50); do [ -S "$dir/ctl.sock" ] && break; sleep 0.1; done
"$web" --listen "127.0.0.1:$port" --listen "[::1]:$port" --control "$dir/ctl.sock" 2>"$dir/web.err" &
pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "$U/login" && break; sleep 0.1; done
sleep 2.2	# two samples: rates

for p in / /conns /cuts /settings /login /metrics /api/status /api/counters "/api/conns?addr=10.0.0.2" /api/cuts /api/settings; do
	is "GET $p: 200" 200 "$(code "$U$p")"
done
is "GET over IPv6 ([::1]): 200" 200 "$(code "http://[::1]:$port/api/status")"
is "an unknown path: 404" 404 "$(code "$U/nope")"
is "PUT /: 405" 405 "$(code -X PUT "$U/")"
is "GET /logout (a change by GET): 405" 405 "$(code "$U/logout")"
is "a query with a bad escape: 400" 400 "$(code "$U/conns?addr=%zz")"
grep -q "bad escape" "$dir/body" && ok "the 400 names the bad escape" || no "the 400 names the bad escape" "$(cat "$dir/body")"
is "a query with a key twice: 400" 400 "$(code "$U/conns?a=1&a=2")"
is "a filter with a space (a second word): 400" 400 "$(code "$U/conns?addr=1.2.3.4+x")"
head -c 20000 /dev/zero | tr '\0' a >"$dir/big"
is "a POST of 20,000 bytes: 413" 413 "$(code --data-binary @"$dir/big" "$U/settings")"
is "a POST not urlencoded: 415" 415 "$(code -H 'Content-Type: text/plain' --data-binary x "$U/settings")"
is "a POST without a session: 403" 403 "$(code -d 'key=idle_timeout&value=3' "$U/settings")"
is "a cut without a session: 403" 403 "$(code -d 'id=7' "$U/conns/cut")"
is "login: 303" 303 "$(code -c "$dir/jar" -d 'secret=s3cret' "$U/login")"
grep -q '#HttpOnly_127.0.0.1.*fcweb' "$dir/jar" && ok "the session cookie is HttpOnly" || no "the session cookie is HttpOnly" "$(cat "$dir/jar")"
curl -s -D "$dir/hdr" -o /dev/null -d 'secret=s3cret' "$U/login"
grep -qi '^set-cookie: fcweb=[0-9a-f]\{32\}; HttpOnly; SameSite=Strict; Path=/' "$dir/hdr" && ok "Set-Cookie: SameSite=Strict" || no "Set-Cookie: SameSite=Strict" "$(cat "$dir/hdr")"
csrf=$(curl -s -b "$dir/jar" "$U/settings" | grep -o 'name="csrf" value="[0-9a-f]*' | head -1 | sed 's/.*value="//')
is "the settings form carries a 32-digit CSRF token" 32 "${#csrf}"
is "a change with a bad CSRF token: 403" 403 "$(code -b "$dir/jar" -d 'csrf=00&key=idle_timeout&value=3' "$U/settings")"
is "a change from another origin: 403" 403 "$(code -b "$dir/jar" -H 'Origin: http://evil.example' -d "csrf=$csrf&key=idle_timeout&value=3" "$U/settings")"
is "a refused value: 303" 303 "$(code -b "$dir/jar" -H "Origin: $U" -d "csrf=$csrf&key=idle_timeout&value=abc" "$U/settings")"
curl -s -b "$dir/jar" "$U/settings" | grep -q 'refused: not a number of seconds: abc' &&
	ok "the refusal's reason beside its field" || no "the refusal's reason beside its field"
is "a list saved: 303" 303 "$(code -b "$dir/jar" --data-urlencode "csrf=$csrf" --data-urlencode key=watched_set \
	--data-urlencode list=1 --data-urlencode $'value=inet f2b-table *\r\nip crowdsec crowdsec-*\r\n' "$U/settings")"
grep -qF "'auth s3cret\\nsettings-set watched_set\\ninet f2b-table *\\nip crowdsec crowdsec-*\\n'" "$dir/ctl.sock.log" &&
	ok "flowcutd got auth SECRET and the list, a line a value" || no "flowcutd got auth SECRET and the list" "$(cat "$dir/ctl.sock.log")"
is "a cut with the session: 303" 303 "$(code -b "$dir/jar" -d "csrf=$csrf&id=7" "$U/conns/cut")"
curl -s -b "$dir/jar" "$U/conns" | grep -q 'cut connection 7' && ok "the connections page says it was cut" || no "the connections page says it was cut"
is "logout: 303" 303 "$(code -b "$dir/jar" -d "csrf=$csrf" "$U/logout")"
is "after logout, a change: 403" 403 "$(code -b "$dir/jar" -d "csrf=$csrf&id=7" "$U/conns/cut")"
if command -v promtool >/dev/null; then
	curl -s "$U/metrics" >"$dir/metrics"
	if out=$(promtool check metrics <"$dir/metrics" 2>&1); then ok "promtool check metrics"; else no "promtool check metrics" "$out"; fi
else
	echo "ok $((n += 1)) - promtool check metrics # SKIP no promtool (Debian's prometheus)"
fi
if command -v chromium >/dev/null; then
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chr" \
		--screenshot="$dir/status.png" --window-size=1280,900 "$U/" >/dev/null 2>&1
	sz=$(stat -c %s "$dir/status.png" 2>/dev/null || echo 0)
	[ "$sz" -gt 20000 ] && ok "headless Chromium draws the status page ($sz bytes)" || no "headless Chromium draws the status page" "png of $sz bytes"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chr" \
		--dump-dom "$U/" 2>/dev/null >"$dir/dom"
	grep -q '<polyline' "$dir/dom" && ok "the status page's DOM holds the graph" || no "the status page's DOM holds the graph"
	[ -n "${FW_SCREENSHOT:-}" ] && cp "$dir/status.png" "$FW_SCREENSHOT"
else
	echo "ok $((n += 1)) - headless Chromium # SKIP no chromium"
fi
# one slow answer of flowcutd (the peer's conns 999: 1.5 s) holds one of the pool's threads, not the address
curl -s -o /dev/null "$U/api/conns?from=999" & slowpid=$!
sleep 0.2
t=$(curl -s -o /dev/null -w '%{time_total}' "$U/api/cuts")
wait "$slowpid"
awk -v t="$t" 'BEGIN { exit !(t < 0.5) }' && ok "a slow flowcutd answer does not hold another request (${t} s)" ||
	no "a slow flowcutd answer does not hold another request" "/api/cuts took $t s while /api/conns waited"
# a flood (2,000 requests, 64 at a time) and slow clients (half a request, then silence)
wpid=${pids[1]}
fl=$(python3 "$here/flood.py" 127.0.0.1 "$port" --path /api/status --path /metrics --path "/api/conns?from=0" \
	--requests 2000 --at-once 64 --within 20)
echo "# the flood: $fl"
python3 -c 'import json,sys; r = json.loads(sys.argv[1]); sys.exit(not (r["unanswered"] == 0 and r["timed_out"] == 0 and
	sum(r["codes"].values()) == 2000 and r["codes"].get("200", 0) == 2000 and r["seconds"] < 20))' "$fl" &&
	ok "a flood of 2,000 requests, 64 at a time: each answered 200 within 20 s" || no "a flood of 2,000 requests, 64 at a time" "$fl"
fl=$(python3 "$here/flood.py" 127.0.0.1 "$port" --slow 200 --path /api/status --requests 1000 --at-once 64 --within 20)
echo "# 200 slow clients, then 1,000 requests 64 at a time: $fl"
python3 -c 'import json,sys; r = json.loads(sys.argv[1]); c = r["codes"]; sys.exit(not (r["unanswered"] == 0 and
	r["timed_out"] == 0 and sum(c.values()) == 1000 and set(c) <= {"200", "503"} and c.get("503", 0) > 0 and
	r["slow_open"] == 200))' "$fl" &&
	ok "200 slow clients and a flood: each request answered 200 or 503, none closed unanswered, the slow ones held" ||
	no "200 slow clients and a flood: each answered 200 or 503" "$fl"
fl=$(python3 "$here/flood.py" 127.0.0.1 "$port" --slow 50 --requests 0 --hold 11)
echo "# 50 slow clients held 11 s: $fl"
python3 -c 'import json,sys; r = json.loads(sys.argv[1]); sys.exit(not (r["slow_open"] == 0 and r["slow_connected"] == 50))' "$fl" &&
	ok "a slow client's connection is let go within the 10 s timeout" || no "a slow client's connection is let go within 10 s" "$fl"
hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$wpid/status")
echo "# flowcut-web's peak memory (VmHWM) after the floods: ${hwm:-?} kB"
cap=65536	# 64 MiB; ASan's shadow and quarantine take their own (73 MB seen): 256 MiB
ldd "$web" 2>/dev/null | grep -q libasan && cap=262144
[ "${hwm:-999999}" -lt "$cap" ] && ok "flowcut-web's memory bounded: peak ${hwm} kB < $((cap / 1024)) MiB" ||
	no "flowcut-web's memory bounded" "VmHWM ${hwm:-?} kB, the bound $cap kB"
is "after the floods, GET /: 200" 200 "$(code "$U/")"
kill -0 "${pids[1]}" 2>/dev/null && ok "flowcut-web still runs" || no "flowcut-web still runs" "$(cat "$dir/web.err")"
