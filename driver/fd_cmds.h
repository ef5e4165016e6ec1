/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_cmds: how the binding (fd_offload) and the next hops (fd_nhop) speak
 * to the coprocessor - one call, one command and its answer.  A function
 * table, so the transport can change (today lk_call on the link's command
 * ring; later the tagged command client) without touching its users.
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

struct lk;

struct fd_cmds {
	int (*call)(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans,
		    uint16_t cap);
	void *ctx;
};

static inline int
fd_cmds_call(const struct fd_cmds *c, uint16_t op, const void *payload, uint16_t len, void *ans,
	     uint16_t cap)
{
	return c->call(c->ctx, op, payload, len, ans, cap);
}

/* fd_cmds_no_answer - did a call end without the coprocessor's answer? */
static inline bool
fd_cmds_no_answer(int rc)
{
	return rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -ENOBUFS;
}

/* fd_cmds_lk - commands over the link's command ring (lk_call, 2 s each). */
struct fd_cmds fd_cmds_lk(struct lk *lk);

#endif
