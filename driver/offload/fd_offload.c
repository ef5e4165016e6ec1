/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload: the verbs the turn (fd_offload_turn.c) and the jobs share: a
 * state leaves the fast path (P - idle, the bit cleared, a TCP state's
 * fix-up; an orphan's read by a GET first), one state's offload posted and
 * entered, the batches flushed and settled, the front ports' MTUs.  Calls
 * down only: fd_offload_prepare.c, the table, conntrack's I/O.  The rooms
 * and who calls whom: driver/offload/README.md.
 */
#include "fd_offload_priv.h"

#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

/* ---- conntrack ---- */

/* Takes our bit off a state's mark: it must pass the rules again to come back. */
void
off_ct_unmark(struct fd_offload *o, const struct nf_conntrack *tuple)
{
	int rc = o->ct.mark(o->ct.ctx, tuple, 0, o->cfg.mark_bit);

	if (rc != 0 && rc != -ENOENT)	/* gone: nothing to unmark */
		fprintf(stderr, "flowcutd: conntrack state %u: clearing mark bit 0x%08x: %s\n",
			nfct_get_attr_u32(tuple, ATTR_ID), o->cfg.mark_bit, strerror(-rc));
}

/*
 * A TCP state whose segments the host stops seeing: conntrack's window
 * tracking (td_end, td_maxend, td_maxack per direction) falls behind the
 * moment the fast path takes the connection, and when the connection comes
 * back to the host (a FIN, a give-back, a new firewall revision, an idle
 * timeout, a restart) its segments would be called INVALID and dropped by
 * any ruleset's `ct state invalid drop`.  So, as the kernel's own flowtable
 * does for the states it offloads (nft_flow_offload.c sets
 * IP_CT_TCP_FLAG_BE_LIBERAL on both directions; flow_offload_fixup_tcp()
 * clears IP_CT_TCP_FLAG_MAXACK_SET when a flow leaves), the state is made
 * liberal in both directions - out-of-window segments are accepted, the
 * rest of the tracking (states, closes) goes on - and its stale "highest
 * ACK seen" is forgotten, or a valid RST would be taken for an old one.
 * Only the offloaded states: the sysctl nf_conntrack_tcp_be_liberal would
 * loosen every state of the host.  Called before the connection is
 * offloaded (no moment where the state is behind and strict) and again
 * when it leaves (leave_state: the ACK seen last is stale by then).
 *
 * Leaving, the state's timeout goes back from T_long to P - idle
 * (flow_offload_fixup_ct, with the coprocessor's real idle time in place
 * of the kernel's guess): it dies at last_seen + P, as if the host had
 * seen every frame.  `unmark`: the bit first, so only the rules bring it
 * back.  One posted update (fd_ct_update_post: the timeout, the bit, the
 * loosen that forgets the highest ACK, in one message), sent at the next
 * off_flush; its ack counts `left`.  0 (posted), or the post's error
 * (said).
 */
struct leaving {
	struct fd_offload *o;
	uint32_t id, p;
	uint64_t idle_s;
};

static void
left_done(void *arg, int rc)
{
	struct leaving *l = arg;

	l->o->inflight--;
	if (rc == 0)
		l->o->st.left++;
	else if (rc != -ENOENT)	/* gone: nothing to fix */
		/* it lives on T_long: at most a day more; a later flowcutd's resync fixes it */
		fprintf(stderr, "flowcutd: conntrack state %u: its timeout back to %u - %" PRIu64
			" s on leaving the fast path: %s\n", l->id, l->p, l->idle_s, strerror(-rc));
	free(l);
}

static int
leave_state(struct fd_offload *o, const struct nf_conntrack *tuple, uint8_t l4proto,
	    uint64_t idle_s, bool unmark)
{
	uint32_t p = off_p(o, l4proto), id = nfct_get_attr_u32(tuple, ATTR_ID);
	struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT,
				  .timeout = idle_s < p ? p - (uint32_t)idle_s : 0 };
	struct leaving *l = malloc(sizeof(*l));
	int rc;

	if (l4proto == IPPROTO_TCP)
		u.what |= FD_CT_UP_LOOSEN;
	if (unmark) {
		u.what |= FD_CT_UP_MARK;
		u.mask = o->cfg.mark_bit;
	}
	if (l == NULL) {
		fprintf(stderr, "flowcutd: conntrack state %u: no memory to set its timeout back to "
			"%u s on leaving the fast path\n", id, u.timeout);
		return -ENOMEM;
	}
	*l = (struct leaving){ .o = o, .id = id, .p = p, .idle_s = idle_s };
	o->inflight++;
	rc = o->ct.update_post(o->ct.ctx, tuple, &u, left_done, l);
	if (rc != 0) {
		o->inflight--;
		free(l);
		fprintf(stderr, "flowcutd: conntrack state %u: its timeout back to %u s on leaving "
			"the fast path: %s\n", id, u.timeout, strerror(-rc));
	}
	return rc;
}

/* leave_state of an entry's state (its tuple rebuilt: off_tuple). */
static int
leave_entry(struct fd_offload *o, const struct off_entry *e, uint64_t idle_s, bool unmark)
{
	struct nf_conntrack *t = off_tuple(e);
	int rc;

	if (t == NULL) {
		fprintf(stderr, "flowcutd: conntrack state %u: no memory to set its timeout back "
			"on leaving the fast path\n", e->ct_id);
		return -ENOMEM;
	}
	rc = leave_state(o, t, e->orig.proto, idle_s, unmark);
	nfct_destroy(t);
	return rc;
}

/* An entry's state leaves the fast path, `idle_s` idle (0: unknown): see leave_state. */
int
off_leave(struct fd_offload *o, const struct off_entry *e, uint64_t idle_s, bool unmark)
{
	if (e->cut)
		return 0;	/* its state was killed */
	return leave_entry(o, e, idle_s, unmark);
}

/*
 * A connection this binding has no entry for left the fast path (an
 * orphan: a flowcutd before's), its original key `k`: its state, if it
 * lives, is on T_long (timeout > P) and no entry of ours holds it (an old
 * event must not shorten a connection offloaded anew), is fixed up.  The
 * state is read by a posted GET (off_flush sends it), judged in its
 * answer; `taken_out`: a resync's, counted in resync_taken_out when the
 * state lives.
 */
struct orphan {
	struct fd_offload *o;
	uint64_t idle_s;
	bool unmark, taken_out;
};

static void
orphan_got(void *arg, const struct nf_conntrack *whole, int rc)
{
	struct orphan *r = arg;
	struct fd_offload *o = r->o;

	(void)rc;	/* no state: gone, nothing to fix */
	o->inflight--;
	if (whole != NULL) {
		uint8_t l4 = nfct_get_attr_u8(whole, ATTR_ORIG_L4PROTO);

		o->st.resync_taken_out += r->taken_out;
		if (nfct_attr_is_set(whole, ATTR_TIMEOUT) &&
		    nfct_get_attr_u32(whole, ATTR_TIMEOUT) > off_p(o, l4) &&
		    off_find_state(o, whole) == NULL)
			(void)leave_state(o, whole, l4, r->idle_s, r->unmark);
	}
	free(r);
}

static void
orphan_leave(struct fd_offload *o, const struct fc_key *k, uint64_t idle_s, bool unmark,
	     bool taken_out)
{
	struct nf_conntrack *t = fd_ct_tuple_of_key(k);
	struct orphan *r = malloc(sizeof(*r));

	if (t != NULL && r != NULL) {
		*r = (struct orphan){ .o = o, .idle_s = idle_s, .unmark = unmark,
				      .taken_out = taken_out };
		o->inflight++;
		if (o->ct.get_post(o->ct.ctx, t, orphan_got, r) == 0)
			r = NULL;
		else
			o->inflight--;
	}
	if (r != NULL || t == NULL)	/* left on T_long: a later resync fixes it up */
		fprintf(stderr, "flowcutd: a connection left the fast path unknown: its state's "
			"timeout not looked at\n");
	free(r);
	if (t != NULL)
		nfct_destroy(t);
}

int
off_leave_tuple(struct fd_offload *o, const struct nf_conntrack *tuple, uint8_t l4proto,
		uint64_t idle_s, bool unmark)
{
	return leave_state(o, tuple, l4proto, idle_s, unmark);
}

void
off_orphan_leave(struct fd_offload *o, const struct fc_key *k, uint64_t idle_s, bool unmark,
		 bool taken_out)
{
	orphan_leave(o, k, idle_s, unmark, taken_out);
}

/* ---- one state into the fast path ---- */

/*
 * FLOW_CREATE_FP answered `rc` (the id in `id`): the prepared entry goes
 * in the table, or is freed.  0, the command's rc, or -ENOMEM (the
 * connection could not be tracked: out again).
 */
int
off_enter(struct fd_offload *o, struct off_entry *e, int rc, uint64_t id)
{
	if (rc != 0) {
		o->st.refused++;
		/* no answer is not "no": it may still be made - take stock again */
		if (off_no_answer(rc))
			off_lost_track(o, "FLOW_CREATE_FP", rc);
		if (e->on_long)	/* never offloaded: P again, the bit kept */
			(void)leave_entry(o, e, 0, false);
		off_free_entry(o, e);
		return rc;
	}
	e->fp_id = id;
	/* a made one is in by_ct since its post (make): by_fp only, no remove and add again */
	if (off_index(o, e, !e->in_ct) != 0) {
		/* untracked it must not live: out again, and take stock */
		off_unindex_ct(o, e);
		if (e->on_long)
			(void)leave_entry(o, e, 0, false);
		off_free_entry(o, e);
		rc = off_reclaim(o, id);
		if (rc != 0)
			off_lost_track(o, "CONN_RECLAIM_FP of an untracked connection", rc);
		return -ENOMEM;
	}
	off_count_in(o, e);
	if (e->cut)
		return 0;
	off_ext_add(o, e, off_now_ns(o) / 1000000u + OFF_EXTEND_MS);
	o->st.offloaded++;
	o->st.offloaded_at_pass += e->passed;
	return 0;
}

/* A state asked to be offloaded while the old rules' bits are being cleared: noted by key. */
static void
rj_ask(struct fd_offload *o, const struct nf_conntrack *ct)
{
	struct off_rejudge *rj = &o->rj;

	struct fc_key *a = fc_grow(rj->asked, &rj->asked_cap, rj->nasked, sizeof(*a), 256);

	if (a == NULL) {
		/* it stays with the host until its next event */
		fprintf(stderr, "flowcutd: conntrack state %u: no memory to judge it after "
			"the ruleset change (%zu waiting)\n", nfct_get_attr_u32(ct, ATTR_ID),
			rj->nasked);
		return;
	}
	rj->asked = a;
	off_orig_of(ct, &rj->asked[rj->nasked++]);
}

/*
 * ---- Offloads in batches ----
 *
 * One offload, nothing waited for (make):
 *  1. judged (off_prepare): from its event as it came, or from a posted
 *     GET's answer (event_update); the entry goes in by_ct at once,
 *     `pending` (no fp_id, not in by_fp, not counted), so a duplicate
 *     event finds it and a DESTROY marks it;
 *  2. one posted conntrack update, the TCP loosen and T_long in one
 *     message (fd_ct_update_post), sent with the batch at off_flush;
 *  3. once the update batch is sent, FLOW_CREATE_FP posted (fd_cmds_post),
 *     sent at off_flush (or when the command client's batch fills),
 *     answered in a later turn's fd_cmdq_poll.  No ack an update
 *     (fd_ct.h): conntrack applies the batch inside its sendmsg and
 *     queues an error for each update that failed, nothing for one that
 *     worked; the batch's last message alone is acked, so at that ack
 *     every error is read, and update_done runs with 0 or the error in
 *     the same off_flush, before any create of the batch is posted.  An
 *     error lost (ENOBUFS) is not guessed at: fd_ct sends the batch's
 *     updates again one by one, acked (idempotent), and update_done gets
 *     each one's real answer;
 *  4. at its answer, in the tables (off_enter), or: refused or no answer,
 *     the state's timeout goes back to P (a leave fix-up, idle 0, the bit
 *     kept: the host saw every frame); a DESTROY came meanwhile: the new
 *     connection reclaimed; TCP past ESTABLISHED came: reclaimed, and its
 *     state leaves.
 * The update comes before the create, as the plan has it: a TCP state is
 * liberal before its first segment goes through the fast path (strict and
 * behind, it would be INVALID when it comes back), and a connection is
 * never forwarding while its state dies after P (UDP: 120 s).  The price:
 * between the update and the answer a state is on T_long that is not
 * offloaded yet, and a create refused posts the fix-up P; a flowcutd
 * killed in between leaves the state on T_long, which the next
 * flowcutd's resync fixes up (on T_long and not offloaded: P).
 */
/* (struct flight: fd_offload_priv.h) */

/* A pending entry out of by_ct: its answer came, or it went no further. */
void
off_unpend(struct fd_offload *o, struct off_entry *e)
{
	off_unindex_ct(o, e);
	e->pending = false;
}


static void
flight_end(struct flight *f)
{
	f->o->inflight--;
	fd_pool_put(&f->o->flights, f);
}

/*
 * What came while a create was in flight, done now that it went no
 * further or was answered (`made`: FLOW_CREATE_FP answered 0, id `id`).
 */
static void
after_pending(struct fd_offload *o, struct off_entry *e, bool made, uint64_t id)
{
	if (made) {
		int rc = off_reclaim(o, id);

		if (rc != 0 && rc != -ENOENT)
			off_lost_track(o, "CONN_RECLAIM_FP of a connection whose state closed or "
				       "went while it was made", rc);
	}
	if (e->after == OFF_AFTER_OUT && e->on_long)
		(void)leave_entry(o, e, 0, true);
	else if (e->after == OFF_AFTER_GONE)
		o->st.removed++;
	off_free_entry(o, e);
}

static void
create_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct flight *f = dctx;
	struct fd_offload *o = f->o;
	struct off_entry *e = f->e;
	struct fc_ans_conn_id a = { 0 };

	if (rc == 0 && len >= sizeof(a))
		memcpy(&a, ans, sizeof(a));
	else if (rc == 0)
		rc = -EBADMSG;	/* not an answer of FLOW_CREATE_FP: take stock again */
	if (rc == 0) {
		fd_hist_add(&o->offload_us, (off_now_ns(o) - f->t0_ns) / 1000u);
		if (o->cfg.first_frame_reads)
			(void)fd_first_offer(&o->first, a.id, f->t0_ns, off_now_ns(o));
	}
	if (rc == 0 && e->after == OFF_AFTER_ENTER) {
		e->pending = false;	/* in by_ct it stays: off_enter adds by_fp */
		(void)off_enter(o, e, 0, a.id);
		flight_end(f);
		return;
	}
	off_unpend(o, e);
	if (e->after != OFF_AFTER_ENTER) {
		if (rc != 0 && off_no_answer(rc))
			off_lost_track(o, "FLOW_CREATE_FP", rc);
		after_pending(o, e, rc == 0, a.id);
	} else {
		(void)off_enter(o, e, rc, a.id);
	}
	flight_end(f);
}

static void
update_done(void *arg, int rc)
{
	struct flight *f = arg;
	struct fd_offload *o = f->o;
	struct off_entry *e = f->e;

	if (rc == 0)
		e->on_long = true;
	if (rc == 0 && e->after == OFF_AFTER_ENTER) {
		rc = fd_cmds_post(&o->cmds, FC_CMD_FLOW_CREATE_FP, &f->c, sizeof(f->c), create_done,
				  f);
		if (rc != 0)
			create_done(f, rc, NULL, 0);	/* as if answered so: off_enter */
		return;
	}
	if (rc != 0 && rc != -ENOENT)	/* gone: its DESTROY follows */
		/* strict, or on P, and offloaded: dropped when it comes back, or dead while forwarding */
		fprintf(stderr, "flowcutd: conntrack state %u not made ready for the fast path "
			"(liberal, T_long %u s): %s; left to the host\n", e->ct_id,
			off_t_long(o, e->orig.proto), strerror(-rc));
	off_unpend(o, e);
	after_pending(o, e, false, 0);
	flight_end(f);
}

/*
 * The state's connection made, posted (see above): 0 (posted: the answer
 * decides), or off_prepare()'s errors, -ENOMEM, or the update's post's.
 * `looked`: the caller has just found no entry of the state (prepare's).
 */
int
off_make(struct fd_offload *o, const struct nf_conntrack *ct, uint64_t t0_ns, bool looked)
{
	struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT };
	struct nf_conntrack *t;
	struct off_entry *e;
	struct flight *f;
	int rc;

	if (off_rj_unmarking(o)) {
		rj_ask(o, ct);	/* its bit may be the old rules': judged once they are cleared */
		return -EAGAIN;
	}
	f = fd_pool_get(&o->flights);
	if (f == NULL)
		return -ENOMEM;
	rc = off_prepare_as(o, ct, false, looked, &f->c, &f->e);
	if (rc != 0) {
		fd_pool_put(&o->flights, f);
		return rc;
	}
	e = f->e;
	f->o = o;
	f->t0_ns = t0_ns;
	e->pending = true;
	if (off_index_ct(o, e) != 0) {
		off_free_entry(o, e);
		fd_pool_put(&o->flights, f);
		return -ENOMEM;
	}
	u.timeout = off_t_long(o, e->orig.proto);
	if (e->orig.proto == IPPROTO_TCP)
		u.what |= FD_CT_UP_LOOSEN;
	o->inflight++;
	t = off_tuple(e);
	rc = t != NULL ? o->ct.update_post(o->ct.ctx, t, &u, update_done, f) : -ENOMEM;
	if (t != NULL)
		nfct_destroy(t);
	if (rc != 0) {
		off_unpend(o, e);
		off_free_entry(o, e);
		flight_end(f);
	}
	return rc;
}

/* Offloads the state if it qualifies and has a path (or waits for one). */
void
off_offload(struct fd_offload *o, const struct nf_conntrack *ct)
{
	(void)off_make(o, ct, off_now_ns(o), false);
}

int
fd_offload_try(struct fd_offload *o, const struct nf_conntrack *ct)
{
	return off_make(o, ct, off_now_ns(o), false);
}

void
off_flush(struct fd_offload *o)
{
	(void)o->ct.get_flush(o->ct.ctx);	/* their answers judged: updates posted */
	(void)o->ct.update_flush(o->ct.ctx);	/* their acks: creates posted */
	(void)fd_cmds_flush(&o->cmds, 0);	/* sent; the answers there taken */
	(void)o->ct.update_flush(o->ct.ctx);	/* what those posted: fix-ups, leaves */
}

void
off_settle(struct fd_offload *o)
{
	/* each round finishes a stage of what is in flight: GET, update, create, fix-up */
	for (unsigned int i = 0; i < 8 && o->inflight > 0; i++) {
		(void)o->ct.get_flush(o->ct.ctx);
		(void)o->ct.update_flush(o->ct.ctx);
		(void)fd_cmds_flush(&o->cmds, -1);
		(void)o->ct.update_flush(o->ct.ctx);
	}
}

void
off_judge_by_get(struct fd_offload *o)
{
	off_settle(o);
	o->get_mode = true;
}

/* The front ports' MTUs, asked of the kernel.  0, or -1 and errno. */
int
off_port_mtus_read(struct fd_offload *o)
{
	for (unsigned int p = 0; p < o->cfg.nports; p++) {
		uint32_t mtu;
		int rc = o->route.link_mtu(o->route.ctx, o->cfg.ifindex[p], &mtu);

		if (rc == 0 && mtu < 68)
			rc = -EINVAL;
		if (rc != 0) {
			fprintf(stderr, "flowcutd: the MTU of front port %u (ifindex %u): %s\n", p,
				o->cfg.ifindex[p], strerror(-rc));
			errno = -rc;
			return -1;
		}
		o->port_mtu[p] = mtu > UINT16_MAX ? UINT16_MAX : (uint16_t)mtu;
	}
	return 0;
}
