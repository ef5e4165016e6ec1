/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_route: the host's routes, neighbours and links over rtnetlink (libmnl),
 * so a connection's next hops in the fast path are the host's and follow
 * them.
 *
 * Two halves.  Questions: where the host sends a packet (fd_route_get: the
 * interface, the neighbour, its MAC, the path's MTU) and what one neighbour
 * entry holds now (fd_route_neigh_get).  Changes: a socket on rtnetlink's
 * neighbour, route and link groups (fd_route_watch_*) whose messages
 * fd_route_parse() turns into struct fd_rt_change, one per message it can
 * use; it is a pure function of its bytes, fuzzed by tests/fuzz/fuzz_rtnl.c.
 *
 * One struct fd_route or fd_route_watch per thread; *_close(NULL) does
 * nothing.  Errors are negative errnos.
 */
#ifndef FLOWCUT_FD_ROUTE_H
#define FLOWCUT_FD_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fd_route;
struct fd_route_watch;

/*
 * A next hop: the interface out, the neighbour frames go to (the gateway,
 * or the destination itself on a connected route), the route's MTU metric
 * (0 when it has none: the interface's MTU holds, which the caller knows
 * from fd_route_link_mtu and the link group's changes), and the
 * neighbour's MAC if it is known.
 */
struct fd_hop {
	unsigned int ifindex;
	uint8_t family;		/* 4 or 6 */
	uint8_t nbr[16];	/* 4 or 16 bytes by family */
	uint16_t mtu;		/* the route's, 0 for the interface's */
	uint8_t mac[6];
	bool resolved;		/* the neighbour entry has a usable MAC */
};

struct fd_route *fd_route_open(void);
void fd_route_close(struct fd_route *r);

/*
 * fd_route_get - the next hop for `dst` (4 or 16 bytes by family 4 or 6).
 * Returns 0; -ENETUNREACH when the route is not a unicast one out of an
 * interface (local, blackhole, unreachable, none); -EINVAL for a route MTU
 * under 68; a negative errno when the kernel could not be asked.  A gateway or destination without a
 * neighbour entry yet gives resolved = false.
 */
int fd_route_get(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out);

/*
 * fd_route_path - the same without asking for the neighbour's entry
 * (resolved false, no MAC): where a packet goes and the route's MTU.
 */
int fd_route_path(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out);

/* fd_route_link_mtu - an interface's MTU: 0, or a negative errno. */
int fd_route_link_mtu(struct fd_route *r, unsigned int ifindex, uint32_t *mtu);

/*
 * fd_route_neigh_get - what the neighbour entry (ifindex, family, addr)
 * holds now: 0 and mac/resolved filled (resolved false when there is no
 * entry or it has no usable MAC), or a negative errno.
 */
int fd_route_neigh_get(struct fd_route *r, unsigned int ifindex, int family,
		       const uint8_t *addr, uint8_t mac[6], bool *resolved);

/*
 * fd_route_neigh_resolve - asks the kernel to resolve the neighbour
 * (ifindex, family, addr) as it would before sending to it: an
 * RTM_NEWNEIGH with NTF_USE (neigh_event_send), which makes the entry if
 * there is none (NUD_NONE: an ordinary one, the garbage collector's like
 * any other) and sends a solicitation (ARP or NDP) unless it is usable
 * already.  The answer comes as a neighbour change on the watch.  For a
 * state the host forwards one way only: it never sends towards the other
 * end, so nothing else resolves it.  0, or a negative errno (-EPERM
 * without CAP_NET_ADMIN).  Only for an entry the kernel has just called
 * unusable: since Linux 5.16 NTF_USE also takes NUD_PERMANENT off an
 * entry that has it (a usable one, never asked for here).
 */
int fd_route_neigh_resolve(struct fd_route *r, unsigned int ifindex, int family,
			   const uint8_t *addr);

struct fd_rt_change;
typedef void fd_rt_change_fn(void *arg, const struct fd_rt_change *c);

/*
 * fd_route_neigh_dump - every IPv4 and IPv6 neighbour entry the host holds
 * (one RTM_GETNEIGH dump), each handed to fn as the neighbour group's
 * message would be (struct fd_rt_change, FD_RT_NEIGH, read by the same
 * parser).  Returns the number reported, or a negative errno (those before
 * it were reported); -EBADMSG for a reply that did not parse.
 */
int fd_route_neigh_dump(struct fd_route *r, fd_rt_change_fn *fn, void *arg);

/*
 * struct fd_route_io - the questions above as their users (the binding,
 * fd_nhop_recheck) ask them: one function a question, each returning what
 * it returns, on `ctx`.  A function table, as struct fd_cmds is, so a test
 * stands in for the host's routes without root (tests/unit/driver/test_offload.c).
 * neigh_dump is fd_route_neigh_dump, for what keeps a copy of the
 * neighbours (fd_rtcache); the binding does not ask it.  neigh_resolve is
 * fd_route_neigh_resolve (NULL: nothing asked).
 * fd_route_io_of - the real one, on an open struct fd_route (which must
 * outlive it).
 */
struct fd_route_io {
	int (*get)(void *ctx, int family, const uint8_t *dst, struct fd_hop *out);
	int (*path)(void *ctx, int family, const uint8_t *dst, struct fd_hop *out);
	int (*link_mtu)(void *ctx, unsigned int ifindex, uint32_t *mtu);
	int (*neigh_get)(void *ctx, unsigned int ifindex, int family, const uint8_t *addr,
			 uint8_t mac[6], bool *resolved);
	int (*neigh_dump)(void *ctx, fd_rt_change_fn *fn, void *arg);
	int (*neigh_resolve)(void *ctx, unsigned int ifindex, int family, const uint8_t *addr);
	void *ctx;
};

struct fd_route_io fd_route_io_of(struct fd_route *r);

/* ---- changes ---- */

enum fd_rt_what {
	FD_RT_NEIGH,	/* a neighbour entry changed or went */
	FD_RT_ROUTE,	/* a route was added, changed or removed */
	FD_RT_LINK,	/* an interface changed (its MTU among others) */
};

struct fd_rt_change {
	enum fd_rt_what what;
	unsigned int ifindex;	/* NEIGH, LINK */
	uint8_t family;		/* NEIGH: 4 or 6 */
	uint8_t addr[16];	/* NEIGH: the neighbour */
	uint8_t mac[6];		/* NEIGH: valid when resolved */
	bool resolved;		/* NEIGH: a usable MAC (false: gone, failed, incomplete) */
	uint32_t mtu;		/* LINK: 0 when the message did not say */
};

/*
 * fd_route_parse - the rtnetlink messages in buf[0..len): calls fn once per
 * neighbour (IPv4/IPv6 with an address), route or link message.  Returns
 * the number of changes reported, or -EBADMSG when a message is truncated
 * or malformed (changes before it were reported).  Other message types
 * are skipped.
 */
int fd_route_parse(const void *buf, size_t len, fd_rt_change_fn *fn, void *arg);

/* fd_route_watch_open - a socket on the neighbour, route and link groups.  NULL, errno. */
struct fd_route_watch *fd_route_watch_open(void);
void fd_route_watch_close(struct fd_route_watch *w);
int fd_route_watch_fd(const struct fd_route_watch *w);
/*
 * fd_route_watch_read - reads at most `max_msgs` datagrams of what is
 * pending (a bounded batch: other sockets get their turn) and hands each
 * change to fn.  Returns the number of changes, or a negative errno;
 * -ENOBUFS means changes were lost (the socket overflowed, or a datagram
 * was larger than the buffer): the caller must read again what it depends
 * on.  A malformed datagram is skipped and counted in *bad.
 */
int fd_route_watch_read(struct fd_route_watch *w, unsigned int max_msgs, fd_rt_change_fn *fn,
			void *arg, uint64_t *bad);

#endif
