/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_counters: the `counters` answer's document (the control protocol:
 * include/flowcut/fc_ctl.h, docs/commands.md's `counters` row), built
 * from figures already gathered: a pure function, so a unit test reaches
 * every key, and flowcutd.c keeps the gathering.
 *
 * The document: {"fastpath": {NAME: N, ...}, "flowcutd": {...},
 * "conntrack": {...}, "ports": [{"port": P, "to_host": N}, ...], "link":
 * {...}, "connections": {"ips", "fwd", "cut", "dropping"},
 * "connections_by": [{"action", "verdict", "n"}, ...], "gate",
 * "ips_switch", "boot_id": "HEX16", "uptime_s", "time_ms",
 * "fastpath_time_ms"}, in that order.
 *
 * Figures the caller has not got are left out, never made 0: a figure
 * whose value is negative (its key); "fastpath" when `fastpath` is NULL;
 * "fastpath_time_ms" with it, or when its time is <= 0; "connections" and
 * "connections_by" when `conns` is NULL; "gate" and "ips_switch" unless
 * `cfg_known`; "uptime_s" unless `uptime_known`.
 *
 * Pure: no I/O, no state; any thread.  What fd_counters_json returns is
 * the caller's (json_decref); NULL is no memory or a caller's bug.
 *
 * Design notes (what each figure is, why name/value pairs):
 * driver/control/README.md.
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
