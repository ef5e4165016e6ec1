/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp: the fast path - tables, the per-frame decision, aging, counters.
 *
 * No I/O and no threads of its own: the coprocessor program hands it
 * bursts of frames and gets back, per frame, where it goes (a wire port,
 * the host, the inspector, or nowhere) and the counter that says why.
 * Where the coprocessor model leaves room: docs/fastpath.md.
 *
 * Threads.  One CONTROL thread owns every table: it alone may call the
 * functions marked "control" (create/modify/remove connections, ports,
 * next hops, the configuration word, the revision, sweep, counter clear).
 * Any number of WORKER threads (up to fp_params.max_workers), each with its
 * own struct fp_worker, call fp_process_burst() and fp_from_host(); they
 * never block and never take a lock.  Removed connections are freed only
 * after every worker has passed a quiescent state, which
 * fp_process_burst() reports at the end of each burst: a worker holds no
 * reference between bursts.  Functions marked "any" are safe from any
 * thread.  A coprocessor that wants the counters elsewhere publishes them
 * from the control thread.
 *
 * Time is injected: every call that needs it takes `now` in nanoseconds
 * of a monotonic clock of the caller's choice (tests use a virtual one).
 *
 * Shutdown: stop the workers, fp_worker_destroy() each, then
 * fp_destroy().  fp_destroy(NULL) does nothing.  Errors: int functions
 * return 0 or a negative errno; constructors return NULL and set
 * rte_errno (and errno).
 *
 * Design notes (the lock-free table, what a worker writes):
 * fastpath/README.md.
 */
#ifndef FLOWCUT_FP_H
#define FLOWCUT_FP_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_defs.h>
#include <flowcut/fc_cmd.h>

#include "fp_parse.h"

struct rte_mbuf;
struct fp;
struct fp_worker;

#define FP_MAX_PORTS 32		/* wire ports, ids 0..31 */
#define FP_MAX_LIFS 256
#define FP_VLAN_MAX 4095
#define FP_MAX_RETRANS 10	/* identical ACKs in a row that give back */
#define FP_DEFAULT_TIMEOUT_S 60
#define FP_DEFAULT_TERMINAL_NS (5ull * 1000000000ull)

struct fp_params {
	const char *name;	/* unique among fp instances of the process */
	uint32_t max_conns;	/* connection table capacity (>= 1) */
	uint32_t max_nhops;	/* next-hop table size (>= 1) */
	uint32_t max_workers;	/* worker threads (1..RTE_MAX_LCORE) */
	int socket_id;		/* NUMA socket for the tables, or SOCKET_ID_ANY */
	uint64_t terminal_ns;	/* given back -> removed; 0 = 5 s */
};

/*
 * fp_create - make a fast path with empty tables and fw_cfg at 0x002.
 * Needs an initialised DPDK EAL.  All memory is taken here (rte_malloc);
 * nothing is allocated per frame or per connection afterwards.
 * Returns NULL with rte_errno EINVAL (a parameter out of range), ENOMEM,
 * or EEXIST (name in use).
 */
struct fp *fp_create(const struct fp_params *p);

/*
 * fp_heap_create - a DPDK malloc heap named `name`, sized for the tables
 * of p, on private anonymous memory advised for transparent huge pages:
 * for an EAL without hugepages (--no-huge), whose own heap stays on 4 KiB
 * pages.  Returns the heap's socket id, to put in p->socket_id before
 * fp_create(), or -1 with rte_errno set (mmap's errno, or DPDK's: EEXIST
 * for a name in use).  *huge says whether the kernel took the advice (THP
 * "madvise" or "always"); if not, the heap works on small pages.  The heap
 * lasts as long as the process.
 */
int fp_heap_create(const char *name, const struct fp_params *p, bool *huge);

/* fp_destroy - free everything; workers must be destroyed first. */
void fp_destroy(struct fp *fp);

/* ---- the configuration word and the firewall revision (control) ---- */

/* fp_cfg_set - write fw_cfg whole.  -EINVAL if a bit outside FC_CFG_ALL is set. */
int fp_cfg_set(struct fp *fp, uint32_t word);
/* fp_cfg_get - read fw_cfg back (any). */
uint32_t fp_cfg_get(const struct fp *fp);

/*
 * fp_fw_rev_set - set the firewall revision.  Every connection made under
 * another revision stops matching at once (FW_REV_MISMATCH) and is removed
 * by the next sweep.  New connections are stamped with this revision.
 */
void fp_fw_rev_set(struct fp *fp, uint32_t rev);
uint32_t fp_fw_rev_get(const struct fp *fp);

/* ---- the host's lease (control) ---- */

/*
 * The host's lease: flowcut's, beyond the vendor's model.  The host renews
 * it while it is alive; when it lapses (not renewed in time, or released
 * with ms 0) the fast path fails closed: a cut connection keeps dropping
 * (step 5), every other frame that matched a connection goes to the host
 * (FROM_WIRE_TO_KN_LEASE_LAPSED), where the kernel's rules judge it.
 * After a boot there is no lease (FC_LEASE_NONE) and nothing to fail
 * closed on; the first renewal arms it.
 *
 * Each lapse climbs a count.  A renewal extends a held lease whatever it
 * acknowledges, but reopens a lapsed one only when `ack` equals the count:
 * the host says it knows of the lapse, and has re-judged what the fast
 * path held (flowcutd sets a new firewall revision first), so no
 * connection forwards again on a judgement made before the lapse.
 */
struct fp_lease {
	uint8_t state;		/* enum fc_lease_state (fc_cmd.h) */
	uint32_t lapses;	/* since boot */
	uint32_t ms;		/* the length last granted */
	uint64_t left_ns;	/* HELD: until it lapses; else 0 */
};

/*
 * fp_lease_renew - the host renews its lease for `ms` (1..FP_LEASE_MAX_MS)
 * at `now`, acknowledging `ack` lapses, or releases it (ms 0: a clean stop,
 * which lapses it at once).  Fills *out with the lease afterwards (NULL: not
 * wanted).  0, or -EINVAL for ms over FP_LEASE_MAX_MS.
 */
#define FP_LEASE_MAX_MS 60000u
int fp_lease_renew(struct fp *fp, uint64_t now, uint32_t ms, uint32_t ack,
		   struct fp_lease *out);
/*
 * fp_lease_tick - lapse the lease if it expired by `now`.  The control
 * thread calls it often (every loop; flowcut-npu at least every 50 ms).
 * Returns true when this call lapsed it.
 */
bool fp_lease_tick(struct fp *fp, uint64_t now);
/* fp_lease_get - the lease as it stands at `now` (after fp_lease_tick). */
void fp_lease_get(const struct fp *fp, uint64_t now, struct fp_lease *out);

/* ---- new connections to the host (control) ---- */

/*
 * The new-connection limit: flowcut's rule, beyond the vendor's model, as
 * an appliance polices its control plane.  A frame that matches no
 * microflow (step 3) and is a TCP SYN without ACK is metered; over the
 * rate it is dropped here (FROM_WIRE_DROP_NEW_CONN_RATE) instead of going
 * to the host (FROM_WIRE_TO_KN_NON_ACCEL).  Every other miss (a SYN-ACK,
 * any other TCP segment, UDP, ICMP: frames of connections the host knows,
 * or not yet offloaded) is never metered.  Dropping more never lets a
 * forbidden frame through; what it costs: new connections over the rate
 * are refused, and the host's SYN cookies never see them.
 *
 * For the whole coprocessor, not per port: what it protects is the host's
 * one path (flowcutd's relay, the kernel, conntrack), which every port
 * shares; a limit per port would let N ports push N times the rate into
 * it.  Workers share no state, so each worker has its own meter (DPDK's
 * rte_meter srTCM) at per_s / max_workers: RSS spreads the SYNs of many
 * sources evenly over the workers' queues.  The bucket holds 100 ms of its
 * rate (at least one SYN), and is full at the first frame.  The meter's
 * clock is the burst's `now`.
 */
#define FP_NEW_CONN_RATE_MAX 100000000u

/*
 * fp_new_conn_rate_set - the most SYNs a second that miss the host is
 * handed, for the whole coprocessor; 0 = no limit (the default).  Before
 * the workers run or between their bursts (flowcut-npu: once, at start);
 * every worker's bucket starts full.  0, or -EINVAL for per_s over
 * FP_NEW_CONN_RATE_MAX.
 */
int fp_new_conn_rate_set(struct fp *fp, uint32_t per_s);
/* fp_new_conn_rate_get - the rate set, 0 for none (any). */
uint32_t fp_new_conn_rate_get(const struct fp *fp);

/* ---- ports (LIFs) and next hops (control) ---- */

struct fp_lif {
	uint16_t port;		/* wire port id, < FP_MAX_PORTS */
	uint16_t vlan;		/* 0 untagged, else 1..4095 */
	uint8_t mac[6];
	uint16_t mtu;
	bool admin_disabled;	/* frames dropped (DROP_LIF_DISABLED) */
	bool offload_disabled;	/* frames to the host */
};

/*
 * fp_lif_set - add or update LIF `id` (< FP_MAX_LIFS).  -EINVAL: port,
 * vlan or id out of range, or mtu below 68; -EEXIST: another LIF already
 * has this port and VLAN.
 */
int fp_lif_set(struct fp *fp, uint16_t id, const struct fp_lif *lif);
/* fp_lif_get - -ENOENT if LIF `id` was never set. (control) */
int fp_lif_get(const struct fp *fp, uint16_t id, struct fp_lif *out);

struct fp_nhop {
	uint16_t port;		/* egress wire port, < FP_MAX_PORTS */
	uint16_t vlan;		/* egress VLAN, 0 untagged */
	uint16_t mtu;		/* largest IP datagram sent, >= 68 */
	uint8_t dmac[6];
	uint8_t smac[6];
	bool resolved;		/* false: frames for it go to the host */
};

/*
 * fp_nhop_set - program next hop `id` (< max_nhops).  Its revision climbs
 * when the index names another neighbour: when `reused` says so, or when
 * the port or VLAN change.  Microflows made against the old revision then
 * go to the host (NHOP_STALE) instead of forwarding to the new neighbour.
 * Anything else keeps the revision, and the connections that use the next
 * hop follow at once: the same neighbour's new MAC (a server replaced, a
 * failover), resolved or not, the source MAC, the MTU.
 * -EINVAL: id, port, vlan or mtu out of range.
 */
int fp_nhop_set(struct fp *fp, uint32_t id, const struct fp_nhop *nh, bool reused);
/* fp_nhop_get - the next hop and its revision; -EINVAL for a bad id. */
int fp_nhop_get(const struct fp *fp, uint32_t id, struct fp_nhop *out,
		uint32_t *rev);

/* ---- connections (control) ---- */

/* One direction of a connection as the host makes it. */
struct fp_mflow_spec {
	struct fc_key key;	/* as frames of this direction arrive */
	uint32_t nhop;		/* where they go */
	uint8_t action;		/* enum fc_action */
	uint8_t tcp_wscale;	/* this sender's window scale, 0..14 */
	uint16_t timeout_s;	/* idle timeout, 0 = FP_DEFAULT_TIMEOUT_S */
};

/*
 * A connection: the original direction and the reply.  NAT is what the
 * two keys say, as conntrack's two tuples do: a frame of direction d
 * leaves with the addresses and ports of the other direction's key
 * reversed.  Where that differs from its own key, the frame is rewritten.
 */
struct fp_conn_spec {
	struct fp_mflow_spec mf[2];	/* [0] original, [1] reply */
	uint8_t verdict;		/* enum fc_verdict; hosts use CUT_THRU */
};

/*
 * A connection handle: the table slot in the low 32 bits, the slot's
 * generation in the high 32, so a stale handle never reaches a newer
 * connection in the same slot (it gets -ENOENT).
 */
typedef uint64_t fp_conn_id;
#define FP_CONN_SLOT(id) ((uint32_t)(id))

/*
 * fp_conn_create - make a connection with both microflows active, or
 * nothing at all.  Its last-seen times start at `now`.
 * Returns 0 and sets *id, or:
 *  -EINVAL  a key is malformed (family, unused bytes, port, vlan), the two
 *           keys are equal or of different families or protocols, an
 *           action, verdict, wscale or next hop is out of range;
 *  -EOPNOTSUPP  NAT on a protocol whose checksum flowcut cannot fix
 *           (only TCP, UDP, ICMP and ICMPv6 may be rewritten);
 *  -EEXIST  a key belongs to a connection of the firewall revision in
 *           force;
 *  -ENOSPC  the table is full.
 * A key held by a connection of an older firewall revision is taken from
 * it: that connection is removed first, without an event (it only sent
 * its frames to the host, and the host that set the new revision has let
 * it go), and stays removed if the create then fails.  Otherwise, on any
 * error the tables are as they were.
 */
int fp_conn_create(struct fp *fp, const struct fp_conn_spec *spec,
		   uint64_t now, fp_conn_id *id);

/* fp_conn_verdict_set - CONN_MODIFY_FP_VERDICT.  -ENOENT, -EINVAL. */
int fp_conn_verdict_set(struct fp *fp, fp_conn_id id, uint8_t verdict);

/* What fp_conn_modify() changes: a mask of these. */
#define FP_MOD_ACTION	0x1	/* mf[d].action for both directions */
#define FP_MOD_TIMEOUT	0x2	/* mf[d].timeout_s for both directions */
#define FP_MOD_ACTIVE	0x4	/* mf[d].active (MFLOW_PROGRAM/INVALIDATE) */

struct fp_conn_mod {
	uint32_t mask;
	uint8_t action[2];
	uint16_t timeout_s[2];	/* 0 = FP_DEFAULT_TIMEOUT_S */
	bool active[2];
};
/* fp_conn_modify - CONN_MODIFY_FP.  All or nothing.  -ENOENT, -EINVAL. */
int fp_conn_modify(struct fp *fp, fp_conn_id id, const struct fp_conn_mod *mod);

/*
 * fp_conn_revive - a given-back connection matches again (the host judged
 * the frame that gave it back and keeps the connection).  Its TCP tracking
 * starts again from the next segments, as for a connection picked up
 * mid-stream: the host carried every segment in between, and a window
 * learnt before them would call the next ones out of it (each direction's
 * segments beyond a stale edge, each one's ACKs ahead of a stale end, for
 * good).  A worker that read the connection valid before it was given
 * back may still write its direction's tracking in that burst: at worst
 * one spurious SEQ_CHK or MAX_RETRANS outcome (the frame goes to the
 * host), never a frame forwarded that should not be.  A give-back a
 * worker is still writing (its reason not yet set) is waited for: a few
 * stores, never a lock.
 * -ENOENT; -EALREADY if it was not given back.
 */
int fp_conn_revive(struct fp *fp, fp_conn_id id);

/* Per-direction counts. */
struct fp_mflow_stats {
	uint64_t packets;
	uint64_t bytes;		/* IP bytes, as conntrack counts them */
	uint64_t last_seen;	/* ns, the caller's clock */
};

/*
 * fp_conn_remove - CONN_RECLAIM_FP: the connection stops matching at once
 * and its slot is freed after the workers' grace period.  If `final` is
 * not NULL it receives the counts at removal.  -ENOENT.
 */
int fp_conn_remove(struct fp *fp, fp_conn_id id, struct fp_mflow_stats final[2]);

/* A connection's state: the shared list's values (FC_FOREACH_CONN_STATE, fc_defs.h). */
enum fp_conn_state {
	FP_CONN_FREE = FC_CONN_FREE,
	FP_CONN_VALID = FC_CONN_VALID,		/* matching */
	FP_CONN_INVALID = FC_CONN_INVALID,	/* given back; removed after the terminal time */
	FP_CONN_RECLAIM = FC_CONN_RECLAIM,	/* being removed */
};

/* A snapshot of one connection. */
struct fp_conn_info {
	fp_conn_id id;
	uint8_t state;		/* enum fp_conn_state */
	uint8_t verdict;
	uint8_t reason;		/* enum fc_reason when given back */
	uint32_t fw_rev;
	struct {
		struct fc_key key;
		uint8_t action;
		bool active;
		bool nat;
		uint16_t timeout_s;
		uint32_t nhop;
		struct fp_mflow_stats stats;
		/*
		 * this direction's first frame forwarded to the wire, ns of
		 * the caller's clock (the burst's `now`, 1 for a burst at 0);
		 * 0 none yet.  Kept across modify, verdict and revive; a new
		 * connection starts at 0.  Never after stats.last_seen.
		 */
		uint64_t first_fwd;
	} mf[2];
};

/* fp_conn_get - snapshot by handle.  -ENOENT. */
int fp_conn_get(const struct fp *fp, fp_conn_id id, struct fp_conn_info *out);
/* fp_conn_lookup - find by either key; *dir says which.  -ENOENT. */
int fp_conn_lookup(const struct fp *fp, const struct fc_key *key,
		   fp_conn_id *id, unsigned *dir);
/*
 * fp_conn_next - the first live connection in slot >= *slot; sets *slot
 * past it.  Returns 0 or -ENOENT when there is none.  For table dumps.
 */
int fp_conn_next(const struct fp *fp, uint32_t *slot, struct fp_conn_info *out);
/*
 * fp_conn_next_before - the same, looking no further than slot end - 1
 * (end over the table's size: its size); at none, *slot is end.  A window
 * of the table costs its own slots, not the rest of the table.
 */
int fp_conn_next_before(const struct fp *fp, uint32_t *slot, uint32_t end,
			struct fp_conn_info *out);
/* fp_conn_count - connections in the table (control). */
uint32_t fp_conn_count(const struct fp *fp);
/* fp_conn_capacity - the table's size, max_conns (any). */
uint32_t fp_conn_capacity(const struct fp *fp);

/* An event the sweep reports. */
struct fp_event {
	uint8_t type;		/* enum fc_event_type */
	uint8_t reason;		/* enum fc_reason */
	fp_conn_id id;
	struct fc_key key[2];
	struct fp_mflow_stats stats[2];
};

/*
 * fp_sweep - age and clean up: removes connections idle past both
 * timeouts (AGED_OUT), reports connections given back (GIVEN_BACK, once),
 * removes given-back connections older than the terminal time and
 * connections of an older revision (REMOVED), and frees slots whose grace
 * period is over.  Looks at no more than `budget` slots from where the last
 * call stopped (0 = the whole table), and stops early rather than lose an
 * event when `ev` is full.  Returns the number of events written. (control)
 */
unsigned fp_sweep(struct fp *fp, uint64_t now, uint32_t budget,
		  struct fp_event *ev, unsigned max_ev);

/*
 * fp_given_back - GIVEN_BACK events for the connections the workers have
 * given back since the last call, at most `max_ev`: the report is at
 * once, not when the sweep passes.  A connection is reported once, here
 * or by the sweep (which finds what a full ring could not hold). (control)
 */
unsigned fp_given_back(struct fp *fp, struct fp_event *ev, unsigned max_ev);
/* fp_given_back_pending - whether fp_given_back has anything to say. (control) */
bool fp_given_back_pending(const struct fp *fp);

/* ---- counters ---- */

/*
 * fp_counters_read - every counter since the last clear.  Each worker's
 * counts are taken whole (a burst's appear at once), so the model's sum
 * holds in what this returns.  (control)
 */
void fp_counters_read(const struct fp *fp, uint64_t out[FC_CNT_MAX]);
/* fp_counters_clear - start every counter from zero again (control). */
void fp_counters_clear(struct fp *fp);

/* ---- workers ---- */

/*
 * fp_worker_create - the state one worker thread needs; `id` < max_workers,
 * each used once.  NULL with rte_errno EINVAL, EEXIST or ENOMEM. (control,
 * before the worker starts)
 */
struct fp_worker *fp_worker_create(struct fp *fp, unsigned id);
/*
 * fp_worker_destroy - after the worker has stopped; its counts stay in the
 * totals.  NULL does nothing.  (control)
 */
void fp_worker_destroy(struct fp_worker *w);

/* Where a frame goes: a wire port id, or one of these. */
#define FP_DEST_HOST	 0xffff	/* to the host, the frame unchanged */
#define FP_DEST_HOST_AUX 0xfffe	/* to the host's auxiliary queue, unchanged */
#define FP_DEST_IPS	 0xfffd	/* to the inspector, unchanged */
#define FP_DEST_DROP	 0xfffc	/* free it */

struct fp_out {
	uint16_t dest;		/* port id or FP_DEST_* */
	uint16_t reason;	/* enum fc_cnt that counted it */
};

#define FP_BURST_MAX 64

/*
 * fp_process_burst - decide `n` (<= FP_BURST_MAX) frames that arrived on
 * wire port `port`, in the model's order, rewriting those that go to the
 * wire in place (L2, TTL / hop limit, NAT, checksums).  Frames must be
 * single-segment or have their headers in the first segment.  Fills
 * out[0..n-1]; the caller owns the mbufs and sends, hands up or frees them
 * as out[] says.  Returns n. (worker)
 */
uint16_t fp_process_burst(struct fp_worker *w, uint16_t port,
			  struct rte_mbuf **pkts, uint16_t n, uint64_t now,
			  struct fp_out *out);

/*
 * fp_from_host - a frame the host sends out of `port`: counted, no
 * microflow check.  Returns the port to send on, or FP_DEST_DROP for an
 * unknown port (FROM_KN_DROP_LIF_UNKNOWN). (worker)
 */
uint16_t fp_from_host(struct fp_worker *w, uint16_t port);

#endif /* FLOWCUT_FP_H */
