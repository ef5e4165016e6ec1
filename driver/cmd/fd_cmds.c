/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cmds: see fd_cmds.h. */
#include "fd_cmds.h"

#include <limits.h>
#include <string.h>

#include "fd_cmdq.h"

int
fd_cmds_post(const struct fd_cmds *c, uint16_t op, const void *payload, uint16_t len,
	     fd_cmds_done_fn *done, void *dctx)
{
	return c->post(c->ctx, op, payload, len, done, dctx);
}

int
fd_cmds_flush(const struct fd_cmds *c, int ms)
{
	return c->flush ? c->flush(c->ctx, ms) : 0;
}

/* ---- through the command client ---- */

/* The client's refusals as call()'s: no answer came, nothing waited. */
static int
q_rc(int rc)
{
	return rc == -EHOSTDOWN ? -ETIMEDOUT : rc;
}

static int
q_post(void *ctx, uint16_t op, const void *payload, uint16_t len, fd_cmds_done_fn *done,
       void *dctx)
{
	struct fd_cmdq *q = ctx;
	int rc;

	/*
	 * At the cap: take answers until half the places are free (their
	 * deadlines bound it), so the next posts go out together behind one
	 * doorbell.  Resuming at the first free place would trade answers
	 * with the coprocessor one by one, at one round trip's rate.
	 */
	while ((rc = fd_cmdq_post(q, op, payload, len, done, dctx)) == -ENOBUFS) {
		unsigned int polls = 0;

		/* places held by commands timed out only: no deadline frees them */
		if (fd_cmdq_inflight(q) == 0)
			return -ENOBUFS;
		while (fd_cmdq_state(q) == FD_CMDQ_UP && fd_cmdq_inflight(q) > 0 &&
		       fd_cmdq_room(q) < (fd_cmdq_cap(q) + 1) / 2) {
			if (fd_cmdq_poll(q) != 0)
				polls = 0;
			else if (++polls >= FD_CMDQ_SPIN_POLLS) {
				fd_cmdq_wait(q, 10);
				polls = 0;
			}
		}
	}
	return q_rc(rc);
}

struct sync_call {
	bool done;
	int rc;
	void *ans;
	uint16_t cap;
};

static void
sync_done(void *ctx, int rc, const void *ans, uint16_t len)
{
	struct sync_call *s = ctx;

	s->done = true;
	s->rc = rc;
	if (rc == 0 && s->cap) {
		if (len > s->cap)
			s->rc = -EMSGSIZE;	/* as lk_call: the answer did not fit */
		else
			memcpy(s->ans, ans, len);
	}
}

static int
q_call(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t cap)
{
	struct fd_cmdq *q = ctx;
	struct sync_call s = { .ans = ans, .cap = ans ? cap : 0 };
	int rc = q_post(q, op, payload, len, sync_done, &s);

	if (rc != 0)
		return rc;
	fd_cmdq_kick(q);
	while (!s.done) {
		/* the client fails it at its deadline: the wait is bounded */
		if (fd_cmdq_poll(q) == 0 && !s.done)
			fd_cmdq_wait(q, 10);
	}
	return s.rc;
}

static int
q_flush(void *ctx, int ms)
{
	/* < 0: until each has finished - its own deadline bounds the wait */
	int rc = fd_cmdq_flush(ctx, ms < 0 ? INT_MAX : ms);

	return rc == -EHOSTDOWN ? -ETIMEDOUT : rc;
}

struct fd_cmds
fd_cmds_q(struct fd_cmdq *q)
{
	return (struct fd_cmds){ .call = q_call, .post = q_post, .flush = q_flush, .ctx = q };
}
