/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_priv: what the fast path's own files share and nobody else sees -
 * struct fp and its tables, a connection's layout, the small atomic
 * helpers, and the few functions one room calls in another.
 *
 * The rooms (fastpath/README.md has the picture):
 *   fp_table.c     create/destroy, fw_cfg, the firewall revision, workers
 *   fp_lif.c       LIFs and next hops
 *   fp_conn.c      connections: create, modify, revive, remove, read;
 *                  two-phase teardown (fp_conn_unhook, fp_conn_free_slots)
 *   fp_sweep.c     aging and events (fp_sweep, fp_given_back)
 *   fp_counters.c  reading and clearing the workers' counters
 *   fp_burst.c     the packet path: the decision, forwarding, L2 rewrite
 *   fp_tcp.h       TCP tracking (plain structs, inline)
 *   fp_nat.h       NAT and incremental checksums (plain structs, inline)
 *
 * Threads are as fp.h says; each field below says who writes it.
 */
#ifndef FLOWCUT_FP_PRIV_H
#define FLOWCUT_FP_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_seqcount.h>

#include "fp.h"
#include "fp_nat.h"
#include "fp_tcp.h"

struct rte_hash;
struct rte_ring;
struct rte_rcu_qsbr;
struct rte_rcu_qsbr_dq;

#define FP_NS_PER_S 1000000000ull
#define FP_LIF_NONE 0xffff
#define FP_NAME_MAX_LEN 16
#define FP_GIVEN_BACK_RING 1024	/* a worker's give-backs not yet reported */

_Static_assert(FP_TCP_MAX_RETRANS == FP_MAX_RETRANS, "fp_tcp.h counts what fp.h promises");

/* struct fp_lif_rt.flags */
#define FP_LIF_PRESENT		0x1u
#define FP_LIF_ADMIN_DISABLED	0x2u
#define FP_LIF_OFFLOAD_DISABLED	0x4u

/* A LIF as workers read it: each field is loaded on its own. */
struct fp_lif_rt {
	uint32_t flags;
	uint16_t port;
	uint16_t vlan;
	uint64_t mac;		/* fp_mac48(): the MAC's 6 bytes, as one word */
	uint16_t mtu;
};

/* Six bytes of a MAC as one word, so a frame's destination is one compare. */
static inline uint64_t
fp_mac48(const uint8_t *m)
{
	uint64_t v = 0;

	memcpy(&v, m, 6);
	return v;
}

/* A next hop; workers read it whole under the seqcount (fp_nhop_read). */
struct fp_nhop_rt {
	rte_seqcount_t sc;
	uint32_t rev;
	struct fp_nhop nh;
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

/*
 * A connection.  Its NAT translation is not here: it would not fit the
 * header line for IPv6 (2 x 36 bytes), so it lives in fp->nat[slot], a
 * side array that only NATed connections touch (bit d of `nat` says
 * whether direction d reads fp->nat[slot][d]).
 */
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
	char name[FP_NAME_MAX_LEN + 1];
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
	struct fp_nat (*nat)[2];		/* [slot][dir], written at create */
	struct fp_nhop_rt *nhops;
	struct fp_worker **workers;
	uint16_t (*lif_of)[FP_VLAN_MAX + 1];	/* [port][vlan] -> LIF id */
	uint16_t port_lifs[FP_MAX_PORTS];	/* LIFs on each port */
	struct fp_lif_rt lifs[FP_MAX_LIFS];
	uint64_t cnt_base[FC_CNT_MAX];		/* counts at the last clear */
};

/* ---- small helpers ---- */

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

/* The hash's data word: slot and direction. */
static inline void *
fp_slot_data(uint32_t slot, unsigned int dir)
{
	return (void *)(((uintptr_t)slot << 1) | dir);
}

static inline uint32_t
fp_data_slot(uintptr_t data)
{
	return (uint32_t)(data >> 1);
}

static inline fp_conn_id
fp_conn_id_of(const struct fp *fp, uint32_t slot)
{
	return (uint64_t)fp->conns[slot].gen << 32 | slot;
}

/* A worker's consistent copy of a next hop. */
static inline void
fp_nhop_read(const struct fp_nhop_rt *n, struct fp_nhop *out, uint32_t *rev)
{
	uint32_t sn;

	do {
		sn = rte_seqcount_read_begin(&n->sc);
		*out = n->nh;
		*rev = n->rev;
	} while (rte_seqcount_read_retry(&n->sc, sn));
}

/* ---- between rooms (control thread) ---- */

/* fp_table.c: rte_zmalloc_socket under the name "<fp name>_<what>". */
void *fp_zmalloc(struct fp *fp, const char *what, size_t size, int socket);

/*
 * fp_conn.c: teardown, phase one - the connection in `slot` stops
 * matching, its keys leave the hash, and the slot waits for the workers'
 * grace period.  The caller counts it out of fp->nconns.
 */
void fp_conn_unhook(struct fp *fp, uint32_t slot);
/* fp_conn.c: teardown, phase two - the RCU defer queue's free function. */
void fp_conn_free_slots(void *p, void *e, unsigned int n);
/* fp_conn.c: the live connection a handle names, or NULL. */
struct fp_conn *fp_conn_of(const struct fp *fp, fp_conn_id id);
/* fp_conn.c: both directions' counts. */
void fp_conn_stats(const struct fp_conn *c, struct fp_mflow_stats st[2]);
/* fp_conn.c: the key at a hash position, zeroes if there is none. */
void fp_conn_key(const struct fp *fp, int32_t pos, struct fc_key *out);

#endif /* FLOWCUT_FP_PRIV_H */
