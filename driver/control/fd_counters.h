/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_counters: the `counters` answer's document (issue 18, the lead's
 * protocol /work/prompts/t18-proto.md; docs/commands.md's `counters` row)
 * built from figures already gathered: a pure function, so a unit test
 * reaches every key (tests/unit/driver/test_counters.c) and flowcutd.c
 * keeps the gathering (the counters window, FLOWCUTD_STATS' COUNTs,
 * fd_ctstat, the link's stats, fw_cfg as last set, the clock).
 *
 * The document: {"fastpath": {NAME: N, ...}, "flowcutd": {NAME: N, ...},
 * "conntrack": {NAME: N, ...}, "ports": [{"port": P, "to_host": N}, ...],
 * "link": {NAME: N, ...}, "connections": {"ips": N, "fwd": N, "cut": N,
 * "dropping": N}, "connections_by": [{"action": "IPS", "verdict":
 * "CUT_THRU", "n": N}, ...], "gate": bool, "ips_switch": bool, "boot_id":
 * "HEX16", "uptime_s": N, "time_ms": N, "fastpath_time_ms": N}, in that
 * order.
 *
 * "fastpath_time_ms": when the coprocessor published the "fastpath"
 * figures (the window's `when`), as CLOCK_REALTIME: time_ms less the
 * window's age (flowcutd's CLOCK_MONOTONIC less `when`: one machine's
 * clock here).  The window is republished every 50 ms, later when the
 * coprocessor's control thread is short of CPU, so a rate of two answers
 * is of the figures' own times, not of the answers'.  Left out with
 * "fastpath", or when the age is unknown (<= 0 given).
 *
 * "connections" (the binding's, fd_offload_conns: made or adopted, not
 * a pending offload): "ips" action IPS not dropping (verdict SEND_TO_IPS
 * or CUT_THRU), "fwd" action FWD, "dropping" those the fast path drops
 * (action DROP, or IPS with verdict DROP: a cut's drop), "cut" those cut
 * by flowcut (fd_cut; all of them dropping).  "connections_by" every
 * action and verdict pair, 0 too (the page's /metrics gauges need a
 * series that does not vanish at 0); a FWD or DROP one's verdict is the
 * fast path's as made, never consulted.  Both left out when
 * `conns` is NULL.
 *
 * "uptime_s" (fd_counters_uptime_s): the coprocessor's own clock, the
 * counters window's time (`when`, refreshed every 50 ms) less the time
 * it laid out the link (lk_boot_ns: its tables empty, the boot id new),
 * both CLOCK_MONOTONIC of the coprocessor, never flowcutd's: a flowcutd
 * started after the coprocessor still gives its whole uptime.  Low by at
 * most the window's refresh (50 ms) and the read's age; the EAL's start
 * before the layout is not counted.  Left out unless `uptime_known`.
 *
 * Figures the caller has not got are left out, never made 0:
 *   - a figure whose value is negative (fd_ctstat's -1: the kernel has no
 *     such column) - its key left out of its object;
 *   - "fastpath" whole when `fastpath` is NULL (the window could not be
 *     read whole);
 *   - "gate" and "ips_switch" when `cfg_known` is false (no
 *     FW_CFG_PARAMS_SET answered yet: never assumed from the settings).
 * Left out as the code has no such figure at all (the caller has nothing
 * to hand in): a port's to_wire and dropped (the coprocessor counts by
 * outcome, not by port).
 *
 * Why name/value pairs and not the rooms' structs: driver/control may use
 * settings/ alone (the Makefile's USES_driver/control), so fd_ctstat's,
 * the link's and flowcutd's structs cannot reach here; pairs also keep
 * the names where the figures are (fc_cnt_name, the X-macro's #name), so
 * a new counter needs no change here.  A value is int64_t as JSON's
 * integer is (jansson's json_int_t); fd_counter_u64 holds a uint64_t
 * figure at INT64_MAX rather than let it turn negative (and vanish).
 */
#ifndef FLOWCUT_FD_COUNTERS_H
#define FLOWCUT_FD_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include <flowcut/fc_defs.h>

/* One figure by its name; value < 0: no such figure, its key left out. */
struct fd_counter {
	const char *name;
	int64_t value;
};

/* What the document is built of; every array the caller's, read only. */
struct fd_counters_in {
	const struct fd_counter *fastpath;	/* the counters window; NULL: not read */
	unsigned int nfastpath;
	const struct fd_counter *flowcutd;	/* flowcutd.json's counts */
	unsigned int nflowcutd;
	const struct fd_counter *conntrack;	/* entries, limit, insert_failed, drop, early_drop */
	unsigned int nconntrack;
	const struct fd_counter *link;		/* refused, then each refusal's and the rest */
	unsigned int nlink;
	const uint64_t *to_host;		/* frames to the host, a port each */
	unsigned int ports;
	const uint64_t (*wire)[FC_WIRE_MAX];	/* the wire's figures, a port each; NULL: not read */
	unsigned int nwire;			/* ports of wire[] filled in (<= FC_WIRE_PORTS) */
	bool cfg_known;				/* fw_cfg as the coprocessor last took it */
	uint32_t fw_cfg;			/* FC_CFG_OFFLOAD: gate; FC_CFG_IPS: ips_switch */
	/* the binding's connections, [FC_ACTION_MAX][FC_VERDICT_MAX]; NULL: not known */
	const uint32_t (*conns)[FC_VERDICT_MAX];
	uint32_t conns_cut;
	uint64_t boot_id;			/* "%016" PRIx64 */
	bool uptime_known;			/* uptime_s given (>= 0) */
	int64_t uptime_s;			/* fd_counters_uptime_s */
	int64_t time_ms;			/* CLOCK_REALTIME of the answer */
	int64_t fastpath_time_ms;		/* CLOCK_REALTIME of the fastpath figures; <= 0: unknown */
};

/*
 * fd_counters_uptime_s - whole seconds from `boot_ns` to `when_ns` (the
 * coprocessor's clock both), or -1: either 0 (not laid out, or the
 * window not published yet since the boot) or `when_ns` before
 * `boot_ns` (a window of the boot before, read across a reboot).
 */
static inline int64_t
fd_counters_uptime_s(uint64_t boot_ns, uint64_t when_ns)
{
	if (boot_ns == 0 || when_ns == 0 || when_ns < boot_ns)
		return -1;
	return (int64_t)((when_ns - boot_ns) / 1000000000u);
}

/* A uint64_t figure as a value: held at INT64_MAX. */
static inline int64_t
fd_counter_u64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/*
 * fd_counters_json - the `counters` document of `in` (the caller
 * json_decref's it), or NULL: no memory, or `in` NULL, or a figure's
 * name NULL (a caller's bug: no key to put it under).
 */
json_t *fd_counters_json(const struct fd_counters_in *in);

#endif
