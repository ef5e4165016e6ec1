#!/usr/bin/env python3
"""The figures of the lab's measurement scripts (lab/cut.sh, lab/verdict.sh,
lab/many.sh): a sampler, the arithmetic on its samples, the table, the JSON
and the plot.  The scripts run the lab and the traffic; this reads and draws.
Python's standard library only, and gnuplot (Debian's gnuplot-nox) for the
plot: json for the documents, no hand-written formats.

  record --out F --t0 EPOCH --secs N --ctl FLOWCUTCTL --link PATH
         --host-pid P --server-pid P --flowcutd-pid P --npu-pid P [--period S]
      one JSON line per tick, at t0 + k * period until t0 + secs (or
      SIGTERM): the server port's rx bytes and frames (s0, read in
      /proc/P/net/dev of a process in the server's namespace), the frames
      the host's front ports took in (fp0 + fp1 rx, the same way in the
      host's namespace), the coprocessor's counters and connection count
      (flowcutctl --json counters --all, status), the utime + stime of
      flowcutd and flowcut-npu (/proc/P/stat, all threads), and the
      machine's cpu line of /proc/stat
  window F FROM TO          shell assignments: what changed from second FROM
                            to second TO after t0 (the keys of delta(), and
                            conns_max, the most connections seen meanwhile)
  counters F FROM TO        the coprocessor's counters that moved, NAME=delta
  series F [--from S] [--until S] [--t0 EPOCH]
                            per-interval figures, one line each, for gnuplot
  row FILE KEY=VALUE...     appends one row (a JSON object) to FILE
  table ROWS SPEC [--lines] prints the rows side by side, one line a column
                            (--lines: one line a row); SPEC is
                            "key=Label|key=Label|..."
  json OUT --meta K=V... --rows ROWS [--series NAME=SAMPLES...] [--extra NAME=ROWS]
                            the document --json FILE writes
  clients FILE...           iperf3 --json outputs: streams, mbps, failed, errors
  summary ROWS OUT          lab/many.sh's runs per setting: median, range
  wire-lost [PORT]          `flowcutctl --json counters --all` on stdin: the
                            frames the coprocessor lost at its ingress, on
                            PORT or every port (WIRE_LOSS: the one list of
                            the wire figures that are losses, docs/counters.md)
  perfsplit PERF_DATA [NS]  lab/peer.sh --perf: a thread's samples (perf record
                            -g) split by where they fell - the transmit and
                            receive syscalls (and, in the transmit, the
                            receiver's stack the veth runs there), the fast
                            path, the PMD, DPDK, libc - each a share, and of
                            NS nanoseconds a frame when given
  conns [--fam F] [--proto P] [--port N] [--id ID] [--alive] [--valid]
        [--forwarding] [--cut-thru] [--rev N] --print WHAT
                            "is this connection in the fast path": the
                            connections of `flowcutctl --json conns` on
                            stdin whose first direction matches (family,
                            protocol, the server's port; --alive: seen in
                            the last second; --valid: state valid;
                            --forwarding: neither its verdict nor its first
                            direction DROP; --cut-thru: verdict CUT_THRU;
                            --rev: made under fw_rev N, or --rev-of STATUS:
                            under `flowcutctl --json status`'s), and WHAT:
                            count; packets (their first directions' sum);
                            best (the id of the one with the most packets)
                            or best-action ("ID ACTION"); state ("dropping"
                            or "forwarding", of the one --id names); idle
                            (its idle_s).  Exit 1 when none matches (count:
                            prints 0, exit 1)
  plot OUT TITLE PANEL...   a PNG: PANEL is "title@series.dat@marks[@from:to]",
                            marks "t:label,t:label", from:to a window shaded
                            grey; delivered Mbit/s on the left
                            axis, frames per second (to the host, dropped on
                            the coprocessor) on the right

CPU figures are shares of the whole machine (all its cores = 100 %), from
clock ticks (USER_HZ): see docs/lab.md for what each one includes.
"""
import json
import os
import signal
import subprocess
import sys
import time

HZ = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1
# the wire figures that count frames a port lost before it read them
# (docs/counters.md, "The wire's own"): lab/many.sh, lab/flood.sh and
# tests/lab/test_wire.sh add these up
WIRE_LOSS = ("RX_MISSED", "RX_NOMBUF", "RX_ERRORS", "KERNEL_RX_DROPPED")


def die(msg):
    print("measure.py: " + msg, file=sys.stderr)
    sys.exit(1)


# ---- reading ----

def net_dev(pid, names):
    """rx bytes and rx packets of each interface in names, in pid's netns."""
    out = {}
    with open(f"/proc/{pid}/net/dev") as f:
        for line in f:
            name, sep, rest = line.partition(":")
            name = name.strip()
            if sep and name in names:
                v = rest.split()
                out[name] = (int(v[0]), int(v[1]))
    missing = [n for n in names if n not in out]
    if missing:
        raise OSError(f"no {', '.join(missing)} in /proc/{pid}/net/dev")
    return out


def proc_ticks(pid):
    """utime + stime of a process, all its threads, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])	# fields 14 and 15 of proc(5)


def cpu_line():
    """user nice system idle iowait irq softirq steal, machine-wide ticks."""
    with open("/proc/stat") as f:
        v = f.readline().split()
    if v[0] != "cpu":
        raise OSError("/proc/stat does not start with the cpu line")
    return [int(x) for x in v[1:9]]


def ctl_json(ctl, link, *args):
    out = subprocess.run([ctl, "--link", link, "--json", *args], capture_output=True,
                         text=True, timeout=5)
    if out.returncode != 0:
        raise OSError(f"flowcutctl {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def sample(a):
    s = {}
    t = time.time()
    srv = net_dev(a.server_pid, ["s0"])["s0"]
    host = net_dev(a.host_pid, ["fp0", "fp1"])
    s["srv"] = list(srv)
    s["host"] = [host["fp0"][1], host["fp1"][1]]
    s["cnt"] = ctl_json(a.ctl, a.link, "counters", "--all")
    s["conns"] = ctl_json(a.ctl, a.link, "status")["connections"]
    s["fcd"] = proc_ticks(a.flowcutd_pid)
    s["npu"] = proc_ticks(a.npu_pid)
    s["cpu"] = cpu_line()
    s["load"] = float(open("/proc/loadavg").read().split()[0])
    s["t"] = (t + time.time()) / 2	# the readings take a few ms, more under load
    s["took"] = round(time.time() - t, 3)
    return s


def record(argv):
    import argparse
    p = argparse.ArgumentParser(prog="measure.py record")
    for o in ("out", "ctl", "link"):
        p.add_argument("--" + o, required=True)
    for o in ("host-pid", "server-pid", "flowcutd-pid", "npu-pid"):
        p.add_argument("--" + o, required=True, type=int)
    p.add_argument("--t0", required=True, type=float)
    p.add_argument("--secs", required=True, type=float)
    p.add_argument("--period", type=float, default=1.0)
    a = p.parse_args(argv)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    with open(a.out, "w") as f:
        f.write(json.dumps({"t0": a.t0, "hz": HZ, "ncpu": NCPU, "period": a.period}) + "\n")
        k = 0
        while not stop:
            at = a.t0 + k * a.period
            if at > a.t0 + a.secs + 1e-6:
                break
            d = at - time.time()
            if d > 0:
                time.sleep(d)
            if stop:
                break
            try:
                s = sample(a)
            except (OSError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
                # a reading that failed is a gap in the series, said once per tick
                print(f"measure.py record: tick {k}: {e}", file=sys.stderr)
                k += 1
                continue
            s["k"] = k
            f.write(json.dumps(s) + "\n")
            f.flush()
            k += 1


# ---- arithmetic ----

def load(path):
    with open(path) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    if not lines or "t0" not in lines[0]:
        die(f"{path}: not a record of measure.py (no header line)")
    return lines[0], lines[1:]


def at(head, samples, sec):
    """the sample nearest to t0 + sec"""
    if not samples:
        die("no samples")
    want = head["t0"] + sec
    return min(samples, key=lambda s: abs(s["t"] - want))


def drops(cnt):
    return sum(v for k, v in cnt.items() if k.startswith("FROM_WIRE_DROP_"))


def pct(ticks, dt, head):
    return 100.0 * ticks / (dt * head["hz"] * head["ncpu"]) if dt > 0 else 0.0


def delta(head, a, b):
    dt = b["t"] - a["t"]
    cpu = [y - x for x, y in zip(a["cpu"], b["cpu"])]
    total = sum(cpu)
    return {
        "window_s": round(dt, 2),
        "host_frames": sum(b["host"]) - sum(a["host"]),
        "far_frames": b["srv"][1] - a["srv"][1],
        "far_bytes": b["srv"][0] - a["srv"][0],
        "far_mbps": round((b["srv"][0] - a["srv"][0]) * 8 / dt / 1e6, 1) if dt > 0 else 0.0,
        "dropped": drops(b["cnt"]) - drops(a["cnt"]),
        "to_wire": sum(b["cnt"].get(k, 0) - a["cnt"].get(k, 0) for k in b["cnt"]
                       if k.startswith("FROM_WIRE_TO_WIRE")),
        "flowcutd_cpu": round(pct(b["fcd"] - a["fcd"], dt, head), 2),
        "npu_cpu": round(pct(b["npu"] - a["npu"], dt, head), 2),
        "softirq_cpu": round(100.0 * cpu[6] / total, 2) if total else 0.0,
        "busy_cpu": round(100.0 * (total - cpu[3] - cpu[4]) / total, 2) if total else 0.0,
        "conns_end": b["conns"],
        "load": b["load"],
    }


def window(argv):
    head, samples = load(argv[0])
    lo, hi = float(argv[1]), float(argv[2])
    a, b = at(head, samples, lo), at(head, samples, hi)
    d = delta(head, a, b)
    d["conns_max"] = max(s["conns"] for s in samples if a["t"] <= s["t"] <= b["t"])
    for k, v in d.items():
        print(f"{k}={v}")


def counters(argv):
    head, samples = load(argv[0])
    a, b = at(head, samples, float(argv[1])), at(head, samples, float(argv[2]))
    for k in b["cnt"]:
        v = b["cnt"][k] - a["cnt"].get(k, 0)
        if v:
            print(f"{k}={v}")


def series_rows(path, t0=None, lo=None, hi=None):
    head, samples = load(path)
    base = head["t0"] if t0 is None else t0
    rows = []
    for j, (a, b) in enumerate(zip(samples, samples[1:])):
        t = b["t"] - base
        if (lo is not None and t < lo) or (hi is not None and t > hi):
            continue
        d = delta(head, a, b)
        dt = d["window_s"] or 1
        if j == 0:	# fsteps: the first interval's start, drawn at its value
            rows.append(None)
        rows.append([round(t, 2), d["far_mbps"], round(d["host_frames"] / dt),
                     round(d["dropped"] / dt), d["flowcutd_cpu"], d["npu_cpu"],
                     d["softirq_cpu"], d["conns_end"]])
        if rows[0] is None:
            rows[0] = [round(a["t"] - base, 2)] + rows[1][1:]
    return [r for r in rows if r is not None]


SERIES_COLS = ["t", "delivered_mbps", "host_frames_per_s", "dropped_per_s",
               "flowcutd_cpu", "npu_cpu", "softirq_cpu", "conns"]


def series(argv):
    import argparse
    p = argparse.ArgumentParser(prog="measure.py series")
    p.add_argument("file")
    p.add_argument("--t0", type=float)
    p.add_argument("--from", dest="lo", type=float)
    p.add_argument("--until", dest="hi", type=float)
    a = p.parse_args(argv)
    print("# " + " ".join(SERIES_COLS))
    for r in series_rows(a.file, a.t0, a.lo, a.hi):
        print(" ".join(str(x) for x in r))


# ---- rows, table, document ----

def value(v):
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def row(argv):
    r = {}
    for kv in argv[1:]:
        k, sep, v = kv.partition("=")
        if not sep:
            die(f"row: '{kv}' is not KEY=VALUE")
        r[k] = value(v)
    with open(argv[0], "a") as f:
        f.write(json.dumps(r) + "\n")


def fmt(v):
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.2f}"
    return str(v)


def read_rows(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def table(argv):
    """rows side by side (a column each), or with --lines one line each"""
    lines = "--lines" in argv
    argv = [a for a in argv if a != "--lines"]
    rows = read_rows(argv[0])
    spec = [c.partition("=")[::2] for c in argv[1].split("|")]
    if lines:
        cells = [[label for _, label in spec]] + [[fmt(r.get(k, "")) for k, _ in spec] for r in rows]
        w = [max(len(c[j]) for c in cells) for j in range(len(spec))]
        for c in cells:
            print("  ".join(f"{x:>{w[j]}}" if j else f"{x:<{w[j]}}" for j, x in enumerate(c)))
        return
    w0 = max(len(label) for _, label in spec)
    cells = [[fmt(r.get(k, "")) for r in rows] for k, _ in spec]
    w = [max([len(c[i]) for c in cells] + [8]) for i in range(len(rows))]
    for (k, label), c in zip(spec, cells):
        print(f"{label:<{w0}}  " + "  ".join(f"{x:>{w[i]}}" for i, x in enumerate(c)))


def document(argv):
    import argparse
    p = argparse.ArgumentParser(prog="measure.py json")
    p.add_argument("out")
    p.add_argument("--meta", nargs="*", default=[])
    p.add_argument("--rows", required=True)
    p.add_argument("--series", nargs="*", default=[])
    p.add_argument("--extra", nargs="*", default=[], help="NAME=ROWS: more rows under NAME")
    a = p.parse_args(argv)
    doc = {}
    for kv in a.meta:
        k, _, v = kv.partition("=")
        doc[k] = value(v)
    doc["rows"] = read_rows(a.rows)
    for nv in a.extra:
        name, _, path = nv.partition("=")
        doc[name] = read_rows(path)
    doc["series_columns"] = SERIES_COLS
    doc["series"] = {}
    for nv in a.series:
        name, _, path = nv.partition("=")
        doc["series"][name] = series_rows(path)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


# ---- the plot ----

def gp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def data_max(path, col):
    v = [float(x.split()[col]) for x in open(path) if x.strip() and not x.startswith("#")]
    return max(v) if v else 0.0


def plot(argv):
    out, title, panels = argv[0], argv[1], argv[2:]
    if not panels:
        die("plot: no panel")
    n = len(panels)
    g = [f"set terminal pngcairo size 900,{150 + 300 * n} font 'DejaVu Sans,10'",
         f"set output {gp_str(out)}",
         "set termoption noenhanced",	# names like DROP_IPS_VERDICT as they are
         f"set multiplot layout {n},1 title {gp_str(title)} font ',12'",
         "set grid xtics ytics lc rgb '#dddddd'",
         "set xlabel 'seconds' offset 0,0.5",
         "set ylabel 'delivered at the far end, Mbit/s' tc rgb '#1f5fbf'",
         "set y2label 'frames per second' tc rgb '#c03020'",
         "set ytics nomirror tc rgb '#1f5fbf'",
         "set y2tics tc rgb '#c03020'",
         "set key below horizontal maxrows 1 font ',9' samplen 2",
         # a value is its interval's: drawn from the interval's start to its end
         "set style data fsteps"]
    # one time axis for every panel, so that they compare at a glance
    xmax = max(data_max(p.split("@")[1], 0) for p in panels if p.count("@") >= 2) + 0.5
    # the coprocessor's drops, where there are any (lab/many.sh has none)
    drops = any(data_max(p.split("@")[1], 3) > 0 for p in panels if p.count("@") >= 2)
    for p in panels:
        parts = p.split("@")
        if len(parts) not in (3, 4):
            die(f"plot: '{p}' is not TITLE@DATA@MARKS[@FROM:TO]")
        ptitle, data, marks = parts[:3]
        ymax = max(data_max(data, 1), 1) * 1.3	# room above for the marks' labels
        y2max = max(data_max(data, 2), data_max(data, 3), 10) * 1.3
        g.append(f"set title {gp_str(ptitle)}")
        g.append("unset arrow; unset label; unset object")
        g.append(f"set xrange [0:{xmax}]; set yrange [0:{ymax}]; set y2range [0:{y2max}]")
        g.append("set format y2 '%.0s%c'" if y2max >= 20000 else "set format y2 '%g'")
        if len(parts) == 4:
            lo, _, hi = parts[3].partition(":")
            g.append(f"set object rect from {lo}, graph 0 to {hi}, graph 1 fc rgb '#eeeeee' fs solid noborder behind")
        for i, m in enumerate(x for x in marks.split(",") if x):
            t, _, label = m.partition(":")
            side = "right offset -0.4,0" if float(t) > 0.85 * xmax else "left offset 0.4,0"
            g.append(f"set arrow from {t}, graph 0 to {t}, graph 1 nohead lw 1.5 dt 2 lc rgb '#333333'")
            g.append(f"set label {gp_str(label)} at {t}, graph {0.94 - 0.08 * (i % 3)} {side} font ',9'")
        g.append(f"plot {gp_str(data)} using 1:2 axes x1y1 lw 2 lc rgb '#1f5fbf' title 'delivered at the far end, Mbit/s (left)', "
                 f"'' using 1:3 axes x1y2 lw 2 lc rgb '#c03020' title 'frames to the host per s (right)'"
                 + (f", '' using 1:4 axes x1y2 lw 1 lc rgb '#e89020' title 'dropped on the coprocessor per s (right)'"
                    if drops else ""))
    g.append("unset multiplot")
    r = subprocess.run(["gnuplot"], input="\n".join(g) + "\n", text=True, capture_output=True)
    if r.returncode != 0:
        die("gnuplot: " + r.stderr.strip())


# ---- many streams (lab/many.sh) ----

def shq(v):
    return "'" + str(v).replace("'", "'\\''") + "'"


def clients(argv):
    """iperf3 --json outputs of the clients: shell assignments streams (that
    finished), mbps (the sum of their receivers' rates), failed (clients
    that did not finish), errors (what they said, or that they were cut off)"""
    streams, bps, failed, errors = 0, 0.0, 0, []
    for path in argv:
        try:
            with open(path) as f:
                d = json.load(f)
        except (OSError, ValueError):
            failed += 1
            errors.append(f"{os.path.basename(path)}: no result (killed at the time limit?)")
            continue
        if d.get("error"):
            failed += 1
            errors.append(f"{os.path.basename(path)}: {d['error']}")
            continue
        end = d.get("end", {})
        streams += sum(1 for x in end.get("streams", []) if "receiver" in x)
        bps += end.get("sum_received", {}).get("bits_per_second", 0.0)
    print(f"streams={streams}")
    print(f"mbps={bps / 1e6:.0f}")
    print(f"failed={failed}")
    print(f"errors={shq('; '.join(errors))}")


def summary(argv):
    """ROWS OUT: per setting, the runs' median and range; appends to OUT"""
    import statistics
    rows = read_rows(argv[0])
    groups = {}
    for r in rows:
        groups.setdefault(r["flows"], []).append(r)
    out = []
    for name, rs in groups.items():
        d = [r["delivered_mbps"] for r in rs]
        c = [r["host_cpu"] for r in rs]
        so = [r["softirq_cpu"] for r in rs]
        total = rs[0]["streams_total"]
        out.append({
            "flows": name, "runs": len(rs),
            "delivered_mbps": round(statistics.median(d)),
            "delivered_range": f"{min(d):,.0f} to {max(d):,.0f}",
            "spread_mbps": round(max(d) - min(d)),
            "host_cpu": round(statistics.median(c), 2),
            "host_cpu_range": f"{min(c):.2f} to {max(c):.2f}",
            "softirq_cpu": round(statistics.median(so), 1),
            "streams": f"{min(r['streams'] for r in rs):,} to {max(r['streams'] for r in rs):,} of {total:,}",
            "all_finished": sum(1 for r in rs if r["streams"] == total),
            "offloaded": f"{min(r['offloaded'] for r in rs):,} to {max(r['offloaded'] for r in rs):,}",
            "wire_lost": f"{min(r.get('wire_lost', 0) for r in rs):,} to {max(r.get('wire_lost', 0) for r in rs):,}",
        })
    if len(out) == 2:
        a, b = out
        diff = abs(a["delivered_mbps"] - b["delivered_mbps"])
        same = diff <= max(a["spread_mbps"], b["spread_mbps"])
        for o in out:
            if min(a["runs"], b["runs"]) < 2:
                o["same_within_spread"] = f"one run: no spread (medians {diff:,} apart)"
            else:
                o["same_within_spread"] = f"{'yes' if same else 'NO'}: medians {diff:,} apart"
    with open(argv[1], "a") as f:
        for o in out:
            f.write(json.dumps(o) + "\n")


# perfsplit's parts, in the order they are tried on a sample's call chain
# (leaf first); the kernel's are named by a function anywhere in the chain
SPLIT_KERNEL = (
    ("transmit syscall: the receiver's stack run in it (veth -> backlog -> s0)",
     ("process_backlog", "__netif_receive_skb", "netif_receive_skb"),
     ("__sys_sendto", "__sys_sendmsg", "__libc_sendto", "__libc_sendmsg")),
    ("transmit syscall: the frame's skb, its copy, the veth, the syscall's entry and exit", (),
     ("__sys_sendto", "__sys_sendmsg", "__libc_sendto", "__libc_sendmsg")),
    ("receive syscalls: wake-ups, busy polls, poll(), their entry and exit", (),
     ("__sys_recvfrom", "__sys_recvmsg", "do_sys_poll", "__libc_recvfrom", "__libc_recvmsg",
      "__poll", "poll")),
)


def perfsplit(argv):
    """PERF_DATA [NS_A_FRAME]: where a thread's samples went"""
    import subprocess
    out = subprocess.run(["perf", "script", "-i", argv[0], "-F", "ip,sym,dso"], check=True,
                         capture_output=True, text=True).stdout
    ns = float(argv[1]) if len(argv) > 1 else None
    parts, chain, total = {}, [], 0

    def done(chain):
        nonlocal total
        if not chain:
            return
        total += 1
        syms = [f[0] for f in chain]
        name = None
        if chain[0][1] == "[kernel.kallsyms]":
            for label, inner, outer in SPLIT_KERNEL:
                if any(x in syms for x in outer) and (not inner or any(x in syms for x in inner)):
                    name = label
                    break
            name = name or "kernel, other (interrupts, softirq at their end, scheduling)"
        else:
            sym, dso = chain[0]
            if "af_xdp" in dso or "af_packet" in dso:
                name = "the PMD's rings (user)"
            elif "flowcut-npu" in dso and sym.startswith("fp_"):
                name = "the fast path (fp_*)"
            elif "flowcut-npu" in dso:
                name = "flowcut-npu's worker loop, dispatch, counters"
            elif "librte" in dso:
                name = "DPDK, other (mbufs, mempool, ethdev)"
            elif sym in ("__libc_recvfrom", "__libc_recvmsg", "__poll", "poll"):
                name = SPLIT_KERNEL[2][0]
            elif sym in ("__libc_sendto", "__libc_sendmsg"):
                name = SPLIT_KERNEL[1][0]
            elif "libc" in dso:
                name = "libc, other (memcpy)"
            else:
                name = "other user (%s)" % dso.rsplit("/", 1)[-1]
        parts[name] = parts.get(name, 0) + 1

    for ln in out.splitlines():
        f = ln.split()
        if not f:
            done(chain)
            chain = []
            continue
        # "ADDR SYM+OFF (DSO)": the symbol may be [unknown]
        dso = f[-1].strip("()") if f[-1].startswith("(") else ""
        sym = f[1].split("+")[0] if len(f) > 2 else "[unknown]"
        chain.append((sym, dso))
    done(chain)
    if not total:
        die("perfsplit: no samples in " + argv[0])
    print("| where the coprocessor's worker spent its time | samples | share |%s" %
          (" ns a frame |" if ns else ""))
    print("| --- | ---: | ---: |%s" % (" ---: |" if ns else ""))
    for name, n in sorted(parts.items(), key=lambda kv: -kv[1]):
        print("| %s | %d | %.1f %% |%s" % (name, n, 100.0 * n / total,
                                          " %.0f |" % (ns * n / total) if ns else ""))


def wire_lost(argv):
    ports = json.load(sys.stdin).get("wire", [])
    if argv:
        ports = ports[int(argv[0]):int(argv[0]) + 1]
    print(sum(w.get(k, 0) for w in ports for k in WIRE_LOSS))


def conns(argv):
    import argparse
    p = argparse.ArgumentParser(prog="measure.py conns")
    p.add_argument("--fam")
    p.add_argument("--proto")
    p.add_argument("--port")
    p.add_argument("--id")
    p.add_argument("--rev", type=int)
    p.add_argument("--rev-of", help="`flowcutctl --json status`: its fw_rev as --rev")
    for flag in ("--alive", "--valid", "--forwarding", "--cut-thru"):
        p.add_argument(flag, action="store_true")
    p.add_argument("--print", dest="what", required=True,
                   choices=("count", "packets", "best", "best-action", "state", "idle"))
    a = p.parse_args(argv)
    if a.rev_of is not None:
        a.rev = json.loads(a.rev_of)["fw_rev"]

    def key(c):  # "4 udp 198.18.0.2:40000 > 198.18.1.2:5202 port 0 vlan 0"
        return c["dirs"][0]["key"].split()

    def match(c):
        k = key(c)
        return ((a.fam is None or k[0] == a.fam) and (a.proto is None or k[1] == a.proto)
                and (a.port is None or k[4].rsplit(":", 1)[1] == a.port)
                and (a.id is None or str(c["id"]) == a.id)
                and (not a.alive or c["idle_s"] < 1)
                and (not a.valid or c["state"] == "valid")
                and (a.rev is None or c["fw_rev"] == a.rev)
                and (not a.forwarding or (c["verdict"] != "DROP"
                                          and c["dirs"][0]["action"] != "DROP"))
                and (not a.cut_thru or c["verdict"] == "CUT_THRU"))
    found = [c for c in json.load(sys.stdin) if match(c)]
    if a.what == "count":
        print(len(found))
    elif not found:
        pass
    elif a.what == "packets":
        print(sum(c["dirs"][0]["packets"] for c in found))
    elif a.what in ("best", "best-action"):
        best = max(found, key=lambda c: c["dirs"][0]["packets"])
        print(best["id"], *([best["dirs"][0]["action"]] if a.what == "best-action" else []))
    elif a.what == "state":
        c = found[0]
        drop = (c["verdict"] == "DROP" and c["dirs"][0]["action"] == "IPS"
                or all(d["action"] == "DROP" for d in c["dirs"]))
        print("dropping" if drop else "forwarding")
    else:
        print(found[0]["idle_s"])
    sys.exit(0 if found else 1)


COMMANDS = {"record": record, "window": window, "counters": counters, "series": series,
            "row": row, "table": table, "json": document, "plot": plot,
            "clients": clients, "summary": summary, "perfsplit": perfsplit,
            "wire-lost": wire_lost, "conns": conns}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        die("usage: measure.py " + "|".join(COMMANDS) + " ... (see the top of this file)")
    COMMANDS[sys.argv[1]](sys.argv[2:])
