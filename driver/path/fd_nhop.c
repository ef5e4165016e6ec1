/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nhop: see fd_nhop.h.  The table is an array, one entry per (port,
 * neighbour, MTU) the host's routes use: a few on an appliance with a
 * gateway per port, thousands with a LAN of directly connected hosts.
 * Every offload finds its next hop through an index beside it: open
 * addressing over twice FD_NHOP_MAX slots, written here because the index
 * must not allocate on an offload's path (uthash grows its buckets with
 * malloc) and never deletes but all at once (fd_nhop_reset).  A neighbour's
 * change walks the array, as it may touch one entry an MTU.
 */
#include "fd_nhop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flowcut/fc_cmd.h>
#include <flowcut/fc_defs.h>


struct nhop {
	uint16_t port;
	uint16_t mtu;
	uint8_t family;
	bool resolved;
	uint8_t nbr[16];
	uint8_t mac[6];
};

/* the index's slots: a power of two, at most half full */
#define NHOP_SLOTS (2 * FD_NHOP_MAX)
_Static_assert(FD_NHOP_MAX < UINT16_MAX, "an index + 1 is kept in 16 bits");
_Static_assert((NHOP_SLOTS & (NHOP_SLOTS - 1)) == 0, "NHOP_SLOTS is not a power of two");

struct fd_nhop {
	struct fd_cmds cmds;
	unsigned int nports;
	uint8_t port_mac[FC_MAX_PORTS][6];
	struct nhop n[FD_NHOP_MAX];
	unsigned int count;
	uint16_t slot[NHOP_SLOTS];	/* an entry's index + 1, 0 free */
	struct fd_nhop_stats st;
};

struct fd_nhop *
fd_nhop_open(const struct fd_cmds *cmds, unsigned int nports, const uint8_t (*port_mac)[6])
{
	struct fd_nhop *t;

	if (nports > FC_MAX_PORTS) {
		errno = EINVAL;
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->cmds = *cmds;
	t->nports = nports;
	memcpy(t->port_mac, port_mac, nports * sizeof(port_mac[0]));
	return t;
}

void
fd_nhop_close(struct fd_nhop *t)
{
	free(t);
}

static bool
same_nbr(const struct nhop *n, unsigned int port, int family, const uint8_t *addr)
{
	return n->port == port && n->family == family &&
	       memcmp(n->nbr, addr, family == 4 ? 4 : 16) == 0;
}

/*
 * NHOP_PROGRAM for next hop `n` at index i.  `fresh`: the index is given to
 * this neighbour now (it may have named another before a reset), so its
 * revision climbs and nothing made against an earlier one forwards to it.
 */
static int
program(struct fd_nhop *t, unsigned int i, const struct nhop *n, bool fresh)
{
	struct fc_cmd_nhop c = {
		.id = i,
		.port = n->port,
		.mtu = n->mtu,
		.flags = (n->resolved ? FC_NHOP_RESOLVED : 0) | (fresh ? FC_NHOP_REUSED : 0),
	};

	if (n->resolved)
		memcpy(c.dmac, n->mac, 6);
	memcpy(c.smac, t->port_mac[n->port], 6);
	return fd_cmds_call(&t->cmds, FC_CMD_NHOP_PROGRAM, &c, sizeof(c), NULL, 0);
}

/* the first slot of (port, neighbour, MTU): FNV-1a over them */
static unsigned int
first_slot(unsigned int port, const struct fd_hop *hop)
{
	uint32_t h = 2166136261u;
	uint8_t k[5] = { (uint8_t)port, (uint8_t)(port >> 8), (uint8_t)hop->mtu,
			 (uint8_t)(hop->mtu >> 8), (uint8_t)hop->family };

	for (size_t i = 0; i < sizeof(k); i++)
		h = (h ^ k[i]) * 16777619u;
	for (int i = 0; i < (hop->family == 4 ? 4 : 16); i++)
		h = (h ^ hop->nbr[i]) * 16777619u;
	return h & (NHOP_SLOTS - 1);
}

/* the slot that holds (port, neighbour, MTU), else the free one where it would go */
static unsigned int
slot_of(const struct fd_nhop *t, unsigned int port, const struct fd_hop *hop)
{
	unsigned int s = first_slot(port, hop);

	/* never full: at most FD_NHOP_MAX of NHOP_SLOTS are taken */
	while (t->slot[s] != 0) {
		const struct nhop *n = &t->n[t->slot[s] - 1];

		if (same_nbr(n, port, hop->family, hop->nbr) && n->mtu == hop->mtu)
			break;
		s = (s + 1) & (NHOP_SLOTS - 1);
	}
	return s;
}

int
fd_nhop_find(const struct fd_nhop *t, unsigned int port, const struct fd_hop *hop, uint32_t *id)
{
	unsigned int s = slot_of(t, port, hop);

	if (t->slot[s] == 0)
		return -ENOENT;
	*id = t->slot[s] - 1u;
	return 0;
}

int
fd_nhop_get(struct fd_nhop *t, unsigned int port, const struct fd_hop *hop, uint32_t *id)
{
	struct nhop *n;
	unsigned int s;
	int rc;

	if (port >= t->nports)
		return -EINVAL;
	s = slot_of(t, port, hop);
	if (t->slot[s] != 0) {
		*id = t->slot[s] - 1u;
		return 0;
	}
	if (t->count == FD_NHOP_MAX)
		return -ENOSPC;
	n = &t->n[t->count];
	memset(n, 0, sizeof(*n));
	n->port = (uint16_t)port;
	n->mtu = hop->mtu;
	n->family = hop->family;
	n->resolved = hop->resolved;
	memcpy(n->nbr, hop->nbr, sizeof(n->nbr));
	memcpy(n->mac, hop->mac, 6);
	rc = program(t, t->count, n, true);
	if (rc != 0)
		return rc;
	*id = t->count++;
	t->slot[s] = (uint16_t)t->count;
	t->st.programmed++;
	return 0;
}

int
fd_nhop_neigh(struct fd_nhop *t, unsigned int port, int family, const uint8_t *addr,
	      const uint8_t mac[6], bool resolved)
{
	int done = 0;

	for (unsigned int i = 0; i < t->count; i++) {
		struct nhop n = t->n[i];
		int rc;

		if (!same_nbr(&n, port, family, addr) || (n.resolved == resolved &&
		    (!resolved || memcmp(n.mac, mac, 6) == 0)))
			continue;
		n.resolved = resolved;
		if (resolved)
			memcpy(n.mac, mac, 6);
		rc = program(t, i, &n, false);
		if (rc != 0)
			return rc;	/* kept as it was: what the fast path has */
		t->n[i] = n;
		t->st.followed++;
		done++;
	}
	return done;
}

int
fd_nhop_recheck(struct fd_nhop *t, const struct fd_route_io *r, const unsigned int *ifindex)
{
	int done = 0;

	for (unsigned int i = 0; i < t->count; i++) {
		struct nhop n = t->n[i];
		uint8_t mac[6] = { 0 };
		bool resolved;
		int rc;

		rc = r->neigh_get(r->ctx, ifindex[n.port], n.family, n.nbr, mac, &resolved);
		if (rc == 0)
			rc = fd_nhop_neigh(t, n.port, n.family, n.nbr, mac, resolved);
		if (rc < 0)
			return rc;
		done += rc;
	}
	return done;
}

void
fd_nhop_reset(struct fd_nhop *t)
{
	t->count = 0;
	memset(t->slot, 0, sizeof(t->slot));
}

void
fd_nhop_stats(const struct fd_nhop *t, struct fd_nhop_stats *out)
{
	*out = t->st;
}
