/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_rtcache: see fd_rtcache.h.  Two uthash tables; an allocation that
 * fails keeps nothing and the answer is the host's, as when full.
 */
#include "fd_rtcache.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* an allocation that fails leaves a table as it was and marks the entry not kept */
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(e) ((e)->oom = true)
#include <uthash.h>

/*
 * A route's key.  No padding (the whole struct is hashed and compared);
 * made only by route_key().
 */
struct rt_key {
	uint8_t family;		/* 4 or 6 */
	uint8_t zero[3];
	uint8_t dst[16];	/* 4 or 16 bytes by family, the rest zero */
};
_Static_assert(sizeof(struct rt_key) == 20, "struct rt_key has padding");

/* A neighbour's key, as struct rt_key; made only by neigh_key(). */
struct nb_key {
	uint32_t ifindex;
	uint8_t family;
	uint8_t zero[3];
	uint8_t addr[16];
};
_Static_assert(sizeof(struct nb_key) == 24, "struct nb_key has padding");

struct rt_entry {
	struct rt_key k;
	int rc;			/* 0, or -ENETUNREACH: the route's answer */
	struct fd_hop hop;	/* when rc is 0: as path() gave it (no MAC) */
	bool oom;
	UT_hash_handle hh;
};

struct nb_entry {
	struct nb_key k;
	uint8_t mac[6];		/* usable: only resolved neighbours are kept */
	bool oom;
	UT_hash_handle hh;
};

struct fd_rtcache {
	struct fd_route_io host;
	unsigned int max_routes, max_neighs;
	struct rt_entry *routes;
	struct nb_entry *neighs;
	struct fd_rtcache_stats st;
};

static struct rt_key
route_key(int family, const uint8_t *dst)
{
	struct rt_key k = { .family = (uint8_t)family };

	memcpy(k.dst, dst, family == 4 ? 4 : 16);
	return k;
}

static struct nb_key
neigh_key(unsigned int ifindex, int family, const uint8_t *addr)
{
	struct nb_key k = { .ifindex = ifindex, .family = (uint8_t)family };

	memcpy(k.addr, addr, family == 4 ? 4 : 16);
	return k;
}

static void
routes_flush(struct fd_rtcache *c)
{
	struct rt_entry *e, *tmp;

	HASH_ITER(hh, c->routes, e, tmp) {
		HASH_DEL(c->routes, e);
		free(e);
	}
	c->st.rtcache_flushes++;
}

static void
neighs_flush(struct fd_rtcache *c)
{
	struct nb_entry *e, *tmp;

	HASH_ITER(hh, c->neighs, e, tmp) {
		HASH_DEL(c->neighs, e);
		free(e);
	}
}

/* Keeps (resolved) or drops (not) one neighbour. */
static void
neigh_set(struct fd_rtcache *c, const struct nb_key *k, const uint8_t mac[6], bool resolved)
{
	struct nb_entry *e;

	HASH_FIND(hh, c->neighs, k, sizeof(*k), e);
	if (!resolved) {
		if (e != NULL) {
			HASH_DEL(c->neighs, e);
			free(e);
		}
		return;
	}
	if (e == NULL) {
		if (HASH_COUNT(c->neighs) >= c->max_neighs || (e = calloc(1, sizeof(*e))) == NULL) {
			c->st.rtcache_full++;
			return;		/* a miss, asked of the host each time */
		}
		e->k = *k;
		HASH_ADD(hh, c->neighs, k, sizeof(e->k), e);
		if (e->oom) {
			free(e);
			c->st.rtcache_full++;
			return;
		}
	}
	memcpy(e->mac, mac, 6);
}

static void
on_dumped(void *arg, const struct fd_rt_change *ch)
{
	fd_rtcache_change(arg, ch);
}

/* The neighbours dumped into the (empty) neighbour half.  0, or the dump's error. */
static int
neighs_dump(struct fd_rtcache *c)
{
	int rc = c->host.neigh_dump(c->host.ctx, on_dumped, c);

	return rc < 0 ? rc : 0;
}

static int
cache_path(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	struct fd_rtcache *c = ctx;
	struct rt_key k = route_key(family, dst);
	struct rt_entry *e;
	int rc;

	HASH_FIND(hh, c->routes, &k, sizeof(k), e);
	if (e != NULL) {
		c->st.rtcache_route_hits++;
		*out = e->hop;
		return e->rc;
	}
	c->st.rtcache_route_misses++;
	rc = c->host.path(c->host.ctx, family, dst, out);
	if (rc != 0 && rc != -ENETUNREACH)
		return rc;	/* not the route's answer: not kept */
	if (HASH_COUNT(c->routes) >= c->max_routes || (e = calloc(1, sizeof(*e))) == NULL) {
		c->st.rtcache_full++;
		return rc;
	}
	e->k = k;
	e->rc = rc;
	e->hop = *out;
	HASH_ADD(hh, c->routes, k, sizeof(e->k), e);
	if (e->oom) {
		free(e);
		c->st.rtcache_full++;
	}
	return rc;
}

static int
cache_neigh_get(void *ctx, unsigned int ifindex, int family, const uint8_t *addr, uint8_t mac[6],
		bool *resolved)
{
	struct fd_rtcache *c = ctx;
	struct nb_key k = neigh_key(ifindex, family, addr);
	struct nb_entry *e;
	int rc;

	HASH_FIND(hh, c->neighs, &k, sizeof(k), e);
	if (e != NULL) {
		c->st.rtcache_neigh_hits++;
		memcpy(mac, e->mac, 6);
		*resolved = true;
		return 0;
	}
	c->st.rtcache_neigh_misses++;
	rc = c->host.neigh_get(c->host.ctx, ifindex, family, addr, mac, resolved);
	if (rc == 0 && *resolved)
		neigh_set(c, &k, mac, true);
	return rc;
}

/* As fd_route_get: the path, then its neighbour. */
static int
cache_get(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	int rc = cache_path(ctx, family, dst, out);

	if (rc != 0)
		return rc;
	return cache_neigh_get(ctx, out->ifindex, family, out->nbr, out->mac, &out->resolved);
}

static int
host_link_mtu(void *ctx, unsigned int ifindex, uint32_t *mtu)
{
	struct fd_rtcache *c = ctx;

	return c->host.link_mtu(c->host.ctx, ifindex, mtu);
}

static int
host_neigh_dump(void *ctx, fd_rt_change_fn *fn, void *arg)
{
	struct fd_rtcache *c = ctx;

	return c->host.neigh_dump(c->host.ctx, fn, arg);
}

static int
host_neigh_resolve(void *ctx, unsigned int ifindex, int family, const uint8_t *addr)
{
	struct fd_rtcache *c = ctx;

	return c->host.neigh_resolve(c->host.ctx, ifindex, family, addr);
}

struct fd_route_io
fd_rtcache_io(struct fd_rtcache *c)
{
	return (struct fd_route_io){ .get = cache_get, .path = cache_path,
				     .link_mtu = host_link_mtu, .neigh_get = cache_neigh_get,
				     .neigh_dump = host_neigh_dump,
				     .neigh_resolve = c->host.neigh_resolve != NULL
							      ? host_neigh_resolve : NULL,
				     .ctx = c };
}

struct fd_rtcache *
fd_rtcache_open(const struct fd_route_io *host, unsigned int max_routes, unsigned int max_neighs)
{
	struct fd_rtcache *c;
	int rc;

	if (host->neigh_dump == NULL || max_routes == 0 || max_neighs == 0) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->host = *host;
	c->max_routes = max_routes;
	c->max_neighs = max_neighs;
	rc = neighs_dump(c);
	if (rc != 0) {
		fd_rtcache_close(c);
		errno = -rc;
		return NULL;
	}
	return c;
}

void
fd_rtcache_close(struct fd_rtcache *c)
{
	if (c == NULL)
		return;
	routes_flush(c);
	neighs_flush(c);
	free(c);
}

void
fd_rtcache_change(struct fd_rtcache *c, const struct fd_rt_change *ch)
{
	switch (ch->what) {
	case FD_RT_NEIGH: {
		struct nb_key k = neigh_key(ch->ifindex, ch->family, ch->addr);

		neigh_set(c, &k, ch->mac, ch->resolved);
		break;
	}
	case FD_RT_ROUTE:
	case FD_RT_LINK:
		routes_flush(c);
		break;
	}
}

int
fd_rtcache_lost(struct fd_rtcache *c)
{
	int rc;

	routes_flush(c);
	neighs_flush(c);
	rc = neighs_dump(c);
	if (rc != 0)
		fprintf(stderr, "flowcutd: route cache: dumping the neighbours again after lost "
			"changes: %s; those not read are asked of the kernel\n", strerror(-rc));
	return rc;
}

void
fd_rtcache_stats(const struct fd_rtcache *c, struct fd_rtcache_stats *out)
{
	*out = c->st;
}
