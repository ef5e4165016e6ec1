/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_cmdq: the driver's command client - many commands in flight on its
 * link client slot, each finished by a completion.
 *
 * fd_cmdq_post() puts a command on the slot's command ring with a
 * completion; the batch goes with one doorbell (fd_cmdq_kick(), or the
 * next fd_cmdq_poll(), fd_cmdq_wait() or fd_cmdq_flush()).  fd_cmdq_poll()
 * matches each answer to its command by tag, in whatever order they come,
 * and runs its completion with the answer's rc and payload.  In flight:
 * at most the cap given at creation (LK_CMD_SLOTS at most); a post beyond
 * it is refused (-ENOBUFS) until answers have come.
 *
 * Going down: a deadline passed unanswered fails every command in flight
 * -ETIMEDOUT, runs `down` once with FD_CMDQ_STALLED and refuses posts
 * (-EHOSTDOWN); a new boot of the coprocessor fails them -ECONNRESET,
 * runs `down` once with FD_CMDQ_REBOOTED and refuses posts (-ECONNRESET).
 * Both until fd_cmdq_reset().
 *
 * Threads: one thread - the driver's main loop - calls every function of
 * one struct fd_cmdq, and no one else uses the slot's rings (no lk_call
 * on the same struct lk); fd_cmdq_reset() resyncs the event ring too,
 * which must be the same thread's.  Completions and `down` run on it,
 * inside fd_cmdq_poll(), fd_cmdq_flush() and fd_cmdq_destroy() only; they
 * may call fd_cmdq_post(), fd_cmdq_kick(), fd_cmdq_room(), fd_cmdq_state()
 * and fd_cmdq_stats(), nothing else of this module.  No fd to wait on:
 * bound poll(2) with fd_cmdq_timeout_ms(), or sleep in fd_cmdq_wait().
 *
 * fd_cmdq_create (NULL and errno) to fd_cmdq_destroy (what is in flight
 * failed -ECANCELED); the struct lk stays the caller's.
 *
 * Design notes: driver/cmd/README.md.
 */
#ifndef FLOWCUT_FD_CMDQ_H
#define FLOWCUT_FD_CMDQ_H

#include <stdint.h>

#include "lk.h"

#define FD_CMDQ_TIMEOUT_MS 2000	/* a command's deadline unless told */
/*
 * Empty looks at the answer ring before a waiter sleeps (fd_cmdq_flush,
 * and fd_cmds' posts at the cap), about 20 us: a coprocessor that is
 * awake answers within microseconds, and a futex sleep and wake-up cost
 * more than that on these machines.
 */
#define FD_CMDQ_SPIN_POLLS 2000

struct fd_cmdq;

enum fd_cmdq_state {
	FD_CMDQ_UP,		/* posts are taken */
	FD_CMDQ_STALLED,	/* a deadline passed unanswered: posts -EHOSTDOWN */
	FD_CMDQ_REBOOTED,	/* the coprocessor booted anew: posts -ECONNRESET */
};

/*
 * A command's completion.  rc is the coprocessor's answer (0 or a negative
 * errno, see docs/commands.md), or the client's own:
 *   -ETIMEDOUT   the coprocessor stopped answering (FD_CMDQ_STALLED)
 *   -ECONNRESET  the coprocessor rebooted: the command is lost with its tables
 *   -EPROTO      the answer carried its tag but another opcode
 *   -ECANCELED   fd_cmdq_destroy() with the command in flight
 * ans/ans_len: the answer's payload when the coprocessor answered (rc 0,
 * or its error with no payload), else NULL/0.  ans is valid only during
 * the call.
 */
typedef void fd_cmdq_done_fn(void *ctx, int rc, const void *ans, uint16_t ans_len);
/* The link went down: `why` is FD_CMDQ_STALLED or FD_CMDQ_REBOOTED. */
typedef void fd_cmdq_down_fn(void *arg, enum fd_cmdq_state why);
/* A monotonic clock in nanoseconds (tests inject their own). */
typedef uint64_t fd_cmdq_clock_fn(void *arg);

struct fd_cmdq_params {
	unsigned int max_inflight;	/* the cap, 1..LK_CMD_SLOTS; 0: LK_CMD_SLOTS */
	unsigned int timeout_ms;	/* a command's deadline; 0: FD_CMDQ_TIMEOUT_MS */
	unsigned int poll_budget;	/* answers one fd_cmdq_poll() takes; 0: LK_CMD_SLOTS */
	fd_cmdq_down_fn *down;		/* NULL: none (fd_cmdq_state() tells) */
	void *down_arg;
	fd_cmdq_clock_fn *clock;	/* NULL: CLOCK_MONOTONIC */
	void *clock_arg;
};

/* What happened to the commands, since creation. */
struct fd_cmdq_stats {
	uint64_t posted;	/* commands put on the ring */
	uint64_t batches;	/* doorbells rung for them */
	uint64_t answered;	/* completed with the coprocessor's answer */
	uint64_t timed_out;	/* completed -ETIMEDOUT */
	uint64_t reset;		/* completed -ECONNRESET */
	uint64_t bad_op;	/* completed -EPROTO */
	uint64_t canceled;	/* completed -ECANCELED */
	uint64_t late;		/* answers to commands already failed -ETIMEDOUT */
	uint64_t unexpected_tag; /* answers to no command of ours: dropped */
	uint64_t stalls;	/* times the coprocessor stopped answering */
	uint64_t reboots;	/* boots seen */
};

/*
 * fd_cmdq_create - a client over `lk` (attached, its client slot's rings
 * used by nobody else).  NULL and errno: EINVAL (a parameter out of
 * range), ENOMEM.
 */
struct fd_cmdq *fd_cmdq_create(struct lk *lk, const struct fd_cmdq_params *p);

/*
 * fd_cmdq_destroy - fail what is in flight -ECANCELED, free.  NULL does
 * nothing.  An answer still to come lands on the ring for the next holder,
 * who skips it (lk_attach).
 */
void fd_cmdq_destroy(struct fd_cmdq *q);

/*
 * fd_cmdq_post - put one command (len <= FC_CMD_MAX_PAYLOAD bytes of
 * payload, copied) on the ring; `done(ctx, ...)` runs exactly once when it
 * is answered or failed.  Sent with the batch's doorbell.  Returns 0, or,
 * with `done` never to run:
 *   -ENOBUFS     the cap is reached: poll, then post again
 *   -EHOSTDOWN   FD_CMDQ_STALLED (until fd_cmdq_reset)
 *   -ECONNRESET  the coprocessor rebooted (FD_CMDQ_REBOOTED, or not yet
 *                seen by fd_cmdq_poll, which will fail what is in flight)
 *   -EMSGSIZE    len too large
 *   -EINVAL      done is NULL
 */
int fd_cmdq_post(struct fd_cmdq *q, uint16_t op, const void *payload, uint16_t len,
		 fd_cmdq_done_fn *done, void *ctx);

/* fd_cmdq_kick - send what was posted since the last doorbell (one ring). */
void fd_cmdq_kick(struct fd_cmdq *q);

/* fd_cmdq_room - how many posts are taken now (0 unless FD_CMDQ_UP). */
/* fd_cmdq_cap - how many commands may be in flight at once. */
unsigned int fd_cmdq_cap(const struct fd_cmdq *q);
unsigned int fd_cmdq_room(const struct fd_cmdq *q);

/* fd_cmdq_inflight - commands posted whose completion has not run. */
unsigned int fd_cmdq_inflight(const struct fd_cmdq *q);

/*
 * fd_cmdq_poll - the main loop's, every turn: kick, take at most
 * poll_budget answers and run their completions, then notice a reboot or
 * a passed deadline (failing what is in flight, `down` once).  Returns
 * how many completions ran.
 */
unsigned int fd_cmdq_poll(struct fd_cmdq *q);

/*
 * fd_cmdq_timeout_ms - how long the main loop may sleep before
 * fd_cmdq_poll() has a deadline to look at: ms to the earliest deadline
 * (0 if passed), or -1 when nothing is in flight.
 */
int fd_cmdq_timeout_ms(const struct fd_cmdq *q);

/*
 * fd_cmdq_wait - kick, then sleep until an answer may be there, at most
 * timeout_ms and at most fd_cmdq_timeout_ms().  Completions run in the
 * next fd_cmdq_poll(), not here.
 */
void fd_cmdq_wait(struct fd_cmdq *q, int timeout_ms);

/*
 * fd_cmdq_flush - for what must wait (a resync): poll until every command
 * posted has completed or timeout_ms passed.  0: none in flight;
 * -ETIMEDOUT: some still are (they keep their own deadlines); -EHOSTDOWN
 * or -ECONNRESET: the link went down (FD_CMDQ_STALLED / _REBOOTED) and
 * what was in flight failed.
 */
int fd_cmdq_flush(struct fd_cmdq *q, int timeout_ms);

/*
 * fd_cmdq_reset - after `down`, once the driver has acted on it: posts
 * are taken again (FD_CMDQ_UP: nothing to do).  After a reboot it resyncs
 * the link (lk_resync(), which the driver may already have called for its
 * event ring: no harm).  After a stall, commands failed -ETIMEDOUT keep
 * their places until their late answers come (or a reboot), so the room
 * may be less than the cap.  0, or lk_resync()'s -EPROTO (the state is
 * kept: try again).
 */
int fd_cmdq_reset(struct fd_cmdq *q);

/* fd_cmdq_state - FD_CMDQ_UP, or why posts are refused. */
enum fd_cmdq_state fd_cmdq_state(const struct fd_cmdq *q);

/* fd_cmdq_stats - a copy of the counts. */
void fd_cmdq_stats(const struct fd_cmdq *q, struct fd_cmdq_stats *out);

#endif /* FLOWCUT_FD_CMDQ_H */
