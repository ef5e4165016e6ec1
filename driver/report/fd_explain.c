/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_explain: see fd_explain.h. */
#include "fd_explain.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fc_list.h"
#include "fd_cut.h"
#include "fd_nft.h"
#include "fd_offload_cut.h"
#include "fd_why.h"

#define FD_EXPLAIN_LINES_MAX 65536	/* a list's lines read for a `why` (list_line) */

const struct fc_range *
fd_explain_range(const struct fc_list *l, uint8_t family, const uint8_t *addr)
{
	size_t len = family == 4 ? 4 : 16;

	for (size_t i = 0; l != NULL && i < l->n; i++)
		if (l->r[i].family == family && memcmp(l->r[i].lo, addr, len) <= 0 &&
		    memcmp(addr, l->r[i].hi, len) <= 0)
			return &l->r[i];
	return NULL;
}

static json_t *
range_json(const struct fc_range *r)
{
	char buf[2 * INET6_ADDRSTRLEN + 8];

	return r ? json_string(fc_range_format(r, buf, sizeof(buf))) : json_null();
}

/*
 * The line (from 1) of list file `path` whose entry holds the address, it
 * in *entry; 0: none in the first FD_EXPLAIN_LINES_MAX lines.  Bounded: a
 * `why` (root's, or the read group's) is answered in the main loop, and a
 * million-line list read a line at a time, each parsed, would hold every
 * cut and offload behind it; a read-group user could ask again and again.
 */
static unsigned long
list_line(const char *path, uint8_t family, const uint8_t *addr, json_t **entry)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long no = 0, found = 0;

	*entry = json_null();
	while (f != NULL && found == 0 && no < FD_EXPLAIN_LINES_MAX &&
	       (n = getline(&line, &cap, f)) >= 0) {
		struct fc_list one = { 0 };

		no++;
		if (fc_list_parse(line, (size_t)n, &one, NULL, NULL) >= 0) {
			fc_list_canon(&one);
			if (fc_list_holds(&one, family, addr)) {
				found = no;
				json_decref(*entry);
				*entry = range_json(fd_explain_range(&one, family, addr));
			}
		}
		fc_list_free(&one);
	}
	free(line);
	if (f != NULL)
		fclose(f);
	return found;
}

/* A source's kind as the answers name it. */
static const char *
kind_name(enum fd_why_kind k)
{
	return k == FD_WHY_SET ? "set" : k == FD_WHY_LIST ? "list" : "fingerprints";
}

/* Source `src`'s part in an answer about the address: name, kind, element or line. */
static json_t *
source_json(const struct fd_why *w, int src, uint8_t family, const uint8_t *addr)
{
	const struct fd_why_src *s = fd_why_src(w, src);
	json_t *o, *entry;

	if (s == NULL)
		return json_null();
	o = json_pack("{s:s, s:s}", "kind", kind_name(s->kind), "name", s->name);
	if (o == NULL)
		return NULL;
	if (s->kind == FD_WHY_SET) {
		json_object_set_new(o, "element", range_json(fd_explain_range(fd_why_held(w, src), family,
									addr)));
		return o;
	}
	json_object_set_new(o, "line", json_integer((json_int_t)list_line(s->name, family, addr,
									    &entry)));
	json_object_set_new(o, "entry", entry);
	return o;
}

static const char *
when_text(uint32_t s, char *buf, size_t len)
{
	time_t t = (time_t)s;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%" PRIu32, s);
	return buf;
}

/* A cut connection's part: its id, ends, trigger, and its record's (NULL: none kept). */
static json_t *
conn_json(const struct fd_explain_parts *p, const struct fd_offload_conn *oc)
{
	const struct fd_why_rec *r = fd_why_get(p->why, oc->slot);
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN], when[32];
	int af = oc->family == 4 ? AF_INET : AF_INET6;
	json_t *o;

	inet_ntop(af, oc->ends[0], a, sizeof(a));
	inet_ntop(af, oc->ends[1], b, sizeof(b));
	o = json_pack("{s:I, s:b, s:s, s:s, s:s}", "id", (json_int_t)oc->fp_id, "cut", oc->cut,
		      "server", a, "client", b, "trigger",
		      oc->cut_by < FD_CUT_NTRIGGERS ? fd_cut_trigger_name(oc->cut_by) :
						      "unknown (a flowcutd before)");
	if (o == NULL || !oc->cut)
		return o;
	if (r == NULL || r->trigger != oc->cut_by) {	/* none kept, or another's */
		json_object_set_new(o, "record", json_string("none kept (cut before this flowcutd "
							     "kept records, or no memory)"));
		return o;
	}
	json_object_set_new(o, "when", json_string(when_text(r->when_s, when, sizeof(when))));
	json_object_set_new(o, "in_hardware", json_boolean(r->hw));
	json_object_set_new(o, "frames", json_integer((json_int_t)r->frames));
	json_object_set_new(o, "frames_read", json_boolean(p->frames_read));
	if (r->trigger == FD_CUT_TLS) {
		const struct fd_why_src *s = fd_why_src(p->why, r->src);

		json_object_set_new(o, "by", json_string("by fingerprint"));
		if (r->line)
			json_object_set_new(o, "line", json_integer((json_int_t)r->line));
		if (s != NULL)	/* the file that matched, and its line */
			json_object_set_new(o, "source", json_pack("{s:s, s:s, s:I}", "kind",
								   kind_name(s->kind), "name",
								   s->name, "line",
								   (json_int_t)r->line));
	} else if (r->src != FD_WHY_NONE) {
		/* the end the source holds: the server's, else the client's */
		const struct fc_list *l = fd_why_held(p->why, r->src);
		const uint8_t *end = fc_list_holds(l, oc->family, oc->ends[0]) ? oc->ends[0]
									  : oc->ends[1];

		json_object_set_new(o, "source", source_json(p->why, r->src, oc->family, end));
	}
	return o;
}

void
fd_explain_answer(json_t *doc, const char *what, char *ans, size_t cap)
{
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	if (text == NULL || (size_t)snprintf(ans, cap, "ok %s\n", text) >= cap)
		snprintf(ans, cap, "error %s: %s\n", what, text ? "longer than an answer"
								  : "no memory for the answer");
	free(text);
	json_decref(doc);
}

struct at {
	uint8_t family;
	const uint8_t *addr;
};

static bool
pick_at(void *arg, const struct fd_offload_conn *oc)
{
	const struct at *a = arg;
	size_t len = a->family == 4 ? 4 : 16;

	return oc->family == a->family && (memcmp(oc->ends[0], a->addr, len) == 0 ||
					   memcmp(oc->ends[1], a->addr, len) == 0);
}

void
fd_explain_addr(const struct fd_explain_parts *p, uint8_t family, const uint8_t *addr,
		char *ans, size_t cap)
{
	char text[INET6_ADDRSTRLEN], what[INET6_ADDRSTRLEN + 8];
	const struct fc_range *never = fd_explain_range(fd_cut_never_list(p->cut), family, addr);
	struct fc_list hand = { 0 };
	struct fd_offload_conn *cs = NULL;
	struct at at = { family, addr };
	json_t *doc, *srcs = json_array(), *conns = json_array(), *handj = json_array();
	long n;
	bool cut;

	inet_ntop(family == 4 ? AF_INET : AF_INET6, addr, text, sizeof(text));
	snprintf(what, sizeof(what), "why %s", text);
	n = fd_offload_pick(p->off, FD_OFFLOAD_CUT, pick_at, &at, &cs);
	if (n < 0 || srcs == NULL || conns == NULL || handj == NULL) {
		snprintf(ans, cap, "error %s: no memory\n", what);
		json_decref(srcs), json_decref(conns), json_decref(handj);
		free(cs);
		return;
	}
	if (p->nft != NULL && fd_nft_cut_read(p->nft, &hand) >= 0 &&
	    fc_list_holds(&hand, family, addr))
		json_array_append_new(handj, range_json(fd_explain_range(&hand, family, addr)));
	fc_list_free(&hand);
	for (unsigned int s = 0; s < fd_why_nsources(p->why); s++) {
		const struct fc_list *l = fd_why_held(p->why, (int)s);

		if (l != NULL && fc_list_holds(l, family, addr))
			json_array_append_new(srcs, source_json(p->why, (int)s, family, addr));
	}
	for (long i = 0; i < n; i++)
		json_array_append_new(conns, conn_json(p, &cs[i]));
	free(cs);
	cut = !never && (json_array_size(handj) || json_array_size(srcs) || n > 0);
	doc = json_pack("{s:s, s:b, s:s, s:o, s:o, s:o, s:o}", "address", text, "cut", cut, "why",
			never ? "never cut: a never_cut entry holds it" :
			cut ? "cut: see hand, sources, connections" :
			"not cut: no cut set, watched set or list holds it",
			"never_cut", range_json(never), "hand", handj, "sources", srcs,
			"connections", conns);
	fd_explain_answer(doc, what, ans, cap);
}

void
fd_explain_conn(const struct fd_explain_parts *p, uint64_t id, char *ans, size_t cap)
{
	struct fd_offload_conn oc;
	char what[40];
	json_t *doc;
	int rc = fd_offload_find(p->off, FD_OFFLOAD_BY_FP, id, NULL, &oc, NULL);

	snprintf(what, sizeof(what), "connection %" PRIu64, id);
	if (rc != 0) {
		snprintf(ans, cap, "error %s: %s\n", what, rc == -ENOENT ?
			 "not an offloaded connection of this flowcutd" : strerror(-rc));
		return;
	}
	doc = conn_json(p, &oc);
	if (doc != NULL && !oc.cut) {
		const struct fc_list *nv = fd_cut_never_list(p->cut);
		const struct fc_range *r = fd_explain_range(nv, oc.family, oc.ends[0]);

		r = r ? r : fd_explain_range(nv, oc.family, oc.ends[1]);
		json_object_set_new(doc, "why", json_string(r ? "not cut: an end is never cut"
							      : "not cut: no trigger cut it"));
		json_object_set_new(doc, "never_cut", range_json(r));
	}
	fd_explain_answer(doc, what, ans, cap);
}

json_t *
fd_explain_sources(const struct fd_why *w)
{
	json_t *a = json_array();

	for (unsigned int i = 0; a != NULL && i < fd_why_nsources(w); i++) {
		const struct fd_why_src *s = fd_why_src(w, (int)i);

		if (json_array_append_new(a, json_pack("{s:s, s:s, s:b, s:I, s:I, s:I}", "kind",
						       kind_name(s->kind), "name", s->name, "followed", s->followed,
						       "elements", (json_int_t)s->elements, "cut",
						       (json_int_t)s->cut, "frames",
						       (json_int_t)s->frames)) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/*
 * The room of an answer's part besides its sources: "ok {"sources":[",
 * "],"sources_left":N,"frames_read":false,"record_bytes":N}\n" and its NUL,
 * with room to spare.
 */
#define FD_EXPLAIN_TRIGGERS_REST 128

void
fd_explain_triggers(const struct fd_explain_parts *p, char *ans, size_t cap)
{
	json_t *all = fd_explain_sources(p->why);
	size_t n = json_array_size(all), k, used = FD_EXPLAIN_TRIGGERS_REST;

	/* the sources that fit, in the order named: each one's text and its comma */
	for (k = 0; k < n; k++) {
		char *t = json_dumps(json_array_get(all, k), JSON_COMPACT | JSON_PRESERVE_ORDER);
		size_t len = t ? strlen(t) + 1 : cap;

		free(t);
		if (used + len > cap)
			break;
		used += len;
	}
	while (json_array_size(all) > k)
		json_array_remove(all, k);
	fd_explain_answer(json_pack("{s:o?, s:I, s:b, s:I}", "sources", all, "sources_left",
			 (json_int_t)(n - k), "frames_read", p->frames_read, "record_bytes",
			 (json_int_t)fd_why_bytes(p->why)),
	       "triggers", ans, cap);
}
