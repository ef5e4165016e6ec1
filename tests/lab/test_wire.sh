#!/usr/bin/env bash
# The wire with no silent loss (issue 19), on net_af_xdp and on
# net_af_packet (FLOWCUT_WIRE): a UDP flood of 64-byte frames past the wire's rate, client to server,
# through an offloaded connection, and every frame accounted for at every
# stage, lost ones included - the kernels' own counters at both ends
# against the coprocessor's wire figures and the fast path's counters
# (docs/counters.md, "The wire's own"):
#
#   client c0 sent       = port 0 read + missed + no mbuf + errors + its veth's drops
#   ports 0 and 1 read   = FROM_WIRE_RX
#   FROM_WIRE_RX         = its outcomes (to a wire, to the host, to the inspector, dropped)
#   to a wire + from the host to a wire = the ports' sent + failed + NPU_TX_FULL + NPU_TX_NO_PORT
#   port 1 sent          = server s0 received + s0's drops
#
# (and the same for the few frames the other way).  The flood must lose
# frames at the wire, and the loss must be counted: the coprocessor is
# stopped (SIGSTOP) for 0.3 s in its middle, so its rings overflow.  On
# net_af_packet those are the packet socket's ring's drops, which DPDK
# 22.11's PMD never reads (npu/npu_wire.c reads them): before, a flood's
# 963,000 lost frames were counted nowhere.  A lab where AF_XDP does not
# start (no native XDP) says SKIP for its cases.  Root only.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"	# say ex wait_for forwarding lab_up lab_down, the runner: lab_suite
export FLOWCUT_WIRE=af_xdp

# A lab whose coprocessor could not open its AF_XDP ports is the test's to
# say (SKIP), not a lab that did not come up; any other failure fails.
lab_up() {
	"$lab" down "$L" >/dev/null 2>&1
	"$lab" up "$L" || return 1
	"$lab" start "$L" && return 0
	grep -qi "af_xdp" "$run/npu.log" 2>/dev/null
}

# every figure at once: "NAME VALUE" lines (kernel counters, wire, fast path)
figures() {
	local d
	for d in tx_packets rx_packets rx_dropped tx_dropped; do
		echo "c0_$d $(ex client cat "/sys/class/net/c0/statistics/$d")"
		echo "s0_$d $(ex server cat "/sys/class/net/s0/statistics/$d")"
	done
	"$ctl" --link "/run/flowcut-lab/$L/link" --json counters --all | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k, v in d.items():
	if k != "wire":
		print(k, v)
for p, w in enumerate(d.get("wire", [])):
	for k, v in w.items():
		print("WIRE%d_%s" % (p, k), v)'
}

# figures once nothing moves: the kernels' counters and the ports' are
# read one after the other, and the coprocessor publishes its own every
# few ms, so a frame sent between the reads (c0's IPv6 router
# solicitations and MLD reports in its first seconds, an ARP probe) would
# be counted at one end and not the other.  Two snapshots 0.5 s apart
# that agree on every kernel and wire figure are one instant's.
figures_still() {
	local out=$1 prev=$run/still.txt i
	figures >"$prev"
	for i in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.5
		figures >"$out"
		if diff -q <(grep -E '^(c0_|s0_|WIRE)' "$prev") <(grep -E '^(c0_|s0_|WIRE)' "$out") >/dev/null; then
			return 0
		fi
		cp "$out" "$prev"
	done
	echo "# the wire never went still for 0.5 s in 5 s: figures of a moving wire" >&2
	return 0
}

# a lab whose coprocessor could not open its AF_XDP ports, or that fell
# back to af_packet (AF_XDP cannot run here): the case skips
need_af_xdp() {
	if [ "$(cat "$run/wire" 2>/dev/null)" != af_xdp ]; then
		echo "AF_XDP cannot run here: the lab fell back to af_packet" >"$run/skip"
		exit 77
	fi
	"$lab" alive "$L" "$(cat "$run/npu.pid")" && return 0
	echo "AF_XDP did not start here: $(grep -i af_xdp "$run/npu.log" | tail -1)" >"$run/skip"
	exit 77
}

# the lab's coprocessor again on af_packet (the suite's labs start on af_xdp)
on_af_packet() {
	"$lab" stop "$L" >/dev/null
	FLOWCUT_WIRE=af_packet "$lab" start "$L" >/dev/null ||
		{ say "the lab did not start again on af_packet"; tail -3 "$run/npu.log"; return 1; }
	grep -q "net_af_packet" "/proc/$(cat "$run/npu.pid")/cmdline" ||
		{ say "the coprocessor is not on net_af_packet"; return 1; }
}

wire_accounted() {
	need_af_xdp
	accounted
}

wire_accounted_af_packet() {
	on_af_packet && accounted
}

accounted() {
	local before=$run/before.txt after=$run/after.txt
	ex server iperf3 -s -D -p 5209 >/dev/null 2>&1
	sleep 0.3
	# the flow offloaded first, at a rate the wire carries: the same 5-tuple floods after
	ex client timeout 20 iperf3 -u -c 198.18.1.2 -p 5209 --cport 40209 -b 2M -l 18 -t 2 >/dev/null 2>&1
	forwarding 4 5209 || true	# ended: offloaded or not, fwd_packets tells below
	sleep 1	# iperf3's control connection closed; the wire quiet
	figures_still "$before"
	# the flood, and the coprocessor stopped for 0.3 s in its middle: its
	# rings overflow whatever the wire's rate against the sender's (since
	# the lab's af_xdp keeps up with one iperf3, issue 19)
	ex client timeout 20 iperf3 -u -c 198.18.1.2 -p 5209 --cport 40209 -b 0 -l 18 -t 2 \
		>"$run/flood.txt" 2>&1 &
	sleep 0.8
	kill -STOP "$(cat "$run/npu.pid")"
	sleep 0.3
	kill -CONT "$(cat "$run/npu.pid")"
	wait $!
	sleep 1	# everything in flight has landed
	figures_still "$after"
	python3 - "$before" "$after" "$top/include/flowcut/fc_defs.h" "$top/lab" <<'EOF'
import re, sys
sys.path.insert(0, sys.argv[4])
from measure import WIRE_LOSS	# the wire figures that are losses, one list
def load(f):
	return {k: int(v) for k, v in (ln.split() for ln in open(f) if len(ln.split()) == 2 and ln.split()[1].lstrip("-").isdigit())}
a, b = load(sys.argv[1]), load(sys.argv[2])
d = lambda k: b.get(k, 0) - a.get(k, 0)
cls = dict(re.findall(r"^\tX\(([A-Z_]+), FC_CLS_([A-Z_]+)\)", open(sys.argv[3]).read(), re.M))
by = {}
for name, c in cls.items():
	by[c] = by.get(c, 0) + d(name)
ok = True
def row(what, left, right, lname, rname):
	global ok
	good = left == right
	ok &= good
	print("# %-4s %s: %s %d, %s %d" % ("ok" if good else "FAIL", what, lname, left, rname, right))
ports = [p for p in range(8) if "WIRE%d_RX_FRAMES" % p in b]
for p, kern in ((0, "c0"), (1, "s0")):
	lost = sum(d("WIRE%d_%s" % (p, k)) for k in WIRE_LOSS)
	row("port %d's ingress" % p, d(kern + "_tx_packets"), d("WIRE%d_RX_FRAMES" % p) + lost,
	    kern + " sent", "port %d read %d + lost %d =" % (p, d("WIRE%d_RX_FRAMES" % p), lost))
row("the ports' reads are the fast path's", sum(d("WIRE%d_RX_FRAMES" % p) for p in ports),
    d("FROM_WIRE_RX"), "ports read", "FROM_WIRE_RX")
row("the fast path's outcomes", d("FROM_WIRE_RX"), by.get("WIRE", 0) + by.get("HOST", 0) +
    by.get("IPS", 0) + by.get("DROP", 0), "FROM_WIRE_RX", "to wire + host + inspector + dropped")
row("to the wire, sent or lost", by.get("WIRE", 0) + by.get("KN_WIRE", 0),
    sum(d("WIRE%d_TX_FRAMES" % p) + d("WIRE%d_TX_ERRORS" % p) for p in ports) +
    d("NPU_TX_FULL") + d("NPU_TX_NO_PORT"), "decided to a wire", "ports sent + failed + NPU_TX_FULL + NO_PORT")
for p, kern in ((1, "s0"), (0, "c0")):
	row("port %d's egress" % p, d("WIRE%d_TX_FRAMES" % p), d(kern + "_rx_packets") + d(kern + "_rx_dropped"),
	    "port %d sent" % p, kern + " received + dropped")
lost = sum(d("WIRE0_" + k) for k in WIRE_LOSS)
print("# the flood: c0 sent %d, port 0 lost %d at the wire (counted), FROM_WIRE_RX %d, to the host %d, "
      "port 1 sent %d, s0 received %d" % (d("c0_tx_packets"), lost, d("FROM_WIRE_RX"), by.get("HOST", 0),
      d("WIRE1_TX_FRAMES"), d("s0_rx_packets")))
if lost == 0:
	print("# FAIL: the flood lost nothing at the wire: not past its rate, nothing shown")
	ok = False
sys.exit(0 if ok else 1)
EOF
}

# A coprocessor that fails to open an AF_XDP port after its XDP program is
# on the interface (libxdp 1.3.1 puts it there, then reads it back by id,
# which needs CAP_SYS_ADMIN: refused with the unit's capabilities and
# CAP_BPF) must take it off again: a program left there refuses the next
# coprocessor's (EBUSY), and one with the unit's capabilities could never
# start again (seen before flowcut-npu closed the ports it made).
xdp_left_after_failure() {
	local w i
	need_af_xdp
	"$lab" stop "$L" >/dev/null
	FLOWCUT_NPU_WRAP="setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all,+net_raw,+net_admin,+bpf,+ipc_lock --" \
		"$lab" start-npu "$L"
	for i in $(seq 100); do
		"$lab" alive "$L" "$(cat "$run/npu.pid")" || break
		sleep 0.1
	done
	if "$lab" alive "$L" "$(cat "$run/npu.pid")"; then
		echo "this libxdp opened the ports without CAP_SYS_ADMIN: no failure to make" >"$run/skip"
		exit 77
	fi
	say "without CAP_SYS_ADMIN: $(grep 'flowcut-npu: port' "$run/npu.log" | tail -1)"
	for w in w0 w1; do
		if ex npu ip -d link show "$w" | grep -q "prog/xdp"; then
			say "an XDP program left on $w: $(ex npu ip -d link show "$w" | grep -o 'prog/xdp id [0-9]*')"
			return 1
		fi
	done
	"$lab" start "$L" >/dev/null || { say "the next coprocessor did not start"; tail -3 "$run/npu.log"; return 1; }
	say "no XDP program left on w0 or w1; the next coprocessor started"
}

# FLOWCUT_WIRE=af_xdp where AF_XDP cannot run: the lab says so and takes
# af_packet (lab.sh's wire_name).  Made here by the probe's socket(AF_XDP)
# without CAP_NET_RAW, one of the real reasons it is refused.
af_xdp_fallback() {
	local w
	w=$(FLOWCUT_WIRE=af_xdp "$lab" wire "$L" 2>"$run/wire.err")
	[ "$w" = af_xdp ] || { echo "AF_XDP cannot run here: $(cat "$run/wire.err")" >"$run/skip"; exit 77; }
	[ "$(cat "$run/wire")" = af_xdp ] || { say "the lab started on $(cat "$run/wire"), not af_xdp"; return 1; }
	w=$(FLOWCUT_WIRE=af_xdp setpriv --inh-caps=-net_raw --bounding-set=-net_raw -- "$lab" wire "$L" 2>"$run/wire.err")
	[ "$w" = af_packet ] || { say "without CAP_NET_RAW the lab's wire was '$w', not af_packet"; return 1; }
	grep -q "AF_XDP cannot run here" "$run/wire.err" || { say "the fallback was not said: $(cat "$run/wire.err")"; return 1; }
	say "$(cat "$run/wire.err")"
}

tests=("the wire on af_xdp where AF_XDP cannot run: the lab says so and takes af_packet|60|af_xdp_fallback"
	"the wire on af_xdp: a 64-byte UDP flood past its rate, every frame accounted for at every stage, losses counted|90|wire_accounted"
	"the wire on af_packet: a 64-byte UDP flood past its rate, every frame accounted for at every stage, losses counted|90|wire_accounted_af_packet"
	"the wire on af_xdp: a coprocessor that could not open its ports leaves no XDP program on them|90|xdp_left_after_failure")
lab_suite fcwire
