/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_page: see fd_page.h. */
#include "fd_page.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include <flowcut/fc_cmd.h>

#include "fc_list.h"
#include "fd_cmds.h"
#include "fd_cut.h"
#include "fd_explain.h"
#include "fd_offload_cut.h"
#include "fd_why.h"

/*
 * An answer's room besides its rows: "ok {"from":N,"next":N,"conns":[",
 * "]}\n" and its NUL (or cuts' "],"cuts_left":N}"), with room to spare.
 */
#define FD_PAGE_REST 96

static const char *
trigger_name(unsigned int t)
{
	if (t == FD_CUT_TLS)
		return "fingerprint";	/* the protocol's name of fd_cut's tls */
	return t < FD_CUT_NTRIGGERS ? fd_cut_trigger_name((enum fd_cut_trigger)t) : "unknown";
}

/* family, proto, src, sport, dst, dport of key `k` set in `o` (0, or -ENOMEM). */
static int
tuple_set(json_t *o, const struct fc_key *k)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";
	int af = k->family == 4 ? AF_INET : AF_INET6;
	json_t *proto = k->proto == 6 ? json_string("tcp") : k->proto == 17 ? json_string("udp")
								       : json_integer(k->proto);

	inet_ntop(af, k->src, s, sizeof(s));
	inet_ntop(af, k->dst, d, sizeof(d));
	return json_object_set_new(o, "family", json_integer(k->family == 4 ? 4 : 6)) |
	       json_object_set_new(o, "proto", proto) |
	       json_object_set_new(o, "src", json_string(s)) |
	       json_object_set_new(o, "sport", json_integer(ntohs(k->sport))) |
	       json_object_set_new(o, "dst", json_string(d)) |
	       json_object_set_new(o, "dport", json_integer(ntohs(k->dport))) ? -ENOMEM : 0;
}

/*
 * A cut connection's part: trigger, source, element, line, when_s,
 * in_hardware, frames_dropped (the record's keys left out with no record
 * of its trigger).  NULL: no memory.
 */
static json_t *
cut_json(const struct fd_why *w, const struct fd_why_rec *r, const struct fd_offload_conn *oc)
{
	json_t *o = json_pack("{s:s}", "trigger", trigger_name(oc->cut_by));
	const struct fd_why_src *s;
	const struct fc_range *el = NULL;
	char buf[2 * INET6_ADDRSTRLEN + 8];

	if (o == NULL || r == NULL || r->trigger != oc->cut_by)
		return o;	/* none kept, or another's */
	s = r->src != FD_WHY_NONE ? fd_why_src(w, r->src) : NULL;
	if (s != NULL && s->kind != FD_WHY_FINGERPRINTS) {
		const struct fc_list *l = fd_why_held(w, r->src);

		el = fd_explain_range(l, oc->family, oc->ends[0]);
		el = el ? el : fd_explain_range(l, oc->family, oc->ends[1]);
	}
	if (json_object_set_new(o, "source", s ? json_string(s->name) : json_null()) |
	    json_object_set_new(o, "element", el ? json_string(fc_range_format(el, buf, sizeof(buf)))
						 : json_null()) |
	    json_object_set_new(o, "line", r->trigger == FD_CUT_TLS && r->line ?
					   json_integer(r->line) : json_null()) |
	    json_object_set_new(o, "when_s", json_integer(r->when_s)) |
	    json_object_set_new(o, "in_hardware", json_boolean(r->hw)) |
	    json_object_set_new(o, "frames_dropped", json_integer((json_int_t)r->frames))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "FWD", or "FWD/DROP" where the two microflows' actions differ. */
static void
action_text(const struct fc_conn_info *ci, char *buf, size_t len)
{
	if (ci->mf[0].action == ci->mf[1].action)
		snprintf(buf, len, "%s", fc_action_name(ci->mf[0].action));
	else
		snprintf(buf, len, "%s/%s", fc_action_name(ci->mf[0].action),
			 fc_action_name(ci->mf[1].action));
}

/* Whether `a` (4 or 16 bytes) is inside the filter's address or prefix. */
static bool
addr_in(const struct fd_page_filter *f, const uint8_t *a)
{
	unsigned int full = f->plen / 8, rest = f->plen % 8;

	if (memcmp(a, f->addr, full) != 0)
		return false;
	return rest == 0 || ((a[full] ^ f->addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool
matches(const struct fd_page_filter *f, const struct fc_conn_info *ci, bool cut,
	const char *action)
{
	const struct fc_key *k = &ci->mf[0].key, *r = &ci->mf[1].key;

	if (f->family != 0 &&
	    (k->family != f->family || !(addr_in(f, k->src) || addr_in(f, k->dst) ||
					 addr_in(f, r->src) || addr_in(f, r->dst))))
		return false;
	if (f->port >= 0 && ntohs(k->sport) != f->port && ntohs(k->dport) != f->port)
		return false;
	if (f->state != NULL && f->state[0] != '\0' &&
	    !(strcasecmp(f->state, "cut") == 0 ? cut
					       : strcasecmp(f->state,
							    fc_conn_state_name(ci->state)) == 0))
		return false;
	return f->action == NULL || f->action[0] == '\0' || strcasecmp(f->action, action) == 0;
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* the coprocessor's clock too */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One row of `conns` (NULL: no memory). */
static json_t *
conn_row(const struct fd_page_parts *p, const struct fc_conn_info *ci,
	 const struct fd_offload_conn *oc, const char *action, uint64_t now)
{
	uint64_t last = ci->mf[0].stats.last_seen > ci->mf[1].stats.last_seen ?
			ci->mf[0].stats.last_seen : ci->mf[1].stats.last_seen;
	json_t *o = json_pack("{s:I}", "id", (json_int_t)ci->id);
	json_t *cut = oc ? cut_json(p->why, p->why ? fd_why_get(p->why, oc->slot) : NULL, oc)
			 : json_null();

	if (o == NULL || cut == NULL || tuple_set(o, &ci->mf[0].key) != 0 ||
	    json_object_set_new(o, "action", json_string(action)) |
	    json_object_set_new(o, "verdict", json_string(fc_verdict_name(ci->verdict))) |
	    json_object_set_new(o, "state", json_string(fc_conn_state_name(ci->state))) |
	    json_object_set_new(o, "idle_ms", json_integer(now > last ? (json_int_t)((now - last) /
										 1000000) : 0)) |
	    json_object_set_new(o, "packets", json_integer((json_int_t)(ci->mf[0].stats.packets +
									 ci->mf[1].stats.packets))) |
	    json_object_set_new(o, "bytes", json_integer((json_int_t)(ci->mf[0].stats.bytes +
								       ci->mf[1].stats.bytes)))) {
		json_decref(o);
		json_decref(cut);
		return NULL;
	}
	if (json_object_set_new(o, "cut", cut) != 0) {	/* cut freed either way */
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The text of `row` and its comma, bytes (cap + 1: none, no memory). */
static size_t
row_bytes(const json_t *row, size_t cap)
{
	char *t = row ? json_dumps(row, JSON_COMPACT) : NULL;
	size_t len = t ? strlen(t) + 1 : cap + 1;

	free(t);
	return len;
}

void
fd_page_conns(const struct fd_page_parts *p, uint64_t from, unsigned int n,
	      const struct fd_page_filter *f, char *ans, size_t cap)
{
	struct fc_cmd_range r = { .first = (uint32_t)from, .max = FC_RANGE_MAX };
	json_t *rows = json_array(), *next = NULL;
	size_t used = FD_PAGE_REST;
	uint64_t now = mono_ns();

	for (unsigned int c = 0; rows != NULL && next == NULL && c < FD_PAGE_CMDS; c++) {
		struct fc_ans_range a;
		int rc = fd_cmds_call(p->cmds, FC_CMD_CONN_READ_RANGE, &r, sizeof(r), &a,
				      sizeof(a));

		if (rc == 0 && a.count > FC_RANGE_MAX)
			rc = -EBADMSG;
		if (rc != 0) {
			snprintf(ans, cap, "error conns %" PRIu64 ": CONN_READ_RANGE from slot %" PRIu32
				 ": %s\n", from, r.first, rc == -EBADMSG ? "more connections than "
				 "an answer holds" : strerror(-rc));
			json_decref(rows);
			return;
		}
		for (uint32_t i = 0; next == NULL && i < a.count; i++) {
			const struct fc_conn_info *ci = &a.conn[i];
			struct fd_offload_conn oc;
			bool in = fd_offload_find(p->off, FD_OFFLOAD_BY_FP, ci->id, NULL, &oc, NULL) == 0;
			char action[32];
			json_t *row;
			size_t len;

			if (json_array_size(rows) == n) {
				next = json_integer((json_int_t)ci->id);	/* the first left out */
				break;
			}
			action_text(ci, action, sizeof(action));
			if (!matches(f, ci, in && oc.cut, action))
				continue;
			row = conn_row(p, ci, in && oc.cut ? &oc : NULL, action, now);
			len = row_bytes(row, cap);
			if (used + len > cap) {	/* shortened: this row first on the next page */
				json_decref(row);
				next = row ? json_integer((json_int_t)ci->id) : NULL;
				if (row == NULL)
					json_decref(rows), rows = NULL;
				break;
			}
			used += len;
			json_array_append_new(rows, row);
		}
		if (next == NULL && a.count < FC_RANGE_MAX)
			next = json_null();	/* the table's end: read through */
		r.first = a.next;
	}
	if (next == NULL && rows != NULL)
		next = json_integer(r.first);	/* the budget spent: on from the slot reached */
	fd_explain_answer(rows ? json_pack("{s:I, s:o, s:o}", "from", (json_int_t)from, "next", next, "conns",
				rows) : NULL, "conns", ans, cap);
}

/* The records to show, newest first: n at most. */
struct newest {
	const struct fd_why_rec **r;
	unsigned int n, max;
};

/* Whether record `r` is its entry's cut now (not stale): *oc its entry's view. */
static bool
live(const struct fd_page_parts *p, const struct fd_why_rec *r, struct fd_offload_conn *oc)
{
	return fd_offload_find(p->off, FD_OFFLOAD_BY_CUT_SLOT, r->slot, NULL, oc, NULL) == 0 && oc->cut_by == r->trigger;
}

static void
newest_add(const struct fd_page_parts *p, struct newest *b, const struct fd_why_rec *r)
{
	struct fd_offload_conn oc;
	unsigned int i;

	if (b->n == b->max && r->when_s <= b->r[b->n - 1]->when_s)
		return;	/* no newer than the oldest kept: the usual case, and no look */
	if (!live(p, r, &oc))
		return;
	i = b->n < b->max ? b->n++ : b->max - 1;
	for (; i > 0 && b->r[i - 1]->when_s < r->when_s; i--)
		b->r[i] = b->r[i - 1];
	b->r[i] = r;
}

void
fd_page_cuts(const struct fd_page_parts *p, unsigned int n, char *ans, size_t cap)
{
	const struct fd_why_rec *keep[FD_PAGE_ROWS];
	struct newest b = { keep, 0, n < FD_PAGE_ROWS ? n : FD_PAGE_ROWS };
	const struct fd_why_rec *r;
	json_t *rows = json_array();
	size_t used = FD_PAGE_REST;
	uint32_t at = 0;
	unsigned int i;

	for (; p->why != NULL && b.max > 0 && (r = fd_why_next(p->why, &at)) != NULL;)
		newest_add(p, &b, r);
	for (i = 0; rows != NULL && i < b.n; i++) {
		struct fd_offload_conn oc;
		json_t *row;
		size_t len;

		(void)live(p, b.r[i], &oc);	/* live: newest_add looked */
		row = cut_json(p->why, b.r[i], &oc);
		if (row == NULL || json_object_set_new(row, "id", json_integer((json_int_t)oc.fp_id)) ||
		    tuple_set(row, &oc.orig) != 0) {
			json_decref(row);
			json_decref(rows), rows = NULL;
			break;
		}
		len = row_bytes(row, cap);
		if (used + len > cap) {
			json_decref(row);
			break;
		}
		used += len;
		json_array_append_new(rows, row);
	}
	fd_explain_answer(rows ? json_pack("{s:o, s:I}", "cuts", rows, "cuts_left", (json_int_t)(b.n - i))
		    : NULL, "cuts", ans, cap);
}
