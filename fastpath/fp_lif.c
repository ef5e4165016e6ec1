/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_lif: the port (LIF) table and the next-hop table, written by the
 * control thread in place so that a worker reading them never sees a
 * half-written entry: a LIF field by field (its flags last), a next hop
 * whole under its seqcount (fp_nhop_read in fp_priv.h).  See fp.h.
 */
#include <errno.h>
#include <string.h>

#include "fp_priv.h"

int
fp_lif_set(struct fp *fp, uint16_t id, const struct fp_lif *lif)
{
	struct fp_lif_rt *l;
	uint16_t other;
	uint32_t flags;
	bool was;

	if (id >= FP_MAX_LIFS || lif->port >= FP_MAX_PORTS ||
	    lif->vlan > FP_VLAN_MAX || lif->mtu < 68)
		return -EINVAL;
	other = fp->lif_of[lif->port][lif->vlan];
	if (other != FP_LIF_NONE && other != id)
		return -EEXIST;
	l = &fp->lifs[id];
	was = l->flags & FP_LIF_PRESENT;
	/* in place: a worker sees the old or the new flags and MAC, never no LIF */
	flags = FP_LIF_PRESENT | (lif->admin_disabled ? FP_LIF_ADMIN_DISABLED : 0) |
		(lif->offload_disabled ? FP_LIF_OFFLOAD_DISABLED : 0);
	__atomic_store_n(&l->mac, fp_mac48(lif->mac), __ATOMIC_RELAXED);
	l->mtu = lif->mtu;
	__atomic_store_n(&l->flags, flags, __ATOMIC_RELEASE);
	if (other == id)
		return 0;	/* same port and VLAN */
	/* hooked on the new port/VLAN before it leaves the old */
	__atomic_store_n(&fp->port_lifs[lif->port], fp->port_lifs[lif->port] + 1,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&fp->lif_of[lif->port][lif->vlan], id, __ATOMIC_RELEASE);
	if (was) {
		__atomic_store_n(&fp->lif_of[l->port][l->vlan], FP_LIF_NONE, __ATOMIC_RELEASE);
		__atomic_store_n(&fp->port_lifs[l->port], fp->port_lifs[l->port] - 1,
				 __ATOMIC_RELAXED);
	}
	l->port = lif->port;
	l->vlan = lif->vlan;
	return 0;
}

int
fp_lif_get(const struct fp *fp, uint16_t id, struct fp_lif *out)
{
	const struct fp_lif_rt *l;

	if (id >= FP_MAX_LIFS || !(fp->lifs[id].flags & FP_LIF_PRESENT))
		return -ENOENT;
	l = &fp->lifs[id];
	out->port = l->port;
	out->vlan = l->vlan;
	out->mtu = l->mtu;
	{
		uint64_t mac = __atomic_load_n(&l->mac, __ATOMIC_RELAXED);

		memcpy(out->mac, &mac, 6);
	}
	out->admin_disabled = !!(l->flags & FP_LIF_ADMIN_DISABLED);
	out->offload_disabled = !!(l->flags & FP_LIF_OFFLOAD_DISABLED);
	return 0;
}

int
fp_nhop_set(struct fp *fp, uint32_t id, const struct fp_nhop *nh, bool reused)
{
	struct fp_nhop_rt *n;

	if (id >= fp->max_nhops || nh->port >= FP_MAX_PORTS ||
	    nh->vlan > FP_VLAN_MAX || nh->mtu < 68)
		return -EINVAL;
	n = &fp->nhops[id];
	rte_seqcount_write_begin(&n->sc);
	/*
	 * Another neighbour: the host says so, or another port or VLAN.  The
	 * same neighbour keeps the revision whatever else changes: connections
	 * made while it was unresolved forward once it is, and a new MAC for
	 * it is followed.
	 */
	if (reused || n->nh.port != nh->port || n->nh.vlan != nh->vlan)
		n->rev++;
	n->nh = *nh;
	rte_seqcount_write_end(&n->sc);
	return 0;
}

int
fp_nhop_get(const struct fp *fp, uint32_t id, struct fp_nhop *out, uint32_t *rev)
{
	if (id >= fp->max_nhops)
		return -EINVAL;
	*out = fp->nhops[id].nh;
	if (rev != NULL)
		*rev = fp->nhops[id].rev;
	return 0;
}
