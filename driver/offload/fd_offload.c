/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload: see fd_offload.h.
 *
 * The binding's state machine: conntrack's events, one state offloaded,
 * the resync, the coprocessor's events, timeouts (T_long, the leave
 * fix-up, the extensions), ruleset changes.
 * conntrack's I/O is fd_ct's, what qualifies and what a state becomes is
 * fd_policy's, next hops are fd_nhop's, routes fd_route's, and commands
 * go through fd_cmds.  Its other rooms: fd_offload_table.c (the two
 * tables of offloaded connections), fd_offload_paths.c (the host's routes
 * and neighbours followed), fd_offload_cut.c (the table as the cut sees
 * it), fd_offload_kept.c (cut connections kept across revisions and taken
 * up from a flowcutd before); fd_offload_priv.h holds what they share.
 */
#include "fd_offload_priv.h"

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

/* T_long: an offloaded state's timeout, P + OFF_LONG_S (see "Timeouts" in fd_offload.h). */
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
 * back.  0, -ENOENT (the state is gone: nothing to fix), or the timeout
 * update's error (said).  One synchronous update each: posted, batched
 * ones are fd_ct's next step.
 */
static int
leave_state(struct fd_offload *o, const struct nf_conntrack *tuple, uint8_t l4proto,
	    uint64_t idle_s, bool unmark)
{
	uint32_t p = off_p(o, l4proto), id = nfct_get_attr_u32(tuple, ATTR_ID);
	int rc;

	if (unmark)
		off_ct_unmark(o, tuple);
	rc = o->ct.timeout(o->ct.ctx, tuple, idle_s < p ? p - (uint32_t)idle_s : 0);
	if (rc == -ENOENT)
		return rc;
	if (rc == 0)
		o->st.left++;
	else	/* it lives on T_long: at most a day more; a later flowcutd's resync fixes it */
		fprintf(stderr, "flowcutd: conntrack state %u: its timeout back to %u - %" PRIu64
			" s on leaving the fast path: %s\n", id, p, idle_s, strerror(-rc));
	if (l4proto == IPPROTO_TCP) {
		int err = o->ct.tcp_loosen(o->ct.ctx, tuple);

		if (err != 0 && err != -ENOENT)
			fprintf(stderr, "flowcutd: conntrack state %u: forgetting its highest ACK: "
				"%s\n", id, strerror(-err));
	}
	return rc;
}

/* An entry's state leaves the fast path, `idle_s` idle (0: unknown): see leave_state. */
int
off_leave(struct fd_offload *o, const struct off_entry *e, uint64_t idle_s, bool unmark)
{
	if (e->cut)
		return 0;	/* its state was killed */
	return leave_state(o, e->tuple, e->l4proto, idle_s, unmark);
}

/*
 * A connection this binding has no entry for left the fast path (an
 * orphan: a flowcutd before's), its original key `k`: its state, if it
 * lives, is on T_long (timeout > P) and no entry of ours holds it (an old
 * event must not shorten a connection offloaded anew), is fixed up.  1:
 * the state lives; 0: gone (or no memory).
 */
static int
orphan_leave(struct fd_offload *o, const struct fc_key *k, uint64_t idle_s, bool unmark)
{
	struct nf_conntrack *t = fd_ct_tuple_of_key(k), *whole;
	uint8_t l4;

	if (t == NULL)
		return 0;
	whole = o->ct.get(o->ct.ctx, t);
	nfct_destroy(t);
	if (whole == NULL)
		return 0;
	l4 = nfct_get_attr_u8(whole, ATTR_ORIG_L4PROTO);
	if (nfct_attr_is_set(whole, ATTR_TIMEOUT) &&
	    nfct_get_attr_u32(whole, ATTR_TIMEOUT) > off_p(o, l4) && off_find_state(o, whole) == NULL)
		(void)leave_state(o, whole, l4, idle_s, unmark);
	nfct_destroy(whole);
	return 1;
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
 * the frames), or a route change took it to an interface that is not a
 * front port.  Tried again when a neighbour resolves or the paths change.
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

	if (waiting_find(o, ct_id, ct) >= 0)
		return;
	t = fd_ct_tuple(ct);
	if (t == NULL)
		return;
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
 * What a FLOW_CREATE_FP for the state needs, checked and built: the
 * command in *c, its entry in *out (allocated, in no table, no id yet).  0,
 * or -EEXIST (in already), -EPERM (does not qualify), -EINPROGRESS (FWD,
 * and the inspector has not passed it yet: fd_offload_try once it has),
 * -ENETUNREACH (not between front ports), -EAGAIN (a neighbour unresolved: it waits, unless
 * cut), -ENOMEM, or an error of NHOP_PROGRAM or of conntrack.  `cut`: made
 * already dropping (fd_offload_post_create_cut), whether it qualifies or
 * not.
 */
int
off_prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut,
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

	if (off_find_ct(o, ct_id, ct) != NULL)
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
	if (o->route.get(o->route.ctx, family, dst[1], &to_orig_src) != 0 ||
	    o->route.get(o->route.ctx, family, dst[0], &to_reply_src) != 0)
		return -ENETUNREACH;
	pa = off_front_port(o, &to_orig_src);
	pb = off_front_port(o, &to_reply_src);
	if (pa < 0 || pb < 0)
		return -ENETUNREACH;	/* not between front ports: the host's alone */
	if (!to_orig_src.resolved || !to_reply_src.resolved) {
		if (!cut)
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
	if (l4 == IPPROTO_TCP && !cut) {	/* a cut one never comes back to the host */
		int err = o->ct.tcp_loosen(o->ct.ctx, ct);

		if (err != 0) {
			/* strict and offloaded, it would be dropped when it comes back */
			fprintf(stderr, "flowcutd: conntrack state %u not made liberal (%s): "
				"left to the host\n", ct_id, strerror(-err));
			return err;
		}
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_ORIG))
			c->mf[0].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_ORIG);
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_REPL))
			c->mf[1].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_REPL);
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->tuple = fd_ct_tuple(ct)) == NULL) {
		free(e);
		return -ENOMEM;
	}
	e->ct_id = ct_id;
	off_orig_of(ct, &e->orig);
	e->action = action;
	e->cut = cut;
	e->passed = passed;
	e->l4proto = l4;
	e->family = (uint8_t)family;
	memcpy(e->dst, dst, sizeof(dst));
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
		off_free_entry(e);
		return rc;
	}
	e->fp_id = id;
	if (off_index(o, e, true) != 0) {
		/* untracked it must not live: out again, and take stock */
		off_free_entry(e);
		rc = off_reclaim(o, id);
		if (rc != 0)
			off_lost_track(o, "CONN_RECLAIM_FP of an untracked connection", rc);
		return -ENOMEM;
	}
	o->nentries++;
	if (e->cut)
		return 0;
	/*
	 * T_long, once it is in: no state on T_long that was never
	 * offloaded.  Not set, it would die after P while forwarding (UDP:
	 * 120 s): out again, left to the host.
	 */
	rc = o->ct.timeout(o->ct.ctx, e->tuple, off_t_long(o, e->l4proto));
	if (rc != 0) {
		uint64_t fp_id = e->fp_id;
		int err;

		if (rc != -ENOENT)	/* gone: its DESTROY follows */
			fprintf(stderr, "flowcutd: conntrack state %u: its timeout to %u s for the "
				"fast path: %s; left to the host\n", e->ct_id,
				off_t_long(o, e->l4proto), strerror(-rc));
		off_forget(o, e);
		o->st.refused++;
		err = off_reclaim(o, fp_id);
		if (err != 0 && err != -ENOENT)
			off_lost_track(o, "CONN_RECLAIM_FP of a state not given T_long", err);
		return rc;
	}
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

	if (rj->nasked == rj->asked_cap) {
		size_t cap = rj->asked_cap ? 2 * rj->asked_cap : 256;
		struct fc_key *a = realloc(rj->asked, cap * sizeof(*a));

		if (a == NULL) {
			/* it stays with the host until its next event */
			fprintf(stderr, "flowcutd: conntrack state %u: no memory to judge it after "
				"the ruleset change (%zu waiting)\n", nfct_get_attr_u32(ct, ATTR_ID),
				rj->nasked);
			return;
		}
		rj->asked = a;
		rj->asked_cap = cap;
	}
	off_orig_of(ct, &rj->asked[rj->nasked++]);
}

/* Makes the state's connection in the fast path, one round trip: 0 or off_prepare()'s errors. */
static int
make(struct fd_offload *o, const struct nf_conntrack *ct, bool cut)
{
	struct fc_cmd_flow_create c;
	struct fc_ans_conn_id ans = { 0 };
	struct off_entry *e;
	int rc;

	if (!cut && rj_unmarking(o)) {
		rj_ask(o, ct);	/* its bit may be the old rules': judged once they are cleared */
		return -EAGAIN;
	}
	rc = off_prepare(o, ct, cut, &c, &e);
	if (rc != 0)
		return rc;
	rc = off_call(o, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), &ans, sizeof(ans));
	return off_enter(o, e, rc, ans.id);
}

/* Offloads the state if it qualifies and has a path (or waits for one). */
void
off_offload(struct fd_offload *o, const struct nf_conntrack *ct)
{
	(void)make(o, ct, false);
}

int
fd_offload_try(struct fd_offload *o, const struct nf_conntrack *ct)
{
	return make(o, ct, false);
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
	if (e->cut) {
		/* it drops: it stays while its sender sends, and ages out */
		HASH_DELETE(hh_ct, o->by_ct, e);
		e->in_ct = false;	/* a new state may take the id */
		return;
	}
	rc = off_reclaim(o, e->fp_id);
	if (rc != 0 && rc != -ENOENT)	/* it may still forward: take everything out */
		off_lost_track(o, "CONN_RECLAIM_FP of a state gone", rc);
	off_forget(o, e);
	o->st.removed++;
}

/*
 * An event is not the state to judge: it carries what changed (one that
 * only sets the mark - the rules passed a connection again, after a
 * ruleset change or once it came back to the host - has no TCP state in
 * it), and it may be older than the state (a FIN 14 us after the
 * handshake: the ESTABLISHED event is read when the state is FIN_WAIT
 * already).  A state the event says may qualify - our bit in its mark, not
 * offloaded - is read whole, now, and judged as it is.
 */
static void
event_update(struct fd_offload *o, const struct nf_conntrack *ct)
{
	struct nf_conntrack *whole;

	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit) ||
	    off_find_state(o, ct) != NULL)
		return;			/* it would not qualify, or is in already */
	whole = o->ct.get(o->ct.ctx, ct);
	if (whole == NULL)
		return;			/* gone: its DESTROY follows */
	off_offload(o, whole);
	nfct_destroy(whole);
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
		event_update(o, ct);
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
 * the size of the table: issue 14's bound), and so is the keeping of the
 * cut connections.  The rest is a job of fd_offload_work, at most
 * upd_budget (FD_OFFLOAD_UPDATES_PER_TURN) posted updates a turn, flushed
 * each turn:
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
		while (rj->leaving != NULL) {	/* the resync's dump fixes their states up */
			struct off_entry *e = rj->leaving;

			rj->leaving = e->ext_next;
			off_free_entry(e);
		}
		free(rj->asked);
		rj->asked = NULL;
		rj->nasked = rj->asked_cap = rj->asked_next = 0;
	}
	rj->phase = OFF_RJ_IDLE;
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
	struct off_entry *e, *next;

	HASH_ITER(hh_fp, o->by_fp, e, next) {
		if (e->cut)
			continue;	/* made again at the new revision: dropping on */
		off_unlink(o, e);
		e->ext_next = o->rj.leaving;
		o->rj.leaving = e;
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
	struct nf_conntrack *t;

	(void)rc;
	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit))
		return;		/* not the old rules' (any more) */
	if (o->upd_budget > 0) {
		rj_post(o, ct, nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO), false);
		return;
	}
	if (rj->ncarry == rj->carry_cap) {
		size_t cap = rj->carry_cap ? 2 * rj->carry_cap : 64;
		struct nf_conntrack **c = realloc(rj->carry, cap * sizeof(*c));

		if (c == NULL)
			goto lost;
		rj->carry = c;
		rj->carry_cap = cap;
	}
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

	while (o->upd_budget > 0 && (e = o->rj.leaving) != NULL) {
		o->rj.leaving = e->ext_next;
		rj_post(o, e->tuple, e->l4proto, true);
		off_free_entry(e);
	}
	if (o->rj.leaving == NULL) {
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

	if (o == NULL)
		return NULL;
	o->cmds = *cmds;
	o->ct = *ct;
	o->route = *route;
	o->nhops = nhops;
	o->cfg = *cfg;
	o->ct_read = UINT_MAX;
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
	rj_end(o, false);
	off_forget_all(o);
	waiting_clear(o);
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

	/* read whole (fewer than asked): our updates' own events are behind us */
	o->ct_read = rc >= 0 && rc < FD_OFFLOAD_EVENTS_PER_TURN ? UINT_MAX : (unsigned int)(rc > 0 ? rc : 0);
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

/* One reclaim of a resync's page: its answer, and the connection's idle time at its end. */
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
 * A connection the resync took out (`ci` as the page read it, `idle_s`
 * from its final counts): its state leaves (P - idle), the bit kept (the
 * resync's dump offloads it again if it still qualifies).  An entry of
 * ours, or a flowcutd before's (by key, if its state is on T_long).
 * Counted in resync_taken_out when its state lives on.
 */
static void
resync_leave(struct fd_offload *o, const struct fc_conn_info *ci, uint64_t idle_s)
{
	struct off_entry *e = off_find_fp(o, ci->id);

	if (e != NULL ? off_leave(o, e, idle_s, false) == 0 && !e->cut
		      : orphan_leave(o, &ci->mf[0].key, idle_s, false) == 1)
		o->st.resync_taken_out++;
}

/*
 * One page of connections out, the commands in flight together: 0 or
 * -EIO.  A cut one stays, dropping (it is all it can do), noted held; so
 * does one a flowcutd before this one cut (adopt_cut).  Each taken out
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

void
fd_offload_resync(struct fd_offload *o)
{
	struct fc_cmd_range r = { .first = 0, .max = FC_RANGE_MAX };

	struct nf_conntrack **all;
	uint64_t adopted = o->st.cut_adopted, t0 = off_now_ns(o);
	size_t n;
	int rc;

	o->st.resyncs++;
	o->need_resync = true;	/* until it got through */
	/*
	 * A ruleset change's job still clearing bits: this dump clears them
	 * all instead (marks_stale); one judging what asked: this dump
	 * judges every state.
	 */
	if (rj_unmarking(o))
		o->marks_stale = true;
	rj_end(o, false);
	o->ct.drain(o->ct.ctx);	/* older than the dump below */
	/* nothing in the fast path may outlive its state: take everything out */
	for (;;) {
		struct fc_ans_range a;
		rc = off_call(o, FC_CMD_CONN_READ_RANGE, &r, sizeof(r), &a, sizeof(a));

		if (rc != 0 || a.count > FC_RANGE_MAX)
			return;		/* try again later; forget nothing yet */
		if (a.count == 0)
			break;
		if (reclaim_all(o, &a) != 0)
			return;
		if (a.next <= r.first)
			break;
		r.first = a.next;
	}
	if (o->st.cut_adopted > adopted) {
		printf("flowcutd: %" PRIu64 " connections dropping in the fast path, cut before "
		       "this flowcutd: taken up, dropping on\n", o->st.cut_adopted - adopted);
		fflush(stdout);
	}
	off_forget_uncut(o);		/* but the cut ones the fast path still holds */
	waiting_clear(o);		/* the dump below has them */
	fd_nhop_reset(o->nhops);	/* programmed again as connections need them */
	o->need_resync = false;
	/*
	 * then what conntrack holds; after a ruleset change that did not
	 * finish (marks_stale), its bits are the old rules', not a judgement:
	 * cleared, and nothing offloaded until the new rules set them again
	 */
	rc = o->ct.dump(o->ct.ctx, &all, &n);
	if (rc != 0)
		fprintf(stderr, "flowcutd: conntrack dump incomplete: %zu states %s, the rest when "
			"their next event comes\n", n, o->marks_stale ? "with their bits cleared"
							   : "offloaded from");
	for (size_t i = 0; i < n; i++) {
		uint8_t l4 = nfct_get_attr_u8(all[i], ATTR_ORIG_L4PROTO);

		if (!o->marks_stale)
			off_offload(o, all[i]);
		else if (nfct_get_attr_u32(all[i], ATTR_MARK) & o->cfg.mark_bit)
			off_ct_unmark(o, all[i]);
		/*
		 * On T_long and not offloaded (any more): a flowcutd before
		 * offloaded it, and its connection left the fast path
		 * unseen (aged out while no flowcutd ran, an event lost):
		 * P, its idle time unknown.
		 */
		if (nfct_attr_is_set(all[i], ATTR_TIMEOUT) &&
		    nfct_get_attr_u32(all[i], ATTR_TIMEOUT) > off_p(o, l4) &&
		    off_find_state(o, all[i]) == NULL)
			(void)leave_state(o, all[i], l4, 0, false);
	}
	if (rc == 0)
		o->marks_stale = false;
	fd_ct_dump_free(all, n);
	o->st.resync_last_ms = (off_now_ns(o) - t0) / 1000000u;
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
			(void)orphan_leave(o, &ev->key[0], off_idle_s(o, ev->stats), true);
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
	fd_offload_paths(o);	/* a route change's look at every path */
	/* the FIFO's head is the first due: nothing due, nothing done; what the unmark left */
	if (budget > o->upd_budget)
		budget = o->upd_budget;
	while (budget > 0 && (e = o->ext) != NULL && e->due_ms <= now_ms) {
		int rc;

		budget--;
		off_ext_del(o, e);
		if (e->cut)
			continue;	/* cut since: no state */
		rc = o->ct.timeout(o->ct.ctx, e->tuple, off_t_long(o, e->l4proto));
		if (rc == -ENOENT) {	/* gone without a DESTROY we saw (lost, or never sent) */
			state_gone(o, e->ct_id, e->tuple);
			continue;
		}
		if (rc == 0)
			o->st.extended++;
		else	/* tried again in a minute: it has 12 h left */
			fprintf(stderr, "flowcutd: conntrack state %u: extending its timeout to %u s: "
				"%s\n", e->ct_id, off_t_long(o, e->l4proto), strerror(-rc));
		off_ext_add(o, e, now_ms + (rc == 0 ? OFF_EXTEND_MS : 60000u));
	}
}

int
fd_offload_ruleset_changed(struct fd_offload *o)
{
	struct fc_ans_cfg cfg;
	struct fc_cmd_rev rev;
	int rc;

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
	const struct off_entry *e = o->ext;

	/* the paths job waits for a resync, which makes every path anew */
	return o->rj.phase != OFF_RJ_IDLE ||
	       (!o->need_resync && (o->paths_changed || o->paths_left > 0 || o->neigh_resolved)) ||
	       (e != NULL && e->due_ms <= off_now_ns(o) / 1000000u);
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
}

