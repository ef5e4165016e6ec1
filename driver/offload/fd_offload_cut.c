/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_cut: the binding's table as the cut (fd_cut) sees it - views,
 * picks, marks, states taken out, connections made already dropping.  See
 * fd_offload_cut.h and fd_offload_priv.h.
 */
#include "fd_offload_cut.h"
#include "fd_offload_priv.h"

static void
view(const struct fd_offload *o, const struct off_entry *e, struct fd_offload_conn *out)
{
	*out = (struct fd_offload_conn){ .ct_id = e->ct_id, .fp_id = e->fp_id,
					 .action = e->action, .cut = e->cut,
					 .cut_by = e->cut_by, .family = e->orig.family,
					 .slot = e->self, .orig = e->orig };
	off_dst(o, e, 0, out->ends[0]);
	off_dst(o, e, 1, out->ends[1]);
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
	struct off_entry *e;
	uint32_t i = 0;
	size_t n = 0;

	if (got == NULL)
		return -ENOMEM;
	while ((e = off_next(o, &i)) != NULL) {
		if (n == o->nentries)
			break;
		if (cut ? !e->cut : !e->in_ct)
			continue;
		view(o, e, &got[n]);
		if (pick(arg, &got[n]))
			n++;
	}
	*out = got;
	return (long)n;
}

long
fd_offload_pick(struct fd_offload *o, enum fd_offload_among among, fd_offload_pick_fn *pick,
		void *arg, struct fd_offload_conn **out)
{
	return pick_among(o, among == FD_OFFLOAD_CUT, pick, arg, out);
}

void
fd_offload_settle(struct fd_offload *o)
{
	if (o->inflight != 0)
		off_settle(o);
}

int
fd_offload_find(struct fd_offload *o, enum fd_offload_by by, uint64_t key,
		const struct nf_conntrack *ct, struct fd_offload_conn *out, struct nf_conntrack **tuple)
{
	const struct off_entry *e;

	switch (by) {
	case FD_OFFLOAD_BY_CT:
		e = off_find_ct(o, (uint32_t)key, ct);
		if (e != NULL && e->pending)	/* on its way: not in the fast path yet */
			e = NULL;
		break;
	case FD_OFFLOAD_BY_FP:
		e = off_find_fp(o, key);
		break;
	case FD_OFFLOAD_BY_CUT_SLOT:
		e = key <= UINT32_MAX ? off_slot(o, (uint32_t)key) : NULL;
		if (e != NULL && !e->cut)
			e = NULL;
		break;
	default:
		return -EINVAL;
	}
	if (e == NULL)
		return -ENOENT;
	view(o, e, out);
	if (tuple && (*tuple = off_tuple(e)) == NULL)
		return -ENOMEM;
	return 0;
}

int
fd_offload_mark(struct fd_offload *o, uint64_t fp_id, enum fd_offload_mark mark, uint8_t by)
{
	struct off_entry *e = off_find_fp(o, fp_id);

	if (e == NULL)
		return -ENOENT;
	if (mark == FD_OFFLOAD_MARK_PASSED) {
		if (!e->cut)
			off_reclass(o, e, e->action, FC_VERDICT_CUT_THRU, false);
		e->passed = true;
		return 0;
	}
	/* cut: as fd_cut's drop made it: IPS by its verdict, FWD (or AUX) by its action */
	if (e->action == FC_ACTION_IPS)
		off_reclass(o, e, e->action, FC_VERDICT_DROP, true);
	else
		off_reclass(o, e, FC_ACTION_DROP, e->verdict, true);
	e->cut_by = by;
	return 0;
}

void
fd_offload_conns(const struct fd_offload *o, struct fd_offload_conns *out)
{
	*out = o->conns;
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
	if (e->pending) {
		e->after = OFF_AFTER_GONE;	/* its create's answer reclaims it */
		return 0;
	}
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
		off_free_entry(o, m->e);
	}
	free(m);
	return rc;
}
