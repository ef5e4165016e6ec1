#!/usr/bin/env python3
"""The lab's socket activation: what systemd's flowcut-web.socket does for
the appliance.  As root, make the listening sockets first (a local user
cannot take the port then, not even while the program restarts), then run
the program as its user with them handed in (LISTEN_FDS, LISTEN_PID:
sd_listen_fds(3)), and again 1 s after it ends, as Restart=on-failure
would; SIGTERM ends the program and the keeper.

    sockkeep.py --listen ADDR:PORT... --user U --group G --pidfile F -- PROGRAM ARGS...

The program's pid is written to --pidfile each time it starts."""
import argparse
import grp
import os
import pwd
import signal
import socket
import sys
import time

child = 0


def listener(addr):
    host, port = addr.rsplit(":", 1)
    v6 = host.startswith("[")
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((host.strip("[]"), int(port)))
    s.listen(128)
    s.set_inheritable(True)
    return s


def stop(signum, frame):
    if child:
        try:
            os.kill(child, signal.SIGTERM)
            os.waitpid(child, 0)
        except OSError:
            pass
    sys.exit(0)


def main():
    global child
    p = argparse.ArgumentParser()
    p.add_argument("--listen", action="append", required=True)
    p.add_argument("--user", required=True)
    p.add_argument("--group", required=True)
    p.add_argument("--pidfile", required=True)
    p.add_argument("cmd", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    try:
        socks = [listener(x) for x in a.listen]
    except OSError as e:
        print("sockkeep: %s: %s: the page cannot have its sockets" % (" ".join(a.listen), e),
              file=sys.stderr, flush=True)
        return 1
    uid, gid = pwd.getpwnam(a.user).pw_uid, grp.getgrnam(a.group).gr_gid
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while True:
        child = os.fork()
        if child == 0:
            # the program opened as root, run from its fd (fexecve): the
            # user may not search the folders it is in (a clone in a 0700 folder)
            prog = os.open(cmd[0], os.O_RDONLY | os.O_CLOEXEC)
            for i, s in enumerate(socks):
                os.dup2(s.fileno(), 3 + i)
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            env = dict(os.environ, LISTEN_FDS=str(len(socks)), LISTEN_PID=str(os.getpid()))
            os.execve(prog, cmd, env)
        with open(a.pidfile, "w") as f:
            f.write("%d\n" % child)
        _, st = os.waitpid(child, 0)
        child = 0
        print("sockkeep: %s ended (status %d); again in 1 s, its sockets kept" % (cmd[0], st),
              file=sys.stderr, flush=True)
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(main())
