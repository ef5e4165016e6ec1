/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp: see fp.h for the contract.
 *
 * Libraries doing the work: rte_hash (the microflow table, lock-free
 * readers), rte_rcu_qsbr and its defer queue (freeing a connection's slot
 * and hash keys only after every worker has let go), rte_ring (the free
 * slot list), rte_seqcount (next hops read whole by workers), rte_mbuf.
 * Written here: the decision itself, the TCP window check, and RFC 1624
 * incremental checksum updates (DPDK 22.11 only recomputes checksums in
 * full, which costs a pass over the payload).
 */
#include "fp.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>
#include <rte_seqcount.h>


#define FP_NS_PER_S 1000000000ull
#define LIF_NONE 0xffff
#define NAME_MAX_LEN 16
#define FP_GIVEN_BACK_RING 1024	/* a worker's give-backs not yet reported */
#define TCP_MAX_ACKWIN 66000	/* conntrack's MAXACKWINCONST */

/* struct fp_lif_rt.flags */
#define LIF_PRESENT		0x1u
#define LIF_ADMIN_DISABLED	0x2u
#define LIF_OFFLOAD_DISABLED	0x4u

/* A LIF as workers read it: each field is loaded on its own. */
struct fp_lif_rt {
	uint32_t flags;
	uint16_t port;
	uint16_t vlan;
	uint16_t mtu;
	uint8_t mac[6];
};

/* A next hop; workers read it whole under the seqcount. */
struct fp_nhop_rt {
	rte_seqcount_t sc;
	uint32_t rev;
	struct fp_nhop nh;
};

/*
 * One direction's TCP tracking, written only by the worker that sees
 * this direction (conntrack's tcp_in_window, picked up mid-stream).
 */
struct fp_tcp_dir {
	uint32_t end;		/* highest seq + len sent */
	uint32_t maxwin;	/* largest window advertised, scaled */
	uint32_t rmaxend;	/* highest ack + window advertised: the peer's limit */
	uint32_t dup_ack;	/* the last ACK, to count repeats */
	uint32_t dup_end;
	uint16_t dup_win;
	uint16_t dup_sack;	/* its SACK blocks (digest) */
	uint8_t dup_cnt;
	uint8_t seen;		/* 1 once a segment set the fields above */
	uint8_t wscale;		/* this sender's window scale (control, at create) */
	uint8_t pad;
};

/* One microflow, one cache line. */
struct fp_mflow {
	/* written by the worker that sees this direction */
	uint64_t last_seen;
	uint64_t packets;
	uint64_t bytes;
	struct fp_tcp_dir tcp;
	/* written by the control thread */
	uint32_t nhop;
	uint32_t nhop_rev;
	uint16_t timeout_s;
	uint8_t action;
	uint8_t active;
} __rte_cache_aligned;
_Static_assert(sizeof(struct fp_mflow) == RTE_CACHE_LINE_SIZE, "a microflow is one line");

struct fp_conn {
	uint8_t state;		/* enum fp_conn_state; worker: VALID -> INVALID */
	uint8_t verdict;
	uint8_t reason;		/* the give-back's winner, after its state change; NONE before */
	uint8_t reported;	/* control: GIVEN_BACK event sent */
	uint8_t nat;		/* bit d: direction d's frames leave rewritten */
	uint32_t fw_rev;
	uint32_t gen;		/* climbs each time the slot is freed */
	uint64_t given_back_at;	/* the give-back's winner, before its reason */
	int32_t key_pos[2];	/* the keys' positions in the hash, -1 none */
	struct fp_mflow mf[2];
} __rte_cache_aligned;
_Static_assert(sizeof(struct fp_conn) == 3 * RTE_CACHE_LINE_SIZE,
	       "a connection is a header line and two microflow lines");

struct fp_worker {
	struct fp *fp;
	unsigned int id;
	rte_seqcount_t sc;		/* a burst's counts appear all at once */
	uint64_t cnt[FC_CNT_MAX];	/* this worker's, published per burst */
	struct rte_ring *given_back;	/* (gen << 32 | slot) it gave back: to report */
} __rte_cache_aligned;

struct fp {
	char name[NAME_MAX_LEN + 1];
	uint32_t cfg;
	uint32_t fw_rev;
	uint32_t max_conns;
	uint32_t max_nhops;
	uint32_t max_workers;
	uint32_t nconns;
	uint32_t sweep_cursor;
	uint64_t terminal_ns;
	struct rte_hash *h;
	struct rte_ring *free_slots;
	struct rte_rcu_qsbr *qsbr;
	struct rte_rcu_qsbr_dq *dq;
	struct fp_conn *conns;
	struct fp_nhop_rt *nhops;
	struct fp_worker **workers;
	uint16_t (*lif_of)[FP_VLAN_MAX + 1];	/* [port][vlan] -> LIF id */
	uint16_t port_lifs[FP_MAX_PORTS];	/* LIFs on each port */
	struct fp_lif_rt lifs[FP_MAX_LIFS];
	uint64_t cnt_base[FC_CNT_MAX];		/* counts at the last clear */
};

/* ---------------------------------------------------------------- */
/* small helpers                                                     */

static inline uint8_t
ld8(const uint8_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
st8(uint8_t *p, uint8_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline uint32_t
ld32(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint64_t
ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void
st64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Sequence-space comparisons (RFC 1982), as the kernel's before()/after(). */
static inline bool
seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

/* The hash's data word: slot and direction. */
static inline void *
slot_data(uint32_t slot, unsigned int dir)
{
	return (void *)(((uintptr_t)slot << 1) | dir);
}

static inline fp_conn_id
conn_id(const struct fp *fp, uint32_t slot)
{
	return (uint64_t)fp->conns[slot].gen << 32 | slot;
}

static void *
fp_zmalloc(struct fp *fp, const char *what, size_t size, int socket)
{
	char name[RTE_MEMZONE_NAMESIZE];

	snprintf(name, sizeof(name), "%s_%s", fp->name, what);
	return rte_zmalloc_socket(name, size, RTE_CACHE_LINE_SIZE, socket);
}

/* ---------------------------------------------------------------- */
/* checksums (RFC 1624)                                              */

/*
 * Adds the 16-bit words of p (len even) to sum, each complemented when
 * `neg`.  One's complement sums do not depend on byte order, so the words
 * are taken as they lie in memory and the result is stored back the same
 * way.
 */
static inline uint32_t
csum_acc(uint32_t sum, const void *p, unsigned int len, bool neg)
{
	const uint8_t *b = p;

	for (unsigned int i = 0; i < len; i += 2) {
		uint16_t w;

		memcpy(&w, b + i, 2);
		sum += neg ? (uint16_t)~w : w;
	}
	return sum;
}

/* HC' = ~(~HC + ~m + m'), with diff = sum(~m) + sum(m') (RFC 1624 eqn 3). */
static inline void
csum_apply(uint8_t *field, uint32_t diff)
{
	uint16_t hc;
	uint32_t s;

	memcpy(&hc, field, 2);
	s = (uint16_t)~hc + diff;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	hc = (uint16_t)~s;
	memcpy(field, &hc, 2);
}

/* ---------------------------------------------------------------- */
/* create / destroy                                                  */

static void
free_slots_fn(void *p, void *e, unsigned int n)
{
	struct fp *fp = p;
	uint32_t *slots = e;

	for (unsigned int i = 0; i < n; i++) {
		struct fp_conn *c = &fp->conns[slots[i]];

		for (unsigned int d = 0; d < 2; d++) {
			if (c->key_pos[d] >= 0)
				rte_hash_free_key_with_position(fp->h, c->key_pos[d]);
			c->key_pos[d] = -1;
		}
		c->gen++;
		__atomic_store_n(&c->state, FP_CONN_FREE, __ATOMIC_RELEASE);
		rte_ring_sp_enqueue_elem(fp->free_slots, &slots[i], sizeof(uint32_t));
	}
}

struct fp *
fp_create(const struct fp_params *p)
{
	char name[RTE_RING_NAMESIZE];
	struct fp *fp;
	size_t qsz;

	if (p == NULL || p->name == NULL || p->name[0] == '\0' ||
	    strlen(p->name) > NAME_MAX_LEN || p->max_conns == 0 ||
	    p->max_conns > (1u << 30) || p->max_nhops == 0 ||
	    p->max_workers == 0 || p->max_workers > RTE_MAX_LCORE) {
		rte_errno = EINVAL;
		errno = EINVAL;
		return NULL;
	}
	fp = rte_zmalloc_socket("fp", sizeof(*fp), RTE_CACHE_LINE_SIZE, p->socket_id);
	if (fp == NULL)
		goto nomem;
	snprintf(fp->name, sizeof(fp->name), "%s", p->name);
	fp->cfg = FC_CFG_BOOT;
	fp->max_conns = p->max_conns;
	fp->max_nhops = p->max_nhops;
	fp->max_workers = p->max_workers;
	fp->terminal_ns = p->terminal_ns ? p->terminal_ns : FP_DEFAULT_TERMINAL_NS;

	fp->conns = fp_zmalloc(fp, "conns", sizeof(*fp->conns) * (size_t)p->max_conns,
			       p->socket_id);
	fp->nhops = fp_zmalloc(fp, "nhops", sizeof(*fp->nhops) * (size_t)p->max_nhops,
			       p->socket_id);
	fp->workers = fp_zmalloc(fp, "workers", sizeof(*fp->workers) * p->max_workers,
				 p->socket_id);
	fp->lif_of = fp_zmalloc(fp, "lifmap", sizeof(*fp->lif_of) * FP_MAX_PORTS,
				p->socket_id);
	if (fp->conns == NULL || fp->nhops == NULL || fp->workers == NULL ||
	    fp->lif_of == NULL)
		goto fail;
	memset(fp->lif_of, 0xff, sizeof(*fp->lif_of) * FP_MAX_PORTS);
	for (uint32_t i = 0; i < p->max_conns; i++)
		fp->conns[i].key_pos[0] = fp->conns[i].key_pos[1] = -1;
	for (uint32_t i = 0; i < p->max_nhops; i++)
		rte_seqcount_init(&fp->nhops[i].sc);

	qsz = rte_rcu_qsbr_get_memsize(p->max_workers);
	fp->qsbr = fp_zmalloc(fp, "qsbr", qsz, p->socket_id);
	if (fp->qsbr == NULL || rte_rcu_qsbr_init(fp->qsbr, p->max_workers) != 0)
		goto fail;

	snprintf(name, sizeof(name), "%s_free", fp->name);
	fp->free_slots = rte_ring_create_elem(name, sizeof(uint32_t), p->max_conns,
					      p->socket_id,
					      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (fp->free_slots == NULL)
		goto fail;
	for (uint32_t i = 0; i < p->max_conns; i++)
		rte_ring_sp_enqueue_elem(fp->free_slots, &i, sizeof(i));

	snprintf(name, sizeof(name), "%s_ct", fp->name);
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = RTE_MAX(2 * p->max_conns, 16u),
		.key_len = sizeof(struct fp_key),
		.hash_func = rte_hash_crc,
		.socket_id = p->socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	fp->h = rte_hash_create(&hp);
	if (fp->h == NULL)
		goto fail;

	snprintf(name, sizeof(name), "%s_dq", fp->name);
	struct rte_rcu_qsbr_dq_parameters dp = {
		.name = name,
		.flags = RTE_RCU_QSBR_DQ_MT_UNSAFE,
		.size = p->max_conns,
		.esize = sizeof(uint32_t),
		.trigger_reclaim_limit = 64,
		.max_reclaim_size = 256,
		.free_fn = free_slots_fn,
		.p = fp,
		.v = fp->qsbr,
	};
	fp->dq = rte_rcu_qsbr_dq_create(&dp);
	if (fp->dq == NULL)
		goto fail;
	return fp;

nomem:
	rte_errno = ENOMEM;
	errno = ENOMEM;
	return NULL;
fail: {
	int err = rte_errno ? rte_errno : ENOMEM;

	fp_destroy(fp);
	rte_errno = err;
	errno = err;
	return NULL;
}
}

void
fp_destroy(struct fp *fp)
{
	if (fp == NULL)
		return;
	rte_rcu_qsbr_dq_delete(fp->dq);	/* frees what it still holds */
	rte_hash_free(fp->h);
	rte_ring_free(fp->free_slots);
	rte_free(fp->qsbr);
	rte_free(fp->lif_of);
	rte_free(fp->workers);
	rte_free(fp->nhops);
	rte_free(fp->conns);
	rte_free(fp);
}

/* ---------------------------------------------------------------- */
/* configuration word, revision                                      */

int
fp_cfg_set(struct fp *fp, uint32_t word)
{
	if (word & ~FC_CFG_ALL)
		return -EINVAL;
	__atomic_store_n(&fp->cfg, word, __ATOMIC_RELEASE);
	return 0;
}

uint32_t
fp_cfg_get(const struct fp *fp)
{
	return __atomic_load_n(&fp->cfg, __ATOMIC_ACQUIRE);
}

void
fp_fw_rev_set(struct fp *fp, uint32_t rev)
{
	__atomic_store_n(&fp->fw_rev, rev, __ATOMIC_RELEASE);
}

uint32_t
fp_fw_rev_get(const struct fp *fp)
{
	return __atomic_load_n(&fp->fw_rev, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- */
/* LIFs and next hops                                                */

int
fp_lif_set(struct fp *fp, uint16_t id, const struct fp_lif *lif)
{
	struct fp_lif_rt *l;
	uint16_t other;
	uint32_t flags;
	bool was;

	if (id >= FP_MAX_LIFS || lif->port >= FP_MAX_PORTS ||
	    lif->vlan > FP_VLAN_MAX || lif->mtu < 68)
		return -EINVAL;
	other = fp->lif_of[lif->port][lif->vlan];
	if (other != LIF_NONE && other != id)
		return -EEXIST;
	l = &fp->lifs[id];
	was = l->flags & LIF_PRESENT;
	/* in place: a worker sees the old or the new flags and MAC, never no LIF */
	flags = LIF_PRESENT | (lif->admin_disabled ? LIF_ADMIN_DISABLED : 0) |
		(lif->offload_disabled ? LIF_OFFLOAD_DISABLED : 0);
	for (int i = 0; i < 6; i++)
		st8(&l->mac[i], lif->mac[i]);
	l->mtu = lif->mtu;
	__atomic_store_n(&l->flags, flags, __ATOMIC_RELEASE);
	if (other == id)
		return 0;	/* same port and VLAN */
	/* hooked on the new port/VLAN before it leaves the old */
	__atomic_store_n(&fp->port_lifs[lif->port], fp->port_lifs[lif->port] + 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&fp->lif_of[lif->port][lif->vlan], id, __ATOMIC_RELEASE);
	if (was) {
		__atomic_store_n(&fp->lif_of[l->port][l->vlan], LIF_NONE, __ATOMIC_RELEASE);
		__atomic_store_n(&fp->port_lifs[l->port], fp->port_lifs[l->port] - 1,
				 __ATOMIC_RELAXED);
	}
	l->port = lif->port;
	l->vlan = lif->vlan;
	return 0;
}

int
fp_lif_get(const struct fp *fp, uint16_t id, struct fp_lif *out)
{
	const struct fp_lif_rt *l;

	if (id >= FP_MAX_LIFS || !(fp->lifs[id].flags & LIF_PRESENT))
		return -ENOENT;
	l = &fp->lifs[id];
	out->port = l->port;
	out->vlan = l->vlan;
	out->mtu = l->mtu;
	memcpy(out->mac, l->mac, 6);
	out->admin_disabled = !!(l->flags & LIF_ADMIN_DISABLED);
	out->offload_disabled = !!(l->flags & LIF_OFFLOAD_DISABLED);
	return 0;
}

int
fp_nhop_set(struct fp *fp, uint32_t id, const struct fp_nhop *nh, bool reused)
{
	struct fp_nhop_rt *n;

	if (id >= fp->max_nhops || nh->port >= FP_MAX_PORTS ||
	    nh->vlan > FP_VLAN_MAX || nh->mtu < 68)
		return -EINVAL;
	n = &fp->nhops[id];
	rte_seqcount_write_begin(&n->sc);
	/*
	 * Another neighbour: the host says so, or another port or VLAN.  The
	 * same neighbour keeps the revision whatever else changes: connections
	 * made while it was unresolved forward once it is, and a new MAC for
	 * it is followed.
	 */
	if (reused || n->nh.port != nh->port || n->nh.vlan != nh->vlan)
		n->rev++;
	n->nh = *nh;
	rte_seqcount_write_end(&n->sc);
	return 0;
}

int
fp_nhop_get(const struct fp *fp, uint32_t id, struct fp_nhop *out, uint32_t *rev)
{
	if (id >= fp->max_nhops)
		return -EINVAL;
	*out = fp->nhops[id].nh;
	if (rev != NULL)
		*rev = fp->nhops[id].rev;
	return 0;
}

/* A worker's consistent copy of a next hop. */
static inline void
nhop_read(const struct fp_nhop_rt *n, struct fp_nhop *out, uint32_t *rev)
{
	uint32_t sn;

	do {
		sn = rte_seqcount_read_begin(&n->sc);
		*out = n->nh;
		*rev = n->rev;
	} while (rte_seqcount_read_retry(&n->sc, sn));
}

/* ---------------------------------------------------------------- */
/* connections (control)                                             */

static bool
key_valid(const struct fp_key *k)
{
	static const uint8_t zero[12];

	if (k->family != 4 && k->family != 6)
		return false;
	if (k->family == 4 &&
	    (memcmp(k->src + 4, zero, 12) != 0 || memcmp(k->dst + 4, zero, 12) != 0))
		return false;
	if (memcmp(k->pad, zero, sizeof(k->pad)) != 0)
		return false;
	if (k->port >= FP_MAX_PORTS || k->vlan > FP_VLAN_MAX)
		return false;
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6)
		return k->dport <= 0xff &&
		       (k->proto == IPPROTO_ICMP) == (k->family == 4);	/* ICMPv6 only in v6 */
	if (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP)
		return k->sport == 0 && k->dport == 0;
	return true;
}

static bool
is_icmp(uint8_t proto)
{
	return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
}

/*
 * Does a frame matching `own` leave rewritten?  It leaves with the other
 * direction's key reversed: src = other.dst, dst = other.src, ports (ICMP:
 * the identifier) likewise.
 */
static bool
key_needs_nat(const struct fp_key *own, const struct fp_key *other)
{
	if (memcmp(own->src, other->dst, 16) != 0 || memcmp(own->dst, other->src, 16) != 0)
		return true;
	if (is_icmp(own->proto))
		return own->sport != other->sport;
	return own->sport != other->dport || own->dport != other->sport;
}

static int
conn_spec_check(const struct fp *fp, const struct fp_conn_spec *s, bool nat[2])
{
	const struct fp_key *k0 = &s->mf[0].key, *k1 = &s->mf[1].key;

	if (s->verdict >= FC_VERDICT_MAX)
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow_spec *m = &s->mf[d];

		if (!key_valid(&m->key) || m->action >= FC_ACTION_MAX ||
		    m->tcp_wscale > 14 || m->nhop >= fp->max_nhops)
			return -EINVAL;
	}
	if (k0->family != k1->family || k0->proto != k1->proto ||
	    memcmp(k0, k1, sizeof(*k0)) == 0)
		return -EINVAL;
	nat[0] = key_needs_nat(k0, k1);
	nat[1] = key_needs_nat(k1, k0);
	if ((nat[0] || nat[1]) && k0->proto != IPPROTO_TCP && k0->proto != IPPROTO_UDP &&
	    !is_icmp(k0->proto))
		return -EOPNOTSUPP;
	return 0;
}

/* Takes a free slot, reclaiming finished grace periods if none is left. */
static int
slot_take(struct fp *fp, uint32_t *slot)
{
	if (rte_ring_sc_dequeue_elem(fp->free_slots, slot, sizeof(*slot)) == 0)
		return 0;
	rte_rcu_qsbr_dq_reclaim(fp->dq, UINT32_MAX, NULL, NULL, NULL);
	if (rte_ring_sc_dequeue_elem(fp->free_slots, slot, sizeof(*slot)) == 0)
		return 0;
	return -ENOSPC;
}

/*
 * Teardown, phase one: stop matching, unhook the keys; phase two (the
 * slot and key positions back to their free lists) runs in free_slots_fn
 * once every worker has passed a quiescent state.
 */
static void
conn_unhook(struct fp *fp, uint32_t slot)
{
	struct fp_conn *c = &fp->conns[slot];

	__atomic_store_n(&c->state, FP_CONN_RECLAIM, __ATOMIC_RELEASE);
	for (unsigned int d = 0; d < 2; d++) {
		void *key;

		if (c->key_pos[d] >= 0 &&
		    rte_hash_get_key_with_position(fp->h, c->key_pos[d], &key) == 0)
			rte_hash_del_key(fp->h, key);
	}
	/* the queue holds max_conns: a slot is in it at most once */
	rte_rcu_qsbr_dq_enqueue(fp->dq, &slot);
}

/*
 * The keys a new connection needs: -EEXIST if one belongs to a connection
 * of the firewall revision in force.  One that belongs to a connection of
 * an older revision is taken from it: that connection forwards nothing any
 * more (its frames go to the host), the host that set the new revision
 * has let it go, and it would otherwise keep the connection out of the
 * fast path until the sweep reached it.  It goes without an event.
 */
static int
keys_claim(struct fp *fp, const struct fp_conn_spec *s)
{
	uint32_t rev = fp_fw_rev_get(fp), stale[2];
	unsigned int nstale = 0;

	for (unsigned int d = 0; d < 2; d++) {
		void *data;
		uint32_t slot;

		if (rte_hash_lookup_data(fp->h, &s->mf[d].key, &data) < 0)
			continue;
		slot = (uint32_t)((uintptr_t)data >> 1);
		if (fp->conns[slot].fw_rev == rev)
			return -EEXIST;
		if (nstale == 0 || stale[0] != slot)
			stale[nstale++] = slot;
	}
	for (unsigned int i = 0; i < nstale; i++) {
		conn_unhook(fp, stale[i]);
		fp->nconns--;
	}
	return 0;
}

int
fp_conn_create(struct fp *fp, const struct fp_conn_spec *s, uint64_t now,
	       fp_conn_id *id)
{
	struct fp_conn *c;
	bool nat[2];
	uint32_t slot;
	int rc;

	rc = conn_spec_check(fp, s, nat);
	if (rc != 0)
		return rc;
	rc = keys_claim(fp, s);
	if (rc != 0)
		return rc;
	rc = slot_take(fp, &slot);
	if (rc != 0)
		return rc;

	c = &fp->conns[slot];
	c->verdict = s->verdict;
	c->reason = FC_REASON_NONE;
	c->reported = 0;
	c->fw_rev = fp_fw_rev_get(fp);
	c->given_back_at = 0;
	c->key_pos[0] = c->key_pos[1] = -1;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow_spec *ms = &s->mf[d];
		struct fp_mflow *m = &c->mf[d];
		struct fp_nhop nh;

		memset(m, 0, sizeof(*m));
		m->last_seen = now;
		m->nhop = ms->nhop;
		fp_nhop_get(fp, ms->nhop, &nh, &m->nhop_rev);
		m->timeout_s = ms->timeout_s ? ms->timeout_s : FP_DEFAULT_TIMEOUT_S;
		m->action = ms->action;
		m->active = 1;
		m->tcp.wscale = ms->tcp_wscale;
	}
	c->nat = (uint8_t)(nat[0] | nat[1] << 1);
	/* both keys in, then valid: a reader never sees half a connection match */
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_key *k = &s->mf[d].key;

		rc = rte_hash_add_key_data(fp->h, k, slot_data(slot, d));
		if (rc != 0) {
			conn_unhook(fp, slot);
			return rc == -ENOSPC ? -ENOSPC : -EINVAL;
		}
		c->key_pos[d] = rte_hash_lookup(fp->h, k);
	}
	__atomic_store_n(&c->state, FP_CONN_VALID, __ATOMIC_RELEASE);
	fp->nconns++;
	*id = conn_id(fp, slot);
	return 0;
}

/* The live connection a handle names, or NULL. */
static struct fp_conn *
conn_of(const struct fp *fp, fp_conn_id id)
{
	uint32_t slot = FP_CONN_SLOT(id);
	struct fp_conn *c;
	uint8_t st;

	if (slot >= fp->max_conns)
		return NULL;
	c = &fp->conns[slot];
	st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	if ((st != FP_CONN_VALID && st != FP_CONN_INVALID) || c->gen != (uint32_t)(id >> 32))
		return NULL;
	return c;
}

int
fp_conn_verdict_set(struct fp *fp, fp_conn_id id, uint8_t verdict)
{
	struct fp_conn *c = conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (verdict >= FC_VERDICT_MAX)
		return -EINVAL;
	st8(&c->verdict, verdict);
	return 0;
}

int
fp_conn_modify(struct fp *fp, fp_conn_id id, const struct fp_conn_mod *mod)
{
	struct fp_conn *c = conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (mod->mask & ~(uint32_t)(FP_MOD_ACTION | FP_MOD_TIMEOUT | FP_MOD_ACTIVE))
		return -EINVAL;
	if ((mod->mask & FP_MOD_ACTION) &&
	    (mod->action[0] >= FC_ACTION_MAX || mod->action[1] >= FC_ACTION_MAX))
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++) {
		struct fp_mflow *m = &c->mf[d];

		if (mod->mask & FP_MOD_ACTION)
			st8(&m->action, mod->action[d]);
		if (mod->mask & FP_MOD_TIMEOUT)
			__atomic_store_n(&m->timeout_s, mod->timeout_s[d] ? mod->timeout_s[d]
					 : FP_DEFAULT_TIMEOUT_S, __ATOMIC_RELAXED);
		if (mod->mask & FP_MOD_ACTIVE)
			st8(&m->active, mod->active[d]);
	}
	return 0;
}

int
fp_conn_revive(struct fp *fp, fp_conn_id id)
{
	struct fp_conn *c = conn_of(fp, id);
	uint8_t expected = FP_CONN_INVALID;

	if (c == NULL)
		return -ENOENT;
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != FP_CONN_INVALID)
		return -EALREADY;
	c->reported = 0;
	st8(&c->reason, FC_REASON_NONE);	/* the next give-back writes its own */
	/* workers leave a given-back connection's tracking alone (fp.h): learn anew */
	for (unsigned int d = 0; d < 2; d++) {
		struct fp_tcp_dir *t = &c->mf[d].tcp;
		uint8_t wscale = t->wscale;

		memset(t, 0, sizeof(*t));
		t->wscale = wscale;
	}
	if (!__atomic_compare_exchange_n(&c->state, &expected, FP_CONN_VALID, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return -EALREADY;
	return 0;
}

static void
stats_read(const struct fp_conn *c, struct fp_mflow_stats st[2])
{
	for (unsigned int d = 0; d < 2; d++) {
		st[d].packets = ld64(&c->mf[d].packets);
		st[d].bytes = ld64(&c->mf[d].bytes);
		st[d].last_seen = ld64(&c->mf[d].last_seen);
	}
}

int
fp_conn_remove(struct fp *fp, fp_conn_id id, struct fp_mflow_stats final[2])
{
	struct fp_conn *c = conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (final != NULL)
		stats_read(c, final);
	conn_unhook(fp, FP_CONN_SLOT(id));
	fp->nconns--;
	return 0;
}

static void
key_at(const struct fp *fp, int32_t pos, struct fp_key *out)
{
	void *k;

	if (pos >= 0 && rte_hash_get_key_with_position(fp->h, pos, &k) == 0)
		memcpy(out, k, sizeof(*out));
	else
		memset(out, 0, sizeof(*out));
}

static void
info_fill(const struct fp *fp, uint32_t slot, struct fp_conn_info *out)
{
	const struct fp_conn *c = &fp->conns[slot];
	struct fp_mflow_stats st[2];

	stats_read(c, st);
	out->id = conn_id(fp, slot);
	out->state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	out->verdict = ld8(&c->verdict);
	out->reason = ld8(&c->reason);
	out->fw_rev = c->fw_rev;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow *m = &c->mf[d];

		key_at(fp, c->key_pos[d], &out->mf[d].key);
		out->mf[d].action = ld8(&m->action);
		out->mf[d].active = ld8(&m->active);
		out->mf[d].nat = (c->nat >> d) & 1;
		out->mf[d].timeout_s = m->timeout_s;
		out->mf[d].nhop = m->nhop;
		out->mf[d].stats = st[d];
	}
}

int
fp_conn_get(const struct fp *fp, fp_conn_id id, struct fp_conn_info *out)
{
	if (conn_of(fp, id) == NULL)
		return -ENOENT;
	info_fill(fp, FP_CONN_SLOT(id), out);
	return 0;
}

int
fp_conn_lookup(const struct fp *fp, const struct fp_key *key, fp_conn_id *id,
	       unsigned int *dir)
{
	void *data;
	uint32_t slot;

	if (rte_hash_lookup_data(fp->h, key, &data) < 0)
		return -ENOENT;
	slot = (uint32_t)((uintptr_t)data >> 1);
	if (conn_of(fp, conn_id(fp, slot)) == NULL)
		return -ENOENT;
	*id = conn_id(fp, slot);
	if (dir != NULL)
		*dir = (uintptr_t)data & 1;
	return 0;
}

int
fp_conn_next(const struct fp *fp, uint32_t *slot, struct fp_conn_info *out)
{
	for (uint32_t s = *slot; s < fp->max_conns; s++) {
		uint8_t st = __atomic_load_n(&fp->conns[s].state, __ATOMIC_ACQUIRE);

		if (st == FP_CONN_VALID || st == FP_CONN_INVALID) {
			info_fill(fp, s, out);
			*slot = s + 1;
			return 0;
		}
	}
	*slot = fp->max_conns;
	return -ENOENT;
}

uint32_t
fp_conn_count(const struct fp *fp)
{
	return fp->nconns;
}

uint32_t
fp_conn_capacity(const struct fp *fp)
{
	return fp->max_conns;
}

/* ---------------------------------------------------------------- */
/* sweep                                                             */

static bool
conn_idle(const struct fp_conn *c, uint64_t now)
{
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t seen = ld64(&c->mf[d].last_seen);
		uint64_t tmo = (uint64_t)c->mf[d].timeout_s * FP_NS_PER_S;

		if (now < seen || now - seen <= tmo)
			return false;
	}
	return true;
}

static void
event_fill(const struct fp *fp, uint32_t slot, uint8_t type, uint8_t reason,
	   struct fp_event *e)
{
	const struct fp_conn *c = &fp->conns[slot];

	e->type = type;
	e->reason = reason;
	e->id = conn_id(fp, slot);
	key_at(fp, c->key_pos[0], &e->key[0]);
	key_at(fp, c->key_pos[1], &e->key[1]);
	stats_read(c, e->stats);
}

unsigned int
fp_sweep(struct fp *fp, uint64_t now, uint32_t budget, struct fp_event *ev,
	 unsigned int max_ev)
{
	uint32_t rev = fp_fw_rev_get(fp);
	unsigned int nev = 0;

	rte_rcu_qsbr_dq_reclaim(fp->dq, UINT32_MAX, NULL, NULL, NULL);
	if (budget == 0 || budget > fp->max_conns)
		budget = fp->max_conns;
	for (uint32_t n = 0; n < budget; n++) {
		uint32_t slot = fp->sweep_cursor;
		struct fp_conn *c = &fp->conns[slot];
		uint8_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		uint8_t gb_reason = __atomic_load_n(&c->reason, __ATOMIC_ACQUIRE);
		bool report = false, remove = false;
		uint8_t type = 0, reason = 0;

		if (st == FP_CONN_INVALID && gb_reason == FC_REASON_NONE) {
			/* its worker is writing the time and reason: next round */
		} else if (st == FP_CONN_VALID || st == FP_CONN_INVALID) {
			if (st == FP_CONN_INVALID && !c->reported)
				report = true;
			if (c->fw_rev != rev) {
				remove = true;
				type = FC_EV_REMOVED;
				reason = FC_REASON_FW_REV;
			} else if (st == FP_CONN_INVALID) {
				uint64_t t = ld64(&c->given_back_at);

				if (now >= t && now - t >= fp->terminal_ns) {
					remove = true;
					type = FC_EV_REMOVED;
					reason = FC_REASON_TERMINAL;
				}
			} else if (conn_idle(c, now)) {
				remove = true;
				type = FC_EV_AGED_OUT;
				reason = FC_REASON_IDLE;
			}
		}
		if (nev + report + remove > max_ev)
			break;		/* come back to this slot with room */
		if (report) {
			event_fill(fp, slot, FC_EV_GIVEN_BACK, gb_reason, &ev[nev++]);
			c->reported = 1;
		}
		if (remove) {
			event_fill(fp, slot, type, reason, &ev[nev++]);
			conn_unhook(fp, slot);
			fp->nconns--;
		}
		fp->sweep_cursor = slot + 1 == fp->max_conns ? 0 : slot + 1;
	}
	return nev;
}

bool
fp_given_back_pending(const struct fp *fp)
{
	for (uint32_t w = 0; w < fp->max_workers; w++) {
		struct fp_worker *wk = __atomic_load_n(&fp->workers[w], __ATOMIC_ACQUIRE);

		if (wk != NULL && !rte_ring_empty(wk->given_back))
			return true;
	}
	return false;
}

unsigned int
fp_given_back(struct fp *fp, struct fp_event *ev, unsigned int max_ev)
{
	unsigned int nev = 0;

	for (uint32_t w = 0; w < fp->max_workers && nev < max_ev; w++) {
		struct fp_worker *wk = __atomic_load_n(&fp->workers[w], __ATOMIC_ACQUIRE);
		uint64_t ent[64];
		unsigned int n;

		if (wk == NULL)
			continue;
		/* one event at most per entry: take no more than there is room for */
		n = rte_ring_sc_dequeue_burst_elem(wk->given_back, ent, sizeof(ent[0]),
						   RTE_MIN(max_ev - nev, RTE_DIM(ent)), NULL);
		for (unsigned int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)ent[i];
			struct fp_conn *c = &fp->conns[slot];
			uint8_t reason;

			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != FP_CONN_INVALID ||
			    c->gen != (uint32_t)(ent[i] >> 32) || c->reported)
				continue;	/* revived, removed or reported since */
			reason = __atomic_load_n(&c->reason, __ATOMIC_ACQUIRE);
			if (reason == FC_REASON_NONE)
				continue;	/* revived and given back again: its own entry follows */
			event_fill(fp, slot, FC_EV_GIVEN_BACK, reason, &ev[nev++]);
			c->reported = 1;
		}
	}
	return nev;
}

/* ---------------------------------------------------------------- */
/* counters                                                          */

void
fp_counters_read(const struct fp *fp, uint64_t out[FC_CNT_MAX])
{
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		out[c] = 0;
	for (unsigned int i = 0; i < fp->max_workers; i++) {
		const struct fp_worker *w = __atomic_load_n(&fp->workers[i], __ATOMIC_ACQUIRE);

		uint64_t snap[FC_CNT_MAX];
		uint32_t sn;

		if (w == NULL)
			continue;
		do {
			sn = rte_seqcount_read_begin(&w->sc);
			for (unsigned int c = 0; c < FC_CNT_MAX; c++)
				snap[c] = ld64(&w->cnt[c]);
		} while (rte_seqcount_read_retry(&w->sc, sn));
		for (unsigned int c = 0; c < FC_CNT_MAX; c++)
			out[c] += snap[c];
	}
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		out[c] -= ld64(&fp->cnt_base[c]);
}

void
fp_counters_clear(struct fp *fp)
{
	uint64_t now[FC_CNT_MAX];

	/* read the totals (read subtracts the old base, so add it back) */
	fp_counters_read(fp, now);
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		st64(&fp->cnt_base[c], fp->cnt_base[c] + now[c]);
}

/* ---------------------------------------------------------------- */
/* workers                                                           */

struct fp_worker *
fp_worker_create(struct fp *fp, unsigned int id)
{
	char name[RTE_RING_NAMESIZE];
	struct fp_worker *w;
	uint32_t gb_size;

	if (id >= fp->max_workers) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (fp->workers[id] != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	w = rte_zmalloc_socket("fp_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (w == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	w->fp = fp;
	w->id = id;
	rte_seqcount_init(&w->sc);
	snprintf(name, sizeof(name), "%s_gb%u", fp->name, id & 0xffff);
	/* no more than the table can give back at once (less one: rte_ring) */
	gb_size = rte_align32pow2(fp->max_conns < 2 ? 2 : fp->max_conns);
	if (gb_size > FP_GIVEN_BACK_RING)
		gb_size = FP_GIVEN_BACK_RING;
	w->given_back = rte_ring_create_elem(name, sizeof(uint64_t), gb_size, SOCKET_ID_ANY,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (w->given_back == NULL) {
		rte_free(w);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_rcu_qsbr_thread_register(fp->qsbr, id) != 0) {
		rte_ring_free(w->given_back);
		rte_free(w);
		rte_errno = EINVAL;
		return NULL;
	}
	__atomic_store_n(&fp->workers[id], w, __ATOMIC_RELEASE);
	return w;
}

void
fp_worker_destroy(struct fp_worker *w)
{
	struct fp *fp;

	if (w == NULL)
		return;
	fp = w->fp;
	/* its counts leave the sum: take them off the base so reads keep them */
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		fp->cnt_base[c] -= w->cnt[c];
	rte_rcu_qsbr_thread_unregister(fp->qsbr, w->id);
	__atomic_store_n(&fp->workers[w->id], NULL, __ATOMIC_RELEASE);
	rte_ring_free(w->given_back);	/* what it held the sweep reports */
	rte_free(w);
}

/* Per-burst context: the counts kept in locals and published once. */
struct burst {
	struct fp *fp;
	struct fp_worker *w;
	uint32_t cfg;
	uint32_t rev;
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
	if (lif_id == LIF_NONE)
		return FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN;
	lif = &fp->lifs[lif_id];
	flags = __atomic_load_n(&lif->flags, __ATOMIC_ACQUIRE);
	if (flags & LIF_ADMIN_DISABLED)
		return FC_CNT_FROM_WIRE_DROP_LIF_DISABLED;
	if (flags & LIF_OFFLOAD_DISABLED)
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
	for (int i = 0; i < 6; i++)
		if (f[i] != ld8(&lif->mac[i]))
			return FC_CNT_FROM_WIRE_TO_KN_L2_NOT_LIF_MAC;
	pp->key.port = port;
	return FC_CNT_MAX;
}

/*
 * Step 6's give-back.  The compare-and-swap decides who gives back (the two
 * directions may be on two workers, the control thread may revive); only
 * the winner writes the time and then the reason, which the control thread
 * reads as "written" (FC_REASON_NONE until then).  The slot goes on this
 * worker's ring so the control thread reports it at once; a full ring
 * loses nothing, the sweep finds it.
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
	st64(&c->given_back_at, b->now);
	__atomic_store_n(&c->reason, reason, __ATOMIC_RELEASE);
	ent = (uint64_t)c->gen << 32 | slot;
	rte_ring_sp_enqueue_elem(b->w->given_back, &ent, sizeof(ent));
}

/*
 * Step 6 for one segment: conntrack's window checks (tcp_in_window), for a
 * connection picked up mid-stream.  snd is this direction's state, rcv the
 * other's (read only: another worker may own it).  Returns false when
 * TCP_SEQ_CHK is on and the segment lies outside the window; otherwise
 * updates snd and returns true.
 */
static inline bool
tcp_track(struct fp_mflow *snd_mf, const struct fp_mflow *rcv_mf,
	  const struct fp_parsed *pp, bool seq_chk)
{
	struct fp_tcp_dir *snd = &snd_mf->tcp;
	const struct fp_tcp_dir *rcv = &rcv_mf->tcp;
	uint32_t seq = pp->tcp_seq, ack = pp->tcp_ack;
	uint32_t end = seq + pp->tcp_payload;
	uint32_t win = (uint32_t)pp->tcp_win << snd_mf->tcp.wscale;
	bool has_ack = pp->tcp_flags & FP_TCP_ACK;

	if (!snd->seen) {
		__atomic_store_n(&snd->end, end, __ATOMIC_RELAXED);
		__atomic_store_n(&snd->maxwin, win ? win : 1, __ATOMIC_RELAXED);
		__atomic_store_n(&snd->rmaxend, has_ack ? ack + win : 0, __ATOMIC_RELAXED);
		/* the other direction's worker reads the fields only after this */
		__atomic_store_n(&snd->seen, 1, __ATOMIC_RELEASE);
		return true;
	}
	if (seq_chk && __atomic_load_n(&rcv->seen, __ATOMIC_ACQUIRE)) {
		uint32_t rcv_end = ld32(&rcv->end);
		uint32_t rcv_maxwin = ld32(&rcv->maxwin);
		uint32_t ackwin = snd->maxwin > TCP_MAX_ACKWIN ? snd->maxwin : TCP_MAX_ACKWIN;

		if (seq_after(seq, ld32(&rcv->rmaxend)) ||		/* beyond the window */
		    seq_before(end, snd->end - rcv_maxwin) ||		/* before it */
		    (has_ack && (seq_after(ack, rcv_end) ||		/* acks the future */
				 seq_before(ack, rcv_end - ackwin))))	/* acks the past */
			return false;
	}
	if (seq_after(end, snd->end))
		__atomic_store_n(&snd->end, end, __ATOMIC_RELAXED);
	if (win > snd->maxwin)
		__atomic_store_n(&snd->maxwin, win, __ATOMIC_RELAXED);
	if (has_ack && (snd->rmaxend == 0 || seq_after(ack + win, snd->rmaxend)))
		__atomic_store_n(&snd->rmaxend, ack + win, __ATOMIC_RELAXED);
	return true;
}

/*
 * Counts a repeat of the last ACK; true at the FP_MAX_RETRANS-th in a row.
 * "The same ACK" is the same ack, end (seq + length), window and SACK
 * blocks: a receiver in loss recovery repeats its ACK while its SACK
 * blocks grow (data still arrives, the connection works), which is not a
 * stalled sender; a stalled or cut one repeats itself exactly.
 */
static inline bool
tcp_dup_ack(struct fp_tcp_dir *t, const struct fp_parsed *pp)
{
	uint32_t end = pp->tcp_seq + pp->tcp_payload;
	uint16_t sack = (uint16_t)(pp->tcp_sack ^ pp->tcp_sack >> 16);

	if (t->dup_cnt && t->dup_ack == pp->tcp_ack && t->dup_end == end &&
	    t->dup_win == pp->tcp_win && t->dup_sack == sack) {
		if (++t->dup_cnt >= FP_MAX_RETRANS) {
			t->dup_cnt = 0;
			return true;
		}
		return false;
	}
	t->dup_ack = pp->tcp_ack;
	t->dup_end = end;
	t->dup_win = pp->tcp_win;
	t->dup_sack = sack;
	t->dup_cnt = 1;
	return false;
}

/* NAT: the frame leaves with the other direction's key reversed. */
static inline void
nat_rewrite(const struct fp *fp, int32_t other_pos, uint8_t *f,
	    const struct fp_parsed *pp, uint32_t *ip_diff)
{
	struct fp_key *o;
	const unsigned int alen = pp->key.family == 4 ? 4 : 16;
	uint8_t *l3 = f + pp->l3_off, *l4 = f + pp->l4_off;
	uint8_t *src = l3 + (alen == 4 ? 12 : 8), *dst = src + alen;
	uint32_t addr_diff = 0, l4_diff = 0;
	uint8_t *csum = NULL;

	rte_hash_get_key_with_position(fp->h, other_pos, (void **)&o);
	/* pseudo-header: the addresses */
	addr_diff = csum_acc(addr_diff, src, alen, true);
	addr_diff = csum_acc(addr_diff, dst, alen, true);
	memcpy(src, o->dst, alen);
	memcpy(dst, o->src, alen);
	addr_diff = csum_acc(addr_diff, src, alen, false);
	addr_diff = csum_acc(addr_diff, dst, alen, false);
	if (alen == 4)
		*ip_diff += addr_diff;

	switch (pp->key.proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		l4_diff = csum_acc(addr_diff, l4, 4, true);
		memcpy(l4, &o->dport, 2);
		memcpy(l4 + 2, &o->sport, 2);
		l4_diff = csum_acc(l4_diff, l4, 4, false);
		csum = l4 + (pp->key.proto == IPPROTO_TCP ? 16 : 6);
		if (pp->key.proto == IPPROTO_UDP) {
			uint16_t z;

			memcpy(&z, csum, 2);
			if (z == 0)
				return;		/* UDP without checksum stays so (IPv6: RFC 6935) */
			csum_apply(csum, l4_diff);
			memcpy(&z, csum, 2);
			if (z == 0)
				memset(csum, 0xff, 2);	/* RFC 768: 0 is sent as ~0 */
			return;
		}
		break;
	default:	/* ICMP / ICMPv6 echo: the identifier */
		l4_diff = alen == 16 ? addr_diff : 0;	/* ICMPv6 has a pseudo-header */
		l4_diff = csum_acc(l4_diff, l4 + 4, 2, true);
		memcpy(l4 + 4, &o->sport, 2);
		l4_diff = csum_acc(l4_diff, l4 + 4, 2, false);
		csum = l4 + 2;
		break;
	}
	csum_apply(csum, l4_diff);
}

/*
 * Step 7's forwarding: next hop, TTL, MTU, then the rewrite.  Returns the
 * counter of the outcome: `ok` when the frame leaves on out->dest.
 */
static inline enum fc_cnt
forward(struct burst *b, struct fp_conn *c, unsigned int dir, struct rte_mbuf *m,
	const struct fp_parsed *pp, enum fc_cnt ok, uint16_t *dest)
{
	const struct fp_mflow *mf = &c->mf[dir];
	struct fp_nhop nh;
	uint32_t rev, ip_diff = 0;
	uint8_t *f, *l3;
	int vlan_delta;

	nhop_read(&b->fp->nhops[mf->nhop], &nh, &rev);
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
		ip_diff = csum_acc(0, l3 + 8, 2, true);
		l3[8]--;
		ip_diff = csum_acc(ip_diff, l3 + 8, 2, false);
	} else {
		l3[7]--;
	}
	if (c->nat & (1u << dir))
		nat_rewrite(b->fp, c->key_pos[dir ^ 1], f, pp, &ip_diff);
	if (pp->key.family == 4)
		csum_apply(l3 + 10, ip_diff);

	/* L2: the next hop's MACs and VLAN */
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
	return ok;
}

/* Steps 4 to 7 for a frame whose microflow was found. */
static inline enum fc_cnt
decide(struct burst *b, uintptr_t data, struct rte_mbuf *m,
       const struct fp_parsed *pp, uint16_t *dest)
{
	struct fp_conn *c = &b->fp->conns[data >> 1];
	unsigned int dir = data & 1;
	struct fp_mflow *mf = &c->mf[dir];
	uint8_t st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	uint8_t action, verdict;
	bool ips_on = b->cfg & FC_CFG_IPS;

	/* step 4 */
	if (!ld8(&mf->active))
		return FC_CNT_FROM_WIRE_TO_KN_MFLOW_NOT_ACTIVE;
	if (st != FP_CONN_VALID)
		return st == FP_CONN_RECLAIM ? FC_CNT_FROM_WIRE_TO_KN_CONN_RECLAIM_PENDING
					     : FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID;
	if (c->fw_rev != b->rev)
		return FC_CNT_FROM_WIRE_TO_KN_FW_REV_MISMATCH;

	st64(&mf->last_seen, b->now);
	st64(&mf->packets, mf->packets + 1);
	st64(&mf->bytes, mf->bytes + pp->l3_len);
	action = ld8(&mf->action);
	verdict = ld8(&c->verdict);

	/* step 5: a cut connection drops everything, whatever its flags */
	if (action == FC_ACTION_IPS && ips_on && verdict == FC_VERDICT_DROP)
		return FC_CNT_FROM_WIRE_DROP_IPS_VERDICT;

	/* step 6 */
	if (pp->key.proto == IPPROTO_TCP) {
		if (pp->tcp_flags & (FP_TCP_FIN | FP_TCP_SYN | FP_TCP_RST)) {
			give_back(b, (uint32_t)(data >> 1), FC_REASON_TCP_FIN_SYN_RST);
			return FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST;
		}
		if (!tcp_track(mf, &c->mf[dir ^ 1], pp, b->cfg & FC_CFG_TCP_SEQ_CHK))
			return FC_CNT_FROM_WIRE_TO_KN_TCP_SEQ_CHK_INVALID;
		if (tcp_dup_ack(&mf->tcp, pp)) {
			give_back(b, (uint32_t)(data >> 1), FC_REASON_TCP_MAX_RETRANS);
			return FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS;
		}
	}

	/* step 7 */
	switch (action) {
	case FC_ACTION_DROP:
		return FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION;
	case FC_ACTION_FWD:
		return forward(b, c, dir, m, pp, FC_CNT_FROM_WIRE_TO_WIRE, dest);
	case FC_ACTION_IPS:
		if (!ips_on)
			return (b->cfg & FC_CFG_DROP_IF_IPS_OFF)
				? FC_CNT_FROM_WIRE_DROP_IPS_DISABLED
				: forward(b, c, dir, m, pp, FC_CNT_FROM_WIRE_TO_WIRE_IPS_DISABLED,
					  dest);
		if (verdict == FC_VERDICT_SEND_TO_IPS)
			return FC_CNT_FROM_WIRE_TO_IPS_INSPECT;
		return forward(b, c, dir, m, pp, FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU, dest);
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
	struct burst b = {
		.fp = fp,
		.w = w,
		.cfg = __atomic_load_n(&fp->cfg, __ATOMIC_ACQUIRE),
		.rev = __atomic_load_n(&fp->fw_rev, __ATOMIC_ACQUIRE),
		.now = now,
	};
	struct fp_parsed pp[FP_BURST_MAX];
	const void *keys[FP_BURST_MAX];
	void *data[FP_BURST_MAX];
	uint8_t idx[FP_BURST_MAX];
	uint64_t hits = 0;
	unsigned int nk = 0;

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
	if (nk > 0)
		rte_hash_lookup_bulk_data(fp->h, keys, nk, &hits, data);
	for (unsigned int j = 0; j < nk; j++)
		if (hits & (1ull << j)) {
			const struct fp_conn *c = &fp->conns[(uintptr_t)data[j] >> 1];

			rte_prefetch0(c);
			rte_prefetch0(&c->mf[(uintptr_t)data[j] & 1]);
		}
	for (unsigned int j = 0; j < nk; j++) {
		unsigned int i = idx[j];
		uint16_t dest = FP_DEST_HOST;
		enum fc_cnt why;

		if (!(hits & (1ull << j))) {
			verdict_out(&b, &out[i], FP_DEST_HOST, FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL);
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
