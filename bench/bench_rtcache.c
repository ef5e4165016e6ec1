/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_rtcache: `flowcut-bench rtcache`, what the route cache saves the
 * binding: the route and neighbour of a destination answered by
 * fd_rtcache beside the same question asked of the kernel.
 *
 *   flowcut-bench rtcache [--lookups N]
 *
 * rtcache: a route and neighbour lookup (fd_route_io get) through
 * fd_rtcache's hits beside the kernel's own answer over rtnetlink, N of
 * each, in a namespace of its own.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "fc_netns.h"
#include "fd_rtcache.h"

/*
 * The binding's route questions (get: the route, then its neighbour) asked
 * of the kernel (fd_route, two rtnetlink round trips) and through the
 * route cache (fd_rtcache, hits after the first), in one run, over the
 * test lab's front ports (fc_netns): 198.18.0.10, 198.19.0.10 and
 * 2001:2:0:1::10, whose neighbours are permanent.
 */
static double
rt_lookups(const struct fd_route_io *io, unsigned int n, const uint8_t (*dst)[16],
	   const int *family, unsigned int ndst)
{
	double t = mono_ns();

	for (unsigned int i = 0; i < n; i++) {
		struct fd_hop hop;
		int rc = io->get(io->ctx, family[i % ndst], dst[i % ndst], &hop);

		if (rc != 0 || !hop.resolved) {
			fprintf(stderr, "flowcut-bench rtcache: lookup %u: %s\n", i,
				rc != 0 ? strerror(-rc) : "neighbour not resolved");
			return -1;
		}
	}
	return (mono_ns() - t) / n;
}

int
bench_rtcache(unsigned int n)
{
	static const char *const text[] = { "198.18.0.10", "198.19.0.10", "2001:2:0:1::10" };
	const char *why = fc_netns_front_ports();
	uint8_t dst[3][16] = { { 0 } };
	int family[3];
	struct fd_route *r;
	struct fd_rtcache *c;
	struct fd_route_io host, cached;
	struct fd_rtcache_stats st;
	double real_ns, hit_ns;

	if (why != NULL) {
		printf("flowcut-bench rtcache: skipped: %s\n", why);
		return 0;
	}
	for (unsigned int i = 0; i < 3; i++) {
		family[i] = strchr(text[i], ':') ? 6 : 4;
		inet_pton(family[i] == 4 ? AF_INET : AF_INET6, text[i], dst[i]);
	}
	r = fd_route_open();
	if (r == NULL) {
		fprintf(stderr, "flowcut-bench rtcache: rtnetlink: %s\n", strerror(errno));
		return 1;
	}
	host = fd_route_io_of(r);
	c = fd_rtcache_open(&host, FD_RTCACHE_ROUTES, FD_RTCACHE_NEIGHS);
	if (c == NULL) {
		fprintf(stderr, "flowcut-bench rtcache: the cache: %s\n", strerror(errno));
		fd_route_close(r);
		return 1;
	}
	cached = fd_rtcache_io(c);
	real_ns = rt_lookups(&host, n, dst, family, 3);
	hit_ns = real_ns < 0 ? -1 : rt_lookups(&cached, n * 100, dst, family, 3);
	fd_rtcache_stats(c, &st);
	fd_rtcache_close(c);
	fd_route_close(r);
	if (hit_ns < 0)
		return 1;
	printf("flowcut-bench rtcache: get (route + neighbour) over 3 destinations\n"
	       "  kernel (rtnetlink)  %10u lookups  %8.0f ns each  %12.0f /s\n"
	       "  cache (hits)        %10u lookups  %8.0f ns each  %12.0f /s  (x%.0f)\n"
	       "  cache counters: route %" PRIu64 " hits %" PRIu64 " misses, neighbour %" PRIu64
	       " hits %" PRIu64 " misses\n",
	       n, real_ns, 1e9 / real_ns, n * 100, hit_ns, 1e9 / hit_ns, real_ns / hit_ns,
	       st.rtcache_route_hits, st.rtcache_route_misses, st.rtcache_neigh_hits,
	       st.rtcache_neigh_misses);
	return 0;
}
