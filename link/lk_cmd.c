/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk_cmd: the control threads' messages over lk_ring.c's rings and bells:
 * commands and their answers, both sides (lk_call: the host's round trip),
 * and the coprocessor's events.
 */
#include "lk.h"
#include "lk_priv.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#define LK_CALL_POLLS 2000	/* looks for an answer this often (~20 us) before sleeping */

static inline void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

/* A host call is refused while the region carries another boot. */
static int
host_check(struct lk *lk)
{
	if (__atomic_load_n(&lk->hdr->boot_id, __ATOMIC_ACQUIRE) != lk->boot_id ||
	    __atomic_load_n(&lk->hdr->state, __ATOMIC_ACQUIRE) != LK_READY)
		return -ECONNRESET;
	return 0;
}

/* ---- commands ---- */

int
lk_cmd_post(struct lk *lk, uint16_t op, uint32_t tag, const void *payload, uint16_t len)
{
	struct fc_cmd_hdr h = { .op = op, .len = len, .tag = tag };
	int rc = host_check(lk);

	if (rc != 0)
		return rc;
	if (len > FC_CMD_MAX_PAYLOAD)
		return -EMSGSIZE;
	return lk_ring_put(lk, &lk->ring[R_CMD + lk->client], 0, 0, &h, sizeof(h), payload, len);
}

void
lk_cmd_kick(struct lk *lk)
{
	lk_bell_ring(&lk->hdr->bell_npu);
}

int
lk_ans_take(struct lk *lk, struct fc_ans_hdr *hdr, void *payload, uint16_t cap)
{
	uint8_t buf[LK_CMD_SLOT];
	int n, rc = host_check(lk);

	if (rc != 0)
		return rc;
	/* at most a ring's worth of bad slots per call: a peer cannot keep us here */
	for (uint32_t i = 0; i < LK_CMD_SLOTS; i++) {
		n = lk_ring_take(lk, &lk->ring[R_ANS + lk->client], NULL, NULL, buf, sizeof(buf));
		if (n == -EBADMSG)
			continue;	/* counted; look at the next */
		if (n < 0)
			return n;
		memcpy(hdr, buf, n < (int)sizeof(*hdr) ? (size_t)n : sizeof(*hdr));
		if ((size_t)n < sizeof(*hdr) || hdr->len != (uint32_t)n - sizeof(*hdr) ||
		    hdr->len > FC_CMD_MAX_PAYLOAD) {
			lk_stat_inc(&lk->stats.bad_message);
			continue;
		}
		if (hdr->len > cap)
			return -EMSGSIZE;
		memcpy(payload, buf + sizeof(*hdr), hdr->len);
		return 0;
	}
	return -EAGAIN;
}

static bool
ans_idle(struct lk *lk, int client)
{
	return lk_ring_empty(lk, R_ANS + client) && host_check(lk) == 0;
}

void
lk_ans_wait(struct lk *lk, int timeout_ms)
{
	lk_bell_wait(&lk->hdr->bell_client[lk->client], timeout_ms, ans_idle, lk, lk->client);
}

static int64_t
ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
lk_call(struct lk *lk, uint16_t op, const void *payload, uint16_t len, void *ans,
	uint16_t ans_cap, uint16_t *ans_len, int timeout_ms)
{
	uint32_t tag = ++lk->tag;
	int64_t deadline = ms_now() + timeout_ms;
	unsigned int polls = 0;
	int rc = lk_cmd_post(lk, op, tag, payload, len);

	if (rc != 0)
		return rc;
	lk_cmd_kick(lk);
	for (;;) {
		struct fc_ans_hdr h;
		int64_t left;

		rc = lk_ans_take(lk, &h, ans, ans_cap);
		if ((rc == 0 || rc == -EMSGSIZE) && h.tag != tag) {
			/* an older command's answer (one that timed out): counted, not ours */
			lk_stat_inc(&lk->stats.unexpected_tag);
		} else if (rc == 0) {
			if (ans_len)
				*ans_len = h.len;
			return h.rc;
		} else if (rc != -EAGAIN) {
			return rc;
		}
		left = deadline - ms_now();
		if (left <= 0)
			return -ETIMEDOUT;
		if (rc != -EAGAIN)
			continue;
		/* an answer usually comes within microseconds: look again before sleeping */
		if (++polls < LK_CALL_POLLS) {
			cpu_relax();
			continue;
		}
		lk_ans_wait(lk, (int)(left < 100 ? left : 100));
	}
}

int
lk_cmd_take(struct lk *lk, unsigned int client, struct fc_cmd_hdr *hdr, void *payload)
{
	uint8_t buf[LK_CMD_SLOT];
	int n;

	if (client >= LK_CLIENTS)
		return -EINVAL;
	n = lk_ring_take(lk, &lk->ring[R_CMD + client], NULL, NULL, buf, sizeof(buf));
	if (n == -EAGAIN)
		return n;
	hdr->op = 0xffff;	/* no header to answer to */
	if (n < 0)
		return -EBADMSG;
	if ((size_t)n < sizeof(*hdr)) {
		lk_stat_inc(&lk->stats.bad_message);
		return -EBADMSG;
	}
	memcpy(hdr, buf, sizeof(*hdr));
	if (hdr->len != (uint32_t)n - sizeof(*hdr) || hdr->len > FC_CMD_MAX_PAYLOAD) {
		lk_stat_inc(&lk->stats.bad_message);
		return -EBADMSG;
	}
	memcpy(payload, buf + sizeof(*hdr), hdr->len);
	return 0;
}

int
lk_ans_put(struct lk *lk, unsigned int client, const struct fc_ans_hdr *hdr,
	   const void *payload)
{
	if (client >= LK_CLIENTS)
		return -EINVAL;
	if (hdr->len > FC_CMD_MAX_PAYLOAD)
		return -EMSGSIZE;
	return lk_ring_put(lk, &lk->ring[R_ANS + client], 0, 0, hdr, sizeof(*hdr), payload,
			hdr->len);
}

bool
lk_ans_room(struct lk *lk, unsigned int client)
{
	struct ring *r;
	uint32_t used;

	if (client >= LK_CLIENTS)
		return false;
	r = &lk->ring[R_ANS + client];
	used = r->mine - __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);
	return used < r->slots;
}

void
lk_ans_kick(struct lk *lk, unsigned int client)
{
	if (client < LK_CLIENTS)
		lk_bell_ring(&lk->hdr->bell_client[client]);
}

static bool
npu_idle(struct lk *lk, int unused)
{
	(void)unused;
	for (int c = 0; c < LK_CLIENTS; c++)
		if (!lk_ring_empty(lk, R_CMD + c))
			return false;
	/* the caller's own work, looked at after the bell's count was read */
	if (lk->npu_busy != NULL && lk->npu_busy(lk->npu_busy_arg))
		return false;
	return true;	/* host frames are the workers' (they poll), not the control thread's */
}

void
lk_npu_kick(struct lk *lk)
{
	lk_bell_ring(&lk->hdr->bell_npu);
}

void
lk_npu_wait(struct lk *lk, int timeout_ms, bool (*busy)(void *), void *arg)
{
	lk->npu_busy = busy;
	lk->npu_busy_arg = arg;
	lk_bell_wait(&lk->hdr->bell_npu, timeout_ms, npu_idle, lk, 0);
	lk->npu_busy = NULL;
}

/* ---- events ---- */

int
lk_event_put(struct lk *lk, const struct lk_event *ev)
{
	int rc = lk_ring_put(lk, &lk->ring[R_EVENTS], 0, 0, ev, sizeof(*ev), NULL, 0);

	if (rc != 0)	/* the host must hear of it: it reconciles */
		__atomic_fetch_add(&lk->hdr->events_lost, 1, __ATOMIC_RELEASE);
	return rc;
}

uint32_t
lk_event_room(struct lk *lk)
{
	struct ring *r = &lk->ring[R_EVENTS];
	uint32_t used = r->mine - __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);

	return used < r->slots ? r->slots - used : 0;
}

int
lk_event_take(struct lk *lk, struct lk_event *ev)
{
	int n, rc = host_check(lk);
	uint32_t lost;

	if (rc != 0)
		return rc;
	lost = __atomic_load_n(&lk->hdr->events_lost, __ATOMIC_ACQUIRE);
	if (lost != lk->events_lost_seen) {
		lk->events_lost_seen = lost;
		lk_stat_inc(&lk->stats.events_lost);
		return -EOVERFLOW;
	}
	for (uint32_t i = 0; i < LK_EV_SLOTS; i++) {
		n = lk_ring_take(lk, &lk->ring[R_EVENTS], NULL, NULL, ev, sizeof(*ev));
		if (n == (int)sizeof(*ev))
			return 0;
		if (n == -EAGAIN)
			return n;
		if (n >= 0)
			lk_stat_inc(&lk->stats.bad_message);	/* a wrong length: not an event */
	}
	return -EAGAIN;
}

void
lk_event_kick(struct lk *lk)
{
	lk_bell_ring(&lk->hdr->bell_events);
}

static bool
events_idle(struct lk *lk, int unused)
{
	(void)unused;
	return lk_ring_empty(lk, R_EVENTS) && host_check(lk) == 0;
}

void
lk_event_wait(struct lk *lk, int timeout_ms)
{
	lk_bell_wait(&lk->hdr->bell_events, timeout_ms, events_idle, lk, 0);
}
