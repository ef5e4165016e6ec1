#!/usr/bin/env python3
# A request flood and slow clients against an HTTP server (flowcut-web):
#   flood.py HOST PORT [--path P]... [--requests N] [--at-once C] [--slow S]
#            [--within SECONDS] [--hold SECONDS] [--secret FILE]
# First S slow clients connect and send half a request ("GET / HTTP/1.1\r\n
# Host: x\r\n", no blank line) and wait; then N requests (the paths in
# turn), C at a time, each on its own connection, read to its close; then
# the slow ones are looked at (answered or closed by the server, or still
# open) and let go.  Prints one JSON line: {"codes": {"200": n, "503": n},
# "unanswered": n (closed or reset without a status line), "timed_out": n,
# "seconds": s, "p99_ms": ms, "slow_closed": n, "slow_answered": n,
# "slow_open": n}.  Exit 0 always: the caller judges.  --secret: each
# request carries HTTP Basic authentication, the file's first line the
# password (flowcut-web's reads ask for one).
import argparse
import asyncio
import base64
import json
import time

auth = ""


def host_hdr(host, port):
    # the Host a browser sends (flowcut-web answers 421 to any other)
    return ("[%s]:%d" if ":" in host else "%s:%d") % (host, port)


async def one(host, port, path, within, lat, codes, bad):
    t0 = time.monotonic()
    try:
        r, w = await asyncio.wait_for(asyncio.open_connection(host, port), within)
        w.write(("GET %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n" % (path, host_hdr(host, port), auth)).encode())
        await w.drain()
        data = await asyncio.wait_for(r.read(), within)
        w.close()
    except asyncio.TimeoutError:
        bad["timed_out"] += 1
        return
    except OSError:
        bad["unanswered"] += 1
        return
    line = data.split(b"\r\n", 1)[0].split()
    if len(line) < 2 or not line[0].startswith(b"HTTP/"):
        bad["unanswered"] += 1
        return
    codes[line[1].decode()] = codes.get(line[1].decode(), 0) + 1
    lat.append((time.monotonic() - t0) * 1000)


async def slow(host, port):
    r, w = await asyncio.open_connection(host, port)
    w.write(("GET / HTTP/1.1\r\nHost: %s\r\n" % host_hdr(host, port)).encode())
    await w.drain()
    return r, w


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    ap.add_argument("--path", action="append")
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--at-once", type=int, default=64)
    ap.add_argument("--slow", type=int, default=0)
    ap.add_argument("--within", type=float, default=20.0)
    ap.add_argument("--hold", type=float, default=0.0)
    ap.add_argument("--secret")
    a = ap.parse_args()
    if a.secret:
        global auth
        with open(a.secret) as f:
            pw = f.readline().strip()
        auth = "Authorization: Basic %s\r\n" % base64.b64encode(("reader:" + pw).encode()).decode()
    paths = a.path or ["/api/status"]
    slows = []
    for _ in range(a.slow):
        try:
            slows.append(await slow(a.host, a.port))
        except OSError:
            pass
    lat, codes, bad = [], {}, {"unanswered": 0, "timed_out": 0}
    sem = asyncio.Semaphore(a.at_once)

    async def gated(i):
        async with sem:
            await one(a.host, a.port, paths[i % len(paths)], a.within, lat, codes, bad)

    t0 = time.monotonic()
    await asyncio.gather(*(gated(i) for i in range(a.requests)))
    secs = time.monotonic() - t0
    if a.hold > 0:
        await asyncio.sleep(a.hold)
    async def look(r, w):	# all at once: one after another would outlast the server's timeout
        try:
            d = await asyncio.wait_for(r.read(4096), 0.5)
            return "answered" if d.startswith(b"HTTP/") else "closed"
        except asyncio.TimeoutError:
            return "open"
        except OSError:
            return "closed"
        finally:
            w.close()
    seen = await asyncio.gather(*(look(r, w) for r, w in slows))
    closed, answered, still = seen.count("closed"), seen.count("answered"), seen.count("open")
    lat.sort()
    print(json.dumps({"codes": codes, "unanswered": bad["unanswered"], "timed_out": bad["timed_out"],
                      "seconds": round(secs, 2),
                      "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 1) if lat else None,
                      "slow_connected": len(slows), "slow_closed": closed,
                      "slow_answered": answered, "slow_open": still}))


asyncio.run(main())
