/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The fast path with a real worker thread racing the control thread.
 *
 * A worker pushes frames of 16 connections through fp_process_burst() in a
 * loop while the main thread, as the control thread, makes, cuts and
 * removes those connections over and over.  What must hold:
 *  - a connection removed before a burst began is never forwarded in it
 *    (removal stops matching at once, for every worker);
 *  - a connection cut (verdict DROP) before a burst began is never
 *    forwarded in it;
 *  - no slot is freed under a worker (ASan would see the reuse) and every
 *    slot comes back once the worker has stopped;
 *  - updating a port (LIF) in place never makes its frames unknown;
 *  - the counters add up at every read, also right after a clear that
 *    lands while the worker publishes.
 * Bounded: a fixed number of rounds, whatever the machine's speed.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fp.h"

#define CONNS 16
#define ROUNDS 20000

static const uint8_t LIF0_MAC[6] = { 2, 0, 0, 0, 0, 1 };

struct shared {
	struct fp *fp;
	struct fp_worker *w;
	struct rte_mempool *pool;
	uint8_t frame[CONNS][128];
	size_t len;
	/* per connection: odd while it may forward, even once removed or cut */
	uint32_t seq[CONNS];
	int stop;
	bool running;
	pthread_t th;
	uint64_t bursts, violations, reclaim_pending, lif_unknown;
};

static void
keys(unsigned int k, struct fc_key *k0, struct fc_key *k1)
{
	fc_key4(k0, IPPROTO_UDP, "198.18.0.10", (uint16_t)(1000 + k), "198.19.0.10", 53);
	fp_key_reverse(k0, k1);
	k1->port = 1;
}

static void *
worker(void *arg)
{
	struct shared *sh = arg;

	while (!__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE)) {
		struct rte_mbuf *m[CONNS];
		struct fp_out out[CONNS];
		uint32_t before[CONNS];

		for (unsigned int k = 0; k < CONNS; k++) {
			before[k] = __atomic_load_n(&sh->seq[k], __ATOMIC_ACQUIRE);
			m[k] = rte_pktmbuf_alloc(sh->pool);
			memcpy(rte_pktmbuf_append(m[k], (uint16_t)sh->len), sh->frame[k], sh->len);
		}
		fp_process_burst(sh->w, 0, m, CONNS, 0, out);
		for (unsigned int k = 0; k < CONNS; k++) {
			uint32_t after = __atomic_load_n(&sh->seq[k], __ATOMIC_ACQUIRE);

			if (out[k].dest == 1 && before[k] % 2 == 0 && after == before[k])
				sh->violations++;
			sh->reclaim_pending += out[k].reason == FC_CNT_FROM_WIRE_TO_KN_CONN_RECLAIM_PENDING;
			sh->lif_unknown += out[k].reason == FC_CNT_FROM_WIRE_DROP_LIF_UNKNOWN;
			rte_pktmbuf_free(m[k]);
		}
		sh->bursts++;
	}
	return NULL;
}

static void
test_race_remove_and_cut(void **state)
{
	struct shared *sh = *state;
	fp_conn_id id[CONNS] = { 0 };
	enum { ABSENT, LIVE, CUT } st[CONNS] = { ABSENT };
	struct fp_event ev[64];
	uint64_t c[FC_CNT_MAX], sum[FC_CLS_MAX] = { 0 };
	unsigned int full = 0;

	assert_int_equal(pthread_create(&sh->th, NULL, worker, sh), 0);
	sh->running = true;
	/* EAL pinned this thread to core 0; the worker must run beside it */
	if (sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(1, &set);
		assert_int_equal(pthread_setaffinity_np(sh->th, sizeof(set), &set), 0);
	} else {
		print_message("one CPU: the worker and the control thread take turns\n");
	}
	for (unsigned int r = 0; r < ROUNDS; r++) {
		unsigned int k = r % CONNS;

		switch (st[k]) {
		case ABSENT: {
			struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };

			keys(k, &cs.mf[0].key, &cs.mf[1].key);
			cs.mf[1].nhop = 1;
			cs.mf[0].action = cs.mf[1].action = FC_ACTION_IPS;
			__atomic_fetch_add(&sh->seq[k], 1, __ATOMIC_RELEASE);	/* odd: may forward */
			/* full while removed slots wait for the worker's grace period */
			for (int rc; (rc = fp_conn_create(sh->fp, &cs, 0, &id[k])) != 0; full++) {
				assert_int_equal(rc, -ENOSPC);
				assert_true(full < 10000000);
				sched_yield();
			}
			st[k] = LIVE;
			break;
		}
		case LIVE:
			if (r % 3 == 0) {
				/* the cut: from its answer on, nothing of it is forwarded */
				assert_int_equal(fp_conn_verdict_set(sh->fp, id[k], FC_VERDICT_DROP), 0);
				__atomic_fetch_add(&sh->seq[k], 1, __ATOMIC_RELEASE);
				st[k] = CUT;
				break;
			}
			assert_int_equal(fp_conn_remove(sh->fp, id[k], NULL), 0);
			__atomic_fetch_add(&sh->seq[k], 1, __ATOMIC_RELEASE);	/* even: gone */
			st[k] = ABSENT;
			break;
		case CUT:
			assert_int_equal(fp_conn_remove(sh->fp, id[k], NULL), 0);
			st[k] = ABSENT;
			break;
		}
		if (r % 64 == 0)
			fp_sweep(sh->fp, 0, 0, ev, 64);
		{	/* the same port, another MTU, every round */
			struct fp_lif l;

			assert_int_equal(fp_lif_get(sh->fp, 0, &l), 0);
			l.mtu = (uint16_t)(l.mtu == 1500 ? 9000 : 1500);
			assert_int_equal(fp_lif_set(sh->fp, 0, &l), 0);
		}
		if (r % 4 == 0) {
			uint64_t cc[FC_CNT_MAX], cs[FC_CLS_MAX] = { 0 };

			fp_counters_clear(sh->fp);
			fp_counters_read(sh->fp, cc);
			for (unsigned int i = 0; i < FC_CNT_MAX; i++)
				cs[fc_cnt_class(i)] += cc[i];
			assert_int_equal(cs[FC_CLS_RX], cs[FC_CLS_WIRE] + cs[FC_CLS_HOST] +
							cs[FC_CLS_IPS] + cs[FC_CLS_DROP]);
		}
		if (r % 8 == 0)
			sched_yield();
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(sh->th, NULL), 0);
	sh->running = false;
	print_message("%" PRIu64 " bursts, %" PRIu64 " frames of an unknown port, %" PRIu64
		      " frames counted RECLAIM_PENDING, "
		      "%u creates refused while slots awaited their grace period\n",
		      sh->bursts, sh->lif_unknown, sh->reclaim_pending, full);
	assert_int_equal(sh->violations, 0);
	assert_int_equal(sh->lif_unknown, 0);
	assert_true(sh->bursts > 0);

	/* the worker is gone: every removed slot can be reused */
	for (unsigned int k = 0; k < CONNS; k++)
		if (st[k] != ABSENT)
			assert_int_equal(fp_conn_remove(sh->fp, id[k], NULL), 0);
	fp_sweep(sh->fp, 0, 0, ev, 64);
	assert_int_equal(fp_conn_count(sh->fp), 0);
	for (unsigned int k = 0; k < CONNS; k++) {
		struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };

		keys(k, &cs.mf[0].key, &cs.mf[1].key);
		assert_int_equal(fp_conn_create(sh->fp, &cs, 0, &id[k]), 0);
	}

	fp_counters_read(sh->fp, c);
	for (unsigned int i = 0; i < FC_CNT_MAX; i++)
		sum[fc_cnt_class(i)] += c[i];
	assert_int_equal(sum[FC_CLS_RX],
			 sum[FC_CLS_WIRE] + sum[FC_CLS_HOST] + sum[FC_CLS_IPS] + sum[FC_CLS_DROP]);
}

static int
setup(void **state)
{
	static struct shared sh;
	struct fp_params p = { .name = "mt", .max_conns = CONNS, .max_nhops = 2,
			       .max_workers = 1, .socket_id = SOCKET_ID_ANY };
	struct fp_lif l0 = { .port = 0, .mtu = 1500 }, l1 = { .port = 1, .mtu = 1500 };
	struct fp_nhop n = { .port = 1, .mtu = 1500, .resolved = true };

	memcpy(l0.mac, LIF0_MAC, 6);
	sh.pool = rte_pktmbuf_pool_create("mt_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  SOCKET_ID_ANY);
	sh.fp = fp_create(&p);
	assert_non_null(sh.pool);
	assert_non_null(sh.fp);
	sh.w = fp_worker_create(sh.fp, 0);
	assert_non_null(sh.w);
	assert_int_equal(fp_lif_set(sh.fp, 0, &l0), 0);
	assert_int_equal(fp_lif_set(sh.fp, 1, &l1), 0);
	assert_int_equal(fp_nhop_set(sh.fp, 0, &n, false), 0);
	n.port = 0;
	assert_int_equal(fp_nhop_set(sh.fp, 1, &n, false), 0);
	assert_int_equal(fp_cfg_set(sh.fp, FC_CFG_OFFLOAD | FC_CFG_IPS), 0);
	for (unsigned int k = 0; k < CONNS; k++) {
		struct fc_frame_spec s = { .payload = 20 };
		struct fc_key k1;

		memcpy(s.dmac, LIF0_MAC, 6);
		keys(k, &s.key, &k1);
		sh.len = fc_frame_build(&s, sh.frame[k], sizeof(sh.frame[k]));
	}
	*state = &sh;
	return 0;
}

static int
teardown(void **state)
{
	struct shared *sh = *state;

	if (sh->running) {	/* a failed assertion left the worker running */
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		pthread_join(sh->th, NULL);
	}
	fp_worker_destroy(sh->w);
	fp_destroy(sh->fp);
	return 0;
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_race_remove_and_cut, setup, teardown),
	};

	if (fc_eal_init("test_fp_mt", 128) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
