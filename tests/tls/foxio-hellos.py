#!/usr/bin/env python3
"""The lines of tests/tls/foxio-ja4.txt, from a checkout of FoxIO's JA4
repository (github.com/FoxIO-LLC/ja4): for each capture of its pcap/ that
its Rust snapshots (rust/ja4/src/snapshots/ja4__insta@CAPTURE.snap) give
JA4s for, the hello of each distinct fingerprint - TCP: the hello's
records, reassembled by tshark; QUIC: the client's first 3 datagrams.

    tests/tls/foxio-hellos.py JA4-CHECKOUT >lines

Run by hand when FoxIO's data changes (tshark needed); the file's header
and its one deliberate difference are kept by hand (see the file)."""
import glob
import os
import re
import subprocess
import sys


def snapshot(path):
    """(transport, src_port, ja4) of each stream's hello in a snapshot."""
    want, cur = [], {}
    for line in open(path):
        if re.match(r"^- stream:", line):
            cur = {}
        m = re.match(r"^  (transport|src_port|ja4): (\S+)", line)
        if m:
            cur[m.group(1)] = m.group(2)
            if m.group(1) == "ja4":
                want.append((cur.get("transport"), cur.get("src_port"), m.group(2)))
    return want


def fields(pcap, filt, *fs, opts=()):
    args = ["tshark", "-r", pcap, *opts, "-Y", filt, "-T", "fields"]
    for f in fs:
        args += ["-e", f]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [line.split("\t") for line in out.splitlines()]


def main():
    root = sys.argv[1]
    seen_bytes, seen_fp = set(), set()
    for snap in sorted(glob.glob(root + "/rust/ja4/src/snapshots/ja4__insta@*.snap")):
        name = os.path.basename(snap)[len("ja4__insta@"):-len(".snap")]
        pcap = os.path.join(root, "pcap", name)
        want = snapshot(snap)
        if not want or not os.path.exists(pcap):
            continue
        tcp, udp = {}, {}
        for f in fields(pcap, "tls.handshake.type == 1 && tcp", "tcp.srcport", "tcp.reassembled.data",
                        "tcp.payload", opts=("-o", "tcp.desegment_tcp_streams:TRUE")):
            if len(f) >= 3 and f[0] not in tcp:
                tcp[f[0]] = (f[1] or f[2]).split(",")[0].replace(":", "")
        for f in fields(pcap, "udp", "udp.srcport", "udp.payload"):
            if len(f) >= 2 and f[1]:
                udp.setdefault(f[0], []).append(f[1].replace(":", ""))
        for tr, port, ja4 in want:
            kind = "quic" if tr == "udp" else "tcp"
            data = ":".join(udp.get(port, [])[:3]) if kind == "quic" else tcp.get(port)
            if not data:
                print("# not read: %s port %s (%s)" % (name, port, ja4), file=sys.stderr)
                continue
            if data in seen_bytes or (name, ja4) in seen_fp:
                continue
            seen_bytes.add(data)
            seen_fp.add((name, ja4))
            print(name, port, kind, ja4, data)


if __name__ == "__main__":
    main()
