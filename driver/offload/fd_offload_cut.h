/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_cut: the binding's table, as the cut (fd_cut) and the
 * inspector (fd_ips) see it - views, picks, marks, states taken out,
 * connections made already dropping.  Same thread and life as the binding
 * (fd_offload.h), whose commands these post.
 *
 * A connection cut in hardware stays in the table marked cut: its state's
 * DESTROY does not take it out (it leaves the lookup by conntrack id, so a
 * new state may take the id), a give-back is ignored (none can come: the
 * fast path drops a cut connection before any TCP rule), it is never
 * revived, refreshed, moved or offloaded again, and it is forgotten when
 * the coprocessor says it aged out or was removed.  A resync keeps it
 * while the fast path still holds it (none after a boot).  A ruleset
 * change keeps it dropping: after the new revision is set, each cut
 * connection is read back and made again at that revision, dropping both
 * ways (its action DROP), under a new id; the new one takes the stale
 * one's keys.  One that cannot be made again is forgotten, and its frames
 * reach the host's rule.  A cut connection is let go when what cut it is
 * gone (fd_offload_release: taken out, judged by the host's rules again).
 */
#ifndef FLOWCUT_FD_OFFLOAD_CUT_H
#define FLOWCUT_FD_OFFLOAD_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>

struct fd_offload;
struct nf_conntrack;

/* cut_by of a connection a flowcutd before this one cut (taken up by a resync) */
#define FD_OFFLOAD_CUT_BY_UNKNOWN 0xff

struct fd_offload_conn {
	uint32_t ct_id;
	uint64_t fp_id;
	uint8_t action;		/* both microflows': FC_ACTION_IPS, _FWD or _DROP */
	bool cut;
	uint8_t cut_by;		/* cut: the caller's trigger (fd_cut's), or _UNKNOWN */
	uint8_t family;		/* 4 or 6 */
	uint8_t ends[2][16];	/* as the wire sees them: the server (reply source, the
				 * DNAT target) and the client (original source) */
	uint32_t slot;		/* its entry's slot: stable while it lives, a side table's key */
	struct fc_key orig;	/* its state's original tuple as its key has it (the page's cuts) */
};

typedef bool fd_offload_pick_fn(void *arg, const struct fd_offload_conn *oc);

/* which connections a pick walks: those whose state lives, or those cut (live state or not) */
enum fd_offload_among { FD_OFFLOAD_LIVE, FD_OFFLOAD_CUT };

/*
 * fd_offload_pick - the connections `among` says that pick() takes, from
 * the binding's own table (no conntrack dump): their count, with their
 * whole views in *out (the caller frees it), or -ENOMEM.  pick() must not
 * change the binding.
 */
long fd_offload_pick(struct fd_offload *o, enum fd_offload_among among, fd_offload_pick_fn *pick,
		     void *arg, struct fd_offload_conn **out);

/*
 * fd_offload_settle - waits until no offload of the binding's is in
 * flight (every FLOW_CREATE_FP posted answered, its entry in the table or
 * gone).  A cut calls it before it looks: an offload on its way is not in
 * the table yet, yet the coprocessor makes it when it reads the command,
 * so a cut that took it for "not offloaded" would kill its state and
 * leave it forwarding until the state's DESTROY is read.  Nothing to wait
 * for: returns at once.
 */
void fd_offload_settle(struct fd_offload *o);

/*
 * How fd_offload_find looks: BY_CT, the connection of live state `key`
 * whose original tuple `ct` carries (ids alone collide), not one on its
 * way; BY_FP, by fast-path id `key`; BY_CUT_SLOT, the cut connection in
 * entry slot `key` (fd_offload_conn.slot, a side table's key: no walk).
 */
enum fd_offload_by { FD_OFFLOAD_BY_CT, FD_OFFLOAD_BY_FP, FD_OFFLOAD_BY_CUT_SLOT };

/*
 * fd_offload_find - one connection's view into *out: 0, -ENOENT (none),
 * -ENOMEM, or -EINVAL (no such `by`).  `tuple` (may be NULL): a copy of
 * its state's original tuple, the caller destroys it.
 */
int fd_offload_find(struct fd_offload *o, enum fd_offload_by by, uint64_t key,
		    const struct nf_conntrack *ct, struct fd_offload_conn *out,
		    struct nf_conntrack **tuple);

/*
 * What fd_offload_mark records of a connection by fast-path id: CUT, the
 * coprocessor answered its DROP, marked cut by `by` (kept for
 * fd_offload_release's caller); PASSED, the inspector set its verdict
 * CUT_THRU (its CONN_MODIFY_FP_VERDICT posted), counted so
 * (fd_offload_conns) unless cut meanwhile (`by` unused).
 */
enum fd_offload_mark { FD_OFFLOAD_MARK_CUT, FD_OFFLOAD_MARK_PASSED };

/* fd_offload_mark - 0, or -ENOENT. */
int fd_offload_mark(struct fd_offload *o, uint64_t fp_id, enum fd_offload_mark mark, uint8_t by);

/*
 * fd_offload_release - cut connections let go: each one's CONN_RECLAIM_FP
 * posted (batched), and once answered it is forgotten.  Its next frames
 * miss the fast path and go to the host, where conntrack makes a new
 * state and the rules in force judge it; one they accept is offloaded
 * again as any new connection.  Never made forwarding here: its state was
 * killed by the cut, so no rule has judged what it would forward.
 * Returns how many of the `n` ids were released (an id not cut, or gone,
 * is skipped); a reclaim without answer leaves the fast path unknown
 * (taken out whole at the next turn, as any such).
 */
long fd_offload_release(struct fd_offload *o, const uint64_t *fp_ids, size_t n);
/*
 * fd_offload_take_out - CONN_RECLAIM_FP and forget it (a cut with "Cut in
 * hardware" off): 0, -ENOENT (not offloaded), or the reclaim's error (the
 * fast path is then taken out whole at the next turn).
 */
int fd_offload_take_out(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct);
/* A posted creation's end: rc 0 and the connection's id, or an error. */
typedef void fd_offload_made_fn(void *dctx, int rc, uint64_t fp_id);
/*
 * fd_offload_post_create_cut - a state not offloaded, to be made in the
 * fast path already dropping: one FLOW_CREATE_FP with verdict DROP, both
 * microflows with the policy's action (DROP where that is FWD, whose
 * verdict is never consulted), posted (fd_cmds_post: batched with the
 * rest of a cut); once answered it is in the table marked cut (by `by`)
 * and done(dctx, 0, id) runs, or done(dctx, rc, 0) with the command's error.
 * It need not qualify.  Returns 0 (done will run), or, done never
 * running: -EEXIST (offloaded already), -ENETUNREACH (not between front
 * ports), -EAGAIN (a neighbour unresolved), -ENOMEM, or an error of
 * NHOP_PROGRAM or of the post.
 */
int fd_offload_post_create_cut(struct fd_offload *o, const struct nf_conntrack *ct, uint8_t by,
			       fd_offload_made_fn *done, void *dctx);

#endif
