/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rtcache over a stand-in of the host's routes and neighbours (a small
 * table of host routes and neighbour entries, each question counted): one
 * row a story - lookups, the host changed behind the cache's back, and
 * rtnetlink's messages (built by tests/lib/fc_rtnl as the kernel sends
 * them, read by the real fd_route_parse) handed to fd_rtcache_change as
 * flowcutd does.  Each lookup checks its answer and how many questions the
 * host has been asked so far; each row ends on the cache's counters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fc_rtnl.h"
#include "fd_route.h"
#include "fd_rtcache.h"

/* ---- the host: host routes and neighbour entries, what it is asked counted ---- */

#define HOST_MAX 8

static struct {
	struct {
		int family;
		uint8_t dst[16], gw[16];
		bool via;		/* through gw, else connected */
		unsigned int ifindex;
	} rt[HOST_MAX];
	struct {
		int family;
		uint8_t addr[16];
		unsigned int ifindex;
		uint8_t mac[6];
		bool resolved;
	} nb[HOST_MAX];
	unsigned int nrt, nnb;
	int fail_next;		/* the next path() fails with it, once */
	unsigned int asks;	/* path() and neigh_get() */
	unsigned int dumps;
} host;

static size_t
alen(int family)
{
	return family == 4 ? 4 : 16;
}

static int
host_path(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	(void)ctx;
	host.asks++;
	memset(out, 0, sizeof(*out));
	if (host.fail_next != 0) {
		int rc = host.fail_next;

		host.fail_next = 0;
		return rc;
	}
	for (unsigned int i = 0; i < host.nrt; i++)
		if (host.rt[i].family == family && memcmp(host.rt[i].dst, dst, alen(family)) == 0) {
			out->ifindex = host.rt[i].ifindex;
			out->family = (uint8_t)family;
			memcpy(out->nbr, host.rt[i].via ? host.rt[i].gw : dst, alen(family));
			return 0;
		}
	return -ENETUNREACH;
}

static int
host_neigh_get(void *ctx, unsigned int ifindex, int family, const uint8_t *addr, uint8_t mac[6],
	       bool *resolved)
{
	(void)ctx;
	host.asks++;
	*resolved = false;
	for (unsigned int i = 0; i < host.nnb; i++)
		if (host.nb[i].family == family && host.nb[i].ifindex == ifindex &&
		    memcmp(host.nb[i].addr, addr, alen(family)) == 0 && host.nb[i].resolved) {
			memcpy(mac, host.nb[i].mac, 6);
			*resolved = true;
		}
	return 0;
}

static int
host_get(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	int rc = host_path(ctx, family, dst, out);

	return rc != 0 ? rc : host_neigh_get(ctx, out->ifindex, family, out->nbr, out->mac,
					     &out->resolved);
}

static int
host_link_mtu(void *ctx, unsigned int ifindex, uint32_t *mtu)
{
	(void)ctx, (void)ifindex;
	*mtu = 1500;
	return 0;
}

/* The dump, as the kernel's answer: one RTM_NEWNEIGH an entry, read by fd_route_parse. */
static int
host_neigh_dump(void *ctx, fd_rt_change_fn *fn, void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int n = 0;

	(void)ctx;
	host.dumps++;
	for (unsigned int i = 0; i < host.nnb; i++) {
		size_t len = fc_rtnl_neigh(buf, RTM_NEWNEIGH,
					   host.nb[i].family == 4 ? AF_INET : AF_INET6,
					   (int)host.nb[i].ifindex, host.nb[i].addr, host.nb[i].mac,
					   host.nb[i].resolved ? NUD_REACHABLE : NUD_FAILED);
		int rc = fd_route_parse(buf, len, fn, arg);

		assert_true(rc >= 0);
		n += rc;
	}
	return n;
}

static const struct fd_route_io host_io = {
	.get = host_get, .path = host_path, .link_mtu = host_link_mtu,
	.neigh_get = host_neigh_get, .neigh_dump = host_neigh_dump,
};

/* ---- the rows ---- */

enum op {
	END,
	HOST_ROUTE,	/* the host routes `addr` out of `ifindex` (via `via`), no message */
	HOST_NEIGH,	/* the host's entry (ifindex, addr) has MAC ..:`mac` (0: fails), no message */
	HOST_FAIL,	/* the host's next route answer is the error `rc` */
	OPEN,		/* the cache opened (the neighbours dumped) */
	PATH,		/* path(addr): rc, nbr `via` (NULL: addr), out of ifindex; `asks` so far */
	GET,		/* get(addr): as PATH, and resolved with MAC ..:`mac` (0: unresolved) */
	NEIGH,		/* neigh_get(ifindex, addr): MAC ..:`mac` (0: unresolved); `asks` */
	MSG_NEIGH,	/* RTM_NEWNEIGH (ifindex, addr) in state `nud` with MAC ..:`mac` */
	MSG_ROUTE,	/* RTM_NEWROUTE */
	MSG_LINK,	/* RTM_NEWLINK for ifindex */
	LOST,		/* fd_rtcache_lost: rc */
};

struct step {
	enum op op;
	int family;
	const char *addr, *via;
	unsigned int ifindex;
	uint8_t mac;		/* a MAC's last byte: 02:00:00:00:00:mac */
	uint16_t nud;
	int rc;
	unsigned int asks;
};

static const struct row {
	const char *name;
	unsigned int max_routes, max_neighs;
	struct step steps[16];
	struct fd_rtcache_stats st;	/* at the end */
	unsigned int dumps;
} rows[] = {
	{ "v4: a hit after a miss", 8, 8, {
		{ HOST_ROUTE, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.18.0.10", NULL, 10, 0x0a, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 4, "198.18.0.10", NULL, 10, 0x0a, 0, 0, 1 },
		{ GET, 4, "198.18.0.10", NULL, 10, 0x0a, 0, 0, 1 },
		{ PATH, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 1 },
	  }, { .rtcache_route_hits = 2, .rtcache_route_misses = 1, .rtcache_neigh_hits = 2 }, 1 },
	{ "v6: a hit after a miss", 8, 8, {
		{ HOST_ROUTE, 6, "2001:2::10", NULL, 10, 0, 0, 0, 0 },
		{ HOST_NEIGH, 6, "2001:2::10", NULL, 10, 0x0a, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 6, "2001:2::10", NULL, 10, 0x0a, 0, 0, 1 },
		{ GET, 6, "2001:2::10", NULL, 10, 0x0a, 0, 0, 1 },
	  }, { .rtcache_route_hits = 1, .rtcache_route_misses = 1, .rtcache_neigh_hits = 2 }, 1 },
	{ "v4: a route change between two lookups, the second by the new hop", 8, 8, {
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.11", NULL, 11, 0x0c, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 1 },
		{ HOST_ROUTE, 4, "198.19.0.10", "198.19.0.11", 11, 0, 0, 0, 0 },
		{ GET, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 1 },	/* no message yet */
		{ MSG_ROUTE, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 4, "198.19.0.10", "198.19.0.11", 11, 0x0c, 0, 0, 2 },
	  }, { .rtcache_route_hits = 1, .rtcache_route_misses = 2, .rtcache_neigh_hits = 3,
	       .rtcache_flushes = 1 }, 1 },
	{ "v6: a route change, the second by the new hop", 8, 8, {
		{ HOST_ROUTE, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 1 },
		{ HOST_ROUTE, 6, "2001:2:0:1::10", "2001:2:0:1::11", 11, 0, 0, 0, 0 },
		{ MSG_ROUTE, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 6, "2001:2:0:1::10", "2001:2:0:1::11", 11, 0, 0, 0, 2 },
	  }, { .rtcache_route_misses = 2, .rtcache_flushes = 1 }, 1 },
	{ "v6: a link change flushes the routes", 8, 8, {
		{ HOST_ROUTE, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 1 },
		{ HOST_ROUTE, 6, "2001:2:0:1::10", NULL, 12, 0, 0, 0, 0 },
		{ PATH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 1 },	/* no message yet */
		{ MSG_LINK, 0, NULL, NULL, 11, 0, 0, 0, 0 },
		{ PATH, 6, "2001:2:0:1::10", NULL, 12, 0, 0, 0, 2 },
	  }, { .rtcache_route_hits = 1, .rtcache_route_misses = 2, .rtcache_flushes = 1 }, 1 },
	{ "v4: a link change flushes the routes", 8, 8, {
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 1 },
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 12, 0, 0, 0, 0 },
		{ MSG_LINK, 0, NULL, NULL, 12, 0, 0, 0, 0 },
		{ PATH, 4, "198.19.0.10", NULL, 12, 0, 0, 0, 2 },
	  }, { .rtcache_route_misses = 2, .rtcache_flushes = 1 }, 1 },
	{ "v4: lost changes flush both halves and dump the neighbours again", 8, 8, {
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 1 },
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 12, 0, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 12, 0x0e, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0f, 0, 0, 0 },	/* its message lost */
		{ LOST, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ GET, 4, "198.19.0.10", NULL, 12, 0x0e, 0, 0, 2 },
		{ NEIGH, 4, "198.19.0.10", NULL, 11, 0x0f, 0, 0, 2 },
	  }, { .rtcache_route_misses = 2, .rtcache_neigh_hits = 3, .rtcache_flushes = 1 }, 2 },
	{ "v6: lost changes: a neighbour gone meanwhile is no longer a hit", 8, 8, {
		{ HOST_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0b, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0b, 0, 0, 0 },
		{ HOST_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 0 },	/* failed, message lost */
		{ LOST, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 1 },
	  }, { .rtcache_neigh_hits = 1, .rtcache_neigh_misses = 1, .rtcache_flushes = 1 }, 2 },
	{ "v4: a neighbour going FAILED is not a hit; REACHABLE again is", 8, 8, {
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ NEIGH, 4, "198.19.0.10", NULL, 11, 0x0b, 0, 0, 0 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 0 },
		{ MSG_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0b, NUD_FAILED, 0, 0 },
		{ NEIGH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 1 },
		{ NEIGH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 2 },
		{ HOST_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0d, 0, 0, 0 },
		{ MSG_NEIGH, 4, "198.19.0.10", NULL, 11, 0x0d, NUD_REACHABLE, 0, 0 },
		{ NEIGH, 4, "198.19.0.10", NULL, 11, 0x0d, 0, 0, 2 },
	  }, { .rtcache_neigh_hits = 2, .rtcache_neigh_misses = 2 }, 1 },
	{ "v6: STALE is a hit with its new MAC, INCOMPLETE is not", 8, 8, {
		{ HOST_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0b, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ MSG_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0c, NUD_STALE, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0c, 0, 0, 0 },
		{ HOST_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 0 },
		{ MSG_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0c, NUD_INCOMPLETE, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0, 0, 0, 1 },
	  }, { .rtcache_neigh_hits = 1, .rtcache_neigh_misses = 1 }, 1 },
	{ "v4: the routes full, a miss asks the host each time", 1, 8, {
		{ HOST_ROUTE, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 0 },
		{ HOST_ROUTE, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 1 },
		{ PATH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 2 },
		{ PATH, 4, "198.19.0.10", NULL, 11, 0, 0, 0, 3 },
		{ PATH, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 3 },
	  }, { .rtcache_route_hits = 1, .rtcache_route_misses = 3, .rtcache_full = 2 }, 1 },
	{ "v6: the neighbours full, a miss asks the host each time", 8, 1, {
		{ HOST_NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0b, 0, 0, 0 },
		{ HOST_NEIGH, 6, "2001:2:0:1::11", NULL, 11, 0x0c, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::10", NULL, 11, 0x0b, 0, 0, 0 },
		{ NEIGH, 6, "2001:2:0:1::11", NULL, 11, 0x0c, 0, 0, 1 },
		{ NEIGH, 6, "2001:2:0:1::11", NULL, 11, 0x0c, 0, 0, 2 },
	  }, { .rtcache_neigh_hits = 1, .rtcache_neigh_misses = 2, .rtcache_full = 3 }, 1 },
	{ "v4: an error of asking is not kept, no route is", 8, 8, {
		{ HOST_ROUTE, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ HOST_FAIL, 0, NULL, NULL, 0, 0, 0, -ETIMEDOUT, 0 },
		{ PATH, 4, "198.18.0.10", NULL, 10, 0, 0, -ETIMEDOUT, 1 },
		{ PATH, 4, "198.18.0.10", NULL, 10, 0, 0, 0, 2 },
		{ PATH, 4, "203.0.113.1", NULL, 0, 0, 0, -ENETUNREACH, 3 },
		{ GET, 4, "203.0.113.1", NULL, 0, 0, 0, -ENETUNREACH, 3 },
	  }, { .rtcache_route_hits = 1, .rtcache_route_misses = 3 }, 1 },
	{ "v4 and v6 of the same first bytes, and one address on two ports: four keys", 8, 8, {
		{ HOST_ROUTE, 4, "32.1.0.2", NULL, 10, 0, 0, 0, 0 },
		{ HOST_ROUTE, 6, "2001:2::", NULL, 11, 0, 0, 0, 0 },
		{ HOST_NEIGH, 4, "32.1.0.2", NULL, 10, 0x01, 0, 0, 0 },
		{ HOST_NEIGH, 4, "32.1.0.2", NULL, 11, 0x02, 0, 0, 0 },
		{ OPEN, 0, NULL, NULL, 0, 0, 0, 0, 0 },
		{ PATH, 4, "32.1.0.2", NULL, 10, 0, 0, 0, 1 },
		{ PATH, 6, "2001:2::", NULL, 11, 0, 0, 0, 2 },
		{ NEIGH, 4, "32.1.0.2", NULL, 10, 0x01, 0, 0, 2 },
		{ NEIGH, 4, "32.1.0.2", NULL, 11, 0x02, 0, 0, 2 },
	  }, { .rtcache_route_misses = 2, .rtcache_neigh_hits = 2 }, 1 },
};

static void
addr_of(int family, const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	if (inet_pton(family == 4 ? AF_INET : AF_INET6, s, out) != 1)
		fail_msg("bad address in a row: %s", s);
}

static void
mac_of(uint8_t b, uint8_t mac[6])
{
	memcpy(mac, (uint8_t[6]){ 2, 0, 0, 0, 0, b }, 6);
}

static void
host_route(const struct step *s)
{
	uint8_t dst[16];
	unsigned int i;

	addr_of(s->family, s->addr, dst);
	for (i = 0; i < host.nrt; i++)
		if (host.rt[i].family == s->family && memcmp(host.rt[i].dst, dst, 16) == 0)
			break;
	assert_true(i < HOST_MAX);
	host.nrt += i == host.nrt;
	host.rt[i].family = s->family;
	memcpy(host.rt[i].dst, dst, 16);
	host.rt[i].via = s->via != NULL;
	if (s->via)
		addr_of(s->family, s->via, host.rt[i].gw);
	host.rt[i].ifindex = s->ifindex;
}

static void
host_neigh(const struct step *s)
{
	uint8_t addr[16];
	unsigned int i;

	addr_of(s->family, s->addr, addr);
	for (i = 0; i < host.nnb; i++)
		if (host.nb[i].family == s->family && host.nb[i].ifindex == s->ifindex &&
		    memcmp(host.nb[i].addr, addr, 16) == 0)
			break;
	assert_true(i < HOST_MAX);
	host.nnb += i == host.nnb;
	host.nb[i].family = s->family;
	memcpy(host.nb[i].addr, addr, 16);
	host.nb[i].ifindex = s->ifindex;
	host.nb[i].resolved = s->mac != 0;
	mac_of(s->mac, host.nb[i].mac);
}

/* A message as the kernel sends it, read by fd_route_parse into the cache (flowcutd's way). */
static void
on_change(void *arg, const struct fd_rt_change *c)
{
	fd_rtcache_change(arg, c);
}

static void
message(struct fd_rtcache *c, const struct step *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint8_t addr[16], mac[6];
	size_t len = 0;

	switch (s->op) {
	case MSG_NEIGH:
		addr_of(s->family, s->addr, addr);
		mac_of(s->mac, mac);
		len = fc_rtnl_neigh(buf, RTM_NEWNEIGH, s->family == 4 ? AF_INET : AF_INET6,
				    (int)s->ifindex, addr, mac, s->nud);
		break;
	case MSG_ROUTE:
		len = fc_rtnl_route(buf, RTM_NEWROUTE, 11, 0);
		break;
	default:
		len = fc_rtnl_link(buf, (int)s->ifindex, 1500);
		break;
	}
	assert_int_equal(fd_route_parse(buf, len, on_change, c), 1);
}

/* A lookup's answer against the step's. */
static void
lookup(const struct fd_route_io *io, const struct step *s, unsigned int n)
{
	uint8_t dst[16], nbr[16], mac[6];
	struct fd_hop hop = { 0 };
	bool resolved = false;
	int rc;

	addr_of(s->family, s->addr, dst);
	addr_of(s->family, s->via ? s->via : s->addr, nbr);
	mac_of(s->mac, mac);
	if (s->op == NEIGH) {
		rc = io->neigh_get(io->ctx, s->ifindex, s->family, dst, hop.mac, &resolved);
		hop.resolved = resolved;
	} else {
		rc = (s->op == GET ? io->get : io->path)(io->ctx, s->family, dst, &hop);
	}
	if (rc != s->rc)
		fail_msg("step %u: rc %d, not %d", n, rc, s->rc);
	if (host.asks != s->asks)
		fail_msg("step %u: the host asked %u times, not %u", n, host.asks, s->asks);
	if (rc != 0)
		return;
	if (s->op != NEIGH && (hop.ifindex != s->ifindex ||
			       memcmp(hop.nbr, nbr, alen(s->family)) != 0))
		fail_msg("step %u: out of ifindex %u to %s, not %u to %s", n, hop.ifindex,
			 inet_ntop(s->family == 4 ? AF_INET : AF_INET6, hop.nbr,
				   (char[64]){ 0 }, 64), s->ifindex, s->via ? s->via : s->addr);
	if (s->op == PATH)
		return;
	if (hop.resolved != (s->mac != 0) || (s->mac != 0 && memcmp(hop.mac, mac, 6) != 0))
		fail_msg("step %u: resolved %d, MAC ..:%02x; not %d, ..:%02x", n, hop.resolved,
			 hop.mac[5], s->mac != 0, s->mac);
}

static void
test_row(void **state)
{
	const struct row *r = *state;
	struct fd_rtcache *c = NULL;
	struct fd_route_io io = { 0 };
	struct fd_rtcache_stats st;

	memset(&host, 0, sizeof(host));
	for (unsigned int n = 0; r->steps[n].op != END; n++) {
		const struct step *s = &r->steps[n];

		switch (s->op) {
		case HOST_ROUTE: host_route(s); break;
		case HOST_NEIGH: host_neigh(s); break;
		case HOST_FAIL: host.fail_next = s->rc; break;
		case OPEN:
			c = fd_rtcache_open(&host_io, r->max_routes, r->max_neighs);
			assert_non_null(c);
			io = fd_rtcache_io(c);
			break;
		case PATH: case GET: case NEIGH: lookup(&io, s, n); break;
		case MSG_NEIGH: case MSG_ROUTE: case MSG_LINK: message(c, s); break;
		case LOST: assert_int_equal(fd_rtcache_lost(c), s->rc); break;
		case END: break;
		}
	}
	fd_rtcache_stats(c, &st);
	assert_int_equal(st.rtcache_route_hits, r->st.rtcache_route_hits);
	assert_int_equal(st.rtcache_route_misses, r->st.rtcache_route_misses);
	assert_int_equal(st.rtcache_neigh_hits, r->st.rtcache_neigh_hits);
	assert_int_equal(st.rtcache_neigh_misses, r->st.rtcache_neigh_misses);
	assert_int_equal(st.rtcache_full, r->st.rtcache_full);
	assert_int_equal(st.rtcache_flushes, r->st.rtcache_flushes);
	assert_int_equal(host.dumps, r->dumps);
	fd_rtcache_close(c);
}

/* What the cache refuses to open on: no dump, a maximum of 0; a dump that fails. */
static int
dump_fails(void *ctx, fd_rt_change_fn *fn, void *arg)
{
	(void)ctx, (void)fn, (void)arg;
	return -ETIMEDOUT;
}

static void
test_refused(void **state)
{
	static const struct {
		const char *name;
		bool no_dump, dump_fails;
		unsigned int max_routes, max_neighs;
		int err;
	} cases[] = {
		{ "no neigh_dump", true, false, 8, 8, EINVAL },
		{ "no room for a route", false, false, 0, 8, EINVAL },
		{ "no room for a neighbour", false, false, 8, 0, EINVAL },
		{ "the dump fails", false, true, 8, 8, ETIMEDOUT },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fd_route_io io = host_io;

		if (cases[i].no_dump)
			io.neigh_dump = NULL;
		if (cases[i].dump_fails)
			io.neigh_dump = dump_fails;
		errno = 0;
		if (fd_rtcache_open(&io, cases[i].max_routes, cases[i].max_neighs) != NULL ||
		    errno != cases[i].err)
			fail_msg("%s: opened, or errno %d, not %d", cases[i].name, errno,
				 cases[i].err);
	}
	fd_rtcache_close(NULL);
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 1];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[n++] = (struct CMUnitTest){ .name = rows[i].name, .test_func = test_row,
						  .initial_state = (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_refused);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
