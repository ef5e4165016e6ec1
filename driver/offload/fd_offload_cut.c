/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_cut: the binding's table as the cut (fd_cut) sees it - views,
 * picks, marks, states taken out, connections made already dropping - and
 * the cut connections kept: made again at each new revision, and taken up
 * from the coprocessor when a flowcutd before this one cut them.  See
 * fd_offload.h and fd_offload_priv.h.
 */
#include "fd_offload_priv.h"

/* Both microflows drop: action DROP, or IPS with the verdict DROP (a cut's doing alone). */
bool
off_dropping(const struct fc_conn_info *ci)
{
	for (int d = 0; d < 2; d++)
		if (ci->mf[d].action != FC_ACTION_DROP &&
		    (ci->mf[d].action != FC_ACTION_IPS || ci->verdict != FC_VERDICT_DROP))
			return false;
	return ci->state == FC_CONN_VALID;
}

/*
 * A dropping connection a resync found that this binding did not make: a
 * flowcutd before this one cut it (nothing else sets DROP), and its state
 * was killed then.  Taken up as cut and held, it drops on (a flood's
 * sender is still sending), is made again at each new revision, and is
 * forgotten when it ages out, as any cut connection.  0 or -ENOMEM.
 */
int
off_adopt_cut(struct fd_offload *o, const struct fc_conn_info *ci)
{
	struct off_entry *e = calloc(1, sizeof(*e));

	if (e == NULL || (e->tuple = fd_ct_tuple_of_key(&ci->mf[0].key)) == NULL) {
		free(e);
		return -ENOMEM;
	}
	e->fp_id = ci->id;
	e->orig = ci->mf[0].key;
	e->orig.port = 0;
	e->l4proto = ci->mf[0].key.proto;
	e->family = ci->mf[0].key.family;
	e->nhop[0] = ci->mf[0].nhop;
	e->nhop[1] = ci->mf[1].nhop;
	e->action = ci->mf[0].action;
	/* its ends as the wire sees them, as off_prepare's: the server, the client */
	memcpy(e->dst[0], ci->mf[1].key.src, sizeof(e->dst[0]));
	memcpy(e->dst[1], ci->mf[0].key.src, sizeof(e->dst[1]));
	e->cut = true;
	e->cut_by = FD_OFFLOAD_CUT_BY_UNKNOWN;	/* no trigger known: see fd_cut_release */
	e->held = true;
	e->oom = false;
	HASH_ADD(hh_fp, o->by_fp, fp_id, sizeof(e->fp_id), e);
	if (e->oom) {
		off_free_entry(e);
		return -ENOMEM;
	}
	o->nentries++;
	o->st.cut_adopted++;
	return 0;
}

/* One cut connection being made again at a new revision. */
struct remake {
	uint64_t old_id, new_id;
	int rc;				/* of the step in flight */
	struct fc_conn_info info;	/* what the coprocessor held */
};

static void
remake_read(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct remake *r = dctx;

	r->rc = rc != 0 ? rc : len < sizeof(r->info) ? -EBADMSG : 0;
	if (r->rc == 0)
		memcpy(&r->info, ans, sizeof(r->info));
}

static void
remake_made(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct remake *r = dctx;

	r->rc = rc != 0 ? rc : len < sizeof(r->new_id) ? -EBADMSG : 0;
	if (r->rc == 0)
		memcpy(&r->new_id, ans, sizeof(r->new_id));
}

/*
 * The connections not cut, forgotten after a revision bump: their TCP
 * states' highest ACKs first (off_ct_tcp_fix_on_leave), as they come back
 * to the host.  Without memory for the list, everything is forgotten.
 */
static void
forget_uncut(struct fd_offload *o)
{
	size_t n;
	struct off_entry **all = off_snapshot(o, &n);

	if (all == NULL) {
		off_forget_all(o);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!all[i]->cut) {
			off_ct_tcp_fix_on_leave(o, all[i]);
			off_forget(o, all[i]);
		}
	free(all);
}

/*
 * After a revision bump: the connections cut stay dropping.  Each cut one
 * (of the old revision: its next frame would go to the host) is read back
 * and made again at the new revision, dropping both ways, from what the
 * coprocessor held (keys, next hops, timeouts); the new one takes over the
 * old one's keys (a stale revision's keys are free to claim).  Reads, then
 * creations, posted in batches.  Then the others are forgotten: their
 * frames find the old revision and go to the host, whose new rules judge
 * them (done last, so the cut ones are back to dropping first).
 * One that cannot be made again is forgotten too (the host's rule drops).
 */
void
off_keep_cut(struct fd_offload *o)
{
	size_t n, m = 0;
	struct off_entry **all = off_snapshot(o, &n);
	struct remake *r = all ? calloc(n ? n : 1, sizeof(*r)) : NULL;

	if (r == NULL) {
		free(all);
		off_forget_all(o);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (all[i]->cut)
			r[m++].old_id = all[i]->fp_id;
	free(all);	/* from here on, entries by their ids: completions may change the tables */
	for (size_t i = 0; i < m; i++) {
		struct fc_cmd_conn_id id = { .id = r[i].old_id };

		r[i].rc = fd_cmds_post(&o->cmds, FC_CMD_CONN_READ_BY_ID, &id, sizeof(id),
				       remake_read, &r[i]);
	}
	(void)fd_cmds_flush(&o->cmds, -1);
	for (size_t i = 0; i < m; i++) {
		struct fc_cmd_flow_create c = { .verdict = FC_VERDICT_DROP };

		if (r[i].rc != 0)
			continue;
		for (unsigned int d = 0; d < 2; d++) {
			c.mf[d].key = r[i].info.mf[d].key;
			c.mf[d].nhop = r[i].info.mf[d].nhop;
			c.mf[d].action = FC_ACTION_DROP;
			c.mf[d].timeout_s = r[i].info.mf[d].timeout_s;
		}
		r[i].rc = fd_cmds_post(&o->cmds, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), remake_made,
				       &r[i]);
	}
	(void)fd_cmds_flush(&o->cmds, -1);
	for (size_t i = 0; i < m; i++) {
		struct off_entry *e = off_find_fp(o, r[i].old_id);

		if (e == NULL)
			continue;
		if (r[i].rc != 0) {
			fprintf(stderr, "flowcutd: cut connection %" PRIu64 " not kept across the "
				"ruleset change: %s; the host's rule drops what comes\n", r[i].old_id,
				strerror(-r[i].rc));
			off_forget(o, e);
			continue;
		}
		HASH_DELETE(hh_fp, o->by_fp, e);
		e->fp_id = r[i].new_id;
		e->action = FC_ACTION_DROP;
		e->oom = false;
		HASH_ADD(hh_fp, o->by_fp, fp_id, sizeof(e->fp_id), e);
		if (e->oom) {
			/* no memory for its place: it drops on, unknown; a resync takes it up */
			if (e->in_ct)
				HASH_DELETE(hh_ct, o->by_ct, e);
			off_free_entry(e);
			o->nentries--;
		}
	}
	free(r);
	forget_uncut(o);
}

/* ---- the table, as the cut sees it ---- */

static void
view(const struct off_entry *e, struct fd_offload_conn *out)
{
	*out = (struct fd_offload_conn){ .ct_id = e->ct_id, .fp_id = e->fp_id,
					 .action = e->action, .cut = e->cut,
					 .cut_by = e->cut_by, .family = e->family };
	memcpy(out->ends, e->dst, sizeof(out->ends));
}

/*
 * The entries `pick` takes, viewed: the live ones (in_ct) or the cut ones
 * (live or not: a cut one's state is dead once killed).  by_fp holds them
 * all, by_ct only the live.
 */
static long
pick_among(struct fd_offload *o, bool cut, fd_offload_pick_fn *pick, void *arg,
	   struct fd_offload_conn **out)
{
	struct fd_offload_conn *got = calloc(o->nentries ? o->nentries : 1, sizeof(*got));
	struct off_entry *e, *next;
	size_t n = 0;

	if (got == NULL)
		return -ENOMEM;
	HASH_ITER(hh_fp, o->by_fp, e, next) {
		if (n == o->nentries)
			break;
		if (cut ? !e->cut : !e->in_ct)
			continue;
		view(e, &got[n]);
		if (pick(arg, &got[n]))
			n++;
	}
	*out = got;
	return (long)n;
}

long
fd_offload_pick(struct fd_offload *o, fd_offload_pick_fn *pick, void *arg,
		struct fd_offload_conn **out)
{
	return pick_among(o, false, pick, arg, out);
}

long
fd_offload_pick_cut(struct fd_offload *o, fd_offload_pick_fn *pick, void *arg,
		    struct fd_offload_conn **out)
{
	return pick_among(o, true, pick, arg, out);
}

int
fd_offload_find_ct(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct,
		   struct fd_offload_conn *out)
{
	const struct off_entry *e = off_find_ct(o, ct_id, ct);

	if (e == NULL)
		return -ENOENT;
	view(e, out);
	return 0;
}

int
fd_offload_find_fp(struct fd_offload *o, uint64_t fp_id, struct fd_offload_conn *out,
		   struct nf_conntrack **tuple)
{
	const struct off_entry *e = off_find_fp(o, fp_id);

	if (e == NULL)
		return -ENOENT;
	view(e, out);
	if (tuple && (*tuple = fd_ct_tuple(e->tuple)) == NULL)
		return -ENOMEM;
	return 0;
}

int
fd_offload_mark_cut(struct fd_offload *o, uint64_t fp_id, uint8_t by)
{
	struct off_entry *e = off_find_fp(o, fp_id);

	if (e == NULL)
		return -ENOENT;
	e->cut = true;
	e->cut_by = by;
	return 0;
}

/* One release in flight: its reclaim's answer. */
struct release {
	uint64_t fp_id;
	int rc;
};

static void
release_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	(void)ans, (void)len;
	((struct release *)dctx)->rc = rc;
}

long
fd_offload_release(struct fd_offload *o, const uint64_t *fp_ids, size_t n)
{
	struct release *r = calloc(n ? n : 1, sizeof(*r));
	long released = 0;
	size_t m = 0;

	if (r == NULL) {
		fprintf(stderr, "flowcutd: release of %zu cut connections: no memory; they stay "
			"dropping\n", n);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const struct off_entry *e = off_find_fp(o, fp_ids[i]);
		struct fc_cmd_conn_id id = { .id = fp_ids[i] };

		if (e == NULL || !e->cut)
			continue;
		r[m].fp_id = fp_ids[i];
		r[m].rc = fd_cmds_post(&o->cmds, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id),
				       release_done, &r[m]);
		m++;
	}
	(void)fd_cmds_flush(&o->cmds, -1);	/* each answered, or failed at its deadline */
	for (size_t i = 0; i < m; i++) {
		struct off_entry *e = off_find_fp(o, r[i].fp_id);

		if (r[i].rc != 0 && r[i].rc != -ENOENT) {
			/* still dropping, or not known: the fast path taken stock of */
			off_lost_track(o, "CONN_RECLAIM_FP of a cut connection released", r[i].rc);
			continue;
		}
		if (e != NULL)
			off_forget(o, e);
		o->st.removed++;
		released++;
	}
	free(r);
	return released;
}

int
fd_offload_take_out(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct off_entry *e = off_find_ct(o, ct_id, ct);
	int rc;

	if (e == NULL)
		return -ENOENT;
	rc = off_reclaim(o, e->fp_id);
	if (rc != 0 && rc != -ENOENT) {
		off_lost_track(o, "CONN_RECLAIM_FP of a connection cut", rc);
		return rc;
	}
	off_forget(o, e);
	o->st.removed++;
	return 0;
}

struct made {
	struct fd_offload *o;
	struct off_entry *e;
	fd_offload_made_fn *done;
	void *dctx;
};

static void
made_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct made *m = dctx;
	struct fc_ans_conn_id a = { 0 };

	if (rc == 0 && len >= sizeof(a))
		memcpy(&a, ans, sizeof(a));
	else if (rc == 0)
		rc = -EBADMSG;	/* not an answer of FLOW_CREATE_FP: take stock again */
	rc = off_enter(m->o, m->e, rc, a.id);
	m->done(m->dctx, rc, a.id);
	free(m);
}

int
fd_offload_post_create_cut(struct fd_offload *o, const struct nf_conntrack *ct, uint8_t by,
			   fd_offload_made_fn *done, void *dctx)
{
	struct fc_cmd_flow_create c;
	struct made *m = calloc(1, sizeof(*m));
	int rc;

	if (m == NULL)
		return -ENOMEM;
	rc = off_prepare(o, ct, true, &c, &m->e);
	if (rc == 0) {
		m->e->cut_by = by;
		m->o = o;
		m->done = done;
		m->dctx = dctx;
		rc = fd_cmds_post(&o->cmds, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), made_done, m);
		if (rc == 0)
			return 0;
		if (off_no_answer(rc))
			off_lost_track(o, "FLOW_CREATE_FP", rc);
		off_free_entry(m->e);
	}
	free(m);
	return rc;
}
