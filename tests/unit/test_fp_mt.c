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
 * A second race: two workers, one a direction, give TCP connections back
 * (FIN, ten identical ACKs) while the control thread revives them over
 * and over.  A frame reads its microflow's copy of the connection's
 * state, a give-back decides on the connection's own (fastpath/fp_priv.h).
 * What must hold, in each of many episodes, once the revives stop and
 * every connection has met a FIN in each direction: every connection is
 * given back and both its directions go to the host (one still valid
 * would forward: a hole); revived, both forward.  This catches a
 * direction the give-back leaves valid; the few-nanosecond windows
 * fp_priv.h orders its writes against are too narrow to be hit here.
 * Bounded: a fixed number of rounds, whatever the machine's speed (the
 * second race also a time limit while it waits for its workers to run).
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>
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

/* ---- the second race: give-backs against revives ---- */

#define GB_CONNS 8
#define GB_EPISODES 200
#define GB_ROUNDS 200		/* revives per episode */
#define GB_SECS_MAX 60		/* no episode starts after this */
#define GB_WAIT_SECS 30		/* for the workers to run, at most */

static const uint8_t LIF1_MAC[6] = { 2, 0, 0, 0, 0, 2 };

struct gb_shared {
	struct fp *fp;
	struct fp_worker *w[2];
	struct rte_mempool *pool;
	struct fc_key key[GB_CONNS][2];
	int stop;
	bool running[2];
	pthread_t th[2];
	uint64_t bursts[2], given_back[2];
};

struct gb_arg {
	struct gb_shared *sh;
	unsigned int dir;
};

static struct rte_mbuf *
gb_frame(struct gb_shared *sh, unsigned int k, unsigned int dir, uint8_t flags, uint32_t ack)
{
	struct fc_frame_spec s = { .key = sh->key[k][dir], .tcp_flags = flags, .seq = 1000,
				   .ack = ack, .win = 1000, .payload = 10 };
	struct rte_mbuf *m = rte_pktmbuf_alloc(sh->pool);
	uint8_t buf[128];
	size_t len;

	memcpy(s.dmac, dir == 0 ? LIF0_MAC : LIF1_MAC, 6);
	len = fc_frame_build(&s, buf, sizeof(buf));
	if (m != NULL && len > 0)
		memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	return m;
}

/* Direction `dir` of every connection: a FIN now and then, else the same ACK. */
static void *
gb_worker(void *arg)
{
	const struct gb_arg *a = arg;
	struct gb_shared *sh = a->sh;
	unsigned int dir = a->dir;

	for (uint64_t b = 0; !__atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE); b++) {
		struct rte_mbuf *m[GB_CONNS];
		struct fp_out out[GB_CONNS];

		for (unsigned int k = 0; k < GB_CONNS; k++) {
			uint8_t flags = (b + k) % 16 == 0 ? FP_TCP_FIN | FP_TCP_ACK : FP_TCP_ACK;

			m[k] = gb_frame(sh, k, dir, flags, 5000);
			if (m[k] == NULL)
				return NULL;	/* the bursts counted so far tell */
		}
		fp_process_burst(sh->w[dir], (uint16_t)dir, m, GB_CONNS, 0, out);
		for (unsigned int k = 0; k < GB_CONNS; k++) {
			sh->given_back[dir] +=
				out[k].reason == FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST ||
				out[k].reason == FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS;
			rte_pktmbuf_free(m[k]);
		}
		__atomic_store_n(&sh->bursts[dir], sh->bursts[dir] + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static uint64_t
gb_bursts(const struct gb_shared *sh, unsigned int d)
{
	return __atomic_load_n(&sh->bursts[d], __ATOMIC_ACQUIRE);
}

/* Waits until each worker has run `more` bursts beyond `since`; false after GB_WAIT_SECS. */
static bool
gb_wait(const struct gb_shared *sh, const uint64_t since[2], uint64_t more)
{
	time_t t0 = time(NULL);

	while (gb_bursts(sh, 0) < since[0] + more || gb_bursts(sh, 1) < since[1] + more) {
		if (time(NULL) - t0 >= GB_WAIT_SECS)
			return false;
		usleep(100);	/* asleep, not yielding: the workers get the cores */
	}
	return true;
}

/* One frame of direction `dir` of connection k, decided on this thread: its outcome. */
static uint16_t
gb_one(struct gb_shared *sh, unsigned int k, unsigned int dir, uint32_t ack)
{
	struct rte_mbuf *m = gb_frame(sh, k, dir, FP_TCP_ACK, ack);
	struct fp_out out;

	assert_non_null(m);
	assert_int_equal(fp_process_burst(sh->w[dir], (uint16_t)dir, &m, 1, 0, &out), 1);
	rte_pktmbuf_free(m);
	return out.reason;
}

/*
 * Episodes: the workers start; the control thread revives the
 * connections over and over while the workers give them back; then it
 * stops and the workers go on until each connection has had a FIN in
 * each direction (16 bursts: one in every 16 per direction), and stop.
 * Every connection must then be given back, both its directions going to
 * the host (a direction left valid under a given-back connection would
 * forward: a hole); revived, both must forward again.
 */
static void
test_race_give_back_and_revive(void **state)
{
	struct gb_shared *sh = *state;
	static struct gb_arg args[2];
	fp_conn_id id[GB_CONNS];
	struct fp_event ev[64];
	uint64_t revived = 0, events = 0;
	unsigned int e;
	time_t t0 = time(NULL);

	for (unsigned int k = 0; k < GB_CONNS; k++) {
		struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };

		cs.mf[0].key = sh->key[k][0];
		cs.mf[1].key = sh->key[k][1];
		cs.mf[1].nhop = 1;
		cs.mf[0].action = cs.mf[1].action = FC_ACTION_FWD;
		assert_int_equal(fp_conn_create(sh->fp, &cs, 0, &id[k]), 0);
	}
	cpu_set_t all;

	CPU_ZERO(&all);
	for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	for (e = 0; e < GB_EPISODES && time(NULL) - t0 < GB_SECS_MAX; e++) {
		uint64_t since[2] = { 0, 0 };

		__atomic_store_n(&sh->stop, 0, __ATOMIC_RELEASE);
		for (unsigned int d = 0; d < 2; d++) {
			since[d] = gb_bursts(sh, d);
			args[d] = (struct gb_arg){ sh, d };
			assert_int_equal(pthread_create(&sh->th[d], NULL, gb_worker, &args[d]), 0);
			sh->running[d] = true;
			/* EAL pinned this thread (and so its children) to core 0: free them */
			assert_int_equal(pthread_setaffinity_np(sh->th[d], sizeof(all), &all), 0);
		}
		/* the race, once both workers run */
		if (gb_wait(sh, since, 1))
			for (unsigned int r = 0; r < GB_ROUNDS; r++) {
				int rc = fp_conn_revive(sh->fp, id[r % GB_CONNS]);

				assert_true(rc == 0 || rc == -EALREADY);
				revived += rc == 0;
				if (r % 64 == 0)
					events += fp_given_back(sh->fp, ev, 64);
				if (r % 8 == 0)
					sched_yield();
			}
		/* no revive now: every connection meets a FIN in each direction */
		since[0] = gb_bursts(sh, 0);
		since[1] = gb_bursts(sh, 1);
		assert_true(gb_wait(sh, since, 2 * 16));
		__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
		for (unsigned int d = 0; d < 2; d++) {
			assert_int_equal(pthread_join(sh->th[d], NULL), 0);
			sh->running[d] = false;
		}
		events += fp_given_back(sh->fp, ev, 64);
		for (unsigned int k = 0; k < GB_CONNS; k++) {
			struct fp_conn_info ci;

			assert_int_equal(fp_conn_get(sh->fp, id[k], &ci), 0);
			assert_int_equal(ci.state, FP_CONN_INVALID);
			/* a new ACK (no repeat), no FIN */
			for (unsigned int d = 0; d < 2; d++)
				assert_int_equal(gb_one(sh, k, d, 7000 + e),
						 FC_CNT_FROM_WIRE_TO_KN_CONN_INVALID);
			assert_int_equal(fp_conn_revive(sh->fp, id[k]), 0);
			for (unsigned int d = 0; d < 2; d++)
				assert_int_equal(gb_one(sh, k, d, 8000 + e),
						 FC_CNT_FROM_WIRE_TO_WIRE);
		}
	}
	print_message("%u episodes, %" PRIu64 " and %" PRIu64 " bursts, %" PRIu64 " and %" PRIu64
		      " frames giving back, %" PRIu64 " revives in the races, %" PRIu64
		      " GIVEN_BACK events\n", e, sh->bursts[0], sh->bursts[1],
		      sh->given_back[0], sh->given_back[1], revived, events);
	assert_true(e > 0);
	assert_true(revived > 0);
}

static int
gb_setup(void **state)
{
	static struct gb_shared sh;
	struct fp_params p = { .name = "mtgb", .max_conns = GB_CONNS, .max_nhops = 2,
			       .max_workers = 2, .socket_id = SOCKET_ID_ANY };
	struct fp_lif l0 = { .port = 0, .mtu = 1500 }, l1 = { .port = 1, .mtu = 1500 };
	struct fp_nhop n = { .port = 1, .mtu = 1500, .resolved = true };

	memcpy(l0.mac, LIF0_MAC, 6);
	memcpy(l1.mac, LIF1_MAC, 6);
	sh.pool = rte_pktmbuf_pool_create("mtgb_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  SOCKET_ID_ANY);
	sh.fp = fp_create(&p);
	assert_non_null(sh.pool);
	assert_non_null(sh.fp);
	for (unsigned int d = 0; d < 2; d++) {
		sh.w[d] = fp_worker_create(sh.fp, d);
		assert_non_null(sh.w[d]);
	}
	assert_int_equal(fp_lif_set(sh.fp, 0, &l0), 0);
	assert_int_equal(fp_lif_set(sh.fp, 1, &l1), 0);
	assert_int_equal(fp_nhop_set(sh.fp, 0, &n, false), 0);
	n.port = 0;
	assert_int_equal(fp_nhop_set(sh.fp, 1, &n, false), 0);
	assert_int_equal(fp_cfg_set(sh.fp, FC_CFG_OFFLOAD), 0);
	for (unsigned int k = 0; k < GB_CONNS; k++) {
		fc_key4(&sh.key[k][0], IPPROTO_TCP, "198.18.0.10", (uint16_t)(2000 + k),
			"198.19.0.10", 80);
		fp_key_reverse(&sh.key[k][0], &sh.key[k][1]);
		sh.key[k][1].port = 1;
	}
	*state = &sh;
	return 0;
}

static int
gb_teardown(void **state)
{
	struct gb_shared *sh = *state;

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELEASE);
	for (unsigned int d = 0; d < 2; d++)
		if (sh->running[d])	/* a failed assertion left it running */
			pthread_join(sh->th[d], NULL);
	for (unsigned int d = 0; d < 2; d++)
		fp_worker_destroy(sh->w[d]);
	fp_destroy(sh->fp);
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
		cmocka_unit_test_setup_teardown(test_race_give_back_and_revive, gb_setup,
						gb_teardown),
	};

	if (fc_eal_init("test_fp_mt", 128) != 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
