/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_counters, the `counters` answer's document from gathered figures:
 * rows of inputs (everything known, the gate and IPS switch each way,
 * fw_cfg not known yet, the window not read, conntrack's figures missing
 * one or all, a figure past INT64_MAX, no ports, a name missing) -> every
 * key of the lead's protocol the code has, by its path, with its type
 * (jansson's) and its value, and the keys left out (never 0 made up):
 * those whose figure is missing and those the code has none of (a
 * port's to_wire and dropped); the connections by action and verdict
 * summed as the protocol's four, the uptime from the coprocessor's two
 * times (fd_counters_uptime_s: its own rows).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include <flowcut/fc_defs.h>

#include "fd_counters.h"

#define N(a) (unsigned int)(sizeof(a) / sizeof((a)[0]))
#define GONE ((json_type)-1)	/* a want: the key is left out */

static const struct fd_counter FP[] = { { "FROM_WIRE_RX", 1000 }, { "FWD_TX", 990 },
					{ "CUT_DROP", 7 } };
static const struct fd_counter FD[] = { { "offloaded", 12 }, { "ctl_auth_refused", 0 } };
static const struct fd_counter CT[] = { { "entries", 40 }, { "limit", 262144 },
					{ "insert_failed", 1 }, { "drop", 2 }, { "early_drop", 3 } };
static const struct fd_counter CT_NO_EARLY[] = { { "entries", 40 }, { "limit", 262144 },
						 { "insert_failed", 0 }, { "drop", 0 },
						 { "early_drop", -1 } };
static const struct fd_counter CT_NONE[] = { { "entries", -1 }, { "limit", -1 },
					     { "insert_failed", -1 }, { "drop", -1 },
					     { "early_drop", -1 } };
static const struct fd_counter LINK[] = { { "refused", 3 }, { "bad_index", 1 },
					  { "bad_length", 2 }, { "ring_full", 0 } };
static const struct fd_counter NONAME[] = { { "offloaded", 1 }, { NULL, 2 } };
static const uint64_t TO_HOST[] = { 5, 6 };
/* the coprocessor published port 0's wire figures only */
static const uint64_t WIRE[1][FC_WIRE_MAX] = { { [FC_WIRE_RX_FRAMES] = 1005, [FC_WIRE_RX_MISSED] = 17,
						 [FC_WIRE_TX_ERRORS] = 2 } };

/* the keys the code has no figure for: left out of every document */
static const char *const never[] = { "ports.0.to_wire",
				     "ports.0.dropped", "ports.1.to_wire", "ports.1.dropped" };

struct want {
	const char *path;	/* "a.b", "ports.1.to_host" */
	json_type type;		/* GONE: left out */
	int64_t value;		/* JSON_INTEGER: equal to it */
	const char *str;	/* JSON_STRING: equal to it */
};

/* The value at `path` (dots between keys; a number indexes an array), or NULL. */
static json_t *
at(json_t *doc, const char *path)
{
	char buf[128], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); doc != NULL && k != NULL;
	     k = strtok_r(NULL, ".", &save))
		doc = json_is_array(doc) ? json_array_get(doc, strtoul(k, NULL, 10))
					 : json_object_get(doc, k);
	return doc;
}

/* [action][verdict]: DROP 1 (a FWD cut), FWD 4, IPS SEND_TO_IPS 2, CUT_THRU 3, DROP 5 (cut) */
static const uint32_t CONNS[FC_ACTION_MAX][FC_VERDICT_MAX] = {
	[FC_ACTION_DROP] = { [FC_VERDICT_CUT_THRU] = 1 },
	[FC_ACTION_FWD] = { [FC_VERDICT_CUT_THRU] = 4 },
	[FC_ACTION_IPS] = { [FC_VERDICT_SEND_TO_IPS] = 2, [FC_VERDICT_CUT_THRU] = 3,
			    [FC_VERDICT_DROP] = 5 },
};

static const struct fd_counters_in ALL = {
	.fastpath = FP, .nfastpath = N(FP), .flowcutd = FD, .nflowcutd = N(FD),
	.conntrack = CT, .nconntrack = N(CT), .link = LINK, .nlink = N(LINK),
	.to_host = TO_HOST, .ports = N(TO_HOST), .wire = WIRE, .nwire = 1, .cfg_known = true,
	.fw_cfg = FC_CFG_OFFLOAD | FC_CFG_IPS, .boot_id = 0xfc00000000000a01ull,
	.conns = CONNS, .conns_cut = 6, .uptime_known = true, .uptime_s = 90061,
	.time_ms = 1764500000123, .fastpath_time_ms = 1764500000098
};

static void
test_rows(void **state)
{
	const struct {
		const char *what;
		struct fd_counters_in in;
		bool null;	/* no document */
		struct want want[48];
	} rows[] = {
		{ "everything known: every key with its type", ALL, false, {
			{ "fastpath", JSON_OBJECT, 0, NULL },
			{ "fastpath.FROM_WIRE_RX", JSON_INTEGER, 1000, NULL },
			{ "fastpath.FWD_TX", JSON_INTEGER, 990, NULL },
			{ "fastpath.CUT_DROP", JSON_INTEGER, 7, NULL },
			{ "flowcutd.offloaded", JSON_INTEGER, 12, NULL },
			{ "flowcutd.ctl_auth_refused", JSON_INTEGER, 0, NULL },
			{ "conntrack.entries", JSON_INTEGER, 40, NULL },
			{ "conntrack.limit", JSON_INTEGER, 262144, NULL },
			{ "conntrack.insert_failed", JSON_INTEGER, 1, NULL },
			{ "conntrack.drop", JSON_INTEGER, 2, NULL },
			{ "conntrack.early_drop", JSON_INTEGER, 3, NULL },
			{ "ports", JSON_ARRAY, 0, NULL },
			{ "ports.0.port", JSON_INTEGER, 0, NULL },
			{ "ports.0.to_host", JSON_INTEGER, 5, NULL },
			{ "ports.1.port", JSON_INTEGER, 1, NULL },
			{ "ports.1.to_host", JSON_INTEGER, 6, NULL },
			{ "ports.0.wire", JSON_OBJECT, 0, NULL },
			{ "ports.0.wire.RX_FRAMES", JSON_INTEGER, 1005, NULL },
			{ "ports.0.wire.RX_MISSED", JSON_INTEGER, 17, NULL },
			{ "ports.0.wire.TX_ERRORS", JSON_INTEGER, 2, NULL },
			{ "ports.0.wire.TX_FRAMES", JSON_INTEGER, 0, NULL },
			{ "ports.1.wire", GONE, 0, NULL },	/* not published */
			{ "ports.2", GONE, 0, NULL },
			{ "link.refused", JSON_INTEGER, 3, NULL },
			{ "link.bad_length", JSON_INTEGER, 2, NULL },
			{ "gate", JSON_TRUE, 0, NULL },
			{ "ips_switch", JSON_TRUE, 0, NULL },
			{ "boot_id", JSON_STRING, 0, "fc00000000000a01" },
			{ "connections.ips", JSON_INTEGER, 5, NULL },
			{ "connections.fwd", JSON_INTEGER, 4, NULL },
			{ "connections.cut", JSON_INTEGER, 6, NULL },
			{ "connections.dropping", JSON_INTEGER, 6, NULL },
			{ "connections_by.0.action", JSON_STRING, 0, "DROP" },
			{ "connections_by.1.n", JSON_INTEGER, 0, NULL },
			{ "connections_by.2.verdict", JSON_STRING, 0, "CUT_THRU" },
			{ "connections_by.2.n", JSON_INTEGER, 1, NULL },
			{ "connections_by.6.action", JSON_STRING, 0, "IPS" },
			{ "connections_by.6.verdict", JSON_STRING, 0, "SEND_TO_IPS" },
			{ "connections_by.6.n", JSON_INTEGER, 2, NULL },
			{ "connections_by.7.n", JSON_INTEGER, 5, NULL },
			{ "connections_by.8.n", JSON_INTEGER, 3, NULL },
			{ "connections_by.11.action", JSON_STRING, 0, "AUX" },
			{ "connections_by.12", GONE, 0, NULL },
			{ "uptime_s", JSON_INTEGER, 90061, NULL },
			{ "time_ms", JSON_INTEGER, 1764500000123, NULL },
			{ "fastpath_time_ms", JSON_INTEGER, 1764500000098, NULL } } },
		{ "the window's age unknown: fastpath_time_ms left out", { .fastpath = FP,
		  .nfastpath = N(FP), .time_ms = 5 }, false, {
			{ "fastpath_time_ms", GONE, 0, NULL }, { "time_ms", JSON_INTEGER, 5, NULL } } },
		{ "the window not read: its time left out too", { .fastpath = NULL,
		  .fastpath_time_ms = 7 }, false, { { "fastpath_time_ms", GONE, 0, NULL } } },
		{ "the binding's connections not known: connections left out, not 0s",
		  { .conns = NULL, .conns_cut = 3 }, false, {
			{ "connections", GONE, 0, NULL }, { "connections_by", GONE, 0, NULL } } },
		{ "the uptime not known: left out, not 0", { .uptime_known = false,
		  .uptime_s = 5 }, false, { { "uptime_s", GONE, 0, NULL } } },
		{ "an uptime of 0 s known: 0", { .uptime_known = true }, false, {
			{ "uptime_s", JSON_INTEGER, 0, NULL } } },
		{ "the gate open, the IPS switch off", { .fw_cfg = FC_CFG_OFFLOAD,
		  .cfg_known = true }, false, {
			{ "gate", JSON_TRUE, 0, NULL }, { "ips_switch", JSON_FALSE, 0, NULL },
			{ "fastpath", GONE, 0, NULL }, { "ports", JSON_ARRAY, 0, NULL },
			{ "ports.0", GONE, 0, NULL }, { "boot_id", JSON_STRING, 0,
							"0000000000000000" } } },
		{ "the gate shut, the IPS switch on", { .fw_cfg = FC_CFG_IPS | FC_CFG_TCP_SEQ_CHK,
		  .cfg_known = true }, false, {
			{ "gate", JSON_FALSE, 0, NULL }, { "ips_switch", JSON_TRUE, 0, NULL } } },
		{ "fw_cfg not known yet: gate and ips_switch left out, not assumed",
		  { .fw_cfg = FC_CFG_OFFLOAD | FC_CFG_IPS, .cfg_known = false, .time_ms = 1 }, false, {
			{ "gate", GONE, 0, NULL }, { "ips_switch", GONE, 0, NULL },
			{ "time_ms", JSON_INTEGER, 1, NULL } } },
		{ "the window not read: fastpath left out, the rest there",
		  { .fastpath = NULL, .flowcutd = FD, .nflowcutd = N(FD), .conntrack = CT,
		    .nconntrack = N(CT) }, false, {
			{ "fastpath", GONE, 0, NULL }, { "flowcutd.offloaded", JSON_INTEGER, 12, NULL },
			{ "conntrack.early_drop", JSON_INTEGER, 3, NULL } } },
		{ "conntrack's early_drop missing (-1): left out, not 0",
		  { .conntrack = CT_NO_EARLY, .nconntrack = N(CT_NO_EARLY) }, false, {
			{ "conntrack.early_drop", GONE, 0, NULL },
			{ "conntrack.entries", JSON_INTEGER, 40, NULL },
			{ "conntrack.insert_failed", JSON_INTEGER, 0, NULL },
			{ "conntrack.drop", JSON_INTEGER, 0, NULL } } },
		{ "conntrack's figures all missing: an empty object",
		  { .conntrack = CT_NONE, .nconntrack = N(CT_NONE) }, false, {
			{ "conntrack", JSON_OBJECT, 0, NULL },
			{ "conntrack.entries", GONE, 0, NULL },
			{ "conntrack.limit", GONE, 0, NULL },
			{ "conntrack.early_drop", GONE, 0, NULL } } },
		{ "a figure past INT64_MAX: held there (fd_counter_u64), not negative",
		  { .fastpath = (const struct fd_counter[]){ { "FROM_WIRE_RX",
		    fd_counter_u64(UINT64_MAX) }, { "FWD_TX", fd_counter_u64(1ull << 63) },
		    { "CUT_DROP", fd_counter_u64(INT64_MAX) } }, .nfastpath = 3,
		    .to_host = (const uint64_t[]){ UINT64_MAX }, .ports = 1 }, false, {
			{ "fastpath.FROM_WIRE_RX", JSON_INTEGER, INT64_MAX, NULL },
			{ "fastpath.FWD_TX", JSON_INTEGER, INT64_MAX, NULL },
			{ "fastpath.CUT_DROP", JSON_INTEGER, INT64_MAX, NULL },
			{ "ports.0.to_host", JSON_INTEGER, INT64_MAX, NULL } } },
		{ "a figure's name NULL: no document", { .flowcutd = NONAME,
		  .nflowcutd = N(NONAME) }, true, { { NULL, 0, 0, NULL } } },
	};

	(void)state;
	assert_null(fd_counters_json(NULL));
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		json_t *doc = fd_counters_json(&rows[r].in);
		char *text;

		if (rows[r].null) {
			if (doc != NULL)
				fail_msg("%s: a document, want none", rows[r].what);
			continue;
		}
		if (doc == NULL)
			fail_msg("%s: no document", rows[r].what);
		/* the keys every document has, with their types */
		if (!json_is_object(at(doc, "flowcutd")) || !json_is_object(at(doc, "conntrack")) ||
		    !json_is_array(at(doc, "ports")) || !json_is_object(at(doc, "link")) ||
		    !json_is_string(at(doc, "boot_id")) || !json_is_integer(at(doc, "time_ms")))
			fail_msg("%s: a key every document has missing or of another type",
				 rows[r].what);
		for (size_t i = 0; i < N(never); i++)
			if (at(doc, never[i]) != NULL)
				fail_msg("%s: '%s' there; the code has no such figure", rows[r].what,
					 never[i]);
		for (const struct want *w = rows[r].want; w->path != NULL; w++) {
			json_t *v = at(doc, w->path);

			if (w->type == GONE) {
				if (v != NULL)
					fail_msg("%s: '%s' there, want it left out", rows[r].what,
						 w->path);
				continue;
			}
			if (v == NULL || json_typeof(v) != w->type)
				fail_msg("%s: '%s' %s", rows[r].what, w->path,
					 v ? "of another type" : "missing");
			if (w->type == JSON_INTEGER && json_integer_value(v) != w->value)
				fail_msg("%s: '%s' %lld, want %lld", rows[r].what, w->path,
					 (long long)json_integer_value(v), (long long)w->value);
			if (w->type == JSON_STRING && strcmp(json_string_value(v), w->str) != 0)
				fail_msg("%s: '%s' \"%s\", want \"%s\"", rows[r].what, w->path,
					 json_string_value(v), w->str);
		}
		/* the answer's text parses back as the same document */
		text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
		assert_non_null(text);
		json_t *back = json_loads(text, 0, NULL);
		if (back == NULL || !json_equal(back, doc))
			fail_msg("%s: the text does not parse back: %s", rows[r].what, text);
		json_decref(back);
		free(text);
		json_decref(doc);
	}
}

/* fd_counters_uptime_s: the coprocessor's boot and window times -> seconds, or -1 */
static void
test_uptime_rows(void **state)
{
	static const struct {
		const char *what;
		uint64_t boot_ns, when_ns;
		int64_t want;
	} rows[] = {
		{ "a day, an hour, a minute, a second on", 5000000000ull,
		  5000000000ull + 90061ull * 1000000000u, 90061 },
		{ "the window of the boot itself: 0 s", 7, 7, 0 },
		{ "under a second: 0 s (whole seconds down)", 1000, 999999999ull + 1000, 0 },
		{ "a coprocessor that does not say its boot: unknown", 0, 9000000000ull, -1 },
		{ "the window not published yet: unknown", 5000000000ull, 0, -1 },
		{ "a window of the boot before (read across a reboot): unknown", 9000000000ull,
		  8000000000ull, -1 },
		{ "the clock's far end: no wrap", 1, UINT64_MAX, (int64_t)(UINT64_MAX / 1000000000u) },
	};

	(void)state;
	for (size_t r = 0; r < N(rows); r++) {
		int64_t got = fd_counters_uptime_s(rows[r].boot_ns, rows[r].when_ns);

		if (got != rows[r].want)
			fail_msg("%s: %lld, want %lld", rows[r].what, (long long)got,
				 (long long)rows[r].want);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_uptime_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
