/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_cmds: how the binding (fd_offload) and the next hops (fd_nhop) speak
 * to the coprocessor - one call, one command and its answer.  A function
 * table, so the transport can change without touching its users: flowcutd's
 * is the command client's (fd_cmds_q, over fd_cmdq); a test's may be a
 * stand-in.
 *
 * call() returns the command's return code (0 or the coprocessor's negative
 * errno) or the transport's: -ETIMEDOUT, -ECONNRESET or -ENOBUFS mean no
 * answer came, and the command may still take effect (fd_cmds_no_answer).
 * `ans` (cap bytes, may be NULL with cap 0) holds the answer's payload.
 * Called from the main thread only.
 */
#ifndef FLOWCUT_FD_CMDS_H
#define FLOWCUT_FD_CMDS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

/* A posted command's end: its rc (as call()'s) and the answer's payload. */
typedef void fd_cmds_done_fn(void *dctx, int rc, const void *ans, uint16_t ans_len);

struct fd_cmds {
	int (*call)(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans,
		    uint16_t cap);
	/*
	 * Many in flight.  post: 0 and done() runs exactly once later (in a flush or the main
	 * loop's poll), or an rc as call()'s and done() never runs.
	 * flush: wait until every posted command has finished, at most ms
	 * (< 0: until each has, answered or failed at its own deadline): 0,
	 * or an rc as call()'s (no answer: what was in flight failed).
	 */
	int (*post)(void *ctx, uint16_t op, const void *payload, uint16_t len,
		    fd_cmds_done_fn *done, void *dctx);
	int (*flush)(void *ctx, int ms);	/* NULL: nothing is ever left in flight */
	void *ctx;
};

static inline int
fd_cmds_call(const struct fd_cmds *c, uint16_t op, const void *payload, uint16_t len, void *ans,
	     uint16_t cap)
{
	return c->call(c->ctx, op, payload, len, ans, cap);
}

/* fd_cmds_post - see struct fd_cmds. */
int fd_cmds_post(const struct fd_cmds *c, uint16_t op, const void *payload, uint16_t len,
		 fd_cmds_done_fn *done, void *dctx);
/* fd_cmds_flush - see struct fd_cmds. */
int fd_cmds_flush(const struct fd_cmds *c, int ms);

/* fd_cmds_no_answer - did a call end without the coprocessor's answer? */
static inline bool
fd_cmds_no_answer(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -ENOBUFS;
}

struct fd_cmdq;
/*
 * fd_cmds_q - commands through the command client (fd_cmdq): posts are
 * batched and many in flight; call() posts and waits for its own answer
 * (other completions run meanwhile).  While the client is down (a stall or
 * a reboot not yet reset) call() and post() fail at once: -ETIMEDOUT or
 * -ECONNRESET, no wait.
 */
struct fd_cmds fd_cmds_q(struct fd_cmdq *q);

#endif
