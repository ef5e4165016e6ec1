#!/usr/bin/env python3
"""A TCP stream and an RST spoofed into it, for tests/lab/test_lab.sh: plain
sockets, one subcommand each.  IPv4 or IPv6 by the address given.

  serve PORT OUT
      accept one connection on PORT (IPv4 and IPv6), read it to its end,
      write the bytes read to OUT ("reset N" if it was reset)
  send HOST PORT SPORT SECS
      connect from source port SPORT, send 1,000 bytes every 10 ms for
      SECS s, shut down; prints "sent N"; exits 1 if the connection fails
  rst DEV HOST PORT SPORT far|near
      read on DEV (AF_PACKET) the next data segment this host sends from
      SPORT to HOST:PORT, then send, from a raw socket, an RST with the
      same 5-tuple and the sequence number `far` (the segment's + 2^30:
      far outside any window) or `near` (the segment's - 1: inside the
      fast path's window, behind what the server expects, so it resets
      nothing); prints what it sent.  Exits 1 if no segment came in 5 s.
"""
import ipaddress
import socket
import struct
import sys
import time

from labnet import csum

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
TCP_RST = 0x04


def serve(port, out):
    ls = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    ls.bind(("::", port))
    ls.listen(1)
    c, _ = ls.accept()
    n, how = 0, ""
    try:
        while True:
            b = c.recv(65536)
            if not b:
                break
            n += len(b)
    except ConnectionResetError:
        how = "reset "
    with open(out, "w") as f:
        f.write("%s%d\n" % (how, n))


def send(host, port, sport, secs):
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", sport))
    s.connect((host, port))
    chunk, n, end = bytes(range(250)) * 4, 0, time.monotonic() + secs
    while time.monotonic() < end:
        s.sendall(chunk)
        n += len(chunk)
        time.sleep(0.01)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)		# the server's close
    s.close()
    print("sent %d" % n)


def segment(frame):
    """(src, dst, sport, dport, seq, payload length) of a TCP frame, or None."""
    etype = struct.unpack("!H", frame[12:14])[0]
    if etype == 0x0800 and frame[23] == socket.IPPROTO_TCP:
        ihl = (frame[14] & 0x0f) * 4
        total = struct.unpack("!H", frame[16:18])[0]
        src, dst = frame[26:30], frame[30:34]
        l4, l4len = 14 + ihl, total - ihl
    elif etype == 0x86dd and frame[20] == socket.IPPROTO_TCP:
        src, dst = frame[22:38], frame[38:54]
        l4, l4len = 54, struct.unpack("!H", frame[18:20])[0]
    else:
        return None
    sport, dport, seq = struct.unpack("!HHI", frame[l4:l4 + 8])
    doff = (frame[l4 + 12] >> 4) * 4
    return src, dst, sport, dport, seq, l4len - doff


def rst(dev, host, port, sport, how):
    want = ipaddress.ip_address(host).packed
    cap = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    cap.bind((dev, 0))
    cap.settimeout(0.5)
    end = time.monotonic() + 5
    seg = None
    while seg is None:
        if time.monotonic() > end:
            sys.exit("no data segment from port %d to %s port %d on %s in 5 s"
                     % (sport, host, port, dev))
        try:
            frame, addr = cap.recvfrom(65536)
        except socket.timeout:
            continue
        if addr[2] != PACKET_OUTGOING:
            continue
        s = segment(frame)
        if s and s[1] == want and s[2] == sport and s[3] == port and s[5] > 0:
            seg = s
    cap.close()
    src, dst, _, _, seq, plen = seg
    rseq = (seq + (1 << 30)) & 0xffffffff if how == "far" else (seq - 1) & 0xffffffff
    hdr = struct.pack("!HHIIBBHHH", sport, port, rseq, 0, 5 << 4, TCP_RST, 0, 0, 0)
    if len(want) == 4:
        pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(hdr))
        fam, to = socket.AF_INET, (host, 0)
    else:
        pseudo = src + dst + struct.pack("!IxxxB", len(hdr), socket.IPPROTO_TCP)
        fam, to = socket.AF_INET6, (host, 0, 0, 0)
    hdr = hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]
    raw = socket.socket(fam, socket.SOCK_RAW, socket.IPPROTO_TCP)
    raw.bind((socket.inet_ntop(fam, src), 0))
    raw.sendto(hdr, to)
    raw.close()
    print("RST seq %u sent (%s: the segment seen was seq %u, %d bytes)" % (rseq, how, seq, plen))


def main():
    a = sys.argv[1:]
    if a[:1] == ["serve"] and len(a) == 3:
        serve(int(a[1]), a[2])
    elif a[:1] == ["send"] and len(a) == 5:
        send(a[1], int(a[2]), int(a[3]), float(a[4]))
    elif a[:1] == ["rst"] and len(a) == 6 and a[5] in ("far", "near"):
        rst(a[1], a[2], int(a[3]), int(a[4]), a[5])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
