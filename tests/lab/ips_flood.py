#!/usr/bin/env python3
"""Senders for tests/lab/test_ips_flood.sh: spoofed segments from a raw
socket, and a flood of real connections each sending one ClientHello.

    ips_flood.py spoof --src A --dst B --sport P --hello HEXFILE [options]
    ips_flood.py hellos --dst B --hello HEXFILE --rate R --secs S [options]
    ips_flood.py tls-server --cert C --key K --dir D [--port 443] [--log F]

spoof: TCP segments from the 5-tuple (A, P) -> (B, --dport) carrying the
hello's bytes, from a raw socket (IPPROTO_RAW: IPv4 with its header, IPv6
with its header), every checksum right, TTL / hop limit 64.  --plan names
the segments, comma-separated KIND:SEQ: KIND `ack` (ACK|PSH, its ACK
--ack-off past the sniffed ACK: ahead of anything the server sent, so its
stack never takes the bytes) or `syn` (a SYN with the bytes on it, as TCP
Fast Open); SEQ `0`, `rand` (a new random one each time) or `cur` (the
victim's next sequence number: an AF_PACKET sniff on --dev of the
tuple's own segments, taken again every 0.2 s while flooding).  Once
(--count 1) or as a flood: --rate a second for --secs, cycling the plan.
Prints "# ..." lines and "sent N" last.

hellos: connections to (--dst, --port), --rate a second for --secs, each
sending the hello's bytes at once when connected and kept open --hold
seconds (then reset: SO_LINGER 0), bounded by --max.  Prints one JSON
object: how many were started, connected, sent the hello, and got any byte
back (a server that answered: the hello went through), their client ports
in --ports FILE.

tls-server: an HTTPS server for many clients at once (asyncio; openssl
s_server serves one connection at a time, and one whose hello never comes
holds it for good): `GET /NAME` answered with the file NAME of --dir
(HTTP/1.0, its length given, then closed); a handshake not done within 5 s
is dropped.  Each handshake done is a line "PORT" in --log: a client whose
hello reached the server.
"""
import argparse
import asyncio
import os
import ssl
import errno
import json
import random
import resource
import selectors
import socket
import struct
import sys
import threading
import time

from labnet import csum

ETH_P_ALL = 0x0003
FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def say(*a):
    print("#", *a, flush=True)


def fam_of(addr):
    return 6 if ":" in addr else 4


def segment(src, dst, sport, dport, seq, ack, flags, payload):
    """An IP packet (header included) holding one TCP segment, checksums right."""
    fam = fam_of(src)
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    s, d = socket.inet_pton(af, src), socket.inet_pton(af, dst)
    hdr = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xffffffff, ack & 0xffffffff,
                      5 << 4, flags, 64240, 0, 0)
    n = len(hdr) + len(payload)
    pseudo = s + d + (struct.pack("!BBH", 0, 6, n) if fam == 4 else struct.pack("!I3xB", n, 6))
    c = csum(pseudo + hdr + payload)
    tcp = hdr[:16] + struct.pack("!H", c) + hdr[18:] + payload
    if fam == 4:
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + n, random.randint(1, 0xffff), 0x4000,
                         64, 6, 0, s, d)
        return ip[:10] + struct.pack("!H", csum(ip)) + ip[12:] + tcp
    return struct.pack("!IHBB16s16s", 6 << 28, n, 6, 64, s, d) + tcp


class Sniff:
    """The tuple's own segments (client -> server) on dev: the latest next seq and ack."""

    def __init__(self, dev, src, dst, sport, dport):
        fam = fam_of(src)
        af = socket.AF_INET if fam == 4 else socket.AF_INET6
        self.fam, self.src, self.dst = fam, socket.inet_pton(af, src), socket.inet_pton(af, dst)
        self.ports = struct.pack("!HH", sport, dport)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.s.bind((dev, 0))
        self.s.settimeout(0.2)
        self.nxt = self.ack = None
        self.seen = 0
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                f = self.s.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            self.frame(f)

    def frame(self, f):
        et = struct.unpack("!H", f[12:14])[0]
        if self.fam == 4 and et == 0x0800 and f[23] == 6 and f[26:30] == self.src and f[30:34] == self.dst:
            ip = f[14:]
            ihl = (ip[0] & 15) * 4
            plen = struct.unpack("!H", ip[2:4])[0] - ihl
            t = ip[ihl:]
        elif self.fam == 6 and et == 0x86dd and f[20] == 6 and f[22:38] == self.src and f[38:54] == self.dst:
            t = f[54:]
            plen = struct.unpack("!H", f[18:20])[0]
        else:
            return
        if t[:4] != self.ports:
            return
        seq, ack = struct.unpack("!II", t[4:12])
        flags = t[13]
        data = plen - (t[12] >> 4) * 4
        nxt = (seq + data + (1 if flags & (SYN | FIN) else 0)) & 0xffffffff
        if self.nxt is None or ((nxt - self.nxt) & 0xffffffff) < 0x80000000:
            self.nxt = nxt
        if flags & ACK:
            self.ack = ack
        self.seen += 1

    def wait(self, secs):
        end = time.monotonic() + secs
        while self.nxt is None and time.monotonic() < end:
            time.sleep(0.02)
        return self.nxt is not None

    def close(self):
        self.stop = True
        self.t.join(1)
        self.s.close()


def spoof(a):
    hello = bytes.fromhex(open(a.hello).read().strip())
    plan = [p.split(":") for p in a.plan.split(",")]
    for k, s in plan:
        if k not in ("ack", "syn") or s not in ("0", "rand", "cur"):
            sys.exit("spoof: bad plan entry %s:%s" % (k, s))
    fam = fam_of(a.src)
    sn = None
    if any(s == "cur" for _, s in plan):
        sn = Sniff(a.dev, a.src, a.dst, a.sport, a.dport)
        if a.cur:
            sn.nxt, sn.ack = (int(v) for v in a.cur.split(":"))
            say("spoof: the victim's next seq %d ack %d as given (the sniff updates them)" % (sn.nxt, sn.ack))
        elif not sn.wait(3):
            say("spoof: no segment of %s:%d -> %s:%d seen on %s in 3 s" % (a.src, a.sport, a.dst, a.dport, a.dev))
            sn.close()
            sys.exit(2)
        else:
            say("spoof: sniffed next seq %d ack %s" % (sn.nxt, sn.ack))
    raw = socket.socket(socket.AF_INET if fam == 4 else socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_RAW)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    base_ack = random.getrandbits(32)
    sent = errs = 0
    kinds = {}

    def one(k, s):
        nonlocal sent, errs
        if s == "0":
            seq = 0
        elif s == "rand":
            seq = random.getrandbits(32)
        else:
            seq = sn.nxt
        if k == "syn":
            flags, ack = SYN, 0
        else:
            flags = ACK | PSH
            ack = ((sn.ack if sn is not None and sn.ack is not None else base_ack) + a.ack_off) & 0xffffffff
        p = segment(a.src, a.dst, a.sport, a.dport, seq, ack, flags, hello)
        try:
            raw.sendto(p, (a.dst, 0))
            sent += 1
            kinds["%s:%s" % (k, s)] = kinds.get("%s:%s" % (k, s), 0) + 1
        except OSError as e:
            if e.errno not in (errno.ENOBUFS, errno.EAGAIN):
                raise
            errs += 1
        if a.count == 1:
            say("spoof: %s seq %d ack %d flags 0x%02x, %d bytes of hello" % (k, seq, ack, flags, len(hello)))

    t0 = time.monotonic()
    if a.rate <= 0:
        for _ in range(a.count):
            for k, s in plan:
                one(k, s)
    else:
        i = 0
        end = t0 + a.secs
        while True:
            now = time.monotonic()
            if now >= end or sent + errs >= a.count:
                break
            due = int((now - t0) * a.rate) + 1
            while i < due and sent + errs < a.count:
                k, s = plan[i % len(plan)]
                one(k, s)
                i += 1
            time.sleep(0.001)
    dt = time.monotonic() - t0
    if sn is not None:
        sn.close()
    say("spoof: %s, %d sent in %.2f s (%.0f a second), %d refused by the socket (ENOBUFS)" % (
        ", ".join("%s %d" % kv for kv in sorted(kinds.items())), sent, dt, sent / dt if dt > 0 else 0, errs))
    print("sent %d" % sent)


def hellos(a):
    hello = bytes.fromhex(open(a.hello).read().strip())
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(hard, 65536)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    fam = fam_of(a.dst)
    af = socket.AF_INET if fam == 4 else socket.AF_INET6
    sel = selectors.DefaultSelector()
    conns = {}		# sock -> {t, state, port}
    st = {"started": 0, "connect_refused": 0, "connected": 0, "sent": 0, "answered": 0,
          "answered_ports": [], "never_connected": 0, "closed_by_peer": 0}
    ports = []
    linger = struct.pack("ii", 1, 0)
    t0 = time.monotonic()
    end = t0 + a.secs
    started = 0

    def close(s):
        sel.unregister(s)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        except OSError:
            pass
        s.close()
        del conns[s]

    while True:
        now = time.monotonic()
        if now < end:
            due = min(int((now - t0) * a.rate) + 1, a.max)
            while started < due:
                s = socket.socket(af, socket.SOCK_STREAM)
                s.setblocking(False)
                started += 1
                try:
                    s.connect((a.dst, a.port))
                except BlockingIOError:
                    pass
                except OSError:
                    st["connect_refused"] += 1
                    s.close()
                    continue
                conns[s] = {"t": now, "state": "connecting"}
                sel.register(s, selectors.EVENT_WRITE)
        elif not conns:
            break
        for key, ev in sel.select(0.002):
            s = key.fileobj
            c = conns[s]
            if c["state"] == "connecting":
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err != 0:
                    st["connect_refused"] += 1
                    close(s)
                    continue
                st["connected"] += 1
                c["port"] = s.getsockname()[1]
                ports.append(c["port"])
                try:
                    s.send(hello)
                    st["sent"] += 1
                except OSError:
                    pass
                c["state"] = "sent"
                sel.modify(s, selectors.EVENT_READ)
            else:
                try:
                    d = s.recv(65536)
                except OSError:
                    d = b""
                if d:
                    if not c.get("answered"):
                        c["answered"] = True
                        st["answered"] += 1
                        st["answered_ports"].append(c["port"])
                else:
                    st["closed_by_peer"] += 1
                    close(s)
        now = time.monotonic()
        for s in [s for s, c in conns.items() if now - c["t"] >= a.hold]:
            if conns[s]["state"] == "connecting":
                st["never_connected"] += 1
            close(s)
    st["started"] = started
    st["secs"] = round(time.monotonic() - t0, 2)
    st["rate"] = round(started / a.secs, 1)
    if a.ports:
        with open(a.ports, "w") as f:
            f.write("".join("%d\n" % p for p in ports))
    print(json.dumps(st))


def tls_server(a):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(a.cert, a.key)
    log = open(a.log, "a", buffering=1) if a.log else None

    async def handle(reader, writer):
        peer = writer.get_extra_info("peername")
        if log:
            log.write("%d\n" % peer[1])
        try:
            req = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            name = req.split(b" ")[1].decode().lstrip("/")
            path = os.path.join(a.dir, os.path.basename(name))
            if not os.path.isfile(path):
                writer.write(b"HTTP/1.0 404 not found\r\nContent-Length: 0\r\n\r\n")
            else:
                size = os.path.getsize(path)
                writer.write(b"HTTP/1.0 200 ok\r\nContent-Length: %d\r\n\r\n" % size)
                with open(path, "rb") as f:
                    while True:
                        b = f.read(1 << 16)
                        if not b:
                            break
                        writer.write(b)
                        await writer.drain()
            await writer.drain()
        except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError, IndexError, ssl.SSLError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def serve():
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda l, c: None)	# handshakes timed out: expected
        srv = await asyncio.start_server(handle, host=None, port=a.port, ssl=ctx, backlog=4096,
                                         ssl_handshake_timeout=5, reuse_address=True)
        async with srv:
            await srv.serve_forever()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    asyncio.run(serve())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("spoof")
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--sport", type=int, required=True)
    p.add_argument("--dport", type=int, default=443)
    p.add_argument("--hello", required=True)
    p.add_argument("--dev", default="c0")
    p.add_argument("--plan", default="ack:0,ack:rand,ack:cur,syn:0,syn:rand,syn:cur")
    p.add_argument("--ack-off", type=lambda v: int(v, 0), default=0x20000000)
    p.add_argument("--cur", help="SEQ:ACK: the victim's next seq and ACK to start from")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--rate", type=float, default=0)
    p.add_argument("--secs", type=float, default=3)
    p = sub.add_parser("hellos")
    p.add_argument("--dst", required=True)
    p.add_argument("--port", type=int, default=443)
    p.add_argument("--hello", required=True)
    p.add_argument("--rate", type=float, required=True)
    p.add_argument("--secs", type=float, required=True)
    p.add_argument("--hold", type=float, default=1.5)
    p.add_argument("--max", type=int, default=5000)
    p.add_argument("--ports")
    p = sub.add_parser("tls-server")
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--port", type=int, default=443)
    p.add_argument("--log")
    a = ap.parse_args()
    if a.cmd == "tls-server":
        tls_server(a)
    elif a.cmd == "spoof":
        if a.rate > 0 and a.count == 1:
            a.count = 10 ** 9
        spoof(a)
    else:
        hellos(a)


if __name__ == "__main__":
    main()
