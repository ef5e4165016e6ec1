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
 * "link": {NAME: N, ...}, "gate": bool, "ips_switch": bool, "boot_id":
 * "HEX16", "time_ms": N}, in that order.
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
 * outcome, not by port), "connections" by action (the binding does not
 * count them), uptime_s (the link carries no coprocessor start time).
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
	bool cfg_known;				/* fw_cfg as the coprocessor last took it */
	uint32_t fw_cfg;			/* FC_CFG_OFFLOAD: gate; FC_CFG_IPS: ips_switch */
	uint64_t boot_id;			/* "%016" PRIx64 */
	int64_t time_ms;			/* CLOCK_REALTIME of the answer */
};

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
