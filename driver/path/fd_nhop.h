/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nhop: the fast path's next hops as the host knows them.
 *
 * A next hop is (front port, neighbour address, MTU): the neighbour the
 * host's route sends a connection's frames to, out of which port, and the
 * largest datagram that path takes.  Each gets an index in the fast path's
 * next-hop table the first time a connection needs it (NHOP_PROGRAM), and
 * keeps it until the table is emptied (fd_nhop_reset, at a resync, once
 * every connection is out): between resets an index is never given to
 * another neighbour, and after one its first NHOP_PROGRAM says `reused`,
 * so no connection is ever sent to a neighbour it was not made for.  The
 * table holds FD_NHOP_MAX next hops; when it is full, connections that
 * need a new one stay with the host (-ENOSPC) until the next resync.  The neighbour's MAC is the
 * next hop's one mutable part: when the host's neighbour entry changes (a
 * server replaced, a failover, an entry that fails or resolves),
 * fd_nhop_neigh() programs the index again and every connection that uses
 * it follows at once (the fast path keeps the revision of a next hop whose
 * MAC changes; docs/commands.md, NHOP_PROGRAM).  A route or MTU change is
 * another next hop: fd_offload moves the connections.
 *
 * Main thread only (it speaks commands on the link).  fd_nhop_close(NULL)
 * does nothing.  Errors are negative errnos; a command without an answer
 * (-ETIMEDOUT, -ECONNRESET, -ENOBUFS) leaves the coprocessor's table
 * unknown, and the caller resyncs.
 */
#ifndef FLOWCUT_FD_NHOP_H
#define FLOWCUT_FD_NHOP_H

#include <stdbool.h>
#include <stdint.h>

#include "fd_route.h"
#include "fd_cmds.h"

#define FD_NHOP_MAX 4096

struct fd_nhop;

struct fd_nhop_stats {
	uint64_t programmed;	/* next hops made */
	uint64_t followed;	/* programmed again for a neighbour's change */
};

/*
 * fd_nhop_open - a table for `nports` ports whose own MACs are port_mac[],
 * programmed through `cmds` (copied).  NULL, errno.
 */
struct fd_nhop *fd_nhop_open(const struct fd_cmds *cmds, unsigned int nports,
			     const uint8_t (*port_mac)[6]);
void fd_nhop_close(struct fd_nhop *t);

/*
 * fd_nhop_get - the index of the next hop (port, hop->nbr, hop->mtu),
 * programmed with hop's MAC the first time.  0 and *id; -ENOSPC when the
 * table is full; -EINVAL for a port out of range; an error of the link or
 * the coprocessor.
 */
int fd_nhop_get(struct fd_nhop *t, unsigned int port, const struct fd_hop *hop, uint32_t *id);

/*
 * fd_nhop_find - the same without making one: 0 and *id, or -ENOENT.
 */
int fd_nhop_find(const struct fd_nhop *t, unsigned int port, const struct fd_hop *hop,
		 uint32_t *id);

/*
 * fd_nhop_neigh - the host's neighbour (family, addr) out of `port` now has
 * `mac` (resolved) or none usable (!resolved): every next hop of that
 * neighbour is programmed again where it differs.  Returns how many were,
 * or the first error (the rest are not tried).
 */
int fd_nhop_neigh(struct fd_nhop *t, unsigned int port, int family, const uint8_t *addr,
		  const uint8_t mac[6], bool resolved);

/*
 * fd_nhop_recheck - asks the host again for every next hop's neighbour
 * (after rtnetlink's changes were lost) and follows what changed.  The
 * port's interface comes from ifindex[port].  Returns as fd_nhop_neigh().
 */
int fd_nhop_recheck(struct fd_nhop *t, const struct fd_route_io *r, const unsigned int *ifindex);

/* fd_nhop_reset - forget every next hop (the coprocessor's table was emptied or is unknown). */
void fd_nhop_reset(struct fd_nhop *t);

void fd_nhop_stats(const struct fd_nhop *t, struct fd_nhop_stats *out);

#endif
