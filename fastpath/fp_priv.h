/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_priv: what the fast path's own files share and nobody else sees -
 * struct fp and its tables, a connection's layout, the small atomic
 * helpers, and the few functions one room calls in another.
 *
 * The rooms (fastpath/README.md has the picture):
 *   fp_table.c     create/destroy, fw_cfg, the firewall revision, the
 *                  host's lease, workers
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
#include <rte_meter.h>
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

/*
 * A microflow's `ctl` byte: what the packet path decides with, one load.
 * Written by the control thread only (read, changed, stored whole).
 */
#define FP_MF_ACTION		0x03u	/* enum fc_action */
#define FP_MF_ACTIVE		0x04u
#define FP_MF_VERDICT_SHIFT	3	/* the connection's verdict (both directions alike) */
#define FP_MF_VERDICT		(0x3u << FP_MF_VERDICT_SHIFT)
#define FP_MF_NAT		0x20u	/* this direction's frames leave rewritten */
_Static_assert(FC_ACTION_MAX - 1 <= FP_MF_ACTION, "an action fits its bits");
_Static_assert(FC_VERDICT_MAX - 1 <= (FP_MF_VERDICT >> FP_MF_VERDICT_SHIFT),
	       "a verdict fits its bits");

/*
 * One microflow, one cache line: a frame touches this line and no other
 * line of its connection (a TCP frame also reads the other direction's
 * tracking; a give-back writes the header).  `state` and the verdict in
 * `ctl` are copies of the connection's: see struct fp_conn.
 */
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
	uint8_t ctl;		/* FP_MF_*: action, active, verdict, NAT */
	/* the connection's state as this direction's frames read it */
	uint8_t state;
} __rte_cache_aligned;
_Static_assert(sizeof(struct fp_mflow) == RTE_CACHE_LINE_SIZE, "a microflow is one line");

/*
 * A connection: a header line, read by the control thread and written on
 * the rare paths (create, give-back, revive, removal), and one line per
 * direction, the only one its frames read.
 *
 * The state lives in the header (`state`, the one compare-and-swap that
 * decides a give-back) and as a copy in each microflow (`mf[d].state`,
 * what the packet path reads).  The copies follow the header this way:
 *   - the control thread writes the copies before the header: at create
 *     and revive (copies VALID, then the header VALID: a worker that sees
 *     its copy valid finds the header so, or about to be), and at removal
 *     (copies RECLAIM, then the header);
 *   - a worker gives back with the header's compare-and-swap VALID ->
 *     INVALID; only its winner then moves both copies VALID -> INVALID
 *     (compare-and-swap: a removal's RECLAIM stays), before it writes the
 *     time and the reason.  fp_conn_revive waits for that reason, so no
 *     mark of an old give-back lands on a revived connection.
 * The verdict is kept in both microflows' `ctl` (the control thread
 * writes both); the firewall revision, written once at create, is in the
 * header for the control thread and in the keys' hash data words for the
 * workers (fp_slot_data); NAT's translation is in fp->nat[slot], a side
 * array only NATed directions (FP_MF_NAT) read: it would not fit a line
 * for IPv6 (2 x 36 bytes).
 */
struct fp_conn {
	uint8_t state;		/* enum fp_conn_state; worker: VALID -> INVALID */
	uint8_t reason;		/* the give-back's winner, after its state change; NONE before */
	uint8_t reported;	/* control: GIVEN_BACK event sent */
	uint32_t fw_rev;
	uint32_t gen;		/* climbs each time the slot is freed */
	uint64_t given_back_at;	/* the give-back's winner, before its reason */
	int32_t key_pos[2];	/* the keys' positions in the hash, -1 none */
	/*
	 * Direction d's first frame forwarded (to the wire: FROM_WIRE_TO_WIRE*),
	 * the burst's `now` (1 for a burst at 0), 0 for none yet.  Written once,
	 * by the worker that sees direction d (release, after its last_seen),
	 * when mf[d].tcp.fwd says it may not have been; cleared by create, kept
	 * by modify, verdict and revive.
	 */
	uint64_t first_fwd[2];
	struct fp_mflow mf[2];
} __rte_cache_aligned;
_Static_assert(sizeof(struct fp_conn) == 3 * RTE_CACHE_LINE_SIZE,
	       "a connection is a header line and two microflow lines");

/* The slot's bit in fp->used: its connection is VALID or INVALID. */
static inline void
fp_used_set(uint64_t *used, uint32_t slot, bool on)
{
	if (on)
		used[slot / 64] |= 1ull << (slot % 64);
	else
		used[slot / 64] &= ~(1ull << (slot % 64));
}

/*
 * The first slot of [slot, end) whose bit is set, or end: a word at a
 * time, the bits below `slot` in its first word masked off.
 */
static inline uint32_t
fp_used_next(const uint64_t *used, uint32_t slot, uint32_t end)
{
	while (slot < end) {
		uint64_t w = used[slot / 64] & (~0ull << (slot % 64));

		if (w != 0) {
			uint32_t s = (slot & ~63u) + (uint32_t)__builtin_ctzll(w);

			return s < end ? s : end;
		}
		slot = (slot & ~63u) + 64;
	}
	return end;
}

/* The connection's state, as the control thread moves it: copies first. */
static inline void
fp_conn_state_set(struct fp_conn *c, uint8_t st)
{
	__atomic_store_n(&c->mf[0].state, st, __ATOMIC_RELEASE);
	__atomic_store_n(&c->mf[1].state, st, __ATOMIC_RELEASE);
	__atomic_store_n(&c->state, st, __ATOMIC_RELEASE);
}

struct fp_worker {
	struct fp *fp;
	unsigned int id;
	rte_seqcount_t sc;		/* a burst's counts appear all at once */
	uint64_t cnt[FC_CNT_MAX];	/* this worker's, published per burst */
	struct rte_ring *given_back;	/* (gen << 32 | slot) it gave back: to report */
	/* the new-connection limit (fp.h): its share of fp->new_rate, in
	 * thousandths of a SYN; written only by this worker's bursts */
	struct rte_meter_srtcm new_meter;
} __rte_cache_aligned;

struct fp {
	char name[FP_NAME_MAX_LEN + 1];
	uint32_t cfg;
	uint32_t fw_rev;
	uint32_t closed;	/* control writes, workers read: the lease lapsed */
	struct fp_lease lease;	/* control only; left_ns unused (expires_ns) */
	uint64_t lease_expires_ns;
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
	/*
	 * A bit per slot, set while its connection is VALID or INVALID (from
	 * fp_conn_create to fp_conn_unhook; the control thread's alone).  The
	 * listing and the sweep skip 64 empty slots a word: a table of a
	 * million holding a few costs them 16,384 loads, not a million lines
	 * of 192 bytes (7 ms a listing, commands waiting behind it).
	 */
	uint64_t *used;
	struct fp_nat (*nat)[2];		/* [slot][dir], written at create */
	struct fp_nhop_rt *nhops;
	struct fp_worker **workers;
	uint16_t (*lif_of)[FP_VLAN_MAX + 1];	/* [port][vlan] -> LIF id */
	uint16_t port_lifs[FP_MAX_PORTS];	/* LIFs on each port */
	struct fp_lif_rt lifs[FP_MAX_LIFS];
	uint64_t cnt_base[FC_CNT_MAX];		/* counts at the last clear */
	uint32_t new_rate;			/* SYNs a second that miss, 0 = no limit */
	struct rte_meter_srtcm_profile new_prof;	/* a worker's share of it */
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

/*
 * The hash's data word: the firewall revision the connection was made
 * under, its slot and the key's direction (rev << 32 | slot << 1 | dir),
 * so a frame compares the revision with no load from the connection.
 * Slots are below 2^30 (fp_create).
 */
_Static_assert(sizeof(void *) == sizeof(uint64_t), "the data word holds 64 bits");

static inline void *
fp_slot_data(uint32_t slot, unsigned int dir, uint32_t fw_rev)
{
	return (void *)((uintptr_t)fw_rev << 32 | (uintptr_t)slot << 1 | dir);
}

static inline uint32_t
fp_data_slot(uintptr_t data)
{
	return (uint32_t)data >> 1;
}

static inline uint32_t
fp_data_rev(uintptr_t data)
{
	return (uint32_t)(data >> 32);
}

/* A microflow's ctl byte changed in `mask` to `bits` (control thread only). */
static inline void
fp_mf_ctl_set(struct fp_mflow *m, uint8_t mask, uint8_t bits)
{
	__atomic_store_n(&m->ctl, (uint8_t)((m->ctl & ~mask) | bits), __ATOMIC_RELAXED);
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
