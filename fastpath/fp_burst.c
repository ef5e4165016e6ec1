/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_burst: the packet path, on the workers - a burst of frames from the
 * wire decided in coprocessor-model.md's order (ports and gate, parse,
 * one bulk lookup and its misses - a new connection's SYN metered, the
 * connection's state, the cut, the host's lease, TCP, the action),
 * and the frames that go to the wire rewritten in place: L2 from the next
 * hop, TTL / hop limit, NAT (fp_nat.h), checksums.  Also a frame the host
 * sends out (fp_from_host).  See fp.h for the contract.
 *
 * Never blocks, never takes a lock, allocates nothing; counts per burst
 * in locals and publishes once.  A frame reads one line of its
 * connection, its direction's microflow (fp_priv.h: the state, verdict
 * and NAT bit are there, the firewall revision in the hash's data word);
 * TCP's window check also reads the other direction's tracking, and a
 * give-back writes the header.  A connection read here was found in the
 * hash during this burst's RCU online period: its slot is not reused
 * before the burst ends.
 */
#include <netinet/in.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>

#include "fp_priv.h"

_Static_assert(FP_BURST_MAX <= RTE_HASH_LOOKUP_BULK_MAX, "a burst is one bulk lookup");
_Static_assert(FP_BURST_MAX <= 64, "hits fit a 64-bit mask");

/* Per-burst context: the counts kept in locals and published once. */
struct burst {
	struct fp *fp;
	struct fp_worker *w;
	uint32_t cfg;
	uint32_t rev;
	bool closed;		/* the host's lease lapsed */
	bool metered;		/* a new-connection limit is set */
	uint64_t now;
	uint32_t cnt[FC_CNT_MAX];
};

static inline void
verdict_out(struct burst *b, struct fp_out *o, uint16_t dest, enum fc_cnt why)
{
	o->dest = dest;
	o->reason = (uint16_t)why;
	b->cnt[why]++;
}

static inline uint16_t
dest_of(enum fc_cnt why)
{
	switch (fc_cnt_class(why)) {
	case FC_CLS_DROP:
		return FP_DEST_DROP;
	case FC_CLS_IPS:
		return FP_DEST_IPS;
	default:
		return why == FC_CNT_FROM_WIRE_TO_KN_AUX ? FP_DEST_HOST_AUX : FP_DEST_HOST;
	}
}

/*
 * Steps 1 and 2 and parsing.  Returns FC_CNT_MAX when the frame needs a
 * lookup, else the counter of its outcome.
 */
static inline enum fc_cnt
pre_lookup(const struct burst *b, uint16_t port, const struct rte_mbuf *m,
	   struct fp_parsed *pp)
{
	const struct fp *fp = b->fp;
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct fp_lif_rt *lif;
	uint16_t vlan = 0, lif_id;
	uint32_t flags;

	if (m->data_len >= 18 && f[12] == 0x81 && f[13] == 0x00)
		vlan = (uint16_t)((f[14] << 8 | f[15]) & 0x0fff);
	if (port >= FP_MAX_PORTS)
		return FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN;
	lif_id = __atomic_load_n(&fp->lif_of[port][vlan], __ATOMIC_ACQUIRE);
	if (lif_id == FP_LIF_NONE)
		return FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN;
	lif = &fp->lifs[lif_id];
	flags = __atomic_load_n(&lif->flags, __ATOMIC_ACQUIRE);
	if (flags & FP_LIF_ADMIN_DISABLED)
		return FC_CNT_FROM_WIRE_DROP_LIF_DISABLED;
	if (flags & FP_LIF_OFFLOAD_DISABLED)
		return FC_CNT_FROM_WIRE_TO_KN_LIF_OFFLOAD_DISABLED;
	if (!(b->cfg & FC_CFG_OFFLOAD))
		return FC_CNT_FROM_WIRE_TO_KN_FORCED;
	switch (fp_parse_frame(f, m->data_len, m->pkt_len, pp)) {
	case FP_PARSE_FLOW:
		break;
	case FP_PARSE_NO_FLOW:
		return FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL;
	case FP_PARSE_NON_IP:
		return FC_CNT_FROM_WIRE_TO_KN_NON_IP;
	case FP_PARSE_FRAG:
		return FC_CNT_FROM_WIRE_TO_KN_IP_FRAG;
	default:
		return FC_CNT_FROM_WIRE_TO_KN_PARSE_ERROR;
	}
	if (fp_mac48(f) != __atomic_load_n(&lif->mac, __ATOMIC_RELAXED))
		return FC_CNT_FROM_WIRE_TO_KN_L2_NOT_LIF_MAC;
	pp->key.port = port;
	return FC_CNT_MAX;
}

/*
 * Step 3's miss, and flowcut's rule beyond the vendor's (fp.h): a TCP SYN
 * without ACK is metered by this worker's bucket; over the rate it drops.
 * Every other miss goes to the host unmetered.
 */
static inline enum fc_cnt
miss(struct burst *b, const struct fp_parsed *pp)
{
	struct rte_meter_srtcm *m = &b->w->new_meter;

	if (!b->metered || pp->key.proto != IPPROTO_TCP ||
	    (pp->tcp_flags & (FP_TCP_SYN | FP_TCP_ACK)) != FP_TCP_SYN)
		return FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL;
	/* a clock behind the bucket's (a caller's) adds nothing, never wraps */
	return rte_meter_srtcm_color_blind_check(m, &b->fp->new_prof,
						 b->now > m->time ? b->now : m->time,
						 1000) == RTE_COLOR_GREEN
		       ? FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL
		       : FC_CNT_FROM_WIRE_DROP_NEW_CONN_RATE;
}

/*
 * Step 6's give-back.  The compare-and-swap on the header's state decides
 * who gives back (the two directions may be on two workers, the control
 * thread may revive); only the winner marks both microflows' copies given
 * back (from VALID only: a removal's RECLAIM stays), then writes the time
 * and then the reason, which the control thread reads as "written"
 * (FC_REASON_NONE until then; fp_conn_revive waits for it).  The slot goes
 * on this worker's ring so the control thread reports it at once; a full ring
 * loses nothing (the enqueue's failure is left unchecked on purpose): the
 * sweep reports every given-back connection not yet reported.
 */
static inline void
give_back(struct burst *b, uint32_t slot, uint8_t reason)
{
	struct fp_conn *c = &b->fp->conns[slot];
	uint8_t expected = FP_CONN_VALID;
	uint64_t ent;

	if (!__atomic_compare_exchange_n(&c->state, &expected, FP_CONN_INVALID, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	for (unsigned int d = 0; d < 2; d++) {
		expected = FP_CONN_VALID;
		__atomic_compare_exchange_n(&c->mf[d].state, &expected, FP_CONN_INVALID, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	}
	st64(&c->given_back_at, b->now);
	__atomic_store_n(&c->reason, reason, __ATOMIC_RELEASE);
	ent = (uint64_t)c->gen << 32 | slot;
	rte_ring_sp_enqueue_elem(b->w->given_back, &ent, sizeof(ent));
}

/*
 * Step 7's forwarding: next hop, TTL, MTU, then the rewrite: L3/L4 in
 * place (TTL, NAT, checksums), then L2 (the next hop's MACs and VLAN).
 * Returns the counter of the outcome: `ok` when the frame leaves on *dest.
 */
/*
 * The first frame direction `dir` forwards: its stamp (fp_priv.h), once.
 * Out of line: a connection's frames call it once a direction.
 */
static __rte_noinline void
first_fwd(struct burst *b, struct fp_mflow *mf, uint32_t slot, unsigned int dir)
{
	uint64_t *at = &b->fp->conns[slot].first_fwd[dir];

	if (ld64(at) == 0)
		__atomic_store_n(at, b->now ? b->now : 1, __ATOMIC_RELEASE);
	st8(&mf->tcp.fwd, 1);
}

static __rte_always_inline enum fc_cnt
forward(struct burst *b, struct fp_mflow *mf, uint8_t ctl, uint32_t slot,
	unsigned int dir, struct rte_mbuf *m, const struct fp_parsed *pp, enum fc_cnt ok,
	uint16_t *dest)
{
	struct fp_nhop nh;
	uint32_t rev, ip_diff = 0;
	uint8_t *f, *l3;
	int vlan_delta;

	fp_nhop_read(&b->fp->nhops[mf->nhop], &nh, &rev);
	if (!nh.resolved)
		return FC_CNT_FROM_WIRE_TO_KN_NHOP_UNRESOLVED;
	if (rev != mf->nhop_rev)
		return FC_CNT_FROM_WIRE_TO_KN_NHOP_STALE;
	f = rte_pktmbuf_mtod(m, uint8_t *);
	l3 = f + pp->l3_off;
	if ((pp->key.family == 4 ? l3[8] : l3[7]) <= 1)
		return FC_CNT_FROM_WIRE_TO_KN_TTL_EXPIRED;
	if (pp->l3_len > nh.mtu)
		return FC_CNT_FROM_WIRE_TO_KN_MTU_EXCEEDED;
	vlan_delta = (nh.vlan ? 4 : 0) - (pp->tagged ? 4 : 0);
	if (vlan_delta > 0 && rte_pktmbuf_headroom(m) < (unsigned int)vlan_delta)
		return FC_CNT_FROM_WIRE_TO_KN_NO_HEADROOM;

	/* L3/L4 in place */
	if (pp->key.family == 4) {
		ip_diff = fp_csum_acc(0, l3 + 8, 2, true);
		l3[8]--;
		ip_diff = fp_csum_acc(ip_diff, l3 + 8, 2, false);
	} else {
		l3[7]--;
	}
	if (ctl & FP_MF_NAT)
		fp_nat_rewrite(f, pp, &b->fp->nat[slot][dir], &ip_diff);
	if (pp->key.family == 4)
		fp_csum_apply(l3 + 10, ip_diff);

	/*
	 * L2.  Neither call can fail: the headroom was checked above, and a
	 * tagged frame's first segment holds its 18-byte Ethernet header
	 * (fp_parse_frame found the IP header behind it).
	 */
	if (vlan_delta > 0)
		f = (uint8_t *)rte_pktmbuf_prepend(m, (uint16_t)vlan_delta);
	else if (vlan_delta < 0)
		f = (uint8_t *)rte_pktmbuf_adj(m, (uint16_t)-vlan_delta);
	memcpy(f, nh.dmac, 6);
	memcpy(f + 6, nh.smac, 6);
	if (nh.vlan) {
		f[12] = 0x81;
		f[13] = 0x00;
		f[14] = (uint8_t)(nh.vlan >> 8);
		f[15] = (uint8_t)nh.vlan;
	}
	*dest = nh.port;
	/* the one branch a frame the first-frame stamp costs, on this line */
	if (mf->tcp.fwd == 0)
		first_fwd(b, mf, slot, dir);
	return ok;
}

/* Steps 4 to 7 for a frame whose microflow was found. */
static inline enum fc_cnt
decide(struct burst *b, uintptr_t data, struct rte_mbuf *m,
       const struct fp_parsed *pp, uint16_t *dest)
{
	uint32_t slot = fp_data_slot(data);
	struct fp_conn *c = &b->fp->conns[slot];
	unsigned int dir = data & 1;
	struct fp_mflow *mf = &c->mf[dir];
	uint8_t st = __atomic_load_n(&mf->state, __ATOMIC_ACQUIRE);
	uint8_t ctl = ld8(&mf->ctl);
	uint8_t action = ctl & FP_MF_ACTION;
	uint8_t verdict = (ctl & FP_MF_VERDICT) >> FP_MF_VERDICT_SHIFT;
	bool ips_on = b->cfg & FC_CFG_IPS;
	bool cut = (action == FC_ACTION_IPS && ips_on && verdict == FC_VERDICT_DROP) ||
		   action == FC_ACTION_DROP;

	/*
	 * step 4.  A cut connection drops at any revision (flowcut's): from a
	 * new revision until the host has made its cut ones again at it, their
	 * frames stay here - dropping is safe whatever the rules say now.
	 */
	if (!(ctl & FP_MF_ACTIVE))
		return FC_CNT_FROM_WIRE_TO_KN_MFLOW_NOT_ACTIVE;
	if (st != FP_CONN_VALID)
		return st == FP_CONN_RECLAIM ? FC_CNT_FROM_WIRE_TO_KN_CONN_RECLAIM_PENDING
					     : FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID;
	if (fp_data_rev(data) != b->rev && !cut)
		return FC_CNT_FROM_WIRE_TO_KN_FW_REV_MISMATCH;

	st64(&mf->last_seen, b->now);
	st64(&mf->packets, mf->packets + 1);
	st64(&mf->bytes, mf->bytes + pp->l3_len);

	/*
	 * step 5: a cut connection drops everything, whatever its flags, before
	 * any TCP rule: never given back, its sender's retransmissions, FINs
	 * and RSTs stay here.  Cut as IPS (the verdict) or as FWD (the action).
	 */
	if (cut)
		return action == FC_ACTION_DROP ? FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION
						: FC_CNT_FROM_WIRE_DROP_IPS_VERDICT;

	/*
	 * step 5b (flowcut's): the host's lease lapsed - no one checks what
	 * the fast path holds, so what is not cut goes to the host's rules.
	 */
	if (b->closed)
		return FC_CNT_FROM_WIRE_TO_KN_LEASE_LAPSED;

	/* step 6 */
	if (pp->key.proto == IPPROTO_TCP) {
		if (pp->tcp_flags & (FP_TCP_FIN | FP_TCP_SYN | FP_TCP_RST)) {
			/* outside the window (a spoofed RST): the host judges it alone */
			if (!fp_tcp_may_give_back(&mf->tcp, &c->mf[dir ^ 1].tcp, pp))
				return FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW;
			give_back(b, slot, FC_REASON_TCP_FIN_SYN_RST);
			return FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST;
		}
		if (!fp_tcp_track(&mf->tcp, &c->mf[dir ^ 1].tcp, pp,
				  b->cfg & FC_CFG_TCP_SEQ_CHK))
			return FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID;
		if (fp_tcp_dup_ack(&mf->tcp, pp)) {
			give_back(b, slot, FC_REASON_TCP_MAX_RETRANS);
			return FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS;
		}
	}

	/* step 7 */
	switch (action) {
	case FC_ACTION_FWD:
		return forward(b, mf, ctl, slot, dir, m, pp, FC_CNT_FROM_WIRE_TO_WIRE, dest);
	case FC_ACTION_IPS:
		if (!ips_on)
			return (b->cfg & FC_CFG_DROP_IF_IPS_OFF)
				? FC_CNT_FROM_WIRE_DROP_IPS_DISABLED
				: forward(b, mf, ctl, slot, dir, m, pp,
					  FC_CNT_FROM_WIRE_TO_WIRE_IPS_DISABLED, dest);
		if (verdict == FC_VERDICT_SEND_TO_IPS)
			return FC_CNT_FROM_WIRE_TO_IPS_INSPECT;
		return forward(b, mf, ctl, slot, dir, m, pp,
			       FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, dest);
	default:
		return FC_CNT_FROM_WIRE_TO_KN_AUX;
	}
}

static inline void
publish(struct fp_worker *w, const uint32_t cnt[FC_CNT_MAX])
{
	rte_seqcount_write_begin(&w->sc);
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		if (cnt[c])
			st64(&w->cnt[c], w->cnt[c] + cnt[c]);
	rte_seqcount_write_end(&w->sc);
}

uint16_t
fp_process_burst(struct fp_worker *w, uint16_t port, struct rte_mbuf **pkts,
		 uint16_t n, uint64_t now, struct fp_out *out)
{
	struct fp *fp = w->fp;
	struct burst b = { .fp = fp, .w = w, .now = now };
	struct fp_parsed pp[FP_BURST_MAX];
	const void *keys[FP_BURST_MAX];
	void *data[FP_BURST_MAX];
	uint8_t idx[FP_BURST_MAX];
	uint64_t hits = 0;
	unsigned int nk = 0;

	/*
	 * The lease first, then the revision: the host reopens a lapsed lease
	 * only after its new revision (both stores release), so a burst that
	 * sees it reopened sees that revision too, never the old one.
	 */
	b.closed = __atomic_load_n(&fp->closed, __ATOMIC_ACQUIRE);
	b.rev = __atomic_load_n(&fp->fw_rev, __ATOMIC_ACQUIRE);
	b.cfg = __atomic_load_n(&fp->cfg, __ATOMIC_ACQUIRE);
	b.metered = __atomic_load_n(&fp->new_rate, __ATOMIC_ACQUIRE) != 0;
	if (n > FP_BURST_MAX)
		n = FP_BURST_MAX;
	rte_rcu_qsbr_thread_online(fp->qsbr, w->id);
	b.cnt[FC_CNT_FROM_WIRE_RX] = n;
	for (unsigned int i = 0; i < n; i++) {
		enum fc_cnt why = pre_lookup(&b, port, pkts[i], &pp[i]);

		if (why != FC_CNT_MAX) {
			verdict_out(&b, &out[i], dest_of(why), why);
			continue;
		}
		keys[nk] = &pp[i].key;
		idx[nk++] = (uint8_t)i;
	}
	/* -EINVAL only for a NULL table or nk outside 1..64 (asserted above) */
	if (nk > 0)
		rte_hash_lookup_bulk_data(fp->h, keys, nk, &hits, data);
	/* each hit's one line: its direction's microflow */
	for (unsigned int j = 0; j < nk; j++)
		if (hits & (1ull << j))
			rte_prefetch0(&fp->conns[fp_data_slot((uintptr_t)data[j])]
					       .mf[(uintptr_t)data[j] & 1]);
	for (unsigned int j = 0; j < nk; j++) {
		unsigned int i = idx[j];
		uint16_t dest = FP_DEST_HOST;
		enum fc_cnt why;

		if (!(hits & (1ull << j))) {
			why = miss(&b, &pp[i]);
			verdict_out(&b, &out[i], dest_of(why), why);
			continue;
		}
		why = decide(&b, (uintptr_t)data[j], pkts[i], &pp[i], &dest);
		verdict_out(&b, &out[i], fc_cnt_class(why) == FC_CLS_WIRE ? dest : dest_of(why),
			    why);
	}
	publish(w, b.cnt);
	rte_rcu_qsbr_thread_offline(fp->qsbr, w->id);
	return n;
}

uint16_t
fp_from_host(struct fp_worker *w, uint16_t port)
{
	const struct fp *fp = w->fp;
	bool known = port < FP_MAX_PORTS &&
		     __atomic_load_n(&fp->port_lifs[port], __ATOMIC_RELAXED) != 0;
	enum fc_cnt why = known ? FC_CNT_FROM_KN_TO_WIRE : FC_CNT_FROM_KN_DROP_LIF_UNKNOWN;

	rte_seqcount_write_begin(&w->sc);
	st64(&w->cnt[FC_CNT_FROM_KN_RX], w->cnt[FC_CNT_FROM_KN_RX] + 1);
	st64(&w->cnt[why], w->cnt[why] + 1);
	rte_seqcount_write_end(&w->sc);
	return known ? port : FP_DEST_DROP;
}
