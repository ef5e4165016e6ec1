/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload: the binding - conntrack's states bound to the fast path's
 * connections.  It offloads a connection once the host's firewall has
 * accepted it and seen it work: TCP established and assured, UDP assured,
 * ICMP echo answered; its mark carries the bit fd_nft's chain sets; no
 * helper, zone 0, both ends routed out of front ports, neighbours
 * resolved (a state waits for its neighbour).  It takes a connection out
 * when its state goes, its path changes or the ruleset changes.
 *
 * Main thread only (its commands, conntrack's and the routes' sockets are
 * the main thread's).  fd_offload_open binds over what the caller opened
 * and owns: the commands, conntrack's I/O, the routes and the next hops
 * must outlive the binding, which closes none of them.
 * fd_offload_close(NULL) does nothing.  The table as the cut sees it is
 * fd_offload_cut.h.
 *
 * What the host sees of it: nf_conntrack_events set to 1 at start; an
 * offloaded TCP state made liberal (its stale highest ACK forgotten when
 * it leaves); an offloaded state's timeout T_long = P + 86,400 s (P:
 * conntrack's timeout of a working state), so `timeout > P` marks a state
 * a flowcutd offloaded, given again every 12 h, and max(0, P - idle) when
 * it leaves; the mark bit cleared by a masked update, never a read and a
 * write.
 *
 * Errors: fd_offload_open NULL and errno; fd_offload_ruleset_changed and
 * fd_offload_try 0 or a negative errno (beside each).  A command with no
 * answer leaves the fast path unknown: a resync reconciles it, retried
 * each second until it gets through.
 *
 * Design notes: driver/offload/README.md.
 */
#ifndef FLOWCUT_FD_OFFLOAD_H
#define FLOWCUT_FD_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_defs.h>

#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_nhop.h"
#include "fd_route.h"
#include "fd_stats.h"
#include "lk.h"

struct nf_conntrack;

/*
 * The budgets of a turn (docs/plan-a-million.md section 4):
 * - FD_OFFLOAD_EVENTS_PER_TURN: conntrack event datagrams read per
 *   fd_offload_events() call;
 * - FD_OFFLOAD_UPDATES_PER_TURN: conntrack updates a ruleset change's
 *   unmark and the extensions post in one fd_offload_work(), and never
 *   more than the event datagrams fd_offload_events read this turn while
 *   it left some unread: each update comes back as one own event, and
 *   own events must not pile up in the socket behind the others (read
 *   whole, the full budget);
 * - FD_OFFLOAD_JUDGE_PER_TURN: states read again (GET) and judged after
 *   a ruleset change's unmark (the ones that asked while it ran);
 * - FD_OFFLOAD_PATHS_PER_TURN: entries looked at by the paths job (and
 *   visited by the unmark's walk of the table).
 */
#define FD_OFFLOAD_EVENTS_PER_TURN 256
#define FD_OFFLOAD_UPDATES_PER_TURN 256
#define FD_OFFLOAD_JUDGE_PER_TURN 256
#define FD_OFFLOAD_PATHS_PER_TURN 4096
/* - FD_OFFLOAD_DUMP_PER_TURN: datagrams of the unmark's dump read in one fd_offload_work(). */
#define FD_OFFLOAD_DUMP_PER_TURN 4

struct fd_offload_cfg {
	unsigned int nports;
	unsigned int ifindex[FC_MAX_PORTS];	/* the front ports' TAPs */
	uint8_t mac[FC_MAX_PORTS][6];
	uint32_t mark_bit;			/* fd_nft's */
	bool cut_in_hardware;			/* action IPS, else FWD */
	uint16_t timeout_s;			/* the fast path's idle timeout (clamped to P) */
	/* the clock, CLOCK_MONOTONIC ns (NULL: fd_clock_ns): a test's stand-in moves time */
	uint64_t (*now_ns)(void);
	/*
	 * The inspector's word on a connection to a TLS port
	 * (fd_policy_inspected): NULL (none), or FC_VERDICT_CUT_THRU when it
	 * has passed the connection already: made so at once; else
	 * FC_VERDICT_SEND_TO_IPS: an IPS connection is made SEND_TO_IPS (its
	 * frames come up to the inspector), a FWD one (Cut in hardware off)
	 * is not offloaded until passed (fd_offload_try).  Main thread.
	 */
	uint8_t (*inspect_verdict)(void *arg, const struct nf_conntrack *ct);
	void *inspect_arg;
	/*
	 * Offloads sampled and read back once for the time to their first
	 * forwarded frame (fd_first.h: at most 256 waiting, each read 5 times
	 * at most over ~3 s, nothing once offloads stop): flowcutd's; false
	 * posts no such read (the stand-in tests count every command).
	 */
	bool first_frame_reads;
};

/*
 * The binding's counters, each published under its name (fd_stats.h).
 * offload_us: qualify (the event parsed, or the state handed in) ->
 * FLOW_CREATE_FP answered 0, us, since open: fd_hist's percentiles (within
 * 1/16 above).  first_frame: qualify -> the first frame the fast path
 * forwarded, us, since open, over the offloads sampled and read back once
 * (fd_first.h): the percentiles, the samples measured, the ones that
 * showed no frame forwarded (gone first, or silent ~3 s), the offers let
 * go while FD_FIRST_MAX samples waited.
 */
#define FD_OFFLOAD_STATS(X) \
	X(offload, offloaded)		/* FLOW_CREATE_FP answered 0 */ \
	X(offload, offloaded_at_pass)	/* of them, CUT_THRU at once: the inspector had passed them */ \
	X(offload, refused)		/* FLOW_CREATE_FP answered an error */ \
	X(offload, removed)		/* taken out because the state went away */ \
	X(offload, revived)		/* give-backs revived */ \
	X(offload, resyncs)		/* reconciles started (start, boot, lost events) */ \
	X(offload, rev_bumps)		/* ruleset changes */ \
	X(offload, nhop_followed)	/* next hops programmed again for a neighbour's change */ \
	X(offload, rerouted)		/* connections moved (or taken out) by a path change */ \
	X(offload, waiting_dropped)	/* states that waited for a neighbour, let go for room */ \
	X(offload, solicited)		/* neighbours the host took an ask to resolve, for a waiting state */ \
	X(offload, cut_adopted)		/* dropping connections a flowcutd before cut, taken up by a resync */ \
	X(offload, ct_events_lost)	/* conntrack's events lost (ct.events said -ENOBUFS) */ \
	X(offload, resync_last_ms)	/* the last resync's run, its start to its end, ms */ \
	X(offload, resync_taken_out)	/* connections resyncs took out whose states live on */ \
	X(offload, extended)		/* states given T_long again, 12 h on, still offloaded */ \
	X(offload, left)		/* states whose timeout went back to P - idle on leaving */ \
	X(offload, offload_us_p50) \
	X(offload, offload_us_p99) \
	X(offload, first_frame_us_p50) \
	X(offload, first_frame_us_p99) \
	X(offload, first_frame_samples) \
	X(offload, first_frame_unseen) \
	X(offload, first_frame_skipped)

struct fd_offload_stats {
	FD_OFFLOAD_STATS(FD_STAT_FIELD)
};

/*
 * The connections in the binding's tables (those in nentries: made and
 * answered, or adopted; a pending offload is not one yet), by the
 * action of their microflows and their verdict as flowcutd last set
 * them (made, the inspector's pass, a cut's drop, a revision's remake),
 * and how many of them are cut.  Kept as entries enter, change and
 * leave - O(1) a change, never a walk - so the control socket's
 * `counters` asks it at no cost (fd_offload_conns).
 */
struct fd_offload_conns {
	uint32_t n[FC_ACTION_MAX][FC_VERDICT_MAX];
	uint32_t cut;
};

struct fd_offload;

/*
 * fd_offload_open - a binding over what the caller opened and owns: the
 * commands (`cmds`), conntrack's I/O (`ct`: fd_ct_io_of, or a stand-in),
 * the host's routes (`route`: fd_route_io_of, or a stand-in) and the next
 * hops (`nhops`, opened on the same commands).  The three tables are
 * copied; their contexts and `nhops` must outlive the binding, which
 * closes none of them.  The front ports' MTUs are asked at once.  NULL and
 * errno (an MTU that could not be read: said).
 */
struct fd_offload *fd_offload_open(const struct fd_cmds *cmds, const struct fd_ct_io *ct,
				   const struct fd_route_io *route, struct fd_nhop *nhops,
				   const struct fd_offload_cfg *cfg);
void fd_offload_close(struct fd_offload *o);
/*
 * fd_offload_events - handle at most FD_OFFLOAD_EVENTS_PER_TURN of
 * conntrack's event datagrams (ct->events, with the binding's handler);
 * what is left keeps the socket (the caller polls fd_ct_fd) readable for
 * the next turn.  Lost events (ENOBUFS) are answered by a resync.
 */
void fd_offload_events(struct fd_offload *o);
/* fd_offload_skip_events - conntrack's queued events thrown away (a resync is coming). */
void fd_offload_skip_events(struct fd_offload *o);
/*
 * fd_offload_resync - reconcile the binding with the fast path (empty
 * after its boot, or whatever a previous flowcutd left) and conntrack:
 * starts the job (one asked for while one runs follows it), which
 * fd_offload_sync_step carries on.  By difference (fd_offload_sync.c):
 * the fast path's table brief-read, conntrack's states of the mark bit
 * streamed, and only what differs changed - a connection whose state
 * lives and stays allowed is never sent to the host.  A table that cannot
 * be read briefly is taken out whole and offloaded again.
 */
void fd_offload_resync(struct fd_offload *o);
/*
 * fd_offload_sync_step - one step of the resync under way, each turn: at
 * most 32 CONN_READ_BRIEF (posted, then flushed), 64 conntrack dump
 * datagrams, or 4,096 entries looked at with 64 GETs or reclaims posted.
 * Returns whether work is left (false: no resync runs).
 * fd_offload_sync_finish - the run under way stepped to its end, now (a
 * test's, a bench's, a tool's).
 */
bool fd_offload_sync_step(struct fd_offload *o);
void fd_offload_sync_finish(struct fd_offload *o);
/* fd_offload_resyncing - a resync runs, or one asked for waits for the one running. */
bool fd_offload_resyncing(const struct fd_offload *o);
/* fd_offload_fp_event - a coprocessor event (aged out, given back, removed). */
void fd_offload_fp_event(struct fd_offload *o, const struct lk_event *ev);
/*
 * fd_offload_work - the binding's own jobs, every turn, each its budget
 * (above), in this order: a resync that did not get through retried
 * (once a second at most: a command without an answer leaves the fast
 * path unknown, and it is taken out whole); a ruleset change's unmark
 * and judging (fd_offload_ruleset_changed); the paths job
 * (fd_offload_paths); the states due for their extension (at most
 * FD_OFFLOAD_EXTEND_PER_TURN, and what the unmark left of the update
 * budget; none due: no call).  Nothing per connection that is not due.
 */
#define FD_OFFLOAD_EXTEND_PER_TURN 256
void fd_offload_work(struct fd_offload *o);
/*
 * fd_offload_busy - has a job of fd_offload_work work left now (the
 * unmark or judging of a ruleset change, the paths job's lap, an
 * extension due), or is an offload, GET or leave of the binding's in
 * flight (its answer taken at the next turn's start)?  The loop then waits 0 ms for its sources, so the job
 * goes on at once after them.  A resync to retry is not: it waits its
 * second.
 */
bool fd_offload_busy(const struct fd_offload *o);
/*
 * fd_offload_ruleset_changed - every connection judged again by the new
 * rules: a new firewall revision first (one command: from its answer on,
 * nothing the old rules judged forwards, however many connections there
 * are) and the cut connections made again at it (still dropping), before
 * it returns.  The rest is a job of fd_offload_work, bounded a turn (its
 * budgets above; fd_offload_busy while it runs): the others leave and
 * are forgotten, then conntrack's mark bits are cleared (the dump by the
 * bit) so only the new rules set them again, then the states that asked
 * to be offloaded meanwhile are judged (until the bits are cleared none
 * is offloaded: its bit could be the old rules').  Also what a lapsed
 * lease (fd_lease) is answered with.  0, or the error of the command
 * that failed (no answer): then everything is taken out and a resync
 * clears the bits before it offloads anything; a lapsed lease is not
 * reopened.  A job that fails later (the dump) does the same.
 */
int fd_offload_ruleset_changed(struct fd_offload *o);
/*
 * fd_offload_rt_change - one of rtnetlink's changes (fd_route_watch_read):
 * a neighbour's is followed at once; a route's or a front port's MTU is
 * noted, and fd_offload_paths() acts on it.
 */
void fd_offload_rt_change(struct fd_offload *o, const struct fd_rt_change *c);
/* fd_offload_rt_lost - rtnetlink's changes were lost: every neighbour read again, paths looked at. */
void fd_offload_rt_lost(struct fd_offload *o);
/*
 * fd_offload_paths - the paths job's share of a turn (fd_offload_work
 * calls it; a caller may too, after a batch of changes): after a route or
 * MTU change, every offloaded connection whose route now goes over
 * another next hop (or with another MTU) is taken out, to come back once
 * the rules pass it on its new path - FD_OFFLOAD_PATHS_PER_TURN entries a
 * call, two route lookups each (the caller's route cache answers them) -
 * and once every entry has been looked at, the states that wait for a
 * path are tried again (and after a neighbour resolved).
 */
void fd_offload_paths(struct fd_offload *o);
/*
 * fd_offload_try - offload a state now, if it qualifies (the inspector
 * passed it).  0, or -EEXIST (in already), -EPERM (does not qualify),
 * -EINPROGRESS (not passed yet), -ENETUNREACH, -EAGAIN (waits for a
 * neighbour), -ENOMEM, or a command's error.
 */
int fd_offload_try(struct fd_offload *o, const struct nf_conntrack *ct);
/* fd_offload_settings - the action for connections offloaded from now on. */
void fd_offload_settings(struct fd_offload *o, bool cut_in_hardware, uint16_t timeout_s);
/*
 * fd_offload_tls_ports - TCP to these ports (host order; n 0: none, the
 * start) is the inspector's from now on: see cfg.inspect_verdict.  At
 * most FD_OFFLOAD_TLS_PORTS_MAX; more are ignored.
 */
#define FD_OFFLOAD_TLS_PORTS_MAX 16
void fd_offload_tls_ports(struct fd_offload *o, const uint16_t *ports, unsigned int n);
void fd_offload_stats(const struct fd_offload *o, struct fd_offload_stats *out);
/* fd_offload_conns - the connections by action and verdict, and cut (struct fd_offload_conns). */
void fd_offload_conns(const struct fd_offload *o, struct fd_offload_conns *out);

#endif
