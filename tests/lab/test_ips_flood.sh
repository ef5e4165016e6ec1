#!/usr/bin/env bash
# The TLS inspector under spoofing and floods, in the lab, with real
# traffic (docs/fingerprints.md, "The inspector" and "How the inspector
# reads"): `openssl s_server -WWW` on 443 of the lab's server, flowcutd's
# watched_fingerprints listing `openssl s_client`'s JA4 (read by
# `flowcutctl fingerprint` from a capture of it taken in the test, never
# written in here), curl the unlisted client.  The senders are
# tests/lab/ips_flood.py (raw segments, a flood of real connections) and
# trafgen (random-source floods, as lab/flood.sh drives it).
#
#   1. spoof: four victims, curl over HTTPS to `openssl s_server -WWW`
#      (unlisted; IPv4 and IPv6 to 443, 10 MB, and to 8443 - a TLS port
#      too - 24 MB, each at 1.2 MB/s so they last 8 and 20 s), all in the
#      fast path (CUT_THRU); from a raw socket in the client's namespace,
#      segments of a victim's exact 5-tuple carrying the listed hello:
#      ACK|PSH (its ACK ahead of what the server sent, so the server's
#      stack never takes them: one it took would break the stream whoever
#      forwards it) and SYN (the bytes on it, as TCP Fast Open), at
#      sequence 0, a random one and the victim's next (sniffed on c0).
#      One of each to the 443 victims at once (the inspector remembers
#      them: passed), one of each to the 8443 victims 12 s after their
#      offload (forgotten: 10 s past their last frame up), then a flood of
#      them on the 8443 victims (2,000 a second a family, 3 s).  Asserted:
#      every download ends whole (bytes and sha256 at both ends) and never
#      stalls over 3 s (its bytes sampled every 0.2 s), flowcutd cut
#      nothing (no "cut (tls)" of a victim's port, cuts.tls, inspector.cuts
#      and cut_not_offloaded unchanged), every CUT decision the spoofs made
#      is cut_not_this_conn, no held frame released after the victims'
#      hellos.
#   2. seg6: a flood of 6-byte segments (a handshake record's first
#      bytes) to 443 from random sources and ports (trafgen, SEG6_PPS a
#      second for 6 s): no entry from them (inspector.entries stays small,
#      reading 0, not_seen unchanged, held and released only the clients'
#      hellos); during it the listed s_client is cut (nothing of its hello
#      at the server, neither in a capture on s0 nor in the server's own
#      log; flowcutd logs "cut (tls) tcp ...:PORT ... in hardware") and
#      curl's download (8 MB) ends whole.
#   3. syn: a flood of half-open connections, SYNs to the server's 443 from
#      random sources (trafgen, SYN_PPS a second for SYN_SECS: 15,000, 26 s), with
#      the coprocessor's new-connection limit off for this test's lab
#      (FLOWCUT_NPU_HOST_NEW_RATE=0: with the limit, 2,000 a second, the
#      flood - and the clients' SYNs with it - drop at the coprocessor
#      and never meet the inspector): once the inspector is full (65,536
#      entries, evicted_waiting rising: 15-20 s in), the same clients,
#      the same result;
#      inspector.entries at most 65,536, evicted_waiting counted (it rises:
#      the oldest waiting entries make room), evicted (undecided) 0.
#   4. hellos: a flood of real connections from the client, each sending
#      the listed hello's bytes (ips_flood.py hellos, HELLO_RATE a second
#      for 4 s, each held open 1.5 s): every one that sent it is cut
#      (inspector.cut_ja4 and flowcutd's "cut (tls)" lines count them
#      all), none answered by the server (nor any of its data in a capture
#      on s0, nor a handshake in its log), passes_lost 0; curl whole.
#   5. In 2-4: ping (IPv4 and IPv6, 100 a second) from the client to the
#      server loses at most 1 %, and a new connection for a small file
#      over plain HTTP (curl to python's http.server on 80, once a second)
#      comes whole every time.
#   6. In 1-4: the coprocessor's counters (the wire's summed as wire_*)
#      and flowcutd's stats before and after, their changes as "#" lines;
#      asserted what is certain: the flood's frames reached the
#      coprocessor, no frame of a flood held or released by the inspector
#      beyond the clients' own few.
#
# The rates: 2 and 3 reach the host unmetered (a segment of no connection
# is never metered; SYNs are not with the limit off), and the host path
# here takes about 10,000 frames a second (the rest dropped at the
# coprocessor's up ring, NPU_UP_RING_FULL: 4,000-5,000 SYNs a second reach
# the inspector, half the host path's frames being the server's SYN-ACKs).
# Past it the coprocessor's worker, sharing the 2 cores with trafgen, the
# relay and the ends, loses frames of every flow at its ring (RX_MISSED),
# pings among them: at 20,000 a second pings lost 0-1.5 % (2026-12-07,
# other builds on the machine), at 50,000 2.5-3 %; at 15,000, 0-0.9 %.
# A ping check that fails says what the wire lost over the flood.  The servers:
# s_server serves one connection at a time, and one whose hello never
# comes (a cut) holds it for good, so 2-4 use ips_flood.py's tls-server.
#
# Each test builds a lab of its own, is bounded in time (each sender by
# `timeout` and a count), and tears it down even when it fails
# (tests/lab/lib.sh).  Root only; trafgen (netsniff-ng), tshark, openssl,
# curl.  ONLY=pattern runs the tests whose name matches.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"

# shellcheck disable=SC2034	# C6, S6: read by name (addr)
S4=198.18.1.2 S6=2001:2:0:1::2 C4=198.18.0.2 C6=2001:2::2
PY=$here/ips_flood.py
SEG6_PPS=${SEG6_PPS:-15000}	# the 6-byte segments a second (case 2)
SYN_PPS=${SYN_PPS:-15000}	# the SYNs a second (case 3)
SYN_SECS=${SYN_SECS:-26}	# ... for so long: the inspector is full (65,536 entries) 15-20 s in
HELLO_RATE=${HELLO_RATE:-500}	# the listed hellos' connections a second (case 4)
QUIC_PPS=${QUIC_PPS:-15000}	# the QUIC Initials a second (case 7)
FLOOD_SECS=${FLOOD_SECS:-6}
LAB_VARS="S4 S6 C4 C6 PY SEG6_PPS SYN_PPS SYN_SECS HELLO_RATE QUIC_PPS FLOOD_SECS"
LAB_TIMES=1
# the SYN flood's lab has no new-connection limit (above); $name is lab_suite's test
lab_up() {
	local r=${FLOWCUT_NPU_HOST_NEW_RATE:-}
	case "${name:-}" in *half-open*) r=0 ;; esac
	"$lab" down "$L" >/dev/null 2>&1
	FLOWCUT_NPU_HOST_NEW_RATE=$r "$lab" up "$L" && FLOWCUT_NPU_HOST_NEW_RATE=$r "$lab" start "$L"
}
lab_down() {
	# shellcheck disable=SC2046
	kill -9 $(cat "$run/flowcutd.pid" "$run/npu.pid" 2>/dev/null) 2>/dev/null
	"$lab" down "$L" >/dev/null 2>&1
}
lab_on_fail() {
	echo "inspector: $(stat_line)"
	grep -h . "$run"/*.err 2>/dev/null | grep -v "^tcpdump: \|listening on\|packets \(captured\|received\|dropped\)" | tail -5
}

# ---- helpers ----

say_fail() { say "FAIL: $*"; }
addr() { local v=$1$2; echo "${!v}"; }	# addr S 6: the server's IPv6 address
bracket() { if [ "$1" = 6 ]; then echo "[$2]"; else echo "$2"; fi; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
sha() { sha256sum <"$1" | cut -c1-64; }
stat_of() { # the stats' field by its path ("inspector.passed", "cuts.tls.in_hardware")
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v)' "$run/flowcutd.json" "$1"
}
stat_at_least() { [ "$(stat_of "$1")" -ge "$2" ]; }
stat_ge() { wait_for 50 stat_at_least "$1" "$2"; }
entries_none() { [ "$(stat_of inspector.entries)" = 0 ]; }
stat_line() { # the inspector's figures that say most, one line
	python3 -c 'import json, sys
i = json.load(open(sys.argv[1]))["inspector"]
print(", ".join("%s %s" % (k, i[k]) for k in ("entries", "reading", "hellos", "passed", "cut_ja4",
      "not_seen", "evicted", "evicted_waiting", "passes_lost", "frames_held", "frames_released",
      "frames_dropped", "frames_outside", "cuts", "cut_pending", "cut_not_this_conn",
      "cut_no_state") if k in i))' "$run/flowcutd.json" 2>/dev/null
}

# A snapshot of the coprocessor's counters (flowcutctl counters --all, the
# wire's figures summed as wire_*) and flowcutd's stats (inspector.*, the
# relay's, cuts.tls.*), after the stats file's next write: snap NAME
snap() {
	sleep 1.1	# flowcutd writes its stats once a second
	"$ctl" --link "/run/flowcut-lab/$L/link" --json counters --all >"$run/snap.$1.npu.json" &&
		cp "$run/flowcutd.json" "$run/snap.$1.fd.json"
}
# the changes from snapshot A to B, as "#" lines; each name=delta also kept in $run/delta.B
delta() { # A B
	python3 - "$run/snap.$1" "$run/snap.$2" "$run/delta.$2" <<-'EOF'
	import json, sys
	a, b, out = sys.argv[1:]
	def flat(p):
	    n, f = json.load(open(p + ".npu.json")), json.load(open(p + ".fd.json"))
	    d = {k: v for k, v in n.items() if isinstance(v, int)}
	    for w in n.get("wire", []):
	        for k, v in w.items():
	            if isinstance(v, int):
	                d["wire_" + k] = d.get("wire_" + k, 0) + v
	    for k, v in f["inspector"].items():
	        if isinstance(v, int):
	            d["inspector." + k] = v
	    for k in ("to_host", "inspect_dropped", "up_tap_full", "offloaded", "refused", "events_lost",
	              "ct_events_lost", "resyncs"):
	        if isinstance(f.get(k), int):
	            d[k] = f[k]
	    for how in ("in_hardware", "on_host"):
	        d["cuts.tls." + how] = f["cuts"]["tls"][how]
	    return d
	x, y = flat(a), flat(b)
	ch = {k: y[k] - x.get(k, 0) for k in y if y[k] != x.get(k, 0)}
	with open(out, "w") as f:
	    for k in sorted(y):
	        f.write("%s %d\n" % (k, y[k] - x.get(k, 0)))
	        if k in ("inspector.entries", "inspector.reading", "inspector.bytes"):
	            f.write("%s.now %d\n" % (k, y[k]))
	npu = [k for k in sorted(ch) if not k.startswith(("inspector.", "cuts."))]
	ins = [k for k in sorted(ch) if k.startswith(("inspector.", "cuts."))]
	print("# the coprocessor and flowcutd: " + ", ".join("%s %+d" % (k, ch[k]) for k in npu))
	print("# the inspector: " + ", ".join("%s %+d" % (k[10:] if k.startswith("inspector.") else k, ch[k]) for k in ins)
	      + "; now entries %d, reading %d" % (y["inspector.entries"], y["inspector.reading"]))
	EOF
}
d_of() { awk -v k="$2" '$1 == k { print $2 }' "$run/delta.$1"; }	# d_of SNAP NAME

# a capture of port 443 in a namespace, until cap_stop: role iface file [filter]
cap_start() {
	"$lab" exec "$L" "$1" tcpdump --immediate-mode -i "$2" -U -s 0 -w "$3" "${4:-tcp port 443}" 2>"$3.err" &
	echo $! >"$3.pid"
	wait_for 50 grep -q listening "$3.err" || { say "tcpdump did not start: $(cat "$3.err")"; return 1; }
}
cap_stop() { # file
	local pid
	pid=$(cat "$1.pid")
	sleep 0.3
	kill -INT "$pid" 2>/dev/null
	wait_for 30 bash -c "! $lab alive $L $pid"
}
# the one ClientHello of a capture: "PORT JA4 JA3"
hello_of() { # capture
	"$ctl" --json fingerprint "$1" | python3 -c 'import json, sys
h = json.load(sys.stdin)["hellos"]
if len(h) != 1: sys.exit("%d hellos in the capture, not one" % len(h))
print(h[0]["client"].rsplit(":", 1)[1], h[0]["ja4"], h[0]["ja3"])'
}
data_from() { tshark -r "$1" -Y "tcp.srcport == $2 && tcp.len > 0" 2>/dev/null | wc -l; }
syns_from() { tshark -r "$1" -Y "tcp.srcport == $2 && tcp.flags.syn == 1" 2>/dev/null | wc -l; }

# The servers, files from $run/www: on 443, `openssl s_server -WWW` (one
# for each family: it serves one connection at a time) for "sserver", else
# ips_flood.py's tls-server (many at once: one whose hello never comes
# would hold s_server for good; its log, $run/tls-server.log, has the port
# of every handshake it did); python's http.server on 80
server_up() { # sserver|py
	local f p n=2
	mkdir -p "$run/tls" "$run/www"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=flowcut-lab.test -addext "subjectAltName=IP:$S4,IP:$S6" \
		-keyout "$run/tls/key.pem" -out "$run/tls/cert.pem" 2>"$run/tls/req.err" ||
		{ say "openssl req failed: $(cat "$run/tls/req.err")"; return 1; }
	if [ "$1" = sserver ]; then
		for f in 4 6; do
			for p in 443 8443; do
				(cd "$run/www" && exec "$lab" exec "$L" server openssl s_server -accept "$(bracket "$f" "$(addr S "$f")"):$p" \
					-cert "$run/tls/cert.pem" -key "$run/tls/key.pem" -WWW >"$run/s_server$f-$p.log" 2>&1) &
			done
		done
	else
		: >"$run/tls-server.log"
		"$lab" exec "$L" server python3 "$PY" tls-server --cert "$run/tls/cert.pem" --key "$run/tls/key.pem" \
			--dir "$run/www" --log "$run/tls-server.log" >"$run/tls-server.out" 2>&1 &
	fi
	"$lab" exec "$L" server python3 -m http.server 80 --bind :: --directory "$run/www" \
		>"$run/http.log" 2>&1 &
	head -c 20000 /dev/urandom >"$run/www/small"
	[ "$1" = sserver ] && n=4
	wait_for 50 bash -c "[ \$($lab exec $L server ss -Htln '( sport = :443 or sport = :8443 )' | wc -l) -ge $n ]" ||
		{ say "the TLS server is not listening: $(cat "$run"/s_server*.log "$run/tls-server.out" 2>/dev/null)"; return 1; }
	wait_for 50 bash -c "$lab exec $L server ss -Htln 'sport = :80' | grep -q ." ||
		{ say "http.server is not listening: $(cat "$run/http.log")"; return 1; }
}
watch_up() {
	: >"$run/ja.txt"
	"$ctl" --settings "$run/settings.conf" settings set watched_fingerprints "$run/ja.txt" >/dev/null ||
		return 1
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: 0 in force" "$run/flowcutd.log" ||
		{ say "flowcutd did not read $run/ja.txt"; return 1; }
}
list() { # fingerprint
	printf '# the test client\n%s\n' "$1" >"$run/ja.txt.new" && mv "$run/ja.txt.new" "$run/ja.txt"
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: 1 in force" "$run/flowcutd.log" ||
		{ say "flowcutd did not take $1"; return 1; }
}
s_client() { # fam file [args...]
	local fam=$1 out=$2
	shift 2
	"$lab" exec "$L" client timeout "${SCL_SECS:-6}" openssl s_client -connect "$(bracket "$fam" "$(addr S "$fam")"):443" \
		-CAfile "$run/tls/cert.pem" "$@" </dev/null >"$out" 2>&1
}
# The set-up of every case: the servers, the probe (s_client, nothing
# listed: passed), its JA4 listed; its hello's bytes in $run/hello.hex
# (the spoofs' and the hello flood's payload); $JA4 set
setup() { # sserver|py
	local port
	server_up "$1" && watch_up || return 1
	cap_start client c0 "$run/probe.pcap" || return 1
	s_client 4 "$run/probe.out" || { say "s_client failed: $(tail -3 "$run/probe.out")"; return 1; }
	cap_stop "$run/probe.pcap"
	read -r port JA4 _ <<<"$(hello_of "$run/probe.pcap")" || { say "the probe: no hello"; return 1; }
	tshark -r "$run/probe.pcap" -Y "tcp.srcport == $port && tls.handshake.type == 1" -T fields \
		-e tcp.payload 2>/dev/null | head -1 | tr -d ':\n' >"$run/hello.hex"
	say "s_client (the probe, port $port): JA4 $JA4; its hello $(( $(size "$run/hello.hex") / 2 )) bytes in one segment"
	[ "$(size "$run/hello.hex")" -gt 200 ] || { say "no hello bytes read from the probe's capture"; return 1; }
	stat_ge inspector.passed 1 || { say "the inspector did not pass the probe"; return 1; }
	list "$JA4"
}

# A listed s_client during a flood (captures on both sides, of the
# client's address only): cut, nothing of its hello at the server.  The
# client's SYN may be lost in a flood: s_client has 6 s (its SYN sent
# again at 1 and 3 s).  fam name
listed_cut() {
	local fam=$1 n=$2 c s port ja4 d rc=0
	c=$run/$n.client.pcap s=$run/$n.server.pcap
	cap_start server s0 "$s" "tcp port 443 and host $(addr C "$fam")" &&
		cap_start client c0 "$c" "tcp port 443 and host $(addr C "$fam")" || return 1
	if SCL_SECS=6 s_client "$fam" "$run/$n.out"; then say_fail "$n: the listed s_client shook hands: not cut"; rc=1; fi
	cap_stop "$c"
	cap_stop "$s"
	read -r port ja4 _ <<<"$(hello_of "$c")" ||
		{ say_fail "$n: no hello of s_client in the client's capture (its SYNs: $(tshark -r "$c" -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0' 2>/dev/null | wc -l))"; return 1; }
	[ "$ja4" = "$JA4" ] || { say_fail "$n: s_client sent $ja4, not the listed $JA4"; rc=1; }
	d=$(data_from "$s" "$port")
	wait_for 30 grep -q "cut (tls) tcp $(bracket "$fam" "$(addr C "$fam")"):$port -> .* in hardware" "$run/flowcutd.log" || true
	say "$n: the listed s_client (port $port): $(syns_from "$c" "$port") SYNs sent, $(data_from "$c" "$port")" \
	    "segments with data sent, $(syns_from "$s" "$port") SYNs and $d segments with data at the server;" \
	    "flowcutd: $(grep -c "cut (tls) tcp $(bracket "$fam" "$(addr C "$fam")"):$port -> .* in hardware" "$run/flowcutd.log") cut in hardware"
	[ "$(syns_from "$s" "$port")" -ge 1 ] || { say_fail "$n: the server never saw s_client's SYN"; rc=1; }
	[ "$d" -eq 0 ] || { say_fail "$n: $d segments of the listed hello reached the server"; rc=1; }
	! grep -qx "$port" "$run/tls-server.log" 2>/dev/null || { say_fail "$n: the server shook hands with port $port"; rc=1; }
	grep -q "cut (tls) tcp $(bracket "$fam" "$(addr C "$fam")"):$port -> .* in hardware" "$run/flowcutd.log" ||
		{ say_fail "$n: flowcutd logged no cut in hardware of port $port"; rc=1; }
	return $rc
}
# curl over HTTPS, unlisted: the file whole (bytes and sha256).  fam file out [curl args]
curl_whole() {
	local fam=$1 f=$2 out=$3 rc=0 t0 ms
	shift 3
	t0=$(date +%s%N)
	"$lab" exec "$L" client curl -fsS -g --max-time 40 --connect-timeout 15 --cacert "$run/tls/cert.pem" "$@" \
		-o "$out" "https://$(bracket "$fam" "$(addr S "$fam")")/$f" 2>"$out.err" ||
		{ say_fail "curl (IPv$fam) failed: $(cat "$out.err")"; rc=1; }
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	say "curl (IPv$fam, unlisted): $(size "$out") of $(size "$run/www/$f") bytes in $ms ms"
	[ "$(size "$out")" = "$(size "$run/www/$f")" ] && [ "$(sha "$out")" = "$(sha "$run/www/$f")" ] ||
		{ say_fail "curl (IPv$fam): received $(size "$out") bytes sha256 $(sha "$out"), sent $(size "$run/www/$f") sha256 $(sha "$run/www/$f")"; rc=1; }
	return $rc
}

# The host path during a flood (case 5): pings (IPv4, IPv6: 100 a second
# for SECS) and, once a second, a new TCP connection for a small file over
# plain HTTP; host_path_start SECS, then host_path_end NAME (asserts)
host_path_start() {
	local n=$(( $1 * 100 ))
	# -w: ping ends itself and says its figures (SIGINT, not a TERM, from timeout if it must)
	env --default-signal=INT timeout -s INT $(( $1 + 8 )) "$lab" exec "$L" client \
		ping -q -n -c "$n" -i 0.01 -W 2 -w $(( $1 + 5 )) "$S4" >"$run/ping4.out" 2>&1 &
	env --default-signal=INT timeout -s INT $(( $1 + 8 )) "$lab" exec "$L" client \
		ping -6 -q -n -c "$n" -i 0.01 -W 2 -w $(( $1 + 5 )) "$S6" >"$run/ping6.out" 2>&1 &
	(
		ok=0 tries=0
		for _ in $(seq "$1"); do
			tries=$((tries + 1))
			if "$lab" exec "$L" client curl -fsS --max-time 5 -o "$run/small.got" "http://$S4/small" 2>>"$run/http.err" &&
				cmp -s "$run/small.got" "$run/www/small"; then ok=$((ok + 1)); fi
			rm -f "$run/small.got"
			sleep 1
		done
		echo "$ok $tries" >"$run/http.res"
	) &
	hp_http=$!
}
host_path_end() { # name
	local f tx rx loss rc=0 ok tries
	wait "$hp_http" 2>/dev/null
	for f in 4 6; do
		wait_for 100 grep -q "packets transmitted" "$run/ping$f.out" || true
		read -r tx rx <<<"$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) \(packets \)\{0,1\}received.*/\1 \2/p' "$run/ping$f.out")"
		[ -n "${tx:-}" ] || { say_fail "$1: ping (IPv$f) said nothing: $(tail -2 "$run/ping$f.out")"; rc=1; continue; }
		loss=$(( tx - rx ))
		say "$1: ping IPv$f: $rx of $tx answered ($loss lost)"
		[ $(( loss * 100 )) -le "$tx" ] || { say_fail "$1: ping (IPv$f) lost $loss of $tx, over 1 %"; rc=1; }
	done
	read -r ok tries <"$run/http.res" || ok=0 tries=0
	say "$1: a new HTTP connection for 20 kB, once a second: $ok of $tries whole"
	[ "$tries" -ge 1 ] && [ "$ok" = "$tries" ] || { say_fail "$1: $((tries - ok)) of $tries HTTP fetches failed: $(tail -2 "$run/http.err" 2>/dev/null)"; rc=1; }
	return $rc
}

# after a host path check that failed (rc 2): where the frames went over the flood
wire_said() { # rc
	[ "$1" = 2 ] || return 0
	say "the host path check failed with the coprocessor's ring losing $(d_of 1 wire_RX_MISSED) frames (RX_MISSED)" \
	    "and the veths $(d_of 1 wire_KERNEL_RX_DROPPED) over the flood, the up ring full $(d_of 1 NPU_UP_RING_FULL):" \
	    "the worker short of CPU (2 cores: trafgen, the relay, the ends beside it)"
}
# a victim's (curl's) port to PORT of the server, from ss in the client's namespace
victim_port() { # fam port
	"$lab" exec "$L" client ss -Htn state established "( dport = :$2 )" |
		awk -v a="$(bracket "$1" "$(addr S "$1")")" -v p="$2" '$4 == a ":" p { n = split($3, x, ":"); print x[n]; exit }'
}
# one spoofed segment of each of the plan's kinds, to each family's victim on PORT
spoof_round() { # label port plan
	local f
	for f in 4 6; do
		say "$1, IPv$f (the victim's port ${vport[$f-$2]} to $2):"
		timeout 10 "$lab" exec "$L" client python3 "$PY" spoof --src "$(addr C "$f")" --dst "$(addr S "$f")" \
			--sport "${vport[$f-$2]}" --dport "$2" --hello "$run/hello.hex" --plan "$3" >"$run/spoof$f-$2.out" 2>&1 ||
			{ say_fail "the spoof (IPv$f) did not run: $(tail -2 "$run/spoof$f-$2.out")"; return 1; }
		grep "^#" "$run/spoof$f-$2.out" | sed 's/^# /#   /'
	done
}
# the victims' bytes received, every 0.2 s, in $run/progress ("TIME SIZE..." a line)
progress_start() {
	(
		while :; do
			printf '%s' "$(date +%s.%N)"
			for k in 4-443 6-443 4-8443 6-8443; do printf ' %s' "$(size "$run/got$k")"; done
			echo
			sleep 0.2
		done
	) >"$run/progress" 2>/dev/null &
	prog_pid=$!
}
# each victim's longest stall before its end (no byte for that long, the
# file not whole; till the sampling stopped when it never was) and
# its bytes over the flood: "KEY STALL_S AT_S FLOOD_BYTES" lines, times from t0
progress_read() { # t0_ns flood_t0_ns flood_t1_ns
	python3 - "$run/progress" "$@" "$(size "$run/www/mid")" "$(size "$run/www/big")" <<-'EOF'
	import sys
	rows = [[float(x) for x in l.split()] for l in open(sys.argv[1]) if len(l.split()) == 5]
	t0, f0, f1 = (float(x) / 1e9 for x in sys.argv[2:5])
	sizes = [int(sys.argv[5])] * 2 + [int(sys.argv[6])] * 2
	for i, k in enumerate(("4-443", "6-443", "4-8443", "6-8443"), 1):
	    end = sizes[i - 1]
	    best, at, since = 0.0, 0.0, None
	    for r in rows:
	        if since is None or r[i] != since[1]:
	            since = (r[0], r[i])
	        elif r[i] < end and r[0] - since[0] > best:
	            best, at = r[0] - since[0], since[0] - t0
	    during = [r[i] for r in rows if f0 <= r[0] <= f1]
	    print(k, "%.1f" % best, "%.1f" % at, int(during[-1] - during[0]) if len(during) > 1 else 0)
	EOF
}
victim_log() { # fam port: flowcutd's lines on the victim's tuple
	grep -F "tcp $(bracket "$1" "$(addr C "$1")"):${vport[$1-$2]} -> " "$run/flowcutd.log"
}

# ---- the tests ----

# 1. A spoofed segment of a running download's 5-tuple with a listed hello
# aims nothing.  Four victims (curl, unlisted, to s_server): IPv4 and IPv6
# to 443 (10 MB at 1.2 MB/s, 8 s: spoofed at once, while the inspector
# remembers them) and to 8443 (24 MB, 20 s: spoofed 12 s after their
# offload, when the inspector has forgotten them - 10 s after their last
# frame up - and then flooded, 2,000 a second a family for 3 s).
t_spoof() {
	local f p rc=0 plan=ack:0,ack:rand,ack:cur,syn:0,syn:rand,syn:cur t_off cur n k st at fb fl_t0 fl_t1 prog_pid
	local -A vport cpid spid
	setup sserver || return 1
	head -c $((24 * 1048576)) /dev/urandom >"$run/www/big"
	head -c $((10 * 1048576)) /dev/urandom >"$run/www/mid"
	for p in 443 8443; do
		for f in 4 6; do
			"$lab" exec "$L" client curl -fsS -g --max-time 45 --limit-rate 1200K --cacert "$run/tls/cert.pem" \
				-o "$run/got$f-$p" "https://$(bracket "$f" "$(addr S "$f")"):$p/$([ $p = 443 ] && echo mid || echo big)" \
				2>"$run/curl$f-$p.err" &
			cpid[$f-$p]=$!
		done
	done
	for p in 443 8443; do
		for f in 4 6; do
			wait_for 50 forwarding "$f" "$p" || { say_fail "the victim (IPv$f to $p) never forwarded in the fast path"; conns; return 1; }
			vport[$f-$p]=$(victim_port "$f" "$p")
			[ -n "${vport[$f-$p]}" ] || { say_fail "no port of the victim (IPv$f to $p) in ss"; return 1; }
		done
	done
	t_off=$(date +%s%N)
	progress_start
	say "the victims (curl, unlisted), all four in the fast path (CUT_THRU): IPv4 ${vport[4-443]} and IPv6 ${vport[6-443]} to 443," \
	    "IPv4 ${vport[4-8443]} and IPv6 ${vport[6-8443]} to 8443"
	snap 0
	spoof_round "one of each while the inspector remembers the victim" 443 "$plan" || rc=1
	sleep "$(awk -v t="$t_off" -v n="$(date +%s%N)" 'BEGIN { d = 12 - (n - t) / 1e9; printf "%.2f", (d > 0 ? d : 0) }')"
	spoof_round "one of each 12 s after the offload (the inspector: $(stat_of inspector.entries) entries)" 8443 "$plan" || rc=1
	snap 1
	delta 0 1
	fl_t0=$(date +%s%N)
	for f in 4 6; do
		cur=$(sed -n 's/^# spoof: sniffed next seq \([0-9]*\) ack \([0-9]*\).*/\1:\2/p' "$run/spoof$f-8443.out")
		timeout 10 "$lab" exec "$L" client python3 "$PY" spoof --src "$(addr C "$f")" --dst "$(addr S "$f")" \
			--sport "${vport[$f-8443]}" --dport 8443 --hello "$run/hello.hex" --plan "$plan" ${cur:+--cur "$cur"} \
			--rate 2000 --secs 3 --count 7000 >"$run/flood$f.out" 2>&1 &
		spid[$f]=$!
	done
	for f in 4 6; do
		wait "${spid[$f]}" || { say_fail "the spoof flood (IPv$f) failed: $(tail -2 "$run/flood$f.out")"; rc=1; }
		say "the flood on the IPv$f victim to 8443: $(grep "^# spoof: [a-z]*:" "$run/flood$f.out" | sed 's/^# spoof: //')"
	done
	fl_t1=$(date +%s%N)
	snap 2
	delta 1 2
	for p in 443 8443; do
		for f in 4 6; do
			wait "${cpid[$f-$p]}" || true
			local file=$run/www/big got=$run/got$f-$p
			[ "$p" = 443 ] && file=$run/www/mid
			say "the victim IPv$f to $p (port ${vport[$f-$p]}): $(size "$got") of $(size "$file") bytes;" \
			    "flowcutd: $(victim_log "$f" "$p" | grep -c "its JA4 is listed") CUT decisions on its tuple," \
			    "$(victim_log "$f" "$p" | grep -c "another connection of the tuple): not cut") not this connection," \
			    "$(victim_log "$f" "$p" | grep -c "cut (tls)") cuts"
			[ "$(size "$got")" = "$(size "$file")" ] && [ "$(sha "$got")" = "$(sha "$file")" ] ||
				{ say_fail "the victim IPv$f to $p did not end whole: $(size "$got") bytes, sha256 $(sha "$got"); curl: $(cat "$run/curl$f-$p.err")"; rc=1; }
			n=$(victim_log "$f" "$p" | grep -c "cut (tls)")
			[ "$n" = 0 ] || { say_fail "flowcutd cut the victim IPv$f to $p: $(victim_log "$f" "$p" | grep "cut (tls)" | head -1)"; rc=1; }
		done
	done
	kill "$prog_pid" 2>/dev/null
	while read -r k st at fb; do
		say "the victim IPv${k%%-*} to ${k#*-}: its longest stall ${st} s (from ${at} s after the offload)," \
		    "$fb bytes received over the spoof flood (from $(( (fl_t0 - t_off) / 1000000000 )) s to $(( (fl_t1 - t_off) / 1000000000 )) s)"
		[ "$(echo "$st <= 3" | bc)" = 1 ] ||
			{ say_fail "the victim IPv${k%%-*} to ${k#*-} stalled ${st} s (at most 3 s: a spoof aimed at it held it)"; rc=1; }
	done < <(progress_read "$t_off" "$fl_t0" "$fl_t1")
	snap 3
	delta 0 3
	[ "$(d_of 3 cuts.tls.in_hardware)" = 0 ] && [ "$(d_of 3 cuts.tls.on_host)" = 0 ] && [ "$(d_of 3 inspector.cuts)" = 0 ] &&
		[ "$(d_of 3 inspector.cut_not_offloaded)" = 0 ] ||
		{ say_fail "flowcutd cut something: cuts.tls +$(d_of 3 cuts.tls.in_hardware) in hardware, +$(d_of 3 cuts.tls.on_host) on the host, inspector.cuts +$(d_of 3 inspector.cuts), cut_not_offloaded +$(d_of 3 inspector.cut_not_offloaded)"; rc=1; }
	[ "$(d_of 3 inspector.cut_ja4)" -le "$(d_of 3 inspector.cut_not_this_conn)" ] ||
		{ say_fail "$(d_of 3 inspector.cut_ja4) CUT decisions (cut_ja4), only $(d_of 3 inspector.cut_not_this_conn) of them cut_not_this_conn"; rc=1; }
	say "over the case: the spoofs made $(d_of 3 inspector.cut_ja4) CUT decisions, cut_not_this_conn +$(d_of 3 inspector.cut_not_this_conn);" \
	    "the inspector dropped $(d_of 3 inspector.frames_dropped) frames, held $(d_of 3 inspector.frames_held), released $(d_of 3 inspector.frames_released)"
	[ "$(d_of 3 inspector.frames_released)" = 0 ] ||
		{ say_fail "the inspector handed on $(d_of 3 inspector.frames_released) held frames (released) after the victims passed"; rc=1; }
	[ "$(d_of 2 FROM_WIRE_RX)" -ge 6000 ] ||
		{ say_fail "the coprocessor took in $(d_of 2 FROM_WIRE_RX) frames over the flood, fewer than 6,000"; rc=1; }
	return $rc
}

# trafgen's frames: to fp0's MAC (the client's next hop), from c0's; random
# sources in 198.19.0.0/16 (routed back out of fp0 through the client, as
# lab/flood.sh has them), random ports, to the server's 443; quic: UDP,
# each datagram RFC 9001 A.2's client Initial (1,200 bytes, a whole hello
# that decrypts: a new flow's keys and open, the most a datagram costs)
flood_cfg() { # kind(seg6|syn|quic)
	local fmac cmac
	fmac=$(ex host cat /sys/class/net/fp0/address)
	cmac=$(ex client cat /sys/class/net/c0/address)
	echo "{ eth(da=$fmac, sa=$cmac, type=0x0800),"
	echo "  ipv4(sa=198.19.0.0, da=$S4, ttl=64, df, id=drnd(), sa[2:2]=drnd()),"
	if [ "$1" = quic ]; then
		echo "  udp(sp=drnd(1024, 65535), dp=443),"
		tr -d '\n' <"$top/tests/tls/quic-rfc9001-a2-client-initial.hex" | sed 's/../0x&, /g; s/, $/ }/'
		echo
	elif [ "$1" = syn ]; then
		echo "  tcp(sp=drnd(1024, 65535), dp=443, seq=drnd(), syn, win=64240) }"
	else
		# 6 bytes: a handshake record's header and a ClientHello's type
		echo "  tcp(sp=drnd(1024, 65535), dp=443, seq=drnd(), ackseq=drnd(), ack, psh, win=64240),"
		echo "  0x16, 0x03, 0x01, 0x01, 0x00, 0x01 }"
	fi
}
flood_start() { # kind pps secs
	ex host ip route replace 198.19.0.0/16 via 198.18.0.2 dev fp0
	flood_cfg "$1" >"$run/flood-$1.cfg"
	fl_t0=$(date +%s%N)
	rm -f "$run/flood.t1"
	# SIGINT back to its default: a job in the background of a script has it ignored
	(
		env --default-signal=INT timeout -s INT -k 3 "$3" "$lab" exec "$L" client trafgen -i "$run/flood-$1.cfg" \
			-o c0 -P 1 -n $(( $2 * $3 )) -b "$2pps" >"$run/trafgen.out" 2>&1
		date +%s%N >"$run/flood.t1"
	) &
	fl_pid=$!
}
flood_end() { # label: waits, says what trafgen sent
	local sent ms
	wait "$fl_pid" 2>/dev/null
	ms=$(( ($(cat "$run/flood.t1" 2>/dev/null || date +%s%N) - fl_t0) / 1000000 ))
	sent=$(tr '\r' '\n' <"$run/trafgen.out" | sed -n 's/^ *\([0-9]*\) packets outgoing.*/\1/p' | head -1)
	fl_sent=${sent:-0}
	say "$1: trafgen sent $fl_sent frames in $ms ms ($(( fl_sent * 1000 / (ms > 0 ? ms : 1) )) a second)"
}

# 2 and 3: a random-source flood, the listed client cut and the unlisted one whole during it
t_flood() { # kind(seg6|syn) pps secs
	local kind=$1 pps=$2 FLOOD_SECS=$3 rc=0 held rel ent
	setup py || return 1
	head -c $((8 * 1048576)) /dev/urandom >"$run/www/mid"
	snap 0
	host_path_start "$FLOOD_SECS"
	flood_start "$kind" "$pps" "$FLOOD_SECS"
	sleep 1
	if [ "$kind" = syn ]; then
		# the clients once the inspector is full (65,536 entries: the oldest waiting make room)
		wait_for 220 stat_at_least inspector.evicted_waiting 1 || true
		say "the clients $(( ($(date +%s%N) - fl_t0) / 1000000 )) ms into the flood, the inspector holding $(stat_of inspector.entries) entries" \
		    "(evicted_waiting $(stat_of inspector.evicted_waiting))"
	fi
	listed_cut 4 "listed" || rc=1
	curl_whole 4 mid "$run/mid.got" || rc=1
	flood_end "the flood of $kind ($pps a second asked, $FLOOD_SECS s)"
	host_path_end "the host path" || rc=2
	snap 1
	delta 0 1
	wire_said $rc
	held=$(d_of 1 inspector.frames_held) rel=$(d_of 1 inspector.frames_released) ent=$(d_of 1 inspector.entries.now)
	say "frames of the flood: $fl_sent sent; the coprocessor took in $(d_of 1 FROM_WIRE_RX) (all frames), sent" \
	    "$(d_of 1 FROM_WIRE_TO_KN_NON_ACCEL) to the host as unknown connections, dropped $(d_of 1 FROM_WIRE_DROP_NEW_CONN_RATE)" \
	    "over the new-connection rate; the wire lost $(d_of 1 wire_RX_MISSED) + $(d_of 1 wire_KERNEL_RX_DROPPED);" \
	    "the relay's up ring full $(d_of 1 NPU_UP_RING_FULL)"
	[ "$(d_of 1 FROM_WIRE_RX)" -ge $(( fl_sent / 2 )) ] ||
		{ say_fail "the coprocessor took in $(d_of 1 FROM_WIRE_RX) frames, under half the flood's $fl_sent"; rc=1; }
	[ "$fl_sent" -ge $(( pps * FLOOD_SECS / 4 )) ] || { say_fail "the flood fell short: $fl_sent of $((pps * FLOOD_SECS))"; rc=1; }
	# no frame of the flood held or released as a hello: only the clients' (a hello or two each, retransmissions)
	[ "$held" -le 10 ] || { say_fail "the inspector held $held frames (the clients' hellos are 2)"; rc=1; }
	[ "$rel" -le 10 ] || { say_fail "the inspector released $rel held frames"; rc=1; }
	[ "$(d_of 1 inspector.passes_lost)" = 0 ] || { say_fail "passes_lost +$(d_of 1 inspector.passes_lost)"; rc=1; }
	[ "$(d_of 1 inspector.cut_ja4)" -ge 1 ] || { say_fail "inspector.cut_ja4 did not rise"; rc=1; }
	[ "$(d_of 1 inspector.reading.now)" = 0 ] || { say_fail "inspector.reading $(d_of 1 inspector.reading.now) after the flood"; rc=1; }
	if [ "$kind" = seg6 ]; then
		# no entry from them: the clients' few (probe, s_client, curl, HTTP fetches) at most
		[ "$ent" -le 30 ] || { say_fail "inspector.entries $ent after the flood of 6-byte segments (the clients make a few)"; rc=1; }
		[ "$(d_of 1 inspector.not_seen)" = 0 ] || { say_fail "inspector.not_seen +$(d_of 1 inspector.not_seen): entries made from segments"; rc=1; }
	else
		say "half-open: inspector.entries $ent (bound 65,536), evicted_waiting +$(d_of 1 inspector.evicted_waiting)," \
		    "evicted +$(d_of 1 inspector.evicted), SYNs the host took in $(d_of 1 FROM_WIRE_TO_KN_NON_ACCEL) or fewer"
		[ "$ent" -le 65536 ] || { say_fail "inspector.entries $ent over its bound 65,536"; rc=1; }
		[ "$(d_of 1 inspector.evicted)" = 0 ] || { say_fail "entries being read were evicted (undecided): +$(d_of 1 inspector.evicted)"; rc=1; }
	fi
	return $rc
}

# 7. A flood of QUIC Initials from random sources (trafgen, QUIC_PPS a
# second for FLOOD_SECS): each a new flow whose Initial decrypts whole (the
# most one costs: its keys, its open, its hello), parsed by
# flowcut-inspect, never on the relay's thread - the host path keeps
# working (case 5), the listed s_client is cut and curl whole during it,
# and the flood's own inspection is counted: every new QUIC flow that
# reached the inspector decided (passed: not listed; quic_over_rate past
# 5,000 a second; parser_busy when its queue was full), none left reading.
t_quic() {
	local rc=0 asked q_pass q_rate q_busy q_late
	setup py || return 1
	head -c $((8 * 1048576)) /dev/urandom >"$run/www/mid"
	snap 0
	host_path_start "$FLOOD_SECS"
	flood_start quic "$QUIC_PPS" "$FLOOD_SECS"
	sleep 1
	listed_cut 4 "listed" || rc=1
	curl_whole 4 mid "$run/mid.got" || rc=1
	flood_end "the flood of QUIC Initials ($QUIC_PPS a second asked, $FLOOD_SECS s)"
	host_path_end "the host path" || rc=2
	sleep 1
	snap 1
	delta 0 1
	wire_said $rc
	asked=$(d_of 1 inspector.asked) q_pass=$(d_of 1 inspector.passed) q_rate=$(d_of 1 inspector.quic_over_rate)
	q_busy=$(d_of 1 inspector.parser_busy) q_late=$(d_of 1 inspector.parser_late)
	say "frames of the flood: $fl_sent sent; the coprocessor took in $(d_of 1 FROM_WIRE_RX), sent" \
	    "$(d_of 1 FROM_WIRE_TO_KN_NON_ACCEL) to the host as unknown flows, dropped $(d_of 1 FROM_WIRE_DROP_NEW_CONN_RATE)" \
	    "over the new-connection rate; the relay's up ring full $(d_of 1 NPU_UP_RING_FULL)"
	say "the inspector: ${asked:-0} questions to flowcut-inspect, ${q_pass:-0} flows passed (whole, not listed)," \
	    "${q_rate:-0} over the 5,000 a second not read, ${q_busy:-0} its queue or every reading slot full," \
	    "${q_late:-0} late, $(d_of 1 inspector.answers_stale) answers stale;" \
	    "reading now $(d_of 1 inspector.reading.now)"
	[ "$fl_sent" -ge $(( QUIC_PPS * FLOOD_SECS / 4 )) ] || { say_fail "the flood fell short: $fl_sent of $((QUIC_PPS * FLOOD_SECS))"; rc=1; }
	[ "${asked:-0}" -ge 1000 ] || { say_fail "flowcut-inspect was asked ${asked:-0} questions: the flood did not reach it"; rc=1; }
	[ "${q_pass:-0}" -ge $(( ${asked:-0} / 2 )) ] || { say_fail "of ${asked:-0} Initials asked, ${q_pass:-0} passed whole"; rc=1; }
	[ "$(d_of 1 inspector.reading.now)" = 0 ] || { say_fail "inspector.reading $(d_of 1 inspector.reading.now) after the flood"; rc=1; }
	[ "$(d_of 1 inspector.cut_ja4)" -ge 1 ] || { say_fail "inspector.cut_ja4 did not rise"; rc=1; }
	return $rc
}

# 4. Real connections each sending the listed hello, HELLO_RATE a second for 4 s
t_hellos() {
	local rc=0 out started connected sentn answered cutl ja4d srv hs
	setup py || return 1
	head -c $((8 * 1048576)) /dev/urandom >"$run/www/mid"
	cap_start server s0 "$run/hf.server.pcap" "tcp dst port 443 and src host $C4 and greater 100" || return 1
	snap 0
	host_path_start 5
	timeout 20 "$lab" exec "$L" client python3 "$PY" hellos --dst "$S4" --hello "$run/hello.hex" \
		--rate "$HELLO_RATE" --secs 4 --hold 1.5 --max $(( HELLO_RATE * 4 )) --ports "$run/hf.ports" \
		>"$run/hf.json" 2>"$run/hf.err" &
	local hp=$!
	sleep 1
	curl_whole 4 mid "$run/mid.got" || rc=1
	wait "$hp" || { say_fail "the hello flood failed: $(tail -3 "$run/hf.err")"; rc=1; }
	host_path_end "the host path" || rc=2
	sleep 1
	cap_stop "$run/hf.server.pcap"
	snap 1
	delta 0 1
	wire_said $rc
	out=$(cat "$run/hf.json")
	read -r started connected sentn answered <<<"$(python3 -c 'import json, sys
d = json.loads(sys.argv[1]); print(d["started"], d["connected"], d["sent"], d["answered"])' "$out")"
	say "the hello flood: $out" | cut -c1-400
	cutl=$(sed -n "s/^flowcutd: cut (tls) tcp $C4:\([0-9]*\) -> .* in hardware\$/\1/p" "$run/flowcutd.log" | sort -u |
		grep -cFxf "$run/hf.ports")
	ja4d=$(d_of 1 inspector.cut_ja4)
	# the server's side: segments with data from the flood's ports (curl's excepted)
	srv=$(tshark -r "$run/hf.server.pcap" -Y "tcp.len > 0" -T fields -e tcp.srcport 2>/dev/null | sort -u |
		grep -cFxf "$run/hf.ports")
	say "connections: $started started, $connected connected, $sentn sent the hello, $answered answered;" \
	    "cut_ja4 +$ja4d, flowcutd's \"cut (tls)\" lines for $cutl of their ports, cuts.tls +$(d_of 1 cuts.tls.in_hardware)" \
	    "in hardware +$(d_of 1 cuts.tls.on_host) on the host; ports whose data reached the server: $srv"
	[ "$sentn" -ge $(( HELLO_RATE * 4 / 2 )) ] || { say_fail "only $sentn hellos sent of $((HELLO_RATE * 4))"; rc=1; }
	[ "$answered" = 0 ] || { say_fail "$answered connections got an answer from the server: not cut"; rc=1; }
	[ "$ja4d" -ge "$sentn" ] || { say_fail "cut_ja4 +$ja4d, fewer than the $sentn hellos sent"; rc=1; }
	[ "$cutl" -ge "$sentn" ] || { say_fail "flowcutd logged a cut for $cutl ports of the $sentn that sent the hello"; rc=1; }
	[ "$srv" = 0 ] || { say_fail "data from $srv of the flood's ports reached the server"; rc=1; }
	hs=$(sort -u "$run/tls-server.log" | grep -cFxf "$run/hf.ports")
	[ "$hs" = 0 ] || { say_fail "the server shook hands with $hs of the flood's connections"; rc=1; }
	[ "$(d_of 1 inspector.passes_lost)" = 0 ] || { say_fail "passes_lost +$(d_of 1 inspector.passes_lost)"; rc=1; }
	[ "$(d_of 1 inspector.frames_released)" -le 5 ] ||
		{ say_fail "the inspector released $(d_of 1 inspector.frames_released) held frames"; rc=1; }
	return $rc
}

tests=(
	"one spoofed segment, then a flood of them, of a download's 5-tuple with a listed hello aims nothing (IPv4, IPv6)|100|t_spoof"
	"a flood of 6-byte segments from random sources makes no entry; listed cut, unlisted whole, host path kept (IPv4)|75|t_flood seg6 $SEG6_PPS $FLOOD_SECS"
	"a flood of half-open connections: listed cut, unlisted whole, entries bounded, host path kept (IPv4)|100|t_flood syn $SYN_PPS $SYN_SECS"
	"a flood of real connections with a listed hello: every one cut, none lost; unlisted whole, host path kept (IPv4)|75|t_hellos"
	"a flood of QUIC Initials from random sources, each a new flow that decrypts: parsed by flowcut-inspect, counted; listed cut, unlisted whole, host path kept (IPv4)|75|t_quic"
)

lab_suite fcif per-test
