/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_turn: the binding's turn, and all of its face but the cut's:
 * open and close, conntrack's events and the coprocessor's, the work of a
 * turn (the paths job, the resync, the rejudging job, the extensions, the
 * first frames read back), a ruleset change, the settings, the stats.  It
 * alone calls the jobs (fd_offload_paths, _sync, _rejudge, _kept); they and
 * it call the verbs (fd_offload.c) and the table, never back up.
 */
#include "fd_offload_priv.h"

#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

/* State `ct_id` (its original tuple in `ct`) is gone: out of the fast path at once. */
static void
state_gone(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct off_entry *e = off_find_ct(o, ct_id, ct);
	int w = off_waiting_find(o, ct_id, ct), rc;

	if (w >= 0) {
		nfct_destroy(o->waiting[w].tuple);
		o->waiting[w] = o->waiting[--o->nwaiting];
	}
	if (e == NULL)
		return;
	if (e->pending) {
		/* its create's answer reclaims it; a new state may take the id */
		e->after = OFF_AFTER_GONE;
		off_unpend(o, e);
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
		(void)off_make(j->o, whole, j->t0_ns, false);
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
		(void)off_make(o, ct, t0_ns, true);	/* off_find_state found none above */
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
	off_rj_end(o, false);
	off_sync_free(o);
	off_forget_all(o);
	off_table_free(o);
	off_waiting_clear(o);
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
	if (rc >= 0 && rc < FD_OFFLOAD_EVENTS_PER_TURN && !off_rj_unmarking(o))
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
			off_orphan_leave(o, &ev->key[0], off_idle_s(o, ev->stats), true, false);
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
	off_rj_step(o);		/* a ruleset change's unmark first */
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
	off_rj_end(o, true);
	off_rj_unlink_uncut(o);
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
