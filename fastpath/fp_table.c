/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_table: a fast path's life - its tables made and freed, the
 * configuration word, the firewall revision, the new-connection limit,
 * and the workers (their RCU registration, give-back rings and meters).
 * See fp.h for the contract.
 *
 * Libraries doing the work: rte_hash (the microflow table, lock-free
 * readers), rte_rcu_qsbr and its defer queue (a connection's slot and
 * hash keys freed only after every worker has let go), rte_ring (the free
 * slot list, the give-back rings), rte_meter (the new-connection limit's
 * srTCM, a bucket a worker).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>

#include "fp_priv.h"

void *
fp_zmalloc(struct fp *fp, const char *what, size_t size, int socket)
{
	char name[RTE_MEMZONE_NAMESIZE];

	snprintf(name, sizeof(name), "%s_%s", fp->name, what);
	return rte_zmalloc_socket(name, size, RTE_CACHE_LINE_SIZE, socket);
}

struct fp *
fp_create(const struct fp_params *p)
{
	char name[RTE_RING_NAMESIZE];
	struct fp *fp;
	size_t qsz;

	if (p == NULL || p->name == NULL || p->name[0] == '\0' ||
	    strlen(p->name) > FP_NAME_MAX_LEN || p->max_conns == 0 ||
	    p->max_conns > (1u << 30) || p->max_nhops == 0 ||
	    p->max_workers == 0 || p->max_workers > RTE_MAX_LCORE) {
		rte_errno = EINVAL;
		errno = EINVAL;
		return NULL;
	}
	fp = rte_zmalloc_socket("fp", sizeof(*fp), RTE_CACHE_LINE_SIZE, p->socket_id);
	if (fp == NULL)
		goto nomem;
	snprintf(fp->name, sizeof(fp->name), "%s", p->name);
	fp->cfg = FC_CFG_BOOT;
	fp->max_conns = p->max_conns;
	fp->max_nhops = p->max_nhops;
	fp->max_workers = p->max_workers;
	fp->terminal_ns = p->terminal_ns ? p->terminal_ns : FP_DEFAULT_TERMINAL_NS;

	fp->conns = fp_zmalloc(fp, "conns", sizeof(*fp->conns) * (size_t)p->max_conns,
			       p->socket_id);
	fp->used = fp_zmalloc(fp, "used", sizeof(*fp->used) * (((size_t)p->max_conns + 63) / 64),
			      p->socket_id);
	fp->nat = fp_zmalloc(fp, "nat", sizeof(*fp->nat) * (size_t)p->max_conns,
			     p->socket_id);
	fp->nhops = fp_zmalloc(fp, "nhops", sizeof(*fp->nhops) * (size_t)p->max_nhops,
			       p->socket_id);
	fp->workers = fp_zmalloc(fp, "workers", sizeof(*fp->workers) * p->max_workers,
				 p->socket_id);
	fp->lif_of = fp_zmalloc(fp, "lifmap", sizeof(*fp->lif_of) * FP_MAX_PORTS,
				p->socket_id);
	if (fp->conns == NULL || fp->used == NULL || fp->nat == NULL || fp->nhops == NULL ||
	    fp->workers == NULL || fp->lif_of == NULL)
		goto fail;
	memset(fp->lif_of, 0xff, sizeof(*fp->lif_of) * FP_MAX_PORTS);
	for (uint32_t i = 0; i < p->max_conns; i++)
		fp->conns[i].key_pos[0] = fp->conns[i].key_pos[1] = -1;
	for (uint32_t i = 0; i < p->max_nhops; i++)
		rte_seqcount_init(&fp->nhops[i].sc);

	qsz = rte_rcu_qsbr_get_memsize(p->max_workers);
	fp->qsbr = fp_zmalloc(fp, "qsbr", qsz, p->socket_id);
	if (fp->qsbr == NULL || rte_rcu_qsbr_init(fp->qsbr, p->max_workers) != 0)
		goto fail;

	snprintf(name, sizeof(name), "%s_free", fp->name);
	fp->free_slots = rte_ring_create_elem(name, sizeof(uint32_t), p->max_conns,
					      p->socket_id,
					      RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (fp->free_slots == NULL)
		goto fail;
	/* RING_F_EXACT_SZ: room for max_conns exactly, so this fills, never fails */
	for (uint32_t i = 0; i < p->max_conns; i++)
		rte_ring_sp_enqueue_elem(fp->free_slots, &i, sizeof(i));

	snprintf(name, sizeof(name), "%s_ct", fp->name);
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = RTE_MAX(2 * p->max_conns, 16u),
		.key_len = sizeof(struct fc_key),
		.hash_func = rte_hash_crc,
		.socket_id = p->socket_id,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	fp->h = rte_hash_create(&hp);
	if (fp->h == NULL)
		goto fail;

	snprintf(name, sizeof(name), "%s_dq", fp->name);
	struct rte_rcu_qsbr_dq_parameters dp = {
		.name = name,
		.flags = RTE_RCU_QSBR_DQ_MT_UNSAFE,
		.size = p->max_conns,
		.esize = sizeof(uint32_t),
		.trigger_reclaim_limit = 64,
		.max_reclaim_size = 256,
		.free_fn = fp_conn_free_slots,
		.p = fp,
		.v = fp->qsbr,
	};
	fp->dq = rte_rcu_qsbr_dq_create(&dp);
	if (fp->dq == NULL)
		goto fail;
	return fp;

nomem:
	rte_errno = ENOMEM;
	errno = ENOMEM;
	return NULL;
fail: {
	int err = rte_errno ? rte_errno : ENOMEM;

	fp_destroy(fp);
	rte_errno = err;
	errno = err;
	return NULL;
}
}

void
fp_destroy(struct fp *fp)
{
	if (fp == NULL)
		return;
	rte_rcu_qsbr_dq_delete(fp->dq);	/* frees what it still holds */
	rte_hash_free(fp->h);
	rte_ring_free(fp->free_slots);
	rte_free(fp->qsbr);
	rte_free(fp->lif_of);
	rte_free(fp->workers);
	rte_free(fp->nhops);
	rte_free(fp->nat);
	rte_free(fp->used);
	rte_free(fp->conns);
	rte_free(fp);
}

/* ---- configuration word, revision ---- */

int
fp_cfg_set(struct fp *fp, uint32_t word)
{
	if (word & ~FC_CFG_ALL)
		return -EINVAL;
	__atomic_store_n(&fp->cfg, word, __ATOMIC_RELEASE);
	return 0;
}

uint32_t
fp_cfg_get(const struct fp *fp)
{
	return __atomic_load_n(&fp->cfg, __ATOMIC_ACQUIRE);
}

/* ---- the new-connection limit ---- */

/*
 * A worker's meter, its bucket full: rte_meter_srtcm_config starts it at
 * the TSC's time, the burst's clock is `now` (ns, the caller's): the time
 * is set to 0, so the first frame finds the bucket full (capped at cbs).
 */
static void
new_meter_arm(struct fp_worker *w)
{
	/* fails only for a NULL argument */
	rte_meter_srtcm_config(&w->new_meter, &w->fp->new_prof);
	w->new_meter.time = 0;
}

int
fp_new_conn_rate_set(struct fp *fp, uint32_t per_s)
{
	/*
	 * The meter counts thousandths of a SYN (one SYN: 1000, its "bytes"),
	 * so a worker's share keeps its precision at low rates.  Its time is
	 * ns, not the TSC's cycles the profile's rate is per: the rate is
	 * scaled by hz / 1e9.  The bucket holds 100 ms of the share, at least
	 * one SYN; no excess bucket (ebs 0: green or red).
	 */
	double share = per_s ? (double)per_s / fp->max_workers : 0;
	struct rte_meter_srtcm_params prm = {
		.cir = (uint64_t)(share * 1000.0 * (double)rte_get_tsc_hz() / 1e9 + 0.5),
		.cbs = (uint64_t)(share * 100.0) > 1000 ? (uint64_t)(share * 100.0) : 1000,
	};

	if (per_s > FP_NEW_CONN_RATE_MAX)
		return -EINVAL;
	if (per_s) {
		if (prm.cir == 0)
			prm.cir = 1;
		if (rte_meter_srtcm_profile_config(&fp->new_prof, &prm) != 0)
			return -EINVAL;
		for (unsigned int i = 0; i < fp->max_workers; i++)
			if (fp->workers[i] != NULL)
				new_meter_arm(fp->workers[i]);
	}
	__atomic_store_n(&fp->new_rate, per_s, __ATOMIC_RELEASE);
	return 0;
}

uint32_t
fp_new_conn_rate_get(const struct fp *fp)
{
	return __atomic_load_n(&fp->new_rate, __ATOMIC_ACQUIRE);
}

void
fp_fw_rev_set(struct fp *fp, uint32_t rev)
{
	__atomic_store_n(&fp->fw_rev, rev, __ATOMIC_RELEASE);
}

uint32_t
fp_fw_rev_get(const struct fp *fp)
{
	return __atomic_load_n(&fp->fw_rev, __ATOMIC_ACQUIRE);
}

/* ---- the host's lease ---- */

static void
lease_close(struct fp *fp, bool closed)
{
	__atomic_store_n(&fp->closed, closed, __ATOMIC_RELEASE);
}

int
fp_lease_renew(struct fp *fp, uint64_t now, uint32_t ms, uint32_t ack,
	       struct fp_lease *out)
{
	struct fp_lease *l = &fp->lease;

	if (ms > FP_LEASE_MAX_MS)
		return -EINVAL;
	fp_lease_tick(fp, now);
	if (ms == 0) {
		if (l->state == FC_LEASE_HELD) {
			l->state = FC_LEASE_LAPSED;
			l->lapses++;
			lease_close(fp, true);
		}
	} else if (l->state != FC_LEASE_LAPSED || ack == l->lapses) {
		l->state = FC_LEASE_HELD;
		l->ms = ms;
		fp->lease_expires_ns = now + (uint64_t)ms * 1000000ull;
		lease_close(fp, false);
	}
	if (out)
		fp_lease_get(fp, now, out);
	return 0;
}

bool
fp_lease_tick(struct fp *fp, uint64_t now)
{
	struct fp_lease *l = &fp->lease;

	if (l->state != FC_LEASE_HELD || now < fp->lease_expires_ns)
		return false;
	l->state = FC_LEASE_LAPSED;
	l->lapses++;
	lease_close(fp, true);
	return true;
}

void
fp_lease_get(const struct fp *fp, uint64_t now, struct fp_lease *out)
{
	*out = fp->lease;
	out->left_ns = out->state == FC_LEASE_HELD && now < fp->lease_expires_ns
			       ? fp->lease_expires_ns - now : 0;
}

/* ---- workers ---- */

struct fp_worker *
fp_worker_create(struct fp *fp, unsigned int id)
{
	char name[RTE_RING_NAMESIZE];
	struct fp_worker *w;
	uint32_t gb_size;

	if (id >= fp->max_workers) {
		rte_errno = EINVAL;
		return NULL;
	}
	if (fp->workers[id] != NULL) {
		rte_errno = EEXIST;
		return NULL;
	}
	w = rte_zmalloc_socket("fp_worker", sizeof(*w), RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (w == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	w->fp = fp;
	w->id = id;
	rte_seqcount_init(&w->sc);
	snprintf(name, sizeof(name), "%s_gb%u", fp->name, id & 0xffff);
	/* no more than the table can give back at once (less one: rte_ring) */
	gb_size = rte_align32pow2(fp->max_conns < 2 ? 2 : fp->max_conns);
	if (gb_size > FP_GIVEN_BACK_RING)
		gb_size = FP_GIVEN_BACK_RING;
	w->given_back = rte_ring_create_elem(name, sizeof(uint64_t), gb_size, SOCKET_ID_ANY,
					     RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (w->given_back == NULL) {
		rte_free(w);
		rte_errno = ENOMEM;
		return NULL;
	}
	if (rte_rcu_qsbr_thread_register(fp->qsbr, id) != 0) {
		rte_ring_free(w->given_back);
		rte_free(w);
		rte_errno = EINVAL;
		return NULL;
	}
	if (fp->new_rate)
		new_meter_arm(w);
	__atomic_store_n(&fp->workers[id], w, __ATOMIC_RELEASE);
	return w;
}

void
fp_worker_destroy(struct fp_worker *w)
{
	struct fp *fp;

	if (w == NULL)
		return;
	fp = w->fp;
	/* its counts leave the sum: take them off the base so reads keep them */
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		fp->cnt_base[c] -= w->cnt[c];
	/* fails only for an id past max_workers, which fp_worker_create refused */
	rte_rcu_qsbr_thread_unregister(fp->qsbr, w->id);
	__atomic_store_n(&fp->workers[w->id], NULL, __ATOMIC_RELEASE);
	rte_ring_free(w->given_back);	/* what it held the sweep reports */
	rte_free(w);
}
