#!/usr/bin/env bash
# TLS fingerprints through the inspector, in the lab (issue 9, trigger 3):
# real clients (openssl s_client, curl) to `openssl s_server -WWW` on port
# 443 of the lab's server, flowcutd's watched_fingerprints set.  The
# fingerprint each test lists is computed in the test, by `flowcutctl
# fingerprint` on a capture of the same client taken in the client's
# namespace, never written in here.
#
#   - s_client's JA4 (or JA3) listed: curl, another client, downloads a
#     file whole (byte count and sha256 at both ends) and the download is
#     forwarded in the fast path (CUT_THRU); then s_client is cut: no byte
#     of its ClientHello reaches the server (a capture on the server's
#     side holds its handshake and nothing more), its retransmissions are
#     dropped on the coprocessor (DROP_IPS_VERDICT), flowcutd counts the
#     cut in hardware (trigger tls);
#   - a ClientHello over two TCP segments (s_client with a long ALPN
#     list): read whole and passed, then, listed, cut with neither segment
#     reaching the server; the file with a bad line (told by number, never
#     by its text; the good lines in force), then gone (the last good kept);
#   - with Cut in hardware off: curl offloaded (FWD) once passed, the
#     listed s_client cut on the host, nothing of its hello at the server;
#   - QUIC: RFC 9001's client Initial sent to UDP 443 (no QUIC client is
#     packaged in Debian 12): passed byte for byte, then, its JA4 ('q')
#     listed, none of its datagrams reaches the server.
#
# Each test builds a lab of its own, is bounded in time, and tears it
# down even when it fails (tests/lab/lib.sh).  Root only.  ONLY=pattern
# runs the tests whose name matches.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"

S4=198.18.1.2 S6=2001:2:0:1::2	# the server
LAB_VARS="S4 S6"
LAB_TIMES=1
lab_down() {
	# shellcheck disable=SC2046
	kill -9 $(cat "$run/flowcutd.pid" "$run/npu.pid" 2>/dev/null) 2>/dev/null
	"$lab" down "$L" >/dev/null 2>&1
}
lab_on_fail() {
	echo "flowcutctl counters:"
	"$ctl" --link "/run/flowcut-lab/$L/link" counters
	[ -f "$run/flowcutd.json" ] && { echo "flowcutd.json:"; cat "$run/flowcutd.json"; echo; }
	grep -h . "$run"/*.err 2>/dev/null | tail -5
}

# ---- helpers ----

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
stat_at_least() { [ "$(stat_of "$1")" -ge "$2" ]; }	# field N
# waits (5 s at most) until the stats' field is at least N
stat_ge() { wait_for 50 stat_at_least "$1" "$2"; }
cut_thru() { counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU; }
drop_ips() { counter FROM_WIRE_DROP_IPS_VERDICT; }

# a capture of port 443 in a namespace, until cap_stop: role iface file [proto]
cap_start() {
	"$lab" exec "$L" "$1" tcpdump --immediate-mode -i "$2" -U -s 0 -w "$3" "${4:-tcp}" port 443 2>"$3.err" &
	echo $! >"$3.pid"
	wait_for 50 grep -q listening "$3.err" || { say "tcpdump did not start: $(cat "$3.err")"; return 1; }
}
cap_stop() { # file
	local pid
	pid=$(cat "$1.pid")
	sleep 0.3	# the last frames written (-U: one write each)
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
# segments with data a client port sent, in a capture
data_from() { # capture port
	tshark -r "$1" -Y "tcp.srcport == $2 && tcp.len > 0" 2>/dev/null | wc -l
}
syns_from() { # capture port
	tshark -r "$1" -Y "tcp.srcport == $2 && tcp.flags.syn == 1" 2>/dev/null | wc -l
}

# openssl s_server -WWW on 443 (files from $run/www), a certificate of the test's own
server_up() {
	mkdir -p "$run/tls" "$run/www"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=flowcut-lab.test -addext "subjectAltName=IP:$S4,IP:$S6" \
		-keyout "$run/tls/key.pem" -out "$run/tls/cert.pem" 2>"$run/tls/req.err" ||
		{ say "openssl req failed: $(cat "$run/tls/req.err")"; return 1; }
	(cd "$run/www" && exec "$lab" exec "$L" server openssl s_server -accept 443 \
		-cert "$run/tls/cert.pem" -key "$run/tls/key.pem" -WWW >"$run/s_server.log" 2>&1) &
	wait_for 50 bash -c "$lab exec $L server ss -Htln 'sport = :443' | grep -q ." ||
		{ say "s_server is not listening: $(cat "$run/s_server.log")"; return 1; }
}

# flowcutd watches $run/ja.txt (empty to start): waits until it has read it
watch_up() {
	: >"$run/ja.txt"
	"$ctl" --settings "$run/settings.conf" settings set watched_fingerprints "$run/ja.txt" >/dev/null ||
		return 1
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: 0 in force" "$run/flowcutd.log" ||
		{ say "flowcutd did not read $run/ja.txt"; return 1; }
}
# lists one fingerprint (atomically: a rename into the folder) and waits until flowcutd has it
list() { # fingerprint
	printf '# the test client\n%s\n' "$1" >"$run/ja.txt.new" && mv "$run/ja.txt.new" "$run/ja.txt"
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: 1 in force" "$run/flowcutd.log" ||
		{ say "flowcutd did not take $1"; return 1; }
}

# s_client, one handshake, in the client's namespace: fam file [args...]; its output in file
s_client() {
	local fam=$1 out=$2
	shift 2
	"$lab" exec "$L" client timeout 6 openssl s_client -connect "$(bracket "$fam" "$(addr S "$fam")"):443" \
		-CAfile "$run/tls/cert.pem" "$@" </dev/null >"$out" 2>&1
}

# The client is cut: no byte of its hello reached the server, its
# retransmissions dropped on the coprocessor, the cut counted.  `port` is
# its port in the client's capture ($1.client.pcap), whose hello is the
# listed one ($2).
cut_checks() { # name listed
	local c=$run/$1.client.pcap s=$run/$1.server.pcap port ja4 ja3 d rc=0
	read -r port ja4 ja3 <<<"$(hello_of "$c")" || { say "$1: no hello in the client's capture"; return 1; }
	[ "$ja4" = "$2" ] || [ "$ja3" = "$2" ] || { say "$1: the client sent $ja4 / $ja3, not $2"; rc=1; }
	d=$(data_from "$s" "$port")
	say "$1: the server's side saw $(syns_from "$s" "$port") SYN and $d segments with data from port $port" \
	    "(the client's side: $(data_from "$c" "$port") sent)"
	[ "$(syns_from "$s" "$port")" -ge 1 ] || { say "$1: the server never saw the SYN: the capture is wrong"; rc=1; }
	[ "$d" -eq 0 ] || { say "$1: bytes of the hello reached the server"; rc=1; }
	grep -q "cut (tls) tcp .*:$port -> .* in hardware" "$run/flowcutd.log" ||
		{ say "$1: flowcutd logged no cut in hardware of port $port"; rc=1; }
	[ $rc -eq 0 ]
}

# ---- the tests ----

# 1. s_client's fingerprint (JA4 or JA3) listed: curl downloads whole, in
# the fast path; then s_client is cut.
t_listed() { # fam ja4|ja3
	local fam=$1 kind=$2 F port ja4 ja3 cj4 cj3 X0C X0D XC XD want sz rc=0
	server_up && watch_up || return 1
	head -c $((48 * 1048576)) /dev/urandom >"$run/www/big" || return 1
	# the probe: s_client's hello, captured on the client's side (nothing listed: it passes)
	cap_start client c0 "$run/probe.pcap" || return 1
	s_client "$fam" "$run/probe.out" || { say "s_client failed: $(tail -3 "$run/probe.out")"; return 1; }
	cap_stop "$run/probe.pcap"
	read -r port ja4 ja3 <<<"$(hello_of "$run/probe.pcap")" || { say "the probe: no hello"; return 1; }
	say "s_client (port $port): JA4 $ja4, JA3 $ja3"
	stat_ge inspector.passed 1 || { say "the inspector did not pass the probe"; return 1; }
	if [ "$kind" = ja4 ]; then F=$ja4; else F=$ja3; fi
	list "$F" || return 1
	# curl, another client: whole, then in the fast path
	cap_start client c0 "$run/curl.pcap" || return 1
	X0C=$(cut_thru)
	"$lab" exec "$L" client curl -fsS -g --max-time 60 --cacert "$run/tls/cert.pem" \
		-o "$run/got" "https://$(bracket "$fam" "$(addr S "$fam")")/big" 2>"$run/curl.err" ||
		{ say "curl failed: $(cat "$run/curl.err")"; rc=1; }
	XC=$(( $(cut_thru) - X0C ))
	cap_stop "$run/curl.pcap"
	read -r port cj4 cj3 <<<"$(hello_of "$run/curl.pcap")" || { say "no curl hello captured"; return 1; }
	sz=$(size "$run/www/big")
	say "curl (port $port, JA4 $cj4, JA3 $cj3): $(size "$run/got") of $sz bytes," \
	    "the fast path forwarded $XC frames (CUT_THRU)"
	[ "$cj4" != "$ja4" ] && [ "$cj3" != "$ja3" ] || { say "curl's fingerprint is s_client's: no test"; rc=1; }
	[ "$(size "$run/got")" = "$sz" ] && [ "$(sha "$run/got")" = "$(sha "$run/www/big")" ] ||
		{ say "received $(size "$run/got") bytes sha256 $(sha "$run/got"), sent $sz sha256 $(sha "$run/www/big")"; rc=1; }
	want=$(( sz / 1460 - 300 ))
	[ "$XC" -ge "$want" ] || { say "fewer than $want frames forwarded CUT_THRU"; rc=1; }
	# s_client again: its fingerprint is listed
	cap_start server s0 "$run/cut.server.pcap" && cap_start client c0 "$run/cut.client.pcap" || return 1
	X0D=$(drop_ips)
	if s_client "$fam" "$run/cut.out"; then say "s_client shook hands: not cut"; rc=1; fi
	XD=$(( $(drop_ips) - X0D ))
	cap_stop "$run/cut.client.pcap"
	cap_stop "$run/cut.server.pcap"
	stat_ge cuts.tls.in_hardware 1 || true	# the stats file is written once a second
	say "the listed s_client: the coprocessor dropped $XD of its frames (DROP_IPS_VERDICT)," \
	    "flowcutd cut $(stat_of cuts.tls.in_hardware) in hardware, the inspector dropped" \
	    "$(stat_of inspector.frames_dropped) frames"
	cut_checks cut "$F" || rc=1
	[ "$XD" -ge 1 ] || { say "no retransmission dropped on the coprocessor"; rc=1; }
	[ "$(stat_of cuts.tls.in_hardware)" -eq 1 ] || { say "cuts.tls.in_hardware is not 1"; rc=1; }
	[ "$(stat_of "inspector.cut_$kind")" -eq 1 ] || { say "inspector.cut_$kind is not 1"; rc=1; }
	[ $rc -eq 0 ]
}

# 2. A hello over two TCP segments (an ALPN list of 8 x 200 bytes):
# passed whole when nothing is listed, cut with neither segment through
# when its JA4 is.
t_two_segments() { # fam
	local fam=$1 alpn port ja4 ja3 segs held0 rc=0
	alpn=$(for c in a b c d e f g h; do printf '%s,' "$(head -c 200 /dev/zero | tr '\0' "$c")"; done)
	alpn=${alpn%,}
	server_up && watch_up || return 1
	cap_start client c0 "$run/big.pcap" || return 1
	held0=$(stat_of inspector.frames_held)
	s_client "$fam" "$run/big.out" -alpn "$alpn" || { say "s_client failed: $(tail -3 "$run/big.out")"; return 1; }
	cap_stop "$run/big.pcap"
	read -r port ja4 ja3 <<<"$(hello_of "$run/big.pcap")" || { say "no hello captured"; return 1; }
	segs=$(data_from "$run/big.pcap" "$port")
	# flowcutd's stats file is written once a second: wait for the one after the hello
	stat_ge inspector.frames_held $((held0 + 2)) || true
	say "s_client with a 1,600-byte ALPN list (port $port): JA4 $ja4, its first $segs segments with" \
	    "data; the inspector held $(( $(stat_of inspector.frames_held) - held0 )) frames and passed it"
	grep -q "^New, TLS" "$run/big.out" || { say "no handshake: $(tail -3 "$run/big.out")"; rc=1; }
	[ "$(( $(stat_of inspector.frames_held) - held0 ))" -ge 2 ] || { say "the hello was not held in two frames"; rc=1; }
	list "$ja4" || return 1
	cap_start server s0 "$run/cut.server.pcap" && cap_start client c0 "$run/cut.client.pcap" || return 1
	if s_client "$fam" "$run/cut.out" -alpn "$alpn"; then say "s_client shook hands: not cut"; rc=1; fi
	cap_stop "$run/cut.client.pcap"
	cap_stop "$run/cut.server.pcap"
	cut_checks cut "$ja4" || rc=1
	read -r port _ <<<"$(hello_of "$run/cut.client.pcap")"
	[ "$(data_from "$run/cut.client.pcap" "$port")" -ge 2 ] || { say "the client did not send its hello in two segments or more"; rc=1; }
	# the file: a bad line is told with its number, the good ones kept; gone, the last good stay
	printf '%s\nnot-a-fingerprint\n%s\n' "$ja4" "$ja3" >"$run/ja.txt.new" && mv "$run/ja.txt.new" "$run/ja.txt"
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: 2 in force (1 JA4, 1 JA3), 1 bad line$" "$run/flowcutd.log" ||
		{ say "flowcutd did not read the file with a bad line"; rc=1; }
	grep -q "watched fingerprints $run/ja.txt line 2: neither a JA4" "$run/flowcutd.log" ||
		{ say "the bad line was not told with its number"; rc=1; }
	# and never with its text: the file may be anything a path names
	! grep -q "not-a-fingerprint" "$run/flowcutd.log" || { say "the bad line's text is in the log"; rc=1; }
	rm "$run/ja.txt"
	wait_for 50 grep -q "watched fingerprints $run/ja.txt: No such file or directory; the last good (2) stay in force" \
		"$run/flowcutd.log" || { say "a file gone: not said, or the last good not kept"; rc=1; }
	stat_ge inspector.list.fingerprints 2 || { say "the stats lost the last good fingerprints"; rc=1; }
	say "the file with a bad line: $(grep -c "ja.txt line 2: neither" "$run/flowcutd.log") told;" \
	    "gone: error '$(stat_of inspector.list.error)', $(stat_of inspector.list.fingerprints) in force"
	[ $rc -eq 0 ]
}

# 3. Cut in hardware off: a connection to a TLS port is offloaded (FWD)
# only once the inspector has passed it, so curl's download goes whole and
# through the fast path (FROM_WIRE_TO_WIRE); the listed s_client is cut on
# the host: nothing of its hello at the server, its state killed, its
# retransmissions dropped by the inspector.
t_off() { # fam
	local fam=$1 port ja4 ja3 X0F XF X0I XI sz rc=0
	"$ctl" --settings "$run/settings.conf" settings set cut_in_hardware off >/dev/null || return 1
	wait_for 50 grep -q "cut in hardware off" "$run/flowcutd.log" || { say "the setting was not applied"; return 1; }
	server_up && watch_up || return 1
	head -c $((48 * 1048576)) /dev/urandom >"$run/www/big" || return 1
	cap_start client c0 "$run/probe.pcap" || return 1
	s_client "$fam" "$run/probe.out" || { say "s_client failed: $(tail -3 "$run/probe.out")"; return 1; }
	cap_stop "$run/probe.pcap"
	read -r port ja4 ja3 <<<"$(hello_of "$run/probe.pcap")" || { say "the probe: no hello"; return 1; }
	say "s_client (port $port): JA4 $ja4"
	list "$ja4" || return 1
	X0F=$(counter FROM_WIRE_TO_WIRE) X0I=$(stat_of offloaded_at_pass)
	"$lab" exec "$L" client curl -fsS -g --max-time 60 --cacert "$run/tls/cert.pem" \
		-o "$run/got" "https://$(bracket "$fam" "$(addr S "$fam")")/big" 2>"$run/curl.err" ||
		{ say "curl failed: $(cat "$run/curl.err")"; rc=1; }
	XF=$(( $(counter FROM_WIRE_TO_WIRE) - X0F ))
	sz=$(size "$run/www/big")
	stat_ge offloaded_at_pass $((X0I + 1)) || true
	XI=$(( $(stat_of offloaded_at_pass) - X0I ))
	say "curl: $(size "$run/got") of $sz bytes; offloaded when passed: $XI; the fast path" \
	    "forwarded $XF frames (FWD)"
	[ "$(size "$run/got")" = "$sz" ] && [ "$(sha "$run/got")" = "$(sha "$run/www/big")" ] ||
		{ say "received $(size "$run/got") bytes sha256 $(sha "$run/got"), sent $sz sha256 $(sha "$run/www/big")"; rc=1; }
	[ "$XI" -ge 1 ] || { say "curl's connection was not offloaded at its pass"; rc=1; }
	[ "$XF" -ge $(( sz / 1460 - 300 )) ] || { say "fewer than $(( sz / 1460 - 300 )) frames forwarded"; rc=1; }
	cap_start server s0 "$run/cut.server.pcap" && cap_start client c0 "$run/cut.client.pcap" || return 1
	if s_client "$fam" "$run/cut.out"; then say "s_client shook hands: not cut"; rc=1; fi
	cap_stop "$run/cut.client.pcap"
	cap_stop "$run/cut.server.pcap"
	read -r port _ <<<"$(hello_of "$run/cut.client.pcap")"
	stat_ge inspector.cut_not_offloaded 1 && stat_ge inspector.frames_dropped 2 || true
	say "the listed s_client (port $port): $(data_from "$run/cut.client.pcap" "$port") segments" \
	    "with data sent, $(data_from "$run/cut.server.pcap" "$port") at the server; cut on the host:" \
	    "$(stat_of inspector.cut_not_offloaded), frames dropped by the inspector: $(stat_of inspector.frames_dropped)"
	[ "$(syns_from "$run/cut.server.pcap" "$port")" -ge 1 ] || { say "the server never saw the SYN"; rc=1; }
	[ "$(data_from "$run/cut.server.pcap" "$port")" -eq 0 ] || { say "bytes of the hello reached the server"; rc=1; }
	[ "$(stat_of inspector.cut_not_offloaded)" -eq 1 ] || { say "inspector.cut_not_offloaded is not 1"; rc=1; }
	[ "$(stat_of inspector.frames_dropped)" -ge 2 ] || { say "no retransmission dropped by the inspector"; rc=1; }
	grep -q "cut (tls) tcp .*:$port -> .* on the host" "$run/flowcutd.log" ||
		{ say "flowcutd logged no cut on the host of port $port"; rc=1; }
	[ $rc -eq 0 ]
}

# 4. QUIC: no QUIC client is packaged in Debian 12 (its curl has no
# HTTP/3), so the client Initial of RFC 9001 A.2 is sent, as it is, from
# the client's namespace to UDP 443 of the server (4 times, 0.3 s apart, as
# a client retransmits).  Its JA4 ('q') is read from a capture of it by
# flowcutctl.  Not listed: every datagram reaches the server byte for
# byte.  Listed: none does, the inspector drops them; the host never saw
# the flow (its first datagram was held), so there is no state to kill.
quic_send() { # sport
	"$lab" exec "$L" client python3 -c 'import socket, sys, time
d = bytes.fromhex(open(sys.argv[1]).read().replace("\n", ""))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[2])))
for _ in range(4):
    s.sendto(d, (sys.argv[3], 443))
    time.sleep(0.3)' "$top/tests/tls/quic-rfc9001-a2-client-initial.hex" "$1" "$S4"
}
udp_from() { # capture port: datagrams from the port whose payload is the RFC's Initial
	tshark -r "$1" -Y "udp.srcport == $2" -T fields -e udp.payload 2>/dev/null |
		grep -cx "$(tr -d '\n' <"$top/tests/tls/quic-rfc9001-a2-client-initial.hex")"
}
t_quic() {
	local port ja4 ja3 got rc=0
	watch_up || return 1
	cap_start client c0 "$run/q.pcap" udp && cap_start server s0 "$run/q.server.pcap" udp || return 1
	quic_send 50000 || { say "the client could not send"; return 1; }
	cap_stop "$run/q.pcap"
	cap_stop "$run/q.server.pcap"
	read -r port ja4 ja3 <<<"$(hello_of "$run/q.pcap")" || { say "no QUIC hello captured"; return 1; }
	got=$(udp_from "$run/q.server.pcap" 50000)
	say "the RFC's Initial (port $port): JA4 $ja4, JA3 $ja3; not listed, $got of 4 reached the server" \
	    "whole; the inspector passed $(stat_of inspector.passed)"
	[ "${ja4:0:1}" = q ] || { say "not a QUIC JA4"; rc=1; }
	[ "$got" -eq 4 ] || { say "not every datagram reached the server whole"; rc=1; }
	list "$ja4" || return 1
	cap_start server s0 "$run/q2.server.pcap" udp || return 1
	quic_send 50001 || { say "the client could not send"; return 1; }
	cap_stop "$run/q2.server.pcap"
	got=$(tshark -r "$run/q2.server.pcap" -Y "udp.srcport == 50001" 2>/dev/null | wc -l)
	stat_ge inspector.cut_no_state 1 || true
	say "listed: $got datagrams from port 50001 at the server; the inspector dropped" \
	    "$(stat_of inspector.frames_dropped); no state to kill (nothing reached the host):" \
	    "$(stat_of inspector.cut_no_state)"
	[ "$got" -eq 0 ] || { say "datagrams of the listed client reached the server"; rc=1; }
	[ "$(stat_of inspector.cut_ja4)" -eq 1 ] || { say "inspector.cut_ja4 is not 1"; rc=1; }
	[ "$(stat_of inspector.frames_dropped)" -ge 4 ] || { say "fewer than 4 datagrams dropped"; rc=1; }
	grep -q "cut (tls) udp 198.18.0.2:50001 -> 198.18.1.2:443: no conntrack state" "$run/flowcutd.log" ||
		{ say "flowcutd logged no cut of the QUIC flow"; rc=1; }
	[ $rc -eq 0 ]
}

tests=(
	"s_client's JA4 listed: curl passes whole in the fast path, s_client is cut (IPv4)|120|t_listed 4 ja4"
	"s_client's JA3 listed: curl passes whole in the fast path, s_client is cut (IPv6)|120|t_listed 6 ja3"
	"a ClientHello over two segments: passed whole, then listed and cut (IPv4)|90|t_two_segments 4"
	"Cut in hardware off: curl offloaded once passed, s_client cut on the host (IPv4)|120|t_off 4"
	"QUIC: the RFC's client Initial passed whole, then its JA4 listed and cut (IPv4)|60|t_quic"
)

lab_suite fct per-test
