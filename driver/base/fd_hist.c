/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_hist: see fd_hist.h. */
#include "fd_hist.h"

#include <string.h>

/* The last bucket's index: everything at or above 2^FD_HIST_TOP_BIT. */
#define LAST (FD_HIST_BUCKETS - 1)

/*
 * Below FD_HIST_SUB a bucket a value; above, e = the top bit's place:
 * the 16 buckets of [2^e, 2^(e+1)) start at (e - 3) * 16, each 2^(e-4) wide.
 */
static unsigned int
bucket_of(uint64_t us)
{
	unsigned int e, shift;

	if (us < FD_HIST_SUB)
		return (unsigned int)us;
	e = 63u - (unsigned int)__builtin_clzll(us);
	if (e >= FD_HIST_TOP_BIT)
		return LAST;
	shift = e - FD_HIST_SUB_BITS;
	return ((e - FD_HIST_SUB_BITS + 1) << FD_HIST_SUB_BITS) +
	       (unsigned int)(us >> shift) - FD_HIST_SUB;
}

/* The largest value bucket b (< LAST) holds. */
static uint64_t
upper_of(unsigned int b)
{
	unsigned int octave = b >> FD_HIST_SUB_BITS, sub = b & (FD_HIST_SUB - 1);
	unsigned int shift;

	if (octave == 0)
		return b;
	shift = octave - 1;
	return ((uint64_t)(FD_HIST_SUB + sub + 1) << shift) - 1;
}

unsigned int
fd_hist_bucket(uint64_t us, uint64_t *upper)
{
	unsigned int b = bucket_of(us);

	*upper = b == LAST ? UINT64_MAX : upper_of(b);
	return b;
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
	for (unsigned int b = 0; b < LAST; b++) {
		uint64_t upper = upper_of(b);

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
