#!/usr/bin/env python3
# A tiny flowcutd control-socket peer for tests/web/test_web.sh: answers
# the page's requests (include/flowcut/fc_ctl.h, docs/commands.md) with
# fixed documents, one request per connection (unix SEQPACKET), as
# flowcutd does; the operator's secret
# "s3cret" (a change needs it; a read that carries another is refused).
# Each connection on its own thread; `conns 999 ...` is answered 1.5 s late
# (a slow answer of flowcutd, under flowcut-web's 2 s bound), `conns 998`
# 0.3 s late.  The most requests it saw in flight at once is written to
# PATH.busy after each (flowcut-web asks one at a time: 1).
import json, os, socket, sys, threading, time

path = sys.argv[1]
t0 = time.time()
def counters():
    k = int((time.time() - t0) * 1000)
    return {"fastpath": {"rx": k * 3, "fwd_cut_thru": k * 2, "drop_cut": k, "to_host": k // 10},
            "flowcutd": {"offloads": 12, "ctl_auth_refused": 1},
            "conntrack": {"entries": 40, "limit": 262144, "insert_failed": 0, "drop": 0, "early_drop": 0},
            "ports": [{"port": 0, "to_host": k // 10, "to_wire": k * 2, "dropped": k},
                      {"port": 1, "to_host": 5, "to_wire": k, "dropped": 0}],
            "link": {"refused": 3},
            "connections": {"ips": 2, "fwd": 30, "cut": 4, "dropping": 1},
            "connections_by": [{"action": "IPS", "verdict": "CUT_THRU", "n": 2}, {"action": "FWD", "verdict": "CUT_THRU", "n": 30},
                               {"action": "IPS", "verdict": "DROP", "n": 1}, {"action": "DROP", "verdict": "CUT_THRU", "n": 3}],
            "gate": True, "ips_switch": True, "boot_id": "00112233aabbccdd", "uptime_s": 3725,
            "time_ms": int(time.time() * 1000)}
conn = {"id": 7, "family": 4, "proto": "udp", "src": "10.0.0.2", "sport": 5000, "dst": "10.0.1.2",
        "dport": 5201, "action": "DROP", "verdict": "DROP", "state": "cut", "idle_ms": 12, "packets": 1000,
        "bytes": 1400000, "cut": {"trigger": "set", "source": "inet f2b-table \"addr\"<x>", "element": "10.0.0.2/32",
        "line": None, "when_s": 100, "in_hardware": True, "frames_dropped": 999}}
conn6 = dict(conn, id=8, family=6, src="fd00::2", dst="fd00:1::2", action="FWD", verdict="CUT_THRU", state="ESTABLISHED", cut=None)
docs = {
    "counters": counters,
    "triggers": lambda: {"sources": [{"kind": "set", "name": "inet f2b-table \"addr\"\\x", "followed": True, "elements": 3, "cut": 4, "frames": 999},
                                     {"kind": "list", "name": "/etc/flowcut/block.list", "followed": True, "elements": 10, "cut": 0, "frames": 0}],
                         "frames_read": 5, "record_bytes": 100},
    "cuts": lambda: {"cuts": [dict(conn["cut"], id=7, family=4, proto="udp", src="10.0.0.2", sport=5000, dst="10.0.1.2", dport=5201)]},
    "settings": lambda: {"path": "/etc/flowcut/settings.conf", "refused": None, "keys": [
        {"key": "cut_in_hardware", "value": "on", "default": "on", "help": "Cut connections on the coprocessor.", "kind": "bool"},
        {"key": "idle_timeout", "value": "30", "default": "30", "help": "Seconds <idle> before aging.", "kind": "number"},
        {"key": "watched_set", "value": ["inet f2b-table *"], "default": [], "help": "Sets whose elements are cut.", "kind": "list"}]},
}
try: os.unlink(path)
except FileNotFoundError: pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(path); s.listen(16)
log = open(path + ".log", "a")
lock = threading.Lock()
busy = [0, 0]  # in flight, the most seen
def serve(c):
    with lock:
        busy[0] += 1; busy[1] = max(busy)
    try:
        a = answer(c)
    finally:
        # out of flight before the answer leaves: flowcut-web asks again once it has it
        with lock:
            busy[0] -= 1
            with open(path + ".busy", "w") as f: f.write("%d\n" % busy[1])
    c.send((a + "\n").encode()); c.close()
def answer(c):
    m = c.recv(8192).decode()
    with lock:
        log.write(repr(m) + "\n"); log.flush()
    secret = None
    if m.startswith("auth "):
        secret, m = m[5:].split("\n", 1)
    words = m.rstrip("\n").split("\n")[0].split(" ")
    verb = words[0]
    if verb in ("cut-conn", "settings-set"):
        if secret == "long":	# a reason near an answer's 256 bytes, its end marked
            a = "error refused: " + "r" * 220 + " END"
        elif secret != "s3cret":
            a = "error refused: a change needs the operator's secret"
        elif verb == "cut-conn":
            a = "ok connection " + words[1] + " cut in hardware"  # as flowcutd answers it: text
        elif words[1] == "idle_timeout" and not words[2].isdigit():
            a = "error idle_timeout: not a number of seconds: " + words[2]
        else:
            a = "ok " + json.dumps({"key": words[1], "value": " ".join(words[2:])})
    elif secret is not None and secret != "s3cret":	# a read on a secret: served on the right one
        a = "error refused: uid 1: the secret is wrong (a read that carries one is served only when it is right)"
    elif verb == "status":
        a = "ok " + json.dumps({"gate": True})
    elif verb == "conns":
        if words[1] == "999":
            time.sleep(1.5)
        if words[1] == "998":
            time.sleep(0.3)
        a = "ok " + json.dumps({"from": int(words[1]), "next": 8 if words[1] == "0" else None,
                                "conns": [conn, conn6] if words[1] == "0" else [conn6]})
    elif verb in docs:
        a = "ok " + json.dumps(docs[verb]())
    else:
        a = "error unknown request " + verb
    return a
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
