#!/usr/bin/env bash
# The fingerprints against programs that compute them on their own.
#
# In a private network namespace (unshare -n: loopback only, nothing leaves),
# real clients (openssl s_client in several variants, curl) shake hands with
# openssl s_server while tcpdump captures; then `flowcutctl fingerprint` and
# tshark (tls.handshake.ja3, ja3_full) read the same capture, and every
# ClientHello's JA3 must agree.  A few clients run with a loopback MTU of 300,
# so their hellos span TCP segments.  JA4 is held against tshark's own field
# when this tshark has one; otherwise the line says skipped (test_tls checks
# JA4 against the specification's example).
#
# TAP: one "ok N - ..." / "not ok N - ..." / "ok N - ... # SKIP why" per check.
# Keeps its capture in $FC_ORACLE_KEEP (a directory) when that is set.
set -u
BUILD=${BUILD:-build}
CTL=$(realpath "$BUILD/flowcutctl" 2>/dev/null || echo "$BUILD/flowcutctl")
n=0
say() { n=$((n + 1)); echo "$1 $n - $2"; }
skip_all() { say ok "JA3 and JA4 against tshark # SKIP $1"; exit 0; }

[ "$(id -u)" -eq 0 ] || skip_all "not root (needs a network namespace)"
for t in tcpdump tshark openssl curl python3 unshare ethtool; do
	command -v "$t" >/dev/null || skip_all "$t is missing (scripts/deps.sh installs it)"
done
[ -x "$CTL" ] || { say "not ok" "flowcutctl is not built ($CTL)"; exit 1; }
if [ -z "${FC_ORACLE_NS:-}" ]; then
	exec unshare -n env FC_ORACLE_NS=1 CTL="$CTL" "$0" "$@"
fi
CTL=${CTL:-$BUILD/flowcutctl}

dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null
	    [ -n "${FC_ORACLE_KEEP:-}" ] && cp "$dir"/*.pcap "$FC_ORACLE_KEEP"/ 2>/dev/null
	    rm -rf "$dir"; }
trap cleanup EXIT
ip link set lo up

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
	-subj /CN=oracle.test -keyout "$dir/key.pem" -out "$dir/cert.pem" 2>/dev/null ||
	{ say "not ok" "openssl req could not make a certificate"; exit 1; }
openssl s_server -accept 127.0.0.1:4433 -cert "$dir/cert.pem" -key "$dir/key.pem" \
	-www -quiet -alpn h2,http/1.1 >/dev/null 2>&1 &
pids+=($!)
tcpdump -i lo -U -s 0 -w "$dir/hellos.pcap" tcp port 4433 2>"$dir/tcpdump.err" &
tcpdump=$!
pids+=($tcpdump)
echo "s_client (readiness probe)" >"$dir/names"
for _ in $(seq 50); do
	grep -q listening "$dir/tcpdump.err" 2>/dev/null && openssl s_client -connect 127.0.0.1:4433 \
		</dev/null >/dev/null 2>&1 && break
	sleep 0.1
done

# name|command; each opens one connection and sends one ClientHello
s_client="openssl s_client -connect 127.0.0.1:4433"
clients=(
	"s_client default|$s_client"
	"s_client -tls1_2 -servername|$s_client -tls1_2 -servername a.oracle.test"
	"s_client -tls1_3 -groups X25519|$s_client -tls1_3 -groups X25519 -servername b.oracle.test"
	"s_client -groups P-256:X25519 -alpn|$s_client -groups P-256:X25519 -alpn h2,http/1.1 -servername c.oracle.test"
	"s_client -noservername -alpn http/1.1|$s_client -noservername -alpn http/1.1"
	"s_client -tls1_2 -cipher|$s_client -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256:AES256-SHA -servername d.oracle.test"
	"s_client -tls1_3 -sigalgs|$s_client -tls1_3 -sigalgs ecdsa_secp256r1_sha256:rsa_pss_rsae_sha256 -groups P-384:P-256"
	"curl|curl -sk --resolve oracle.test:4433:127.0.0.1 https://oracle.test:4433/"
	"curl --tlsv1.2 --tls-max 1.2 --http1.1|curl -sk --tlsv1.2 --tls-max 1.2 --http1.1 --resolve oracle.test:4433:127.0.0.1 https://oracle.test:4433/"
)
if openssl list -kem-algorithms 2>/dev/null | grep -qi mlkem768; then
	clients+=("s_client -groups X25519MLKEM768|$s_client -tls1_3 -groups X25519MLKEM768 -servername pq.oracle.test")
else
	say ok "post-quantum hello from s_client # SKIP $(openssl version) has no X25519MLKEM768 (test_tls checks one over two segments)"
fi
# the same hellos, spread over segments of 260 bytes
small=(
	"s_client (MTU 300) -alpn|$s_client -alpn h2,http/1.1 -servername e.oracle.test"
	"curl (MTU 300)|curl -sk --resolve oracle.test:4433:127.0.0.1 https://oracle.test:4433/"
)

run() { # name|command ...
	for c in "$@"; do
		timeout 10 ${c#*|} </dev/null >/dev/null 2>&1
		echo "${c%%|*}" >>"$dir/names"
	done
}
run "${clients[@]}"
ip link set lo mtu 300
# tcpdump sees what TCP hands down: without GSO and TSO, segments of the MSS
ethtool -K lo tso off gso off >/dev/null 2>&1
run "${small[@]}"
ip link set lo mtu 65536
sleep 0.5
kill -INT $tcpdump
wait $tcpdump 2>/dev/null

"$CTL" --json fingerprint "$dir/hellos.pcap" >"$dir/ours.json" 2>"$dir/ours.err" ||
	{ say "not ok" "flowcutctl fingerprint: $(cat "$dir/ours.err")"; exit 1; }
"$CTL" fingerprint "$dir/hellos.pcap" >"$dir/ours.txt" 2>&1
has_ja4=$(tshark -G fields 2>/dev/null | awk -F'\t' '$3 == "tls.handshake.ja4" { print "yes" }')
fields=(-e tcp.srcport -e tls.handshake.ja3 -e tls.handshake.ja3_full)
[ -n "$has_ja4" ] && fields+=(-e tls.handshake.ja4)
tshark -r "$dir/hellos.pcap" -d tcp.port==4433,tls -Y "tls.handshake.type == 1" -T fields \
	-E separator='|' "${fields[@]}" >"$dir/tshark.txt" 2>"$dir/tshark.err" ||
	{ say "not ok" "tshark: $(head -3 "$dir/tshark.err")"; exit 1; }

# frames of hellos that tshark put together from more than one segment
split=$(tshark -r "$dir/hellos.pcap" -d tcp.port==4433,tls -Y "tls.handshake.type == 1 && tcp.reassembled.length" \
	-T fields -e frame.number 2>/dev/null | wc -l)
python3 - "$dir/ours.json" "$dir/tshark.txt" "$dir/names" "$n" "${has_ja4:-no}" "$split" <<'PY' | tee "$dir/tap.txt"
import json, sys
ours_doc = json.load(open(sys.argv[1]))
theirs = {}
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("|")
    theirs.setdefault(int(f[0]), f[1:])   # the first hello of each client port
names = [l.strip() for l in open(sys.argv[3])]
n, has_ja4 = int(sys.argv[4]), sys.argv[5] == "yes"
ours = sorted(ours_doc["hellos"], key=lambda h: h["frame"])
def say(ok, what):
    global n
    n += 1
    print(("ok" if ok else "not ok") + f" {n} - {what}")
say(int(sys.argv[6]) >= 2, f"{sys.argv[6]} hellos span TCP segments (loopback MTU 300)")
say(len(ours) == len(names) == len(theirs),
    f"{len(names)} connections made, flowcutctl found {len(ours)} ClientHellos, tshark {len(theirs)}")
agree = 0
for i, h in enumerate(ours):
    name = names[i] if i < len(names) else "?"
    port = int(h["client"].rsplit(":", 1)[1])
    t = theirs.get(port)
    if "error" in h or t is None:
        say(False, f"{name}: {h.get('error', 'tshark saw no hello from port %d' % port)}")
        continue
    ok = h["ja3"] == t[0] and h["ja3_full"] == t[1]
    agree += ok
    say(ok, f"{name}: JA3 {h['ja3']} {'agrees with' if ok else 'differs from'} tshark's"
        + ("" if ok else f" {t[0]}\n#   ours   {h['ja3_full']}\n#   tshark {t[1]}"))
    if has_ja4:
        say(h["ja4"] == t[2], f"{name}: JA4 {h['ja4']} vs tshark's {t[2]}")
print(f"# JA3: {agree} of {len(ours)} agree with tshark")
if not has_ja4:
    say(True, "JA4 against tshark # SKIP this tshark has no tls.handshake.ja4 field "
        "(test_tls checks JA4 against the specification's example)")
PY

n=$(( n + $(grep -cE '^(ok|not ok) ' "$dir/tap.txt") ))

# QUIC: the client Initials of RFC 9001 A.2 (version 1) and RFC 9369 A.2
# (version 2), each a UDP datagram in a capture written here; tshark
# decrypts them on its own, flowcutctl with fc_quic; their JA3 must agree.
for v in 1 2; do
	hex=tests/tls/quic-rfc9001-a2-client-initial.hex
	[ $v = 2 ] && hex=tests/tls/quic-rfc9369-a2-client-initial.hex
	python3 - "$dir/quic$v.pcap" "$hex" <<'PY'
import struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    return ~(s + (s >> 16)) & 0xffff
d = bytes.fromhex(open(sys.argv[2]).read().replace("\n", ""))
u = struct.pack("!HHHH", 50000, 443, 8 + len(d), 0) + d
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(u), 1, 0x4000, 64, 17, 0,
                 bytes([198, 18, 0, 2]), bytes([198, 18, 1, 2]))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
fr = bytes.fromhex("02fc00000001020000000002" "0800") + ip + u
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 1700000000, 0, len(fr), len(fr)) + fr)
PY
	ours=$("$CTL" --json fingerprint "$dir/quic$v.pcap" 2>&1 | python3 -c 'import json, sys
h = json.load(sys.stdin)["hellos"]
print(" ".join([h[0]["transport"], h[0]["ja3"], h[0]["ja4"]]) if len(h) == 1 else "none")' 2>&1)
	theirs=$(tshark -r "$dir/quic$v.pcap" -Y "tls.handshake.type == 1" -T fields \
		-e quic.version -e tls.handshake.ja3 2>/dev/null)
	read -r t ja3 ja4 <<<"$ours"
	if [ "$t" = quic ] && [ -n "$ja3" ] && [ "$ja3" = "$(cut -f2 <<<"$theirs")" ] && [ "${ja4:0:1}" = q ]; then
		say ok "QUIC version $(cut -f1 <<<"$theirs") (the RFC's client Initial): JA3 $ja3 agrees with tshark's; JA4 $ja4"
	else
		say "not ok" "QUIC version $v (the RFC's client Initial): ours '$ours', tshark's '$theirs'"
	fi
done
