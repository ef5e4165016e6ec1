/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cmdq: see fd_cmdq.h for the contract. */
#include "fd_cmdq.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

#define PLACE_BITS 8	/* a tag's low bits: the command's place */
_Static_assert(LK_CMD_SLOTS == 1u << PLACE_BITS, "a place per ring slot");

enum place_state {
	P_FREE,
	P_LIVE,		/* posted, its completion not yet run */
	P_DEAD,		/* failed -ETIMEDOUT; still on the rings until answered */
};

/* One command in flight. */
struct place {
	uint32_t tag;
	uint16_t op;
	uint8_t state;		/* enum place_state */
	uint64_t deadline;	/* ns, on q's clock */
	fd_cmdq_done_fn *done;
	void *ctx;
};

struct fd_cmdq {
	struct lk *lk;
	uint64_t boot_id;	/* the boot the commands in flight were posted to */
	enum fd_cmdq_state state;
	unsigned int cap;
	unsigned int budget;
	uint64_t timeout_ns;
	fd_cmdq_down_fn *down;
	void *down_arg;
	fd_cmdq_clock_fn *clock;
	void *clock_arg;
	uint32_t seq;		/* the next tag's sequence */
	unsigned int live;
	unsigned int dead;
	uint64_t dl_floor;	/* at or before every live command's deadline (deadline()) */
	unsigned int unkicked;	/* posted since the last doorbell */
	unsigned int nfree;
	uint8_t free[LK_CMD_SLOTS];	/* a stack of free places */
	struct place place[LK_CMD_SLOTS];
	struct fd_cmdq_stats st;
	uint64_t ans[FC_CMD_MAX_PAYLOAD / 8 + 1];	/* the answer being completed */
};

static uint64_t
now_ns(const struct fd_cmdq *q)
{
	struct timespec ts;

	if (q->clock != NULL)
		return q->clock(q->clock_arg);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct fd_cmdq *
fd_cmdq_create(struct lk *lk, const struct fd_cmdq_params *p)
{
	struct fd_cmdq *q;

	if (lk == NULL || lk_client(lk) < 0 || p->max_inflight > LK_CMD_SLOTS) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	q->lk = lk;
	q->boot_id = lk_boot_id(lk);
	q->state = FD_CMDQ_UP;
	q->cap = p->max_inflight ? p->max_inflight : LK_CMD_SLOTS;
	q->budget = p->poll_budget ? p->poll_budget : LK_CMD_SLOTS;
	q->timeout_ns = (uint64_t)(p->timeout_ms ? p->timeout_ms : FD_CMDQ_TIMEOUT_MS) * 1000000ull;
	q->dl_floor = UINT64_MAX;
	q->down = p->down;
	q->down_arg = p->down_arg;
	q->clock = p->clock;
	q->clock_arg = p->clock_arg;
	if (getrandom(&q->seq, sizeof(q->seq), 0) != sizeof(q->seq))
		q->seq = (uint32_t)now_ns(q);
	for (unsigned int i = 0; i < LK_CMD_SLOTS; i++)
		q->free[q->nfree++] = (uint8_t)(LK_CMD_SLOTS - 1 - i);
	return q;
}

static void
place_free(struct fd_cmdq *q, struct place *pl)
{
	if (pl->state == P_LIVE)
		q->live--;
	else
		q->dead--;
	pl->state = P_FREE;
	q->free[q->nfree++] = (uint8_t)(pl - q->place);
}

/*
 * Fails every live command with rc.  Each is marked first and completed
 * after, so a completion that posts finds the places as they now are.
 */
static unsigned int
fail_live(struct fd_cmdq *q, int rc, bool keep_place, uint64_t *count)
{
	struct place *todo[LK_CMD_SLOTS];
	unsigned int n = 0;

	for (unsigned int i = 0; i < LK_CMD_SLOTS; i++) {
		struct place *pl = &q->place[i];

		if (pl->state != P_LIVE)
			continue;
		todo[n++] = pl;
		if (keep_place) {
			pl->state = P_DEAD;
			q->live--;
			q->dead++;
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		fd_cmdq_done_fn *done = todo[i]->done;
		void *ctx = todo[i]->ctx;

		if (!keep_place)
			place_free(q, todo[i]);
		(*count)++;
		done(ctx, rc, NULL, 0);
	}
	return n;
}

static unsigned int
go_down(struct fd_cmdq *q, enum fd_cmdq_state why)
{
	unsigned int n;

	q->state = why;
	if (why == FD_CMDQ_STALLED) {
		q->st.stalls++;
		n = fail_live(q, -ETIMEDOUT, true, &q->st.timed_out);
	} else {
		/* the new boot's rings are empty: no answer comes for any of them */
		q->st.reboots++;
		for (unsigned int i = 0; i < LK_CMD_SLOTS; i++)
			if (q->place[i].state == P_DEAD)
				place_free(q, &q->place[i]);
		n = fail_live(q, -ECONNRESET, false, &q->st.reset);
	}
	if (q->down != NULL)
		q->down(q->down_arg, why);
	return n;
}

void
fd_cmdq_destroy(struct fd_cmdq *q)
{
	if (q == NULL)
		return;
	fail_live(q, -ECANCELED, false, &q->st.canceled);
	free(q);
}

unsigned int
fd_cmdq_room(const struct fd_cmdq *q)
{
	unsigned int used = q->live + q->dead;

	if (q->state != FD_CMDQ_UP || used >= q->cap)
		return 0;
	return q->cap - used;
}

unsigned int
fd_cmdq_cap(const struct fd_cmdq *q)
{
	return q->cap;
}

unsigned int
fd_cmdq_inflight(const struct fd_cmdq *q)
{
	return q->live;
}

int
fd_cmdq_post(struct fd_cmdq *q, uint16_t op, const void *payload, uint16_t len,
	     fd_cmdq_done_fn *done, void *ctx)
{
	struct place *pl;
	uint32_t tag;
	int rc;

	if (done == NULL)
		return -EINVAL;
	if (q->state == FD_CMDQ_STALLED)
		return -EHOSTDOWN;
	if (q->state == FD_CMDQ_REBOOTED)
		return -ECONNRESET;
	if (fd_cmdq_room(q) == 0)
		return -ENOBUFS;
	pl = &q->place[q->free[q->nfree - 1]];
	tag = q->seq << PLACE_BITS | (uint32_t)(pl - q->place);
	rc = lk_cmd_post(q->lk, op, tag, payload, len);
	if (rc != 0)
		return rc;
	q->seq++;
	q->nfree--;
	q->live++;
	*pl = (struct place){ .tag = tag, .op = op, .state = P_LIVE,
			      .deadline = now_ns(q) + q->timeout_ns, .done = done, .ctx = ctx };
	if (pl->deadline < q->dl_floor)
		q->dl_floor = pl->deadline;
	q->unkicked++;
	q->st.posted++;
	return 0;
}

void
fd_cmdq_kick(struct fd_cmdq *q)
{
	if (q->unkicked == 0)
		return;
	lk_cmd_kick(q->lk);
	q->unkicked = 0;
	q->st.batches++;
}

/* One answer: its command's completion, or counted. */
static unsigned int
complete(struct fd_cmdq *q, const struct fc_ans_hdr *h)
{
	struct place *pl = &q->place[h->tag & (LK_CMD_SLOTS - 1)];
	fd_cmdq_done_fn *done = pl->done;
	void *ctx = pl->ctx;

	if (pl->state == P_FREE || pl->tag != h->tag) {
		q->st.unexpected_tag++;
		return 0;
	}
	if (pl->state == P_DEAD) {
		q->st.late++;
		place_free(q, pl);
		return 0;
	}
	place_free(q, pl);	/* before the completion: it may post */
	if (h->op != pl->op) {
		q->st.bad_op++;
		done(ctx, -EPROTO, NULL, 0);
	} else {
		q->st.answered++;
		done(ctx, h->rc, h->len ? q->ans : NULL, h->len);
	}
	return 1;
}

/* The earliest deadline of a live command; UINT64_MAX when none. */
static uint64_t
next_deadline(const struct fd_cmdq *q)
{
	uint64_t d = UINT64_MAX;

	if (q->live == 0)
		return d;
	for (unsigned int i = 0; i < LK_CMD_SLOTS; i++)
		if (q->place[i].state == P_LIVE && q->place[i].deadline < d)
			d = q->place[i].deadline;
	return d;
}

/*
 * The earliest deadline of a live command (UINT64_MAX: none), or a time
 * before it: q->dl_floor is kept at or before every live deadline (a post
 * lowers it to its own; an answer can only move the earliest later), and
 * the places are scanned only once `now` has reached it.  Scanned on every
 * poll, the 256 places were 4 % of flowcutd's time while it offloaded a
 * million (perf, lab/scale.sh's drain).  Early is safe: a deadline is
 * acted on only when the scan confirms it.
 */
static uint64_t
deadline(struct fd_cmdq *q, uint64_t now)
{
	if (q->live == 0)
		return UINT64_MAX;
	if (now < q->dl_floor)
		return q->dl_floor;
	q->dl_floor = next_deadline(q);
	return q->dl_floor;
}

unsigned int
fd_cmdq_poll(struct fd_cmdq *q)
{
	unsigned int n = 0, taken;
	bool empty = false;

	if (q->state == FD_CMDQ_REBOOTED)
		return 0;
	if (lk_boot_id(q->lk) != q->boot_id)
		return go_down(q, FD_CMDQ_REBOOTED);
	fd_cmdq_kick(q);
	for (taken = 0; taken < q->budget; taken++) {
		struct fc_ans_hdr h;
		int rc = lk_ans_take(q->lk, &h, q->ans, FC_CMD_MAX_PAYLOAD);

		if (rc == -ECONNRESET)
			return n + go_down(q, FD_CMDQ_REBOOTED);
		if (rc != 0) {	/* -EAGAIN: the ring is empty */
			empty = true;
			break;
		}
		n += complete(q, &h);
	}
	/* a deadline counts only once every answer there was has been taken */
	if (empty && q->state == FD_CMDQ_UP && q->live > 0) {
		uint64_t now = now_ns(q);

		if (deadline(q, now) <= now)
			n += go_down(q, FD_CMDQ_STALLED);
	}
	return n;
}

int
fd_cmdq_timeout_ms(const struct fd_cmdq *q)
{
	uint64_t d = next_deadline(q), now;

	if (d == UINT64_MAX)
		return -1;
	now = now_ns(q);
	if (d <= now)
		return 0;
	d = (d - now + 999999) / 1000000;
	return d > INT32_MAX ? INT32_MAX : (int)d;
}

void
fd_cmdq_wait(struct fd_cmdq *q, int timeout_ms)
{
	int t = fd_cmdq_timeout_ms(q);

	fd_cmdq_kick(q);
	if (t < 0 || t > timeout_ms)
		t = timeout_ms;
	if (t > 0)
		lk_ans_wait(q->lk, t);
}

int
fd_cmdq_flush(struct fd_cmdq *q, int timeout_ms)
{
	uint64_t end = now_ns(q) + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0) * 1000000ull;
	unsigned int polls = 0;

	for (;;) {
		uint64_t now, left_ms;

		if (fd_cmdq_poll(q) != 0)
			polls = 0;
		if (q->state != FD_CMDQ_UP)
			return q->state == FD_CMDQ_STALLED ? -EHOSTDOWN : -ECONNRESET;
		if (q->live == 0)
			return 0;
		now = now_ns(q);
		if (now >= end)
			return -ETIMEDOUT;
		/* an answer usually comes within microseconds: look again before sleeping */
		if (++polls < FD_CMDQ_SPIN_POLLS)
			continue;
		left_ms = (end - now + 999999) / 1000000;
		fd_cmdq_wait(q, left_ms < 100 ? (int)left_ms : 100);
	}
}

int
fd_cmdq_reset(struct fd_cmdq *q)
{
	if (q->state == FD_CMDQ_REBOOTED) {
		/* read first: a boot after it is seen again by the next poll */
		uint64_t id = lk_boot_id(q->lk);
		int rc = lk_resync(q->lk);

		if (rc != 0)
			return rc;
		q->boot_id = id;
	}
	q->state = FD_CMDQ_UP;
	return 0;
}

enum fd_cmdq_state
fd_cmdq_state(const struct fd_cmdq *q)
{
	return q->state;
}

void
fd_cmdq_stats(const struct fd_cmdq *q, struct fd_cmdq_stats *out)
{
	*out = q->st;
}
