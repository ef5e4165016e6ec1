/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_table: the binding's offloaded connections, kept in two hash
 * tables of uthash (a well-kept header library; libc has no hash table
 * with deletion): by state (conntrack id and original tuple) and by
 * fast-path id.  A cut of 100,000 connections looks each up twice; libc's
 * tsearch() trees took a fifth of flowcutd's time there.  Also the small
 * helpers every room's commands use.  See fd_offload_priv.h.
 */
#include "fd_offload_priv.h"

#include "fd_clock.h"

/* The state's original tuple as a key (`ct` may be a tuple alone). */
void
off_orig_of(const struct nf_conntrack *ct, struct fc_key *k)
{
	fd_policy_key(ct, FD_DIR_ORIG, 0, k);
}

int
off_call(struct fd_offload *o, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	return fd_cmds_call(&o->cmds, op, p, len, ans, cap);
}

/*
 * CONN_RECLAIM_FP: the connection out of the fast path.  Its answer (the
 * final counts) must have room, or the link calls the answer too long
 * although the command took effect.
 */
int
off_reclaim_idle(struct fd_offload *o, uint64_t fp_id, uint64_t *idle_s)
{
	struct fc_cmd_conn_id id = { .id = fp_id };
	struct fc_ans_reclaim ans = { 0 };
	int rc = off_call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), &ans, sizeof(ans));

	*idle_s = rc == 0 ? off_idle_s(o, ans.mf) : 0;
	return rc;
}

int
off_reclaim(struct fd_offload *o, uint64_t fp_id)
{
	uint64_t idle_s;

	return off_reclaim_idle(o, fp_id, &idle_s);
}

uint64_t
off_now_ns(const struct fd_offload *o)
{
	return o->cfg.now_ns != NULL ? o->cfg.now_ns() : fd_clock_ns();
}

uint64_t
off_idle_s(const struct fd_offload *o, const struct fc_mflow_stats st[2])
{
	uint64_t seen = st[0].last_seen > st[1].last_seen ? st[0].last_seen : st[1].last_seen;
	uint64_t now = off_now_ns(o);

	return seen == 0 || seen >= now ? 0 : (now - seen) / 1000000000u;
}

/* ---- the extension FIFO (see fd_offload_work) ---- */

void
off_ext_add(struct fd_offload *o, struct off_entry *e, uint64_t due_ms)
{
	off_ext_del(o, e);
	e->due_ms = due_ms;
	DL_APPEND2(o->ext, e, ext_prev, ext_next);
	e->in_ext = true;
}

void
off_ext_del(struct fd_offload *o, struct off_entry *e)
{
	if (!e->in_ext)
		return;
	DL_DELETE2(o->ext, e, ext_prev, ext_next);
	e->in_ext = false;
}

/* ---- the table of offloaded connections ---- */

/* The entry of state `ct_id` whose original tuple `ct` carries. */
struct off_entry *
off_find_ct(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct off_entry k, *e;

	memset(&k, 0, sizeof(k));
	off_orig_of(ct, &k.orig);
	k.ct_id = ct_id;
	HASH_FIND(hh_ct, o->by_ct, &k.orig, CT_KEY_LEN, e);
	return e;
}

struct off_entry *
off_find_state(struct fd_offload *o, const struct nf_conntrack *ct)
{
	return off_find_ct(o, nfct_get_attr_u32(ct, ATTR_ID), ct);
}

struct off_entry *
off_find_fp(struct fd_offload *o, uint64_t fp_id)
{
	struct off_entry *e;

	HASH_FIND(hh_fp, o->by_fp, &fp_id, sizeof(fp_id), e);
	return e;
}

/*
 * Puts an entry in by_fp, and in by_ct too when `by_ct` (in_ct set): all
 * or nothing.  0, or -ENOMEM (a table had no room: the entry is in
 * neither of those it was to join).  nentries is the caller's.
 */
int
off_index(struct fd_offload *o, struct off_entry *e, bool by_ct)
{
	e->oom = false;
	e->born = o->sync.epoch;	/* made during a reconcile: no difference of its */
	if (by_ct) {
		e->in_ct = true;
		HASH_ADD(hh_ct, o->by_ct, orig, CT_KEY_LEN, e);
		if (e->oom) {
			e->in_ct = false;
			return -ENOMEM;
		}
	}
	HASH_ADD(hh_fp, o->by_fp, fp_id, sizeof(e->fp_id), e);
	if (e->oom) {
		if (by_ct) {
			HASH_DELETE(hh_ct, o->by_ct, e);
			e->in_ct = false;
		}
		return -ENOMEM;
	}
	return 0;
}

/* An entry out of by_fp already: out of by_ct and the FIFO too, no longer counted. */
static void
unlink_unindexed(struct fd_offload *o, struct off_entry *e)
{
	if (e->in_ct)
		HASH_DELETE(hh_ct, o->by_ct, e);
	e->in_ct = false;
	off_ext_del(o, e);
	o->nentries--;
}

/* An entry out of by_fp already: unlinked, and freed. */
static void
forget_unindexed(struct fd_offload *o, struct off_entry *e)
{
	unlink_unindexed(o, e);
	off_free_entry(e);
}

void
off_unlink(struct fd_offload *o, struct off_entry *e)
{
	off_cursor_skip(o, e);
	HASH_DELETE(hh_fp, o->by_fp, e);
	unlink_unindexed(o, e);
}

void
off_cursor_skip(struct fd_offload *o, const struct off_entry *e)
{
	for (unsigned int c = 0; c < OFF_CURSORS; c++)
		if (o->cursor[c] == e)
			o->cursor[c] = e->hh_fp.next;
}

void
off_forget(struct fd_offload *o, struct off_entry *e)
{
	off_unlink(o, e);
	off_free_entry(e);
}

int
off_rekey_fp(struct fd_offload *o, struct off_entry *e, uint64_t fp_id)
{
	off_cursor_skip(o, e);	/* it moves to the end */
	HASH_DELETE(hh_fp, o->by_fp, e);
	e->fp_id = fp_id;
	if (off_index(o, e, false) == 0)
		return 0;
	forget_unindexed(o, e);
	return -ENOMEM;
}

void
off_free_entry(void *p)
{
	struct off_entry *e = p;

	nfct_destroy(e->tuple);
	free(e);
}

/* Forgets every entry (the fast path is being emptied or was). */
void
off_forget_all(struct fd_offload *o)
{
	struct off_entry *e, *next;

	/* every entry is in by_fp; a cut one whose state died is in by_ct no more */
	HASH_CLEAR(hh_ct, o->by_ct);
	o->ext = NULL;
	memset(o->cursor, 0, sizeof(o->cursor));
	HASH_ITER(hh_fp, o->by_fp, e, next) {
		HASH_DELETE(hh_fp, o->by_fp, e);
		off_free_entry(e);
	}
	o->nentries = 0;
}

/*
 * Every offloaded connection, in an array of its own (the caller frees
 * it): what is done to each may change the tables, which an iteration forbids.
 * NULL when there is no memory.
 */
struct off_entry **
off_snapshot(const struct fd_offload *o, size_t *n)
{
	struct off_entry **all = calloc(o->nentries ? o->nentries : 1, sizeof(*all)), *e, *next;

	*n = 0;
	if (all == NULL)
		return NULL;
	/* by_fp: cut entries may have left by_ct */
	HASH_ITER(hh_fp, o->by_fp, e, next)
		if (*n < o->nentries)
			all[(*n)++] = e;
	return all;
}

/* Forgets every entry but the cut ones a resync found held (their mark cleared for the next). */
void
off_forget_uncut(struct fd_offload *o)
{
	size_t n;
	struct off_entry **all = off_snapshot(o, &n);

	if (all == NULL) {
		off_forget_all(o);	/* no memory: the cut ones go too (the host's rule drops) */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (all[i]->cut && all[i]->held)
			all[i]->held = false;
		else
			off_forget(o, all[i]);
	}
	free(all);
}
