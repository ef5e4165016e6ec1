/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_rejudge: the rejudging job of a ruleset change, stepped by the
 * turn (fd_offload_work: off_rj_step) within its budget of updates.  Its
 * state, the updates posted this turn among it, is the binding's (o->rj).
 * Calls down only: the table, conntrack's I/O, the helpers of
 * fd_offload_priv.h.
 */
#include "fd_offload_priv.h"

/*
 * ---- The rejudging job (a ruleset change) ----
 *
 * The revision bump is at once (fd_offload_ruleset_changed: two commands,
 * and from the answer on nothing the old rules judged forwards, whatever
 * the size of the table), and so is the keeping of the cut connections.
 * The rest is a job of fd_offload_work, at most upd_budget
 * (FD_OFFLOAD_UPDATES_PER_TURN) posted updates a turn, flushed each turn:
 *  1. OFF_RJ_LEAVE: the old revision's uncut entries, taken out of the
 *     tables at the bump (rj_unlink_uncut: in memory, no call - as
 *     forgetting them was before), each state leaves in one update - P
 *     (idle unknown), the bit cleared, a TCP state's highest ACK
 *     forgotten.  A cut or a DESTROY meanwhile finds no entry, as before.
 *  2. OFF_RJ_DUMP: a dump of every state read incrementally
 *     (fd_ct_dump_start/_next, never held whole), FD_OFFLOAD_DUMP_PER_TURN
 *     datagrams a turn; each state with the bit has it cleared by a posted
 *     masked update.  Not the dump filtered by the bit, as the plan has
 *     it: the kernel fills a datagram with matching states only, and
 *     after the leaves few match, so one recv walked the whole table in
 *     the kernel (flowcut-bench ruleset, 100,000 offloaded: the last
 *     turn 19 ms, a tenth of the states' own cost, and ten times that at
 *     a million); unfiltered, a datagram is ~170 states, a turn's share
 *     bounded.  A datagram holds more states with the bit than are left
 *     of a turn's budget: the rest are carried (tuples) to the next
 *     turn, so no turn posts more than its budget.
 *  3. OFF_RJ_JUDGE: every bit of the old rules is cleared now, so a bit
 *     set is the new rules'.  A state that asked to be offloaded during 1
 *     and 2 (an event, the inspector, a waiting state's retry: make())
 *     could not be judged then - its bit could be either rules' - and was
 *     noted by key (`asked`, 48 B each); each is read again (GET) and
 *     judged now, FD_OFFLOAD_JUDGE_PER_TURN a turn.  Noted, not dropped:
 *     a state marked again by the new rules sends one mark event, and
 *     none after while its mark stays.
 * A dump that fails leaves bits uncleared: marks_stale, and the resync
 * (retried by fd_offload_work) clears what its dump finds, as before.  A
 * resync or a new ruleset change while the job runs: see there.
 */


static void
rj_done(void *arg, int rc)
{
	const struct off_rj_post *p = arg;

	if (rc == 0 && p->leave)
		p->o->st.left++;
	else if (rc != 0 && rc != -ENOENT)	/* gone: nothing to clear */
		fprintf(stderr, "flowcutd: conntrack state %u: %s after a ruleset change: %s\n",
			p->id, p->leave ? "leaving the fast path (P, the bit cleared)"
					: "clearing the mark bit", strerror(-rc));
}

/*
 * One update of the job posted on `tuple`: the bit cleared, and leaving
 * (`leave`: P, a TCP state loosened again) for an entry's state.  Takes
 * one of upd_budget.
 */
static void
rj_post(struct fd_offload *o, const struct nf_conntrack *tuple, uint8_t l4, bool leave)
{
	struct fd_ct_update u = { .what = FD_CT_UP_MARK, .mark = 0, .mask = o->cfg.mark_bit };
	struct off_rj_post *p = &o->rj.posted[o->rj.nposted];
	int rc;

	if (leave) {
		u.what |= FD_CT_UP_TIMEOUT | (l4 == IPPROTO_TCP ? FD_CT_UP_LOOSEN : 0);
		u.timeout = off_p(o, l4);
	}
	*p = (struct off_rj_post){ .o = o, .id = nfct_get_attr_u32(tuple, ATTR_ID), .leave = leave };
	o->upd_budget--;
	rc = o->ct.update_post(o->ct.ctx, tuple, &u, rj_done, p);
	if (rc == 0)
		o->rj.nposted++;
	else
		fprintf(stderr, "flowcutd: conntrack state %u: the update after a ruleset change "
			"not built: %s\n", p->id, strerror(-rc));
}

static void
rj_carry_clear(struct off_rejudge *rj)
{
	for (size_t i = 0; i < rj->ncarry; i++)
		nfct_destroy(rj->carry[i]);
	rj->ncarry = 0;
}

/*
 * The job over (or given up): what it holds let go - but with `keep`
 * (a new ruleset change starts it again) the entries still to leave and
 * the states that asked.
 */
void
off_rj_end(struct fd_offload *o, bool keep)
{
	struct off_rejudge *rj = &o->rj;

	rj_carry_clear(rj);
	if (!keep) {
		/* the resync's dump fixes their states up */
		for (; rj->leaving_at < rj->nleaving; rj->leaving_at++)
			off_free_entry(o, rj->leaving[rj->leaving_at]);
		free(rj->leaving);
		rj->leaving = NULL;
		rj->nleaving = rj->leaving_at = 0;
		free(rj->asked);
		rj->asked = NULL;
		rj->nasked = rj->asked_cap = rj->asked_next = 0;
	}
	rj->phase = OFF_RJ_IDLE;
}

/* A resync starts (fd_offload_sync.c): it takes over what a ruleset change's job has left. */
void
off_rj_abandon(struct fd_offload *o)
{
	if (off_rj_unmarking(o))
		o->marks_stale = true;
	off_rj_end(o, false);
}

/*
 * The old revision's uncut entries out of the tables at once (in memory:
 * no call), onto `leaving`: from now on their states are judged afresh,
 * a DESTROY or a cut finds no entry (their connections no longer forward),
 * and the job posts each one's leave.
 */
void
off_rj_unlink_uncut(struct fd_offload *o)
{
	struct off_rejudge *rj = &o->rj;
	struct off_entry *e;
	uint32_t at = 0;
	size_t n = rj->nleaving - rj->leaving_at;	/* kept from a change before (keep) */
	struct off_entry **l;

	if (n > 0)
		memmove(rj->leaving, rj->leaving + rj->leaving_at, n * sizeof(*rj->leaving));
	rj->nleaving = n;
	rj->leaving_at = 0;
	l = realloc(rj->leaving, (n + o->nentries + 1) * sizeof(*l));
	if (l == NULL) {
		/* left in the tables (the new revision stops them already): the resync takes stock */
		o->marks_stale = true;
		off_lost_track(o, "no memory for the leaves after a ruleset change", -ENOMEM);
		return;
	}
	rj->leaving = l;
	while ((e = off_next(o, &at)) != NULL) {
		if (e->cut)
			continue;	/* made again at the new revision: dropping on */
		off_unlink(o, e);	/* live, in no index: its leave posted by the job */
		rj->leaving[rj->nleaving++] = e;
	}
}

/* Given up: the bits left are the old rules', for the resync to clear. */
static void
rj_fail(struct fd_offload *o, const char *what, int rc)
{
	o->marks_stale = true;
	off_lost_track(o, what, rc);
	off_rj_end(o, false);
}

/* A state of the dump by the bit: its bit cleared now, or carried to the next turn. */
static void
rj_dumped(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct fd_offload *o = arg;
	struct off_rejudge *rj = &o->rj;
	struct nf_conntrack *t, **c;

	(void)rc;
	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit))
		return;		/* not the old rules' (any more) */
	if (o->upd_budget > 0) {
		rj_post(o, ct, nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO), false);
		return;
	}
	c = fc_grow(rj->carry, &rj->carry_cap, rj->ncarry, sizeof(*c), 64);
	if (c == NULL)
		goto lost;
	rj->carry = c;
	t = fd_ct_tuple(ct);
	if (t == NULL)
		goto lost;
	nfct_set_attr_u32(t, ATTR_ID, nfct_get_attr_u32(ct, ATTR_ID));
	rj->carry[rj->ncarry++] = t;
	return;
lost:	/* its bit stays: the resync clears it */
	o->marks_stale = true;
	off_lost_track(o, "no memory for the unmark after a ruleset change", -ENOMEM);
}

/* Phase 1, this turn's share: the old revision's uncut entries leave. */
static void
rj_leave_step(struct fd_offload *o)
{
	struct off_entry *e;

	while (o->upd_budget > 0 && o->rj.leaving_at < o->rj.nleaving) {
		struct nf_conntrack *t;

		e = o->rj.leaving[o->rj.leaving_at++];
		t = off_tuple(e);
		if (t != NULL) {
			rj_post(o, t, e->orig.proto, true);
			nfct_destroy(t);
		}	/* else no memory: on T_long, the resync's dump puts it right */
		off_free_entry(o, e);
	}
	if (o->rj.leaving_at == o->rj.nleaving) {
		int rc;

		/* the leaves sent first: the dump then finds none of their bits */
		if (o->rj.nposted > 0)
			(void)o->ct.update_flush(o->ct.ctx);	/* each answer's done said its error */
		o->rj.nposted = 0;
		rc = o->ct.dump_start(o->ct.ctx, 0, 0);	/* every state: see "The rejudging job" */

		if (rc != 0)
			rj_fail(o, "the conntrack dump by the bit after a ruleset change", rc);
		else
			o->rj.phase = OFF_RJ_DUMP;
	}
}

/* Phase 2, this turn's share: the carried states first, then the dump's next datagrams. */
static void
rj_dump_step(struct fd_offload *o)
{
	struct off_rejudge *rj = &o->rj;
	size_t k = 0;
	int rc = 1;

	for (; k < rj->ncarry && o->upd_budget > 0; k++) {
		rj_post(o, rj->carry[k], nfct_get_attr_u8(rj->carry[k], ATTR_ORIG_L4PROTO), false);
		nfct_destroy(rj->carry[k]);
	}
	if (k > 0)	/* (none carried: no array yet) */
		memmove(rj->carry, rj->carry + k, (rj->ncarry - k) * sizeof(*rj->carry));
	rj->ncarry -= k;
	for (unsigned int d = 0; d < FD_OFFLOAD_DUMP_PER_TURN && o->upd_budget > 0 &&
	     rj->phase == OFF_RJ_DUMP && (rc = o->ct.dump_next(o->ct.ctx, 1, rj_dumped, o)) > 0;
	     d++)
		;
	if (rc < 0)
		rj_fail(o, "the conntrack dump by the bit after a ruleset change", rc);
	else if (rc == 0 && rj->ncarry == 0 && rj->phase == OFF_RJ_DUMP)
		rj->phase = OFF_RJ_JUDGE;	/* once this turn's updates are flushed */
}

/* Phase 3, this turn's share: the states that asked meanwhile, judged by the new rules. */
static void
rj_judge_step(struct fd_offload *o)
{
	struct off_rejudge *rj = &o->rj;

	for (unsigned int k = 0; k < FD_OFFLOAD_JUDGE_PER_TURN && rj->asked_next < rj->nasked;
	     k++) {
		struct nf_conntrack *t = fd_ct_tuple_of_key(&rj->asked[rj->asked_next++]), *whole;

		if (t == NULL)
			continue;	/* no memory: it stays with the host until its next event */
		whole = o->ct.get(o->ct.ctx, t);
		nfct_destroy(t);
		if (whole == NULL)
			continue;	/* gone */
		off_offload(o, whole);
		nfct_destroy(whole);
	}
	if (rj->asked_next == rj->nasked)
		off_rj_end(o, false);
}

/* The job's share of this turn (fd_offload_work); its updates flushed before the turn ends. */
void
off_rj_step(struct fd_offload *o)
{
	o->rj.nposted = 0;
	if (o->rj.phase == OFF_RJ_LEAVE)
		rj_leave_step(o);
	if (o->rj.phase == OFF_RJ_DUMP)
		rj_dump_step(o);
	if (o->rj.nposted > 0)
		(void)o->ct.update_flush(o->ct.ctx);	/* each answer's done said its error */
	if (o->rj.phase == OFF_RJ_JUDGE)
		rj_judge_step(o);
}
