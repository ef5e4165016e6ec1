/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * lk_counters: the counters window - the coprocessor's counters and the
 * wire's figures, each under a seqlock of its own - published and read.
 */
#include "lk.h"
#include "lk_priv.h"

#include <errno.h>

#define LK_COUNTER_TRIES 64

/* ---- counters window ---- */

void
lk_counters_publish(struct lk *lk, const uint64_t cnt[FC_CNT_MAX], uint64_t now)
{
	struct lk_shm_counters *w = lk->cnt;
	uint32_t seq = __atomic_load_n(&w->seq, __ATOMIC_RELAXED) | 1;	/* odd: writing */

	__atomic_store_n(&w->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		__atomic_store_n(&w->value[i], cnt[i], __ATOMIC_RELAXED);
	__atomic_store_n(&w->when, now, __ATOMIC_RELAXED);
	__atomic_store_n(&w->seq, seq + 1, __ATOMIC_RELEASE);
}

void
lk_wire_publish(struct lk *lk, const uint64_t wire[][FC_WIRE_MAX], unsigned int nports)
{
	struct lk_shm_counters *w = lk->cnt;
	uint32_t seq = __atomic_load_n(&w->wire_seq, __ATOMIC_RELAXED) | 1;

	if (nports > FC_WIRE_PORTS)
		nports = FC_WIRE_PORTS;
	__atomic_store_n(&w->wire_seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (unsigned int p = 0; p < nports; p++)
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			__atomic_store_n(&w->wire[p][k], wire[p][k], __ATOMIC_RELAXED);
	__atomic_store_n(&w->wire_ports, nports, __ATOMIC_RELAXED);
	__atomic_store_n(&w->wire_seq, seq + 1, __ATOMIC_RELEASE);
}

int
lk_wire_read(struct lk *lk, uint64_t wire[FC_WIRE_PORTS][FC_WIRE_MAX])
{
	struct lk_shm_counters *w = lk->cnt;

	for (int i = 0; i < LK_COUNTER_TRIES; i++) {
		uint32_t s0 = __atomic_load_n(&w->wire_seq, __ATOMIC_ACQUIRE), n;

		if (s0 & 1)
			continue;
		n = __atomic_load_n(&w->wire_ports, __ATOMIC_RELAXED);
		for (unsigned int p = 0; p < FC_WIRE_PORTS; p++)
			for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
				wire[p][k] = __atomic_load_n(&w->wire[p][k], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&w->wire_seq, __ATOMIC_RELAXED) == s0)
			return n <= FC_WIRE_PORTS ? (int)n : FC_WIRE_PORTS;	/* a bad count: what fits */
	}
	lk_stat_inc(&lk->stats.counters_torn);
	return -EAGAIN;
}

int
lk_counters_read(struct lk *lk, uint64_t cnt[FC_CNT_MAX], uint64_t *when)
{
	struct lk_shm_counters *w = lk->cnt;

	for (int i = 0; i < LK_COUNTER_TRIES; i++) {
		uint32_t s0 = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);

		if (s0 & 1)
			continue;
		for (unsigned int c = 0; c < FC_CNT_MAX; c++)
			cnt[c] = __atomic_load_n(&w->value[c], __ATOMIC_RELAXED);
		if (when)
			*when = __atomic_load_n(&w->when, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) == s0)
			return 0;
	}
	lk_stat_inc(&lk->stats.counters_torn);
	return -EAGAIN;
}
