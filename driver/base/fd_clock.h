/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_clock: the driver's one clock, CLOCK_MONOTONIC (never set back, not
 * moved by NTP's steps), read as the driver's rooms need it: whole
 * milliseconds for deadlines and periods, nanoseconds to time a piece of
 * work, and what has passed since such a reading, in milliseconds or
 * seconds as a double for a duration said in the log.
 *
 * Pure reads of the kernel's clock: any thread.  clock_gettime() on
 * CLOCK_MONOTONIC cannot fail on Linux (the clock always exists, the
 * timespec is ours), so nothing here returns an error.
 */
#ifndef FLOWCUT_FD_CLOCK_H
#define FLOWCUT_FD_CLOCK_H

#include <stdint.h>
#include <time.h>

/* fd_clock_ms - CLOCK_MONOTONIC in whole milliseconds. */
static inline uint64_t
fd_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * fd_clock_coarse_ms - CLOCK_MONOTONIC_COARSE in whole milliseconds: the
 * same clock at the last tick (a few ms behind at most), cheaper to read;
 * for a loop that asks it at every frame (fd_relay's tick).
 */
static inline uint64_t
fd_clock_coarse_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* fd_clock_ns - CLOCK_MONOTONIC in nanoseconds: a start, for the two below. */
static inline uint64_t
fd_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* fd_clock_ms_since - milliseconds (to the ns) since t0_ns, an fd_clock_ns(). */
static inline double
fd_clock_ms_since(uint64_t t0_ns)
{
	return (double)(fd_clock_ns() - t0_ns) / 1e6;
}

/* fd_clock_s_since - seconds (to the ns) since t0_ns, an fd_clock_ns(). */
static inline double
fd_clock_s_since(uint64_t t0_ns)
{
	return (double)(fd_clock_ns() - t0_ns) / 1e9;
}

#endif
