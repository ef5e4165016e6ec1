/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_priv.h: what the binding's rooms share, nothing outside them
 * includes it: fd_offload_turn.c (the turn, the face), the jobs
 * (fd_offload_paths.c, _sync.c, _rejudge.c, _kept.c), fd_offload_cut.c (the
 * table as the cut sees it), fd_offload.c (the verbs), fd_offload_prepare.c
 * (one state's command and path), fd_offload_table.c (the table), and the
 * one-line helpers below, inline.  Calls go one way, down, in that order:
 * driver/offload/README.md draws it.
 */
#ifndef FLOWCUT_FD_OFFLOAD_PRIV_H
#define FLOWCUT_FD_OFFLOAD_PRIV_H

#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_grow.h>

#include "fd_clock.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_first.h"
#include "fd_hist.h"
#include "fd_nhop.h"
#include "fd_offload.h"
#include "fd_offload_cut.h"
#include "fd_policy.h"
#include "fd_pool.h"
#include "fd_route.h"


#define FD_WAITING_MAX 1024
/* neighbours asked to resolve, remembered for OFF_ASKED_NS (3 probes of 1 s) */
#define OFF_ASKED_MAX 32
#define OFF_ASKED_NS (3 * 1000000000ull)
/* the waiting tried again this often while any wait (fd_offload_work) */
#define OFF_WAIT_RETRY_MS 5000u
/* T_long = P + OFF_LONG_S; extended every OFF_LONG_S / 2 ("Timeouts": driver/offload/README.md) */
#define OFF_LONG_S 86400u
#define OFF_EXTEND_MS (OFF_LONG_S / 2 * 1000ull)
/* an entry this young taken out by a close its state's event shows (fd_offload_turn.c, judging) */
#define OFF_STALE_MS 1000

/*
 * One offloaded connection: a slot of the binding's entry array
 * (fd_offload_table.c), 96 bytes.  What it does not hold is derived:
 * the state's tuple from `orig` (off_tuple: zone 0, as every offloaded
 * state is), its protocol and family from `orig` too, and where each
 * microflow's frames go (off_dst) from `orig` - a DNAT'd connection's
 * alone kept in a side table (`nat`).
 */
struct off_entry {
	/*
	 * The state's identity, by_ct's key: its original tuple and its id,
	 * adjacent (CT_KEY_LEN bytes from orig).  The id alone is not unique:
	 * the kernel hashes it to 32 bits, and among 100,000 states two share
	 * one about once (flowcut-bench cut found it: one state never
	 * offloaded, then never cut).
	 */
	struct fc_key orig;
	uint32_t ct_id;
	uint32_t self;			/* its slot in the entry array */
	uint64_t fp_id;			/* by_fp's key */
	uint32_t nhop[2];		/* per microflow: its next hop */
	/*
	 * The extension FIFO (fd_offload_table.c), by due time: the low 32
	 * bits of the ms its state's T_long is extended then (compared as
	 * serial numbers: due is never more than 12 h off), and the slots
	 * before and after it (0: none, else slot + 1).
	 */
	uint32_t due_ms;
	uint32_t ext_prev, ext_next;
	uint32_t seen;			/* the reconcile's epoch that last found its state */
	uint32_t born;			/* the reconcile's epoch when it was indexed */
	uint8_t action;			/* both microflows' */
	uint8_t cut_by;			/* the cut's trigger (fd_offload_conn.cut_by) */
	bool cut : 1;			/* dropping on the coprocessor: see fd_cut.h */
	bool in_ct : 1;			/* in by_ct: a cut one leaves it when its state dies */
	bool in_fp : 1;			/* in by_fp */
	bool held : 1;			/* a resync found it in the fast path */
	bool passed : 1;		/* made CUT_THRU: the inspector had passed it */
	bool oom : 1;			/* an index had no room for it */
	bool in_ext : 1;		/* in the extension FIFO */
	bool nat : 1;			/* its ends in the side table (off_set_dst) */
	/*
	 * An offload in flight (fd_offload.c, "Offloads in batches"): in by_ct
	 * only, no fp_id yet, not counted in nentries; what came meanwhile is
	 * done at FLOW_CREATE_FP's answer (`after`).  on_long: its state's
	 * update (T_long) was acked, so a way out puts P back.
	 */
	bool pending : 1;
	bool on_long : 1;
	unsigned int after : 2;		/* OFF_AFTER_* */
	bool live : 1;			/* the slot holds an entry (else on the free list) */
	bool counted : 1;		/* in nentries and in conns (off_count_in) */
	unsigned int verdict : 2;	/* the fast path's (FC_VERDICT_*), as last set */
};

/*
 * An open-addressing index over the entry array (fd_offload_table.c):
 * `cap` slots (a power of 2), each 0 (empty), OFF_IX_TOMB (a removed
 * one's) or slot + 1 of what it indexes in its low OFF_IX_REF_BITS and
 * the top bits of its hash above them (a tag: a probe passes a slot
 * whose tag differs without reading its entry); `n` held, `tomb`
 * tombstones.
 */
struct off_ix {
	uint32_t *slot;
	uint32_t cap, n, tomb;
};
#define OFF_IX_TOMB UINT32_MAX
#define OFF_IX_REF_BITS 26
#define OFF_IX_REF_MASK ((1u << OFF_IX_REF_BITS) - 1)
/* the most entries (or side records): slot + 1 below the mask, which is OFF_IX_TOMB's */
#define OFF_IX_REFS_MAX (OFF_IX_REF_MASK - 1)

/* A DNAT'd connection's ends (off_dst), by entry slot: the side table's records. */
struct off_nat {
	uint32_t self;			/* the entry's slot */
	uint8_t dst[2][16];
};

/* The entry array: chunks of OFF_CHUNK entries (an entry never moves), a free list. */
#define OFF_CHUNK_SHIFT 12
#define OFF_CHUNK (1u << OFF_CHUNK_SHIFT)
struct off_table {
	struct off_entry **chunk;
	uint32_t nchunks;
	uint32_t used;			/* slots handed out once: [0, used) */
	uint32_t free;			/* the free list's head: slot + 1 (0: empty), by ext_next */
	struct off_ix by_ct;		/* the live ones, and those pending (by orig and ct_id) */
	struct off_ix by_fp;		/* every one made (by fp_id) */
	struct off_ix by_nat;		/* the side table's records, by entry slot */
	struct off_nat *nat;
	uint32_t nnat;
	size_t nat_cap;
	uint32_t ext_head, ext_tail;	/* the extension FIFO's: slot + 1 (0: empty) */
};

/* What a pending entry's answer does besides entering it (struct off_entry.after). */
enum {
	OFF_AFTER_ENTER,	/* nothing came: in the tables */
	OFF_AFTER_GONE,		/* its state's DESTROY came: reclaimed, forgotten */
	OFF_AFTER_OUT,		/* TCP past ESTABLISHED came: reclaimed, its state leaves */
};

#define CT_KEY_LEN (sizeof(struct fc_key) + sizeof(uint32_t))
_Static_assert(offsetof(struct off_entry, ct_id) ==
	       offsetof(struct off_entry, orig) + sizeof(struct fc_key),
	       "by_ct's key is orig and ct_id, adjacent");

/* One connection of the fast path's table as the reconcile read it (F), by original key. */
struct off_fconn {
	struct fc_key key;		/* key[0], port 0 (off_orig_of's) */
	uint64_t id;
	uint64_t last_seen;		/* ns, the newer of the two microflows' */
	uint32_t fw_rev;
	bool dropping;			/* both ways (off_dropping): a cut's */
	bool done;			/* matched to an entry or a state, or taken out */
};

/* The reconcile's budget a step (fd_offload_sync_step; see fd_offload_sync.c). */
#define OFF_SYNC_READS 32		/* CONN_READ_BRIEF in flight: 32 windows of the table */
#define OFF_SYNC_DATAGRAMS 64		/* dump datagrams read */
#define OFF_SYNC_LOOKS 4096		/* entries or F's connections looked at after the dump */
#define OFF_SYNC_POSTS FD_CT_BATCH	/* GETs or reclaims posted after the dump */
#define OFF_SYNC_INTR_MAX 3		/* dumps started again after NLM_F_DUMP_INTR */

enum off_sync_phase {
	OFF_SYNC_IDLE,		/* no run */
	OFF_SYNC_READ,		/* F: the fast path's table brief-read */
	OFF_SYNC_DUMP,		/* C: conntrack's marked states streamed */
	OFF_SYNC_CONFIRM,	/* the entries the dump did not stamp, confirmed by GET */
	OFF_SYNC_UNKNOWN,	/* F's connections nobody knows, reclaimed */
};

/* One window of the table: brief reads go on from `next` until `end`. */
struct off_sync_win {
	struct fd_offload *o;
	uint32_t next, end;
	int rc;				/* the read in flight's */
};

/* One GET or reclaim of the steps after the dump. */
struct off_sync_post {
	struct fd_offload *o;
	uint64_t fp_id;
	struct fc_key key;		/* a reclaim's: the connection's original key */
	bool in_f;			/* a GET's: the fast path holds the entry's connection */
	int rc;
	uint64_t idle_s;
};

struct off_sync {
	enum off_sync_phase phase;
	uint32_t epoch;			/* of the run under way, or the last */
	bool again;			/* asked for while one ran: another follows */
	uint64_t t0_ns;
	uint64_t adopted0;		/* cut_adopted at the start */
	uint32_t rev;			/* the coprocessor's revision at the start */
	struct off_sync_win win[OFF_SYNC_READS];
	struct off_fconn *fa;		/* F: the connections read, in the table's order */
	size_t fn, fcap;
	uint64_t *fix;			/* F by key (fd_offload_sync.c): 0, or hash << 32 | index + 1 */
	uint32_t fixcap;		/* a power of two above twice fn; 0: none yet */
	unsigned int intr;		/* dumps interrupted this run */
	bool dump_whole;		/* the dump read through: marks_stale may end */
	uint64_t *ids;			/* B's fast-path ids when the dump ended */
	size_t nids, at;
	size_t f_at;			/* the walk of F after the confirms: fa's index */
	struct off_sync_post post[OFF_SYNC_POSTS];
};

struct fd_offload {
	struct fd_cmds cmds;
	struct fd_offload_cfg cfg;
	struct fd_ct_io ct;		/* conntrack's I/O (the caller's) */
	struct fd_route_io route;	/* the host's routes (the caller's) */
	struct fd_nhop *nhops;		/* the caller's */
	bool paths_changed;		/* routes or an MTU changed since the last look */
	bool neigh_resolved;		/* a neighbour resolved: the waiting may go */
	bool solicit_said;		/* an ask to resolve a neighbour failed, said */
	/* the neighbours asked for last (fd_offload_prepare.c's solicit), a ring */
	struct off_asked {
		uint64_t at_ns;		/* 0: free */
		unsigned int ifindex;
		uint8_t family;
		uint8_t nbr[16];
	} asked[OFF_ASKED_MAX];
	unsigned int asked_next;
	uint64_t waiting_tried_ms;	/* the waiting last tried by the clock (fd_offload_work) */
	/* states that qualified while a neighbour was unresolved, retried */
	struct waiting {
		uint32_t ct_id;
		struct fc_key orig;
		struct nf_conntrack *tuple;
	} waiting[FD_WAITING_MAX];
	unsigned int nwaiting;
	uint16_t port_mtu[FC_MAX_PORTS]; /* the front ports' MTUs: read at open, then followed */
	struct off_table tab;		/* the entries, by state and by fast-path id */
	unsigned int nentries;
	bool need_resync;		/* the fast path may hold what we do not know of */
	bool marks_stale;		/* a ruleset change left the old rules' bits: clear them */
	/*
	 * The paths job's place in the table (off_next's slot): an entry
	 * forgotten behind or under it changes nothing, one made since in a
	 * slot behind it is not looked at (it was made on the new paths).
	 */
	uint32_t paths_at;
	/* a ruleset change's rejudging job (fd_offload_rejudge.c) */
	struct off_rejudge {
		enum off_rj_phase {
			OFF_RJ_IDLE,	/* no job */
			OFF_RJ_LEAVE,	/* the old revision's uncut entries leave (`leaving`) */
			OFF_RJ_DUMP,	/* the bit cleared on every state the dump by the bit finds */
			OFF_RJ_JUDGE,	/* the states that asked meanwhile, judged under the new rules */
		} phase;
		/*
		 * The old revision's uncut entries, in no index (off_unlink) but
		 * live: their leave to post, from leaving[leaving_at] on (an
		 * entry never moves: the table's slots are in chunks).
		 */
		struct off_entry **leaving;
		size_t nleaving, leaving_at;
		struct nf_conntrack **carry;	/* dumped past the budget: the next turn's first */
		size_t ncarry, carry_cap;
		struct fc_key *asked;		/* states that asked to be offloaded meanwhile */
		size_t nasked, asked_cap, asked_next;
		/* the job's updates this turn: which state, for its error's line */
		struct off_rj_post {
			struct fd_offload *o;
			uint32_t id;
			bool leave;
		} posted[FD_OFFLOAD_UPDATES_PER_TURN];
		unsigned int nposted;
	} rj;
	unsigned int upd_budget;	/* ct updates left this turn (fd_offload_work) */
	unsigned int ct_read;		/* event datagrams read this turn; UINT_MAX: read whole */
	size_t paths_left;		/* the paths job: entries still to look at (paths_at) */
	uint64_t resync_tried_ms;	/* a resync that did not get through: retried 1 s on */
	uint16_t tls_ports[FD_OFFLOAD_TLS_PORTS_MAX]; /* offloaded SEND_TO_IPS (fd_policy_verdict) */
	unsigned int ntls_ports;
	/*
	 * Offloads, GETs and leaves in flight (each with its context, freed by
	 * its completion): off_settle waits until none is.
	 */
	unsigned int inflight;
	struct fd_pool flights;		/* make()'s, kept for the next (fd_offload.c) */
	/* a ruleset change: every candidate judged by GET until the event socket is read empty */
	bool get_mode;
	struct fd_hist offload_us;	/* qualify (event parsed) -> FLOW_CREATE_FP answered */
	struct fd_first first;		/* qualify -> first frame forwarded, sampled (fd_first.h) */
	struct fd_offload_stats st;
	struct fd_offload_conns conns;	/* the counted entries by action and verdict, and cut */
	struct off_sync sync;		/* the reconcile (fd_offload_sync.c) */
};

/*
 * The flights kept for reuse: the most in flight is a few turns' events
 * (FD_OFFLOAD_EVENTS_PER_TURN a turn, answered a turn or two later), so
 * 4,096 (590 KB) covers a burst's without holding a flood's.
 */
#define OFF_FLIGHTS_KEPT 4096

/* An offload in flight (make's, fd_offload.c): its context, kept in o->flights. */
struct flight {
	struct fd_offload *o;
	struct off_entry *e;
	struct fc_cmd_flow_create c;
	uint64_t t0_ns;		/* the event parsed (or the state handed in) */
};

/* ---- the one-line helpers every room uses ---- */

/* The state's original tuple as a key (`ct` may be a tuple alone). */
static inline void
off_orig_of(const struct nf_conntrack *ct, struct fc_key *k)
{
	fd_policy_key(ct, FD_DIR_ORIG, 0, k);
}

static inline int
off_call(struct fd_offload *o, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	return fd_cmds_call(&o->cmds, op, p, len, ans, cap);
}

/* the binding's clock (cfg.now_ns, else fd_clock_ns) */
static inline uint64_t
off_now_ns(const struct fd_offload *o)
{
	return o->cfg.now_ns != NULL ? o->cfg.now_ns() : fd_clock_ns();
}

/*
 * The entry's state's original tuple, rebuilt from its key
 * (fd_ct_tuple_of_key: zone 0, as every offloaded state is; no id), for
 * the caller to nfct_destroy.  NULL: no memory.
 */
static inline struct nf_conntrack *
off_tuple(const struct off_entry *e)
{
	return fd_ct_tuple_of_key(&e->orig);
}

/* P: conntrack's timeout of a working state of the protocol. */
static inline uint32_t
off_p(const struct fd_offload *o, uint8_t l4proto)
{
	return o->ct.established_timeout(o->ct.ctx, l4proto);
}

/* T_long: an offloaded state's timeout, P + OFF_LONG_S ("Timeouts": driver/offload/README.md). */
static inline uint32_t
off_t_long(const struct fd_offload *o, uint8_t l4proto)
{
	return off_p(o, l4proto) + OFF_LONG_S;
}

/* A command got no answer: it may still take effect. */
static inline bool
off_no_answer(int rc)
{
	return fd_cmds_no_answer(rc);
}

/*
 * What the fast path holds is no longer known (a command without an answer,
 * or one refused that must not be): it is taken out whole and offloaded
 * again from a conntrack dump, retried until it gets through.  Said once.
 */
static inline void
off_lost_track(struct fd_offload *o, const char *what, int rc)
{
	if (!o->need_resync)
		fprintf(stderr, "flowcutd: %s: %s; the fast path is taken out and offloaded "
			"again from conntrack\n", what, strerror(-rc));
	o->need_resync = true;
}

/* Is a ruleset change's unmark still running (a bit set may be the old rules')? */
static inline bool
off_rj_unmarking(const struct fd_offload *o)
{
	return o->rj.phase == OFF_RJ_LEAVE || o->rj.phase == OFF_RJ_DUMP;
}

/* ---- between the rooms (each defined in the file named) ---- */

/* fd_offload_table.c: the two tables, and the commands' small helpers */
/* A key's hash, as the index by state hashes its keys (with ct_id 0). */
uint64_t off_key_hash(const struct fc_key *k);
int off_reclaim(struct fd_offload *o, uint64_t fp_id);
/* off_reclaim_idle - off_reclaim, and *idle_s the connection's idle time at its end (0: unknown). */
int off_reclaim_idle(struct fd_offload *o, uint64_t fp_id, uint64_t *idle_s);
/*
 * off_idle_s - seconds since the newer of a connection's two last-seen
 * times (the coprocessor's CLOCK_MONOTONIC, as ours): 0 when unknown
 * (never seen, or ahead of our clock).
 */
uint64_t off_idle_s(const struct fd_offload *o, const struct fc_mflow_stats st[2]);
/*
 * The extension FIFO, by due time: every entry is due OFF_EXTEND_MS after
 * its offload or last extension (a minute after a failed one), so
 * appending keeps it sorted.  off_ext_add appends an entry due at
 * `due_ms` (taken out first if in); off_ext_del takes it out (forgetting
 * does); off_ext_due is the head if it is due at `now_ms`, else NULL.
 */
void off_ext_add(struct fd_offload *o, struct off_entry *e, uint64_t due_ms);
void off_ext_del(struct fd_offload *o, struct off_entry *e);
struct off_entry *off_ext_due(const struct fd_offload *o, uint64_t now_ms);
/*
 * off_entry_new - an entry, zeroed, live, in no index (NULL: no memory);
 * its slot is its own until off_free_entry (an entry never moves).
 * off_free_entry - an entry out of every index already, freed (its side
 * record too).
 */
struct off_entry *off_entry_new(struct fd_offload *o);
void off_free_entry(struct fd_offload *o, struct off_entry *e);
/*
 * off_dst - where microflow `d`'s frames go (the address routed, as
 * fd_policy_route_dst has it): 0, towards the reply's source (orig.dst
 * unless DNAT'd); 1, towards orig.src.  off_set_dst - both set; the
 * ones the key does not give kept in the side table: 0, or -ENOMEM.
 */
void off_dst(const struct fd_offload *o, const struct off_entry *e, int d, uint8_t out[16]);
int off_set_dst(struct fd_offload *o, struct off_entry *e, const uint8_t dst[2][16]);
struct off_entry *off_find_ct(struct fd_offload *o, uint32_t ct_id,
			      const struct nf_conntrack *ct);
/* off_find_key - the entry of state `ct_id` whose original key is `orig` (port 0). */
struct off_entry *off_find_key(struct fd_offload *o, uint32_t ct_id, const struct fc_key *orig);
struct off_entry *off_find_state(struct fd_offload *o, const struct nf_conntrack *ct);
struct off_entry *off_find_fp(struct fd_offload *o, uint64_t fp_id);
/*
 * off_index - an entry into by_fp, and by_ct too when `by_ct` (in_ct
 * set): all or nothing.  0, or -ENOMEM (an index had no room: the entry
 * is in neither of those it was to join).  nentries is the caller's.
 * off_index_ct - into by_ct alone (a pending one): 0 or -ENOMEM;
 * off_unindex_ct - out of by_ct (in_ct cleared), if in.
 */
int off_index(struct fd_offload *o, struct off_entry *e, bool by_ct);
int off_index_ct(struct fd_offload *o, struct off_entry *e);
void off_unindex_ct(struct fd_offload *o, struct off_entry *e);
void off_forget(struct fd_offload *o, struct off_entry *e);
/*
 * The connections' figures (o->conns), O(1) a change, never a walk:
 * off_count_in - an entry now in the tables: counted in nentries and in
 * its cell (action, verdict, cut); once.  The way out is off_unlink's
 * (and off_forget's, off_forget_all's).  off_reclass - a counted (or
 * not yet counted) entry's action, verdict and cut changed, its cell
 * moved with them.
 */
void off_count_in(struct fd_offload *o, struct off_entry *e);
void off_reclass(struct fd_offload *o, struct off_entry *e, uint8_t action, uint8_t verdict,
		 bool cut);
/* off_unlink - off_forget but not freed: in no table, the FIFO, nor nentries (the caller frees). */
void off_unlink(struct fd_offload *o, struct off_entry *e);
/*
 * off_rekey_fp - an entry of by_fp moved to fast-path id `fp_id` (a
 * connection made again under a new id).  0, or -ENOMEM: no room for its
 * new place, and the entry is forgotten.
 */
int off_rekey_fp(struct fd_offload *o, struct off_entry *e, uint64_t fp_id);
void off_forget_all(struct fd_offload *o);
/*
 * off_next - an iteration over every entry of by_fp: `*at` starts at 0;
 * the next one from it (and *at past it), or NULL at the end.  Forgetting
 * the entry returned is allowed; one indexed meanwhile may or may not come.
 */
struct off_entry *off_next(const struct fd_offload *o, uint32_t *at);
/* off_slot - the entry of slot `slot` if it is live and in by_fp, else NULL. */
struct off_entry *off_slot(const struct fd_offload *o, uint32_t slot);
struct off_entry **off_snapshot(const struct fd_offload *o, size_t *n);
/* off_table_free - the table's memory let go (every entry forgotten first). */
void off_table_free(struct fd_offload *o);
void off_forget_uncut(struct fd_offload *o);

/*
 * fd_offload_prepare.c: one state's FLOW_CREATE_FP and its path.
 * off_prepare_as - the command built in *c, its entry in *out (allocated,
 * in no table); `looked`: the caller found no entry of ct's just now.  0,
 * -EEXIST, -EPERM, -EINPROGRESS, -ENETUNREACH, -EAGAIN (it waits for its
 * neighbour), -ENOMEM, or an error of NHOP_PROGRAM or of conntrack.
 * off_prepare - the same, looked up first.  off_waiting_find - the
 * state's index among those waiting for a path, or -1; off_waiting_clear
 * - none waits.
 */
int off_port_of(const struct fd_offload *o, unsigned int ifindex);
int off_front_port(const struct fd_offload *o, struct fd_hop *hop);
void off_wait_path(struct fd_offload *o, const struct nf_conntrack *ct);
int off_prepare_as(struct fd_offload *o, const struct nf_conntrack *ct, bool cut, bool looked,
		   struct fc_cmd_flow_create *c, struct off_entry **out);
int off_prepare(struct fd_offload *o, const struct nf_conntrack *ct, bool cut,
		struct fc_cmd_flow_create *c, struct off_entry **out);
int off_waiting_find(const struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct);
void off_waiting_clear(struct fd_offload *o);

/* fd_offload.c: the verbs: conntrack, one state in and out, the batches (the ports' MTUs too) */
void off_ct_unmark(struct fd_offload *o, const struct nf_conntrack *tuple);
int off_leave(struct fd_offload *o, const struct off_entry *e, uint64_t idle_s, bool unmark);
/* off_leave_tuple - off_leave of a state with no entry (`tuple`, its protocol `l4proto`). */
int off_leave_tuple(struct fd_offload *o, const struct nf_conntrack *tuple, uint8_t l4proto,
		    uint64_t idle_s, bool unmark);
/*
 * off_orphan_leave - a connection of no entry left the fast path (its
 * original key `k`): its state, read by a posted GET, leaves if it is on
 * T_long and held by no entry; `taken_out`: counted in resync_taken_out
 * when the GET finds it alive.
 */
void off_orphan_leave(struct fd_offload *o, const struct fc_key *k, uint64_t idle_s, bool unmark,
		      bool taken_out);
int off_enter(struct fd_offload *o, struct off_entry *e, int rc, uint64_t id);
void off_offload(struct fd_offload *o, const struct nf_conntrack *ct);
/*
 * off_make - the state's connection made, posted: 0 (the answer decides),
 * or off_prepare's errors, -ENOMEM, or the update's post's.  `looked`: the
 * caller has just found no entry of the state.  off_unpend - a pending
 * entry out of by_ct (its answer came, or it went no further).
 */
int off_make(struct fd_offload *o, const struct nf_conntrack *ct, uint64_t t0_ns, bool looked);
void off_unpend(struct fd_offload *o, struct off_entry *e);
int off_port_mtus_read(struct fd_offload *o);
/*
 * off_flush - what is posted goes: the GETs, the updates, the commands
 * (fd_cmds_flush with 0 ms: sent, the answers there taken, no wait).
 * Every fd_offload_events and fd_offload_work ends with it.
 */
void off_flush(struct fd_offload *o);
/*
 * off_settle - waits until no offload, GET or leave is in flight (every
 * command answered or failed at its deadline): before what takes the
 * tables whole (a resync, a ruleset change, the close).
 */
void off_settle(struct fd_offload *o);
/*
 * off_judge_by_get - a ruleset change: off_settle, then GET mode (every
 * candidate read whole by a GET, not judged from its event, until the
 * event socket has been read empty once: past the own event of the last
 * unmark).  Called once the unmarks are done or, as now, before them in
 * the same call (no event is read in between).
 */
void off_judge_by_get(struct fd_offload *o);

/*
 * fd_offload_sync.c: the reconcile.  off_sync_finish - a run under way
 * stepped to its end now (a revision must not bump under it);
 * off_sync_free - what a run holds, let go (close).
 */
void off_sync_finish(struct fd_offload *o);
void off_sync_free(struct fd_offload *o);

/*
 * fd_offload_rejudge.c: a ruleset change's job.  off_rj_unlink_uncut -
 * the old revision's uncut entries out of the tables, to leave;
 * off_rj_step - a turn's share of the job; off_rj_end - the job ended
 * (`keep`: what it holds kept for a job started anew); off_rj_abandon -
 * given up to a resync (its dump clears the bits left).
 */
void off_rj_unlink_uncut(struct fd_offload *o);
void off_rj_step(struct fd_offload *o);
void off_rj_end(struct fd_offload *o, bool keep);
void off_rj_abandon(struct fd_offload *o);

/* fd_offload_kept.c: cut connections kept (across revisions, and from a flowcutd before) */
bool off_dropping(const struct fc_conn_info *ci);
int off_adopt_cut(struct fd_offload *o, const struct fc_conn_info *ci);
void off_keep_cut(struct fd_offload *o);

#endif
