/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_relay: frames between the link and the front ports' TAPs, both ways.
 *
 * Two threads of its own: "up" takes the frames the coprocessor hands to
 * the host and writes each into the TAP of its port (so the host kernel's
 * work on them is charged to the host); "down" reads what the host kernel
 * sends out of a TAP and puts it on the link for that port.  Each owns its
 * frame ring of the link, and resyncs it when the coprocessor reboots.
 * Every frame is counted, delivered or lost (struct fd_relay_stats).
 *
 * A hook (the inspector's) may see every frame up first, in the "up"
 * thread: it takes a frame (holds it, drops it, or hands it on itself with
 * fd_relay_to_host) or leaves it to the relay.  Without a hook, frames
 * flagged INSPECT are dropped and counted.
 *
 * fd_relay_start() from the main thread; fd_relay_stats() from any;
 * fd_relay_stop() joins both threads.  fd_relay_stop(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_RELAY_H
#define FLOWCUT_FD_RELAY_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_defs.h>

#include "fd_stats.h"
#include "lk.h"

/* The relay's counters, each published under its name (fd_stats.h) */
#define FD_RELAY_STATS(X) \
	X(relay, inspect_dropped)	/* flagged INSPECT, no hook: dropped */ \
	X(relay, up_bad_port)		/* tagged with a port we do not have */ \
	X(relay, up_tap_full)		/* the TAP refused the write */ \
	X(relay, down_ring_full)	/* the link's down ring was full */

struct fd_relay_stats {
	uint64_t to_host[FC_MAX_PORTS];		/* written into the port's TAP */
	uint64_t from_host[FC_MAX_PORTS];	/* read from the TAP, sent down */
	FD_RELAY_STATS(FD_STAT_FIELD)
};

struct fd_relay;

/* What sees the frames up before their TAP (called in the "up" thread). */
struct fd_relay_hook {
	/* true: taken (held, dropped, or handed on by fd_relay_to_host); false: the relay's */
	bool (*frame)(void *arg, struct fd_relay *r, uint16_t port, uint16_t flags,
		      const uint8_t *buf, uint32_t len);
	/*
	 * called about every tick_ms(arg) ms (NULL tick_ms: 20), whether frames
	 * come or not; tick_ms is asked each time round, so a hook holding
	 * nothing may ask for rare ticks (the relay then sleeps that long)
	 */
	void (*tick)(void *arg, struct fd_relay *r);
	uint32_t (*tick_ms)(void *arg);
	void *arg;
};

/*
 * fd_relay_start - relay between `lk` and taps[0..nports-1]; `hook` (may
 * be NULL) is copied, its arg must outlive the relay.  NULL and errno.
 */
struct fd_relay *fd_relay_start(struct lk *lk, const int *taps, unsigned int nports,
				const struct fd_relay_hook *hook);
/* fd_relay_to_host - from the hook (or its own threads: the inspector's answers): a frame into `port`'s TAP, counted as the relay's. */
void fd_relay_to_host(struct fd_relay *r, uint16_t port, const void *buf, uint32_t len);
void fd_relay_stop(struct fd_relay *r);
void fd_relay_stats(const struct fd_relay *r, struct fd_relay_stats *out);

#endif
