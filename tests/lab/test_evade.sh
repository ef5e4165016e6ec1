#!/usr/bin/env bash
# ClientHellos put on the wire to slip past the inspector (issue 29), in
# the lab: tests/lab/evade.py (python3's ssl on memory BIOs, so the script
# owns how the hello's bytes go out; raw frames beside the kernel's
# connection where a way needs them) to `openssl s_server -WWW` on port 443
# of the lab's server, flowcutd's watched_fingerprints set.
#
# For each way (evade.py's modes: slow, oob, segments, big, huge, reorder,
# tfo, rst, fin, syn, frag, decoy_csum, decoy_ttl), IPv4 and IPv6, and
# for plain, the control (the hello in one write: today's inspector cuts it):
#
#   - the reference: the same client with the same ssl settings, its hello
#     in one write, captured in the client's namespace; its JA4 and JA3
#     read from the capture by `flowcutctl fingerprint` (never written in
#     here), its JA3 held to tshark's tls.handshake.ja3;
#   - (a) nothing listed: the way is taken (seen in a capture on the
#     client's side: the pause, the urgent byte, 100+ segments, ...) and
#     the download ends whole (byte count and sha256 of the file at both
#     ends) - for frag, whose bytes the kernel's socket never sent, the
#     server's ServerHello in a capture on the server's side is the proof;
#   - (b) its JA4 (or JA3) listed: the same way again, and it is cut: the
#     client never completes its handshake, the server sent no ServerHello
#     to its port (capture in the server's namespace), flowcutd logged
#     "cut (tls) tcp ...:PORT -> ..." and inspector.cut_ja4 (cut_ja3) rose.
#     The listed hello is seen leaving the client (tshark's JA3 of the
#     port's hellos, its sequence analysis off too, so that a hello sent
#     again over a decoy's bytes is read).
#
# One lab for the whole suite (lab_suite ... shared): each test starts its
# own s_server, lists and unlists its fingerprint, and puts back what it
# changed (lab_reset: its processes, the TFO sysctls, the route's
# initcwnd, the list emptied).  Every step is bounded in time.  Root only.
# ONLY=pattern runs the tests whose name matches.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"

S4=198.18.1.2 S6=2001:2:0:1::2 C4=198.18.0.2 C6=2001:2::2
# the capture: the TLS port, and IP fragments (no TCP header in the later ones)
CAPF='tcp port 443 or (ip[6:2] & 0x1fff != 0) or (ip6 and ip6[6] == 44)'
LAB_VARS="S4 S6 C4 C6 CAPF"
LAB_TIMES=1
lab_down() {
	# shellcheck disable=SC2046
	kill -9 $(cat "$run/flowcutd.pid" "$run/npu.pid" 2>/dev/null) 2>/dev/null
	"$lab" down "$L" >/dev/null 2>&1
}
lab_on_fail() {
	echo "inspector: $(python3 -c 'import json, sys
i = json.load(open(sys.argv[1]))["inspector"]
print(", ".join("%s %s" % (k, i[k]) for k in ("hellos", "passed", "cut_ja4", "cut_ja3", "not_hello",
      "malformed", "too_big", "timeout", "closed", "frames_held", "frames_dup") if k in i))' \
		"$run/flowcutd.json" 2>/dev/null)"
	grep -h . "$run"/*.err 2>/dev/null | grep -v "^tcpdump: \|listening on\|packets \(captured\|received\|dropped\)" | tail -3
}
# after each test (the lab is shared): its processes in the client's and
# server's namespaces ended by pid, the TFO sysctls and the route's
# initcwnd put back, the list emptied
lab_reset() {
	local p r
	for r in client server; do
		for p in $(ip netns pids "$L-$r" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
		ip netns exec "$L-$r" sysctl -qw net.ipv4.tcp_fastopen=1 2>/dev/null
	done
	ip netns exec "$L-client" ip route change default via 198.18.0.1 dev c0 2>/dev/null
	ip netns exec "$L-client" ip -6 route change default via 2001:2::1 dev c0 2>/dev/null
	[ -e "$run/ja.txt" ] && { : >"$run/ja.txt.new"; mv "$run/ja.txt.new" "$run/ja.txt"; }
	return 0
}

# ---- helpers ----

addr() { local v=$1$2; echo "${!v}"; }	# addr S 6: the server's IPv6 address
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
sha() { sha256sum <"$1" | cut -c1-64; }
stat_of() { # the stats' field by its path ("inspector.cut_ja4")
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v = v[k]
print(v)' "$run/flowcutd.json" "$1"
}
stat_at_least() { [ "$(stat_of "$1")" -ge "$2" ]; }	# field N
# a source port of its own for every run of the suite (the lab is shared)
next_port() {
	local p
	p=$(cat "$run/evade.port" 2>/dev/null || echo 41000)
	echo $((p + 1)) >"$run/evade.port"
	echo "$p"
}
tsk() { tshark -r "$1" -Y "$2" -T fields "${@:3}" 2>/dev/null; }	# capture filter -e field...

# a capture in a namespace, until cap_stop: role iface file
cap_start() { # role iface file [filter]
	"$lab" exec "$L" "$1" tcpdump --immediate-mode -i "$2" -U -s 0 -w "$3" "${4:-$CAPF}" 2>"$3.err" &
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
caps_start() { cap_start client c0 "$1.client.pcap" && cap_start server s0 "$1.server.pcap"; }	# name
caps_stop() { cap_stop "$1.client.pcap"; cap_stop "$1.server.pcap"; }

# openssl s_server -WWW on 443 serving $run/www (a 4 MiB file f), a new one
# for each test (a cut connection leaves it waiting on that client)
server_up() {
	mkdir -p "$run/tls" "$run/www"
	[ -s "$run/tls/cert.pem" ] || openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-days 2 -subj /CN=flowcut-lab.test -addext "subjectAltName=IP:$S4,IP:$S6" \
		-keyout "$run/tls/key.pem" -out "$run/tls/cert.pem" 2>"$run/tls/req.err" ||
		{ say "openssl req failed: $(cat "$run/tls/req.err")"; return 1; }
	[ -s "$run/www/f" ] || head -c $((4 * 1048576)) /dev/urandom >"$run/www/f" || return 1
	server_down
	(cd "$run/www" && exec "$lab" exec "$L" server openssl s_server -accept 443 \
		-cert "$run/tls/cert.pem" -key "$run/tls/key.pem" -WWW >"$run/s_server.log" 2>&1) &
	echo $! >"$run/s_server.pid"
	wait_for 50 bash -c "$lab exec $L server ss -Htln 'sport = :443' | grep -q ." ||
		{ say "s_server is not listening: $(cat "$run/s_server.log")"; return 1; }
}
server_down() {
	local pid
	pid=$(cat "$run/s_server.pid" 2>/dev/null) || return 0
	kill "$pid" 2>/dev/null
	wait_for 30 bash -c "! $lab alive $L $pid"
	wait_for 30 bash -c "! $lab exec $L server ss -Htln 'sport = :443' | grep -q ."
	rm -f "$run/s_server.pid"
}

# the watched fingerprints file: none (0) or one fingerprint (1 F); waits
# until flowcutd has read it (a new "N in force" line: the lab is shared)
ja_set() { # 0 | 1 fingerprint
	local said="watched fingerprints $run/ja.txt: $1 in force" before
	before=$(grep -c "$said" "$run/flowcutd.log")
	if [ "$1" = 0 ]; then : >"$run/ja.txt.new"; else printf '# the evade.py client\n%s\n' "$2" >"$run/ja.txt.new"; fi
	mv "$run/ja.txt.new" "$run/ja.txt"
	grep -qs "^watched_fingerprints = $run/ja.txt\$" "$run/settings.conf" ||
		"$ctl" --settings "$run/settings.conf" settings set watched_fingerprints "$run/ja.txt" >/dev/null ||
		return 1
	wait_for 50 bash -c "[ \$(grep -c '$said' '$run/flowcutd.log') -gt $before ]" ||
		{ say "flowcutd did not read $run/ja.txt (${2:-empty})"; return 1; }
}

# evade.py in the client's namespace: out mode fam port [args...]; its output in out
evade() {
	local out=$1 mode=$2 fam=$3 port=$4
	shift 4
	"$lab" exec "$L" client timeout 90 python3 "$top/tests/lab/evade.py" "$mode" --server "$(addr S "$fam")" \
		--sport "$port" --cafile "$run/tls/cert.pem" --dev c0 "$@" >"$out" 2>&1
}
hello_len() { sed -n 's/.*a ClientHello of \([0-9]*\) bytes.*/\1/p' "$1" | head -1; }	# evade.py's output

# the one ClientHello of a capture, by flowcutctl: "PORT JA4 JA3", or its error
fp_of() { # capture
	"$ctl" --json fingerprint "$1" | python3 -c 'import json, sys
h = json.load(sys.stdin)["hellos"]
if len(h) != 1: sys.exit("%d hellos in the capture, not one" % len(h))
if "error" in h[0]: sys.exit("flowcutctl: " + h[0]["error"])
print(h[0]["client"].rsplit(":", 1)[1], h[0]["ja4"], h[0]["ja3"])'
}
# every JA3 tshark reads in the hellos from a port: as it is, with its
# sequence analysis off (a hello sent again over a decoy's bytes, or after
# an RST or FIN it took for the end, is read then), and each segment alone
# (a hello after an urgent byte, which tshark keeps in the stream)
ja3s_of() { # capture port
	{
		tsk "$1" "tcp.srcport == $2 && tls.handshake.type == 1" -e tls.handshake.ja3
		tshark -o tcp.analyze_sequence_numbers:FALSE -r "$1" -Y "tcp.srcport == $2 && tls.handshake.type == 1" \
			-T fields -e tls.handshake.ja3 2>/dev/null
		tshark -o tcp.analyze_sequence_numbers:FALSE -o tcp.desegment_tcp_streams:FALSE -r "$1" \
			-Y "tcp.srcport == $2 && tls.handshake.type == 1" -T fields -e tls.handshake.ja3 2>/dev/null
	} | sort -u | grep .
}
server_hellos() { tsk "$1" "tcp.dstport == $2 && tls.handshake.type == 2" -e frame.number | wc -l; }	# capture port
syns_from() { tsk "$1" "tcp.srcport == $2 && tcp.flags.syn == 1 && tcp.flags.ack == 0" -e frame.number | wc -l; }
first_data() { tsk "$1" "tcp.srcport == $2 && tcp.len > 0" -e frame.number | head -1; }	# its frame number

# The way was taken, as the client's capture shows it: says what it saw.
# mode capture port hello-length listed(0|1)
evasion_seen() {
	local m=$1 c=$2 p=$3 hl=$4 listed=$5 x y n
	local ph=unlisted:
	[ "$listed" = 1 ] && ph=listed:
	case "$m" in
	plain) say "$ph plain: the hello in one write (the control)" ;;
	slow)	# byte 1 alone, the next byte 2.8 s or more after it
		read -r x y <<<"$(tsk "$c" "tcp.srcport == $p && tcp.len > 0" -e frame.time_relative -e tcp.seq -e tcp.len |
			awk '$2 == 1 && $3 == 1 && t1 == "" { t1 = $1 } $2 > 1 && t2 == "" { t2 = $1 }
			     END { if (t1 != "" && t2 != "") printf "%.2f %s\n", t2 - t1, "ok"; else print "- -" }')"
		say "$ph slow: the first byte alone, the rest $x s after it"
		[ "$y" = ok ] && awk -v g="$x" 'BEGIN { exit !(g >= 2.8) }' ;;
	oob)	# one urgent byte, then the hello after it in the sequence
		x=$(tsk "$c" "tcp.srcport == $p && tcp.flags.urg == 1 && tcp.len == 1 && tcp.seq == 1" -e frame.number | wc -l)
		y=$(tsk "$c" "tcp.srcport == $p && tcp.seq == 2 && tcp.len > 0" -e frame.number | wc -l)
		say "$ph oob: $x urgent 1-byte segments at byte 1, $y segments with the hello at byte 2"
		[ "$x" -ge 1 ] && [ "$y" -ge 1 ] ;;
	segments)	# 100 or more distinct segments within the hello
		x=$(tsk "$c" "tcp.srcport == $p && tcp.len > 0 && tcp.seq <= $hl" -e tcp.seq | sort -un | wc -l)
		say "$ph segments: the $hl-byte hello went in $x distinct segments"
		[ "$x" -ge 100 ] ;;
	big | huge)	# over 16 KiB, all of it sent
		x=$(tsk "$c" "tcp.srcport == $p && tcp.len > 0" -e tcp.nxtseq | sort -n | tail -1)
		say "$ph $m: a hello of $hl bytes, ${x:-0} bytes of the stream sent"
		[ "$hl" -gt 16384 ] && [ "${x:-0}" -gt "$hl" ] ;;
	reorder)	# the first data is past byte 1, 10.8 s after the SYN; byte 1 after it
		read -r x y n <<<"$(tsk "$c" "tcp.srcport == $p && (tcp.flags.syn == 1 || tcp.len > 0)" \
			-e frame.time_relative -e tcp.flags.syn -e tcp.seq -e tcp.len |
			awk '$2 == 1 && s == "" { s = $1 } $2 == 0 && $4 > 0 && f == "" { f = $1; fs = $3 }
			     $2 == 0 && $4 > 0 && $3 == 1 && w == "" && f != "" { w = 1 }
			     END { printf "%.2f %s %s\n", f - s, fs, w == 1 ? "yes" : "no" }')"
		say "$ph reorder: the first data $x s after the SYN, at byte $y; byte 1 after it: $n"
		[ "$n" = yes ] && [ "$y" -gt 1 ] 2>/dev/null && awk -v g="$x" 'BEGIN { exit !(g >= 10.8) }' ;;
	tfo)	# the hello on the SYN; unlisted, the SYN-ACK acked it
		x=$(tsk "$c" "tcp.srcport == $p && tcp.flags.syn == 1 && tcp.flags.ack == 0" -e tcp.len | sort -n | tail -1)
		y=$(tsk "$c" "tcp.dstport == $p && tcp.flags.syn == 1 && tcp.flags.ack == 1" -e tcp.ack | head -1)
		say "$ph tfo: the SYN carried ${x:-0} bytes, the SYN-ACK acked up to ${y:--}"
		[ "${x:-0}" -ge "$hl" ] && { [ "$listed" = 1 ] || [ "${y:-0}" = $((hl + 1)) ]; } ;;
	rst | fin | syn)	# injected before the first data
		case "$m" in
		rst) x=$(tsk "$c" "tcp.srcport == $p && tcp.flags.reset == 1" -e frame.number | head -1) ;;
		fin) x=$(tsk "$c" "tcp.srcport == $p && tcp.flags.fin == 1 && tcp.flags.ack == 0" -e frame.number | head -1) ;;
		syn) x=$(tsk "$c" "tcp.srcport == $p && tcp.flags.syn == 1 && tcp.flags.ack == 0" -e frame.number -e tcp.seq_raw |
			awk '!seen[$2]++ { n++ } n == 2 { print $1; exit }') ;;
		esac
		y=$(first_data "$c" "$p")
		say "$ph $m: injected in frame ${x:--}, the hello from frame ${y:--}"
		[ -n "$x" ] && [ -n "$y" ] && [ "$x" -lt "$y" ] ;;
	frag)	# IP fragments from the client
		x=$(tsk "$c" "(ip.src == $C4 && (ip.flags.mf == 1 || ip.frag_offset > 0)) || (ipv6.src == $C6 && ipv6.nxt == 44)" \
			-e frame.number | wc -l)
		say "$ph frag: $x IP fragments from the client"
		[ "$x" -ge 2 ] ;;
	decoy_csum | decoy_ttl)	# a hello with a bad checksum / TTL 1 first, another JA3 than the real
		if [ "$m" = decoy_csum ]; then
			x=$(tshark -o tcp.check_checksum:TRUE -r "$c" -Y "tcp.srcport == $p && tcp.len > 0" \
				-T fields -e frame.number -e tcp.checksum.status 2>/dev/null | awk '$2 == 0 { print $1; exit }')
		else
			x=$(tsk "$c" "tcp.srcport == $p && tcp.len > 0 && (ip.ttl == 1 || ipv6.hlim == 1)" -e frame.number | head -1)
		fi
		y=$(tsk "$c" "tcp.srcport == $p && tcp.len > 0" -e frame.number -e tcp.seq |
			awk -v x="${x:-0}" '$1 > x && $2 == 1 { print $1; exit }')
		n=$(ja3s_of "$c" "$p" | wc -l)
		say "$ph $m: the decoy in frame ${x:--}, the real hello at the same byte from frame ${y:--}; $n JA3s"
		[ -n "$x" ] && [ -n "$y" ] && [ "$x" -lt "$y" ] && [ "$n" -ge 2 ] ;;
	*) say "$ph no such mode: $m"; return 1 ;;
	esac
}

# The reference: the client with these ssl settings, its hello in one
# write, captured (once for each family and settings: the suite's lab
# keeps it); sets port ja4 ja3 (tja3: tshark's).  0; 1 with what was
# wrong said (flowcutctl's JA3 not tshark's, or only tshark's read: ja4
# is then ""); 2: nothing to list.
reference() { # fam [evade.py's ssl args...]
	local fam=$1 ref p0 err rc=0
	shift
	ref=$run/ref-$fam-$(printf '%s' "$*" | md5sum | cut -c1-8)
	if [ -s "$ref.pcap" ]; then
		p0=$(cat "$ref.port")
	else
		p0=$(next_port)
		# its port alone: a client an earlier case stopped may still send its hello again
		cap_start client c0 "$ref.tmp.pcap" "tcp port $p0" || return 2
		evade "$ref.out" plain "$fam" "$p0" "$@" || { say "the reference failed: $(tail -2 "$ref.out")"; return 2; }
		cap_stop "$ref.tmp.pcap"
		echo "$p0" >"$ref.port"
		mv "$ref.tmp.pcap" "$ref.pcap"
	fi
	tja3=$(ja3s_of "$ref.pcap" "$p0" | head -1)
	if err=$(fp_of "$ref.pcap" 2>&1); then
		read -r port ja4 ja3 <<<"$err"
		say "the reference (port $port): JA4 $ja4, JA3 $ja3; tshark's JA3 ${tja3:--}"
		[ "$ja3" = "$tja3" ] || [ -z "$tja3" ] || { say "flowcutctl's JA3 is not tshark's"; rc=1; }
		[ -n "$tja3" ] || say "tshark read no hello from port $p0 (no oracle for this one)"
	else
		say "the reference: $err"
		rc=1
		[ -n "$tja3" ] || { say "and tshark read no hello: nothing to list"; return 2; }
		say "going on with tshark's JA3 $tja3 listed"
		ja3=$tja3 ja4=''
	fi
	return $rc
}

# ---- the test ----

# mode fam ja4|ja3 [evade.py's ssl args...]
t_evade() {
	local mode=$1 fam=$2 kind=$3 m=$1 p0 p1 p2 port ja4 ja3 tja3 F err n h got sz before tmo=6 rc=0 ref epid
	shift 3
	[ "$mode" = huge ] && m=big
	case "$mode" in
	slow) tmo=9 ;; reorder) tmo=17 ;; big) tmo=12 ;; huge) tmo=20 ;;
	esac
	trap 'server_down; lab_reset >/dev/null' EXIT
	# what the way needs of the lab
	case "$mode" in
	segments)	# 100+ segments in flight while they are held: a bigger first window
		ex client ip route change default via 198.18.0.1 dev c0 initcwnd 256 &&
			ex client ip -6 route change default via 2001:2::1 dev c0 initcwnd 256 || return 1 ;;
	tfo)	# the client sends data on its SYN with no cookie; the server takes it on
		# every listener (0x400: Debian 12's openssl s_server has no -tfo) with no cookie
		ex client sysctl -qw net.ipv4.tcp_fastopen=0x5 && ex server sysctl -qw net.ipv4.tcp_fastopen=0x603 || return 1 ;;
	esac
	server_up && ja_set 0 || return 1

	reference "$fam" "$@" || rc=$?
	[ $rc -le 1 ] || return 1
	[ -n "$ja4" ] || kind=ja3
	if [ "$kind" = ja4 ]; then F=$ja4; else F=$ja3; fi

	# (a) nothing listed: the way taken, the download whole (frag: the ServerHello)
	p1=$(next_port)
	caps_start "$run/a$p1" || return 1
	evade "$run/a$p1.out" "$m" "$fam" "$p1" "$@" --get f --out "$run/got$p1" --timeout 30
	n=$?
	caps_stop "$run/a$p1"
	grep -v '^#' "$run/a$p1.out" | sed "s/^/unlisted: /" | while read -r l; do say "$l"; done
	if [ "$mode" = frag ]; then
		h=$(server_hellos "$run/a$p1.server.pcap" "$p1")
		say "unlisted: the server sent $h ServerHello to port $p1 (its socket never sent the hello: no download)"
		[ "$n" -eq 0 ] && [ "$h" -ge 1 ] || { say "unlisted: no ServerHello: the hello was not taken"; rc=1; }
	else
		sz=$(size "$run/www/f")
		got=$(sed -n 's/^downloaded \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' "$run/a$p1.out")
		say "unlisted: the client got $(size "$run/got$p1") bytes sha256 $(sha "$run/got$p1" | cut -c1-16)... (it says: ${got:-nothing})," \
		    "the server's file $sz bytes sha256 $(sha "$run/www/f" | cut -c1-16)..."
		[ "$n" -eq 0 ] && [ "$(size "$run/got$p1")" = "$sz" ] && [ "$(sha "$run/got$p1")" = "$(sha "$run/www/f")" ] &&
			[ "$got" = "$sz $(sha "$run/www/f")" ] || { say "unlisted: the download is not whole (evade.py exit $n)"; rc=1; }
	fi
	evasion_seen "$mode" "$run/a$p1.client.pcap" "$p1" "$(hello_len "$run/a$p1.out")" 0 ||
		{ say "unlisted: the way was not taken as meant"; rc=1; }

	# (b) listed: cut
	ja_set 1 "$F" || return 1
	server_up || return 1	# a fresh server (frag's was reset; the others' ended)
	p2=$(next_port)
	before=$(stat_of "inspector.cut_$kind")
	caps_start "$run/b$p2" || return 1
	evade "$run/b$p2.out" "$m" "$fam" "$p2" "$@" --timeout "$tmo" &
	epid=$!
	# the cut said, then a second for a ServerHello that would have come by
	# now: the client, waiting still, is stopped (its --timeout the bound)
	if wait_for $((tmo * 10)) grep -q "cut (tls) tcp .*:$p2 -> " "$run/flowcutd.log"; then
		sleep 1
		"$lab" exec "$L" client pkill -f "evade.py $m .*--sport $p2 " 2>/dev/null
	fi
	wait "$epid"
	n=$?
	caps_stop "$run/b$p2"
	grep -v '^#' "$run/b$p2.out" | sed "s/^/listed: /" | while read -r l; do say "$l"; done
	if [ "$n" -ne 0 ]; then	# not through: counted soon (the stats each second)
		wait_for 50 stat_at_least "inspector.cut_$kind" $((before + 1))
	else
		sleep 1.2
	fi
	h=$(server_hellos "$run/b$p2.server.pcap" "$p2")
	say "listed ($kind $F): evade.py exit $n; the server's side saw $(syns_from "$run/b$p2.server.pcap" "$p2") SYN," \
	    "$(tsk "$run/b$p2.server.pcap" "tcp.srcport == $p2 && tcp.len > 0" -e frame.number | wc -l) segments with data" \
	    "from port $p2 and sent $h ServerHello; inspector.cut_$kind $before -> $(stat_of "inspector.cut_$kind")"
	[ "$n" -ne 0 ] && ! grep -q "^handshake done\|^downloaded\|^server hello seen" "$run/b$p2.out" ||
		{ say "listed: the client completed its handshake: not cut"; rc=1; }
	[ "$mode" = tfo ] || [ "$(syns_from "$run/b$p2.server.pcap" "$p2")" -ge 1 ] ||
		{ say "listed: the server never saw the SYN: the capture is wrong"; rc=1; }
	[ "$h" -eq 0 ] || { say "listed: the server answered with its ServerHello"; rc=1; }
	grep -q "cut (tls) tcp .*:$p2 -> " "$run/flowcutd.log" ||
		{ say "listed: flowcutd logged no cut (tls) of port $p2"; rc=1; }
	[ "$(stat_of "inspector.cut_$kind")" -gt "$before" ] || { say "listed: inspector.cut_$kind did not rise"; rc=1; }
	evasion_seen "$mode" "$run/b$p2.client.pcap" "$p2" "$(hello_len "$run/b$p2.out")" 1 ||
		{ say "listed: the way was not taken as meant"; rc=1; }
	ja3s_of "$run/b$p2.client.pcap" "$p2" | grep -qx "$ja3" ||
		{ say "listed: the client's capture holds no hello of JA3 $ja3 from port $p2"; rc=1; }
	[ $rc -eq 0 ]
}

# inspect_undecided set, applied when flowcutd's stats say so
undecided_set() { # pass | cut
	"$ctl" --settings "$run/settings.conf" settings set inspect_undecided "$1" >/dev/null || return 1
	wait_for 50 bash -c "[ \"\$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))[\"inspector\"][\"undecided\"])' '$run/flowcutd.json')\" = $1 ]" ||
		{ say "flowcutd did not apply inspect_undecided = $1"; return 1; }
}

# a listed client's hello in one write, cut (the parser answering): port
listed_cut() {
	local p=$1 n epid
	evade "$run/c$p.out" plain 4 "$p" --timeout 6 &
	epid=$!
	wait_for 80 grep -q "cut (tls) tcp .*:$p -> " "$run/flowcutd.log"
	n=$?
	"$lab" exec "$L" client pkill -f "evade.py plain .*--sport $p " 2>/dev/null
	wait "$epid"
	say "after: a listed client (port $p) $([ $n -eq 0 ] && echo cut || echo "NOT cut: $(tail -1 "$run/c$p.out")")"
	return $n
}

# The parser's process (flowcut-inspect) killed (SIGKILL) or stopped
# (SIGSTOP, 5 s) with a listed client's hello being read: that connection
# follows inspect_undecided (pass: its download whole; cut: cut), counted
# parser_down (killed) or parser_late (stopped, no answer within 1 s);
# no frame is held for ever; the host path and flowcutd's loop stay on
# time (a ping through the host, flowcutd's turn p99); the keeper starts
# the killed one again, and a listed client after is cut.
t_parser() { # kill|stop pass|cut
	local how=$1 und=$2 pid pid2 p1 p2 n why before t0 t1 turn loss epid tmo=30 rc=0 port ja4 ja3 tja3
	trap 'kill -CONT "$pid" 2>/dev/null; server_down; lab_reset >/dev/null; undecided_set pass >/dev/null' EXIT
	server_up && reference 4 >/dev/null; [ -n "${ja4:-}" ] || { say "no reference JA4"; return 1; }
	ja_set 1 "$ja4" && undecided_set "$und" || return 1
	pid=$("$lab" inspector-pid "$L") || { say "no flowcut-inspect runs"; return 1; }
	why=parser_down
	[ "$how" = stop ] && why=parser_late
	before=$(stat_of "inspector.$why")
	p1=$(next_port)
	[ "$und" = cut ] && tmo=10	# cut: it never completes; 10 s is well past the parser's answer_ms
	t0=$(date +%s.%N)
	if [ "$how" = kill ]; then
		# its first byte read (asked and answered), the rest 4 s on: killed between
		evade "$run/k$p1.out" slow 4 "$p1" --pause 4 --get f --out "$run/got$p1" --timeout "$tmo" &
		epid=$!
		sleep 1.5
		kill -9 "$pid"
	else
		kill -STOP "$pid"
		{ evade "$run/k$p1.out" plain 4 "$p1" --get f --out "$run/got$p1" --timeout "$tmo"
		  n=$?; date +%s.%N >"$run/k$p1.end"; exit $n; } &
		epid=$!
		ex client ping -c 25 -i 0.2 -W 1 "$S4" >"$run/ping$p1.out" 2>&1
		kill -CONT "$pid"
	fi
	wait "$epid"
	n=$?
	t1=$(date +%s.%N)
	wait_for 30 stat_at_least "inspector.$why" $((before + 1))
	say "$how: the client (port $p1) ended after $(echo "$t1 - $t0" | bc | cut -c1-4) s, exit $n:" \
	    "$(grep -v '^#' "$run/k$p1.out" | tail -1); inspector.$why $before -> $(stat_of "inspector.$why")"
	[ "$(stat_of "inspector.$why")" -gt "$before" ] || { say "inspector.$why did not rise"; rc=1; }
	if [ "$und" = pass ]; then
		[ "$n" -eq 0 ] && [ "$(size "$run/got$p1")" = "$(size "$run/www/f")" ] &&
			[ "$(sha "$run/got$p1")" = "$(sha "$run/www/f")" ] ||
			{ say "undecided pass: the download is not whole"; rc=1; }
	else
		[ "$n" -ne 0 ] && ! grep -q "^handshake done\|^downloaded" "$run/k$p1.out" ||
			{ say "undecided cut: the client got through"; rc=1; }
		grep -q "cut (tls) tcp .*:$p1 -> " "$run/flowcutd.log" || { say "no cut of port $p1 logged"; rc=1; }
	fi
	if [ "$how" = stop ]; then
		loss=$(sed -n 's/.* \([0-9.]*\)% packet loss.*/\1/p' "$run/ping$p1.out")
		turn=$(stat_of turn_p99_us)
		say "stopped 5 s: the client ended $(echo "$(cat "$run/k$p1.end") - $t0" | bc | cut -c1-4) s in;" \
		    "ping through the host lost ${loss:-?} %; flowcutd's turn p99 ${turn} us"
		# nothing held for the parser: the connection decided while it was still stopped
		[ "$(echo "$(cat "$run/k$p1.end") - $t0 < 5" | bc)" = 1 ] ||
			{ say "the client waited for the stopped parser"; rc=1; }
		[ "${loss:-100}" = 0 ] || { say "the host path lost pings while the parser was stopped"; rc=1; }
		[ "$turn" -lt 100000 ] || { say "flowcutd's loop was slow"; rc=1; }
	else
		pid2=$("$lab" inspector-pid "$L")
		say "killed: pid $pid, then pid ${pid2:-none} (started again); flowcutd connected $(stat_of inspector.parser.connects) times"
		[ -n "$pid2" ] && [ "$pid2" != "$pid" ] || { say "flowcut-inspect was not started again"; rc=1; }
		wait_for 30 bash -c "[ \"\$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))[\"inspector\"][\"parser\"][\"up\"])' '$run/flowcutd.json')\" = True ]" ||
			{ say "flowcutd is not connected again"; rc=1; }
	fi
	[ "$(stat_of inspector.reading)" -eq 0 ] || say "still being read: $(stat_of inspector.reading)"
	p2=$(next_port)
	listed_cut "$p2" || rc=1
	[ $rc -eq 0 ]
}

# the way, its family, the fingerprint listed, the time limit (s), the ssl settings
tests=(
	"plain, the control: the hello in one write (IPv4, JA4)|60|t_evade plain 4 ja4"
	"plain, the control: the hello in one write (IPv6, JA3)|60|t_evade plain 6 ja3"
	"slow: 1 byte, 3 s, the rest (IPv4, JA4)|60|t_evade slow 4 ja4"
	"slow: 1 byte, 3 s, the rest (IPv6, JA3)|60|t_evade slow 6 ja3"
	"oob: an urgent byte before the hello (IPv4, JA4)|60|t_evade oob 4 ja4"
	"oob: an urgent byte before the hello (IPv6, JA3)|60|t_evade oob 6 ja3"
	"segments: the hello in 100+ segments (IPv4, JA4)|60|t_evade segments 4 ja4"
	"segments: the hello in 100+ segments (IPv6, JA3)|60|t_evade segments 6 ja3"
	"big: a 20 KB hello, 100 ALPN names of 200 bytes (IPv4, JA4)|60|t_evade big 4 ja4 --alpn 100:200"
	"big: a 20 KB hello, 100 ALPN names of 200 bytes (IPv6, JA3)|60|t_evade big 6 ja3 --alpn 100:200"
	"huge: a 51 KB hello, 200 ALPN names of 255 bytes (IPv4, JA4)|90|t_evade huge 4 ja4 --alpn 200:255"
	"reorder: 11 s idle, the second half first (IPv4, JA4)|90|t_evade reorder 4 ja4"
	"reorder: 11 s idle, the second half first (IPv6, JA3)|90|t_evade reorder 6 ja3"
	"tfo: the hello on the SYN (IPv4, JA4)|60|t_evade tfo 4 ja4"
	"tfo: the hello on the SYN (IPv6, JA3)|60|t_evade tfo 6 ja3"
	"rst: an out-of-window RST first (IPv4, JA4)|60|t_evade rst 4 ja4"
	"rst: an out-of-window RST first (IPv6, JA3)|60|t_evade rst 6 ja3"
	"fin: a bare FIN out of window first (IPv4, JA3)|60|t_evade fin 4 ja3"
	"fin: a bare FIN out of window first (IPv6, JA4)|60|t_evade fin 6 ja4"
	"syn: a second SYN, another ISN, first (IPv4, JA4)|60|t_evade syn 4 ja4"
	"syn: a second SYN, another ISN, first (IPv6, JA3)|60|t_evade syn 6 ja3"
	"frag4: the hello's segment in IPv4 fragments (JA4)|60|t_evade frag 4 ja4"
	"frag6: the hello's segment in IPv6 fragments (JA3)|60|t_evade frag 6 ja3"
	"decoy_csum: a decoy hello with a bad checksum first (IPv4, JA4)|60|t_evade decoy_csum 4 ja4"
	"decoy_csum: a decoy hello with a bad checksum first (IPv6, JA3)|60|t_evade decoy_csum 6 ja3"
	"decoy_ttl: a decoy hello with TTL 1 first (IPv4, JA3)|60|t_evade decoy_ttl 4 ja3"
	"decoy_ttl: a decoy hello with hop limit 1 first (IPv6, JA4)|60|t_evade decoy_ttl 6 ja4"
	"the parser killed mid-hello: undecided, cut; started again, cutting|90|t_parser kill cut"
	"the parser stopped 5 s: undecided, passed whole before it woke; the host path and flowcutd on time|90|t_parser stop pass"
)

lab_suite fce shared
