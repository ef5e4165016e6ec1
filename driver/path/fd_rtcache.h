/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rtcache: the host's routes and neighbours remembered, behind struct
 * fd_route_io, so the binding asks its questions (two routes and two
 * neighbours an offload, two routes a connection whenever the paths are
 * looked at again) without a round trip to the kernel each.
 *
 * Two halves, each a uthash table (the one the binding's tables use; DPDK's
 * rte_hash is not linked into flowcutd):
 *
 * - Routes, keyed by (family, destination): one real path() on a miss.
 *   That key is exact, not a guess: fd_route_path asks RTM_GETROUTE with
 *   RTA_DST alone - no RTA_SRC, RTA_IIF, RTA_MARK or RTA_OIF - so the
 *   kernel's answer is a function of the destination and of its routing
 *   state (routes, rules, links, addresses) only.  An answer is kept when
 *   it is the route's own (0, or -ENETUNREACH: local, blackhole, none); an
 *   error of asking (a timeout, a full buffer) is passed on and not kept.
 *   Every FD_RT_ROUTE and every FD_RT_LINK change (fd_rtcache_change) and
 *   every loss (fd_rtcache_lost) empties the half, so the caller must hand
 *   each change here before the binding acts on it (flowcutd's
 *   on_rt_change): then fd_offload_paths, which runs after the batch,
 *   never judges a connection by a route that changed.  An address added
 *   or removed comes with its local and connected routes' messages.  Not
 *   followed (as the binding did not follow them before): a rule change
 *   (`ip rule`: no group is read), a PMTU or redirect exception the
 *   kernel learns without a message.
 * - Neighbours, keyed by (ifindex, family, address): filled by one dump at
 *   open, then kept by the FD_RT_NEIGH changes.  Only an entry with a
 *   usable MAC (the kernel's NUD_VALID: the states fd_route_neigh_get and
 *   fd_route_parse call resolved) is held and is a hit; anything else -
 *   FAILED, INCOMPLETE, gone, never seen - is a miss and asks the kernel,
 *   as neigh_get did before (its answer is kept when resolved).  A loss
 *   empties this half too and dumps again.
 *
 * Bounded: at most max_routes and max_neighs entries (flowcutd:
 * FD_RTCACHE_ROUTES, FD_RTCACHE_NEIGHS); a miss when the half is full is
 * answered by the real lookup and not kept (counted `full`), so a full
 * cache is as right as none and only slower.  FD_RTCACHE_ROUTES is 65,536
 * destinations, about 130 B each (entry, uthash handle, bucket, malloc's
 * own): 8.5 MB at most, a fifteenth of flowcutd's 128 MB budget at a
 * million connections (docs/plan-a-million.md); the servers and the
 * clients that come back hit, and a client's first connection would miss
 * at any size.  FD_RTCACHE_NEIGHS is 8,192: twice FD_NHOP_MAX (every next
 * hop the fast path can hold is one neighbour), and eight times the
 * kernel's default neighbour table limit (gc_thresh3, 1,024 a family),
 * so the dump of every interface's neighbours fits.
 *
 * Main thread only, as the struct fd_route under it.  fd_rtcache_close(NULL)
 * does nothing.  Errors are negative errnos.
 */
#ifndef FLOWCUT_FD_RTCACHE_H
#define FLOWCUT_FD_RTCACHE_H

#include <stdint.h>

#include "fd_route.h"

#define FD_RTCACHE_ROUTES 65536
#define FD_RTCACHE_NEIGHS 8192

struct fd_rtcache;

/* The counters, named as in flowcutd's stats (docs/counters.md). */
struct fd_rtcache_stats {
	uint64_t rtcache_route_hits;	/* route lookups answered from the cache */
	uint64_t rtcache_route_misses;	/* ... asked of the kernel */
	uint64_t rtcache_neigh_hits;	/* neighbour lookups answered from the cache */
	uint64_t rtcache_neigh_misses;	/* ... asked of the kernel */
	uint64_t rtcache_full;		/* answers not kept: their half was full */
	uint64_t rtcache_flushes;	/* the route half emptied: a route or link change, a loss */
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
