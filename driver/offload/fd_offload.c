/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload: see fd_offload.h.
 *
 * The binding's state machine: conntrack's events, one state offloaded,
 * the coprocessor's events, timeouts (T_long, the leave
 * fix-up, the extensions), ruleset changes.
 * conntrack's I/O is fd_ct's, what qualifies and what a state becomes is
 * fd_policy's, next hops are fd_nhop's, routes fd_route's, and commands
 * go through fd_cmds.  Its other rooms: fd_offload_table.c (the two
 * tables of offloaded connections), fd_offload_paths.c (the host's routes
 * and neighbours followed), fd_offload_cut.c (the table as the cut sees
 * it), fd_offload_kept.c (cut connections kept across revisions and taken
 * up from a flowcutd before), fd_offload_sync.c (the resync: the
 * reconcile by difference, a job over turns); fd_offload_priv.h holds
 * what they share.
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

/* P: conntrack's timeout of a working state of the protocol. */
uint32_t
off_p(const struct fd_offload *o, uint8_t l4proto)
{
	return o->ct.established_timeout(o->ct.ctx, l4proto);
}

/* T_long: an offloaded state's timeout, P + OFF_LONG_S ("Timeouts": driver/offload/README.md). */
uint32_t
off_t_long(const struct fd_offload *o, uint8_t l4proto)
{
	return off_p(o, l4proto) + OFF_LONG_S;
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

/* A command got no answer: it may still take effect. */
bool
off_no_answer(int rc)
{
	return fd_cmds_no_answer(rc);
}

/*
 * What the fast path holds is no longer known (a command without an answer,
 * or one refused that must not be): it is taken out whole and offloaded
 * again from a conntrack dump, retried until it gets through.  Said once.
 */
void
off_lost_track(struct fd_offload *o, const char *what, int rc)
{
	if (!o->need_resync)
		fprintf(stderr, "flowcutd: %s: %s; the fast path is taken out and offloaded "
			"again from conntrack\n", what, strerror(-rc));
	o->need_resync = true;
}

/* ---- offloading one state ---- */

int
off_port_of(const struct fd_offload *o, unsigned int ifindex)
{
	for (unsigned int p = 0; p < o->cfg.nports; p++)
		if (o->cfg.ifindex[p] == ifindex)
			return (int)p;
	return -1;
}

/*
 * The front port a next hop leaves by, or -1; a hop whose route says no
 * MTU gets the port's (followed from rtnetlink's link group).
 */
int
off_front_port(const struct fd_offload *o, struct fd_hop *hop)
{
	int p = off_port_of(o, hop->ifindex);

	if (p >= 0 && hop->mtu == 0)
		hop->mtu = o->port_mtu[p];
	return p;
}

/*
 * A state that qualifies but cannot be offloaded over the path it has now:
 * its neighbour is not resolved yet (the host resolves it as it forwards
 * the frames, and is asked to: solicit() below), or a route change took it
 * to an interface that is not a front port.  Tried again when a neighbour
 * resolves or the paths change.
 * Full, the oldest is let go (counted): it stays with the host, as
 * everything not offloaded does.
 */
static int
waiting_find(const struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct fc_key k;

	off_orig_of(ct, &k);
	for (unsigned int i = 0; i < o->nwaiting; i++)
		if (o->waiting[i].ct_id == ct_id && memcmp(&o->waiting[i].orig, &k, sizeof(k)) == 0)
			return (int)i;
	return -1;
}

void
off_wait_path(struct fd_offload *o, const struct nf_conntrack *ct)
{
	uint32_t ct_id = nfct_get_attr_u32(ct, ATTR_ID);
	struct nf_conntrack *t;

	/* a leave's bit cleared before the state is read again (fd_offload_paths' retry) */
	(void)o->ct.update_flush(o->ct.ctx);
	if (waiting_find(o, ct_id, ct) >= 0)
		return;
	t = fd_ct_tuple(ct);
	if (t == NULL)
		return;
	if (o->nwaiting == 0)	/* just tried: the retry's 5 s from now (fd_offload_work) */
		o->waiting_tried_ms = off_now_ns(o) / 1000000u;
	if (o->nwaiting == FD_WAITING_MAX) {
		nfct_destroy(o->waiting[0].tuple);
		memmove(o->waiting, o->waiting + 1, (FD_WAITING_MAX - 1) * sizeof(o->waiting[0]));
		o->nwaiting--;
		o->st.waiting_dropped++;
	}
	o->waiting[o->nwaiting].ct_id = ct_id;
	off_orig_of(ct, &o->waiting[o->nwaiting].orig);
	o->waiting[o->nwaiting++].tuple = t;
}

static void
waiting_clear(struct fd_offload *o)
{
	for (unsigned int i = 0; i < o->nwaiting; i++)
		nfct_destroy(o->waiting[i].tuple);
	o->nwaiting = 0;
}

/*
 * A waiting state's unresolved neighbour: the host is asked to resolve it
 * (fd_route_neigh_resolve), as it would before sending to it.  The host
 * resolves a neighbour as it forwards frames to it, and a state it
 * forwards one way only (a UDP stream, a flood; a TCP sender's ACKs are
 * not) sends it nothing towards the other end once the entry is gone - a
 * flowcutd restart takes its TAPs' carrier down, and the kernel flushes
 * their entries with it - so without this ask such a state waited for
 * ever.  Its answer comes back as a neighbour change (fd_offload_rt_change),
 * which tries the waiting again.  A neighbour asked for within the last
 * OFF_ASKED_NS is not asked again (struct off_asked: the kernel solicits
 * for that long before it calls one failed, and an ask meanwhile does
 * nothing but cost a round trip): the states of a restart's resync, or
 * the waiting tried again on every neighbour change, ask once a
 * neighbour, not once a state.  An ask that fails is said once.
 */
static void
solicit(struct fd_offload *o, const struct fd_hop *hop)
{
	uint64_t now;
	int rc;

	if (hop->resolved || o->route.neigh_resolve == NULL)
		return;
	now = off_now_ns(o);
	for (unsigned int i = 0; i < OFF_ASKED_MAX; i++) {
		const struct off_asked *a = &o->asked[i];

		if (a->at_ns != 0 && now - a->at_ns < OFF_ASKED_NS && a->ifindex == hop->ifindex &&
		    a->family == hop->family && memcmp(a->nbr, hop->nbr, sizeof(a->nbr)) == 0)
			return;
	}
	o->asked[o->asked_next] = (struct off_asked){ .at_ns = now ? now : 1,
						      .ifindex = hop->ifindex,
						      .family = hop->family };
	memcpy(o->asked[o->asked_next].nbr, hop->nbr, sizeof(hop->nbr));
	o->asked_next = (o->asked_next + 1) % OFF_ASKED_MAX;
	rc = o->route.neigh_resolve(o->route.ctx, hop->ifindex, hop->family, hop->nbr);
	if (rc == 0)
		o->st.solicited++;
	else if (!o->solicit_said) {
		o->solicit_said = true;
		fprintf(stderr, "flowcutd: asking the host to resolve a neighbour (interface %u): %s; "
			"states waiting for one wait until the host sends to it\n", hop->ifindex,
			strerror(-rc));
	}
}

/*
 * A cut connection's ends, made dropping: the fast path drops a cut
 * connection's frames before it reads a next hop (fp_burst.c, step 5), and
 * a cut one is never made to forward again (an uncut takes it out: the
 * state is judged anew), so its command names a next hop only because the
 * command has room for one.  Not the neighbour's own, resolved or not:
 * every end of a cut shares one placeholder a port, family and MTU (the
 * unspecified address, never a neighbour's, so no neighbour change
 * reprograms it; unresolved).
 *  - An end the host has not resolved is most often a sender that never
 *    answers - spoofed, or gone: such a state was killed and not made
 *    dropping before, and its flood went on to the host.
 *  - A next hop a sender would let a flood from many on-link sources fill
 *    the next-hop table (it never shrinks), after which nothing new is
 *    offloaded.
 *  - With "Cut in hardware" turned off, until flowcutd reclaims them, an
 *    IPS cut's frames are not dropped at step 5 but reach step 7: on the
 *    placeholder they go to the host (NHOP_UNRESOLVED), not on to the far
 *    end.
 */
static void
placeholder(struct fd_hop *hop)
{
	memset(hop->nbr, 0, sizeof(hop->nbr));
	memset(hop->mac, 0, sizeof(hop->mac));
	hop->resolved = false;
}

/*
 * What a FLOW_CREATE_FP for the state needs, checked and built: the
 * command in *c, its entry in *out (allocated, in no table, no id yet).  0,
 * or -EEXIST (in already), -EPERM (does not qualify), -EINPROGRESS (FWD,
 * and the inspector has not passed it yet: fd_offload_try once it has),
 * -ENETUNREACH (not between front ports), -EAGAIN (a neighbour unresolved:
 * it waits; a cut one is made on placeholder next hops), -ENOMEM, or an
 * error of NHOP_PROGRAM or of conntrack.  `cut`: made already dropping
 * (fd_offload_post_create_cut), whether it qualifies or not.
 */
static int
prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut, bool looked,
	struct fc_cmd_flow_create *c, struct off_entry **out);

int
off_prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut,
	struct fc_cmd_flow_create *c, struct off_entry **out)
{
	return prepare(o, ct, cut, false, c, out);
}

/* off_prepare; `looked`: the caller found no entry of ct's just now (one lookup, not two). */
static int
prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut, bool looked,
	struct fc_cmd_flow_create *c, struct off_entry **out)
{
	uint32_t ct_id = nfct_get_attr_u32(ct, ATTR_ID);
	int family = fd_policy_family(ct);
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	struct fd_hop to_orig_src, to_reply_src;
	uint8_t dst[2][16] = { { 0 } };
	int pa, pb, rc;
	struct off_entry *e;
	uint8_t action, verdict;
	bool passed = false;

	if (!looked && off_find_ct(o, ct_id, ct) != NULL)
		return -EEXIST;
	if (!cut && !fd_policy_qualifies(ct, o->cfg.mark_bit))
		return -EPERM;
	action = fd_policy_action(ct, o->cfg.cut_in_hardware);
	/*
	 * The inspector's: an IPS connection is made SEND_TO_IPS (its frames
	 * come up to it) unless it has passed it already (CUT_THRU at once);
	 * a FWD one's frames would never come up, so it waits for the pass.
	 */
	verdict = cut ? FC_VERDICT_DROP
		      : fd_policy_verdict(ct, action, o->tls_ports, o->ntls_ports);
	if (!cut && o->cfg.inspect_verdict != NULL &&
	    fd_policy_inspected(ct, o->tls_ports, o->ntls_ports)) {
		passed = o->cfg.inspect_verdict(o->cfg.inspect_arg, ct) == FC_VERDICT_CUT_THRU;
		if (passed)
			verdict = FC_VERDICT_CUT_THRU;
		else if (action == FC_ACTION_FWD)
			return -EINPROGRESS;
	}
	memset(c, 0, sizeof(*c));
	/* orig frames come in facing orig.src and leave towards reply.src */
	fd_policy_route_dst(ct, FD_DIR_ORIG, dst[0]);
	fd_policy_route_dst(ct, FD_DIR_REPLY, dst[1]);
	/* a cut's ends go on the placeholder: the path's port alone, no neighbour asked */
	int (*route)(void *, int, const uint8_t *, struct fd_hop *) =
		cut ? o->route.path : o->route.get;
	if (route(o->route.ctx, family, dst[1], &to_orig_src) != 0 ||
	    route(o->route.ctx, family, dst[0], &to_reply_src) != 0)
		return -ENETUNREACH;
	pa = off_front_port(o, &to_orig_src);
	pb = off_front_port(o, &to_reply_src);
	if (pa < 0 || pb < 0)
		return -ENETUNREACH;	/* not between front ports: the host's alone */
	if (cut) {
		placeholder(&to_orig_src);	/* it drops before any next hop is read */
		placeholder(&to_reply_src);
	} else if (!to_orig_src.resolved || !to_reply_src.resolved) {
		solicit(o, &to_orig_src);
		solicit(o, &to_reply_src);
		off_wait_path(o, ct);	/* once the host has resolved it */
		return -EAGAIN;
	}
	fd_policy_key(ct, FD_DIR_ORIG, (uint16_t)pa, &c->mf[0].key);
	fd_policy_key(ct, FD_DIR_REPLY, (uint16_t)pb, &c->mf[1].key);
	rc = fd_nhop_get(o->nhops, (unsigned int)pb, &to_reply_src, &c->mf[0].nhop);
	if (rc == 0)
		rc = fd_nhop_get(o->nhops, (unsigned int)pa, &to_orig_src, &c->mf[1].nhop);
	if (rc != 0) {
		if (off_no_answer(rc))
			off_lost_track(o, "NHOP_PROGRAM", rc);	/* the next-hop table is unknown */
		return rc;
	}
	c->verdict = verdict;
	/* made cut: IPS drops by the verdict; a FWD one (a tunnel) must drop by its action */
	if (cut && action == FC_ACTION_FWD)
		action = FC_ACTION_DROP;
	for (int d = 0; d < 2; d++) {
		c->mf[d].action = action;
		c->mf[d].timeout_s = o->cfg.timeout_s;
		/* in the fast path means seen within P: a state never dies while active */
		if (!cut && c->mf[d].timeout_s > off_p(o, l4))
			c->mf[d].timeout_s = (uint16_t)off_p(o, l4);
	}
	/* the loosen is make()'s update, acked before FLOW_CREATE_FP */
	if (l4 == IPPROTO_TCP && !cut) {
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_ORIG))
			c->mf[0].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_ORIG);
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_REPL))
			c->mf[1].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_REPL);
	}
	e = off_entry_new(o);
	if (e == NULL)
		return -ENOMEM;
	e->ct_id = ct_id;
	off_orig_of(ct, &e->orig);
	if (off_set_dst(o, e, (const uint8_t (*)[16])dst) != 0) {
		off_free_entry(o, e);
		return -ENOMEM;
	}
	e->action = action;
	e->verdict = verdict;
	e->cut = cut;
	e->passed = passed;
	e->nhop[0] = c->mf[0].nhop;
	e->nhop[1] = c->mf[1].nhop;
	*out = e;
	return 0;
}

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

/* Is a ruleset change's unmark still running (a bit set may be the old rules')? */
static bool
rj_unmarking(const struct fd_offload *o)
{
	return o->rj.phase == OFF_RJ_LEAVE || o->rj.phase == OFF_RJ_DUMP;
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
struct flight {
	struct fd_offload *o;
	struct off_entry *e;
	struct fc_cmd_flow_create c;
	uint64_t t0_ns;		/* the event parsed (or the state handed in) */
};

/* A pending entry out of by_ct: its answer came, or it went no further. */
static void
unpend(struct fd_offload *o, struct off_entry *e)
{
	off_unindex_ct(o, e);
	e->pending = false;
}

/*
 * The flights kept for reuse: the most in flight is a few turns' events
 * (FD_OFFLOAD_EVENTS_PER_TURN a turn, answered a turn or two later), so
 * 4,096 (590 KB) covers a burst's without holding a flood's.
 */
#define OFF_FLIGHTS_KEPT 4096

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
	unpend(o, e);
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
	unpend(o, e);
	after_pending(o, e, false, 0);
	flight_end(f);
}

/*
 * The state's connection made, posted (see above): 0 (posted: the answer
 * decides), or off_prepare()'s errors, -ENOMEM, or the update's post's.
 * `looked`: the caller has just found no entry of the state (prepare's).
 */
static int
make(struct fd_offload *o, const struct nf_conntrack *ct, uint64_t t0_ns, bool looked)
{
	struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT };
	struct nf_conntrack *t;
	struct off_entry *e;
	struct flight *f;
	int rc;

	if (rj_unmarking(o)) {
		rj_ask(o, ct);	/* its bit may be the old rules': judged once they are cleared */
		return -EAGAIN;
	}
	f = fd_pool_get(&o->flights);
	if (f == NULL)
		return -ENOMEM;
	rc = prepare(o, ct, false, looked, &f->c, &f->e);
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
		unpend(o, e);
		off_free_entry(o, e);
		flight_end(f);
	}
	return rc;
}

/* Offloads the state if it qualifies and has a path (or waits for one). */
void
off_offload(struct fd_offload *o, const struct nf_conntrack *ct)
{
	(void)make(o, ct, off_now_ns(o), false);
}

int
fd_offload_try(struct fd_offload *o, const struct nf_conntrack *ct)
{
	return make(o, ct, off_now_ns(o), false);
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

/* State `ct_id` (its original tuple in `ct`) is gone: out of the fast path at once. */
static void
state_gone(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct off_entry *e = off_find_ct(o, ct_id, ct);
	int w = waiting_find(o, ct_id, ct), rc;

	if (w >= 0) {
		nfct_destroy(o->waiting[w].tuple);
		o->waiting[w] = o->waiting[--o->nwaiting];
	}
	if (e == NULL)
		return;
	if (e->pending) {
		/* its create's answer reclaims it; a new state may take the id */
		e->after = OFF_AFTER_GONE;
		unpend(o, e);
		e->pending = true;
		return;
	}
	if (e->cut) {
		/* it drops: it stays while its sender sends, and ages out */
		off_unindex_ct(o, e);	/* a new state may take the id */
		return;
	}
	rc = off_reclaim(o, e->fp_id);
	if (rc != 0 && rc != -ENOENT)	/* it may still forward: take everything out */
		off_lost_track(o, "CONN_RECLAIM_FP of a state gone", rc);
	off_forget(o, e);
	o->st.removed++;
}

/*
 * Judged from the event, no GET.  An event carries what changed, and what
 * judging needs is not always in it: ctnetlink's NEW and UPDATE events
 * carry CTA_STATUS always and CTA_MARK whenever the mark is not 0
 * (ctnetlink_conntrack_event), but CTA_PROTOINFO (the TCP state, its
 * window scales) only when it changed (IPCT_PROTOINFO): one that only
 * sets the mark - the rules passed a connection again, after a ruleset
 * change or once it came back to the host - has no TCP state in it.  Such
 * an event gets a posted GET (one datagram for the batch, at off_flush),
 * judged in its answer; an event with all three is judged as it is.
 *
 * An event may be older than the state (a FIN 14 us after the handshake:
 * the ESTABLISHED event is read when the state is FIN_WAIT already), and
 * judged as it is, it offloads a closing state.  The events of a state
 * come in order, so the FIN_WAIT one follows: an UPDATE of a pending
 * entry, or of one offloaded within OFF_STALE_MS, showing TCP past
 * ESTABLISHED takes it out (reclaim, leave; at the answer when pending).
 * Until then the fast path forwards what the host would have
 * (fd_policy_qualifies refuses every TCP state but ESTABLISHED, so no
 * event of a closing state offloads anything).  Only then: once in the
 * fast path, every close that passes through it in its window is the
 * coprocessor's to report (a give-back), so a close only the host saw
 * came from a segment the coprocessor judged outside the window and sent
 * up alone (a spoofed RST, which the host's liberal state takes) or from
 * the host itself; taking the connection out on it would hand an
 * off-path sender the power the window check took away.  Its state's own
 * timer and DESTROY decide then.
 *
 * After a ruleset change the bit in an event read may be the old rules'
 * (the event was queued before the unmark): GET mode (off_judge_by_get)
 * reads every candidate whole until the socket has been read empty.
 */
static bool
judgeable(const struct nf_conntrack *ct)
{
	return nfct_attr_is_set(ct, ATTR_STATUS) && nfct_attr_is_set(ct, ATTR_MARK) &&
	       (nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_TCP ||
		nfct_attr_is_set(ct, ATTR_TCP_STATE));
}

static bool
past_established(const struct nf_conntrack *ct)
{
	uint8_t st;

	if (nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_TCP ||
	    !nfct_attr_is_set(ct, ATTR_TCP_STATE))
		return false;
	st = nfct_get_attr_u8(ct, ATTR_TCP_STATE);
	return st >= TCP_CONNTRACK_FIN_WAIT && st <= TCP_CONNTRACK_CLOSE;
}

/*
 * Offloaded within OFF_STALE_MS: its offload time is its first
 * extension's due less OFF_EXTEND_MS (off_enter puts it in the FIFO).
 */
static bool
young(const struct fd_offload *o, const struct off_entry *e)
{
	uint32_t now_ms = (uint32_t)(off_now_ns(o) / 1000000u);

	return e->in_ext && (int32_t)(now_ms - (e->due_ms - (uint32_t)OFF_EXTEND_MS)) < OFF_STALE_MS;
}

/*
 * An offloaded entry whose state closed on the host (see above): out, its
 * state leaves (the bit cleared) - pending or young only.
 */
static void
closed_on_host(struct fd_offload *o, struct off_entry *e)
{
	uint64_t idle_s = 0;
	int rc;

	if (e->cut)
		return;		/* it drops; its state was killed */
	if (e->pending) {
		e->after = OFF_AFTER_OUT;
		return;
	}
	if (!young(o, e))
		return;		/* not the stale event's: the coprocessor reports its closes */
	rc = off_reclaim_idle(o, e->fp_id, &idle_s);
	if (rc != 0 && rc != -ENOENT)
		off_lost_track(o, "CONN_RECLAIM_FP of a connection closed on the host", rc);
	(void)off_leave(o, e, idle_s, true);
	off_forget(o, e);
}

/* A state to judge, read whole: its GET's answer. */
struct judging {
	struct fd_offload *o;
	uint32_t ct_id;
	uint64_t t0_ns;
};

static void
judge_got(void *arg, const struct nf_conntrack *whole, int rc)
{
	struct judging *j = arg;

	j->o->inflight--;
	if (whole != NULL)
		(void)make(j->o, whole, j->t0_ns, false);
	else if (rc != -ENOENT)	/* gone: its DESTROY follows */
		fprintf(stderr, "flowcutd: conntrack state %u: reading it to judge it: %s\n",
			j->ct_id, strerror(-rc));
	free(j);
}

static void
event_update(struct fd_offload *o, const struct nf_conntrack *ct, uint64_t t0_ns)
{
	struct off_entry *e = off_find_state(o, ct);
	struct judging *j;

	if (e != NULL) {	/* in already (or on its way) */
		if (past_established(ct))
			closed_on_host(o, e);
		return;
	}
	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit))
		return;			/* it would not qualify */
	if (!o->get_mode && judgeable(ct)) {
		(void)make(o, ct, t0_ns, true);	/* off_find_state found none above */
		return;
	}
	j = malloc(sizeof(*j));
	if (j == NULL)
		return;		/* not offloaded now: its next event, or a resync */
	*j = (struct judging){ .o = o, .ct_id = nfct_get_attr_u32(ct, ATTR_ID), .t0_ns = t0_ns };
	o->inflight++;
	if (o->ct.get_post(o->ct.ctx, ct, judge_got, j) != 0) {
		o->inflight--;
		free(j);
	}
}

/*
 * An update fd_ct itself made (a mark cleared, a state loosened, a timeout
 * set) says nothing new, and judging it would loop: off_offload()
 * loosens the state before FLOW_CREATE_FP, so a create refused (the table
 * full, the coprocessor rebooting) would be tried again on the event of
 * its own update, for ever.  fd_ct flags those `own`.
 */
static void
on_ct_event(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct, bool own)
{
	struct fd_offload *o = arg;

	if (type == FD_CT_DESTROY)
		state_gone(o, nfct_get_attr_u32(ct, ATTR_ID), ct);
	else if (!own)
		event_update(o, ct, off_now_ns(o));	/* parsed: the offload's clock starts */
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

/* The job's updates this turn: which state, for its error's line. */
struct rj_post {
	struct fd_offload *o;
	uint32_t id;
	bool leave;
};

static struct rj_post rj_posted[FD_OFFLOAD_UPDATES_PER_TURN];
static unsigned int rj_nposted;

static void
rj_done(void *arg, int rc)
{
	const struct rj_post *p = arg;

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
	struct rj_post *p = &rj_posted[rj_nposted];
	int rc;

	if (leave) {
		u.what |= FD_CT_UP_TIMEOUT | (l4 == IPPROTO_TCP ? FD_CT_UP_LOOSEN : 0);
		u.timeout = off_p(o, l4);
	}
	*p = (struct rj_post){ .o = o, .id = nfct_get_attr_u32(tuple, ATTR_ID), .leave = leave };
	o->upd_budget--;
	rc = o->ct.update_post(o->ct.ctx, tuple, &u, rj_done, p);
	if (rc == 0)
		rj_nposted++;
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
static void
rj_end(struct fd_offload *o, bool keep)
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
	if (rj_unmarking(o))
		o->marks_stale = true;
	rj_end(o, false);
}

/*
 * The old revision's uncut entries out of the tables at once (in memory:
 * no call), onto `leaving`: from now on their states are judged afresh,
 * a DESTROY or a cut finds no entry (their connections no longer forward),
 * and the job posts each one's leave.
 */
static void
rj_unlink_uncut(struct fd_offload *o)
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
	rj_end(o, false);
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
		if (rj_nposted > 0)
			(void)o->ct.update_flush(o->ct.ctx);	/* each answer's done said its error */
		rj_nposted = 0;
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
		rj_end(o, false);
}

/* The job's share of this turn (fd_offload_work); its updates flushed before the turn ends. */
static void
rj_step(struct fd_offload *o)
{
	rj_nposted = 0;
	if (o->rj.phase == OFF_RJ_LEAVE)
		rj_leave_step(o);
	if (o->rj.phase == OFF_RJ_DUMP)
		rj_dump_step(o);
	if (rj_nposted > 0)
		(void)o->ct.update_flush(o->ct.ctx);	/* each answer's done said its error */
	if (o->rj.phase == OFF_RJ_JUDGE)
		rj_judge_step(o);
}

/* ---- the interface ---- */

struct fd_offload *
fd_offload_open(const struct fd_cmds *cmds, const struct fd_ct_io *ct,
		const struct fd_route_io *route, struct fd_nhop *nhops,
		const struct fd_offload_cfg *cfg)
{
	struct fd_offload *o = calloc(1, sizeof(*o));

	if (o != NULL)
		fd_first_init(&o->first);

	if (o == NULL)
		return NULL;
	o->cmds = *cmds;
	o->ct = *ct;
	o->route = *route;
	o->nhops = nhops;
	o->cfg = *cfg;
	o->ct_read = UINT_MAX;
	fd_pool_init(&o->flights, sizeof(struct flight), OFF_FLIGHTS_KEPT);
	if (off_port_mtus_read(o) != 0) {
		int err = errno;

		fd_offload_close(o);
		errno = err;
		return NULL;
	}
	return o;
}

void
fd_offload_close(struct fd_offload *o)
{
	if (o == NULL)
		return;
	off_settle(o);		/* no completion of ours may run after the free */
	rj_end(o, false);
	off_sync_free(o);
	off_forget_all(o);
	off_table_free(o);
	waiting_clear(o);
	fd_pool_free(&o->flights);
	free(o);
}

void
fd_offload_skip_events(struct fd_offload *o)
{
	o->ct.drain(o->ct.ctx);
}

void
fd_offload_events(struct fd_offload *o)
{
	int rc = o->ct.events(o->ct.ctx, FD_OFFLOAD_EVENTS_PER_TURN, on_ct_event, o);

	/*
	 * Read empty once the unmark job has cleared every old bit (its last
	 * update acked, so its own event queued before): past every event
	 * that could carry an old bit.
	 */
	if (rc >= 0 && rc < FD_OFFLOAD_EVENTS_PER_TURN && !rj_unmarking(o))
		o->get_mode = false;
	/* read whole (fewer than asked): our updates' own events are behind us */
	o->ct_read = rc >= 0 && rc < FD_OFFLOAD_EVENTS_PER_TURN ? UINT_MAX : (unsigned int)(rc > 0 ? rc : 0);
	off_flush(o);		/* the batch's GETs, updates and creates go */
	if (rc == -ENOBUFS) {
		/* events were lost: the two tables may disagree, so reconcile */
		o->st.ct_events_lost++;
		fprintf(stderr, "flowcutd: conntrack events lost; reconciling with a dump\n");
		fd_offload_resync(o);
	} else if (rc < 0) {
		fprintf(stderr, "flowcutd: conntrack events: %s\n", strerror(-rc));
	}
	if (o->need_resync)
		fd_offload_resync(o);
}

void
fd_offload_fp_event(struct fd_offload *o, const struct lk_event *ev)
{
	struct off_entry *e = off_find_fp(o, ev->id);

	if (e == NULL) {
		/*
		 * A flowcutd before's (its events stay on the ring): its state
		 * leaves.  Not a give-back (its REMOVED follows), nor a
		 * removal for an old revision (the revision's leave fixed
		 * the state up, P from then, and it may be offloaded anew
		 * under the same key since).
		 */
		if (ev->type == FC_EV_AGED_OUT ||
		    (ev->type == FC_EV_REMOVED && ev->reason != FC_REASON_FW_REV))
			orphan_leave(o, &ev->key[0], off_idle_s(o, ev->stats), true, false);
		return;
	}
	if (e->cut) {
		/* never revived, never given back to the rules: its state is dead */
		if (ev->type != FC_EV_GIVEN_BACK)
			off_forget(o, e);
		return;
	}
	if (ev->type == FC_EV_GIVEN_BACK && ev->reason == FC_REASON_TCP_MAX_RETRANS) {
		/* a stalled sender, a lost segment: the host has seen it; go on */
		struct fc_cmd_conn_id id = { .id = e->fp_id };
		int rc = off_call(o, FC_CMD_CONN_REVIVE_FP, &id, sizeof(id), NULL, 0);

		if (rc == 0) {
			o->st.revived++;
			return;
		}
		if (off_no_answer(rc)) {
			/* it may be forwarding again: it must not be forgotten */
			off_lost_track(o, "CONN_REVIVE_FP", rc);
			return;
		}
	}
	/*
	 * A close, aged out or removed: let go; back only through the rules
	 * again - the bit first, or the update that loosens the state would
	 * come back as an event with the bit still set and offload it again -
	 * its timeout from its last frame.
	 */
	(void)off_leave(o, e, off_idle_s(o, ev->stats), true);
	off_forget(o, e);
}

/* A sample's read back (fd_first): its context, freed by its completion. */
struct first_read {
	struct fd_offload *o;
	struct fd_first_sample *s;
};

static void
first_read_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct first_read *r = dctx;
	struct fc_conn_info ci;

	if (rc == 0 && len < sizeof(ci))
		rc = -EBADMSG;	/* not an answer of CONN_READ_BY_ID: read again later */
	if (rc == 0)
		memcpy(&ci, ans, sizeof(ci));
	fd_first_answer(&r->o->first, r->s, rc, &ci, off_now_ns(r->o));
	r->o->inflight--;
	free(r);
}

/*
 * The first-frame samples due (fd_first.h), each read back once by a
 * posted CONN_READ_BY_ID: FIRST_READS_PER_TURN a turn at most.
 */
#define FIRST_READS_PER_TURN 32
static void
first_reads(struct fd_offload *o)
{
	struct fd_first_sample *s;

	for (unsigned int k = 0; k < FIRST_READS_PER_TURN &&
				 (s = fd_first_due(&o->first, off_now_ns(o))) != NULL; k++) {
		struct fc_cmd_conn_id id = { .id = s->id };
		struct first_read *r = malloc(sizeof(*r));
		int rc = r != NULL ? 0 : -ENOMEM;

		if (r != NULL) {
			*r = (struct first_read){ .o = o, .s = s };
			o->inflight++;
			rc = fd_cmds_post(&o->cmds, FC_CMD_CONN_READ_BY_ID, &id, sizeof(id),
					  first_read_done, r);
		}
		if (rc != 0) {		/* as if answered so: read again later */
			if (r != NULL) {
				o->inflight--;
				free(r);
			}
			fd_first_answer(&o->first, s, rc, NULL, off_now_ns(o));
		}
	}
}

void
fd_offload_work(struct fd_offload *o)
{
	uint64_t now_ms = off_now_ns(o) / 1000000u;
	unsigned int budget = FD_OFFLOAD_EXTEND_PER_TURN;
	struct off_entry *e;

	/* no more updates than event datagrams read while the socket is behind */
	o->upd_budget = o->ct_read < FD_OFFLOAD_UPDATES_PER_TURN ? o->ct_read
							       : FD_OFFLOAD_UPDATES_PER_TURN;
	o->ct_read = UINT_MAX;	/* not read this turn: nothing was waiting */
	if (o->need_resync && now_ms - o->resync_tried_ms >= 1000) {
		o->resync_tried_ms = now_ms;
		fd_offload_resync(o);	/* an earlier one did not get through */
	}
	rj_step(o);		/* a ruleset change's unmark first */
	/*
	 * The waiting tried again every OFF_WAIT_RETRY_MS while any wait, not
	 * only when a neighbour resolves: a neighbour whose ask went
	 * unanswered (FAILED after the kernel's 3 s) resolves only if it is
	 * asked again, and nothing else asks - a sender back after a pause,
	 * or asked while its TAP was still coming up, would leave its state
	 * with the host until some other neighbour changed.  At most
	 * FD_WAITING_MAX GETs, and an ask a neighbour (solicit's ring).
	 */
	if (o->nwaiting > 0 && now_ms - o->waiting_tried_ms >= OFF_WAIT_RETRY_MS) {
		o->waiting_tried_ms = now_ms;
		o->neigh_resolved = true;
	}
	fd_offload_paths(o);	/* a route change's look at every path */
	first_reads(o);		/* the first-frame samples due */
	/* the FIFO's head is the first due: nothing due, nothing done; what the unmark left */
	if (budget > o->upd_budget)
		budget = o->upd_budget;
	while (budget > 0 && (e = off_ext_due(o, now_ms)) != NULL) {
		struct nf_conntrack *t;
		int rc;

		budget--;
		off_ext_del(o, e);
		if (e->cut)
			continue;	/* cut since: no state */
		t = off_tuple(e);
		rc = t != NULL ? o->ct.timeout(o->ct.ctx, t, off_t_long(o, e->orig.proto)) : -ENOMEM;
		if (rc == -ENOENT) {	/* gone without a DESTROY we saw (lost, or never sent) */
			state_gone(o, e->ct_id, t);
			nfct_destroy(t);
			continue;
		}
		if (t != NULL)
			nfct_destroy(t);
		if (rc == 0)
			o->st.extended++;
		else	/* tried again in a minute: it has 12 h left */
			fprintf(stderr, "flowcutd: conntrack state %u: extending its timeout to %u s: "
				"%s\n", e->ct_id, off_t_long(o, e->orig.proto), strerror(-rc));
		off_ext_add(o, e, now_ms + (rc == 0 ? OFF_EXTEND_MS : 60000u));
	}
	off_flush(o);	/* this turn's leaves, fix-ups and creates go */
}

int
fd_offload_ruleset_changed(struct fd_offload *o)
{
	struct fc_ans_cfg cfg;
	struct fc_cmd_rev rev;
	int rc;

	off_sync_finish(o);	/* a reconcile's view is of the old rules: ended first */
	off_judge_by_get(o);	/* nothing in flight; events judged by GET until read empty */
	/*
	 * First a revision the coprocessor has not had: one command, and every
	 * connection judged by the old rules stops forwarding, whatever the
	 * size of the table; the cut ones are made again at the new revision.
	 * The rest is the rejudging job (above).  No revision (a command
	 * without an answer): everything is taken out instead, and the resync
	 * clears the bits of what its dump finds before it offloads anything
	 * (marks_stale), so nothing is offloaded again on a bit the old rules
	 * set.
	 */
	rc = off_call(o, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg));
	if (rc != 0) {	/* no revision: take everything out instead */
		o->marks_stale = true;
		off_lost_track(o, "FW_CFG_PARAMS_GET", rc);
		return rc;
	}
	rev.rev = cfg.fw_rev + 1;
	rc = off_call(o, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev), NULL, 0);
	if (rc != 0) {
		o->marks_stale = true;
		off_lost_track(o, "FW_STATE_REV_SET", rc);
		return rc;
	}
	o->st.rev_bumps++;
	off_keep_cut(o);
	/*
	 * A job running already starts again from the top: a state it cleared
	 * may carry the previous rules' bit since.  The states that asked
	 * are kept: they are judged once this job has cleared every bit.
	 */
	rj_end(o, true);
	rj_unlink_uncut(o);
	o->rj.phase = OFF_RJ_LEAVE;
	return 0;
}

bool
fd_offload_busy(const struct fd_offload *o)
{
	/*
	 * The paths job waits for a resync, which makes every path anew.  An
	 * offload, GET or leave in flight is work left too: its answer comes
	 * in microseconds, and a turn asleep in epoll_wait meanwhile would
	 * take it a poll interval late (qualify to answered: 5.3 ms, not µs).
	 */
	return o->inflight > 0 || o->rj.phase != OFF_RJ_IDLE ||
	       (!o->need_resync && (o->paths_changed || o->paths_left > 0 || o->neigh_resolved)) ||
	       off_ext_due(o, off_now_ns(o) / 1000000u) != NULL;
}

void
fd_offload_settings(struct fd_offload *o, bool cut_in_hardware, uint16_t timeout_s)
{
	o->cfg.cut_in_hardware = cut_in_hardware;
	o->cfg.timeout_s = timeout_s;
}

void
fd_offload_tls_ports(struct fd_offload *o, const uint16_t *ports, unsigned int n)
{
	if (n > FD_OFFLOAD_TLS_PORTS_MAX)
		n = FD_OFFLOAD_TLS_PORTS_MAX;
	memcpy(o->tls_ports, ports, n * sizeof(ports[0]));
	o->ntls_ports = n;
}

void
fd_offload_stats(const struct fd_offload *o, struct fd_offload_stats *out)
{
	*out = o->st;
	out->offload_us_p50 = fd_hist_pct(&o->offload_us, 50);
	out->offload_us_p99 = fd_hist_pct(&o->offload_us, 99);
	out->first_frame_us_p50 = fd_hist_pct(&o->first.us, 50);
	out->first_frame_us_p99 = fd_hist_pct(&o->first.us, 99);
	out->first_frame_samples = o->first.us.n;
	out->first_frame_unseen = o->first.unseen;
	out->first_frame_skipped = o->first.skipped;
}

