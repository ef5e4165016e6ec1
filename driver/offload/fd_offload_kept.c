/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_kept: the state machine's own steps for cut connections -
 * kept dropping across a new revision (made again at it), and taken up
 * from the coprocessor when a flowcutd before this one cut them.  The
 * turn (fd_offload_turn.c) and the resync call it; it calls the tables
 * (fd_offload_table.c) and the commands, never a room above it.  See fd_offload_priv.h.
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
	struct off_entry *e = off_entry_new(o);
	uint8_t dst[2][16];

	if (e == NULL)
		return -ENOMEM;
	e->fp_id = ci->id;
	e->orig = ci->mf[0].key;
	e->orig.port = 0;
	e->nhop[0] = ci->mf[0].nhop;
	e->nhop[1] = ci->mf[1].nhop;
	e->action = ci->mf[0].action;
	e->verdict = ci->verdict & 3;
	/* its ends as the wire sees them, as off_prepare's: the server, the client */
	memcpy(dst[0], ci->mf[1].key.src, sizeof(dst[0]));
	memcpy(dst[1], ci->mf[0].key.src, sizeof(dst[1]));
	if (off_set_dst(o, e, (const uint8_t (*)[16])dst) != 0) {
		off_free_entry(o, e);
		return -ENOMEM;
	}
	e->cut = true;
	e->cut_by = FD_OFFLOAD_CUT_BY_UNKNOWN;	/* no trigger known: see fd_cut_release */
	e->held = true;
	if (off_index(o, e, false) != 0) {
		off_free_entry(o, e);
		return -ENOMEM;
	}
	off_count_in(o, e);
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
 * After a revision bump: the connections cut stay dropping.  Each cut one
 * (of the old revision: its next frame would go to the host) is read back
 * and made again at the new revision, dropping both ways, from what the
 * coprocessor held (keys, next hops, timeouts); the new one takes over the
 * old one's keys (a stale revision's keys are free to claim).  Reads, then
 * creations, posted in batches.  One that cannot be made again is
 * forgotten (the host's rule drops).  The others are the caller's to
 * forget, after this (so the cut ones are back to dropping first).
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
		off_reclass(o, e, FC_ACTION_DROP, FC_VERDICT_DROP, true);	/* as made again */
		/* no memory for its new place: forgotten; it drops on, unknown; a resync takes it up */
		(void)off_rekey_fp(o, e, r[i].new_id);
	}
	free(r);
}

