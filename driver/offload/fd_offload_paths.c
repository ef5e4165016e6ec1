/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_paths: the binding follows the host's routes and neighbours
 * (fd_route's changes): a neighbour resolved lets waiting states go, a
 * next hop's new MAC is programmed again, a connection whose path changed
 * is taken out to pass the rules again.  See fd_offload_priv.h.
 */
#include "fd_offload_priv.h"

/* ---- following the host's routes and neighbours ---- */

void
fd_offload_rt_change(struct fd_offload *o, const struct fd_rt_change *c)
{
	int p = off_port_of(o, c->ifindex), rc;

	switch (c->what) {
	case FD_RT_NEIGH:
		if (p < 0)
			return;
		rc = fd_nhop_neigh(o->nhops, (unsigned int)p, c->family, c->addr, c->mac,
				   c->resolved);
		if (rc > 0)
			o->st.nhop_followed += (unsigned int)rc;
		else if (off_no_answer(rc))
			off_lost_track(o, "NHOP_PROGRAM for a neighbour's change", rc);
		if (c->resolved && o->nwaiting > 0)
			o->neigh_resolved = true;	/* a waiting state may go now */
		break;
	case FD_RT_ROUTE:
		o->paths_changed = true;
		break;
	case FD_RT_LINK:
		if (p >= 0 && c->mtu >= 68 && c->mtu != o->port_mtu[p]) {
			o->port_mtu[p] = c->mtu > UINT16_MAX ? UINT16_MAX : (uint16_t)c->mtu;
			o->paths_changed = true;
		}
		break;
	}
}

void
fd_offload_rt_lost(struct fd_offload *o)
{
	int rc = fd_nhop_recheck(o->nhops, &o->route, o->cfg.ifindex);

	(void)off_port_mtus_read(o);	/* one it cannot read keeps its value, and says so */
	if (rc > 0)
		o->st.nhop_followed += (unsigned int)rc;
	else if (off_no_answer(rc))
		off_lost_track(o, "NHOP_PROGRAM after lost neighbour changes", rc);
	o->paths_changed = true;
}

/* Is an offloaded connection still routed over the next hops it was made with? */
static bool
still_routed(struct fd_offload *o, const struct off_entry *e)
{
	for (unsigned int d = 0; d < 2; d++) {
		uint8_t dst[16];
		struct fd_hop hop;
		uint32_t id;
		int p;

		off_dst(o, e, (int)d, dst);
		if (o->route.path(o->route.ctx, e->orig.family, dst, &hop) != 0)
			return false;
		p = off_front_port(o, &hop);
		if (p < 0 || fd_nhop_find(o->nhops, (unsigned int)p, &hop, &id) != 0 ||
		    id != e->nhop[d])
			return false;
	}
	return true;
}

/*
 * Takes a connection whose path changed out of the fast path.  It comes
 * back once the host's rules have passed it on its new path (the bit is
 * cleared: rules may name interfaces), over the new next hops; it waits
 * meanwhile, so a path that joins two front ports again brings it back.
 */
static void
move(struct fd_offload *o, struct off_entry *e)
{
	struct nf_conntrack *t = off_tuple(e), *whole = t != NULL ? o->ct.get(o->ct.ctx, t) : NULL;
	uint64_t idle_s;
	int rc = off_reclaim_idle(o, e->fp_id, &idle_s);

	if (t != NULL)
		nfct_destroy(t);

	if (rc != 0 && rc != -ENOENT)
		off_lost_track(o, "CONN_RECLAIM_FP of a connection whose path changed", rc);
	(void)off_leave(o, e, idle_s, true);	/* its timeout from its last frame */
	off_forget(o, e);
	o->st.rerouted++;
	if (whole != NULL) {
		off_wait_path(o, whole);
		nfct_destroy(whole);
	}
}

/*
 * The paths job's share of a turn: at most FD_OFFLOAD_PATHS_PER_TURN
 * entries looked at, from where the last turn stopped (paths_at, the
 * table's slot order, round to the start), until a whole table's worth
 * (paths_left, set to nentries by each change) has been seen since the
 * last change.  A change while it runs sets a whole lap again from where
 * it is, rather than starting over: under routes that keep changing, every
 * entry is still looked at within a lap.  The route cache answers every
 * lookup after its first (fd_rtcache: flushed by the change before this
 * runs), so a turn's share costs no round trip but the moves'.
 */
static void
paths_step(struct fd_offload *o)
{
	unsigned int k = 0;

	if (o->paths_left > o->nentries)
		o->paths_left = o->nentries;	/* forgotten since: less to see */
	while (o->paths_left > 0 && k++ < FD_OFFLOAD_PATHS_PER_TURN && !o->need_resync) {
		struct off_entry *e = off_next(o, &o->paths_at);

		if (e == NULL) {	/* the end: round to the start */
			o->paths_at = 0;
			if ((e = off_next(o, &o->paths_at)) == NULL)
				break;
		}
		o->paths_left--;
		if (!e->cut && !still_routed(o, e))	/* a cut one drops anywhere */
			move(o, e);
	}
	if (o->need_resync || o->nentries == 0)
		o->paths_left = 0;	/* the resync makes every path anew */
}

void
fd_offload_paths(struct fd_offload *o)
{
	struct waiting *waiting;
	unsigned int nwaiting;

	if (o->paths_changed && !o->need_resync) {
		o->paths_changed = false;
		o->paths_left = o->nentries;	/* a lap from here */
		o->neigh_resolved = true;	/* and the waiting tried after it */
	}
	paths_step(o);
	if (!o->neigh_resolved || o->need_resync || o->paths_left > 0)
		return;	/* the waiting go once every path has been seen */
	o->neigh_resolved = false;
	/* what waited for a path (it waits again while it lives and is not offloaded) */
	nwaiting = o->nwaiting;
	waiting = malloc(nwaiting * sizeof(*waiting) + 1);
	if (waiting == NULL)
		return;
	memcpy(waiting, o->waiting, nwaiting * sizeof(*waiting));
	o->nwaiting = 0;
	for (unsigned int i = 0; i < nwaiting; i++) {
		struct nf_conntrack *whole = o->ct.get(o->ct.ctx, waiting[i].tuple);

		nfct_destroy(waiting[i].tuple);
		if (whole == NULL)
			continue;		/* gone */
		off_offload(o, whole);
		if (off_find_ct(o, waiting[i].ct_id, whole) == NULL)
			off_wait_path(o, whole);	/* no path yet, or not through the rules yet */
		nfct_destroy(whole);
	}
	free(waiting);
}
