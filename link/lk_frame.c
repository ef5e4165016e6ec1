/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk_frame: frames up (coprocessor to host) and down, each tagged with its
 * front port, over lk_ring.c's frame rings.
 */
#include "lk.h"
#include "lk_priv.h"

#include <errno.h>
#include <stddef.h>

/* ---- frames ---- */

int
lk_frame_up_put(struct lk *lk, uint16_t port, uint16_t flags, const void *data, uint32_t len)
{
	if (len > LK_FRAME_MAX) {
		lk_stat_inc(&lk->stats.frame_too_big);
		return -EMSGSIZE;
	}
	return lk_ring_put(lk, &lk->ring[R_UP], port, flags, data, len, NULL, 0);
}

void
lk_frame_up_kick(struct lk *lk)
{
	lk_bell_ring(&lk->hdr->bell_frames_up);
}

int
lk_frame_up_take(struct lk *lk, uint16_t *port, uint16_t *flags, void *buf, uint32_t cap)
{
	for (uint32_t i = 0; i < LK_FRAME_SLOTS; i++) {
		int n = lk_ring_take(lk, &lk->ring[R_UP], port, flags, buf, cap);

		if (n != -EBADMSG)
			return n;
	}
	return -EAGAIN;
}

static bool
up_idle(struct lk *lk, int unused)
{
	(void)unused;
	return lk_ring_empty(lk, R_UP);
}

void
lk_frame_up_wait(struct lk *lk, int timeout_ms)
{
	lk_bell_wait(&lk->hdr->bell_frames_up, timeout_ms, up_idle, lk, 0);
}

int
lk_frame_down_put(struct lk *lk, uint16_t port, const void *data, uint32_t len)
{
	int rc;

	if (len > LK_FRAME_MAX) {
		lk_stat_inc(&lk->stats.frame_too_big);
		return -EMSGSIZE;
	}
	rc = lk_ring_put(lk, &lk->ring[R_DOWN], port, 0, data, len, NULL, 0);
	return rc;
}

uint32_t
lk_frame_down_count(struct lk *lk)
{
	return lk_ring_avail(lk, &lk->ring[R_DOWN]);
}

int
lk_frame_down_take(struct lk *lk, uint16_t *port, void *buf, uint32_t cap)
{
	for (uint32_t i = 0; i < LK_FRAME_SLOTS; i++) {
		int n = lk_ring_take(lk, &lk->ring[R_DOWN], port, NULL, buf, cap);

		if (n != -EBADMSG)
			return n;
	}
	return -EAGAIN;
}
