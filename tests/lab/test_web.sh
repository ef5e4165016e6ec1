#!/usr/bin/env bash
# The operator's page in the lab (issue 18's "How it is shown"): the real
# flowcut-web that lab/lab.sh starts in the lab's host namespace (as flowcut-lab-web,
# in control_read_group, on 127.0.0.1:9842 and [::1]:9842 there), against
# the real flowcutd and coprocessor, asked with curl and drawn by headless
# Chromium (run in the namespace with ip netns exec):
#   - the status page's frames a second to the wire, from two dumps of a
#     lab stream, are > 0 and move;
#   - the settings form (curl -u operator:SECRET, the secret flowcutd wrote,
#     and the form's CSRF token) turns "Cut in hardware" off and the coprocessor's
#     IPS switch follows (flowcutctl cfg), then on; a bad value is refused
#     beside its field with the file's bytes unchanged; a save with no
#     secret, a wrong secret, no CSRF token, no Origin or a foreign Host is refused
#     with the file and the switch unchanged;
#   - a row's cut button cuts a 400 Mbit/s flood (lib.sh's window: at most
#     10 frames to the host in the 10 s from 1 s after the cut), IPv4 over
#     127.0.0.1 and IPv6 over [::1]; a watched set's element cuts a stream
#     and the connections page shows it with its set and element;
#   - /metrics passes promtool, and Debian's Prometheus (its own config and
#     data in the run folder, 1 s scrapes, 127.0.0.1:9090 of the namespace)
#     scrapes it during a cut flood: the drop outcome's rate from its
#     samples (each with the counters' own time, flowcut_counters_time_seconds,
#     at the fast path's two readings' times: the same window) is
#     within 5 % of the rate the fast path's own counter gives; PromQL's
#     rate() over the window, at the second reading's time, is said;
#   - a flood of 2,000 requests (64 at a time) and 200 slow clients
#     (half a request, then silence) against flowcut-web while a stream
#     runs: every request answered 200 or 503, none closed unanswered,
#     flowcut-web's peak memory bounded, flowcutd's turn_p99_us and the
#     stream's forwarding (the fast path's to-the-wire rate) within 10 % of
#     the same seconds before the flood.
# Screenshots (PNG) and the dumps go to WEB_SHOTS (default build/lab/web;
# the run folder goes with the lab).  Output: TAP as the other lab suites
# ("ok - NAME", "# ..." lines for figures).  Root only.  BUILD names the
# build folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"	# say ex counter conns cfg wait_for udp_stream flood floods_stop win_*, lab_suite
export WEB_SHOTS=${WEB_SHOTS:-$BUILD/lab/web}
U=http://127.0.0.1:9842
U6='http://[::1]:9842'
FLOOD_PY=$here/../web/flood.py	# tests/web/flood.py: a request flood, slow clients
LAB_VARS="WEB_SHOTS U U6 FLOOD_PY"
LAB_TIMES=1

# a read carries the read credential (HTTP Basic); a -u after it (a change's) stands instead
rsec() { cat "$run-web/read.secret"; }
web() { ex host curl -s --max-time 10 -u "reader:$(rsec)" "$@"; }
bare() { ex host curl -s --max-time 10 "$@"; }	# no credential
code() { web -o "$run/body" -w '%{http_code}' "$@"; }
# the operator's secret (or $2) in $sec, for HTTP Basic; the form's CSRF token in $csrf
login() { # base [secret]
	sec=${2:-$(cat "$run/web.secret")}
	csrf=$(web "$1/settings" | grep -o 'name="csrf" value="[0-9a-f]*' | head -1 | sed 's/.*value="//')
	[ "${#csrf}" = 32 ] || { say "no CSRF token on the settings form"; return 1; }
}
# a change, its 303 followed to the page that says it was done (a GET)
post() { code -L -u "operator:$sec" -H "Origin: ${ORIGIN:-$1}" "${@:2}"; }	# base curl-args...
# headless Chromium in the host namespace: dump (the DOM to stdout) or shot (a PNG of WEB_SHOTS)
chr() { # dump|shot url [name]
	local a=(--headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$run/chr" "--window-size=1280,1100")
	mkdir -p "$WEB_SHOTS"
	local url=${2/#http:\/\//http://reader:$(rsec)@}	# the read credential in the URL
	if [ "$1" = dump ]; then
		ex host timeout 60 chromium "${a[@]}" --dump-dom "$url" 2>/dev/null
	else
		ex host timeout 60 chromium "${a[@]}" --screenshot="$run/$3.png" "$url" >/dev/null 2>&1 &&
			cp "$run/$3.png" "$WEB_SHOTS/$3.png" && say "screenshot: $WEB_SHOTS/$3.png"
	fi
}
# the status page's "now:" figure (to the wire, to the host, dropped) from a DOM
now_fig() { # wire|host|dropped
	local k=$1
	[ "$k" = wire ] && k="to the wire" ; [ "$k" = host ] && k="to the host"
	sed -n "s/.*<p>now:.*$k \([0-9]*\)\/s.*/\1/p" | head -1
}
ips_on() { [ $(( $(cfg) & 4 )) -ne 0 ]; }	# the coprocessor's fw_cfg IPS bit, read back
setting() { sed -n "s/^$1 = //p" "$run/settings.conf"; }
# a settings page (stdin) holds an error with TEXT in KEY's own form (between its field and the next)
beside() { # key text
	python3 -c 'import sys
page, key, text = sys.stdin.read(), sys.argv[1], sys.argv[2]
at = page.find("id=\"%s\"" % key)
form = page[at:page.find("<div class=\"setting\">", at)] if at >= 0 else ""
sys.exit(0 if "class=\"err\">" + text in form.replace("&#39;", "\x27") else 1)' "$1" "$2"
}

# ---- the tests: each returns 0 (ok), 1 (not ok) ----

# The status page while a 200 Mbit/s UDP stream runs in the fast path:
# two dumps 2 s apart, its frames a second to the wire > 0 and not equal.
t_status() {
	local a b
	udp_stream 198.18.1.2 200M 25
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	sleep 2.5	# the sampler's two answers a rate needs
	a=$(chr dump "$U/" | tee "$run/status1.html" | now_fig wire)
	sleep 2
	b=$(chr dump "$U6/" | tee "$run/status2.html" | now_fig wire)
	chr shot "$U/" status-stream
	cp "$run/status1.html" "$run/status2.html" "$WEB_SHOTS/"
	say "the status page during a 200 Mbit/s stream: to the wire ${a:--}/s, 2 s later (over [::1]) ${b:--}/s"
	kill "$stream" 2>/dev/null; stream_end
	[ "${a:-0}" -gt 0 ] && [ "${b:-0}" -gt 0 ] && [ "$a" != "$b" ] && grep -q '<polyline' "$run/status2.html"
}

# The settings form: "Cut in hardware" off, the IPS switch follows; on
# again; a bad value refused beside its field, nothing changed.
t_settings() {
	local sum
	login "$U" || return 1
	ips_on || { say "the IPS switch is off before the test"; return 1; }
	[ "$(post "$U" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")" = 200 ] || return 1
	wait_for 50 bash -c "$(declare -f cfg ips_on); L=$L ctl=$ctl; ! ips_on" ||
		{ say "the IPS switch stayed on: fw_cfg $(cfg)"; return 1; }
	say "Cut in hardware off by the page: cut_in_hardware = $(setting cut_in_hardware), fw_cfg $(cfg)"
	[ "$(post "$U" -d "csrf=$csrf&key=cut_in_hardware&value=on" "$U/settings")" = 200 ] || return 1
	wait_for 50 ips_on || { say "the IPS switch stayed off: fw_cfg $(cfg)"; return 1; }
	say "on again: cut_in_hardware = $(setting cut_in_hardware), fw_cfg $(cfg)"
	sum=$(md5sum <"$run/settings.conf")
	[ "$(post "$U" -d "csrf=$csrf&key=idle_timeout&value=abc" "$U/settings")" = 400 ] || return 1
	cp "$run/body" "$run/settings-refused.html"	# the answer to the save is the page
	cp "$run/settings-refused.html" "$WEB_SHOTS/"
	chr shot "file://$run/settings-refused.html" settings-refused	# the page as the session saw it
	beside idle_timeout 'refused: idle_timeout is not' <"$run/settings-refused.html" ||
		{ say "no refusal beside idle_timeout"; grep -n 'err' "$run/settings-refused.html"; return 1; }
	say "beside the field: $(grep -o 'class="err">[^<]*' "$run/settings-refused.html" | head -1)"
	[ "$(md5sum <"$run/settings.conf")" = "$sum" ] || { say "the file changed"; return 1; }
	ips_on
}

# Saves without the secret: each refused, the file's bytes and the switch unchanged.
t_refused() {
	local sum n0 n1 c
	sum=$(md5sum <"$run/settings.conf")
	login "$U" || return 1
	c=$(bare -o "$run/body" -w '%{http_code}' -H "Origin: $U" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	say "no secret (no Authorization): $c"; [ "$c" = 401 ] || return 1
	c=$(code -H "Origin: $U" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	say "the read credential, not the operator's secret: $c"; [ "$c" = 401 ] || return 1
	c=$(code -u "operator:$sec" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	say "no Origin: $c"; [ "$c" = 403 ] || return 1
	c=$(code -u "operator:$sec" -H "Host: evil.example:9842" -H "Origin: http://evil.example:9842" \
		-d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	say "a foreign Host: $c"; [ "$c" = 421 ] || return 1
	c=$(post "$U" -d "key=cut_in_hardware&value=off" "$U/settings")
	say "no CSRF token: $c"; [ "$c" = 403 ] || return 1
	c=$(ORIGIN=http://evil.example post "$U" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	say "Origin http://evil.example: $c"; [ "$c" = 403 ] || return 1
	sleep 1.2
	n0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ctl_auth_refused"])' "$run/flowcutd.json")
	login "$U" 0000000000000000000000000000000000000000000000000000000000000000 || return 1
	c=$(post "$U" -d "csrf=$csrf&key=cut_in_hardware&value=off" "$U/settings")
	cp "$run/body" "$run/settings-wrong.html"
	say "a wrong secret: $c, the page says: $(grep -o '<p>refused[^<]*' "$run/settings-wrong.html" | head -1)"
	[ "$c" = 401 ] && grep -q '<p>refused: uid [0-9]*: the secret is wrong' "$run/settings-wrong.html" || return 1
	sleep 1.2
	n1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ctl_auth_refused"])' "$run/flowcutd.json")
	say "flowcutd's ctl_auth_refused: $n0 -> $n1"
	[ "$(md5sum <"$run/settings.conf")" = "$sum" ] || { say "the file changed"; return 1; }
	[ "$n1" -gt "$n0" ] && ips_on
}

# A row's cut button cuts a live 400 Mbit/s flood (IPv4 over 127.0.0.1, IPv6 over [::1]).
t_button() { # family
	local base=$U from=198.18.0.2 id page
	[ "$1" = 6 ] && base=$U6 from=2001:2::2
	login "$base" || return 1
	flood "$1" "$from" 5202 || return 1
	# the row of the flood (udp): its cut form's id (asked again while the table shows it not)
	for _ in 1 2 3 4 5; do
		id=$(web "$base/api/conns?port=5202" | python3 -c 'import json,sys
for c in json.load(sys.stdin)["conns"]:
    if c["proto"] == "udp" and c["dport"] == 5202 and c["cut"] is None: print(c["id"]); break' 2>/dev/null)
		[ -n "$id" ] && break
		sleep 0.5
	done
	page=$(web "$base/conns?port=5202")
	{ [ -n "$id" ] && grep -q "name=\"id\" value=\"$id\"" <<<"$page"; } || { say "no cut button for the flood ($id)"; return 1; }
	say "the flood: connection $id"
	[ "$(post "$base" -d "csrf=$csrf&id=$id" "$base/conns/cut")" = 200 ] || { say "the cut: $(cat "$run/body")"; return 1; }
	win_start
	say "the page says: $(grep -o 'cut connection [^<]*' "$run/body" | head -1)"
	web "$base/conns?state=cut" >"$run/conns-cut$1.html"
	grep -q 'conn - (in hardware)' "$run/conns-cut$1.html" || { say "the cut row has no trigger"; return 1; }
	win_end "UDP/IPv$1 400 Mbit/s, cut by the page's button (connection $id)" || { floods_stop; return 1; }
	floods_stop
}

# A watched set's element cuts a stream: the connections page shows the
# cut connection with its set and element (and the cuts page with its tuple).
t_trigger() {
	local dom
	udp_stream 198.18.1.2 100M 20
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	ex host nft add element inet filter blocked4 '{ 198.18.1.2 }' || return 1
	wait_for 50 bash -c "$(declare -f ex web rsec); L=$L lab=$lab U=$U run=$run; web '$U/api/conns?state=cut' | grep -q '\"trigger\": \"set\"'" ||
		{ say "no cut connection by the set"; web "$U/api/conns"; return 1; }
	dom=$(chr dump "$U/conns?state=cut")
	printf '%s\n' "$dom" >"$WEB_SHOTS/conns-set.html"
	chr shot "$U/conns?state=cut" conns-set
	chr shot "$U/cuts" cuts
	kill "$stream" 2>/dev/null; stream_end
	say "the connections page's trigger: $(grep -o 'set inet filter blocked4[^<]*' <<<"$dom" | head -1)"
	grep -Eq 'set inet filter blocked4 198\.18\.1\.2(/32)? \(in hardware\)' <<<"$dom"
}

# /metrics passes promtool; Prometheus scrapes it each second during a cut
# flood and its rate of the drop outcome, over the window of the fast
# path's two readings, is within 5 % of the fast path's (8 runs: 0.3 to
# 3.0 % low, low in each: a bias not found; PromQL's rate() over [t1 - 10 s,
# t1] at t1 came within 0.6 % in 7 of those runs, 5.6 % in one).  The window's
# ends: each scrape's value is flowcut-web's sampler's (up to 1 s old,
# and a scrape may repeat one), so the samples are paired with the
# counters' own time (flowcut_counters_time_seconds of the same scrape)
# and Prometheus' counter at t0 and t1 is the line between the readings
# either side (a flood's rate wanders by some % a second under the lab's
# load: the readings inside the window alone left up to 1 s off at each
# end, 7 % off once in 5 runs).
t_prom() {
	local out q d0 d1 t0 t1 a0 b0 a1 b1 fp pr rq vals times at span npts
	web "$U/metrics" >"$run/metrics"
	out=$(promtool check metrics <"$run/metrics" 2>&1) || { say "promtool: $out"; return 1; }
	mkdir -p "$run/prom"
	cat >"$run/prom/prometheus.yml" <<-EOF
	global: { scrape_interval: 1s, evaluation_interval: 1s }
	scrape_configs:
	  - job_name: flowcut-web
	    basic_auth: { username: prometheus, password_file: $run/prom/flowcut.secret }
	    static_configs: [ { targets: ["127.0.0.1:9842"] } ]
	EOF
	# Prometheus' own copy of the read credential (docs/web.md: Debian's prometheus)
	install -m 0600 "$run-web/read.secret" "$run/prom/flowcut.secret"
	ex host prometheus --config.file="$run/prom/prometheus.yml" --storage.tsdb.path="$run/prom/data" \
		--web.listen-address=127.0.0.1:9090 >"$run/prom/log" 2>&1 &
	flood 4 198.18.0.2 5202 || return 1
	ex host "$ctl" cut 198.18.1.2 --for 60 >/dev/null || { say "flowcutctl cut failed"; return 1; }
	sleep 8	# the cut's first second past, Prometheus scraping
	chr shot "$U/" status-cut
	q='flowcut_fastpath_frames_total{outcome="FROM_WIRE_DROP_IPS_VERDICT"}'
	# a reading's time: the middle of its call (flowcutctl waits for the window's next
	# publish, 50 ms apart, longer when the coprocessor's control thread is short of CPU)
	a0=$(date +%s%N) d0=$(counter FROM_WIRE_DROP_IPS_VERDICT) b0=$(date +%s%N)
	sleep 10
	a1=$(date +%s%N) d1=$(counter FROM_WIRE_DROP_IPS_VERDICT) b1=$(date +%s%N)
	t0=$(( (a0 + b0) / 2 )) t1=$(( (a1 + b1) / 2 ))
	sleep 2.5	# the last reading inside the window scraped
	at=$(python3 -c "print('%.3f' % ($t1 / 1e9 + 2.4))")
	vals=$(web --data-urlencode "query=${q}[16s]" --data-urlencode "time=$at" http://127.0.0.1:9090/api/v1/query)
	times=$(web --data-urlencode "query=flowcut_counters_time_seconds[16s]" --data-urlencode "time=$at" \
		http://127.0.0.1:9090/api/v1/query)
	rq="rate(${q}[10s])"
	out=$(web --data-urlencode "query=$rq" --data-urlencode "time=$(python3 -c "print('%.3f' % ($t1 / 1e9))")" \
		http://127.0.0.1:9090/api/v1/query)
	floods_stop
	fp=$(( (d1 - d0) * 1000000000 / (t1 - t0) ))
	pr=$(python3 -c 'import json,sys
vals, times = (json.loads(a)["data"]["result"][0]["values"] for a in sys.argv[1:3])
t0, t1 = int(sys.argv[3]) / 1e9, int(sys.argv[4]) / 1e9
at = {ts: float(v) for ts, v in times}	# a scrape: the counters time of its values
pts = sorted({(at[ts], float(v)) for ts, v in vals if ts in at})
def v_at(t):	# between the readings either side of t, in a line
    (ta, va), (tb, vb) = next((p, q) for p, q in zip(pts, pts[1:]) if p[0] <= t <= q[0])
    return va + (vb - va) * (t - ta) / (tb - ta), tb - ta
(v0, g0), (v1, g1) = v_at(t0), v_at(t1)
print(int((v1 - v0) / (t1 - t0)), "%.1f/%.1f" % (g0, g1), sum(t0 <= p[0] <= t1 for p in pts))' "$vals" "$times" "$t0" "$t1") ||
		{ say "Prometheus: $vals $times"; tail -5 "$run/prom/log" | sed 's/^/#   /'; return 1; }
	read -r pr span npts <<<"$pr"
	say "the flood's drops: the fast path's counter $fp/s over its $(( (t1 - t0) / 1000000 )) ms" \
	    "(its readings $(( (b0 - a0) / 1000000 )) and $(( (b1 - a1) / 1000000 )) ms long)," \
	    "Prometheus' samples $pr/s over the same window ($npts readings inside it, its ends between" \
	    "readings $span s apart):" \
	    "$(( (pr - fp) * 10000 / fp ))/10000 off"
	say "PromQL $rq at the second reading's time: $(python3 -c 'import json,sys
print(int(float(json.loads(sys.argv[1])["data"]["result"][0]["value"][1])))' "$out" 2>/dev/null || echo "-")/s"
	[ "$fp" -gt 10000 ] && [ $(( (pr - fp) * 20 )) -le "$fp" ] && [ $(( (fp - pr) * 20 )) -le "$fp" ]
}

# flowcutd's turn_p99_us (over its last whole second), the most of its
# stats file's readings 0.5 s apart: `n` of them, or while the file `until` is there
p99_max() { # n [until]
	local m=0 v i=0
	while if [ -n "${2:-}" ]; then [ -e "$2" ]; else [ "$i" -lt "$1" ]; fi; do
		v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["turn_p99_us"])' "$run/flowcutd.json" 2>/dev/null)
		[ "${v:-0}" -gt "$m" ] && m=$v
		i=$((i + 1))
		sleep 0.5
	done
	echo "$m"
}

# A request flood and slow clients against flowcut-web while a stream runs
# in the fast path: each request answered (200, 429 past a client's reads
# of flowcutd, or 503), none closed
# unanswered, flowcut-web's memory bounded, flowcutd's turn_p99_us and the
# stream's forwarding as in the seconds before.
t_flood() {
	local w0 w1 t0 t1 fw_before fw_during p_before p_during fl1 fl2 fl3 hwm pid pp round r1 check
	udp_stream 198.18.1.2 200M 40
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	sleep 1
	t0=$(date +%s%N) w0=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	p_before=$(p99_max 10)
	t1=$(date +%s%N) w1=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	fw_before=$(( (w1 - w0) * 1000000000 / (t1 - t0) ))
	touch "$run/flooding"
	p99_max 0 "$run/flooding" >"$run/p99-during" & pp=$!
	t0=$(date +%s%N) w0=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	# two rounds: the second's figures said, both checked
	for round in 1 2; do
		fl1=$(ex host python3 "$FLOOD_PY" 127.0.0.1 9842 --path /api/status --path /metrics \
			--path "/api/conns?from=0" --path /api/cuts --path / --requests 2000 --at-once 64 --within 20 \
			--secret "$run-web/read.secret")
		fl2=$(ex host python3 "$FLOOD_PY" 127.0.0.1 9842 --slow 200 --path /api/counters \
			--requests 1000 --at-once 64 --within 20 --secret "$run-web/read.secret")
		fl3=$(ex host python3 "$FLOOD_PY" ::1 9842 --path "/api/conns?from=0" --path /api/counters \
			--requests 2000 --at-once 64 --within 20 --secret "$run-web/read.secret")
		[ "$round" = 1 ] && r1=("$fl1" "$fl2" "$fl3")
	done
	t1=$(date +%s%N) w1=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	rm -f "$run/flooding"
	wait "$pp"
	fw_during=$(( (w1 - w0) * 1000000000 / (t1 - t0) ))
	p_during=$(cat "$run/p99-during")
	pid=$(cat "$run/web.pid")
	hwm=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$pid/status")
	kill "$stream" 2>/dev/null; stream_end
	say "2,000 requests, 64 at a time (127.0.0.1): $fl1"
	say "200 slow clients, then 1,000 requests: $fl2"
	say "2,000 requests, 64 at a time ([::1], flowcutd asked each): $fl3"
	say "the stream to the wire: $fw_before/s in the 5 s before, $fw_during/s over the floods' $(( (t1 - t0) / 1000000 )) ms;" \
	    "flowcutd's turn_p99_us at most $p_before before, $p_during during; flowcut-web's peak memory $hwm kB"
	check='import json,sys
a, b, c = (json.loads(x) for x in sys.argv[1:4])
ok = all(r["unanswered"] == 0 and r["timed_out"] == 0 and set(r["codes"]) <= {"200", "429", "503"} for r in (a, b, c))
ok = ok and sum(a["codes"].values()) == 2000 and sum(c["codes"].values()) == 2000 and sum(b["codes"].values()) == 1000
ok = ok and b["slow_open"] + b["slow_closed"] == 200
sys.exit(not ok)'
	{ python3 -c "$check" "$fl1" "$fl2" "$fl3" && python3 -c "$check" "${r1[@]}"; } ||
		{ say "a request not answered 200, 429 or 503"; return 1; }
	[ "${hwm:-999999}" -lt 65536 ] || { say "flowcut-web's memory: $hwm kB"; return 1; }
	[ $(( (fw_before - fw_during) * 10 )) -le "$fw_before" ] || { say "the stream slowed"; return 1; }
	# a few ms (the protocol's bound on a page's hold of the loop) above the seconds before
	[ "$p_during" -le $(( p_before + 5000 )) ] || { say "flowcutd's turns slowed past 5 ms more"; return 1; }
}

lab_on_fail() {
	tail -5 "$run/web.log"
	return 0
}

# No port to squat (issue 30): the page's sockets are made by root first
# and handed to flowcut-web (lab/sockkeep.py, as flowcut-web.socket does).
# A fake server as nobody cannot take 127.0.0.1:9842 or [::1]:9842, not
# while flowcut-web runs nor in the gap after it is killed; the operator's
# request made in that gap waits in the kept socket and is answered by the
# real page once flowcut-web is back.
t_squat() {
	local pid pid2 fake out code
	pid=$(cat "$run/web.pid")
	fake='import socket, sys
res = []
for host, fam in (("127.0.0.1", socket.AF_INET), ("::1", socket.AF_INET6)):
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.bind((host, 9842)); s.listen(8); res.append("%s taken" % host)
    except OSError as e:
        res.append("%s refused (%s)" % (host, e.strerror))
print("; ".join(res))
sys.exit(1 if any("taken" in r for r in res) else 0)'
	out=$(ex host setpriv --reuid=nobody --regid=nogroup --clear-groups python3 -c "$fake" 2>&1) ||
		{ say "a fake server as nobody, flowcut-web running: $out"; return 1; }
	say "a fake server as nobody, flowcut-web running: $out"
	kill -9 "$pid"
	out=$(ex host setpriv --reuid=nobody --regid=nogroup --clear-groups python3 -c "$fake" 2>&1) ||
		{ say "a fake server as nobody, flowcut-web just killed: $out"; return 1; }
	say "a fake server as nobody, flowcut-web just killed: $out"
	# the operator's request in the gap: kept in the socket, answered by the page when it is back
	code=$(web -o "$run/squat.body" -w '%{http_code}' "$U/")
	pid2=$(cat "$run/web.pid")
	say "the operator's request in the gap: $code, $(grep -c 'flowcut' "$run/squat.body" 2>/dev/null) lines naming flowcut;" \
	    "flowcut-web pid $pid, then $pid2"
	[ "$code" = 200 ] && grep -q flowcut "$run/squat.body" && [ "$pid2" != "$pid" ] ||
		{ say "the operator did not reach the real page"; return 1; }
}

# 1,000 silent connections to flowcutd's control socket (held 6 s, 50 at a
# time as fast as they open): flowcutd never waits on one - its turn p99
# said beside the seconds before's (within 20 ms), a status asked meanwhile answered, and
# every silent one let go (ctl_let_go: over 64 waiting, or 200 ms silent).
t_silent_ctl() {
	local p_before p_during pp go0 go1 st out
	sleep 3	# the lab's start out of the window
	p_before=$(p99_max 6)
	go0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ctl_let_go"])' "$run/flowcutd.json")
	touch "$run/silent"
	p99_max 0 "$run/silent" >"$run/p99-silent" & pp=$!
	ex host python3 -c '
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
held, refused, t0 = [], 0, time.time()
while len(held) + refused < n and time.time() - t0 < 5:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setblocking(False)
    try:
        s.connect(path)
        held.append(s)
    except (BlockingIOError, ConnectionRefusedError):
        refused += 1
        s.close()
        time.sleep(0.001)
time.sleep(6 - (time.time() - t0) if time.time() - t0 < 6 else 0)
print(len(held), refused)' "$run-ctl/flowcutd.sock" 1000 >"$run/silent.out" 2>&1 &
	local sp=$!
	sleep 2
	st=$(date +%s%N)
	out=$(ex host "$ctl" --control "$run-ctl/flowcutd.sock" daemon 2>&1)
	st=$(( ($(date +%s%N) - st) / 1000000 ))
	wait "$sp"
	rm -f "$run/silent"
	wait "$pp"
	sleep 1.2	# the stats' next write
	p_during=$(cat "$run/p99-silent")
	go1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ctl_let_go"])' "$run/flowcutd.json")
	say "silent connections held, refused (the queue full): $(cat "$run/silent.out"); flowcutctl status answered in $st ms" \
	    "meanwhile; ctl_let_go +$((go1 - go0)); flowcutd's turn_p99_us at most $p_before before, $p_during during"
	grep -q '^programmed *yes' <<<"$out" || { say "flowcutd's status was not answered: $out"; return 1; }
	[ "$((go1 - go0))" -ge 900 ] || { say "fewer than 900 silent clients let go"; return 1; }
	# the figure (measurements.md: under 1 ms more here) is said above; the bound
	# is what a wait on a peer would cost a turn (200 ms, the blocking read it
	# replaced) less the scheduler's noise on two shared cores (4 ms seen once)
	[ "$p_during" -le $(( p_before + 20000 )) ] || { say "flowcutd's turns slowed past 20 ms more"; return 1; }
}

# No reads without a right (issue 30): as nobody (not in the read group,
# no credential), every page and API path is 401 over 127.0.0.1 and
# [::1], /health alone 200; a wrong password is 401 too; the read
# credential and the operator's secret each open them; nobody cannot read
# the read credential's file.
t_nobody() {
	local p c bad=0 asn=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	local paths=(/ /conns /cuts /settings /metrics /api/status /api/counters "/api/conns?from=0" /api/cuts /api/settings)
	for base in "$U" "$U6"; do
		for p in "${paths[@]}"; do
			c=$(ex host "${asn[@]}" curl -s --max-time 10 -o /dev/null -w '%{http_code}' "$base$p")
			[ "$c" = 401 ] || { say "as nobody, $base$p: $c"; bad=1; }
			c=$(ex host "${asn[@]}" curl -s --max-time 10 -o /dev/null -w '%{http_code}' -u nobody:guess "$base$p")
			[ "$c" = 401 ] || { say "as nobody with a guess, $base$p: $c"; bad=1; }
			c=$(code "$base$p")
			[ "$c" = 200 ] || { say "the read credential, $base$p: $c"; bad=1; }
		done
		c=$(ex host "${asn[@]}" curl -s --max-time 10 -w ' %{http_code}' "$base/health")
		[ "$c" = $'ok\n 200' ] || { say "as nobody, $base/health: $c"; bad=1; }
	done
	for p in / /conns /metrics; do
		c=$(web -u "operator:$(cat "$run/web.secret")" -o /dev/null -w '%{http_code}' "$U$p")
		[ "$c" = 200 ] || { say "the operator's secret, $p: $c"; bad=1; }
	done
	ex host "${asn[@]}" cat "$run-web/read.secret" >/dev/null 2>&1 && { say "nobody reads the read credential"; bad=1; }
	say "as nobody: ${#paths[@]} paths x 2 addresses, each 401 without a credential and with a guess, 200 with" \
	    "the read credential; /health 200; the operator's secret opens / /conns /metrics"
	return $bad
}

# No lock-out (issue 30): nobody holds 1,000 slow connections to the page
# (each a request's first line, then a header byte every 2 s, opened again
# as soon as the page lets it go) for 12 s; meanwhile the operator (root,
# the read credential) asks / and /api/conns once a second: each answered
# 200, its time said; flowcutd's turn p99 said beside the seconds
# before's; the page's own counters say what it let go.
t_lockout() {
	local p_before p_during pp hold out codes worst st0 st1
	sleep 2
	p_before=$(p99_max 6)
	st0=$(web "$U/api/status" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["web"]))')
	touch "$run/holding"
	p99_max 0 "$run/holding" >"$run/p99-hold" & pp=$!
	ex host setpriv --reuid=nobody --regid=nogroup --clear-groups python3 -c '
import asyncio, resource, sys, time
n, secs = int(sys.argv[1]), float(sys.argv[2])
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
st = {"opened": 0, "let_go": 0, "refused": 0, "held_max": 0}
held = [0]
async def one(end):
    while time.time() < end:
        try:
            r, w = await asyncio.open_connection("127.0.0.1", 9842)
        except OSError:
            st["refused"] += 1; await asyncio.sleep(0.1); continue
        st["opened"] += 1; held[0] += 1; st["held_max"] = max(st["held_max"], held[0])
        try:
            w.write(b"GET /conns HTTP/1.1\r\nHost: 127.0.0.1:9842\r\n"); await w.drain()
            while time.time() < end:
                try:
                    if await asyncio.wait_for(r.read(1), 2.0) == b"":
                        break
                except asyncio.TimeoutError:
                    pass
                w.write(b"X"); await w.drain()
            else:
                w.close(); held[0] -= 1; continue
        except OSError:
            pass
        held[0] -= 1; st["let_go"] += 1; w.close()
async def main():
    end = time.time() + secs
    await asyncio.gather(*(one(end) for _ in range(n)))
asyncio.run(main())
print("opened %(opened)d, let go by the page %(let_go)d, refused %(refused)d, at most %(held_max)d open at once" % st)' \
		1000 12 >"$run/hold.out" 2>&1 &
	hold=$!
	sleep 3
	: >"$run/op.times"
	for _ in $(seq 8); do
		for p in / "/api/conns?from=0"; do
			web -o /dev/null -w "%{http_code} %{time_total}\n" "$U$p" >>"$run/op.times"
		done
		sleep 1
	done
	wait "$hold"
	rm -f "$run/holding"
	wait "$pp"
	p_during=$(cat "$run/p99-hold")
	st1=$(web "$U/api/status" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["web"]))')
	codes=$(cut -d' ' -f1 "$run/op.times" | sort | uniq -c | tr -s ' ' | tr '\n' ,)
	worst=$(sort -k2 -n "$run/op.times" | tail -1 | cut -d' ' -f2)
	say "nobody's 1,000 slow connections: $(cat "$run/hold.out")"
	say "the operator meanwhile: 16 requests,$codes the slowest in $worst s; flowcutd's turn_p99_us at most" \
	    "$p_before before, $p_during during; the page's guard: $st0 -> $st1"
	[ "$codes" = " 16 200," ] || { say "the operator was not answered 200 each time"; return 1; }
	awk -v t="$worst" 'BEGIN { exit !(t < 1.0) }' || { say "an operator's request took past 1 s"; return 1; }
	grep -q "^opened" "$run/hold.out" || { say "the slow clients did not run: $(cat "$run/hold.out")"; return 1; }
	# the figure (measurements.md: under 1 ms more here) is said above; the bound
	# is what a wait on a peer would cost a turn (200 ms, the blocking read it
	# replaced) less the scheduler's noise on two shared cores (4 ms seen once)
	[ "$p_during" -le $(( p_before + 20000 )) ] || { say "flowcutd's turns slowed past 20 ms more"; return 1; }
}

# No setting switches the cut off silently (issue 30): a never_cut wider
# than a /16, allowed by a lowered never_cut_min_prefix4 (forced), is said
# by flowcutctl daemon, first on the status page, and in /metrics; taken
# out again, none of them says it.
wide_is() { python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["never_cut_wide"] != int(sys.argv[2]))' \
	"$run/flowcutd.json" "$1" 2>/dev/null; }
t_never_forced() {
	local st page met rc=0
	cp "$run/settings.conf" "$run/settings.before"
	"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set never_cut_min_prefix4 8 >/dev/null &&
		"$BUILD/flowcutctl" --settings "$run/settings.conf" settings set never_cut 10.0.0.0/8 >/dev/null ||
		{ say "the forced never_cut was not saved"; return 1; }
	wait_for 50 wide_is 1 || { say "flowcutd did not count it"; rc=1; }
	sleep 1.2	# the page's sampler
	st=$(ex host "$ctl" --control "$run-ctl/flowcutd.sock" daemon 2>&1)
	page=$(web "$U/" | grep -o '<p class="err">never_cut holds[^<]*')
	met=$(web "$U/metrics" | grep '^flowcut_daemon_never_cut_wide ')
	say "flowcutctl daemon: $(grep WARNING <<<"$st"); the page: ${page#*>}; /metrics: $met"
	grep -q '^WARNING *never_cut holds 1 range' <<<"$st" || { say "flowcutctl daemon does not warn"; rc=1; }
	[ -n "$page" ] || { say "the status page does not warn"; rc=1; }
	[ "$met" = "flowcut_daemon_never_cut_wide 1" ] || { say "/metrics: '$met'"; rc=1; }
	cp "$run/settings.before" "$run/settings.conf.new" && mv "$run/settings.conf.new" "$run/settings.conf"
	wait_for 50 wide_is 0 || { say "still counted"; rc=1; }
	sleep 1.2
	ex host "$ctl" --control "$run-ctl/flowcutd.sock" daemon 2>&1 | grep -q WARNING && { say "flowcutctl daemon still warns"; rc=1; }
	web "$U/" | grep -q 'never_cut holds' && { say "the page still warns"; rc=1; }
	return $rc
}

tests=(
	"a forced never_cut (wider than a /16) is said by flowcutctl daemon, the status page and /metrics; taken out, by none|45|t_never_forced"
	"no lock-out: nobody holding 1,000 slow connections to the page for 12 s; the operator's requests each answered 200 within 1 s, flowcutd's turn p99 said (within 20 ms)|90|t_lockout"
	"no reads without a right: as nobody every page and API path 401 (no credential, a guess), /health 200; the read credential or the operator's secret 200|60|t_nobody"
	"the status page's frames a second to the wire, two Chromium dumps of a lab stream (127.0.0.1, [::1]): > 0 and moving|90|t_status"
	"the settings form turns Cut in hardware off and the IPS switch follows, on again; a bad value refused beside its field, the file unchanged|60|t_settings"
	"a save with no secret, no Origin, a foreign Host, no CSRF token, another Origin or a wrong secret is refused, the file and the switch unchanged|60|t_refused"
	"the connections page's cut button cuts a 400 Mbit/s flood: at most 10 frames to the host in 10 s (IPv4, the page on 127.0.0.1)|75|t_button 4"
	"the connections page's cut button cuts a 400 Mbit/s flood: at most 10 frames to the host in 10 s (IPv6, the page on [::1])|75|t_button 6"
	"a watched set's element cuts a stream: the connections page shows it with its set and element|75|t_trigger"
	"/metrics passes promtool; Prometheus scraping each second gives the cut flood's drop rate back within 5 % over the fast path's own window|90|t_prom"
	"a request flood and 200 slow clients against flowcut-web: each answered 200, 429 or 503, its memory bounded, flowcutd's turns and a stream's forwarding undisturbed|90|t_flood"
	"1,000 silent connections to the control socket: flowcutd never waits on one (its turn p99 said, within 20 ms), a status answered, every one let go|60|t_silent_ctl"
	"no port to squat: a fake server as nobody cannot take the page's port, running or in its restart gap; the operator reaches the real page|60|t_squat"
)

lab_suite fcw
