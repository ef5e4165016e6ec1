/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutctl: speaks to a running coprocessor over the link.
 *
 *   flowcutctl [--link PATH] [--json] COMMAND
 *
 *   status                          boot id, connections, fw_cfg, the lease
 *   counters [--all]                counters by name (non-zero unless --all),
 *                                   read from the counters window: no command
 *   counters clear                  COUNTER_CLEAR
 *   conns                           the connection table, both ways
 *   conn verdict ID drop|cut-thru|send-to-ips
 *   cfg                             the configuration word, bit by bit
 *   cfg NAME=on|off ...             set bits by name, read-modify-write
 *   settings                        the settings file (--settings PATH)
 *   settings set KEY VALUE          change one and save: flowcutd applies it
 *                                   at once (no link needed for these two)
 *   fingerprint FILE                each TLS ClientHello over TCP or QUIC in a capture
 *                                   (pcap or pcapng): its tuple, SNI, ALPN,
 *                                   JA4, JA4_r, JA3 (no link needed)
 *   cut ADDRESS|PREFIX|RANGE [--for SECONDS]
 *                                   add it to flowcutd's cut4/cut6 (nftables,
 *                                   in flowcutd's namespace): flowcutd cuts
 *                                   every connection with a far end in it,
 *                                   and the host drops it, for SECONDS or
 *                                   until uncut (no link needed)
 *   uncut ADDRESS|PREFIX|RANGE      remove it (as it was added)
 *   cut --conn ID                   ask flowcutd (its control socket,
 *                                   --control PATH) to cut one connection
 *                                   (root only)
 *   daemon                          flowcutd's own state, asked on its
 *                                   control socket (root, or a member of
 *                                   control_read_group; no link needed)
 *   resync [--wait]                 ask flowcutd to resync (root only): it
 *                                   starts the run and says its number;
 *                                   --wait waits until it is through and
 *                                   prints resync_last_ms
 *   why ADDRESS | why --conn ID     which trigger cuts it (never-cut entry,
 *                                   cut set, watched set and element, list
 *                                   and line, the cut connections: when,
 *                                   in hardware, frames since), or why
 *                                   nothing does (root or the read group)
 *   triggers                        each watched set's and list's figures:
 *                                   elements, connections cut, frames
 *   web-secret [--make]             the operator's secret file (--secret
 *                                   PATH, default /etc/flowcut/web.secret):
 *                                   its path and whether flowcutd accepts it
 *                                   (fc_secret's checks: root's, 0600, 64 hex
 *                                   digits), never the secret; --make writes
 *                                   one when missing (root), as flowcutd does
 *
 * Human-readable by default; --json prints one JSON document (jansson).
 * Exit status: 0, 1 when the coprocessor refused or could not be reached
 * (the message says which and why), 2 for a usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>
#include <nftables/libnftables.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_nft.h>
#include <flowcut/fc_ctl.h>
#include <flowcut/fc_defs.h>
#include <flowcut/fc_key.h>

#include "fc_ja.h"
#include "fc_list.h"
#include "fc_secret.h"
#include "fc_settings.h"
#include "fc_tlscap.h"
#include "lk.h"

#define TIMEOUT_MS 2000

static bool json;
static struct lk *lk;

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

static int
print_json(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	return 0;
}

/* ---- status ---- */

static int
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

static int
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

static int
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

static int
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

static int
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

/* ---- settings (the file; flowcutd follows it) ---- */

static int
cmd_settings(const char *path, int argc, char **argv)
{
	struct fc_settings s;
	char err[512], value[1024] = "";
	int rc;

	if (argc != 0 && !(argc >= 3 && strcmp(argv[0], "set") == 0)) {
		fprintf(stderr, "flowcutctl: settings [set KEY VALUE...]\n");
		return 2;
	}
	/* the value's words joined: settings set watched_set inet filter blocked4 */
	for (int i = 2; i < argc; i++) {
		size_t used = strlen(value);

		if ((size_t)snprintf(value + used, sizeof(value) - used, "%s%s", i > 2 ? " " : "",
				     argv[i]) >= sizeof(value) - used) {
			fprintf(stderr, "flowcutctl: settings set: the value is too long\n");
			return 2;
		}
	}
	if (argc > 3)
		argc = 3;
	rc = fc_settings_load(path, &s, err, sizeof(err));
	if (rc == -ENOENT && argc == 3) {
		fc_settings_default(&s);	/* the first save makes the file */
	} else if (rc != 0) {
		fprintf(stderr, "flowcutctl: settings: %s\n", err);
		return 1;
	}
	if (argc == 3) {
		if (fc_settings_set(&s, argv[1], value, err, sizeof(err)) != 0) {
			fprintf(stderr, "flowcutctl: settings set: %s\n", err);
			return 2;
		}
		/* what the loader (flowcutd's) would refuse is not saved: never_cut's bound, its file */
		if (fc_settings_check(&s, err, sizeof(err)) != 0) {
			fprintf(stderr, "flowcutctl: settings set: %s (not saved)\n", err);
			return 2;
		}
		rc = fc_settings_save(path, &s);
		if (rc != 0) {
			fprintf(stderr, "flowcutctl: settings: saving %s: %s\n", path, strerror(-rc));
			return 1;
		}
	}
	if (json) {
		json_t *lists = json_array(), *ports = json_array(), *sets = json_array();

		for (unsigned int i = 0; i < s.nlists; i++)
			json_array_append_new(lists, json_string(s.lists[i]));
		for (unsigned int i = 0; i < s.nsets; i++)
			json_array_append_new(sets, json_pack("{s:s, s:s, s:s}", "family",
							      s.sets[i].family, "table",
							      s.sets[i].table, "set",
							      s.sets[i].set));
		for (unsigned int i = 0; i < s.ntls_ports; i++)
			json_array_append_new(ports, json_integer(s.tls_ports[i]));
		return print_json(json_pack("{s:b, s:b, s:i, s:o, s:o, s:o, s:o, s:I, s:i, s:i, s:o}",
					    "offload", s.offload, "cut_in_hardware",
					    s.cut_in_hardware, "idle_timeout", s.idle_timeout,
					    "watched_lists", lists, "watched_sets", sets,
					    "watched_fingerprints",
					    s.fingerprints[0] ? json_string(s.fingerprints) :
					    json_null(), "tls_ports", ports, "list_max_bytes",
					    (json_int_t)s.list_max_bytes, "list_min_prefix4",
					    s.list_min_prefix4, "list_min_prefix6",
					    s.list_min_prefix6, "control_read_group",
					    s.control_read_group[0] ? json_string(s.control_read_group)
								    : json_null()));
	}
	printf("offload          %s\n", s.offload ? "on" : "off");
	printf("cut_in_hardware  %s\n", s.cut_in_hardware ? "on" : "off");
	printf("idle_timeout     %u s\n", s.idle_timeout);
	for (unsigned int i = 0; i < s.nlists; i++)
		printf("watched_list     %s\n", s.lists[i]);
	if (s.fingerprints[0])
		printf("watched_fingerprints %s\n", s.fingerprints);
	printf("tls_ports       ");
	for (unsigned int i = 0; i < s.ntls_ports; i++)
		printf(" %u", s.tls_ports[i]);
	printf("\n");
	for (unsigned int i = 0; i < s.nsets; i++)
		printf("watched_set      %s %s %s\n", s.sets[i].family, s.sets[i].table,
		       s.sets[i].set);
	printf("list_max_bytes   %u\n", (unsigned int)s.list_max_bytes);
	printf("list_min_prefix4 %u\n", s.list_min_prefix4);
	printf("list_min_prefix6 %u\n", s.list_min_prefix6);
	if (s.control_read_group[0])
		printf("control_read_group %s (gid %u)\n", s.control_read_group,
		       (unsigned int)s.control_read_gid);
	return 0;
}

/* ---- fingerprint (a capture; no link) ---- */

/* Bytes as text: printable ASCII as is, anything else as \xNN. */
static void
escaped(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 5 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, p[i] >= 0x20 && p[i] < 0x7f && p[i] != '\\' ?
				      "%c" : "\\x%02x", p[i]);
	out[o] = '\0';
}

static void
endpoint(const struct fc_tlscap_hello *ch, const uint8_t *addr, uint16_t port, char *out,
	 size_t cap)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(ch->family, addr, a, sizeof(a));
	snprintf(out, cap, ch->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
}

static int
fingerprint_one(void *arg, const struct fc_tlscap_hello *ch)
{
	static char ja3[FC_JA_STR_MAX], ja4r[FC_JA_STR_MAX];
	const struct fc_tls_hello *h = ch->hello;
	char cli[64], srv[64], sni[1024] = "", alpn[1024] = "", md5[FC_JA3_MD5_LEN + 1];
	char ja4[FC_JA4_LEN + 1];
	json_t *doc = arg;
	int rc = ch->rc;

	endpoint(ch, ch->src, ch->sport, cli, sizeof(cli));
	endpoint(ch, ch->dst, ch->dport, srv, sizeof(srv));
	if (rc == 0) {
		struct fc_tls_bytes name;
		unsigned int pos = 0;
		size_t o = 0;

		escaped(fc_tls_bytes_ptr(h, h->sni), h->sni.len, sni, sizeof(sni));
		while (fc_tls_alpn_next(h, &pos, &name) && o + 1 < sizeof(alpn)) {
			if (o > 0)
				alpn[o++] = ',';
			escaped(fc_tls_bytes_ptr(h, name), name.len, alpn + o, sizeof(alpn) - o);
			o += strlen(alpn + o);
		}
		rc = fc_ja4(h, ch->transport, ja4, ja4r, sizeof(ja4r));
		if (rc == 0)
			rc = fc_ja3(h, ja3, sizeof(ja3), md5) < 0 ? -EIO : 0;
		if (rc != 0)
			snprintf(ja3, sizeof(ja3), "fingerprint: %s", strerror(-rc));
	}
	if (json) {
		json_t *o = json_pack("{s:s, s:s, s:s, s:I}", "transport",
				      ch->transport == 'q' ? "quic" : "tcp", "client", cli, "server",
				      srv, "frame", (json_int_t)ch->frame);

		if (rc == 0) {
			json_object_set_new(o, "sni", h->has_sni ? json_string(sni) : json_null());
			json_object_set_new(o, "alpn", h->has_alpn ? json_string(alpn) : json_null());
			json_object_set_new(o, "ja4", json_string(ja4));
			json_object_set_new(o, "ja4_r", json_string(ja4r));
			json_object_set_new(o, "ja3", json_string(md5));
			json_object_set_new(o, "ja3_full", json_string(ja3));
		} else {
			json_object_set_new(o, "error", json_string(ch->rc != 0 ? h->err : ja3));
		}
		json_array_append_new(doc, o);
		return 0;
	}
	printf("%s %s -> %s  frame %" PRIu64 "\n", ch->transport == 'q' ? "quic" : "tcp", cli,
	       srv, ch->frame);
	if (rc != 0) {
		printf("  error     %s\n\n", ch->rc != 0 ? h->err : ja3);
		return 0;
	}
	printf("  sni       %s\n", h->has_sni ? sni : "-");
	printf("  alpn      %s\n", h->has_alpn ? alpn : "-");
	printf("  ja4       %s\n", ja4);
	printf("  ja4_r     %s\n", ja4r);
	printf("  ja3       %s\n", md5);
	printf("  ja3_full  %s\n\n", ja3);
	return 0;
}

/* ---- cuts by hand (flowcutd's table; its control socket) ---- */

/*
 * One request on flowcutd's control socket; its answer, without "ok " and
 * the newline, in ans (cap bytes), waited for `wait_s` seconds.  0; 1 said
 * (unreachable, no answer in time, or flowcutd answered an error: a
 * refusal, ...).
 */
static int
ctl_ask_for(const char *path, const char *req, char *ans, size_t cap, long wait_s)
{
	struct timeval tv = { .tv_sec = wait_s };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[FC_CTL_ANS_MAX + 1];
	ssize_t n = -1;
	int s;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "flowcutctl: --control %s: path too long\n", path);
		return 1;
	}
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(s, req, strlen(req), MSG_NOSIGNAL) < 0 ||
	    (n = recv(s, buf, FC_CTL_ANS_MAX, 0)) < 0) {
		fprintf(stderr, "flowcutctl: flowcutd's control socket %s: %s\n", path,
			errno == ENOENT || errno == ECONNREFUSED ? "no flowcutd listening" :
			errno == EAGAIN ? "no answer in time (flowcutd busy, or stopped)" :
			errno == EACCES ? "not allowed to reach it (root, or control_read_group "
					  "for what only reads)" : strerror(errno));
		if (s >= 0)
			close(s);
		return 1;
	}
	close(s);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strncmp(buf, "ok ", 3) != 0) {
		if (json)
			print_json(json_pack("{s:b, s:s}", "ok", 0, "answer", buf));
		else
			fprintf(stderr, "flowcutctl: flowcutd: %s\n",
				strncmp(buf, "error ", 6) == 0 ? buf + 6 : buf);
		return 1;
	}
	snprintf(ans, cap, "%s", buf + 3);
	return 0;
}

/* ctl_ask_for with every request's 5 s. */
static int
ctl_ask(const char *path, const char *req, char *ans, size_t cap)
{
	return ctl_ask_for(path, req, ans, cap, 5);
}

/* One request whose answer is a sentence: printed.  0, 1. */
static int
ctl_request(const char *path, const char *req)
{
	char ans[FC_CTL_ANS_MAX + 1];

	if (ctl_ask(path, req, ans, sizeof(ans)) != 0)
		return 1;
	if (json)
		return print_json(json_pack("{s:b, s:s}", "ok", 1, "answer", ans));
	printf("%s\n", ans);
	return 0;
}

/* ---- flowcutd's own state (its control socket) ---- */

static int
cmd_daemon(const char *control, int argc)
{
	char ans[FC_CTL_ANS_MAX + 1], *boot = NULL;
	json_int_t off = 0, hw = 0, host = 0, failed = 0;
	int prog = 0, gate = 0, cih = 0, refused = 0;
	json_error_t jerr;
	json_t *doc;

	if (argc != 0) {
		fprintf(stderr, "flowcutctl: daemon takes no argument\n");
		return 2;
	}
	if (ctl_ask(control, "status\n", ans, sizeof(ans)) != 0)
		return 1;
	doc = json_loads(ans, 0, &jerr);
	if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:b, s:s, s:I, s:I, s:I, s:I, s:b, "
					  "s:b, s:b}", "programmed", &prog, "boot_id", &boot,
					  "offloaded", &off, "cuts_in_hardware", &hw,
					  "cuts_on_host", &host, "cut_failed", &failed, "offload",
					  &gate, "cut_in_hardware", &cih, "settings_refused",
					  &refused) != 0) {
		fprintf(stderr, "flowcutctl: flowcutd's status is not what this flowcutctl reads: "
			"%s\n", jerr.text);
		json_decref(doc);
		return 1;
	}
	if (json)
		return print_json(doc);
	printf("programmed   %s\n", prog ? "yes" : "no (waiting for the coprocessor)");
	printf("boot id      %s\n", boot);
	printf("offloaded    %" JSON_INTEGER_FORMAT "\n", off);
	printf("cuts         %" JSON_INTEGER_FORMAT " in hardware, %" JSON_INTEGER_FORMAT
	       " on the host, %" JSON_INTEGER_FORMAT " failed\n", hw, host, failed);
	printf("settings     offload %s, cut in hardware %s%s\n", gate ? "on" : "off",
	       cih ? "on" : "off", refused ? " (the file was refused: see flowcutd's log)" : "");
	if (json_integer_value(json_object_get(doc, "never_cut_wide")) > 0)
		printf("WARNING      never_cut holds %" JSON_INTEGER_FORMAT " range(s) wider than a /16 "
		       "or /48 (never_cut_min_prefix lowered): nothing in them is ever cut\n",
		       json_integer_value(json_object_get(doc, "never_cut_wide")));
	json_decref(doc);
	return 0;
}

/* An address, prefix or range of one line, as a canonical range.  0, or 2 (said). */
static int
cut_target(const char *arg, struct fc_range *r)
{
	struct fc_list l = { 0 };
	long bad;

	if (strpbrk(arg, "\n#;") != NULL) {
		fprintf(stderr, "flowcutctl: '%s' is not an address, prefix or range\n", arg);
		return 2;
	}
	bad = fc_list_parse(arg, strlen(arg), &l, NULL, NULL);
	if (bad != 0 || l.n != 1) {
		fprintf(stderr, "flowcutctl: '%s' is not an address, prefix or range\n", arg);
		fc_list_free(&l);
		return 2;
	}
	*r = l.r[0];
	fc_list_free(&l);
	return 0;
}

/* "add"/"delete element inet flowcut cut4|cut6 { ELEMENT [timeout Ns] }". */
static int
cut_element(const char *verb, const struct fc_range *r, unsigned long secs)
{
	char elem[2 * INET6_ADDRSTRLEN + 8], cmd[256];
	const char *set = r->family == 4 ? FC_NFT_CUT4 : FC_NFT_CUT6;
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int rc;

	if (nft == NULL) {
		fprintf(stderr, "flowcutctl: libnftables: no context\n");
		return 1;
	}
	nft_ctx_buffer_error(nft);
	fc_range_format(r, elem, sizeof(elem));
	if (secs)
		snprintf(cmd, sizeof(cmd), "%s element " FC_NFT_TABLE_NAME " %s { %s timeout %lus }\n",
			 verb, set, elem, secs);
	else
		snprintf(cmd, sizeof(cmd), "%s element " FC_NFT_TABLE_NAME " %s { %s }\n", verb, set,
			 elem);
	rc = nft_run_cmd_from_buffer(nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutctl: nftables: %s element %s of " FC_NFT_TABLE_NAME " %s: %s",
			verb, elem, set, nft_ctx_get_error_buffer(nft));
	else if (json)
		rc = print_json(json_pack("{s:s, s:s, s:s, s:I}", "op", verb, "set", set, "element",
					  elem, "timeout", (json_int_t)secs));
	else if (secs)
		printf("cut %s for %lu s\n", elem, secs);
	else
		printf("%s %s\n", strcmp(verb, "add") == 0 ? "cut" : "uncut", elem);
	nft_ctx_free(nft);
	return rc == 0 ? 0 : 1;
}

static int
cmd_cut(const char *control, bool cut, int argc, char **argv)
{
	struct fc_range r;
	unsigned long secs = 0;
	char *end;
	int rc;

	if (cut && argc == 2 && strcmp(argv[0], "--conn") == 0) {
		char req[64];
		uint64_t id = strtoull(argv[1], &end, 10);

		if (!isdigit((unsigned char)argv[1][0]) || *end) {
			fprintf(stderr, "flowcutctl: cut --conn: '%s' is not a connection id\n",
				argv[1]);
			return 2;
		}
		snprintf(req, sizeof(req), "cut-conn %" PRIu64 "\n", id);
		return ctl_request(control, req);
	}
	if (cut && argc == 3 && strcmp(argv[1], "--for") == 0) {
		secs = strtoul(argv[2], &end, 10);
		if (!isdigit((unsigned char)argv[2][0]) || *end || secs == 0 || secs > 86400 * 365) {
			fprintf(stderr, "flowcutctl: cut --for: '%s' is not 1 to 31536000 seconds\n",
				argv[2]);
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, cut ? "flowcutctl: cut ADDRESS|PREFIX|RANGE [--for SECONDS] | "
				      "cut --conn ID\n" : "flowcutctl: uncut ADDRESS|PREFIX|RANGE\n");
		return 2;
	}
	rc = cut_target(argv[0], &r);
	return rc ? rc : cut_element(cut ? "add" : "delete", &r, secs);
}

/*
 * A resync asked of flowcutd (root only).  flowcutd starts it and answers
 * at once with its number (the job runs over its loop's turns, fd_ctl.h);
 * --wait then asks `status` every 20 ms until that run is through
 * (`resyncs` past it, or at it and `resyncing` false), at most
 * FLOWCUTCTL_RESYNC_WAIT_S, and prints its figures: resync_last_ms (the
 * run's own time, flowcutd's clock), resync_taken_out (since start),
 * offloaded, and the wait as flowcutctl saw it.
 */
#define FLOWCUTCTL_RESYNC_WAIT_S 900
static int
cmd_resync(const char *control, int argc, char **argv)
{
	char ans[FC_CTL_ANS_MAX + 1];
	json_int_t r = 0, n = 0, ms = 0, taken = 0, off = 0;
	bool wait = argc == 1 && strcmp(argv[0], "--wait") == 0;
	struct timespec t0, t1;
	json_error_t jerr;
	long long wait_ms;
	json_t *doc;
	int running = 0;

	if (argc > 1 || (argc == 1 && !wait)) {
		fprintf(stderr, "flowcutctl: resync [--wait]: '%s' is not --wait\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ctl_ask(control, "resync\n", ans, sizeof(ans)) != 0)
		return 1;
	doc = json_loads(ans, 0, &jerr);
	if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:I}", "resync", &r) != 0) {
		fprintf(stderr, "flowcutctl: resync: flowcutd's answer '%s': %s\n", ans, jerr.text);
		json_decref(doc);
		return 1;
	}
	json_decref(doc);
	if (!wait) {
		if (json)
			return print_json(json_pack("{s:I}", "resync", r));
		printf("resync %lld started\n", (long long)r);
		return 0;
	}
	for (;;) {
		if (ctl_ask(control, "status\n", ans, sizeof(ans)) != 0)
			return 1;
		doc = json_loads(ans, 0, &jerr);
		if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:I, s:b, s:I, s:I, s:I}",
						  "resyncs", &n, "resyncing", &running,
						  "resync_last_ms", &ms, "resync_taken_out", &taken,
						  "offloaded", &off) != 0) {
			fprintf(stderr, "flowcutctl: resync: flowcutd's status is not what this "
				"flowcutctl reads: %s\n", jerr.text);
			json_decref(doc);
			return 1;
		}
		json_decref(doc);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (n > r || (n == r && !running))
			break;
		if (t1.tv_sec - t0.tv_sec > FLOWCUTCTL_RESYNC_WAIT_S) {
			fprintf(stderr, "flowcutctl: resync %lld not through after %d s\n",
				(long long)r, FLOWCUTCTL_RESYNC_WAIT_S);
			return 1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	wait_ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;

	if (json)
		return print_json(json_pack("{s:I, s:I, s:I, s:I, s:I}", "resync", r, "resync_last_ms",
					    ms, "resync_taken_out", taken, "offloaded", off,
					    "wait_ms", (json_int_t)wait_ms));
	printf("resync %lld: resync_last_ms %lld (the wait %lld ms), resync_taken_out "
	       "%lld, offloaded %lld\n", (long long)r, (long long)ms, wait_ms, (long long)taken,
	       (long long)off);
	return 0;
}

static int
cmd_fingerprint(int argc, char **argv)
{
	struct fc_tlscap_stats st;
	json_t *doc = json_array();
	char err[512];
	int n;

	if (argc != 1) {
		fprintf(stderr, "flowcutctl: fingerprint FILE\n");
		json_decref(doc);
		return 2;
	}
	n = fc_tlscap_read(argv[0], fingerprint_one, doc, &st, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "flowcutctl: fingerprint: %s\n", err);
		json_decref(doc);
		return 1;
	}
	if (json)
		return print_json(json_pack("{s:s, s:o, s:{s:I, s:I, s:I, s:I, s:I}}", "file",
					    argv[0], "hellos", doc, "skipped", "ip_fragments",
					    (json_int_t)st.fragments, "truncated",
					    (json_int_t)st.truncated, "other", (json_int_t)st.other,
					    "out_of_order_dropped", (json_int_t)st.dropped,
					    "quic_undecrypted", (json_int_t)st.quic_undecrypted));
	json_decref(doc);
	printf("%d ClientHello%s over TCP and QUIC in %" PRIu64 " frames (%" PRIu64 " QUIC "
	       "Initial datagrams of clients)\n", n, n == 1 ? "" : "s", st.frames,
	       st.quic_initials);
	if (st.quic_undecrypted)
		printf("not read: %" PRIu64 " QUIC Initials that no client key opens (a server's "
		       "whose client the capture missed, or damaged)\n", st.quic_undecrypted);
	if (st.fragments || st.truncated || st.dropped)
		printf("not read: %" PRIu64 " IP fragments, %" PRIu64 " segments cut short by the "
		       "snapshot length, %" PRIu64 " out-of-order bytes over the cap\n",
		       st.fragments, st.truncated, st.dropped);
	return 0;
}

/* ---- why, triggers (flowcutd's control socket: fd_explain's answers) ---- */

/* A trailing --json, as the global one.  The arguments left. */
static int
json_tail(int argc, char **argv)
{
	if (argc > 0 && strcmp(argv[argc - 1], "--json") == 0) {
		json = true;
		return argc - 1;
	}
	return argc;
}

/* One request whose answer is a JSON object: parsed into *doc.  0, 1 (said). */
static int
ctl_ask_json(const char *control, const char *req, json_t **doc)
{
	static char ans[FC_CTL_ANS_MAX + 1];
	json_error_t jerr;

	if (ctl_ask(control, req, ans, sizeof(ans)) != 0)
		return 1;
	*doc = json_loads(ans, 0, &jerr);
	if (*doc == NULL || !json_is_object(*doc)) {
		fprintf(stderr, "flowcutctl: flowcutd's answer to %.*s is not what this flowcutctl "
			"reads: %s\n", (int)strcspn(req, "\n"), req, *doc ? "not an object" : jerr.text);
		json_decref(*doc);
		return 1;
	}
	return 0;
}

static const char *
jstr(const json_t *o, const char *key, const char *none)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : none;
}

/* A watched set's or list's part in a why: "set NAME: element E", "list PATH: line N (E)". */
static void
why_source(const json_t *s, const char *indent)
{
	if (strcmp(jstr(s, "kind", ""), "set") == 0)
		printf("%sset %s: element %s\n", indent, jstr(s, "name", "?"),
		       jstr(s, "element", "(none now)"));
	else if (strcmp(jstr(s, "kind", ""), "fingerprints") == 0)
		printf("%sfingerprints %s: line %" JSON_INTEGER_FORMAT "\n", indent,
		       jstr(s, "name", "?"), json_integer_value(json_object_get(s, "line")));
	else
		printf("%slist %s: line %" JSON_INTEGER_FORMAT " (%s)\n", indent, jstr(s, "name", "?"),
		       json_integer_value(json_object_get(s, "line")),
		       jstr(s, "entry", "not in the file's first 65,536 lines now"));
}

static void
why_conn(const json_t *c)
{
	json_t *src = json_object_get(c, "source");

	printf("  connection %" JSON_INTEGER_FORMAT ": server %s, client %s: ",
	       json_integer_value(json_object_get(c, "id")), jstr(c, "server", "?"),
	       jstr(c, "client", "?"));
	if (!json_is_true(json_object_get(c, "cut"))) {
		printf("%s%s%s\n", jstr(c, "why", "not cut"),
		       json_is_string(json_object_get(c, "never_cut")) ? ": never_cut " : "",
		       jstr(c, "never_cut", ""));
		return;
	}
	printf("cut by %s", jstr(c, "trigger", "?"));
	if (json_object_get(c, "when") == NULL) {
		printf(" (%s)\n", jstr(c, "record", "no record"));
		return;
	}
	printf(" at %s, %s, frames dropped since: ", jstr(c, "when", "?"),
	       json_is_true(json_object_get(c, "in_hardware")) ? "in hardware" : "on the host");
	if (json_is_true(json_object_get(c, "frames_read")))
		printf("%" JSON_INTEGER_FORMAT "\n", json_integer_value(json_object_get(c, "frames")));
	else
		printf("not read yet\n");
	if (json_object_get(c, "by") != NULL && !json_is_object(src)) {
		printf("    %s", jstr(c, "by", ""));
		if (json_object_get(c, "line") != NULL)
			printf(": its list line %" JSON_INTEGER_FORMAT,
			       json_integer_value(json_object_get(c, "line")));
		printf("\n");
	}
	if (json_is_object(src))
		why_source(src, "    ");
}

/* why ADDR | why --conn ID: which trigger cuts it, or why nothing does. */
static int
cmd_why(const char *control, int argc, char **argv)
{
	char req[FC_CTL_MAX];
	json_t *doc, *v;
	size_t i;
	char *end;

	argc = json_tail(argc, argv);
	if (argc == 2 && strcmp(argv[0], "--conn") == 0) {
		uint64_t id = strtoull(argv[1], &end, 10);

		if (!isdigit((unsigned char)argv[1][0]) || *end) {
			fprintf(stderr, "flowcutctl: why --conn: '%s' is not a connection id\n",
				argv[1]);
			return 2;
		}
		snprintf(req, sizeof(req), "why-conn %" PRIu64 "\n", id);
	} else if (argc == 1 && strlen(argv[0]) < 64 && !strpbrk(argv[0], "\n ")) {
		snprintf(req, sizeof(req), "why %s\n", argv[0]);
	} else {
		fprintf(stderr, "flowcutctl: why ADDRESS | why --conn ID (an IPv4 or IPv6 address)\n");
		return 2;
	}
	if (ctl_ask_json(control, req, &doc) != 0)
		return 1;
	if (json)
		return print_json(doc);
	if (json_object_get(doc, "address") == NULL) {	/* why-conn */
		why_conn(doc);
		json_decref(doc);
		return 0;
	}
	printf("%s: %s\n", jstr(doc, "address", "?"), jstr(doc, "why", "?"));
	if (json_is_string(json_object_get(doc, "never_cut")))
		printf("  never_cut entry %s\n", jstr(doc, "never_cut", ""));
	json_array_foreach(json_object_get(doc, "hand"), i, v)
		printf("  by hand: cut set element %s\n", json_string_value(v));
	json_array_foreach(json_object_get(doc, "sources"), i, v)
		why_source(v, "  ");
	json_array_foreach(json_object_get(doc, "connections"), i, v)
		why_conn(v);
	json_decref(doc);
	return 0;
}

/* triggers: each watched set's and list's figures. */
static int
cmd_triggers(const char *control, int argc, char **argv)
{
	json_t *doc, *v;
	size_t i;

	if (json_tail(argc, argv) != 0) {
		fprintf(stderr, "flowcutctl: triggers takes no argument (but --json)\n");
		return 2;
	}
	if (ctl_ask_json(control, "triggers\n", &doc) != 0)
		return 1;
	if (json)
		return print_json(doc);
	printf("%-12s %-8s %10s %10s %12s  %s\n", "kind", "followed", "elements", "cut", "frames",
	       "name");
	json_array_foreach(json_object_get(doc, "sources"), i, v) {
		char frames[24] = "not read";

		if (json_is_true(json_object_get(doc, "frames_read")))
			snprintf(frames, sizeof(frames), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(v, "frames")));
		printf("%-12s %-8s %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %12s  %s\n",
		       jstr(v, "kind", "?"), json_is_true(json_object_get(v, "followed")) ? "yes" : "no",
		       json_integer_value(json_object_get(v, "elements")),
		       json_integer_value(json_object_get(v, "cut")), frames, jstr(v, "name", "?"));
	}
	if (json_integer_value(json_object_get(doc, "sources_left")) > 0)
		printf("(and %" JSON_INTEGER_FORMAT " sources more: no room in flowcutd's answer; "
		       "flowcutd.json's triggers has them all)\n",
		       json_integer_value(json_object_get(doc, "sources_left")));
	json_decref(doc);
	return 0;
}

/*
 * web-secret [--make]: the secret file's path and flowcutd's verdict on it
 * (fc_secret_read, the check flowcutd's `auth` line makes), never the
 * secret; --make writes one when none is there (fc_secret_make, as
 * flowcutd's start does: root's, since a file of another user is refused).
 * Exit 0 when accepted, 1 when missing or refused (or the make failed).
 */
static int
cmd_web_secret(const char *path, int argc, char **argv)
{
	char hex[FC_SECRET_HEX + 1], why[512] = "";
	bool make = false;
	int made = 0, rc;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--make") == 0) {
			make = true;
		} else if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else {
			fprintf(stderr, "flowcutctl: web-secret: '%s': it takes --make and --json "
				"alone\n", argv[i]);
			return 2;
		}
	}
	if (make && geteuid() != 0) {
		fprintf(stderr, "flowcutctl: web-secret --make: %s: root's to make (flowcutd "
			"refuses a secret file not root's)\n", path);
		return 1;
	}
	if (make && (made = fc_secret_make(path, why, sizeof(why))) < 0) {
		fprintf(stderr, "flowcutctl: web-secret --make: %s\n", why);
		return 1;
	}
	rc = fc_secret_read(path, hex, why, sizeof(why));
	explicit_bzero(hex, sizeof(hex));
	if (json)
		return print_json(json_pack("{s:s, s:b, s:b, s:o}", "path", path, "accepted",
					    rc == 0, "made", made == 1, "refused",
					    rc == 0 ? json_null() : json_string(why))) != 0 || rc != 0;
	if (rc == 0)
		printf("%s: %s; flowcutd accepts it (root's, 0600, %d hex digits)\n", path,
		       made == 1 ? "made" : "there", FC_SECRET_HEX);
	else if (rc == -ENOENT)
		printf("%s: missing: flowcutd accepts no secret (flowcutctl web-secret --make "
		       "writes one)\n", path);
	else
		printf("%s: refused: flowcutd accepts no secret: %s\n", path, why);
	return rc == 0 ? 0 : 1;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcutctl [--link PATH] [--json] COMMAND\n"
		"  status\n"
		"  counters [--all] | counters clear\n"
		"  conns\n"
		"  conn verdict ID drop|cut-thru|send-to-ips\n"
		"  cfg [NAME=on|off ...]\n"
		"  [--settings PATH] settings [set KEY VALUE...]\n"
		"  fingerprint FILE\n"
		"  cut ADDRESS|PREFIX|RANGE [--for SECONDS] | uncut ADDRESS|PREFIX|RANGE\n"
		"  [--control PATH] cut --conn ID\n"
		"  [--control PATH] daemon\n"
		"  [--control PATH] resync [--wait]\n"
		"  [--control PATH] why ADDRESS | why --conn ID [--json]\n"
		"  [--control PATH] triggers [--json]\n"
		"  [--secret PATH] web-secret [--make] [--json]\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "settings", required_argument, NULL, 'S' },
		{ "control", required_argument, NULL, 'c' },
		{ "secret", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = LK_PATH, *settings = "/etc/flowcut/settings.conf";
	const char *control = FC_CTL_PATH, *secret = FC_WEB_SECRET_PATH;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case 'l': path = optarg; break;
		case 'j': json = true; break;
		case 'S': settings = optarg; break;
		case 'c': control = optarg; break;
		case 'W': secret = optarg; break;
		default: usage(); return 2;
		}
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	if (strcmp(argv[optind], "settings") == 0)
		return cmd_settings(settings, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "fingerprint") == 0)
		return cmd_fingerprint(argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "daemon") == 0)
		return cmd_daemon(control, argc - optind - 1);
	if (strcmp(argv[optind], "why") == 0)
		return cmd_why(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "triggers") == 0)
		return cmd_triggers(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "web-secret") == 0)
		return cmd_web_secret(secret, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "resync") == 0)
		return cmd_resync(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "cut") == 0 || strcmp(argv[optind], "uncut") == 0)
		return cmd_cut(control, argv[optind][0] == 'c', argc - optind - 1,
			       argv + optind + 1);
	lk = lk_attach(path, -1);
	if (lk == NULL) {
		fprintf(stderr, "flowcutctl: link %s\n", lk_error());
		return 1;
	}
	argv += optind;
	argc -= optind;
	if (strcmp(argv[0], "status") == 0 && argc == 1)
		rc = cmd_status();
	else if (strcmp(argv[0], "counters") == 0)
		rc = cmd_counters(argc - 1, argv + 1);
	else if (strcmp(argv[0], "conns") == 0 && argc == 1)
		rc = cmd_conns();
	else if (strcmp(argv[0], "conn") == 0)
		rc = cmd_conn(argc - 1, argv + 1);
	else if (strcmp(argv[0], "cfg") == 0)
		rc = cmd_cfg(argc - 1, argv + 1);
	else {
		usage();
		rc = 2;
	}
	lk_close(lk);
	return rc;
}
