/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_cut: the cut - connections the host's firewall has decided must die.
 *
 * A cut takes address ranges (a canonical struct fc_list) or one
 * connection.  A live conntrack state is in the ranges when either end as
 * the wire sees it is: the original tuple's source or the reply tuple's
 * source, NAT included.  With "Cut in hardware" on, each is made dropping
 * on the coprocessor first (offloaded: verdict or action DROP; not
 * offloaded: created dropping) and its state killed once that is
 * answered; off, it is taken out of the fast path and its state killed.
 * A drop refused or unanswered falls back to the host.  Every kill has
 * happened or failed when the call returns.  A connection cut already is
 * skipped.  Each cut is counted by trigger, in hardware or on the host,
 * and logged on stdout in one line.
 *
 * Never cut (fd_cut_never): a connection with either end in the list is
 * not cut by any trigger.  For hand, conn, tls and list the cut is refused
 * (said once per address, counted never_cut_refused); for set it is
 * warned of (never_cut_set) and an offloaded one is given back to the
 * host: taken out and its state killed (never_cut_given_back).
 *
 * Main thread only (the binding's).  The parts given to fd_cut_open are
 * the caller's and must outlive the cut.  fd_cut_close(NULL) does
 * nothing.  Errors are negative errnos, beside each call.
 *
 * Design notes: driver/cut/README.md.
 */
#ifndef FLOWCUT_FD_CUT_H
#define FLOWCUT_FD_CUT_H

#include <stdbool.h>
#include <stdint.h>

#include "fc_list.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_offload_cut.h"
#include "fd_stats.h"

/* What asked for a cut: its enum value and its name in logs and stats. */
#define FD_CUT_TRIGGERS(X)	\
	X(HAND, "hand")		/* flowcutd's own cut4/cut6, flowcutctl cut ADDRESS */ \
	X(CONN, "conn")		/* flowcutctl cut --conn ID */ \
	X(TLS, "tls")		/* the inspector: a listed JA4 or JA3 (fd_ips) */ \
	X(SET, "set")		/* a watched set of the host's ruleset (fd_watch) */ \
	X(LIST, "list")		/* a watched list file (fd_watch) */

enum fd_cut_trigger {
#define FD_CUT_ENUM_(n, s) FD_CUT_##n,
	FD_CUT_TRIGGERS(FD_CUT_ENUM_)
#undef FD_CUT_ENUM_
	FD_CUT_NTRIGGERS
};

const char *fd_cut_trigger_name(enum fd_cut_trigger t);

/* The cut's counters, each published under its name (fd_stats.h) */
#define FD_CUT_STATS(X) \
	X(cut, cut_failed)		/* a state that could not be killed (said why) */ \
	X(cut, cut_released)		/* cut connections let go (fd_cut_release) */ \
	X(cut, never_cut_refused)	/* a cut of a never-cut address refused (hand, conn, tls, list) */ \
	X(cut, never_cut_set)		/* a watched set's cut over a never-cut address, warned of */ \
	X(cut, never_cut_given_back)	/* ... its offloaded connections given back to the host */

/* the cuts by trigger: flowcutd's stats' "cuts" */
struct fd_cut_stats {
	uint64_t in_hardware[FD_CUT_NTRIGGERS];	/* dropping on the coprocessor, state killed */
	uint64_t on_host[FD_CUT_NTRIGGERS];	/* state killed, not (or no longer) in the fast path */
	FD_CUT_STATS(FD_STAT_FIELD)
};

/* never-cut addresses said once each, at most (after: counted, not said) */
#define FD_CUT_NEVER_SAID 4096

struct fd_cut;

struct fd_nft;

/* What a cut engine is handed; the caller opened each and owns it. */
struct fd_cut_parts {
	struct fd_offload *off;		/* the binding's table (fd_offload_cut.h) */
	struct fd_ct_io ct;		/* conntrack: the kills, the dump (the binding's) */
	struct fd_cmds cmds;		/* the drops (the binding's commands) */
	struct fd_nft *nft;		/* conn4/conn6 for the kills on the host (NULL: not; fd_nft.h) */
	bool cut_in_hardware;		/* the setting at open: fd_cut_settings follows it */
};

/*
 * fd_cut_open - a cut engine over `parts` (copied; the binding, the
 * contexts of ct and cmds, and nft must outlive it).  NULL, errno.
 */
struct fd_cut *fd_cut_open(const struct fd_cut_parts *parts);
void fd_cut_close(struct fd_cut *c);
/*
 * fd_cut_settings - "Cut in hardware" for the cuts from now on (dropping
 * on the coprocessor first, else killed on the host); the caller sets it
 * with the binding's (fd_offload_settings).
 */
void fd_cut_settings(struct fd_cut *c, bool cut_in_hardware);

/*
 * fd_cut_never - the never-cut list from now on (canonical; copied).  The
 * connections cut already with an end in it (by any trigger) are released
 * (as fd_cut_release: taken out of the fast path, the host's rules judge
 * their next frames).  What it no longer protects is cut again only if a
 * trigger asks again: the caller reads the triggers again (fd_watch_boot,
 * fd_trigger_hand_all).  Returns how many were released, or -ENOMEM (the
 * list before stays).
 */
long fd_cut_never(struct fd_cut *c, const struct fc_list *never);

/*
 * fd_cut_ranges - cuts every live state with a far end in `l`.  Returns
 * how many were cut (0: none in it), or -EIO when conntrack's dump did not
 * complete (what it held was cut; the rest is not).
 */
int fd_cut_ranges(struct fd_cut *c, const struct fc_list *l, enum fd_cut_trigger t);

/*
 * fd_cut_state - cuts one live conntrack state (whole, as GET or a dump
 * gives it), offloaded or not, as a cut of ranges cuts each: made dropping
 * on the coprocessor first with the setting on (created dropping if it is
 * not offloaded), then killed; with it off, killed on the host behind
 * conn4/conn6.  1 when cut, 0 when it was cut already, -EPERM when an end
 * is never cut (refused or given back, as above; said and counted).
 */
int fd_cut_state(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t);

/*
 * fd_cut_conn - cuts one offloaded connection by its fast-path id.  0,
 * -ENOENT (no such connection in the binding), -EALREADY (cut already),
 * -EPERM (an end is never cut: refused), or -ENOMEM.
 */
int fd_cut_conn(struct fd_cut *c, uint64_t fp_id, enum fd_cut_trigger t);

/*
 * What a fingerprint's cut carries to its record (fd_why.h) besides its
 * trigger: the watched_fingerprints file that matched (its path; NULL:
 * none named) and the fingerprint's line in it (from 1; 0: not known).
 * fd_cut_conn_from, fd_cut_state_from - fd_cut_conn and fd_cut_state with
 * it (`from` NULL: as they are).  A choice: a cause beside the trigger,
 * not a line in every call, so the cuts that keep no line (hand, conn,
 * set, list: theirs is found by the address when asked) keep their calls.
 */
struct fd_cut_cause {
	const char *list;
	uint32_t line;
};
int fd_cut_conn_from(struct fd_cut *c, uint64_t fp_id, enum fd_cut_trigger t,
		     const struct fd_cut_cause *from);
int fd_cut_state_from(struct fd_cut *c, const struct nf_conntrack *ct, enum fd_cut_trigger t,
		      const struct fd_cut_cause *from);

/*
 * fd_cut_release - the cut undone where what cut it is gone: every
 * connection cut by hand, a watched set or a list (or by a flowcutd before
 * this one: its trigger is unknown, so its addresses decide) with neither
 * end in `in_force` - the union of every address cut in force now: the
 * cut sets, the watched sets, the lists - is taken out of the fast path
 * (fd_offload_release: its next frames go to the host, its rules judge
 * it, a new state, offloaded again if they accept it).  One still held by
 * any of them stays cut; one cut by a fingerprint (tls) or by connection
 * (conn) stays cut until it ages out.  The caller must pass all that is in
 * force (a set it could not read: do not call).  Returns how many were
 * released, or -ENOMEM (none).  Each said in one line, and the release's
 * figures.
 */
long fd_cut_release(struct fd_cut *c, const struct fc_list *in_force);
/*
 * fd_cut_releasable - how many connections are cut by an address (and so
 * may be released: fd_cut_release), from the binding's table; -ENOMEM.
 */
long fd_cut_releasable(struct fd_cut *c);

void fd_cut_stats(const struct fd_cut *c, struct fd_cut_stats *out);

struct fd_why;
/*
 * fd_cut_why - each connection made dropping from now on keeps its record
 * in `why` (fd_why.h: trigger, source, when; it must outlive the cut; NULL:
 * none kept).
 */
void fd_cut_why(struct fd_cut *c, struct fd_why *why);

/* fd_cut_never_list - the never-cut list in force (canonical; the cut's). */
const struct fc_list *fd_cut_never_list(const struct fd_cut *c);

#endif
