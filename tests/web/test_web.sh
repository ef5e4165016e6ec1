#!/usr/bin/env bash
# flowcut-web live: the real program on a loopback port against a tiny
# control-socket peer (tests/web/peer.py: the other side of the control
# protocol, include/flowcut/fc_ctl.h, answering its documents), asked with
# curl, /metrics checked by Debian's promtool, the status page drawn by
# headless Chromium.  No root needed.
# Every read carries the read credential ($dir/read.secret, HTTP Basic) but
# the cases that show it is asked for.
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
# the read credential (the installer's /etc/flowcut/read.secret): this user's, 0600
rsec=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
(umask 077; printf '%s\n' "$rsec" >"$dir/read.secret")
R=(-u "reader:$rsec")	# a read's credential: HTTP Basic, the password
python3 "$here/peer.py" "$dir/ctl.sock" & pids+=($!)
for _ in $(seq 50); do [ -S "$dir/ctl.sock" ] && break; sleep 0.1; done
"$web" --listen "127.0.0.1:$port" --listen "[::1]:$port" --control "$dir/ctl.sock" \
	--read-secret "$dir/read.secret" --reads-a-second 100000 2>"$dir/web.err" &	# the bound: below
pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "$U/health" && break; sleep 0.1; done
sleep 2.2	# two samples: rates

paths=(/ /conns /cuts /settings /metrics /api/status /api/counters "/api/conns?addr=10.0.0.2" /api/cuts /api/settings)
for p in "${paths[@]}"; do
	is "GET $p: 200" 200 "$(code "${R[@]}" "$U$p")"
done
# reads need a right: every path but /health, without one or with a wrong one, 401
is "GET /health, no credential: 200" 200 "$(code "$U/health")"
is "GET /health says ok, and nothing more" ok "$(cat "$dir/body")"
for p in "${paths[@]}"; do
	is "GET $p, no credential: 401" 401 "$(code "$U$p")"
	is "GET $p, a wrong password (flowcutd refuses it): 401" 401 "$(code -u reader:wrong "$U$p")"
done
grep -q "reads ask for the read credential" "$dir/body" && ok "the 401 says what a read asks for" ||
	no "the 401 says what a read asks for" "$(cat "$dir/body")"
for p in / /conns /metrics /api/counters; do
	is "GET $p on the operator's secret (flowcutd judges it): 200" 200 "$(code -u operator:s3cret "$U$p")"
done
grep -qF "'auth s3cret\\nconns 0 " "$dir/ctl.sock.log" && grep -qF "'auth s3cret\\nstatus\\n'" "$dir/ctl.sock.log" &&
	ok "the operator's secret went to flowcutd with the read, or with a status for a sampler's page" ||
	no "the operator's secret went to flowcutd with the read" "$(tail -5 "$dir/ctl.sock.log")"
grep -q "$rsec" "$dir/ctl.sock.log" && no "the read credential never reaches flowcutd" || ok "the read credential never reaches flowcutd"
chmod 0644 "$dir/read.secret"
is "the read credential's file readable by all: refused (401)" 401 "$(code "${R[@]}" "$U/api/status")"
grep -q "read.secret: mode 0644" "$dir/web.err" && ok "flowcut-web says why the read credential's file is refused" ||
	no "flowcut-web says why the read credential's file is refused" "$(cat "$dir/web.err")"
chmod 0600 "$dir/read.secret"
is "fixed, taken again at the next request: 200" 200 "$(code "${R[@]}" "$U/api/status")"
is "GET over IPv6 ([::1]): 200" 200 "$(code "${R[@]}" "http://[::1]:$port/api/status")"
is "an unknown path: 404" 404 "$(code "$U/nope")"
is "PUT /: 405" 405 "$(code -X PUT "$U/")"
is "GET /conns/cut (a change by GET): 405" 405 "$(code "$U/conns/cut")"
is "a query with a bad escape: 400" 400 "$(code "$U/conns?addr=%zz")"
grep -q "bad escape" "$dir/body" && ok "the 400 names the bad escape" || no "the 400 names the bad escape" "$(cat "$dir/body")"
is "a query with a key twice: 400" 400 "$(code "$U/conns?a=1&a=2")"
is "a filter with a space (a second word): 400" 400 "$(code "${R[@]}" "$U/conns?addr=1.2.3.4+x")"
head -c 20000 /dev/zero | tr '\0' a >"$dir/big"
is "a POST of 20,000 bytes: 413" 413 "$(code --data-binary @"$dir/big" "$U/settings")"
is "a POST not urlencoded: 415" 415 "$(code -H 'Content-Type: text/plain' --data-binary x "$U/settings")"
O=(-H "Origin: $U")	# every POST of a browser's carries Origin; without one: 403
A=(-u operator:s3cret)	# the operator's secret: HTTP Basic, the password
csrf=$(curl -s "${R[@]}" "$U/settings" | grep -o 'name="csrf" value="[0-9a-f]*' | head -1 | sed 's/.*value="//')
is "the settings form carries a 32-digit CSRF token" 32 "${#csrf}"
curl -s "${R[@]}" "$U/settings" | grep -q "changes ask for the operator's secret" && ok "the page says changes ask for the secret" ||
	no "the page says changes ask for the secret"
is "GET /login (no login any more): 404" 404 "$(code "$U/login")"
is "a POST without Authorization: 401" 401 "$(code "${O[@]}" -D "$dir/hdr" -d "csrf=$csrf&key=idle_timeout&value=3" "$U/settings")"
grep -qi '^www-authenticate: Basic realm="flowcut", charset="UTF-8"' "$dir/hdr" && ok "the 401 asks for Basic (realm flowcut)" ||
	no "the 401 asks for Basic (realm flowcut)" "$(cat "$dir/hdr")"
is "a cut without Authorization: 401" 401 "$(code "${O[@]}" -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "a change with a secret flowcutd refuses: 401" 401 "$(code "${O[@]}" -u operator:wrong -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "a change refused with a long reason: 401" 401 "$(code "${O[@]}" -u operator:long -d "csrf=$csrf&id=7" "$U/conns/cut")"
grep -q "END: changes ask for the operator.*secret" "$dir/body" && ok "the 401 says flowcutd's long reason whole, and what a change asks" ||
	no "the 401 says flowcutd's long reason whole, and what a change asks" "$(grep -o 'rrrr[^<]*' "$dir/body" | tail -c 300)"
is "a change with Authorization not Basic: 401" 401 "$(code "${O[@]}" -H 'Authorization: Bearer x' -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "a change without Origin or Referer: 403" 403 "$(code "${A[@]}" -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "a change from another port's page (Origin :8000): 403" 403 "$(code "${A[@]}" -H 'Origin: http://127.0.0.1:8000' -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "a change from another origin: 403" 403 "$(code "${A[@]}" -H 'Origin: http://evil.example' -d "csrf=$csrf&key=idle_timeout&value=3" "$U/settings")"
is "a change with a bad CSRF token: 403" 403 "$(code "${A[@]}" "${O[@]}" -d 'csrf=00&key=idle_timeout&value=3' "$U/settings")"
# the review's theft: a page on 127.0.0.1:8000 holding a cookie of 127.0.0.1's; a cookie is no credential now
is "the cross-port theft: a cookie, the token, Origin, no secret: 401" 401 "$(code "${O[@]}" -H 'Cookie: fcweb=0123456789abcdef0123456789abcdef' \
	-d "csrf=$csrf&id=7" "$U/conns/cut")"
curl -s "${R[@]}" -D "$dir/hdr" -o /dev/null "$U/settings"
grep -qi '^set-cookie' "$dir/hdr" && no "no cookie set" "$(cat "$dir/hdr")" || ok "no cookie set"
is "a foreign Host (DNS rebinding): 421" 421 "$(code -H 'Host: evil.example:'"$port" "$U/api/settings")"
is "a foreign Host on a POST: 421" 421 "$(code "${A[@]}" -H 'Host: evil.example' -H 'Origin: http://evil.example' -d "csrf=$csrf&id=7" "$U/conns/cut")"
is "Host localhost:PORT: 200" 200 "$(code "${R[@]}" "http://localhost:$port/api/status")"
is "Host [::1]:PORT: 200" 200 "$(code "${R[@]}" "http://[::1]:$port/api/status")"
is "a refused value: 400" 400 "$(code "${A[@]}" "${O[@]}" -d "csrf=$csrf&key=idle_timeout&value=abc" "$U/settings")"
grep -q 'refused: not a number of seconds: abc' "$dir/body" &&
	ok "the refusal's reason beside its field" || no "the refusal's reason beside its field" "$(cat "$dir/body")"
is "a list saved: 303, to the settings page that says so" 303 "$(code "${A[@]}" "${O[@]}" -D "$dir/hdr" \
	--data-urlencode "csrf=$csrf" --data-urlencode key=watched_set --data-urlencode list=1 \
	--data-urlencode $'value=inet f2b-table *\r\nip crowdsec crowdsec-*\r\n' "$U/settings")"
is "the 303's Location" "/settings?saved=watched_set" "$(tr -d '\r' <"$dir/hdr" | sed -n 's/^Location: //ip')"
is "the page it names: 200" 200 "$(code "${A[@]}" "$U/settings?saved=watched_set")"
grep -q 'saved' "$dir/body" && ok "the settings page says the list was saved" ||
	no "the settings page says the list was saved" "$(cat "$dir/body")"
grep -qF "'auth s3cret\\nsettings-set watched_set\\ninet f2b-table *\\nip crowdsec crowdsec-*\\n'" "$dir/ctl.sock.log" &&
	ok "flowcutd got auth SECRET and the list, a line a value" || no "flowcutd got auth SECRET and the list" "$(cat "$dir/ctl.sock.log")"
is "a cut with the secret: 303, then the page (curl -L): 200" 200 "$(code "${A[@]}" -L -H "Referer: $U/conns" -d "csrf=$csrf&id=7" "$U/conns/cut")"
grep -q 'cut connection 7' "$dir/body" && ok "the connections page says it was cut" || no "the connections page says it was cut" "$(cat "$dir/body")"
grep -qF "'auth s3cret\ncut-conn 7\n'" "$dir/ctl.sock.log" && ok "the cut asked of flowcutd once, the page read after it" ||
	no "the cut asked of flowcutd once" "$(tail -5 "$dir/ctl.sock.log")"
[ "$(grep -cF "'auth s3cret\ncut-conn 7" "$dir/ctl.sock.log")" = 1 ] && ok "the 303 followed is a read, not the cut again" ||
	no "the 303 followed is a read, not the cut again" "$(grep 'cut-conn' "$dir/ctl.sock.log")"
is "a page with a done note of another shape (cut=<b>): 200" 200 "$(code "${R[@]}" "$U/conns?cut=%3Cb%3E")"
grep -q 'cut connection' "$dir/body" && no "a done note of another shape is not shown" "$(cat "$dir/body")" ||
	ok "the page shows no note for cut=<b>"
# one control request in flight: 5 slow conns pages (the peer's 998: 0.3 s) asked at once, answered one after another
rm -f "$dir/ctl.sock.busy"
t0=$(date +%s.%N)
cc=()
for i in 1 2 3 4 5; do curl -s "${R[@]}" -o "$dir/c$i" -w '%{http_code}\n' "$U/api/conns?from=998" >"$dir/cc$i" & cc+=($!); done
wait "${cc[@]}"
t1=$(date +%s.%N)
codes=$(cat "$dir"/cc* | sort | uniq -c | tr -s ' ')
is "5 concurrent /api/conns: each 200" " 5 200" "$codes"
is "flowcutd saw at most one request in flight" 1 "$(cat "$dir/ctl.sock.busy")"
awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 1.45) }' && ok "5 slow conns pages took 5 x 0.3 s, one after another" ||
	no "5 slow conns pages one after another" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s"
if command -v promtool >/dev/null; then
	curl -s "${R[@]}" "$U/metrics" >"$dir/metrics"
	if out=$(promtool check metrics <"$dir/metrics" 2>&1); then ok "promtool check metrics"; else no "promtool check metrics" "$out"; fi
else
	echo "ok $((n += 1)) - promtool check metrics # SKIP no promtool (Debian's prometheus)"
fi
if command -v chromium >/dev/null; then
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chr" \
		--screenshot="$dir/status.png" --window-size=1280,900 "http://reader:$rsec@127.0.0.1:$port/" >/dev/null 2>&1
	sz=$(stat -c %s "$dir/status.png" 2>/dev/null || echo 0)
	[ "$sz" -gt 20000 ] && ok "headless Chromium draws the status page ($sz bytes)" || no "headless Chromium draws the status page" "png of $sz bytes"
	timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$dir/chr" \
		--dump-dom "http://reader:$rsec@127.0.0.1:$port/" 2>/dev/null >"$dir/dom"
	grep -q '<polyline' "$dir/dom" && ok "the status page's DOM holds the graph" || no "the status page's DOM holds the graph"
	[ -n "${FW_SCREENSHOT:-}" ] && cp "$dir/status.png" "$FW_SCREENSHOT"
else
	echo "ok $((n += 1)) - headless Chromium # SKIP no chromium"
fi
# one slow answer of flowcutd (the peer's conns 999: 1.5 s) holds one of the pool's threads and
# fw_ctl's turn, not the address: / and /metrics ask flowcutd nothing (the sampler's figures)
curl -s "${R[@]}" -o /dev/null "$U/api/conns?from=999" & slowpid=$!
sleep 0.2
t=$(curl -s "${R[@]}" -o /dev/null -w '%{time_total}' "$U/metrics")
wait "$slowpid"
awk -v t="$t" 'BEGIN { exit !(t < 0.5) }' && ok "a slow flowcutd answer does not hold /metrics (${t} s)" ||
	no "a slow flowcutd answer does not hold /metrics" "/metrics took $t s while /api/conns waited"
# a flood (2,000 requests, 64 at a time) and slow clients (half a request, then silence)
wpid=${pids[1]}
fl=$(python3 "$here/flood.py" 127.0.0.1 "$port" --path /api/status --path /metrics --path "/api/conns?from=0" \
	--requests 2000 --at-once 64 --within 20 --secret "$dir/read.secret")
echo "# the flood: $fl"
python3 -c 'import json,sys; r = json.loads(sys.argv[1]); sys.exit(not (r["unanswered"] == 0 and r["timed_out"] == 0 and
	sum(r["codes"].values()) == 2000 and r["codes"].get("200", 0) == 2000 and r["seconds"] < 20))' "$fl" &&
	ok "a flood of 2,000 requests, 64 at a time: each answered 200 within 20 s" || no "a flood of 2,000 requests, 64 at a time" "$fl"
fl=$(python3 "$here/flood.py" 127.0.0.1 "$port" --slow 200 --path /api/status --requests 1000 --at-once 64 --within 20 --secret "$dir/read.secret")
echo "# 200 slow clients, then 1,000 requests 64 at a time: $fl"
# one client (this uid) holding 200 slow connections loses its own to its next ones (fw_guard: 128 a
# client, the oldest waiting first): at least the 72 past 128, the rest at their deadline (below)
python3 -c 'import json,sys; r = json.loads(sys.argv[1]); c = r["codes"]; sys.exit(not (r["unanswered"] == 0 and
	r["timed_out"] == 0 and c.get("200", 0) == 1000 and r["slow_closed"] >= 72 and
	r["slow_closed"] + r["slow_open"] == 200))' "$fl" &&
	ok "200 slow clients and a flood: each request answered 200, none closed unanswered, the slow ones past 128 let go" ||
	no "200 slow clients and a flood: each answered 200, the slow ones past 128 let go" "$fl"
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
is "after the floods, GET /: 200" 200 "$(code "${R[@]}" "$U/")"
is "after the floods, flowcutd still saw at most one request in flight" 1 "$(cat "$dir/ctl.sock.busy")"
# the guard's other bounds, on an instance of its own with the defaults
# (fw_guard.h): a request not whole within 5 s is let go though it
# trickles a byte a second; a client's reads that ask flowcutd are 10 a
# second (20 at once), past them 429 with Retry-After; the sampler's
# pages never count
port2=$((port + 1)) U2=http://127.0.0.1:$((port + 1))
"$web" --listen "127.0.0.1:$port2" --control "$dir/ctl.sock" --read-secret "$dir/read.secret" 2>"$dir/web2.err" &
pids+=($!)
for _ in $(seq 50); do curl -s -o /dev/null "$U2/health" && break; sleep 0.1; done
tr=$(python3 - "$port2" <<-'EOF'
	import socket, sys, time
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	t0, sent = time.time(), 0
	try:
	    for b in b"GET /health HTTP/1.1\r\nX-Slow: " + b"a" * 20:
	        s.send(bytes([b])); sent += 1; time.sleep(1)
	    print("held for %.1f s, %d bytes sent" % (time.time() - t0, sent))
	except OSError:
	    print("let go after %.1f s, %d bytes sent" % (time.time() - t0, sent))
	EOF
)
echo "# a request trickled a byte a second: $tr"
trp=$(python3 - "$port2" <<-'EOF'
	import socket, sys, time
	s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
	s.send(("POST /settings HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nContent-Type: application/x-www-form-urlencoded\r\n"
	        "Content-Length: 40\r\n\r\n" % sys.argv[1]).encode())
	t0, sent = time.time(), 0
	try:
	    for _ in range(20):
	        s.send(b"a"); sent += 1; time.sleep(1)
	    print("held for %.1f s, %d bytes of its body sent" % (time.time() - t0, sent))
	except OSError:
	    print("let go after %.1f s, %d bytes of its body sent" % (time.time() - t0, sent))
	EOF
)
echo "# a POST's body trickled a byte a second: $trp"
[[ $trp == "let go after "* ]] && awk -v t="${trp#let go after }" 'BEGIN { exit !(t + 0 < 9) }' &&
	ok "a POST's body trickled a byte a second is let go at its deadline" ||
	no "a POST's body trickled a byte a second is let go at its deadline" "$trp"
[[ $tr == "let go after "* ]] && awk -v t="${tr#let go after }" 'BEGIN { exit !(t + 0 < 9) }' &&
	ok "a request trickled a byte a second is let go at its deadline" ||
	no "a request trickled a byte a second is let go at its deadline" "$tr"
# 60 at once: past the 20 of the burst, 10 a second refilled while they ran (the
# 60 asked within 4 s, however busy the machine, so some are refused: one after
# another, 30 took past a second on a loaded machine, and none was)
t0=$(date +%s%N)
cc=()
for i in $(seq 60); do curl -s "${R[@]}" -D "$dir/h$i" -o /dev/null -w '%{http_code}\n' "$U2/api/conns" >"$dir/code$i" & cc+=($!); done
wait "${cc[@]}"
ms=$((($(date +%s%N) - t0) / 1000000))
cat "$dir"/code* >"$dir/codes"
n200=$(grep -c 200 "$dir/codes") n429=$(grep -c 429 "$dir/codes")
echo "# 60 /api/conns at once from one client in $ms ms: $n200 x 200, $n429 x 429"
[ "$((n200 + n429))" = 60 ] && [ "$n200" -ge 20 ] && [ "$n200" -le $((20 + ms / 100 + 1)) ] && [ "$n429" -ge 1 ] &&
	ok "a client's reads that ask flowcutd: 20 at once, 10 a second, past them 429" ||
	no "a client's reads that ask flowcutd: 20 at once, 10 a second, past them 429" "$(sort "$dir/codes" | uniq -c) in $ms ms"
n=0; for i in $(seq 60); do grep -q '^HTTP/1.1 429' "$dir/h$i" && tr -d '\r' <"$dir/h$i" | grep -qix 'Retry-After: 1' && n=$((n + 1)); done
is "each 429 says Retry-After: 1" "$n429" "$n"
is "the sampler's pages never count: /metrics 200 meanwhile" 200 "$(code "${R[@]}" "$U2/metrics")"
sleep 1.1
is "a second later, a read that asks flowcutd again: 200" 200 "$(code "${R[@]}" "$U2/api/conns")"
# not kill -0: flowcut-web is this script's child, and one that crashed
# stays a zombie, which kill -0 finds, until it is waited for
st=$(cat "/proc/${pids[1]}/stat" 2>/dev/null) st=${st##*) }
[ -n "$st" ] && [ "${st%% *}" != Z ] && ok "flowcut-web still runs" || no "flowcut-web still runs" "$(cat "$dir/web.err")"
# SIGTERM ends it at once: its sampler sleeps on a condition stop signals,
# not to its next second (a stop took 1.0 s before, 2026-12-05; 0.04 s now)
t0=$(date +%s%N)
kill -TERM "${pids[1]}" 2>/dev/null
wait "${pids[1]}" 2>/dev/null
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
[ "$rc" -eq 0 ] && [ "$ms" -lt 500 ] && ok "SIGTERM stops flowcut-web at once, cleanly: ${ms} ms, exit 0" ||
	no "SIGTERM stops flowcut-web at once, cleanly" "${ms} ms (bound 500), exit $rc"
