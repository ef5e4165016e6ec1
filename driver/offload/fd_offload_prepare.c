/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_prepare: what one state's FLOW_CREATE_FP needs, with its path
 * looked up: the front ports, the host's routes and neighbours (a state
 * whose neighbour is unresolved waits, and the host is asked to resolve
 * it), the next hops.  Calls down only: the table, fd_policy, fd_nhop, the
 * routes' I/O, the helpers of fd_offload_priv.h.
 */
#include "fd_offload_priv.h"

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
int
off_waiting_find(const struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
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
	if (off_waiting_find(o, ct_id, ct) >= 0)
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

void
off_waiting_clear(struct fd_offload *o)
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

int
off_prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut,
	struct fc_cmd_flow_create *c, struct off_entry **out)
{
	return off_prepare_as(o, ct, cut, false, c, out);
}

/* off_prepare; `looked`: the caller found no entry of ct's just now (one lookup, not two). */
int
off_prepare_as(struct fd_offload *o, const struct nf_conntrack *ct, bool cut, bool looked,
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
