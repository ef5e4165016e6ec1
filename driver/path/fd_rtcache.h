/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rtcache: the host's routes and neighbours remembered, behind struct
 * fd_route_io (fd_rtcache_io), so the binding asks its questions without
 * a round trip to the kernel each.
 *
 * Routes, keyed by (family, destination): fd_route_path asks by
 * destination alone, so the kernel's answer is a function of it and of
 * the routing state.  An answer of the route's own (0, or -ENETUNREACH)
 * is kept; an error of asking is passed on and not kept.  Every route or
 * link change and every loss empties the routes, so the caller must hand
 * each change here (fd_rtcache_change) before the binding acts on it.
 * Not followed: a rule change (`ip rule`), a PMTU or redirect exception.
 * Neighbours, keyed by (ifindex, family, address): dumped at open, kept
 * by the changes; only a usable one (NUD_VALID) is a hit, anything else
 * asks the kernel.
 *
 * Bounded: at most max_routes and max_neighs entries; a miss when full is
 * answered by the real lookup and not kept (counted `full`), so a full
 * cache is as right as none and only slower.
 *
 * Main thread only, as the struct fd_route under it.  fd_rtcache_open
 * copies `host`, whose ctx must outlive the cache; fd_rtcache_close(NULL)
 * does nothing.  Errors are negative errnos (fd_rtcache_open: NULL and
 * errno).
 *
 * Design notes (why the key is exact, the sizes): driver/path/README.md.
 */
#ifndef FLOWCUT_FD_RTCACHE_H
#define FLOWCUT_FD_RTCACHE_H

#include <stdint.h>

#include "fd_route.h"
#include "fd_stats.h"

#define FD_RTCACHE_ROUTES 65536
#define FD_RTCACHE_NEIGHS 8192

struct fd_rtcache;

/* The counters, named as in flowcutd's stats (docs/counters.md). */
/* The cache's counters, each published under its name (fd_stats.h) */
#define FD_RTCACHE_STATS(X) \
	X(rtcache, rtcache_route_hits)		/* route lookups answered from the cache */ \
	X(rtcache, rtcache_route_misses)	/* ... asked of the kernel */ \
	X(rtcache, rtcache_neigh_hits)		/* neighbour lookups answered from the cache */ \
	X(rtcache, rtcache_neigh_misses)	/* ... asked of the kernel */ \
	X(rtcache, rtcache_full)		/* answers not kept: their half was full */ \
	X(rtcache, rtcache_flushes)		/* the route half emptied: a route or link change, a loss */

struct fd_rtcache_stats {
	FD_RTCACHE_STATS(FD_STAT_FIELD)
};

/*
 * fd_rtcache_open - a cache over `host` (copied; its ctx must outlive the
 * cache; its neigh_dump is required), at most max_routes routes and
 * max_neighs neighbours (each >= 1), the neighbours dumped now.  For the
 * changes to be followed from the first, the caller opens its watch socket
 * (fd_route_watch_open) before.  NULL and errno: EINVAL (no neigh_dump, a
 * maximum of 0), ENOMEM, or the dump's error.
 */
struct fd_rtcache *fd_rtcache_open(const struct fd_route_io *host, unsigned int max_routes,
				   unsigned int max_neighs);
void fd_rtcache_close(struct fd_rtcache *c);

/*
 * fd_rtcache_io - the questions through the cache, on `c` (which must
 * outlive it): get, path and neigh_get as fd_route's, answered from the
 * cache where it can; link_mtu, neigh_dump and neigh_resolve are the host's own.
 */
struct fd_route_io fd_rtcache_io(struct fd_rtcache *c);

/*
 * fd_rtcache_change - one of rtnetlink's changes, before the binding sees
 * it: a neighbour's kept (resolved) or dropped (not), a route or link
 * change empties the route half.
 */
void fd_rtcache_change(struct fd_rtcache *c, const struct fd_rt_change *ch);

/*
 * fd_rtcache_lost - rtnetlink's changes were lost: both halves emptied, the
 * neighbours dumped again (before the binding reads them again:
 * fd_offload_rt_lost).  0, or the dump's negative errno: what it reported
 * is kept, the rest are misses.
 */
int fd_rtcache_lost(struct fd_rtcache *c);

void fd_rtcache_stats(const struct fd_rtcache *c, struct fd_rtcache_stats *out);

#endif
