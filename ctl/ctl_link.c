/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_link: flowcutctl's commands that ask the coprocessor over the link
 * (status, counters, conns, conn verdict, cfg), each a command or a read
 * of the counters window, on the link main() attached.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_defs.h>
#include <flowcut/fc_key.h>

#include "ctl.h"
#include "lk.h"

#define TIMEOUT_MS 2000

/* A verdict as fc_defs.h names it, any case, '-' for '_': its value or -1. */
static int
verdict_parse(const char *arg)
{
	for (unsigned int v = 0; v < FC_VERDICT_MAX; v++) {
		const char *n = fc_verdict_name(v), *a = arg;

		while (*a && *n && (tolower((unsigned char)*a) == tolower((unsigned char)*n) ||
				    (*a == '-' && *n == '_')))
			a++, n++;
		if (*a == '\0' && *n == '\0')
			return (int)v;
	}
	return -1;
}

static int
fail(const char *what, int rc)
{
	fprintf(stderr, "flowcutctl: %s: %s\n", what,
		rc == -ETIMEDOUT ? "no answer from the coprocessor" :
		rc == -ECONNRESET ? "the coprocessor restarted; try again" : strerror(-rc));
	return 1;
}

/*
 * One command; the answer must be exactly `want` bytes (or, with want < 0,
 * at most cap, its length in *alen).  An answer of another size is
 * -EBADMSG: nothing of it is used.
 */
static int
call_len(uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap, int want,
	 uint16_t *alen)
{
	uint16_t got = 0;
	int rc = lk_call(lk, op, p, len, ans, cap, &got, TIMEOUT_MS);

	if (rc == -ECONNRESET && lk_resync(lk) == 0)
		rc = lk_call(lk, op, p, len, ans, cap, &got, TIMEOUT_MS);
	if (rc == 0 && want >= 0 && got != want) {
		fprintf(stderr, "flowcutctl: %s answered %u bytes, not %d\n", fc_cmd_name(op), got,
			want);
		return -EBADMSG;
	}
	if (alen)
		*alen = got;
	return rc;
}

static int
call(uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	return call_len(op, p, len, ans, cap, cap, NULL);
}

/* ---- status ---- */

int
cmd_status(void)
{
	struct fc_ans_cfg cfg;
	struct fc_ans_table_stats ts;
	struct fc_ans_lease ls;
	static const char *const lease_state[] = { "none", "held", "lapsed" };
	const char *lstate;
	int rc;

	rc = call(FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg));
	if (rc != 0)
		return fail("FW_CFG_PARAMS_GET", rc);
	rc = call(FC_CMD_TABLE_STATS_READ, NULL, 0, &ts, sizeof(ts));
	if (rc != 0)
		return fail("TABLE_STATS_READ", rc);
	rc = call(FC_CMD_HOST_LEASE_READ, NULL, 0, &ls, sizeof(ls));
	if (rc != 0)
		return fail("HOST_LEASE_READ", rc);
	lstate = ls.state < 3 ? lease_state[ls.state] : "?";
	if (json) {
		char boot[20];

		snprintf(boot, sizeof(boot), "%016" PRIx64, lk_boot_id(lk));
		return print_json(json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:{s:s, s:I, s:I, s:I}}",
					    "boot_id", boot, "client", lk_client(lk),
					    "connections", (json_int_t)ts.conns, "capacity",
					    (json_int_t)ts.capacity, "fw_cfg", (json_int_t)cfg.fw_cfg,
					    "fw_rev", (json_int_t)cfg.fw_rev, "lease", "state", lstate,
					    "ms", (json_int_t)ls.ms, "left_ms", (json_int_t)ls.left_ms,
					    "lapses", (json_int_t)ls.lapses));
	}
	printf("boot id      %016" PRIx64 "\n", lk_boot_id(lk));
	printf("connections  %u of %u\n", ts.conns, ts.capacity);
	printf("fw_cfg       0x%03x\n", cfg.fw_cfg);
	printf("fw_rev       %u\n", cfg.fw_rev);
	switch (ls.state) {
	case FC_LEASE_HELD:
		printf("lease        held by the host: %u ms of %u left (the longest the fast path "
		       "forwards unchecked), %u lapses since boot\n", ls.left_ms, ls.ms, ls.lapses);
		break;
	case FC_LEASE_LAPSED:
		printf("lease        LAPSED (%u since boot): failing closed - cut connections drop, "
		       "every other frame goes to the host\n", ls.lapses);
		break;
	default:
		printf("lease        none since boot (the host has not taken it)\n");
	}
	return 0;
}

/* ---- counters ---- */

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The counters window as the coprocessor publishes it after this call
 * began: it is republished every 50 ms, later when its control thread is
 * short of CPU, and a copy read at once can miss what the last moments
 * counted (a transfer that has just ended).  Waits for the next one, at
 * most a second; an older one is shown with a warning.
 */
static int
counters_fresh(uint64_t c[FC_CNT_MAX])
{
	uint64_t start = mono_ns(), when = 0;
	int rc;

	for (;;) {
		rc = lk_counters_read(lk, c, &when);
		if ((rc == 0 && when >= start) || mono_ns() - start > 1000000000ull)
			break;
		usleep(5000);
	}
	if (rc == 0 && when < start)
		fprintf(stderr, "flowcutctl: the counters window was not published again within "
			"1 s (the coprocessor's control thread is stuck or starved): these are "
			"%.1f s old\n", (double)(mono_ns() - when) / 1e9);
	return rc;
}

int
cmd_counters(int argc, char **argv)
{
	uint64_t c[FC_CNT_MAX], wire[FC_WIRE_PORTS][FC_WIRE_MAX];
	bool all = false;
	int rc, nwire;

	if (argc >= 1 && strcmp(argv[0], "clear") == 0) {
		rc = call_len(FC_CMD_COUNTER_CLEAR, NULL, 0, NULL, 0, 0, NULL);
		return rc ? fail("COUNTER_CLEAR", rc) : 0;
	}
	if (argc >= 1 && strcmp(argv[0], "--all") == 0)
		all = true;
	else if (argc >= 1) {
		fprintf(stderr, "flowcutctl: counters: unknown '%s' (--all, clear)\n", argv[0]);
		return 2;
	}
	rc = counters_fresh(c);
	if (rc != 0)
		return fail("the counters window", rc);
	/* the wire's figures, published with them (0 ports: a coprocessor before LK_VERSION 4) */
	nwire = lk_wire_read(lk, wire);
	if (nwire < 0)
		return fail("the wire's figures", nwire);
	if (json) {
		json_t *o = json_object(), *ports = json_array();

		for (unsigned int i = 0; i < FC_CNT_MAX; i++)
			if (all || c[i])
				json_object_set_new(o, fc_cnt_name(i), json_integer((json_int_t)c[i]));
		for (int p = 0; p < nwire; p++) {
			json_t *w = json_object();

			for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
				json_object_set_new(w, fc_wire_name(k), json_integer((json_int_t)wire[p][k]));
			json_array_append_new(ports, w);
		}
		json_object_set_new(o, "wire", ports);	/* an array, a port each: no counter's name */
		return print_json(o);
	}
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		if (all || c[i])
			printf("%-40s %20" PRIu64 "\n", fc_cnt_name(i), c[i]);
	for (int p = 0; p < nwire; p++)
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			if (all || wire[p][k]) {
				char name[48];

				snprintf(name, sizeof(name), "WIRE%d_%s", p, fc_wire_name(k));
				printf("%-40s %20" PRIu64 "\n", name, wire[p][k]);
			}
	return 0;
}

/* ---- conns ---- */

static double
idle_s(const struct fc_conn_info *ci)
{
	struct timespec ts;
	uint64_t now, last = ci->mf[0].stats.last_seen;

	if (ci->mf[1].stats.last_seen > last)
		last = ci->mf[1].stats.last_seen;
	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the coprocessor's clock too */
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return now > last ? (double)(now - last) / 1e9 : 0.0;
}

static json_t *
conn_json(const struct fc_conn_info *ci)
{
	json_t *dirs = json_array();

	for (int d = 0; d < 2; d++) {
		const struct fc_mflow_info *m = &ci->mf[d];
		char k[160];

		json_array_append_new(dirs, json_pack(
			"{s:s, s:s, s:b, s:b, s:I, s:i, s:I, s:I}",
			"key", fc_key_format(&m->key, k, sizeof(k)),
			"action", fc_action_name(m->action), "active", m->active,
			"nat", m->nat, "nhop", (json_int_t)m->nhop, "timeout_s", m->timeout_s,
			"packets", (json_int_t)m->stats.packets,
			"bytes", (json_int_t)m->stats.bytes));
	}
	return json_pack("{s:I, s:s, s:s, s:s, s:I, s:f, s:o}", "id", (json_int_t)ci->id,
			 "verdict", fc_verdict_name(ci->verdict),
			 "state", fc_conn_state_name(ci->state),
			 "reason", fc_reason_name(ci->reason), "fw_rev", (json_int_t)ci->fw_rev,
			 "idle_s", idle_s(ci), "dirs", dirs);
}

static void
conn_print(const struct fc_conn_info *ci)
{
	printf("%-20" PRIu64 " %-11s %-10s idle %.1fs%s%s\n", ci->id,
	       fc_verdict_name(ci->verdict), fc_conn_state_name(ci->state), idle_s(ci),
	       ci->reason ? " " : "", ci->reason ? fc_reason_name(ci->reason) : "");
	for (int d = 0; d < 2; d++) {
		const struct fc_mflow_info *m = &ci->mf[d];
		char k[160];

		printf("  %-5s %-4s %s%s  %" PRIu64 " pkts %" PRIu64 " bytes%s\n",
		       d ? "reply" : "orig", fc_action_name(m->action),
		       fc_key_format(&m->key, k, sizeof(k)), m->nat ? " nat" : "",
		       m->stats.packets, m->stats.bytes, m->active ? "" : " (inactive)");
	}
}

int
cmd_conns(void)
{
	struct fc_cmd_range r = { .first = 0, .max = FC_RANGE_MAX };
	json_t *arr = json ? json_array() : NULL;
	unsigned int total = 0;

	for (;;) {
		struct fc_ans_range a;
		uint16_t alen;
		int rc = call_len(FC_CMD_CONN_READ_RANGE, &r, sizeof(r), &a, sizeof(a), -1, &alen);

		if (rc != 0) {
			json_decref(arr);
			return fail("CONN_READ_RANGE", rc);
		}
		if (alen < offsetof(struct fc_ans_range, conn) || a.count > FC_RANGE_MAX ||
		    alen != offsetof(struct fc_ans_range, conn) + a.count * sizeof(a.conn[0])) {
			json_decref(arr);
			fprintf(stderr, "flowcutctl: CONN_READ_RANGE answered %u bytes for %u entries\n",
				alen, alen >= 8 ? a.count : 0);
			return 1;
		}
		for (uint32_t i = 0; i < a.count; i++) {
			if (json)
				json_array_append_new(arr, conn_json(&a.conn[i]));
			else
				conn_print(&a.conn[i]);
		}
		total += a.count;
		if (a.count == 0 || a.next <= r.first)
			break;
		r.first = a.next;
	}
	if (json)
		return print_json(arr);
	printf("%u connection%s\n", total, total == 1 ? "" : "s");
	return 0;
}

int
cmd_conn(int argc, char **argv)
{
	struct fc_cmd_conn_verdict v = { 0 };
	char *end;
	int rc;

	if (argc != 3 || strcmp(argv[0], "verdict") != 0) {
		fprintf(stderr, "flowcutctl: conn verdict ID drop|cut-thru|send-to-ips\n");
		return 2;
	}
	errno = 0;
	v.id = strtoull(argv[1], &end, 0);
	if (errno || *end || end == argv[1]) {
		fprintf(stderr, "flowcutctl: conn verdict: '%s' is not a connection id\n", argv[1]);
		return 2;
	}
	if ((rc = verdict_parse(argv[2])) >= 0) {
		v.verdict = (uint8_t)rc;
	} else {
		fprintf(stderr, "flowcutctl: conn verdict: '%s' is not drop, cut-thru or "
			"send-to-ips\n", argv[2]);
		return 2;
	}
	rc = call_len(FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, 0, NULL);
	if (rc == -ENOENT) {
		fprintf(stderr, "flowcutctl: connection %s: no such connection (removed, or "
			"never made)\n", argv[1]);
		return 1;
	}
	if (rc != 0)
		return fail("CONN_MODIFY_FP_VERDICT", rc);
	if (json)
		return print_json(json_pack("{s:I, s:s}", "id", (json_int_t)v.id, "verdict",
					    fc_verdict_name(v.verdict)));
	printf("connection %" PRIu64 ": verdict %s\n", v.id, fc_verdict_name(v.verdict));
	return 0;
}

/* ---- cfg ---- */

static const struct {
	const char *name;
	uint32_t bit;
} cfg_bits[] = {
#define CFG_BIT_(name, bit) { #name, bit },
	FC_FOREACH_CFG_BIT(CFG_BIT_)
#undef CFG_BIT_
};

int
cmd_cfg(int argc, char **argv)
{
	struct fc_ans_cfg cur;
	struct fc_cmd_cfg set;
	int rc = call(FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cur, sizeof(cur));

	if (rc != 0)
		return fail("FW_CFG_PARAMS_GET", rc);
	set.fw_cfg = cur.fw_cfg;
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t n = eq ? (size_t)(eq - argv[i]) : 0;
		bool found = false, on;

		if (eq == NULL || (strcmp(eq + 1, "on") != 0 && strcmp(eq + 1, "off") != 0)) {
			fprintf(stderr, "flowcutctl: cfg: '%s' is not NAME=on or NAME=off\n", argv[i]);
			return 2;
		}
		on = strcmp(eq + 1, "on") == 0;
		for (size_t b = 0; b < sizeof(cfg_bits) / sizeof(cfg_bits[0]); b++)
			if (strlen(cfg_bits[b].name) == n &&
			    strncasecmp(argv[i], cfg_bits[b].name, n) == 0) {
				set.fw_cfg = on ? set.fw_cfg | cfg_bits[b].bit
						: set.fw_cfg & ~cfg_bits[b].bit;
				found = true;
			}
		if (!found) {
			fprintf(stderr, "flowcutctl: cfg: no bit named '%.*s' (OFFLOAD, TCP_SEQ_CHK, "
				"IPS, FINTRACK, DROP_IF_IPS_OFF)\n", (int)n, argv[i]);
			return 2;
		}
	}
	if (argc > 0) {
		rc = call_len(FC_CMD_FW_CFG_PARAMS_SET, &set, sizeof(set), NULL, 0, 0, NULL);
		if (rc != 0)
			return fail("FW_CFG_PARAMS_SET", rc);
		cur.fw_cfg = set.fw_cfg;
	}
	if (json) {
		json_t *o = json_pack("{s:I}", "fw_cfg", (json_int_t)cur.fw_cfg);

		for (size_t b = 0; b < sizeof(cfg_bits) / sizeof(cfg_bits[0]); b++)
			json_object_set_new(o, cfg_bits[b].name,
					    json_boolean(cur.fw_cfg & cfg_bits[b].bit));
		return print_json(o);
	}
	printf("fw_cfg 0x%03x\n", cur.fw_cfg);
	for (size_t b = 0; b < sizeof(cfg_bits) / sizeof(cfg_bits[0]); b++)
		printf("  %-16s %s\n", cfg_bits[b].name, cur.fw_cfg & cfg_bits[b].bit ? "on" : "off");
	return 0;
}
