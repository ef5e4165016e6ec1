/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_route: where the host's own routes and neighbours send a packet -
 * asked of the kernel over rtnetlink (libmnl), so a connection's next hops
 * in the fast path are the host's.
 *
 * One struct fd_route per thread; fd_route_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_ROUTE_H
#define FLOWCUT_FD_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

struct fd_route;

/* A next hop: the interface out, and the neighbour's MAC if it is known. */
struct fd_hop {
	unsigned int ifindex;
	uint8_t mac[6];
	bool resolved;		/* the neighbour entry has a usable MAC */
};

struct fd_route *fd_route_open(void);
void fd_route_close(struct fd_route *r);

/*
 * fd_route_get - the next hop for `dst` (4 or 16 bytes by family 4 or 6).
 * Returns 0; -ENETUNREACH when the route is not a unicast one out of an
 * interface (local, blackhole, unreachable, none); a negative errno when
 * the kernel could not be asked.  A gateway or destination without a
 * neighbour entry yet gives resolved = false.
 */
int fd_route_get(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out);

#endif
