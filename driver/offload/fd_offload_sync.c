/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_sync: the resync - the binding's table (B) reconciled with
 * the fast path's (F) and conntrack's marked states (C) by difference, a
 * job spread over turns (docs/plan-a-million.md, section 2).  Started by
 * fd_offload_resync (lost conntrack or coprocessor events, a start, a
 * boot, a table no longer known: off_lost_track), stepped by
 * fd_offload_sync_step each turn.  Each run has its own epoch E.
 *
 * Start: TABLE_STATS_READ (the table's size) and FW_CFG_PARAMS_GET (the
 * revision), both synchronous.  A table with no connection is the
 * coprocessor's after its boot (or one nothing was ever offloaded to):
 * F is empty, nothing can be reclaimed, and only then are the next hops
 * forgotten (fd_nhop_reset: programmed again as connections need them).
 *
 * 1. F (OFF_SYNC_READ): the table cut in OFF_SYNC_READS windows, each
 *    brief-read (CONN_READ_BRIEF, 8 connections an answer) from where
 *    its last answer ended: one read a window in flight, 32 posted a
 *    step and then flushed (the wait is one batch's round trip, not one
 *    per read, and the step stays the job's own: it does not depend on
 *    the main loop's poll).  Each connection goes in a temporary hash by
 *    original key (port 0, as off_orig_of).  A dropping one no entry
 *    holds is a flowcutd before's cut: adopted at once (off_adopt_cut).
 *    The plan adopts it in C, but its state was killed by the cut, so no
 *    dump ever holds it.  A read that fails (refused: an older
 *    coprocessor; no answer) ends F: the old whole take-out follows (every
 *    uncut connection reclaimed through CONN_READ_RANGE, then forgotten),
 *    and the run goes on from C with F empty.  A take-out that fails too
 *    ends the run: retried a second on (fd_offload_work).
 * 2. C (OFF_SYNC_DUMP): conntrack's states with flowcutd's mark bit,
 *    OFF_SYNC_DATAGRAMS datagrams a step (fd_ct_dump_next).  Each state:
 *    - B has it: stamped E.  If F does not hold its connection (aged
 *      out, removed, an event lost, a boot), or holds another for its
 *      tuple (reclaimed first), it is forgotten and offloaded anew.
 *    - else F holds an uncut connection of this revision for its tuple,
 *      made for nobody this binding knows (a flowcutd before's, a create
 *      whose answer was lost): reclaimed, and the state offloaded anew
 *      in the same step (counted in resync_taken_out only if it is not).
 *    - else: offloaded (off_offload) if it qualifies.
 *    Whichever applied, a state not offloaded now whose timeout is above
 *    P (T_long: a flowcutd offloaded it) leaves (P - idle, idle from F's
 *    last-seen, else 0).  After a ruleset change that did not finish
 *    (marks_stale) the states' bits are cleared instead, nothing
 *    offloaded, until a dump reads through.  A dump interrupted
 *    (NLM_F_DUMP_INTR) starts again, OFF_SYNC_INTR_MAX times.
 * 3. After the dump, B's fast-path ids taken then, OFF_SYNC_LOOKS a step:
 *    an entry the dump did not stamp (a dump can miss a state that moves
 *    during a hash resize, and a marked state sends no further event) is
 *    confirmed with a posted GET (OFF_SYNC_POSTS a step): gone, it is
 *    reclaimed and forgotten; alive, it is kept, but forgotten with a
 *    leave of idle 0 if F lacks its connection.  A cut entry F lacks is
 *    forgotten (it aged out unseen).
 * 4. Then F's connections no entry holds, uncut, of this revision:
 *    reclaimed (OFF_SYNC_POSTS a step), the answers flushed first so no
 *    create still in flight is taken for an unknown one; each whose state
 *    lives leaves (P - idle from the reclaim) and is counted in
 *    resync_taken_out.  Connections of older revisions forward nothing
 *    and the coprocessor removes them itself.
 * So a resync reclaims an allowed connection only when its state is
 * confirmed gone, when the connection belongs to nobody, or when another
 * holds its state's tuple; never one whose state lives and stays allowed.
 *
 * Events are read throughout (no drain): each is applied at once by the
 * state machine, and the run's view copes with what they did.
 * - An entry made during the run (an event's offload, an adoption) is
 *   born E: the fast path's table may have been read before it was made,
 *   so its absence from F proves nothing, and its state was just seen:
 *   it is neither confirmed nor forgotten.
 * - A DESTROY of a state already stamped: its entry was reclaimed and
 *   forgotten; the walk after the dump no longer finds it, and F's
 *   connection for it, now in no entry, is reclaimed again (-ENOENT:
 *   gone, nothing more).  One before its part of the dump: the dump
 *   does not return it.
 * - A NEW (or UPDATE) that qualifies after its part of the dump passed:
 *   offloaded by the event, born E, kept.  One before: the dump finds its
 *   entry and stamps it.
 * - Events lost during a run (another ENOBUFS), or a table no longer
 *   known (off_lost_track): another run follows this one (`again`).
 * A ruleset change during a run ends it first (off_sync_finish, from
 * fd_offload_ruleset_changed): its bits and revision are the old rules',
 * and a dump read past the unmark would offload on them.  That step is
 * as long as the rest of the run, once (at a start, the plan's order:
 * the start resync reads the fast path before everything is judged
 * again); when the ruleset change becomes a job it waits instead.
 *
 * Memory: F holds 72 bytes a connection and its index 16 to 32 (at load
 * 1/4 to 1/2) for the run only (about 130 with uthash before).
 * resync_last_ms is the run's time from its start to its end.
 */
#include "fd_offload_priv.h"

/* ---- F: the fast path's table ---- */

/*
 * F is an array of the connections read, in the table's order, and an
 * index over it by key: open addressing, linear probing, an 8-byte slot
 * each (the key's hash above, the record's index + 1 below: a probe
 * compares a key only when the hashes agree), grown at load 1/2.  Not
 * uthash (it was, in the plan): at a million its chains averaged two
 * records, each its own allocation, and its lookups took a third of a
 * resync of a million (5.6 s, perf).  Not the table's index (off_ix):
 * its slots name entries of the binding's table, F's records are not.
 */
static uint32_t
f_tag(uint64_t h)
{
	uint32_t t = (uint32_t)(h >> 32);

	return t != 0 ? t : 1;	/* a slot of 0 is empty */
}

/* The slot of key `k` (its hash `h`, off_key_hash's): its record's, or the empty one it would take. */
static uint64_t *
f_slot(struct off_sync *s, const struct fc_key *k, uint64_t h)
{
	uint32_t tag = f_tag(h);

	if (s->fixcap == 0)
		return NULL;
	for (uint32_t i = (uint32_t)h & (s->fixcap - 1);; i = (i + 1) & (s->fixcap - 1)) {
		uint64_t v = s->fix[i];

		if (v == 0 || ((uint32_t)(v >> 32) == tag &&
			       memcmp(&s->fa[(uint32_t)v - 1].key, k, sizeof(*k)) == 0))
			return &s->fix[i];
	}
}

static struct off_fconn *
f_find(struct fd_offload *o, const struct fc_key *orig)
{
	uint64_t *v = f_slot(&o->sync, orig, off_key_hash(orig));

	return v != NULL && *v != 0 ? &o->sync.fa[(uint32_t)*v - 1] : NULL;
}

/* Room for one more record and its slot: 0, or -ENOMEM (F as it was). */
static int
f_room(struct off_sync *s)
{
	/* from 64: small, the tests grow it; the records' slots are uint32_t */
	struct off_fconn *fa = s->fn < UINT32_MAX - 1 ?
			       fc_grow(s->fa, &s->fcap, s->fn, sizeof(*fa), 64) : NULL;

	if (fa == NULL)
		return -ENOMEM;
	s->fa = fa;
	if ((uint64_t)(s->fn + 1) * 2 > s->fixcap) {
		uint32_t cap = s->fixcap ? s->fixcap * 2 : 128;
		uint64_t *fix = cap > s->fixcap ? calloc(cap, sizeof(*fix)) : NULL;

		if (fix == NULL)
			return -ENOMEM;
		for (size_t r = 0; r < s->fn; r++) {
			uint64_t h = off_key_hash(&s->fa[r].key);
			uint32_t i = (uint32_t)h & (cap - 1);

			while (fix[i] != 0)
				i = (i + 1) & (cap - 1);
			fix[i] = (uint64_t)f_tag(h) << 32 | (r + 1);
		}
		free(s->fix);
		s->fix = fix;
		s->fixcap = cap;
	}
	return 0;
}

static void
f_free(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;

	free(s->fa);
	free(s->fix);
	s->fa = NULL;
	s->fix = NULL;
	s->fn = s->fcap = 0;
	s->fixcap = 0;
	s->f_at = 0;
}

/* Idle seconds since a last-seen time (0: unknown), as off_idle_s. */
static uint64_t
idle_of(const struct fd_offload *o, uint64_t last_seen)
{
	struct fc_mflow_stats st[2] = { { .last_seen = last_seen }, { .last_seen = 0 } };

	return off_idle_s(o, st);
}

/* A brief as the table reads would return it, for off_dropping and off_adopt_cut. */
static void
info_of(const struct fc_conn_brief *b, struct fc_conn_info *ci)
{
	memset(ci, 0, sizeof(*ci));
	ci->id = b->id;
	ci->state = b->state;
	ci->verdict = b->verdict;
	ci->reason = b->reason;
	ci->fw_rev = b->fw_rev;
	for (unsigned int d = 0; d < 2; d++) {
		ci->mf[d].key = b->key[d];
		ci->mf[d].action = (uint8_t)fc_brief_action(b, d);
	}
}

/* One connection read: into F (this revision's first for a key), a cut of a flowcutd before adopted. */
static void
f_add(struct fd_offload *o, const struct fc_conn_brief *b)
{
	struct off_sync *s = &o->sync;
	struct fc_conn_info ci;
	struct off_fconn f = { .id = b->id, .last_seen = b->last_seen, .fw_rev = b->fw_rev };
	struct off_entry *e = off_find_fp(o, b->id);
	uint64_t *v, h;

	info_of(b, &ci);
	if (e == NULL && off_dropping(&ci))
		(void)off_adopt_cut(o, &ci);	/* no memory: it drops on, unknown */
	f.key = b->key[0];
	f.key.port = 0;
	f.dropping = off_dropping(&ci);
	h = off_key_hash(&f.key);
	v = f_slot(s, &f.key, h);
	if (v != NULL && *v != 0) {
		struct off_fconn *old = &s->fa[(uint32_t)*v - 1];

		/* two for one key: an older revision's keeps it no longer */
		if (old->fw_rev != s->rev && f.fw_rev == s->rev)
			*old = f;
		return;
	}
	if (f_room(s) != 0)
		return;		/* unknown to the run: neither reclaimed nor matched */
	v = f_slot(s, &f.key, h);	/* the index may have grown */
	s->fa[s->fn] = f;
	*v = (uint64_t)f_tag(h) << 32 | (s->fn + 1);
	s->fn++;
}

static void
brief_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct off_sync_win *w = dctx;
	struct fc_ans_brief a;
	size_t head = offsetof(struct fc_ans_brief, conn);

	if (rc == 0 && len < head)
		rc = -EBADMSG;
	if (rc == 0) {
		memcpy(&a, ans, len < sizeof(a) ? len : sizeof(a));
		if (a.count > FC_BRIEF_MAX || len < head + a.count * sizeof(a.conn[0]) ||
		    a.next <= w->next || a.next > w->end)
			rc = -EBADMSG;	/* no progress, or past its window */
	}
	w->rc = rc;
	if (rc != 0)
		return;
	for (uint32_t i = 0; i < a.count; i++)
		f_add(w->o, &a.conn[i]);
	w->next = a.next;
}

/* ---- the whole take-out: a table that cannot be read briefly ---- */

/* One reclaim of a page: its answer, and the connection's idle time at its end. */
struct reclaimed {
	struct fd_offload *o;
	bool posted;
	int rc;
	uint64_t idle_s;
};

static void
reclaim_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct reclaimed *r = dctx;
	struct fc_ans_reclaim a;

	r->rc = rc;
	if (rc == 0 && len >= sizeof(a)) {
		memcpy(&a, ans, sizeof(a));
		r->idle_s = off_idle_s(r->o, a.mf);
	}
}

/*
 * A connection taken out (`ci` as the page read it, `idle_s` from its
 * final counts): its state leaves (P - idle), the bit kept (the dump
 * offloads it again if it still qualifies).  An entry of ours, or a
 * flowcutd before's (by key, if its state is on T_long).  Counted in
 * resync_taken_out when its state lives on.
 */
static void
resync_leave(struct fd_offload *o, const struct fc_conn_info *ci, uint64_t idle_s)
{
	struct off_entry *e = off_find_fp(o, ci->id);

	if (e == NULL)	/* counted in its GET's answer, when its state lives */
		off_orphan_leave(o, &ci->mf[0].key, idle_s, false, true);
	else if (off_leave(o, e, idle_s, false) == 0 && !e->cut)
		o->st.resync_taken_out++;
}

/*
 * One page of connections out, the commands in flight together: 0 or
 * -EIO.  A cut one stays, dropping (it is all it can do), noted held; so
 * does one a flowcutd before this one cut (adopted).  Each taken out
 * leaves (resync_leave), after its reclaim answered.
 */
static int
reclaim_all(struct fd_offload *o, const struct fc_ans_range *a)
{
	struct reclaimed r[FC_RANGE_MAX] = { { 0 } };
	int failed = 0, rc = 0;

	for (uint32_t i = 0; i < a->count && rc == 0; i++) {
		struct fc_cmd_conn_id id = { .id = a->conn[i].id };
		struct off_entry *e = off_find_fp(o, id.id);

		if (e != NULL && e->cut && a->conn[i].state == FC_CONN_VALID) {
			e->held = true;
			continue;
		}
		if (e == NULL && off_dropping(&a->conn[i]) && off_adopt_cut(o, &a->conn[i]) == 0)
			continue;
		r[i] = (struct reclaimed){ .o = o, .posted = true };
		rc = fd_cmds_post(&o->cmds, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), reclaim_done,
				  &r[i]);
		r[i].posted = rc == 0;
	}
	/* every posted command finishes (answered or failed) before `r` goes */
	if (fd_cmds_flush(&o->cmds, -1) != 0)
		rc = -EIO;
	for (uint32_t i = 0; i < a->count; i++) {
		if (!r[i].posted)
			continue;
		if (r[i].rc != 0 && r[i].rc != -ENOENT) {	/* -ENOENT: gone already */
			failed++;
			continue;
		}
		if (r[i].rc != 0) {	/* its last counts: the page's */
			struct fc_mflow_stats st[2] = { a->conn[i].mf[0].stats,
							a->conn[i].mf[1].stats };

			r[i].idle_s = off_idle_s(o, st);
		}
		resync_leave(o, &a->conn[i], r[i].idle_s);
	}
	return rc != 0 || failed ? -EIO : 0;
}

/*
 * Everything uncut out of the fast path, through CONN_READ_RANGE (5 an
 * answer, synchronous), then forgotten: the old resync's, for a table
 * the brief reads cannot read.  0, or the read's error (nothing
 * forgotten yet: tried again).
 */
static int
take_out_whole(struct fd_offload *o)
{
	struct fc_cmd_range r = { .first = 0, .max = FC_RANGE_MAX };

	for (;;) {
		struct fc_ans_range a;
		int rc = off_call(o, FC_CMD_CONN_READ_RANGE, &r, sizeof(r), &a, sizeof(a));

		if (rc == 0 && a.count > FC_RANGE_MAX)
			rc = -EBADMSG;
		if (rc != 0)
			return rc;
		if (a.count == 0)
			break;
		rc = reclaim_all(o, &a);
		if (rc != 0)
			return rc;
		if (a.next <= r.first)
			break;
		r.first = a.next;
	}
	off_forget_uncut(o);		/* but the cut ones the fast path still holds */
	fd_nhop_reset(o->nhops);	/* unknown: programmed again as connections need them */
	return 0;
}

/* ---- the run ---- */

static void sync_start(struct fd_offload *o);

static void
sync_end(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;

	f_free(o);
	free(s->ids);
	s->ids = NULL;
	s->nids = s->at = 0;
	s->phase = OFF_SYNC_IDLE;
	if (o->st.cut_adopted > s->adopted0) {
		printf("flowcutd: %" PRIu64 " connections dropping in the fast path, cut before "
		       "this flowcutd: taken up, dropping on\n", o->st.cut_adopted - s->adopted0);
		fflush(stdout);
	}
	o->st.resync_last_ms = (off_now_ns(o) - s->t0_ns) / 1000000u;
	if (s->again || o->need_resync)
		sync_start(o);
}

/* A run that could not read the table: nothing forgotten; tried again (fd_offload_work). */
static void
sync_abort(struct fd_offload *o, const char *what, int rc)
{
	fprintf(stderr, "flowcutd: resync: %s: %s; tried again in a second\n", what,
		strerror(-rc));
	f_free(o);
	o->sync.phase = OFF_SYNC_IDLE;
	o->need_resync = true;
	o->resync_tried_ms = off_now_ns(o) / 1000000u;
}

static void
dump_begin(struct fd_offload *o)
{
	int rc = o->ct.dump_start(o->ct.ctx, o->cfg.mark_bit, o->cfg.mark_bit);

	o->sync.phase = OFF_SYNC_DUMP;
	o->sync.dump_whole = rc == 0;
	if (rc != 0) {	/* the walk after it still confirms every entry by GET */
		fprintf(stderr, "flowcutd: resync: conntrack's dump of mark 0x%08x: %s; the states "
			"offloaded when their next event comes\n", o->cfg.mark_bit, strerror(-rc));
		o->sync.phase = OFF_SYNC_CONFIRM;
	}
}

/* F could not be read: the whole take-out, then C with F empty. */
static void
read_failed(struct fd_offload *o, int rc)
{
	fprintf(stderr, "flowcutd: resync: CONN_READ_BRIEF: %s; every connection taken out "
		"instead\n", strerror(-rc));
	f_free(o);
	rc = take_out_whole(o);
	if (rc != 0) {
		sync_abort(o, "CONN_READ_RANGE", rc);
		return;
	}
	dump_begin(o);
}

static void
sync_start(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	struct fc_ans_table_stats ts = { 0 };
	struct fc_ans_cfg cfg = { 0 };
	uint32_t size;
	int rc;

	s->epoch++;
	s->again = false;
	s->t0_ns = off_now_ns(o);
	s->adopted0 = o->st.cut_adopted;
	s->intr = 0;
	off_settle(o);			/* no offload of this binding's in flight: all in by_fp */
	/*
	 * A ruleset change's job still clearing bits: this run's dump clears
	 * them instead (marks_stale); one judging what asked: this run's
	 * dump judges every state.
	 */
	off_rj_abandon(o);
	o->need_resync = false;		/* set again (off_lost_track) during the run: another */
	o->st.resyncs++;
	rc = off_call(o, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg));
	if (rc != 0) {
		sync_abort(o, "FW_CFG_PARAMS_GET", rc);
		return;
	}
	s->rev = cfg.fw_rev;
	rc = off_call(o, FC_CMD_TABLE_STATS_READ, NULL, 0, &ts, sizeof(ts));
	if (rc != 0) {
		read_failed(o, rc);
		return;
	}
	if (ts.conns == 0) {
		/* after a boot: nothing to reclaim, and no next hop programmed */
		fd_nhop_reset(o->nhops);
		dump_begin(o);
		return;
	}
	size = ts.capacity / OFF_SYNC_READS + (ts.capacity % OFF_SYNC_READS != 0);
	for (uint32_t i = 0; i < OFF_SYNC_READS; i++) {
		uint64_t first = (uint64_t)i * size, end = first + size;

		s->win[i] = (struct off_sync_win){ .o = o };
		s->win[i].next = first < ts.capacity ? (uint32_t)first : ts.capacity;
		s->win[i].end = end < ts.capacity ? (uint32_t)end : ts.capacity;
	}
	s->phase = OFF_SYNC_READ;
}

/* F: a read posted for every window not read through, then their answers. */
static void
read_step(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	unsigned int posted = 0;
	int rc = 0;

	for (unsigned int i = 0; i < OFF_SYNC_READS && rc == 0; i++) {
		struct off_sync_win *w = &s->win[i];
		struct fc_cmd_brief b = { .first = w->next, .end = w->end };

		if (w->next >= w->end)
			continue;
		w->rc = 0;
		rc = fd_cmds_post(&o->cmds, FC_CMD_CONN_READ_BRIEF, &b, sizeof(b), brief_done, w);
		posted += rc == 0;
	}
	if (fd_cmds_flush(&o->cmds, -1) != 0 && rc == 0)
		rc = -ETIMEDOUT;
	for (unsigned int i = 0; i < OFF_SYNC_READS && rc == 0; i++)
		rc = s->win[i].rc;
	if (rc != 0) {
		read_failed(o, rc);
		return;
	}
	if (posted == 0)
		dump_begin(o);
}

/* ---- C: conntrack's marked states ---- */

static void
on_state(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct fd_offload *o = arg;
	struct off_sync *s = &o->sync;
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	struct off_fconn *f;
	struct off_entry *e;
	struct fc_key k;
	uint64_t idle_s = 0;

	if (rc != 0)
		return;
	if (o->marks_stale) {	/* the old rules' bit, not a judgement */
		if (nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit)
			off_ct_unmark(o, ct);
		return;
	}
	off_orig_of(ct, &k);
	f = f_find(o, &k);
	if (f != NULL && !f->done)
		idle_s = idle_of(o, f->last_seen);
	e = off_find_state(o, ct);
	if (e != NULL) {
		e->seen = s->epoch;
		if (f != NULL && f->id == e->fp_id) {
			f->done = true;
			return;		/* both agree */
		}
		if (e->cut || e->born == s->epoch)
			return;		/* made since F was read, or dropping: as it is */
		/* the fast path lacks its connection, or another holds its tuple */
		off_forget(o, e);
	}
	if (f != NULL && !f->done && !f->dropping && f->fw_rev == s->rev) {
		/* a connection for its tuple nobody here knows: out, then offloaded anew */
		uint64_t id = f->id;

		f->done = true;
		rc = off_reclaim_idle(o, id, &idle_s);
		if (rc != 0 && rc != -ENOENT) {
			off_lost_track(o, "CONN_RECLAIM_FP of an unknown connection", rc);
			return;
		}
	}
	off_offload(o, ct);
	if (off_find_state(o, ct) != NULL)
		return;
	if (f != NULL && f->done && f->fw_rev == s->rev && !f->dropping && e == NULL)
		o->st.resync_taken_out++;	/* to the host: its offload did not go */
	/* on T_long and not offloaded: a flowcutd offloaded it, and it left unseen */
	if (nfct_attr_is_set(ct, ATTR_TIMEOUT) &&
	    nfct_get_attr_u32(ct, ATTR_TIMEOUT) > off_p(o, l4))
		(void)off_leave_tuple(o, ct, l4, idle_s, false);
}

static void
confirm_begin(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	struct off_entry **all;
	size_t n;

	if (s->dump_whole && o->marks_stale)
		o->marks_stale = false;
	s->phase = OFF_SYNC_CONFIRM;
	s->at = s->nids = 0;
	all = off_snapshot(o, &n);
	s->ids = calloc(n ? n : 1, sizeof(*s->ids));
	if (all == NULL || s->ids == NULL) {
		free(all);
		free(s->ids);
		s->ids = NULL;
		off_lost_track(o, "resync: the table's ids", -ENOMEM);
		return;
	}
	for (size_t i = 0; i < n; i++)
		s->ids[s->nids++] = all[i]->fp_id;
	free(all);
}

static void
dump_step(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	int rc = o->ct.dump_next(o->ct.ctx, OFF_SYNC_DATAGRAMS, on_state, o);

	if (rc > 0)
		return;
	if (rc == -EINTR && ++s->intr <= OFF_SYNC_INTR_MAX) {
		dump_begin(o);	/* the table changed under it: read again */
		return;
	}
	if (rc < 0) {
		fprintf(stderr, "flowcutd: resync: conntrack's dump: %s; the entries it did not "
			"find confirmed one by one\n", strerror(-rc));
		s->dump_whole = false;
	}
	confirm_begin(o);
}

/* ---- after the dump ---- */

static void
confirm_done(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct off_sync_post *p = arg;
	struct fd_offload *o = p->o;
	struct off_entry *e = off_find_fp(o, p->fp_id);

	if (e == NULL || e->cut)
		return;		/* gone (an event) or cut since */
	if (ct == NULL && rc == -ENOENT) {
		/* its state went and its DESTROY was lost: out */
		if (p->in_f) {
			rc = off_reclaim(o, e->fp_id);
			if (rc != 0 && rc != -ENOENT)
				off_lost_track(o, "CONN_RECLAIM_FP of a state gone", rc);
		}
		off_forget(o, e);
		o->st.removed++;
	} else if (ct == NULL) {
		fprintf(stderr, "flowcutd: resync: conntrack state %u: %s; kept as it is\n",
			e->ct_id, strerror(-rc));
	} else if (!p->in_f) {
		/* alive, and the fast path no longer has it (an AGED_OUT lost): idle unknown */
		(void)off_leave(o, e, 0, false);
		off_forget(o, e);
	}
}

/* B's entries the dump did not stamp: a GET each (posted), kept if alive. */
static void
confirm_step(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	unsigned int gets = 0;

	for (unsigned int looks = 0; s->at < s->nids && looks < OFF_SYNC_LOOKS &&
	     gets < OFF_SYNC_POSTS; looks++) {
		struct off_entry *e = off_find_fp(o, s->ids[s->at++]);
		struct nf_conntrack *t;
		struct off_fconn *f;
		bool in_f;

		if (e == NULL || e->born == s->epoch)
			continue;	/* gone since, or made during the run */
		f = f_find(o, &e->orig);
		in_f = f != NULL && f->id == e->fp_id;
		if (in_f)
			f->done = true;
		if (e->cut) {
			if (!in_f)
				off_forget(o, e);	/* aged out unseen: its state is dead */
			continue;
		}
		if (e->seen == s->epoch)
			continue;	/* the dump found it (and F, or it is new) */
		s->post[gets] = (struct off_sync_post){ .o = o, .fp_id = e->fp_id, .in_f = in_f };
		t = off_tuple(e);
		if (t != NULL && o->ct.get_post(o->ct.ctx, t, confirm_done, &s->post[gets]) == 0)
			gets++;
		if (t != NULL)
			nfct_destroy(t);
	}
	if (gets > 0)
		(void)o->ct.get_flush(o->ct.ctx);	/* each done ran, answered or failed */
	if (s->at == s->nids) {
		free(s->ids);
		s->ids = NULL;
		s->phase = OFF_SYNC_UNKNOWN;
		s->f_at = 0;
	}
}

static void
unknown_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct off_sync_post *p = dctx;
	struct fc_ans_reclaim a;

	p->rc = rc;
	if (rc == 0 && len >= sizeof(a)) {
		memcpy(&a, ans, sizeof(a));
		p->idle_s = off_idle_s(p->o, a.mf);
	}
}

/* F's connections in no entry, uncut, of this revision: reclaimed, their states leaving. */
static void
unknown_step(struct fd_offload *o)
{
	struct off_sync *s = &o->sync;
	unsigned int n = 0;

	/* creates in flight answered first: a connection just made is not unknown */
	(void)fd_cmds_flush(&o->cmds, -1);
	for (unsigned int looks = 0; s->f_at < s->fn && looks < OFF_SYNC_LOOKS &&
	     n < OFF_SYNC_POSTS; looks++) {
		struct off_fconn *f = &s->fa[s->f_at++];
		struct fc_cmd_conn_id id = { .id = f->id };

		if (f->done || f->dropping || f->fw_rev != s->rev || off_find_fp(o, f->id) != NULL)
			continue;
		f->done = true;
		s->post[n] = (struct off_sync_post){ .o = o, .fp_id = f->id, .key = f->key };
		if (fd_cmds_post(&o->cmds, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), unknown_done,
				 &s->post[n]) == 0)
			n++;
		else
			off_lost_track(o, "CONN_RECLAIM_FP of an unknown connection", -ENOBUFS);
	}
	/* every posted command finishes (answered or failed) before the next step */
	(void)fd_cmds_flush(&o->cmds, -1);
	for (unsigned int i = 0; i < n; i++) {
		struct off_sync_post *p = &s->post[i];

		if (p->rc == 0) {
			/* nobody's: counted taken out when its GET finds its state alive */
			off_orphan_leave(o, &p->key, p->idle_s, false, true);
		} else if (p->rc != -ENOENT) {	/* -ENOENT: gone already (a DESTROY's reclaim) */
			off_lost_track(o, "CONN_RECLAIM_FP of an unknown connection", p->rc);
		}
	}
	if (s->f_at == s->fn)
		sync_end(o);
}

/* ---- the face ---- */

void
fd_offload_resync(struct fd_offload *o)
{
	if (o->sync.phase != OFF_SYNC_IDLE) {
		o->sync.again = true;	/* what this run read may miss it: another follows */
		return;
	}
	sync_start(o);
}

bool
fd_offload_sync_step(struct fd_offload *o)
{
	switch (o->sync.phase) {
	case OFF_SYNC_IDLE:
		return false;
	case OFF_SYNC_READ:
		read_step(o);
		break;
	case OFF_SYNC_DUMP:
		dump_step(o);
		break;
	case OFF_SYNC_CONFIRM:
		confirm_step(o);
		break;
	case OFF_SYNC_UNKNOWN:
		unknown_step(o);
		break;
	}
	return o->sync.phase != OFF_SYNC_IDLE;
}

bool
fd_offload_resyncing(const struct fd_offload *o)
{
	return o->sync.phase != OFF_SYNC_IDLE || o->sync.again;
}

void
off_sync_finish(struct fd_offload *o)
{
	uint32_t epoch = o->sync.epoch;

	/* this run to its end (each step moves on); one asked for meanwhile is left to start */
	while (o->sync.epoch == epoch && fd_offload_sync_step(o))
		;
}

void
fd_offload_sync_finish(struct fd_offload *o)
{
	off_sync_finish(o);
}

void
off_sync_free(struct fd_offload *o)
{
	f_free(o);
	free(o->sync.ids);
	o->sync.ids = NULL;
	o->sync.phase = OFF_SYNC_IDLE;
}
