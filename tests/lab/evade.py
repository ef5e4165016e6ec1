#!/usr/bin/env python3
"""A TLS client that puts its ClientHello on the wire in ways an inline
reader may miss (issue 29), for tests/lab/test_evade.sh.

The TLS is python3's ssl (OpenSSL) on memory BIOs (ssl.MemoryBIO,
SSLObject): no socket in the ssl object, so this script owns how the
hello's bytes go out.  An ordinary kernel TCP connection carries it in
every mode; the modes that need it add frames of their own beside that
connection from a raw socket (IPPROTO_RAW, IPv4 with its header, IPv6
with IPV6_HDRINCL), at sequence numbers read by an AF_PACKET sniff of the
SYN and SYN-ACK on --dev.  Every checksum is computed here.

    evade.py MODE --server ADDR --sport PORT --cafile CERT [options]

Modes (the hello is the same ssl settings' in each; --alpn N:LEN adds an
ALPN list of N names of LEN bytes):
  plain       the hello in one write (the reference run)
  slow        its first byte, a pause (--pause, 3 s), the rest
  oob         one urgent byte (MSG_OOB) first: the receiver takes it out
              of the stream
  segments    the hello in --segments (110) writes, TCP_NODELAY, 2 ms
              apart (the route's initcwnd must let them go: the test's)
  big         as plain; with a long --alpn the hello spans records
  reorder     connected, --wait (11 s) idle, then the hello's second half
              sent raw at its sequence number, then the whole through the
              socket
  tfo         TCP Fast Open: the hello on the SYN (sendto MSG_FASTOPEN;
              net.ipv4.tcp_fastopen set by the test)
  rst, fin, syn   first an out-of-window RST, a bare FIN out of window, or
              a second SYN 100,000 below the first, raw; then the hello
  frag        the hello's segment sent raw in IP fragments (IPv4 MF and
              offsets; IPv6 Fragment headers) at the connection's sequence
              number; the kernel's socket never sent those bytes, so the
              proof is the server's ServerHello (seen here on --dev), and
              the server's side is then reset at its sequence number
  decoy_csum, decoy_ttl   first a decoy hello of other ssl settings
              (another JA3 and JA4: fewer ciphers and an ALPN name, its
              length matched to the real hello's) at the same sequence
              numbers, raw, with a bad TCP checksum or a TTL / hop limit
              of 1; then the real hello through the socket

After the handshake (when it completes) `GET /FILE HTTP/1.0` (--get) and
the body written to --out.  Prints what it did ("# ..." lines) and one
result line; exits 0 on a handshake (and download), 1 when the handshake
did not complete within --timeout (cut, reset, or closed), 2 on any other
failure (a usage error, a raw socket refused).
"""
import argparse
import hashlib
import os
import random
import select
import socket
import ssl
import struct
import sys
import threading
import time

from labnet import csum

ETH_P_ALL = 0x0003
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK, TCP_URG = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
MSG_FASTOPEN = 0x20000000


def say(*a):
    print("#", *a, flush=True)


class Failed(Exception):
    """The handshake did not complete (exit 1)."""


# ---- frames by hand ----

def tcp_seg(fam, src, dst, sport, dport, seq, ack, flags, payload=b"", win=502, bad=False):
    """A TCP header and payload, its checksum right (or, bad, wrong)."""
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      5 << 4, flags, win, 0, 0)
    n = len(hdr) + len(payload)
    if fam == 4:
        pseudo = socket.inet_pton(socket.AF_INET, src) + socket.inet_pton(socket.AF_INET, dst) + \
            struct.pack("!BBH", 0, 6, n)
    else:
        pseudo = socket.inet_pton(socket.AF_INET6, src) + socket.inet_pton(socket.AF_INET6, dst) + \
            struct.pack("!I3xB", n, 6)
    c = csum(pseudo + hdr + payload)
    if bad:
        c ^= 0x5a5a
    return hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload


def ip4(src, dst, payload, ttl=64, ident=None, frag=0, mf=False, proto=6):
    ident = random.randint(1, 0xffff) if ident is None else ident
    h = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident,
                    (0x2000 if mf else 0) | (frag // 8), ttl, proto, 0,
                    socket.inet_pton(socket.AF_INET, src), socket.inet_pton(socket.AF_INET, dst))
    return h[:10] + struct.pack("!H", csum(h)) + h[12:] + payload


def ip6(src, dst, nh, payload, hlim=64):
    return struct.pack("!IHBB16s16s", 6 << 28, len(payload), nh, hlim,
                       socket.inet_pton(socket.AF_INET6, src),
                       socket.inet_pton(socket.AF_INET6, dst)) + payload


class Raw:
    """Frames of our own beside the kernel's connection: a raw socket that takes the IP header."""

    def __init__(self, fam):
        self.fam = fam
        try:
            if fam == 4:
                self.s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
            else:
                self.s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
        except OSError as e:
            say("raw socket refused: %s" % e)
            sys.exit(2)

    def send(self, pkt, dst):
        self.s.sendto(pkt, (dst, 0))

    def segment(self, c, seq, flags, payload=b"", bad=False, ttl=64):
        """One TCP segment of connection c, whole in one IP packet."""
        t = tcp_seg(self.fam, c.src, c.dst, c.sport, c.dport, seq, c.ack, flags, payload, bad=bad)
        if self.fam == 4:
            self.send(ip4(c.src, c.dst, t, ttl=ttl), c.dst)
        else:
            self.send(ip6(c.src, c.dst, 6, t, hlim=ttl), c.dst)

    def fragments(self, c, seq, flags, payload, size):
        """One TCP segment in IP fragments of `size` bytes of the IP payload (a multiple of 8)."""
        t = tcp_seg(self.fam, c.src, c.dst, c.sport, c.dport, seq, c.ack, flags, payload)
        ident = random.randint(1, 0xffffffff)
        pieces = [(o, t[o:o + size]) for o in range(0, len(t), size)]
        for o, p in pieces:
            mf = o + len(p) < len(t)
            if self.fam == 4:
                self.send(ip4(c.src, c.dst, p, ident=ident & 0xffff, frag=o, mf=mf), c.dst)
            else:
                fh = struct.pack("!BBHI", 6, 0, o | (1 if mf else 0), ident)
                self.send(ip6(c.src, c.dst, 44, fh + p), c.dst)
        return len(pieces)


# ---- the sniff: sequence numbers and the server's answer ----

class Sniff(threading.Thread):
    """Reads --dev (AF_PACKET) for the connection's SYN, SYN-ACK and the server's ServerHello."""

    def __init__(self, dev, sport, dport):
        super().__init__(daemon=True)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((dev, 0))
        self.sport, self.dport = sport, dport
        self.isn = self.server_isn = None
        self.syn_len = 0
        self.synack_ack = None
        self.server_hello = None	# the time the server's first record was seen
        self.server_next = None
        self.stop = False
        self.ev = threading.Event()
        self.start()

    def run(self):
        while not self.stop:
            r, _, _ = select.select([self.s], [], [], 0.1)
            if not r:
                continue
            f = self.s.recv(65535)
            self.frame(f)

    def frame(self, f):
        if len(f) < 14:
            return
        et = struct.unpack("!H", f[12:14])[0]
        if et == 0x0800 and len(f) >= 34:
            ihl = (f[14] & 0x0f) * 4
            if f[23] != 6 or struct.unpack("!H", f[20:22])[0] & 0x3fff:
                return
            t = 14 + ihl
            end = 14 + struct.unpack("!H", f[16:18])[0]
        elif et == 0x86dd and len(f) >= 54:
            if f[20] != 6:
                return
            t = 54
            end = 54 + struct.unpack("!H", f[18:20])[0]
        else:
            return
        if len(f) < t + 20:
            return
        sp, dp, seq, ack, off, fl = struct.unpack("!HHIIBB", f[t:t + 14])
        data = f[t + (off >> 4) * 4:end]
        if sp == self.sport and dp == self.dport and fl & TCP_SYN and not fl & TCP_ACK:
            if self.isn is None:
                self.isn, self.syn_len = seq, len(data)
        elif sp == self.dport and dp == self.sport and fl & TCP_SYN and fl & TCP_ACK:
            self.server_isn, self.synack_ack = seq, ack
            self.ev.set()
        elif sp == self.dport and dp == self.sport and data:
            # a handshake record whose first message is a ServerHello (2)
            if self.server_hello is None and len(data) >= 6 and data[0] == 0x16 and data[5] == 2:
                self.server_hello = time.monotonic()
            self.server_next = (seq + len(data)) & 0xffffffff

    def close(self):
        self.stop = True
        self.join(1)
        self.s.close()


class Conn:
    pass


# ---- TLS ----

def context(args, alpn=None, ciphers=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(args.cafile)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    if ciphers:
        ctx.set_ciphers(ciphers)
    return ctx


def alpn_list(spec):
    if not spec:
        return None
    n, ln = (int(x) for x in spec.split(":"))
    return [(chr(ord("a") + i % 26) + "%04d" % i).ljust(ln, "x")[:ln] for i in range(n)]


def hello_of(ctx, server):
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_side=False, server_hostname=server)
    try:
        obj.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return obj, inc, out, out.read()


def decoy_of(args, real_len):
    """A hello of other settings (fewer ciphers, an ALPN name) as long as the real one, or near."""
    best = None
    for k in range(1, 250):
        _, _, _, d = hello_of(context(args, alpn=["d".ljust(k, "y")], ciphers="ECDHE+AESGCM"),
                              args.server)
        if best is None or abs(len(d) - real_len) < abs(len(best) - real_len):
            best = d
        if len(d) >= real_len:
            break
    return best


def recv_some(sock, deadline):
    left = deadline - time.monotonic()
    if left <= 0:
        raise Failed("no answer within %g s" % args.timeout)
    sock.settimeout(left)
    try:
        d = sock.recv(65536)
    except socket.timeout:
        raise Failed("no answer within %g s" % args.timeout)
    except ConnectionResetError:
        raise Failed("reset by the peer")
    except OSError as e:
        raise Failed("the connection failed: %s" % e)
    return d


def handshake(sock, obj, inc, out, deadline):
    while True:
        try:
            obj.do_handshake()
            break
        except ssl.SSLWantReadError:
            o = out.read()
            if o:
                sock.sendall(o)
            d = recv_some(sock, deadline)
            if not d:
                raise Failed("closed by the peer")
            inc.write(d)
        except ssl.SSLError as e:
            raise Failed("TLS error: %s" % e)
    o = out.read()
    if o:
        sock.sendall(o)


def download(sock, obj, inc, out, path, dst, deadline):
    obj.write(b"GET /%s HTTP/1.0\r\n\r\n" % path.encode())
    sock.sendall(out.read())
    got = bytearray()
    while True:
        try:
            b = obj.read(65536)
            if not b:
                break
            got += b
        except ssl.SSLWantReadError:
            d = recv_some(sock, deadline)
            if not d:
                inc.write_eof()
            else:
                inc.write(d)
        except (ssl.SSLZeroReturnError, ssl.SSLEOFError):
            break
        o = out.read()
        if o:
            sock.sendall(o)
    head, sep, body = bytes(got).partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"HTTP/1.0 200"):
        say("the answer: %r" % head[:80])
        sys.exit(2)
    with open(dst, "wb") as f:
        f.write(body)
    return len(body), hashlib.sha256(body).hexdigest()


# ---- the modes ----

def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("mode")
    p.add_argument("--server", required=True)
    p.add_argument("--port", type=int, default=443)
    p.add_argument("--sport", type=int, required=True)
    p.add_argument("--cafile", required=True)
    p.add_argument("--dev", default="c0")
    p.add_argument("--alpn", default="")
    p.add_argument("--get", default="")
    p.add_argument("--out", default="")
    p.add_argument("--timeout", type=float, default=8)
    p.add_argument("--pause", type=float, default=3)
    p.add_argument("--wait", type=float, default=11)
    p.add_argument("--segments", type=int, default=110)
    args = p.parse_args()
    modes = ("plain", "slow", "oob", "segments", "big", "reorder", "tfo", "rst", "fin", "syn",
             "frag", "decoy_csum", "decoy_ttl")
    if args.mode not in modes:
        p.error("mode: one of " + " ".join(modes))
    fam = 6 if ":" in args.server else 4
    af = socket.AF_INET6 if fam == 6 else socket.AF_INET
    src = "2001:2::2" if fam == 6 else "198.18.0.2"
    ctx = context(args, alpn=alpn_list(args.alpn))
    obj, inc, out, hello = hello_of(ctx, args.server)
    say("%s: a ClientHello of %d bytes, port %d" % (args.mode, len(hello), args.sport))
    raw = Raw(fam) if args.mode in ("reorder", "rst", "fin", "syn", "frag", "decoy_csum",
                                    "decoy_ttl") else None
    sn = Sniff(args.dev, args.sport, args.port)
    c = Conn()
    c.src, c.dst, c.sport, c.dport = src, args.server, args.sport, args.port
    s = socket.socket(af, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, args.sport))
    deadline = time.monotonic() + args.timeout
    try:
        if args.mode == "tfo":
            # the hello on the SYN (connect and send in one)
            s.settimeout(args.timeout)
            n = s.sendto(hello, MSG_FASTOPEN, (args.server, args.port))
            sn.ev.wait(3)
            say("tfo: %d bytes given on the SYN, the SYN carried %d, the SYN-ACK acked %s" %
                (n, sn.syn_len, "?" if sn.synack_ack is None or sn.isn is None
                 else (sn.synack_ack - sn.isn - 1) & 0xffffffff))
            if n < len(hello):
                s.sendall(hello[n:])
        else:
            s.settimeout(args.timeout)
            try:
                s.connect((args.server, args.port))
            except OSError as e:
                raise Failed("connect: %s" % e)
            if not sn.ev.wait(2) or sn.isn is None:
                say("no SYN / SYN-ACK seen on %s" % args.dev)
                sys.exit(2)
            c.isn, c.ack = sn.isn, (sn.server_isn + 1) & 0xffffffff
            c.seq = (c.isn + 1) & 0xffffffff
            send_hello(s, raw, c, sn, hello)
        if args.mode == "frag":
            return frag_answer(s, raw, c, sn, hello)
        handshake(s, obj, inc, out, deadline)
    except Failed as e:
        print("handshake not complete: %s" % e, flush=True)
        sn.close()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()
        return 1
    say("handshake done: %s %s, ALPN %s" % (obj.version(), obj.cipher()[0], obj.selected_alpn_protocol()))
    sn.close()
    if args.get:
        try:
            n, h = download(s, obj, inc, out, args.get, args.out, time.monotonic() + 60)
        except Failed as e:
            print("download failed: %s" % e, flush=True)
            return 2
        print("downloaded %d bytes sha256 %s" % (n, h), flush=True)
    else:
        print("handshake done", flush=True)
    s.close()
    return 0


def send_hello(s, raw, c, sn, hello):
    m = args.mode
    if m in ("plain", "big"):
        s.sendall(hello)
    elif m == "slow":
        s.sendall(hello[:1])
        say("slow: 1 byte sent, %g s pause" % args.pause)
        time.sleep(args.pause)
        s.sendall(hello[1:])
    elif m == "oob":
        s.send(b"X", socket.MSG_OOB)
        time.sleep(0.05)
        s.sendall(hello)
        say("oob: one urgent byte, then the hello")
    elif m == "segments":
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        n = args.segments
        step = max(1, -(-len(hello) // n))
        k = 0
        for o in range(0, len(hello), step):
            s.sendall(hello[o:o + step])
            k += 1
            time.sleep(0.002)
        say("segments: %d writes of %d bytes, 2 ms apart" % (k, step))
    elif m == "reorder":
        say("reorder: connected, %g s idle" % args.wait)
        time.sleep(args.wait)
        half = len(hello) // 2
        raw.segment(c, c.seq + half, TCP_PSH | TCP_ACK, hello[half:])
        time.sleep(0.1)
        s.sendall(hello)
        say("reorder: bytes %d..%d raw first, then the whole hello" % (half, len(hello)))
    elif m in ("rst", "fin", "syn"):
        if m == "rst":
            raw.segment(c, c.seq + 10_000_000, TCP_RST)
        elif m == "fin":
            raw.segment(c, c.seq + 10_000_000, TCP_FIN)
        else:
            raw.segment(c, c.isn - 100_000, TCP_SYN)
        say("%s: injected (%s), then the hello" %
            (m, "seq ISN-100000" if m == "syn" else "seq 10,000,000 past the window"))
        time.sleep(0.2)
        s.sendall(hello)
    elif m == "frag":
        n = raw.fragments(c, c.seq, TCP_PSH | TCP_ACK, hello, 200)
        say("frag: the hello's segment in %d fragments of 200 bytes" % n)
    elif m in ("decoy_csum", "decoy_ttl"):
        d = decoy_of(args, len(hello))
        if m == "decoy_csum":
            raw.segment(c, c.seq, TCP_PSH | TCP_ACK, d, bad=True)
        else:
            raw.segment(c, c.seq, TCP_PSH | TCP_ACK, d, ttl=1)
        say("%s: a decoy hello of %d bytes (the real: %d) at the same sequence number, %s" %
            (m, len(d), len(hello), "a bad TCP checksum" if m == "decoy_csum" else "TTL 1"))
        time.sleep(0.2)
        s.sendall(hello)


def frag_answer(s, raw, c, sn, hello):
    """The kernel's socket never sent the hello: the server's ServerHello seen on the wire is the answer."""
    end = time.monotonic() + args.timeout
    while time.monotonic() < end and sn.server_hello is None:
        time.sleep(0.05)
    seen = sn.server_hello is not None
    # the server's side reset where it stands (its next byte from us), so it waits for no one
    raw.segment(c, c.seq + len(hello), TCP_RST | TCP_ACK)
    sn.close()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()
    if seen:
        print("server hello seen", flush=True)
        return 0
    print("handshake not complete: no ServerHello within %g s" % args.timeout, flush=True)
    return 1


args = None
if __name__ == "__main__":
    sys.exit(main())
