#!/usr/bin/env python3
"""The ends tests/lab/test_real.sh needs that no stock program plays as the
test needs: plain sockets and http.client, one subcommand each.

  halfclose HOST PORT PATH OUT [GATE]
      GET PATH, shut the sending side (shutdown SHUT_WR), read to EOF, the
      body to OUT, the status line to stdout.  With GATE: read 1 MB first,
      make GATE.reading, and shut down only once GATE exists.
  body RAW OUT
      an HTTP answer read raw (nc): the status line to stdout, the body to OUT
  keepidle HOST PORT FIRST SECOND OUT PAUSE MARK
      one keep-alive connection (http.client): GET FIRST, write our port to
      MARK, sleep PAUSE s, GET SECOND into OUT; fails unless both went over
      the one connection
  udp-echo HOST PORT PIDFILE
      a UDP echo server
  udp-client HOST PORT SECS
      a connected UDP socket sending every 20 ms; prints "refused EPOCH" and
      exits 0 at the first ECONNREFUSED (an ICMP port unreachable came
      back), exits 1 if none came within SECS
  udp-many HOST PORT N SECS EVERY
      N connected UDP sockets (N connections), each sending one datagram
      every EVERY s for SECS s, echoes read as they come; prints "sent S
      echoed E" at the end
"""
import http.client
import os
import socket
import sys
import time


def family(host):
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def status_and_body(raw):
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep:
        return "no HTTP answer", b""
    return head.split(b"\r\n")[0].decode("latin-1"), body


def halfclose(host, port, path, out, gate=None):
    s = socket.create_connection((host, int(port)), timeout=30)
    s.sendall(b"GET %s HTTP/1.0\r\nHost: lab\r\n\r\n" % path.encode())
    buf = bytearray()
    if gate:
        while len(buf) < 1 << 20:
            d = s.recv(65536)
            if not d:
                break
            buf += d
        open(gate + ".reading", "w").close()
        deadline = time.time() + 30
        while not os.path.exists(gate):
            if time.time() > deadline:
                sys.exit("halfclose: no go")
            time.sleep(0.02)
    s.shutdown(socket.SHUT_WR)
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        buf += d
    status, body = status_and_body(bytes(buf))
    with open(out, "wb") as f:
        f.write(body)
    print(status)


def body(raw, out):
    with open(raw, "rb") as f:
        status, b = status_and_body(f.read())
    with open(out, "wb") as f:
        f.write(b)
    print(status)


def keepidle(host, port, first, second, out, pause, mark):
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    c.request("GET", first)
    r = c.getresponse()
    n1 = len(r.read())
    port1 = c.sock.getsockname()[1]
    print("first", r.status, n1, "bytes, port", port1, flush=True)
    with open(mark + ".tmp", "w") as f:
        f.write("%d\n" % port1)
    os.rename(mark + ".tmp", mark)
    time.sleep(float(pause))
    c.request("GET", second)
    r = c.getresponse()
    n2 = 0
    with open(out, "wb") as f:
        while True:
            d = r.read(1 << 20)
            if not d:
                break
            f.write(d)
            n2 += len(d)
    port2 = c.sock.getsockname()[1]
    print("second", r.status, n2, "bytes, port", port2, flush=True)
    if port1 != port2 or r.status != 200:
        sys.exit("keepidle: the second request did not go over the first connection")


def udp_echo(host, port, pidfile):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    s.bind((host, int(port)))
    with open(pidfile, "w") as f:
        f.write("%d\n" % os.getpid())
    while True:
        d, a = s.recvfrom(2048)
        s.sendto(d, a)


def udp_client(host, port, secs):
    s = socket.socket(family(host), socket.SOCK_DGRAM)
    s.connect((host, int(port)))
    s.settimeout(0.02)
    sent = echoed = 0
    end = time.time() + float(secs)
    while time.time() < end:
        try:
            s.send(b"flowcut %d" % sent)
            sent += 1
            try:
                while True:
                    s.recv(2048)
                    echoed += 1
            except socket.timeout:
                pass
        except ConnectionRefusedError:
            print("refused %.3f sent %d echoed %d" % (time.time(), sent, echoed), flush=True)
            return
    print("never refused: sent %d echoed %d" % (sent, echoed))
    sys.exit(1)


def udp_many(host, port, n, secs, every):
    socks = []
    for _ in range(int(n)):
        s = socket.socket(family(host), socket.SOCK_DGRAM)
        s.connect((host, int(port)))
        s.setblocking(False)
        socks.append(s)
    sent = echoed = 0
    end = time.time() + float(secs)
    while time.time() < end:
        t0 = time.time()
        for s in socks:
            try:
                s.send(b"flowcut many %d" % sent)
                sent += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass
            try:
                while True:
                    s.recv(2048)
                    echoed += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass
        left = float(every) - (time.time() - t0)
        if left > 0:
            time.sleep(left)
    print("sent %d echoed %d" % (sent, echoed), flush=True)


def main():
    cmds = {"halfclose": halfclose, "body": body, "keepidle": keepidle,
            "udp-echo": udp_echo, "udp-client": udp_client, "udp-many": udp_many}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
