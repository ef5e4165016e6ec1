/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_conn: the connection table, written by the control thread - a
 * connection made with both microflows or not at all, its verdict,
 * actions, timeouts and activity changed, revived, removed in two phases
 * (unhook now, free after the workers' grace period), and read back.
 * See fp.h for the contract, fp_priv.h for the layout.
 *
 * The keys live in the rte_hash (data word: the firewall revision, slot
 * and direction, fp_slot_data); the connection remembers their positions
 * to take them out and to read them back.  The state is the header's and
 * its copies' in the microflows, moved as fp_priv.h says.  A NATed
 * direction's translation is worked out here, once, into fp->nat[slot]:
 * the packet path reads it from there.
 */
#include <errno.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>

#include "fp_priv.h"

static bool
key_valid(const struct fc_key *k)
{
	static const uint8_t zero[12];

	if (k->family != 4 && k->family != 6)
		return false;
	if (k->family == 4 &&
	    (memcmp(k->src + 4, zero, 12) != 0 || memcmp(k->dst + 4, zero, 12) != 0))
		return false;
	if (memcmp(k->zero, zero, sizeof(k->zero)) != 0)
		return false;
	if (k->port >= FP_MAX_PORTS || k->vlan > FP_VLAN_MAX)
		return false;
	if (fp_nat_is_icmp(k->proto))
		return k->dport <= 0xff &&
		       (k->proto == IPPROTO_ICMP) == (k->family == 4);	/* ICMPv6 only in v6 */
	if (k->proto != IPPROTO_TCP && k->proto != IPPROTO_UDP)
		return k->sport == 0 && k->dport == 0;
	return true;
}

/*
 * Checks a spec and works out each direction's translation: x[d] is what
 * direction d's frames leave with, nat[d] whether that differs from what
 * they arrive with.
 */
static int
conn_spec_check(const struct fp *fp, const struct fp_conn_spec *s,
		struct fp_nat x[2], bool nat[2])
{
	const struct fc_key *k0 = &s->mf[0].key, *k1 = &s->mf[1].key;

	if (s->verdict >= FC_VERDICT_MAX)
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow_spec *m = &s->mf[d];

		if (!key_valid(&m->key) || m->action >= FC_ACTION_MAX ||
		    m->tcp_wscale > 14 || m->nhop >= fp->max_nhops)
			return -EINVAL;
	}
	if (k0->family != k1->family || k0->proto != k1->proto ||
	    memcmp(k0, k1, sizeof(*k0)) == 0)
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++) {
		fp_nat_of(&s->mf[d ^ 1].key, &x[d]);
		nat[d] = fp_nat_needed(&s->mf[d].key, &x[d]);
	}
	if ((nat[0] || nat[1]) && k0->proto != IPPROTO_TCP && k0->proto != IPPROTO_UDP &&
	    !fp_nat_is_icmp(k0->proto))
		return -EOPNOTSUPP;
	return 0;
}

/* Takes a free slot, reclaiming finished grace periods if none is left. */
static int
slot_take(struct fp *fp, uint32_t *slot)
{
	if (rte_ring_sc_dequeue_elem(fp->free_slots, slot, sizeof(*slot)) == 0)
		return 0;
	/* fails only for bad arguments; frees what is ready, maybe nothing */
	rte_rcu_qsbr_dq_reclaim(fp->dq, UINT32_MAX, NULL, NULL, NULL);
	if (rte_ring_sc_dequeue_elem(fp->free_slots, slot, sizeof(*slot)) == 0)
		return 0;
	return -ENOSPC;
}

void
fp_conn_free_slots(void *p, void *e, unsigned int n)
{
	struct fp *fp = p;
	uint32_t *slots = e;

	for (unsigned int i = 0; i < n; i++) {
		struct fp_conn *c = &fp->conns[slots[i]];

		for (unsigned int d = 0; d < 2; d++) {
			/* a position this slot got from the hash: -EINVAL is not possible */
			if (c->key_pos[d] >= 0)
				rte_hash_free_key_with_position(fp->h, c->key_pos[d]);
			c->key_pos[d] = -1;
		}
		c->gen++;
		fp_conn_state_set(c, FP_CONN_FREE);
		/* the ring holds max_conns and a slot is in it or in use: never full */
		rte_ring_sp_enqueue_elem(fp->free_slots, &slots[i], sizeof(uint32_t));
	}
}

void
fp_conn_unhook(struct fp *fp, uint32_t slot)
{
	struct fp_conn *c = &fp->conns[slot];

	fp_conn_state_set(c, FP_CONN_RECLAIM);	/* the copies first: fp_priv.h */
	fp_used_set(fp->used, slot, false);
	for (unsigned int d = 0; d < 2; d++) {
		void *key;

		/*
		 * A key this connection added and nobody else deletes: both
		 * calls find it.  (In lock-free mode the delete keeps the key's
		 * position; fp_conn_free_slots frees it after the grace period.)
		 */
		if (c->key_pos[d] >= 0 &&
		    rte_hash_get_key_with_position(fp->h, c->key_pos[d], &key) == 0)
			rte_hash_del_key(fp->h, key);
	}
	/* the queue holds max_conns and a slot is in it at most once: never full */
	rte_rcu_qsbr_dq_enqueue(fp->dq, &slot);
}

/*
 * The keys a new connection needs: -EEXIST if one belongs to a connection
 * of the firewall revision in force.  One that belongs to a connection of
 * an older revision is taken from it: that connection forwards nothing any
 * more (its frames go to the host), the host that set the new revision
 * has let it go, and it would otherwise keep the connection out of the
 * fast path until the sweep reached it.  It goes without an event.
 */
static int
keys_claim(struct fp *fp, const struct fp_conn_spec *s)
{
	uint32_t rev = fp_fw_rev_get(fp), stale[2];
	unsigned int nstale = 0;

	for (unsigned int d = 0; d < 2; d++) {
		void *data;
		uint32_t slot;

		if (rte_hash_lookup_data(fp->h, &s->mf[d].key, &data) < 0)
			continue;	/* -ENOENT: the key is free */
		slot = fp_data_slot((uintptr_t)data);
		if (fp->conns[slot].fw_rev == rev)
			return -EEXIST;
		if (nstale == 0 || stale[0] != slot)
			stale[nstale++] = slot;
	}
	for (unsigned int i = 0; i < nstale; i++) {
		fp_conn_unhook(fp, stale[i]);
		fp->nconns--;
	}
	return 0;
}

int
fp_conn_create(struct fp *fp, const struct fp_conn_spec *s, uint64_t now,
	       fp_conn_id *id)
{
	struct fp_nat x[2];
	struct fp_conn *c;
	bool nat[2];
	uint32_t slot;
	int rc;

	rc = conn_spec_check(fp, s, x, nat);
	if (rc != 0)
		return rc;
	rc = keys_claim(fp, s);
	if (rc != 0)
		return rc;
	rc = slot_take(fp, &slot);
	if (rc != 0)
		return rc;

	c = &fp->conns[slot];
	c->reason = FC_REASON_NONE;
	c->reported = 0;
	c->fw_rev = fp_fw_rev_get(fp);
	c->given_back_at = 0;
	c->key_pos[0] = c->key_pos[1] = -1;
	c->first_fwd[0] = c->first_fwd[1] = 0;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow_spec *ms = &s->mf[d];
		struct fp_mflow *m = &c->mf[d];

		memset(m, 0, sizeof(*m));	/* state FREE: no key finds it yet */
		m->last_seen = now;
		m->nhop = ms->nhop;
		m->nhop_rev = fp->nhops[ms->nhop].rev;	/* this thread is its only writer */
		m->timeout_s = ms->timeout_s ? ms->timeout_s : FP_DEFAULT_TIMEOUT_S;
		m->ctl = (uint8_t)(ms->action | FP_MF_ACTIVE |
				   s->verdict << FP_MF_VERDICT_SHIFT | (nat[d] ? FP_MF_NAT : 0));
		m->tcp.wscale = ms->tcp_wscale;
		if (nat[d])
			fp->nat[slot][d] = x[d];
	}
	/* both keys in, then valid: a reader never sees half a connection match */
	for (unsigned int d = 0; d < 2; d++) {
		const struct fc_key *k = &s->mf[d].key;

		rc = rte_hash_add_key_data(fp->h, k, fp_slot_data(slot, d, c->fw_rev));
		if (rc != 0) {
			fp_conn_unhook(fp, slot);
			return rc == -ENOSPC ? -ENOSPC : -EINVAL;
		}
		/*
		 * Just added by this, the only writer: found.  (Were it not, the
		 * -ENOENT kept would read as "no key" everywhere: key_pos < 0.)
		 */
		c->key_pos[d] = rte_hash_lookup(fp->h, k);
	}
	fp_conn_state_set(c, FP_CONN_VALID);
	fp_used_set(fp->used, slot, true);
	fp->nconns++;
	*id = fp_conn_id_of(fp, slot);
	return 0;
}

struct fp_conn *
fp_conn_of(const struct fp *fp, fp_conn_id id)
{
	uint32_t slot = FP_CONN_SLOT(id);
	struct fp_conn *c;
	uint8_t st;

	if (slot >= fp->max_conns)
		return NULL;
	c = &fp->conns[slot];
	st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	if ((st != FP_CONN_VALID && st != FP_CONN_INVALID) || c->gen != (uint32_t)(id >> 32))
		return NULL;
	return c;
}

int
fp_conn_verdict_set(struct fp *fp, fp_conn_id id, uint8_t verdict)
{
	struct fp_conn *c = fp_conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (verdict >= FC_VERDICT_MAX)
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++)
		fp_mf_ctl_set(&c->mf[d], FP_MF_VERDICT,
			      (uint8_t)(verdict << FP_MF_VERDICT_SHIFT));
	return 0;
}

int
fp_conn_modify(struct fp *fp, fp_conn_id id, const struct fp_conn_mod *mod)
{
	struct fp_conn *c = fp_conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (mod->mask & ~(uint32_t)(FP_MOD_ACTION | FP_MOD_TIMEOUT | FP_MOD_ACTIVE))
		return -EINVAL;
	if ((mod->mask & FP_MOD_ACTION) &&
	    (mod->action[0] >= FC_ACTION_MAX || mod->action[1] >= FC_ACTION_MAX))
		return -EINVAL;
	for (unsigned int d = 0; d < 2; d++) {
		struct fp_mflow *m = &c->mf[d];

		if (mod->mask & FP_MOD_ACTION)
			fp_mf_ctl_set(m, FP_MF_ACTION, mod->action[d]);
		if (mod->mask & FP_MOD_TIMEOUT)
			__atomic_store_n(&m->timeout_s, mod->timeout_s[d] ? mod->timeout_s[d]
					 : FP_DEFAULT_TIMEOUT_S, __ATOMIC_RELAXED);
		if (mod->mask & FP_MOD_ACTIVE)
			fp_mf_ctl_set(m, FP_MF_ACTIVE, mod->active[d] ? FP_MF_ACTIVE : 0);
	}
	return 0;
}

int
fp_conn_revive(struct fp *fp, fp_conn_id id)
{
	struct fp_conn *c = fp_conn_of(fp, id);
	uint8_t expected = FP_CONN_INVALID;

	if (c == NULL)
		return -ENOENT;
	if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != FP_CONN_INVALID)
		return -EALREADY;
	/*
	 * The give-back's winner marks both microflows given back, then
	 * writes its reason: wait for the reason (a few stores away, never
	 * blocked), so that no mark of it lands after the copies below.
	 */
	while (__atomic_load_n(&c->reason, __ATOMIC_ACQUIRE) == FC_REASON_NONE)
		rte_pause();
	c->reported = 0;
	st8(&c->reason, FC_REASON_NONE);	/* the next give-back writes its own */
	/* workers leave a given-back connection's tracking alone (fp.h): learn anew */
	for (unsigned int d = 0; d < 2; d++)
		fp_tcp_reset(&c->mf[d].tcp);
	/*
	 * The copies first (fp_priv.h).  A worker that sees its copy valid
	 * before the header is may count a FIN, SYN or RST to the host and
	 * find nothing to give back: as if the frame had come before the
	 * revive.
	 */
	for (unsigned int d = 0; d < 2; d++)
		__atomic_store_n(&c->mf[d].state, FP_CONN_VALID, __ATOMIC_RELEASE);
	/* only this thread moves a connection out of INVALID: cannot fail */
	if (!__atomic_compare_exchange_n(&c->state, &expected, FP_CONN_VALID, false,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return -EALREADY;
	return 0;
}

void
fp_conn_stats(const struct fp_conn *c, struct fp_mflow_stats st[2])
{
	for (unsigned int d = 0; d < 2; d++) {
		st[d].packets = ld64(&c->mf[d].packets);
		st[d].bytes = ld64(&c->mf[d].bytes);
		st[d].last_seen = ld64(&c->mf[d].last_seen);
	}
}

int
fp_conn_remove(struct fp *fp, fp_conn_id id, struct fp_mflow_stats final[2])
{
	struct fp_conn *c = fp_conn_of(fp, id);

	if (c == NULL)
		return -ENOENT;
	if (final != NULL)
		fp_conn_stats(c, final);
	fp_conn_unhook(fp, FP_CONN_SLOT(id));
	fp->nconns--;
	return 0;
}

void
fp_conn_key(const struct fp *fp, int32_t pos, struct fc_key *out)
{
	void *k;

	if (pos >= 0 && rte_hash_get_key_with_position(fp->h, pos, &k) == 0)
		memcpy(out, k, sizeof(*out));
	else
		memset(out, 0, sizeof(*out));
}

static void
info_fill(const struct fp *fp, uint32_t slot, struct fp_conn_info *out)
{
	const struct fp_conn *c = &fp->conns[slot];
	struct fp_mflow_stats st[2];

	/* the stamps before the counts: a stamp read is never after its last_seen */
	for (unsigned int d = 0; d < 2; d++)
		out->mf[d].first_fwd = __atomic_load_n(&c->first_fwd[d], __ATOMIC_ACQUIRE);
	fp_conn_stats(c, st);
	out->id = fp_conn_id_of(fp, slot);
	out->state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
	out->verdict = (ld8(&c->mf[0].ctl) & FP_MF_VERDICT) >> FP_MF_VERDICT_SHIFT;
	out->reason = ld8(&c->reason);
	out->fw_rev = c->fw_rev;
	for (unsigned int d = 0; d < 2; d++) {
		const struct fp_mflow *m = &c->mf[d];
		uint8_t ctl = ld8(&m->ctl);

		fp_conn_key(fp, c->key_pos[d], &out->mf[d].key);
		out->mf[d].action = ctl & FP_MF_ACTION;
		out->mf[d].active = (ctl & FP_MF_ACTIVE) != 0;
		out->mf[d].nat = (ctl & FP_MF_NAT) != 0;
		out->mf[d].timeout_s = m->timeout_s;
		out->mf[d].nhop = m->nhop;
		out->mf[d].stats = st[d];
	}
}

int
fp_conn_get(const struct fp *fp, fp_conn_id id, struct fp_conn_info *out)
{
	if (fp_conn_of(fp, id) == NULL)
		return -ENOENT;
	info_fill(fp, FP_CONN_SLOT(id), out);
	return 0;
}

int
fp_conn_lookup(const struct fp *fp, const struct fc_key *key, fp_conn_id *id,
	       unsigned int *dir)
{
	void *data;
	uint32_t slot;

	if (rte_hash_lookup_data(fp->h, key, &data) < 0)
		return -ENOENT;
	slot = fp_data_slot((uintptr_t)data);
	if (fp_conn_of(fp, fp_conn_id_of(fp, slot)) == NULL)
		return -ENOENT;
	*id = fp_conn_id_of(fp, slot);
	if (dir != NULL)
		*dir = (uintptr_t)data & 1;
	return 0;
}

int
fp_conn_next(const struct fp *fp, uint32_t *slot, struct fp_conn_info *out)
{
	return fp_conn_next_before(fp, slot, fp->max_conns, out);
}

int
fp_conn_next_before(const struct fp *fp, uint32_t *slot, uint32_t end,
		    struct fp_conn_info *out)
{
	if (end > fp->max_conns)
		end = fp->max_conns;
	/* the slots in use only (fp->used): their state says VALID or INVALID */
	for (uint32_t s = fp_used_next(fp->used, *slot, end); s < end;
	     s = fp_used_next(fp->used, s + 1, end)) {
		uint8_t st = __atomic_load_n(&fp->conns[s].state, __ATOMIC_ACQUIRE);

		if (st == FP_CONN_VALID || st == FP_CONN_INVALID) {
			info_fill(fp, s, out);
			*slot = s + 1;
			return 0;
		}
	}
	*slot = end;
	return -ENOENT;
}

uint32_t
fp_conn_count(const struct fp *fp)
{
	return fp->nconns;
}

uint32_t
fp_conn_capacity(const struct fp *fp)
{
	return fp->max_conns;
}
