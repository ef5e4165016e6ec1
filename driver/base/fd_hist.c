/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_hist: see fd_hist.h. */
#include "fd_hist.h"

#include <string.h>

/* The bucket of `us`: the bit length of us - 1 (0 and 1 in bucket 0), capped. */
static unsigned int
bucket_of(uint64_t us)
{
	unsigned int b = us <= 1 ? 0 : 64 - (unsigned int)__builtin_clzll(us - 1);

	return b < FD_HIST_BUCKETS ? b : FD_HIST_BUCKETS - 1;
}

void
fd_hist_add(struct fd_hist *h, uint64_t us)
{
	h->count[bucket_of(us)]++;
	h->n++;
	if (us > h->max_us)
		h->max_us = us;
}

uint64_t
fd_hist_p99(const struct fd_hist *h)
{
	return fd_hist_pct(h, 99);
}

uint64_t
fd_hist_pct(const struct fd_hist *h, unsigned int pct)
{
	/* ceil(pct n / 100): n - floor((100 - pct) n / 100) */
	uint64_t want = h->n - h->n * (100 - pct) / 100, seen = 0;

	if (h->n == 0)
		return 0;
	for (unsigned int b = 0; b < FD_HIST_BUCKETS - 1; b++) {
		uint64_t upper = (uint64_t)1 << b;

		seen += h->count[b];
		if (seen >= want)
			return upper < h->max_us ? upper : h->max_us;
	}
	return h->max_us;
}

void
fd_hist_reset(struct fd_hist *h)
{
	memset(h, 0, sizeof(*h));
}
