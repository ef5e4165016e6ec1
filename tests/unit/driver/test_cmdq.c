/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The command client (driver/cmd/fd_cmdq.c) over a real link region.
 *
 * Against the real coprocessor side - npu/npu_cmd.c on a real fast path,
 * served from a thread as flowcut-npu's control thread serves it: batches
 * larger than the ring, each answer to its own command, a full ring and
 * the cap.  Against a coprocessor side played by the test itself, where
 * the point is the client's bookkeeping: answers out of order, answers to
 * no command, an answer with the wrong opcode, a coprocessor that stops
 * answering (on an injected clock), a reboot with commands in flight, a
 * flush's deadline, and a destroy with commands in flight.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <rte_memory.h>

#include "fc_eal.h"
#include "fd_bell.h"
#include "fd_clock.h"
#include "fd_cmdq.h"
#include "fp.h"
#include "lk.h"
#include "npu_cmd.h"

static char dir[64], path[80];	/* the link in a directory of its own, 0700 */
static struct fp *fp;	/* the real fast path the real decoder works on */

/* ---- completions and notices, recorded ---- */

struct rec {
	int calls;
	int rc;
	uint16_t len;
	uint8_t ans[FC_CMD_MAX_PAYLOAD];
};

static void
rec_done(void *ctx, int rc, const void *ans, uint16_t len)
{
	struct rec *r = ctx;

	r->calls++;
	r->rc = rc;
	r->len = len;
	if (len)
		memcpy(r->ans, ans, len);
}

struct downs {
	int calls;
	enum fd_cmdq_state why;
};

static void
on_down(void *arg, enum fd_cmdq_state why)
{
	struct downs *d = arg;

	d->calls++;
	d->why = why;
}

static uint64_t
test_clock(void *arg)
{
	return *(uint64_t *)arg;
}

/* ---- the link, and the two coprocessor sides ---- */

struct link {
	struct lk *npu;
	struct lk *host;
};

static int
setup(void **state)
{
	struct link *l = calloc(1, sizeof(*l));

	snprintf(dir, sizeof(dir), "/dev/shm/fc-test-cmdq-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/link", dir);
	l->npu = lk_create(path);
	l->host = l->npu ? lk_attach(path, 0) : NULL;	/* as flowcutd */
	if (l->host == NULL) {
		print_error("link %s\n", lk_error());
		lk_close(l->npu);
		unlink(path);
		rmdir(dir);
		free(l);
		return -1;
	}
	*state = l;
	return 0;
}

static int
teardown(void **state)
{
	struct link *l = *state;

	lk_close(l->host);
	lk_close(l->npu);
	unlink(path);
	rmdir(dir);
	free(l);
	return 0;
}

/* The real side: flowcut-npu's serve(), on a thread; `hold` stops it taking. */
struct npu {
	struct lk *lk;
	int stop;
	int hold;
};

static void *
npu_thread(void *arg)
{
	struct npu *s = arg;
	const struct npu_cmd_env env = { .fp = fp };
	uint64_t now = 1;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned int n = 0;

		if (__atomic_load_n(&s->hold, __ATOMIC_ACQUIRE)) {
			usleep(1000);
			continue;
		}
		for (unsigned int c = 0; c < LK_CLIENTS; c++) {
			while (lk_ans_room(s->lk, c)) {
				struct fc_cmd_hdr h;
				struct fc_ans_hdr a;
				uint64_t payload[FC_CMD_MAX_PAYLOAD / 8 + 1];
				uint64_t ans[FC_CMD_MAX_PAYLOAD / 8 + 1];

				if (lk_cmd_take(s->lk, c, &h, payload) != 0)
					break;
				npu_cmd_exec(&env, &h, payload, now++, &a, ans);
				lk_ans_put(s->lk, c, &a, ans);
				n++;
			}
			lk_ans_kick(s->lk, c);
		}
		if (n == 0)
			lk_npu_wait(s->lk, 10, NULL, NULL);
	}
	return NULL;
}

static void
npu_start(struct npu *s, pthread_t *th)
{
	assert_int_equal(pthread_create(th, NULL, npu_thread, s), 0);
}

static void
npu_stop(struct npu *s, pthread_t th)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
}

/* The test's own side: takes every command waiting on client 0's ring. */
static unsigned int
take_all(struct lk *npu, struct fc_cmd_hdr *h, uint32_t *payload, unsigned int max)
{
	unsigned int n = 0;

	while (n < max && lk_cmd_take(npu, 0, &h[n], &payload[n]) == 0)
		n++;
	return n;
}

/* An answer on client 0's ring: `value` as its payload unless rc is an error. */
static void
answer(struct lk *npu, uint16_t op, uint32_t tag, int rc, uint32_t value)
{
	struct fc_ans_hdr a = { .op = op, .tag = tag, .rc = rc, .len = rc ? 0 : sizeof(value) };

	assert_int_equal(lk_ans_put(npu, 0, &a, &value), 0);
}

/* ---- against the real coprocessor side ---- */

/*
 * 100 pairs (FW_STATE_REV_SET i, FW_CFG_PARAMS_GET) and two refused
 * commands, three times the ring: every completion runs once, with its own
 * command's answer - the GET after SET i reads revision i.
 */
static void
test_real_batches(void **state)
{
	struct link *l = *state;
	struct npu s = { .lk = l->npu };
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ 0 });
	enum { PAIRS = LK_CMD_SLOTS + 100, N = 2 * PAIRS + 2 };	/* past the ring, twice */
	struct rec *r = calloc(N, sizeof(*r));
	struct fd_cmdq_stats st;
	struct lk_stats ls;
	pthread_t th;

	assert_non_null(q);
	npu_start(&s, &th);
	for (unsigned int i = 0; i < N; i++) {
		struct fc_cmd_rev rev = { .rev = i / 2 };
		struct fc_cmd_cfg bad = { .fw_cfg = 0x1000 };	/* not a bit of FC_CFG_ALL */
		int rc;

		do {
			if (i == N - 2)
				rc = fd_cmdq_post(q, FC_CMD_FW_CFG_PARAMS_SET, &bad, sizeof(bad),
						  rec_done, &r[i]);
			else if (i == N - 1)
				rc = fd_cmdq_post(q, 63, NULL, 0, rec_done, &r[i]);
			else if (i % 2 == 0)
				rc = fd_cmdq_post(q, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev),
						  rec_done, &r[i]);
			else
				rc = fd_cmdq_post(q, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, rec_done,
						  &r[i]);
			if (rc == -ENOBUFS && fd_cmdq_poll(q) == 0)
				fd_cmdq_wait(q, 10);
		} while (rc == -ENOBUFS);
		assert_int_equal(rc, 0);
		assert_true(fd_cmdq_inflight(q) <= LK_CMD_SLOTS);
	}
	assert_int_equal(fd_cmdq_flush(q, 5000), 0);
	for (unsigned int i = 0; i < 2 * PAIRS; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, 0);
		if (i % 2) {
			struct fc_ans_cfg c;

			assert_int_equal(r[i].len, sizeof(c));
			memcpy(&c, r[i].ans, sizeof(c));
			assert_int_equal(c.fw_rev, i / 2);
			assert_int_equal(c.fw_cfg, FC_CFG_BOOT);
		} else {
			assert_int_equal(r[i].len, 0);
		}
	}
	assert_int_equal(r[N - 2].calls, 1);
	assert_int_equal(r[N - 2].rc, -EINVAL);
	assert_int_equal(r[N - 1].calls, 1);
	assert_int_equal(r[N - 1].rc, -EOPNOTSUPP);
	fd_cmdq_stats(q, &st);
	assert_int_equal(st.posted, N);
	assert_int_equal(st.answered, N);
	assert_int_equal(st.unexpected_tag, 0);
	assert_true(st.batches >= N / LK_CMD_SLOTS && st.batches < N);
	lk_stats(l->host, &ls);
	assert_int_equal(ls.ring_full, 0);
	npu_stop(&s, th);
	fd_cmdq_destroy(q);
	free(r);
}

/*
 * A coprocessor that takes nothing for a while: posts stop at the ring's
 * size (the link never refuses one: no ring_full) and at a smaller cap;
 * when it serves again, everything completes and the room comes back.
 */
static void
test_real_full_ring_and_cap(void **state)
{
	struct link *l = *state;
	struct npu s = { .lk = l->npu, .hold = 1 };
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ 0 });
	struct fc_cmd_rev rev = { .rev = 7 };
	struct rec r[LK_CMD_SLOTS + 1] = { 0 };
	struct lk_stats ls;
	pthread_t th;

	assert_non_null(q);
	assert_null(fd_cmdq_create(l->host, &(struct fd_cmdq_params){
					   .max_inflight = LK_CMD_SLOTS + 1 }));
	assert_int_equal(errno, EINVAL);
	npu_start(&s, &th);
	for (unsigned int i = 0; i < LK_CMD_SLOTS; i++)
		assert_int_equal(fd_cmdq_post(q, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev),
					      rec_done, &r[i]), 0);
	assert_int_equal(fd_cmdq_room(q), 0);
	assert_int_equal(fd_cmdq_post(q, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev), rec_done,
				      &r[LK_CMD_SLOTS]), -ENOBUFS);
	assert_int_equal(fd_cmdq_flush(q, 20), -ETIMEDOUT);	/* held: nothing answers */
	assert_int_equal(fd_cmdq_inflight(q), LK_CMD_SLOTS);
	__atomic_store_n(&s.hold, 0, __ATOMIC_RELEASE);
	assert_int_equal(fd_cmdq_flush(q, 5000), 0);
	for (unsigned int i = 0; i < LK_CMD_SLOTS; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, 0);
	}
	assert_int_equal(r[LK_CMD_SLOTS].calls, 0);
	assert_int_equal(fd_cmdq_room(q), LK_CMD_SLOTS);
	lk_stats(l->host, &ls);
	assert_int_equal(ls.ring_full, 0);
	fd_cmdq_destroy(q);

	/* a cap of 8 */
	__atomic_store_n(&s.hold, 1, __ATOMIC_RELEASE);
	q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ .max_inflight = 8 });
	memset(r, 0, sizeof(r));
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(fd_cmdq_post(q, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev),
					      rec_done, &r[i]), 0);
	assert_int_equal(fd_cmdq_post(q, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev), rec_done,
				      &r[8]), -ENOBUFS);
	__atomic_store_n(&s.hold, 0, __ATOMIC_RELEASE);
	assert_int_equal(fd_cmdq_flush(q, 5000), 0);
	assert_int_equal(fd_cmdq_room(q), 8);
	for (unsigned int i = 0; i < 8; i++)
		assert_int_equal(r[i].calls, 1);
	npu_stop(&s, th);
	fd_cmdq_destroy(q);
}

/* ---- against the test's own coprocessor side ---- */

/* Ten commands answered last first: each completion gets its own answer. */
static void
test_out_of_order(void **state)
{
	struct link *l = *state;
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ 0 });
	struct fc_cmd_hdr h[10];
	uint32_t p[10];
	struct rec r[10] = { 0 };

	for (uint32_t i = 0; i < 10; i++)
		assert_int_equal(fd_cmdq_post(q, 1, &i, sizeof(i), rec_done, &r[i]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 10), 10);
	for (int i = 9; i >= 0; i--)
		answer(l->npu, h[i].op, h[i].tag, i == 3 ? -ENOENT : 0, p[i] * 10);
	assert_int_equal(fd_cmdq_poll(q), 10);
	for (uint32_t i = 0; i < 10; i++) {
		uint32_t v;

		assert_int_equal(r[i].calls, 1);
		if (i == 3) {
			assert_int_equal(r[i].rc, -ENOENT);
			assert_int_equal(r[i].len, 0);
			continue;
		}
		assert_int_equal(r[i].rc, 0);
		assert_int_equal(r[i].len, sizeof(v));
		memcpy(&v, r[i].ans, sizeof(v));
		assert_int_equal(v, i * 10);
	}
	assert_int_equal(fd_cmdq_inflight(q), 0);
	fd_cmdq_destroy(q);
}

/*
 * Answers to no command (a tag of the right place but another sequence, a
 * second answer to a command already completed) are counted and change
 * nothing; an answer with another opcode fails its command -EPROTO.
 */
static void
test_unexpected_tags_and_bad_op(void **state)
{
	struct link *l = *state;
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ 0 });
	struct fc_cmd_hdr h[3];
	uint32_t p[3];
	struct rec r[3] = { 0 };
	struct fd_cmdq_stats st;

	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(fd_cmdq_post(q, 1, &i, sizeof(i), rec_done, &r[i]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 3), 3);
	answer(l->npu, h[0].op, h[0].tag + (1u << 6), 0, 1);	/* same place, not ours */
	answer(l->npu, h[0].op, h[0].tag, 0, 2);
	answer(l->npu, h[0].op, h[0].tag, 0, 3);		/* again */
	answer(l->npu, h[1].op + 1, h[1].tag, 0, 4);
	assert_int_equal(fd_cmdq_poll(q), 2);
	assert_int_equal(r[0].calls, 1);
	assert_int_equal(r[0].rc, 0);
	assert_int_equal(r[0].ans[0], 2);
	assert_int_equal(r[1].calls, 1);
	assert_int_equal(r[1].rc, -EPROTO);
	assert_int_equal(r[2].calls, 0);
	answer(l->npu, h[2].op, h[2].tag, 0, 5);
	assert_int_equal(fd_cmdq_poll(q), 1);
	assert_int_equal(r[2].calls, 1);
	fd_cmdq_stats(q, &st);
	assert_int_equal(st.unexpected_tag, 2);
	assert_int_equal(st.bad_op, 1);
	assert_int_equal(st.answered, 2);
	fd_cmdq_destroy(q);
}

/*
 * The coprocessor stops answering: noticed once, when the first deadline
 * has passed with the answer ring empty (an answer waiting there is not a
 * stall); every command in flight fails -ETIMEDOUT once; posts are
 * refused until the reset; late answers are counted and free the room.
 */
static void
test_stall_noticed_once(void **state)
{
	struct link *l = *state;
	uint64_t now = 1000000000ull;
	struct downs d = { 0 };
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){
		.timeout_ms = 100, .poll_budget = 1, .down = on_down, .down_arg = &d,
		.clock = test_clock, .clock_arg = &now });
	struct fc_cmd_hdr h[6];
	uint32_t p[6], v = 1;
	struct rec r[6] = { 0 };
	struct fd_cmdq_stats st;

	/*
	 * answered in time but taken after the deadline, one per poll (the
	 * budget): not a stall
	 */
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[4]), 0);
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 2), 2);
	answer(l->npu, h[0].op, h[0].tag, 0, 9);
	answer(l->npu, h[1].op, h[1].tag, 0, 9);
	now += 500000000ull;
	assert_int_equal(fd_cmdq_poll(q), 1);
	assert_int_equal(fd_cmdq_state(q), FD_CMDQ_UP);
	assert_int_equal(fd_cmdq_poll(q), 1);
	assert_int_equal(r[4].rc, 0);
	assert_int_equal(r[5].rc, 0);
	assert_int_equal(fd_cmdq_state(q), FD_CMDQ_UP);
	memset(r, 0, sizeof(r));

	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(fd_cmdq_post(q, 1, &i, sizeof(i), rec_done, &r[i]), 0);
		now += 1000000ull;
	}
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 5), 5);	/* taken, never answered */
	assert_int_equal(fd_cmdq_timeout_ms(q), 95);
	now += 90000000ull;
	assert_int_equal(fd_cmdq_poll(q), 0);
	assert_int_equal(d.calls, 0);
	now += 5000000ull;	/* the first deadline reached, the others not yet */
	assert_int_equal(fd_cmdq_poll(q), 5);
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.why, FD_CMDQ_STALLED);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -ETIMEDOUT);
	}
	now += 10000000000ull;
	assert_int_equal(fd_cmdq_poll(q), 0);
	assert_int_equal(fd_cmdq_flush(q, 100), -EHOSTDOWN);
	assert_int_equal(d.calls, 1);
	assert_int_equal(fd_cmdq_state(q), FD_CMDQ_STALLED);
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), -EHOSTDOWN);
	assert_int_equal(fd_cmdq_room(q), 0);

	/* it wakes up: the late answers free their places */
	for (int i = 0; i < 5; i++)
		answer(l->npu, h[i].op, h[i].tag, 0, 0);
	assert_int_equal(fd_cmdq_reset(q), 0);
	assert_int_equal(fd_cmdq_room(q), LK_CMD_SLOTS - 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(fd_cmdq_poll(q), 0);
	assert_int_equal(fd_cmdq_room(q), LK_CMD_SLOTS);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].calls, 1);
	fd_cmdq_stats(q, &st);
	assert_int_equal(st.late, 5);
	assert_int_equal(st.timed_out, 5);
	assert_int_equal(st.stalls, 1);
	memset(&r[5], 0, sizeof(r[5]));
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 1), 1);
	answer(l->npu, h[0].op, h[0].tag, 0, 9);
	assert_int_equal(fd_cmdq_poll(q), 1);
	assert_int_equal(r[5].calls, 1);
	assert_int_equal(r[5].rc, 0);
	fd_cmdq_destroy(q);
}

/*
 * The coprocessor reboots with commands in flight (some taken, some still
 * on the ring, one timed out before): each live one fails -ECONNRESET
 * once, `down` runs once, posts are refused; after the reset the new boot
 * answers.
 */
static void
test_reboot_mid_flight(void **state)
{
	struct link *l = *state;
	struct downs d = { 0 };
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){
		.down = on_down, .down_arg = &d });
	struct fc_cmd_hdr h[5];
	uint32_t p[5], v = 3;
	struct rec r[6] = { 0 };
	struct fd_cmdq_stats st;
	struct lk *npu2;

	for (uint32_t i = 0; i < 5; i++)
		assert_int_equal(fd_cmdq_post(q, 1, &i, sizeof(i), rec_done, &r[i]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(l->npu, h, p, 2), 2);
	lk_close(l->npu);		/* the coprocessor dies... */
	npu2 = l->npu = lk_create(path);	/* ...and starts again */
	assert_non_null(npu2);
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), -ECONNRESET);
	assert_int_equal(fd_cmdq_poll(q), 5);
	assert_int_equal(d.calls, 1);
	assert_int_equal(d.why, FD_CMDQ_REBOOTED);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -ECONNRESET);
	}
	assert_int_equal(fd_cmdq_poll(q), 0);
	assert_int_equal(d.calls, 1);
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), -ECONNRESET);
	assert_int_equal(fd_cmdq_reset(q), 0);
	assert_int_equal(fd_cmdq_state(q), FD_CMDQ_UP);
	assert_int_equal(fd_cmdq_room(q), LK_CMD_SLOTS);
	assert_int_equal(fd_cmdq_post(q, 1, &v, sizeof(v), rec_done, &r[5]), 0);
	fd_cmdq_kick(q);
	assert_int_equal(take_all(npu2, h, p, 5), 1);	/* the old boot's are gone */
	answer(npu2, h[0].op, h[0].tag, 0, 33);
	assert_int_equal(fd_cmdq_poll(q), 1);
	assert_int_equal(r[5].calls, 1);
	assert_int_equal(r[5].rc, 0);
	assert_int_equal(r[5].ans[0], 33);
	fd_cmdq_stats(q, &st);
	assert_int_equal(st.reset, 5);
	assert_int_equal(st.reboots, 1);
	fd_cmdq_destroy(q);
}

/* A destroy with commands in flight fails each -ECANCELED, once. */
static void
test_destroy_cancels(void **state)
{
	struct link *l = *state;
	struct fd_cmdq *q = fd_cmdq_create(l->host, &(struct fd_cmdq_params){ 0 });
	struct rec r[3] = { 0 };

	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(fd_cmdq_post(q, 1, &i, sizeof(i), rec_done, &r[i]), 0);
	assert_int_equal(fd_cmdq_post(q, 1, NULL, FC_CMD_MAX_PAYLOAD + 1, rec_done, &r[0]),
			 -EMSGSIZE);
	assert_int_equal(fd_cmdq_post(q, 1, NULL, 0, NULL, NULL), -EINVAL);
	assert_int_equal(fd_cmdq_inflight(q), 3);
	fd_cmdq_destroy(q);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(r[i].calls, 1);
		assert_int_equal(r[i].rc, -ECANCELED);
	}
	fd_cmdq_destroy(NULL);
}

/* ---- the doorbell as a descriptor (fd_bell) ---- */

/* Is the bell's descriptor readable within ms? */
static bool
readable(struct fd_bell *b, int ms)
{
	struct pollfd p = { .fd = fd_bell_fd(b), .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* The host's event ring emptied (the BOOT event lk_create posts). */
static void
drain_events(struct lk *host)
{
	struct lk_event ev;

	while (lk_event_take(host, &ev) == 0)
		;
}

/* A coprocessor's gone-idle event, posted and rung as npu/npu_ev.c does. */
static void
post_event(struct lk *npu)
{
	struct lk_event ev = { .type = LK_EV_BOOT };

	assert_int_equal(lk_event_put(npu, &ev), 0);
	lk_event_kick(npu);
}

struct later {
	struct lk *npu;
	int ms;
	bool answer;	/* an answer to tag 7, else an event */
};

static void *
later_main(void *arg)
{
	struct later *w = arg;

	usleep((useconds_t)w->ms * 1000);
	if (w->answer) {
		struct fc_ans_hdr a = { .op = 1, .tag = 7 };
		uint8_t none = 0;	/* no payload; memcpy's arguments are never NULL */

		lk_ans_put(w->npu, 0, &a, &none);
		lk_ans_kick(w->npu, 0);
	} else {
		post_event(w->npu);
	}
	return NULL;
}

/*
 * Nothing on the rings: the descriptor stays unreadable (the loop sleeps).
 * An event the coprocessor posts while the loop sleeps, and an answer, each
 * wake it within a few milliseconds, not at a poll's period.
 */
static void
test_bell_wakes_for_events_and_answers(void **state)
{
	struct link *l = *state;
	struct fd_bell *b;

	drain_events(l->host);
	b = fd_bell_open(l->host);
	assert_non_null(b);
	assert_false(readable(b, 200));
	for (int answer = 0; answer < 2; answer++) {
		struct later w = { .npu = l->npu, .ms = 100, .answer = answer };
		struct fc_ans_hdr h;
		uint64_t t0 = fd_clock_ms(), took;
		pthread_t t;

		fd_bell_arm(b);
		assert_int_equal(pthread_create(&t, NULL, later_main, &w), 0);
		assert_true(readable(b, 2000));
		took = fd_clock_ms() - t0;
		pthread_join(t, NULL);
		print_message("# %s: the loop woken %" PRIu64 " ms after it slept (posted at 100)\n",
			      answer ? "an answer" : "an event", took);
		assert_true(took >= 90 && took < 400);
		fd_bell_clear(b);
		assert_false(readable(b, 0));
		if (answer)
			assert_int_equal(lk_ans_take(l->host, &h, &(uint8_t){ 0 }, 1), 0);
		else
			drain_events(l->host);
	}
	fd_bell_close(b);
}

/*
 * Not armed, the bell says nothing more, however much is posted (a loop
 * that has not emptied the rings yet does not spin); armed again with the
 * rings not empty, it is readable at once.  fd_bell_ring wakes it too.
 */
static void
test_bell_quiet_until_armed(void **state)
{
	struct link *l = *state;
	struct fd_bell *b;
	uint64_t t0;

	drain_events(l->host);
	b = fd_bell_open(l->host);
	assert_non_null(b);
	post_event(l->npu);
	assert_true(readable(b, 1000));
	fd_bell_clear(b);
	post_event(l->npu);	/* the loop has not slept since: */
	assert_false(readable(b, 150));
	t0 = fd_clock_ms();
	fd_bell_arm(b);		/* now it sleeps, the ring not empty */
	assert_true(readable(b, 1000));
	assert_true(fd_clock_ms() - t0 < 200);
	fd_bell_clear(b);
	drain_events(l->host);
	fd_bell_arm(b);
	assert_false(readable(b, 100));
	fd_bell_ring(b);	/* another thread's news */
	assert_true(readable(b, 0));
	t0 = fd_clock_ms();
	fd_bell_close(b);	/* its thread asleep on the link: woken, not waited out */
	print_message("# closed in %" PRIu64 " ms\n", fd_clock_ms() - t0);
	assert_true(fd_clock_ms() - t0 < 250);
}

static int
group_setup(void **state)
{
	struct fp_params p = { .max_conns = 64, .max_nhops = 4, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY, .name = "testcmdq" };

	(void)state;
	if (fc_eal_init("test_cmdq", 64) != 0)
		return -1;
	fp = fp_create(&p);
	return fp == NULL ? -1 : 0;
}

static int
group_teardown(void **state)
{
	(void)state;
	fp_destroy(fp);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_real_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_full_ring_and_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unexpected_tags_and_bad_op, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stall_noticed_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reboot_mid_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(test_destroy_cancels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bell_wakes_for_events_and_answers, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bell_quiet_until_armed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
