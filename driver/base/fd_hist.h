/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_hist: durations (microseconds) counted in a small fixed histogram,
 * for a maximum and percentiles that cost nothing per sample but an
 * increment - flowcutd's turn times (turn_max_us, turn_p99_us), the binding's
 * offload times (offload_us_p50, offload_us_p99) and its qualify-to-first-
 * frame times (first_frame_us_p50, first_frame_us_p99).
 *
 * Buckets are log-linear, as HdrHistogram's: FD_HIST_SUB (16) buckets a
 * power of two.  Values 0..15 have a bucket each; above, a value of bit
 * length e + 1 (2^e <= v < 2^(e+1), e >= 4) falls in one of 16 buckets of
 * width 2^(e-4) each.  Everything at or above 2^FD_HIST_TOP_BIT us (about
 * 67 s) is in the last bucket.  A percentile is the upper edge of the
 * bucket in which the running count first reaches pct % of the samples
 * (ceil(pct n / 100): at most (100 - pct) % of them are above it), capped
 * at the maximum seen.  Error bound: it is never below the true
 * percentile, and above it by less than one bucket's width, under 1/16
 * (6.25 %) of the value (exact below 16 us); at 1 ms the buckets are
 * [960, 991] and [992, 1023] us, so "under 1 ms" reads as a p50 of 991 or
 * less.  The window is the caller's: fd_hist_reset starts a new one.
 * Fixed size (FD_HIST_BUCKETS counters, 2.9 KB), pure, no allocation; one
 * owner.
 */
#ifndef FLOWCUT_FD_HIST_H
#define FLOWCUT_FD_HIST_H

#include <stdint.h>

#define FD_HIST_SUB_BITS 4			/* log2 of the buckets a power of two */
#define FD_HIST_SUB (1u << FD_HIST_SUB_BITS)
#define FD_HIST_TOP_BIT 26			/* 2^26 us and above: the last bucket */
#define FD_HIST_BUCKETS (((FD_HIST_TOP_BIT - FD_HIST_SUB_BITS + 1) << FD_HIST_SUB_BITS) + 1)

struct fd_hist {
	uint64_t n;			/* samples in the window */
	uint64_t max_us;		/* the longest */
	uint64_t count[FD_HIST_BUCKETS];
};

/* fd_hist_add - one sample of `us` microseconds. */
void fd_hist_add(struct fd_hist *h, uint64_t us);
/* fd_hist_p99 - the window's 99th percentile, us (see above); 0 with no sample. */
uint64_t fd_hist_p99(const struct fd_hist *h);
/*
 * fd_hist_pct - the window's pct-th percentile (1..100), us, the same way:
 * the upper edge of the bucket where ceil(pct n / 100) is reached, capped
 * at the maximum; 0 with no sample.
 */
uint64_t fd_hist_pct(const struct fd_hist *h, unsigned int pct);
/*
 * fd_hist_bucket - the bucket `us` is counted in, and its upper edge in
 * *upper (the largest value it holds; UINT64_MAX for the last): for tests
 * and readers of count[].
 */
unsigned int fd_hist_bucket(uint64_t us, uint64_t *upper);
/* fd_hist_reset - a new window: no sample. */
void fd_hist_reset(struct fd_hist *h);

#endif
