/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk_ring: the doorbells (futexes in the region), the rings (one producer,
 * one consumer; a peer's garbage index or length counted, never followed),
 * and the host's one sleep over its control thread's two bells.
 */
#include "lk.h"
#include "lk_priv.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- doorbells ---- */

void
lk_bell_ring(struct lk_bell *b)
{
	__atomic_fetch_add(&b->seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST) != 0)
		syscall(SYS_futex, &b->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*
 * A sleeper counts itself in b->waiters for the ringer's sake, and takes
 * itself out after.  A coprocessor that lays the region out again
 * meanwhile (lk_create in place: the header zeroed, a new boot id) has
 * zeroed that count with the rest: taking ourselves out of the new one
 * then would leave it one short for good - a sleeper the ringer thinks is
 * not there, woken only by its timeout (the host's relay and doorbell
 * threads, after every coprocessor restart).  So the count is left alone
 * when the boot id moved while we slept; at worst (our count made in the
 * new header) it stays one high, which costs the ringer a needless wake.
 */
static uint64_t
bell_enter(struct lk *lk, struct lk_bell *b)
{
	uint64_t boot = __atomic_load_n(&lk->hdr->boot_id, __ATOMIC_SEQ_CST);

	__atomic_fetch_add(&b->waiters, 1, __ATOMIC_SEQ_CST);
	return boot;
}

static void
bell_leave(struct lk *lk, struct lk_bell *b, uint64_t boot)
{
	if (__atomic_load_n(&lk->hdr->boot_id, __ATOMIC_SEQ_CST) == boot)
		__atomic_fetch_sub(&b->waiters, 1, __ATOMIC_SEQ_CST);
}

/* Sleeps until rung or timeout; `idle` says (again) whether to sleep at all. */
void
lk_bell_wait(struct lk_bell *b, int timeout_ms, bool (*idle)(struct lk *, int),
	     struct lk *lk, int arg)
{
	struct timespec ts = { .tv_sec = timeout_ms / 1000,
			       .tv_nsec = (long)(timeout_ms % 1000) * 1000000L };
	uint64_t boot = bell_enter(lk, b);
	uint32_t v;

	v = __atomic_load_n(&b->seq, __ATOMIC_SEQ_CST);
	if (idle(lk, arg))
		syscall(SYS_futex, &b->seq, FUTEX_WAIT, v, &ts, NULL, 0);
	bell_leave(lk, b, boot);
}

/* ---- rings ---- */

static inline struct lk_slot *
slot_at(const struct ring *r, uint32_t idx)
{
	return (struct lk_slot *)(r->shm->slot + (size_t)(idx & (r->slots - 1)) * r->slot_size);
}

/* Producer: room for one more?  A garbage consumer index counts as full. */
static int
ring_room(struct lk *lk, struct ring *r)
{
	uint32_t cons = __atomic_load_n(&r->shm->cons, __ATOMIC_ACQUIRE);
	uint32_t used = r->mine - cons;

	if (used > r->slots) {
		lk_stat_inc(&lk->stats.bad_index);
		return -ENOBUFS;
	}
	if (used == r->slots) {
		lk_stat_inc(&lk->stats.ring_full);
		return -ENOBUFS;
	}
	return 0;
}

int
lk_ring_put(struct lk *lk, struct ring *r, uint16_t tag, uint16_t flags, const void *a,
	    uint32_t alen, const void *b, uint32_t blen)
{
	struct lk_slot *s;
	int rc;

	if (alen + blen > r->slot_size - sizeof(struct lk_slot))
		return -EMSGSIZE;
	rc = ring_room(lk, r);
	if (rc != 0)
		return rc;
	s = slot_at(r, r->mine);
	s->len = alen + blen;
	s->tag = tag;
	s->flags = flags;
	memcpy(s->data, a, alen);
	if (blen)
		memcpy(s->data + alen, b, blen);
	r->mine++;
	__atomic_store_n(&r->shm->prod, r->mine, __ATOMIC_RELEASE);
	return 0;
}

/* Consumer: entries waiting; a garbage producer index empties the ring. */
uint32_t
lk_ring_avail(struct lk *lk, struct ring *r)
{
	uint32_t prod = __atomic_load_n(&r->shm->prod, __ATOMIC_ACQUIRE);
	uint32_t n = prod - r->mine;

	if (n > r->slots) {
		lk_stat_inc(&lk->stats.bad_index);
		r->mine = prod;		/* nothing in it can be trusted */
		__atomic_store_n(&r->shm->cons, r->mine, __ATOMIC_RELEASE);
		return 0;
	}
	return n;
}

/*
 * Copies the next slot out (the peer may rewrite it meanwhile: we check
 * our copy, never the region).  Returns the length, -EAGAIN, -EBADMSG (a
 * bad length: consumed and counted) or -EMSGSIZE (larger than cap:
 * consumed).
 */
int
lk_ring_take(struct lk *lk, struct ring *r, uint16_t *tag, uint16_t *flags, void *buf,
	     uint32_t cap)
{
	struct lk_slot *s;
	uint32_t len;
	int rc;

	if (lk_ring_avail(lk, r) == 0)
		return -EAGAIN;
	s = slot_at(r, r->mine);
	len = __atomic_load_n(&s->len, __ATOMIC_RELAXED);
	if (tag)
		*tag = s->tag;
	if (flags)
		*flags = s->flags;
	if (len > r->slot_size - sizeof(struct lk_slot)) {
		lk_stat_inc(&lk->stats.bad_length);
		rc = -EBADMSG;
	} else if (len > cap) {
		rc = -EMSGSIZE;
	} else {
		memcpy(buf, s->data, len);
		rc = (int)len;
	}
	r->mine++;
	__atomic_store_n(&r->shm->cons, r->mine, __ATOMIC_RELEASE);
	return rc;
}

bool
lk_ring_empty(struct lk *lk, int r)
{
	uint32_t prod = __atomic_load_n(&lk->ring[r].shm->prod, __ATOMIC_ACQUIRE);

	return prod == lk->ring[r].mine;
}

/* ---- the host's one sleep for its control thread's rings ---- */

/*
 * Something waits on ring r: by the region's two indices alone, so any
 * thread may ask while the control thread takes from it (the layout, hence
 * r's shm pointer, is fixed from lk_attach on; `mine` is not read).
 */
static bool
ring_pending(const struct lk *lk, int r)
{
	const struct lk_shm_ring *shm = lk->ring[r].shm;

	return __atomic_load_n(&shm->prod, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(&shm->cons, __ATOMIC_ACQUIRE);
}

bool
lk_host_pending(const struct lk *lk)
{
	return ring_pending(lk, R_EVENTS) || ring_pending(lk, R_ANS + lk->client);
}

bool
lk_host_wait(struct lk *lk, int timeout_ms)
{
	struct lk_bell *ev = &lk->hdr->bell_events, *ans = &lk->hdr->bell_client[lk->client];
	struct futex_waitv w[2] = {
		{ .uaddr = (uintptr_t)&ev->seq, .flags = FUTEX_32 },	/* shared: no FUTEX_PRIVATE_FLAG */
		{ .uaddr = (uintptr_t)&ans->seq, .flags = FUTEX_32 },
	};
	struct timespec until;
	uint64_t boot, boot_ans;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* as lk_bell_wait: counted a waiter, the counts read, then the rings looked at */
	boot = bell_enter(lk, ev);
	boot_ans = bell_enter(lk, ans);
	w[0].val = __atomic_load_n(&ev->seq, __ATOMIC_SEQ_CST);
	w[1].val = __atomic_load_n(&ans->seq, __ATOMIC_SEQ_CST);
	if (!lk_host_pending(lk) &&
	    syscall(SYS_futex_waitv, w, 2, 0, &until, CLOCK_MONOTONIC) < 0 && errno == ENOSYS) {
		/* a kernel before 5.16: the events' bell alone, the answers looked at this often */
		struct timespec ts = { .tv_nsec = 5000000L };

		syscall(SYS_futex, &ev->seq, FUTEX_WAIT, (uint32_t)w[0].val, &ts, NULL, 0);
	}
	bell_leave(lk, ans, boot_ans);
	bell_leave(lk, ev, boot);
	return lk_host_pending(lk);
}

void
lk_host_wake(struct lk *lk)
{
	lk_bell_ring(&lk->hdr->bell_events);	/* a count its sleepers read again: harmless to the rest */
}
