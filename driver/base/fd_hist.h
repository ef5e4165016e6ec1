/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_hist: durations (microseconds) counted in a small fixed histogram,
 * for a maximum and a 99th percentile that cost nothing per sample but an
 * increment - flowcutd's turn times (turn_max_us, turn_p99_us), the binding's
 * offload times (offload_us_p50, offload_us_p99).
 *
 * Buckets are powers of two: bucket 0 holds 0 and 1 us, bucket b holds
 * (2^(b-1), 2^b] us, the last (FD_HIST_BUCKETS - 1) everything above
 * 2^(FD_HIST_BUCKETS - 2) us (about 4.2 s).  The p99 is the upper bound
 * of the bucket in which the running count first reaches 99 % of the
 * samples (ceil(0.99 n): at most one sample in a hundred is above it),
 * capped at the maximum seen, so it is exact to within a factor of two
 * and never above the true maximum.  The window is the caller's:
 * fd_hist_reset starts a new one.  Pure, no allocation; one owner.
 */
#ifndef FLOWCUT_FD_HIST_H
#define FLOWCUT_FD_HIST_H

#include <stdint.h>

#define FD_HIST_BUCKETS 24

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
 * the upper bound of the bucket where ceil(pct n / 100) is reached.
 */
uint64_t fd_hist_pct(const struct fd_hist *h, unsigned int pct);
/* fd_hist_reset - a new window: no sample. */
void fd_hist_reset(struct fd_hist *h);

#endif
