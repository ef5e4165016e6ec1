/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct_io: the handle's calls as a function table (fd_ct_io_of), the way
 * its users (the binding, the cut, the inspector) call conntrack, so that a
 * test can stand in for it.
 */
#include "fd_ct.h"

/* ---- the I/O as a function table (fd_ct_io_of) ---- */

static int
io_events(void *ctx, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	return fd_ct_events(ctx, max, cb, arg);
}

static void
io_drain(void *ctx)
{
	fd_ct_drain(ctx);
}

static struct nf_conntrack *
io_get(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_get(ctx, tuple);
}

static int
io_dump(void *ctx, struct nf_conntrack ***out, size_t *n)
{
	return fd_ct_dump(ctx, out, n);
}

static int
io_mark(void *ctx, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask)
{
	return fd_ct_mark(ctx, tuple, mark, mask);
}

static int
io_tcp_loosen(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_tcp_loosen(ctx, tuple);
}

static int
io_timeout(void *ctx, const struct nf_conntrack *tuple, uint32_t secs)
{
	return fd_ct_timeout(ctx, tuple, secs);
}

static int
io_kill(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_kill(ctx, tuple);
}

static int
io_kill_post(void *ctx, const struct nf_conntrack *tuple, fd_ct_done_fn *done, void *arg)
{
	return fd_ct_kill_post(ctx, tuple, done, arg);
}

static int
io_kill_flush(void *ctx)
{
	return fd_ct_kill_flush(ctx);
}

static int
io_update_post(void *ctx, const struct nf_conntrack *tuple, const struct fd_ct_update *u,
	       fd_ct_done_fn *done, void *arg)
{
	return fd_ct_update_post(ctx, tuple, u, done, arg);
}

static int
io_update_flush(void *ctx)
{
	return fd_ct_update_flush(ctx);
}

static int
io_get_post(void *ctx, const struct nf_conntrack *tuple, fd_ct_state_fn *done, void *arg)
{
	return fd_ct_get_post(ctx, tuple, done, arg);
}

static int
io_get_flush(void *ctx)
{
	return fd_ct_get_flush(ctx);
}

static int
io_dump_start(void *ctx, uint32_t mark, uint32_t mask)
{
	return fd_ct_dump_start(ctx, mark, mask);
}

static int
io_dump_next(void *ctx, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg)
{
	return fd_ct_dump_next(ctx, max_datagrams, cb, arg);
}

static uint64_t
io_events_lost(void *ctx)
{
	return fd_ct_events_lost(ctx);
}

static uint32_t
io_established_timeout(void *ctx, uint8_t l4proto)
{
	return fd_ct_established_timeout(ctx, l4proto);
}

struct fd_ct_io
fd_ct_io_of(struct fd_ct *c)
{
	return (struct fd_ct_io){
		.events = io_events, .drain = io_drain, .get = io_get, .dump = io_dump,
		.mark = io_mark, .tcp_loosen = io_tcp_loosen, .timeout = io_timeout,
		.kill = io_kill, .kill_post = io_kill_post, .kill_flush = io_kill_flush,
		.update_post = io_update_post, .update_flush = io_update_flush,
		.get_post = io_get_post, .get_flush = io_get_flush, .dump_start = io_dump_start,
		.dump_next = io_dump_next, .events_lost = io_events_lost,
		.established_timeout = io_established_timeout, .ctx = c,
	};
}
