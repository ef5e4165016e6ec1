/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_watch: see fd_watch.h. */
#include "fd_watch.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_list.h"
#include "fd_clock.h"
#include "fd_dirwatch.h"
#include "fd_why.h"

_Static_assert(FC_SETTINGS_MAX_LISTS <= FD_DIRWATCH_MAX, "a list a slot of fd_dirwatch");

/* A watched list file. */
struct wlist {
	char path[FC_SETTINGS_PATH_MAX];	/* watched: the fd_dirwatch slot of its index */
	struct fc_list l;			/* its last good contents */
	bool dirty;				/* written since it was read */
};

/* A watched_set line: a set's name, or a pattern on the names of its table's sets. */
struct wline {
	uint8_t nfproto;
	char family[8];
	char table[FD_SETIO_NAME_MAX];
	char name[FD_SETIO_NAME_MAX];	/* a set's name, or a pattern (fnmatch) */
	bool pattern;
	char text[160];		/* "inet f2b-table *" */
	int state;		/* a pattern's table: 1 there, a negative errno not, 0 not looked at */
};

/* A watched set: named by a line, or found by a pattern. */
struct wset {
	struct fd_setio_set s;
	char text[160];		/* "inet filter blocked4" */
	bool under_pattern;	/* found by a pattern only (no line names it) */
	int state;		/* 1 followed, a negative errno not, 0 not looked at yet */
	char why[160];		/* what was said of it last */
	/*
	 * When the first of its elements runs out (CLOCK_MONOTONIC ms; 0:
	 * none known): from its last whole read, or sooner from an addition's
	 * notification.  The kernel tells no expiry: it is read again then.
	 */
	uint64_t due_ms;
};

/* A change of the list sets being made, a transaction at a time. */
struct job {
	bool active;
	bool fill;			/* the sets emptied first, then target put in */
	struct fc_list target;		/* what they hold once it is done */
	struct fc_list added, removed;	/* the difference from what they held */
	size_t del_at, add_at;		/* how far it went */
	unsigned int txns;
	uint64_t t0;			/* fd_clock_ns() at its start */
};

struct fd_watch {
	struct fd_nft *nft;
	struct fd_cut *cut;
	struct fd_dirwatch *dw;	/* the lists' folders, slot i list i */
	struct wlist lists[FC_SETTINGS_MAX_LISTS];
	unsigned int nlists;
	struct fc_list_limits lim;	/* list_max_bytes, list_min_prefix4/6 */
	struct fc_list applied;	/* what the list sets hold */
	bool fill;		/* the list sets are to be filled whole */
	struct job job;		/* a change under way */
	bool again;		/* the lists changed while it was */
	struct wline lines[FC_SETTINGS_MAX_SETS];
	unsigned int nlines;
	struct wset *sets;	/* the lines' sets, as last looked at (sets_find) */
	unsigned int nsets;
	struct fd_watch_stats st;
	uint64_t expiry_look_ms;	/* when the sets' last read for an expiry ended */
	uint64_t expiry_read_ms;	/* ... and how long it took */
	bool ready;		/* the coprocessor was programmed: cuts run */
	struct fd_why *why;	/* each set's and list's contents and figures (fd_watch_why); may be NULL */
};

/* how often the watched sets are read while one is due (an element still listed) */
#define EXPIRY_LOOK_MS 100

/* A set read whole: its due time is the soonest expiry the read found. */
static void
due_read(struct wset *ws, int64_t expires_ms)
{
	ws->due_ms = expires_ms >= 0 ? fd_clock_ms() + (uint64_t)expires_ms : 0;
}

/* "198.18.1.2, 2001:2::/64 and 3 more": a list's first ranges, for a log line. */
static const char *
first_ranges(const struct fc_list *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && i < 3 && used < len; i++) {
		char r[96];

		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 fc_range_format(&l->r[i], r, sizeof(r)));
	}
	if (l->n > 3 && used < len)
		snprintf(buf + used, len - used, " and %zu more", l->n - 3);
	return buf;
}

/* ---- the sources' contents for fd_why ---- */

/* A watched set read (rc 0) or not: its contents (`l`, moved) are its source's. */
static void
why_set(struct fd_watch *w, const struct wset *ws, int rc, struct fc_list *l)
{
	int src;

	if (w->why == NULL)
		return;
	src = fd_why_source(w->why, FD_WHY_SET, ws->text);
	if (rc != 0) {
		fd_why_gone(w->why, src);
		return;
	}
	fc_list_canon(l);
	fd_why_own(w->why, src, l);
}

/* The sets sets_find no longer finds: not followed. */
static void
why_sets_gone(struct fd_watch *w)
{
	for (unsigned int k = 0; w->why != NULL && k < fd_why_nsources(w->why); k++) {
		const struct fd_why_src *src = fd_why_src(w->why, (int)k);
		bool there = false;

		for (unsigned int i = 0; i < w->nsets && !there; i++)
			there = w->sets[i].state == 1 && strcmp(w->sets[i].text, src->name) == 0;
		if (src->kind == FD_WHY_SET && !there)
			fd_why_gone(w->why, (int)k);
	}
}

/* What each followed set added since, its source's too (before it is cut). */
static void
why_sets_added(struct fd_watch *w)
{
	for (unsigned int i = 0; i < w->nsets; i++) {
		struct fc_list a;

		if (fd_nft_followed_added(w->nft, &w->sets[i].s, &a) == 0 && w->why != NULL &&
		    fd_why_add(w->why, fd_why_source(w->why, FD_WHY_SET, w->sets[i].text), &a) != 0)
			fprintf(stderr, "flowcutd: watched set %s: no memory for its figures; what it "
				"added is not found by why\n", w->sets[i].text);
		fc_list_free(&a);
	}
}

/* The list files watched now: each one's contents its source's (not copied). */
static void
why_lists(struct fd_watch *w)
{
	for (unsigned int k = 0; w->why != NULL && k < fd_why_nsources(w->why); k++)
		if (fd_why_src(w->why, (int)k)->kind == FD_WHY_LIST)
			fd_why_holds(w->why, (int)k, NULL);
	for (unsigned int i = 0; w->why != NULL && i < w->nlists; i++)
		fd_why_holds(w->why, fd_why_source(w->why, FD_WHY_LIST, w->lists[i].path),
			     &w->lists[i].l);
}

/* What `l` holds cut, once the coprocessor is there; said in one line. */
static void
cut(struct fd_watch *w, const struct fc_list *l, enum fd_cut_trigger t, const char *what)
{
	char r[400];
	int rc;

	if (!w->ready || l->n == 0)
		return;
	rc = fd_cut_ranges(w->cut, l, t);	/* each connection counted and said */
	if (rc >= 0)
		printf("flowcutd: %s %s: %d connection%s cut\n", what, first_ranges(l, r, sizeof(r)),
		       rc, rc == 1 ? "" : "s");
}

/* ---- the cut undone ---- */

/*
 * Every watched set's elements appended to `all`: 0, or the error of one
 * that could not be read whole (said).  A set that is not there, or not an
 * address set, holds nothing.
 */
static int
sets_in_force(struct fd_watch *w, struct fc_list *all)
{
	for (unsigned int i = 0; i < w->nsets; i++) {
		struct wset *ws = &w->sets[i];
		struct fd_setio_set s = ws->s;
		char why[160];
		int64_t expires = -1;
		long bad;
		int rc;

		if (ws->state == -E2BIG)
			continue;	/* beyond the bound: not followed, cuts nothing */
		rc = fd_setio_get(fd_nft_io(w->nft), &s, why, sizeof(why));
		if (rc == -ENOENT || rc == -EMEDIUMTYPE) {
			ws->due_ms = 0;		/* nothing in it runs out */
			continue;
		}
		bad = rc == 0 ? fd_setio_read(fd_nft_io(w->nft), &s, all, &expires) : rc;
		if (bad >= 0)
			due_read(ws, expires);	/* an error: read again at the next look */
		if (bad != 0) {
			fprintf(stderr, "flowcutd: release: watched set %s not read whole (%s): no "
				"cut released\n", ws->text, bad < 0 ? strerror((int)-bad) :
				"elements not read");
			return bad < 0 ? (int)bad : -EIO;
		}
	}
	return 0;
}

/*
 * Something that cut may be gone (an element removed from a watched set
 * or a cut set, one that ran out, a list's line removed, a ruleset
 * change): every cut in force read whole - the cut sets, the watched
 * sets, the lists - and the cut connections none of them holds released
 * (fd_cut_release).  Nothing is read when no connection cut by an address
 * is left; nothing is released when something could not be read (a cut
 * stays rather than being lifted by mistake).
 */
static void
release(struct fd_watch *w, const char *what)
{
	struct fc_list all = { 0 };
	int rc;

	if (!w->ready || fd_cut_releasable(w->cut) <= 0)
		return;
	rc = fd_nft_cut_read(w->nft, &all);
	if (rc == 0)
		rc = sets_in_force(w, &all);
	for (size_t i = 0; i < w->applied.n && rc == 0; i++)
		rc = fc_list_add(&all, &w->applied.r[i]);
	/* a change of the list sets under way: what they may hold still */
	for (size_t i = 0; w->job.active && i < w->job.target.n && rc == 0; i++)
		rc = fc_list_add(&all, &w->job.target.r[i]);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: release after %s: what is cut not read whole (%s); no "
			"cut released\n", what, strerror(-rc));
		fc_list_free(&all);
		return;
	}
	fc_list_canon(&all);
	printf("flowcutd: release after %s: %zu ranges cut in force\n", what, all.n);
	(void)fd_cut_release(w->cut, &all);	/* each said */
	fc_list_free(&all);
}

/* ---- watched sets ---- */

/* A followed set that is no more: said once, by whichever step finds it so. */
static void
said_gone(const char *text)
{
	printf("flowcutd: watched set %s: gone (deleted, or its table): no longer followed; "
	       "what it alone cut is released\n", text);
}

/* Says what became of a set, once per change. */
static void
set_said(struct wset *ws, int state, const char *why, size_t ranges, long bad)
{
	bool was_followed = ws->state == 1;

	if (state == ws->state && strcmp(why, ws->why) == 0)
		return;
	ws->state = state;
	snprintf(ws->why, sizeof(ws->why), "%s", why);
	/*
	 * Deleted between sets_find's listing and this read (fail2ban's stop
	 * of a jail, seen in a clean clone): gone as sets_find would have
	 * said, which it will not now that the set is no longer followed.
	 */
	if (was_followed && state == -ENOENT)
		said_gone(ws->text);
	else if (state == 1)
		printf("flowcutd: watched set %s: followed (%s), %zu range%s in it%s\n", ws->text,
		       why, ranges, ranges == 1 ? "" : "s", bad ? "; some elements not read" : "");
	else if (ws->under_pattern && state == -EMEDIUMTYPE)
		fprintf(stderr, "flowcutd: watched set %s: skipped, not an address set (%s)\n",
			ws->text, why);
	else
		fprintf(stderr, "flowcutd: watched set %s: not watched: %s\n", ws->text, why);
}

/* Says what became of a pattern's table, once per change. */
static void
line_said(struct wline *l, int rc)
{
	int state = rc == 0 ? 1 : rc;

	if (state == l->state)
		return;
	l->state = state;
	if (rc == 0)
		printf("flowcutd: watched sets %s: table %s %s found; its sets matching '%s' "
		       "followed\n", l->text, l->family, l->table, l->name);
	else if (rc == -ENOENT)
		fprintf(stderr, "flowcutd: watched sets %s: no table %s %s; its sets are followed "
			"once it is made\n", l->text, l->family, l->table);
	else
		fprintf(stderr, "flowcutd: watched sets %s: table %s %s not read (%s); the sets "
			"found before stay\n", l->text, l->family, l->table, strerror(-rc));
}

/* The sets being found (sets_find): the lines' sets, the old ones' states carried. */
struct found {
	const struct wset *old;
	unsigned int nold;
	const struct wline *line;	/* the pattern being read */
	struct wset *v;
	unsigned int n, cap;
	int err;			/* -ENOMEM */
};

/* The set `name` of line `l` found (once, however many lines find it).  0 or -ENOMEM. */
static int
found_add(struct found *f, const struct wline *l, const char *name)
{
	char text[sizeof(f->v->text)];
	struct wset *ws;

	snprintf(text, sizeof(text), "%s %s %s", l->family, l->table, name);
	for (unsigned int i = 0; i < f->n; i++)
		if (strcmp(f->v[i].text, text) == 0) {
			f->v[i].under_pattern &= l->pattern;	/* a line names it: not under the bound */
			return 0;
		}
	if (f->n == f->cap) {
		unsigned int cap = f->cap ? 2 * f->cap : 16;
		struct wset *v = realloc(f->v, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	ws = &f->v[f->n++];
	memset(ws, 0, sizeof(*ws));
	for (unsigned int j = 0; j < f->nold; j++)
		if (strcmp(f->old[j].text, text) == 0)
			*ws = f->old[j];	/* what was said of it stays said */
	ws->s.nfproto = l->nfproto;
	snprintf(ws->s.table, sizeof(ws->s.table), "%s", l->table);
	snprintf(ws->s.name, sizeof(ws->s.name), "%s", name);
	snprintf(ws->text, sizeof(ws->text), "%s", text);
	ws->under_pattern = l->pattern;
	return 0;
}

/* fd_setio_sets' callback: a set of the pattern's table, kept when its name matches. */
static void
found_name(void *arg, const char *name)
{
	struct found *f = arg;

	if (f->err == 0 && fnmatch(f->line->name, name, 0) == 0)
		f->err = found_add(f, f->line, name);
}

/*
 * The lines' sets found again: each named set, and each set of a
 * pattern's table whose name matches (read from the kernel: made since,
 * or gone with its table).  A table that could not be read keeps the sets
 * found in it before; with no memory, the sets stay as they were.  A
 * followed set that is gone is said: what it held cuts no more.
 */
static void
sets_find(struct fd_watch *w)
{
	struct found f = { .old = w->sets, .nold = w->nsets };

	for (unsigned int i = 0; i < w->nlines && f.err == 0; i++) {
		struct wline *l = &w->lines[i];
		int rc;

		if (!l->pattern) {
			f.err = found_add(&f, l, l->name);
			continue;
		}
		f.line = l;
		rc = fd_setio_sets(fd_nft_io(w->nft), l->nfproto, l->table, found_name, &f);
		line_said(l, rc);
		for (unsigned int j = 0; rc != 0 && rc != -ENOENT && j < f.nold && f.err == 0; j++)
			if (f.old[j].under_pattern && f.old[j].s.nfproto == l->nfproto &&
			    strcmp(f.old[j].s.table, l->table) == 0 &&
			    fnmatch(l->name, f.old[j].s.name, 0) == 0)
				f.err = found_add(&f, l, f.old[j].s.name);
	}
	if (f.err != 0) {
		fprintf(stderr, "flowcutd: watched sets: no memory to look for them; the sets "
			"followed stay\n");
		free(f.v);
		return;
	}
	for (unsigned int j = 0; j < f.nold; j++) {
		bool kept = false;

		for (unsigned int i = 0; i < f.n && !kept; i++)
			kept = strcmp(f.v[i].text, f.old[j].text) == 0;
		if (!kept && f.old[j].state == 1)
			said_gone(f.old[j].text);
	}
	free(w->sets);
	w->sets = f.v;
	w->nsets = f.n;
}

/*
 * Every watched set found again (sets_find), looked at and read whole;
 * the ones that can be are followed - under patterns, FD_WATCH_PATTERN_SETS
 * at most, the rest said and counted - and with `cut_all` what they hold
 * is cut.
 */
static void
sets_look(struct fd_watch *w, bool cut_all)
{
	struct fd_setio_set *ok;
	struct fc_list all = { 0 };
	unsigned int nok = 0, npat = 0;

	sets_find(w);
	why_sets_added(w);	/* what the whole reads below hold: dropped */
	ok = calloc(w->nsets ? w->nsets : 1, sizeof(*ok));
	if (ok == NULL) {
		fprintf(stderr, "flowcutd: watched sets: no memory; not looked at\n");
		return;
	}
	w->st.watched_sets_beyond = 0;
	for (unsigned int i = 0; i < w->nsets; i++) {
		struct wset *ws = &w->sets[i];
		struct fc_list l = { 0 };
		char why[160];
		int rc = fd_setio_get(fd_nft_io(w->nft), &ws->s, why, sizeof(why));
		int64_t expires = -1;
		long bad = 0;

		if (rc == 0 && ws->under_pattern && npat++ >= FD_WATCH_PATTERN_SETS) {
			rc = -E2BIG;
			snprintf(why, sizeof(why), "beyond the %d sets followed under patterns",
				 FD_WATCH_PATTERN_SETS);
			w->st.watched_sets_beyond++;
		}
		if (rc == 0)
			bad = fd_setio_read(fd_nft_io(w->nft), &ws->s, &l, &expires);
		if (rc != 0 || bad >= 0)
			due_read(ws, expires);	/* none when it is not there */
		if (rc == 0 && bad < 0) {
			rc = (int)bad;
			snprintf(why, sizeof(why), "reading its elements: %s", strerror(-rc));
		}
		if (bad > 0)
			fprintf(stderr, "flowcutd: watched set %s: %ld elements not read or not "
				"paired: skipped\n", ws->text, bad);
		set_said(ws, rc == 0 ? 1 : rc, why, l.n, bad);
		if (rc == 0)
			ok[nok++] = ws->s;
		for (size_t j = 0; j < l.n; j++)
			if (fc_list_add(&all, &l.r[j]) != 0) {
				fprintf(stderr, "flowcutd: watched set %s: no memory; not all of "
					"it cut\n", ws->text);
				break;
			}
		why_set(w, ws, rc, &l);	/* moved there, or freed */
		fc_list_free(&l);
	}
	why_sets_gone(w);
	w->st.watched_sets_followed = nok;
	if (fd_nft_follow(w->nft, ok, nok) != 0)
		fprintf(stderr, "flowcutd: watched sets: no memory; not followed\n");
	free(ok);
	fc_list_canon(&all);
	if (cut_all)
		cut(w, &all, FD_CUT_SET, "watched sets hold");
	fc_list_free(&all);
}

/* The settings' watched_set lines (what was said of each stays said). */
static void
sets_set(struct fd_watch *w, const struct fc_settings *s)
{
	struct wline old[FC_SETTINGS_MAX_SETS];
	unsigned int nold = w->nlines;

	memcpy(old, w->lines, sizeof(old));
	w->nlines = 0;
	for (unsigned int i = 0; i < s->nsets; i++) {
		struct wline *l = &w->lines[w->nlines];
		int f = fd_setio_family(s->sets[i].family);

		if (f < 0)
			continue;	/* fc_settings allows none such */
		memset(l, 0, sizeof(*l));
		l->nfproto = (uint8_t)f;
		snprintf(l->family, sizeof(l->family), "%s", s->sets[i].family);
		snprintf(l->table, sizeof(l->table), "%s", s->sets[i].table);
		snprintf(l->name, sizeof(l->name), "%s", s->sets[i].set);
		l->pattern = fc_settings_is_pattern(l->name);
		snprintf(l->text, sizeof(l->text), "%s %s %s", s->sets[i].family, s->sets[i].table,
			 s->sets[i].set);
		for (unsigned int j = 0; j < nold; j++)
			if (strcmp(old[j].text, l->text) == 0)
				l->state = old[j].state;
		w->nlines++;
	}
}

/* ---- watched lists ---- */

/* A bad line: its number and why, never its text (fc_list tells none). */
static void
bad_line(void *arg, unsigned long line, const char *what)
{
	fprintf(stderr, "flowcutd: list %s line %lu: %s\n", (const char *)arg, line, what);
}

/* Reads a list file again: its good lines, or its last good contents kept. */
static void
list_read(struct wlist *wl, const struct fc_list_limits *lim)
{
	uint64_t t0 = fd_clock_ns();
	char err[FC_SETTINGS_PATH_MAX + 128];
	long bad = fc_list_load(wl->path, lim, &wl->l, bad_line, wl->path, err, sizeof(err));

	wl->dirty = false;
	if (bad < 0)	/* err: "PATH: why" */
		fprintf(stderr, "flowcutd: list %s: refused, not read (%s); its last good "
			"contents stay (%zu ranges)\n", wl->path, err, wl->l.n);
	else
		printf("flowcutd: list %s: %zu ranges read in %.3f s, %ld bad line%s\n", wl->path,
		       wl->l.n, fd_clock_s_since(t0), bad, bad == 1 ? "" : "s");
}

/* The job's end: the sets hold its target; what it added is cut. */
static void
job_done(struct fd_watch *w)
{
	struct job *j = &w->job;

	printf("flowcutd: lists: the list sets hold %zu ranges (%zu added, %zu removed%s) after "
	       "%.3f s, %u transaction%s\n", j->target.n, j->added.n, j->removed.n,
	       j->fill ? ", filled whole" : "", fd_clock_s_since(j->t0), j->txns,
	       j->txns == 1 ? "" : "s");
	w->fill = false;
	fc_list_free(&w->applied);
	w->applied = j->target;
	j->target = (struct fc_list){ 0 };
	cut(w, &j->added, FD_CUT_LIST, "lists added");
	if (j->removed.n > 0 || j->fill)
		release(w, "lines removed from the lists");
}

static void
job_free(struct job *j)
{
	fc_list_free(&j->target);
	fc_list_free(&j->added);
	fc_list_free(&j->removed);
	memset(j, 0, sizeof(*j));
}

/*
 * One transaction of the job: up to FD_WATCH_CHUNK ranges, the removals
 * first.  1 when more is left, 0 when the job is over (done, or given up:
 * said why).
 */
static int
job_step(struct fd_watch *w)
{
	struct job *j = &w->job;
	static const struct fc_list none;
	const struct fc_list *del = j->fill ? &none : &j->removed;	/* a fill flushes */
	const struct fc_list *add = j->fill ? &j->target : &j->added;
	struct fc_list d = { 0 }, a = { 0 };	/* views into del and add */
	size_t room = FD_WATCH_CHUNK;
	int rc;

	if (j->del_at < del->n) {
		d.r = del->r + j->del_at;
		d.n = del->n - j->del_at < room ? del->n - j->del_at : room;
		room -= d.n;
	}
	if (room && j->add_at < add->n) {
		a.r = add->r + j->add_at;
		a.n = add->n - j->add_at < room ? add->n - j->add_at : room;
	}
	rc = fd_setio_lists_apply(fd_nft_io(w->nft), &d, &a, j->fill && j->txns == 0);
	if (rc != 0 && !j->fill && j->txns == 0) {
		/* the sets are not what was put in: put them back whole */
		j->fill = true;
		return job_step(w);
	}
	if (rc != 0) {
		fprintf(stderr, "flowcutd: lists: the list sets' change stopped after %u "
			"transaction%s; they are filled whole at the next change\n", j->txns,
			j->txns == 1 ? "" : "s");
		w->fill = true;
		cut(w, &j->added, FD_CUT_LIST, "lists added");	/* the host's rule or not */
		job_free(j);
		return 0;
	}
	j->txns++;
	j->del_at += d.n;
	j->add_at += a.n;
	if (j->add_at < add->n || j->del_at < del->n)
		return 1;
	job_done(w);
	job_free(j);
	return 0;
}

/*
 * The lists' union put into the list sets as a difference (or whole, when
 * they are new), then what was added cut.  A change of more than
 * FD_WATCH_CHUNK ranges goes on in fd_watch_work, a transaction a turn;
 * one asked for meanwhile waits for it.
 */
static void
lists_apply(struct fd_watch *w)
{
	struct fc_list all = { 0 };
	struct job *j = &w->job;
	int rc = 0;

	if (j->active) {
		w->again = true;
		return;
	}
	w->again = false;
	for (unsigned int i = 0; i < w->nlists && rc == 0; i++)
		for (size_t k = 0; k < w->lists[i].l.n && rc == 0; k++)
			rc = fc_list_add(&all, &w->lists[i].l.r[k]);
	fc_list_canon(&all);
	memset(j, 0, sizeof(*j));
	if (rc == 0)
		rc = fc_list_diff(&w->applied, &all, &j->added, &j->removed);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: lists: no memory for their union; the list sets stay\n");
		fc_list_free(&all);
		job_free(j);
		return;
	}
	if (!w->fill && j->added.n == 0 && j->removed.n == 0) {
		fc_list_free(&all);
		job_free(j);
		return;
	}
	j->target = all;
	j->fill = w->fill;
	j->t0 = fd_clock_ns();
	j->active = true;
	if (job_step(w) == 0 && w->again)
		lists_apply(w);
}

int
fd_watch_work(struct fd_watch *w)
{
	if (!w->job.active)
		return 0;
	if (job_step(w) == 0 && w->again)
		lists_apply(w);
	return w->job.active;
}

/* Each list's folder watched again (a save renames into it). */
static void
lists_watch(struct fd_watch *w)
{
	for (unsigned int i = 0; i < w->nlists; i++) {
		/* an overflow of the queue: every list read again, its folder watched or not */
		int rc = fd_dirwatch_add(w->dw, i, w->lists[i].path,
					 IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR | IN_Q_OVERFLOW);

		if (rc != 0)
			fprintf(stderr, "flowcutd: list %s: its folder cannot be watched (%s); "
				"changes to it are not seen\n", w->lists[i].path, strerror(-rc));
	}
}

static void
lists_set(struct fd_watch *w, const struct fc_settings *s)
{
	struct wlist *old = malloc(sizeof(w->lists));
	unsigned int nold = w->nlists;
	struct fc_list_limits lim = { .max_bytes = s->list_max_bytes,
				       .min_prefix4 = s->list_min_prefix4,
				       .min_prefix6 = s->list_min_prefix6 };
	bool lim_changed = memcmp(&lim, &w->lim, sizeof(lim)) != 0;

	if (old == NULL) {
		fprintf(stderr, "flowcutd: lists: no memory; the lists in force stay\n");
		return;
	}
	w->lim = lim;
	memcpy(old, w->lists, sizeof(w->lists));
	for (unsigned int i = 0; i < nold; i++)
		fd_dirwatch_remove(w->dw, i);	/* one folder, once */
	w->nlists = 0;
	for (unsigned int i = 0; i < s->nlists; i++) {
		struct wlist *wl = &w->lists[w->nlists++];
		bool kept = false;

		memset(wl, 0, sizeof(*wl));
		snprintf(wl->path, sizeof(wl->path), "%s", s->lists[i]);
		for (unsigned int j = 0; j < nold && !kept; j++)
			if (strcmp(old[j].path, wl->path) == 0) {
				wl->l = old[j].l;	/* moved: read again below if written */
				old[j].l = (struct fc_list){ 0 };
				kept = true;
			}
		wl->dirty = !kept;
	}
	for (unsigned int j = 0; j < nold; j++)
		fc_list_free(&old[j].l);	/* a list no longer watched */
	free(old);
	if (lim_changed)		/* each list read again under the new limits */
		for (unsigned int i = 0; i < w->nlists; i++)
			w->lists[i].dirty = true;
	lists_watch(w);
	for (unsigned int i = 0; i < w->nlists; i++)
		if (w->lists[i].dirty)
			list_read(&w->lists[i], &w->lim);
}

/* ---- the interface ---- */

struct fd_watch *
fd_watch_open(struct fd_nft *nft, struct fd_cut *cut)
{
	struct fd_watch *w = calloc(1, sizeof(*w));

	if (w == NULL)
		return NULL;
	w->nft = nft;
	w->cut = cut;
	w->fill = true;
	w->dw = fd_dirwatch_open();
	if (w->dw == NULL) {
		int err = errno;

		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void
fd_watch_close(struct fd_watch *w)
{
	if (w == NULL)
		return;
	for (unsigned int i = 0; i < w->nlists; i++)
		fc_list_free(&w->lists[i].l);
	fc_list_free(&w->applied);
	job_free(&w->job);
	fd_dirwatch_close(w->dw);
	free(w->sets);
	free(w);
}

int
fd_watch_fd(const struct fd_watch *w)
{
	return fd_dirwatch_fd(w->dw);
}

void
fd_watch_stats(const struct fd_watch *w, struct fd_watch_stats *st)
{
	*st = w != NULL ? w->st : (struct fd_watch_stats){ 0 };
}

void
fd_watch_why(struct fd_watch *w, struct fd_why *why)
{
	w->why = why;
}

void
fd_watch_settings(struct fd_watch *w, const struct fc_settings *s)
{
	sets_set(w, s);
	sets_look(w, true);
	lists_set(w, s);
	why_lists(w);
	if (fd_nft_lists_lost(w->nft)) {
		job_free(&w->job);
		w->fill = true;
	}
	lists_apply(w);
	release(w, "the settings changed");	/* a set or a list no longer watched */
}

void
fd_watch_files(struct fd_watch *w)
{
	uint64_t changed;
	bool any = false;

	(void)fd_dirwatch_read(w->dw, &changed);	/* failed: what came before */
	for (unsigned int i = 0; i < w->nlists; i++)
		if (changed & (UINT64_C(1) << i))
			w->lists[i].dirty = any = true;
	if (!any)
		return;
	for (unsigned int i = 0; i < w->nlists; i++)
		if (w->lists[i].dirty)
			list_read(&w->lists[i], &w->lim);
	why_lists(w);
	lists_apply(w);
}

void
fd_watch_nft(struct fd_watch *w, int nft_rc)
{
	struct fc_list added = { 0 };
	int rc = fd_nft_followed_take(w->nft, &added);

	for (unsigned int i = 0; i < w->nsets; i++) {	/* what was added runs out then */
		uint64_t due = fd_nft_followed_due(w->nft, &w->sets[i].s);

		if (due != 0 && (w->sets[i].due_ms == 0 || due < w->sets[i].due_ms))
			w->sets[i].due_ms = due;
	}

	if (nft_rc < 0 || (nft_rc & FD_NFT_RULESET)) {
		/* sets made anew, lost events: everything read again */
		if (fd_nft_lists_lost(w->nft)) {
			job_free(&w->job);	/* what it put in went with the sets */
			w->fill = true;
			lists_apply(w);
		}
		sets_look(w, true);
		release(w, nft_rc < 0 ? "nftables events lost" : "a ruleset change");
	} else {
		if ((nft_rc & FD_NFT_WATCHED) && rc != 0)	/* not all of it read: read whole */
			sets_look(w, true);
		else if (nft_rc & FD_NFT_WATCHED) {
			why_sets_added(w);	/* so the cut finds each one's set */
			cut(w, &added, FD_CUT_SET, "watched set added");
		}
		if (nft_rc & FD_NFT_UNCUT)
			release(w, "elements removed");
	}
	fc_list_free(&added);
}

/*
 * A watched set's element whose time is up: the kernel takes it without
 * a word, so the set is read again then, with everything else in force
 * (release: a deletion's check), EXPIRY_LOOK_MS after the last such read
 * ended at the soonest, or as long as that read took when it took longer
 * (a watched set of a million elements is read whole in about 14 s: the
 * loop is not given to expiries more than half of its time).  That read
 * gives each set its next due time - a later one when the element was
 * refreshed meanwhile (`update @set` from the packet path: still there,
 * nothing released), the same one while the kernel still lists it.
 * With no connection cut by an address, nothing an expiry could release:
 * the due times are dropped, and the next cut through a set brings its own
 * (a whole read, or the notification of what it added).
 */
static void
sets_expiry(struct fd_watch *w)
{
	uint64_t now = fd_clock_ms();
	const struct wset *due = NULL;
	char what[200];

	for (unsigned int i = 0; i < w->nsets && due == NULL; i++)
		if (w->sets[i].due_ms != 0 && w->sets[i].due_ms <= now)
			due = &w->sets[i];
	if (due == NULL || !w->ready ||
	    now < w->expiry_look_ms + (w->expiry_read_ms > EXPIRY_LOOK_MS ? w->expiry_read_ms
									  : EXPIRY_LOOK_MS))
		return;
	if (fd_cut_releasable(w->cut) == 0) {	/* -ENOMEM: release says */
		for (unsigned int i = 0; i < w->nsets; i++)
			w->sets[i].due_ms = 0;
		w->expiry_look_ms = now;
		return;
	}
	snprintf(what, sizeof(what), "an element of watched set %s ran out", due->text);
	release(w, what);	/* each set read whole: its next due time */
	w->expiry_look_ms = fd_clock_ms();
	w->expiry_read_ms = w->expiry_look_ms - now;
}

void
fd_watch_expiry(struct fd_watch *w)
{
	if (fd_nft_cut_expired(w->nft) > 0)
		release(w, "a cut's timeout ran out");
	sets_expiry(w);
}

void
fd_watch_boot(struct fd_watch *w)
{
	w->ready = true;
	sets_look(w, true);
	cut(w, &w->applied, FD_CUT_LIST, "lists hold");
}
