#!/usr/bin/env bash
# Issue 16's "calm under a SYN flood" as a test: lab/flood.sh's run (4
# offloaded iperf3 streams, random-source SYNs by trafgen for 10 s at
# FLOOD_RATE a second, a cut of a UDP flow before and during the flood;
# flood_run), with flowcut-npu's new-connection limit at its default
# (--host-new-rate: over it the flood's SYNs drop at the coprocessor), then
# its assertions:
#   - the flood ran: at least half of FLOOD_RATE, and the coprocessor
#     dropped the flood's SYNs over the limit (counted);
#   - the streams all stayed in the fast path (5 of 5 connections after the
#     flood) and no resync took an allowed connection out (resync_taken_out
#     0 over the run, where flowcutd's stats have it);
#   - the streams kept at least 80 % of their rate before the flood;
#   - the cut during the flood dropped within its usual time: at most twice
#     the same run's calm cut plus 100 ms, each timed from the element in
#     flowcutd's cut set to the connection dropping in the fast path (the
#     command's own time beside it, not asserted: lab/flood.sh says why);
#   - the events lost were counted and reconciled: ct_events_lost and the
#     coprocessor's events_lost are read (a loss is counted where an
#     operator sees it), a loss is followed by a resync, and after the flood
#     the fast path's forwarding connections equal conntrack's marked
#     qualifying states (flood.sh's "reconciled").
# FLOOD_RATE (default 100000, SYNs a second; empty: as fast as trafgen
# goes) and FLOOD_STREAM_RATE (each stream's, default 100M) are what the
# lab's wire carries on this machine's two cores, where the sender, the
# ends and the coprocessor's worker share them (a flood from outside costs
# an appliance no sender).  At 200,000 and 250M streams (this test's
# figures before) the coprocessor lost 19-22 % of w0's frames at its
# receive ring (RX_MISSED: counted since npu/npu_wire.c reads the packet
# sockets' drops) and the streams kept 0.57-0.99 (CI failed at 0.73); at
# these it lost 1-5 % and 9 runs of 9 kept 1.00 (with af_packet rings of
# 4,096 frames, 0-0.3 %; docs/measurements.md, 2026-12-05).
# trafgen does not always hold its rate (-b): the table's SYNs/s says what
# it sent (docs/lab.md).  Unbounded streams filled the server's veth
# backlog (lab/flood.sh says why).
# In make test's list (tests/run.sh), beside the lab.  Figures as "#" lines.
#
# Root only (namespaces), trafgen (netsniff-ng).  BUILD names the build folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"	# say ex wait_for lab_up lab_down, the runner: lab_suite
# shellcheck source=lab/flood.sh
. "$top/lab/flood.sh"	# flood_run

calm_under_flood() {
	local f=$run/flood.txt ok=0 v
	command -v trafgen >/dev/null || { say "FAIL: no trafgen (scripts/deps.sh installs netsniff-ng)"; return 1; }
	flood_run "$f" "$FLOOD_RATE" | sed 's/^/# /'
	# the figures kept (the lab's folder goes with it), the CPU said
	mkdir -p "$BUILD/lab" && cp "$f" "$BUILD/lab/flood-test.txt" &&
		rm -rf "$BUILD/lab/flood-test.txt.d" && cp -r "$f.d" "$BUILD/lab/flood-test.txt.d"
	grep -E "^(cpu|npu_|host_new_rate|syns_per_s|stream_rate)" "$f" | sed 's/^/# /'
	fig() { awk -v k="$1" '$1 == k { $1 = ""; print substr($0, 2) }' "$f"; }
	if [ -n "$FLOOD_RATE" ] && [ "$(fig syns_per_s)" -lt $((FLOOD_RATE / 2)) ]; then
		say "FAIL: the flood fell short: $(fig syns_per_s) SYNs a second of $FLOOD_RATE asked"; ok=1
	fi
	[ "$(fig streams_in_fp_before)" = 5 ] ||
		{ say "FAIL: $(fig streams_in_fp_before) of the streams' 5 connections in the fast path before the flood"; ok=1; }
	[ "$(fig streams_in_fp_after_flood)" = 5 ] ||
		{ say "FAIL: $(fig streams_in_fp_after_flood) of the streams' 5 connections in the fast path after the flood"; ok=1; }
	if [ "$(echo "$(fig ratio) < 0.8" | bc)" = 1 ]; then
		say "FAIL: the streams' rate during the flood $(fig during_mbps) Mbit/s, $(fig ratio) of before ($(fig before_mbps)); at least 0.8"; ok=1
	fi
	# the limit in force (FLOWCUT_NPU_HOST_NEW_RATE=0 turns it off, for the figures without it)
	if [ "${FLOWCUT_NPU_HOST_NEW_RATE:-}" != 0 ] && [ "$(fig npu_new_conn_rate_drop)" -eq 0 ]; then
		say "FAIL: no SYN of the flood dropped at the coprocessor (FROM_WIRE_DROP_NEW_CONN_RATE 0)"; ok=1
	fi
	v=$(fig resync_taken_out)
	if [ "$v" = none ]; then
		say "resync_taken_out: not counted (flowcutd's stats do not have it)"
	elif [ "$v" -ne 0 ]; then
		say "FAIL: resync_taken_out $v (0 expected)"; ok=1
	fi
	local calm during
	calm=$(fig cut_calm_ms) during=$(fig cut_flood_ms)
	case "$calm$during" in
	*[!0-9.]*|'') say "FAIL: the cuts: calm $calm, during the flood $during (ms, or why none)"; ok=1 ;;
	*) if [ "$(echo "$during > 2 * $calm + 100" | bc)" = 1 ]; then
		say "FAIL: the cut during the flood dropped $during ms after the element was in the set (calm: $calm ms; at most twice that + 100)"; ok=1
	   fi ;;
	esac
	v=$(fig ct_events_lost)
	if [ "$v" = none ]; then
		say "FAIL: ct_events_lost not counted (flowcutd's stats do not have it)"; ok=1
	elif [ $((v + $(fig npu_events_lost))) -gt 0 ] && [ "$(fig resyncs)" -lt 1 ]; then
		say "FAIL: $v conntrack and $(fig npu_events_lost) coprocessor events lost, no resync"; ok=1
	fi
	case "$(fig reconciled)" in
	yes*) ;;
	*) say "FAIL: not reconciled after the flood: $(fig reconciled)"; ok=1 ;;
	esac
	return $ok
}

LAB_VARS="FLOOD_MARK FLOOD_RATE FLOOD_STREAM_RATE FLOWCUT_NPU_HOST_NEW_RATE"
FLOWCUT_NPU_HOST_NEW_RATE=${FLOWCUT_NPU_HOST_NEW_RATE:-}
FLOOD_RATE=${FLOOD_RATE-100000}
FLOOD_STREAM_RATE=${FLOOD_STREAM_RATE-100M}
tests=("calm under a SYN flood: streams kept, a cut in time, losses counted and reconciled|150|calm_under_flood")
lab_suite flood
