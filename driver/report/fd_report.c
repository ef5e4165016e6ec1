/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_report: see fd_report.h.  The answers flowcutd.c built itself, moved
 * here whole: status, settings, conns, counters, the stats file; and the
 * read requests dispatched to fd_page and fd_explain.
 */
#include "fd_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_defs.h>

#include "fc_settings_keys.h"
#include "fd_clock.h"
#include "fd_counters.h"
#include "fd_ctstat.h"

/* `conns FROM N [filters]`: a page of the fast path's table (fd_page.h). */
static void
report_conns(const struct fd_report *r, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	struct fd_page_filter f = { .family = req->family, .plen = req->plen, .port = req->port,
				    .state = req->state, .action = req->action };

	memcpy(f.addr, req->addr, sizeof(f.addr));
	fd_page_conns(&r->page, req->id, req->n, &f, ans, cap);
}

/* `settings`: every key of the file, its value, default, kind and help (fc_settings_keys). */
static void
report_settings(const struct fd_report *r, char *ans, size_t cap)
{
	json_t *doc = json_pack("{s:s, s:o, s:o}", "path", r->settings, "refused",
				r->settings_error[0] ? json_string(r->settings_error) : json_null(),
				"keys", fc_settings_keys_json(r->cur));
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (text == NULL || strlen(text) + 5 > cap)
		snprintf(ans, cap, "error settings: no memory for the answer, or longer than %zu "
			 "bytes\n", cap);
	else
		snprintf(ans, cap, "ok %s\n", text);
	free(text);
	json_decref(doc);
}

/*
 * flowcutd's own state as one JSON object on one line (what the stats file
 * holds, the part that fits an answer): programmed or not, the
 * coprocessor's boot id, connections offloaded, cuts, the settings.
 */
static void
report_status(const struct fd_report *r, char *ans, size_t cap)
{
	struct fd_offload_stats os;
	struct fd_cut_stats cs;
	json_int_t hw = 0, host = 0;
	char boot[20], *text;
	json_t *doc;

	fd_offload_stats(r->off, &os);
	fd_cut_stats(r->cut, &cs);
	for (int t = 0; t < FD_CUT_NTRIGGERS; t++) {
		hw += (json_int_t)cs.in_hardware[t];
		host += (json_int_t)cs.on_host[t];
	}
	snprintf(boot, sizeof(boot), "%016" PRIx64, lk_boot_id(r->lk));
	doc = json_pack("{s:b, s:s, s:I, s:I, s:I, s:I, s:b, s:b, s:b, s:I, s:b, s:I, s:I, s:I}",
			"programmed", *r->programmed, "boot_id", boot, "offloaded",
			(json_int_t)os.offloaded, "cuts_in_hardware", hw, "cuts_on_host", host,
			"cut_failed", (json_int_t)cs.cut_failed, "offload", r->cur->offload,
			"cut_in_hardware", r->cur->cut_in_hardware, "settings_refused",
			r->settings_error[0] != '\0', "resyncs", (json_int_t)os.resyncs, "resyncing",
			fd_offload_resyncing(r->off), "resync_last_ms", (json_int_t)os.resync_last_ms,
			"resync_taken_out", (json_int_t)os.resync_taken_out,
			"never_cut_wide", (json_int_t)*r->never_wide);
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (text == NULL || (size_t)snprintf(ans, cap, "ok %s\n", text) >= cap)
		snprintf(ans, cap, "error status: %s\n", text ? "longer than an answer"
								: "no memory for the document");
	free(text);
	json_decref(doc);
}

/*
 * The stats file's members, in the order written, each under one name.
 * COUNT(room, name): a counter, the field `name` of the room's stats in
 * struct stats, each room's listed beside its struct (fd_stats.h);
 * OBJ(name, value): a member made whole (json_t *, NULL: no memory).  docs/counters.md ("flowcutd's own") has a row for each, and
 * tests/run.sh checks that the two lists agree.
 */
#define FLOWCUTD_STATS(COUNT, OBJ)						\
	OBJ(to_host, per_port(s->relay.to_host, ports))			\
	OBJ(from_host, per_port(s->relay.from_host, ports))			\
	FD_RELAY_STATS(COUNT)							\
	OBJ(settings, json_pack("{s:b, s:b, s:i}", "offload", r->cur->offload,	\
				"cut_in_hardware", r->cur->cut_in_hardware,		\
				"idle_timeout", r->cur->idle_timeout))		\
	OBJ(settings_error, r->settings_error[0] ? json_string(r->settings_error) : json_null()) \
	FD_OFFLOAD_STATS(COUNT)							\
	OBJ(cuts, cuts_json(&s->cut))						\
	OBJ(triggers, fd_explain_sources(r->whys))					\
	FD_CUT_STATS(COUNT)							\
	FD_WATCH_STATS(COUNT)							\
	FD_RTCACHE_STATS(COUNT)							\
	FD_MAIN_STATS(COUNT)						\
	OBJ(lease, json_pack("{s:I, s:s, s:I, s:I}", "ms", (json_int_t)r->lease->ms, "state", \
			     fd_lease_state_name(r->lease->last.state), "lapses",	\
			     (json_int_t)r->lease->last.lapses, "lapses_found",	\
			     (json_int_t)r->lease->lapses_found))			\
	OBJ(inspector, fd_ips_stats_json(r->ips))					\
	OBJ(rulecheck, fd_rulecheck_stats_json(r->rck))

/* What the stats are read from, once a document: each room's, and main's own. */
struct stats {
	struct fd_relay_stats relay;
	struct fd_offload_stats offload;
	struct fd_cut_stats cut;
	struct fd_watch_stats watch;
	struct fd_rtcache_stats rtcache;
	struct fd_main_stats main;
};

/* One number a port, an array (NULL: no memory). */
static json_t *
per_port(const uint64_t *n, unsigned int ports)
{
	json_t *a = json_array();

	for (unsigned int p = 0; a != NULL && p < ports; p++)
		if (json_array_append_new(a, json_integer((json_int_t)n[p])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The cuts by trigger (FD_CUT_TRIGGERS), {"in_hardware": N, "on_host": N} each (NULL: no memory). */
static json_t *
cuts_json(const struct fd_cut_stats *cs)
{
	json_t *cuts = json_object();

	for (int t = 0; cuts != NULL && t < FD_CUT_NTRIGGERS; t++)
		if (json_object_set_new(cuts, fd_cut_trigger_name(t),
					json_pack("{s:I, s:I}", "in_hardware",
						  (json_int_t)cs->in_hardware[t], "on_host",
						  (json_int_t)cs->on_host[t])) != 0) {
			json_decref(cuts);
			return NULL;
		}
	return cuts;
}

/* Each room's stats, and main's own, read now. */
static void
stats_fill(const struct fd_report *r, struct stats *st)
{
	*st = (struct stats){ .main = *r->mst };
	fd_relay_stats(r->relay, &st->relay);
	fd_offload_stats(r->off, &st->offload);
	fd_cut_stats(r->cut, &st->cut);
	fd_watch_stats(r->wat, &st->watch);
	fd_rtcache_stats(r->rtc, &st->rtcache);
}

/*
 * Writes flowcutd's stats (FLOWCUTD_STATS) as JSON, atomically (a
 * temporary file renamed).  A document that could not be built whole (no
 * memory) is not written: the file keeps the last whole one, and stderr
 * says why.
 */
void
fd_report_stats_write(const struct fd_report *r, const char *path)
{
	struct stats st, *s = &st;
	unsigned int ports = r->ports;
	json_t *doc = json_object();
	char tmp[4096];
	bool bad = doc == NULL;

	stats_fill(r, &st);
	/* json_object_set_new frees the value either way, and refuses a NULL one */
#define STATS_COUNT_(room, name) \
	bad |= json_object_set_new(doc, #name, json_integer((json_int_t)s->room.name)) != 0;
#define STATS_OBJ_(name, value) bad |= json_object_set_new(doc, #name, value) != 0;
	FLOWCUTD_STATS(STATS_COUNT_, STATS_OBJ_)
#undef STATS_COUNT_
#undef STATS_OBJ_
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (bad)
		fprintf(stderr, "flowcutd: stats: no memory for the document; %s not updated\n",
			path);
	else if (json_dump_file(doc, tmp, JSON_COMPACT) != 0)
		fprintf(stderr, "flowcutd: stats: writing %s failed\n", tmp);
	else if (rename(tmp, path) != 0) {
		fprintf(stderr, "flowcutd: stats: %s to %s: %s\n", tmp, path, strerror(errno));
		unlink(tmp);	/* nothing more to do with it */
	}
	json_decref(doc);
}

/* main's counts in FLOWCUTD_STATS (its COUNTs: counters' "flowcutd") */
#define ONE_COUNT_(room, name) +1
#define NO_OBJ_(name, value)
enum { FLOWCUTD_NCOUNTS = 0 FLOWCUTD_STATS(ONE_COUNT_, NO_OBJ_) };
#undef ONE_COUNT_
#undef NO_OBJ_

/*
 * `counters`: the figures gathered, the document built by
 * driver/control/fd_counters (what is in it and what is left out, and
 * why: fd_counters.h): the coprocessor's counters window by the names
 * `flowcutctl counters --all` prints (fc_cnt_name), flowcutd's counters by
 * their flowcutd.json names (FLOWCUTD_STATS' COUNTs: its objects - per-port
 * arrays, settings, triggers, lease - are not counters, and triggers alone
 * may be 90 KB), conntrack's (fd_ctstat: -1 left out), each port's frames
 * to the host, the link's refusals, the gate and IPS switch as last set
 * (fw_cfg_last), the boot id, the wall clock.
 */
static void
report_counters(const struct fd_report *r, char *ans, size_t cap)
{
	uint64_t cnt[FC_CNT_MAX], when, mono, wire[FC_WIRE_PORTS][FC_WIRE_MAX];
	struct fd_counter fp[FC_CNT_MAX], fd[FLOWCUTD_NCOUNTS];
	struct stats st, *s = &st;
	struct fd_ctstat c;
	struct lk_stats ls;
	struct fd_offload_conns conns = { { { 0 } }, 0 };
	struct timespec now;
	char err[128];
	unsigned int nfd = 0;
	int rc = lk_counters_read(r->lk, cnt, &when), nwire = lk_wire_read(r->lk, wire);
	json_t *doc;

	if (rc != 0)
		fprintf(stderr, "flowcutd: counters: the counters window: %s\n", strerror(-rc));
	if (nwire < 0)
		fprintf(stderr, "flowcutd: counters: the wire's figures: %s\n", strerror(-nwire));
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		fp[i] = (struct fd_counter){ fc_cnt_name(i), fd_counter_u64(cnt[i]) };
	stats_fill(r, &st);
#define CTR_COUNT_(room, name) fd[nfd++] = (struct fd_counter){ #name, fd_counter_u64(s->room.name) };
#define CTR_OBJ_(name, value)
	FLOWCUTD_STATS(CTR_COUNT_, CTR_OBJ_)
#undef CTR_COUNT_
#undef CTR_OBJ_
	if (fd_ctstat_read(NULL, &c, err, sizeof(err)) != 0)
		fprintf(stderr, "flowcutd: counters: /proc/net/stat/nf_conntrack: %s\n", err);
	lk_stats(r->lk, &ls);
	if (r->off != NULL)
		fd_offload_conns(r->off, &conns);
	clock_gettime(CLOCK_REALTIME, &now);
	mono = fd_clock_ns();	/* the window's `when` is the coprocessor's CLOCK_MONOTONIC */
	doc = fd_counters_json(&(struct fd_counters_in){
		.fastpath = rc == 0 ? fp : NULL, .nfastpath = FC_CNT_MAX,
		.flowcutd = fd, .nflowcutd = nfd,
		.conntrack = (const struct fd_counter[]){
			{ "entries", c.entries }, { "limit", c.limit },
			{ "insert_failed", c.insert_failed }, { "drop", c.drop },
			{ "early_drop", c.early_drop } }, .nconntrack = 5,
		.link = (const struct fd_counter[]){
			{ "refused", fd_counter_u64(ls.bad_index + ls.bad_length + ls.bad_message) },
			{ "bad_index", fd_counter_u64(ls.bad_index) },
			{ "bad_length", fd_counter_u64(ls.bad_length) },
			{ "bad_message", fd_counter_u64(ls.bad_message) },
			{ "ring_full", fd_counter_u64(ls.ring_full) },
			{ "frame_too_big", fd_counter_u64(ls.frame_too_big) },
			{ "counters_torn", fd_counter_u64(ls.counters_torn) },
			{ "events_lost", fd_counter_u64(ls.events_lost) } }, .nlink = 8,
		.to_host = st.relay.to_host, .ports = r->ports,
		.wire = nwire > 0 ? (const uint64_t (*)[FC_WIRE_MAX])wire : NULL,
		.nwire = nwire > 0 ? (unsigned int)nwire : 0,
		.cfg_known = *r->fw_cfg_known, .fw_cfg = *r->fw_cfg_last, .boot_id = lk_boot_id(r->lk),
		.conns = r->off != NULL ? (const uint32_t (*)[FC_VERDICT_MAX])conns.n : NULL,
		.conns_cut = conns.cut,
		.uptime_known = rc == 0, .uptime_s = fd_counters_uptime_s(lk_boot_ns(r->lk), when),
		.time_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000,
		.fastpath_time_ms = rc == 0 && when > 0 && when <= mono ?
			(int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 -
			(int64_t)((mono - when) / 1000000) : 0 });
	fd_explain_answer(doc, "counters", ans, cap);	/* doc taken; NULL: no memory, said */
}

bool
fd_report_answer(const struct fd_report *r, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	switch (req->op) {
	case FD_CTL_STATUS:
		report_status(r, ans, cap);
		return true;
	case FD_CTL_SETTINGS:
		report_settings(r, ans, cap);
		return true;
	case FD_CTL_CONNS:
		report_conns(r, req, ans, cap);
		return true;
	case FD_CTL_CUTS:
		fd_page_cuts(&r->page, req->n, ans, cap);
		return true;
	case FD_CTL_COUNTERS:
		report_counters(r, ans, cap);
		return true;
	case FD_CTL_WHY:
		fd_explain_addr(&r->why, req->family, req->addr, ans, cap);
		return true;
	case FD_CTL_WHY_CONN:
		fd_explain_conn(&r->why, req->id, ans, cap);
		return true;
	case FD_CTL_TRIGGERS:
		fd_explain_triggers(&r->why, ans, cap);
		return true;
	default:
		return false;
	}
}
