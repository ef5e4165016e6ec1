/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-npu: the coprocessor.  A DPDK program that owns the wire ports
 * and runs the fast path over them, and serves the host over the link.
 *
 *   flowcut-npu [EAL options] -- [--link PATH] [--conns N] [--nhops N]
 *                                [--workers N] [--sweep-ms N]
 *                                [--host-new-rate N]
 *
 * Wire ports are the DPDK ports EAL made (in the lab net_af_xdp or
 * net_af_packet vdevs on veth ends, in tests net_pcap), front port i being
 * DPDK port i.  Threads:
 *  - the main lcore is the control thread: it serves every client's
 *    command ring, sweeps idle connections and posts events, and publishes
 *    the counters window; it sleeps on the link's doorbell when idle;
 *  - each worker lcore polls its RX queues, runs fp_process_burst(), and
 *    sends each frame where the fast path says: out of a port, up to the
 *    host over the link (tagged with its port, and AUX or INSPECT where the
 *    fast path chose those queues), or into the free list.  Worker 0 also
 *    sends the host's frames out.  Idle, a worker backs off to sleeping.
 * Every start lays the link out anew with a new boot id and posts a BOOT
 * event: the tables are empty and fw_cfg is 0x002, as on the real chip.
 * SIGINT/SIGTERM stop it cleanly; SIGKILL is survivable for the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_spinlock.h>

#include "fp.h"
#include "lk.h"
#include "npu_cmd.h"
#include "npu_ev.h"
#include "npu_wire.h"

#define NPU_POOL_SIZE 16383
#define NPU_RXD 2048
#define NPU_TXD 2048
#define NPU_IDLE_SPIN_NS 200000ull	/* keep polling this long after work */
#define NPU_IDLE_SLEEP_MAX_US 1000	/* the longest a worker sleeps idle */
#define NPU_IDLE_CHECK 64	/* empty turns between two looks at the clock */
#define NPU_PUBLISH_NS 50000000ull	/* counters window refresh */
#define NPU_SLOW_NS 250000000ull	/* a control turn, or a wake-up, this late is said */
#define NPU_SLOW_SAY_NS 10000000000ull	/* ... at most this often */
/*
 * --host-new-rate's default: SYNs a second that miss, to the host.  From
 * lab/flood.sh on the lab (2 cores shared by the coprocessor's poller, the
 * host and the sender): docs/lab.md, npu/README.md.
 */
#define NPU_HOST_NEW_RATE 2000u

struct npu_opts {
	const char *link;
	uint32_t conns;
	uint32_t nhops;
	unsigned int workers;
	unsigned int sweep_ms;
	uint32_t host_new_rate;	/* SYNs a second that miss, to the host; 0 = no limit */
	int ports;		/* the ports EAL must have made; -1: at least one */
};

/* Counts the program keeps besides the fast path's (the FC_CLS_NPU ones). */
struct npu_worker {
	unsigned int id;
	unsigned int lcore;
	struct fp_worker *fpw;
	uint64_t cnt[FC_CNT_MAX];
	uint64_t busy[FP_MAX_PORTS];	/* TSC cycles on each port's bursts (the wire's BUSY_NS) */
};

static volatile int quit;
static struct fp *fp;
static struct lk *lk;
static struct rte_mempool *pool;
static uint16_t nports;
static struct npu_worker workers[RTE_MAX_LCORE];
static unsigned int nworkers;
static uint64_t npu_base[FC_CNT_MAX];	/* the program's counters at the last clear */
/* the link's up ring has one producer: workers take turns on it */
static rte_spinlock_t up_lock = RTE_SPINLOCK_INITIALIZER;

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void
count(struct npu_worker *w, enum fc_cnt c, uint64_t n)
{
	__atomic_store_n(&w->cnt[c], w->cnt[c] + n, __ATOMIC_RELAXED);
}

/* ---- the worker ---- */

/* Sends what the burst decided; returns how many frames it handled. */
/* A burst per port on this worker's queue; what a full queue refuses is counted and freed. */
static void
send_bursts(struct npu_worker *w, struct rte_mbuf *tx[FP_MAX_PORTS][FP_BURST_MAX],
	    const uint16_t ntx[FP_MAX_PORTS])
{
	for (uint16_t p = 0; p < nports; p++) {
		uint16_t sent;

		if (ntx[p] == 0)
			continue;
		sent = rte_eth_tx_burst(p, (uint16_t)w->id, tx[p], ntx[p]);
		if (sent < ntx[p]) {
			count(w, FC_CNT_NPU_TX_FULL, ntx[p] - sent);
			rte_pktmbuf_free_bulk(&tx[p][sent], ntx[p] - sent);
		}
	}
}

static void
dispatch(struct npu_worker *w, uint16_t in_port, struct rte_mbuf **m, uint16_t n,
	 const struct fp_out *out)
{
	struct rte_mbuf *tx[FP_MAX_PORTS][FP_BURST_MAX];
	uint16_t ntx[FP_MAX_PORTS] = { 0 };
	bool up = false, locked = false, gave_back = false;

	for (uint16_t i = 0; i < n; i++) {
		uint16_t d = out[i].dest;

		/* a give-back: the control thread reports it (fp_given_back) now */
		gave_back |= out[i].reason == FC_CNT_FROM_WIRE_TO_KN_TCP_FIN_SYN_RST ||
			     out[i].reason == FC_CNT_FROM_WIRE_TO_KN_TCP_MAX_RETRANS;

		if (d < nports) {
			tx[d][ntx[d]++] = m[i];
			continue;
		}
		if (d == FP_DEST_HOST || d == FP_DEST_HOST_AUX || d == FP_DEST_IPS) {
			uint16_t flags = d == FP_DEST_HOST ? LK_FRAME_HOST
					 : d == FP_DEST_HOST_AUX ? LK_FRAME_AUX : LK_FRAME_INSPECT;

			if (nworkers > 1 && !locked) {
				rte_spinlock_lock(&up_lock);
				locked = true;
			}
			if (m[i]->nb_segs == 1)
				switch (lk_frame_up_put(lk, in_port, flags,
							rte_pktmbuf_mtod(m[i], void *),
							m[i]->data_len)) {
				case 0: up = true; break;
				case -EMSGSIZE: count(w, FC_CNT_NPU_UP_TOO_BIG, 1); break;
				default: count(w, FC_CNT_NPU_UP_RING_FULL, 1); break;
				}
			else
				count(w, FC_CNT_NPU_UP_TOO_BIG, 1);
		} else if (d != FP_DEST_DROP) {
			count(w, FC_CNT_NPU_TX_NO_PORT, 1);
		}
		rte_pktmbuf_free(m[i]);
	}
	if (locked)
		rte_spinlock_unlock(&up_lock);
	if (up)
		lk_frame_up_kick(lk);
	if (gave_back)
		lk_npu_kick(lk);
	send_bursts(w, tx, ntx);
}

/*
 * Worker 0: the host's frames out of their ports, a burst per port.
 * Mbufs are taken only for frames that are waiting.  Returns how many
 * frames it took off the ring.
 */
static unsigned int
from_host(struct npu_worker *w)
{
	struct rte_mbuf *m[FP_BURST_MAX], *tx[FP_MAX_PORTS][FP_BURST_MAX];
	uint16_t ntx[FP_MAX_PORTS] = { 0 };
	unsigned int n = lk_frame_down_count(lk), got = 0, done = 0;

	if (n == 0)
		return 0;
	if (n > FP_BURST_MAX)
		n = FP_BURST_MAX;
	if (rte_pktmbuf_alloc_bulk(pool, m, n) != 0) {
		count(w, FC_CNT_NPU_NO_MBUF, 1);
		return 0;	/* the frames wait on the ring */
	}
	for (unsigned int i = 0; i < n; i++) {
		uint16_t port;
		int len = lk_frame_down_take(lk, &port, rte_pktmbuf_mtod(m[got], void *),
					     rte_pktmbuf_tailroom(m[got]));

		if (len == -EAGAIN)
			break;
		done++;
		if (len < 0) {
			count(w, FC_CNT_NPU_DOWN_BAD, 1);
			continue;	/* m[got] takes the next one */
		}
		m[got]->data_len = m[got]->pkt_len = (uint32_t)len;
		port = fp_from_host(w->fpw, port);
		if (port >= nports) {
			if (port != FP_DEST_DROP)
				count(w, FC_CNT_NPU_TX_NO_PORT, 1);
			continue;
		}
		tx[port][ntx[port]++] = m[got++];
	}
	if (got < n)
		rte_pktmbuf_free_bulk(&m[got], n - got);
	send_bursts(w, tx, ntx);
	return done;
}

/*
 * Adds a burst's time, read to sent, to the worker's busy cycles of its
 * port (an empty read is polling, not counted).  A TSC that stepped back
 * or jumped (a guest booted with tsc=unstable, as the lab's machines are:
 * one step back once made the figure wrap to 6.8e18 ns) counts nothing:
 * no burst takes a second.
 */
static inline void
busy_add(struct npu_worker *w, uint16_t port, uint64_t t0)
{
	uint64_t t1 = rte_rdtsc();

	if (t1 > t0 && t1 - t0 < rte_get_tsc_hz())
		__atomic_store_n(&w->busy[port], w->busy[port] + (t1 - t0), __ATOMIC_RELAXED);
}

static int
worker_main(void *arg)
{
	struct npu_worker *w = arg;
	unsigned int sleep_us = 0, empty = 0;
	uint64_t last_work = now_ns();

	while (!quit) {
		unsigned int work = 0;
		/*
		 * The clock is read once a turn that has frames, not once a
		 * turn: clock_gettime is a vDSO call, and a turn that finds
		 * the ports empty is most turns of a busy worker (on the lab's
		 * guest it was a quarter of the worker's time in a flood).
		 */
		uint64_t now = 0;

		for (uint16_t p = 0; p < nports; p++) {
			struct rte_mbuf *m[FP_BURST_MAX];
			struct fp_out out[FP_BURST_MAX];
			uint64_t t0 = rte_rdtsc();
			uint16_t n = rte_eth_rx_burst(p, (uint16_t)w->id, m, FP_BURST_MAX);

			if (n == 0)
				continue;
			if (now == 0)
				now = now_ns();
			fp_process_burst(w->fpw, p, m, n, now, out);
			dispatch(w, p, m, n, out);
			work += n;
			busy_add(w, p, t0);
		}
		if (w->id == 0)
			work += from_host(w);
		if (work) {
			last_work = now != 0 ? now : now_ns();
			sleep_us = 0;
			empty = 0;
			continue;
		}
		/*
		 * empty: the clock looked at every NPU_IDLE_CHECK turns while
		 * polling; once asleep, every turn (a poll between two sleeps)
		 */
		if (sleep_us == 0 &&
		    (++empty % NPU_IDLE_CHECK != 0 || now_ns() - last_work <= NPU_IDLE_SPIN_NS)) {
			rte_pause();
			continue;
		}
		/* idle: sleep, longer each time, up to a millisecond */
		sleep_us = sleep_us ? sleep_us * 2 : 10;
		if (sleep_us > NPU_IDLE_SLEEP_MAX_US)
			sleep_us = NPU_IDLE_SLEEP_MAX_US;
		usleep(sleep_us);
	}
	return 0;
}

/* ---- the control thread ---- */

/* Adds the program's own counters (since the last clear) into out. */
static void
npu_counters(void *arg, uint64_t out[FC_CNT_MAX])
{
	(void)arg;
	for (unsigned int k = 0; k < FC_CNT_MAX; k++) {
		uint64_t v = 0;

		if (fc_cnt_class(k) != FC_CLS_NPU)
			continue;
		for (unsigned int i = 0; i < nworkers; i++)
			v += __atomic_load_n(&workers[i].cnt[k], __ATOMIC_RELAXED);
		out[k] += v - npu_base[k];
	}
}

/* The wire's figures of every port as its ethdev counts them, less the last clear's. */
static uint64_t wire_base[FC_WIRE_PORTS][FC_WIRE_MAX];
/* the workers' time on port's bursts, ns (TSC cycles at rte_get_tsc_hz) */
static uint64_t
busy_ns(uint16_t port)
{
	uint64_t cycles = 0, hz = rte_get_tsc_hz();

	for (unsigned int i = 0; i < nworkers; i++)
		cycles += __atomic_load_n(&workers[i].busy[port], __ATOMIC_RELAXED);
	/* in two parts: cycles * 1e9 overflows 64 bits after a few seconds' work */
	return hz == 0 ? 0 : cycles / hz * 1000000000ull + cycles % hz * 1000000000ull / hz;
}

static unsigned int
wire_read(uint64_t out[FC_WIRE_PORTS][FC_WIRE_MAX])
{
	unsigned int n = nports < FC_WIRE_PORTS ? nports : FC_WIRE_PORTS;

	for (uint16_t p = 0; p < n; p++) {
		struct rte_eth_stats s;

		if (rte_eth_stats_get(p, &s) != 0)
			memset(&s, 0, sizeof(s));	/* a port without stats: nothing is said of it */
		out[p][FC_WIRE_RX_FRAMES] = s.ipackets;
		out[p][FC_WIRE_RX_MISSED] = npu_wire_rx_missed(p, s.imissed);
		out[p][FC_WIRE_RX_NOMBUF] = s.rx_nombuf;
		out[p][FC_WIRE_RX_ERRORS] = s.ierrors;
		/* read after imissed: not below it */
		out[p][FC_WIRE_KERNEL_RX_DROPPED] = npu_wire_kernel_rx_dropped(p, s.imissed);
		out[p][FC_WIRE_TX_FRAMES] = s.opackets;
		out[p][FC_WIRE_TX_ERRORS] = s.oerrors;
		out[p][FC_WIRE_BUSY_NS] = busy_ns(p);
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			out[p][k] -= wire_base[p][k];
	}
	return n;
}

static void
npu_clear(void *arg)
{
	uint64_t now[FC_CNT_MAX] = { 0 }, wire[FC_WIRE_PORTS][FC_WIRE_MAX];
	unsigned int n;

	npu_counters(arg, now);
	for (unsigned int k = 0; k < FC_CNT_MAX; k++)
		npu_base[k] += now[k];
	n = wire_read(wire);
	for (unsigned int p = 0; p < n; p++)
		for (unsigned int k = 0; k < FC_WIRE_MAX; k++)
			wire_base[p][k] += wire[p][k];
}

static void
counters_publish(void)
{
	uint64_t c[FC_CNT_MAX], wire[FC_WIRE_PORTS][FC_WIRE_MAX];
	unsigned int n;

	fp_counters_read(fp, c);
	npu_counters(NULL, c);
	n = wire_read(wire);	/* after: a port has read at least what the fast path counted */
	lk_counters_publish(lk, c, now_ns());
	lk_wire_publish(lk, wire, n);
}

/*
 * Serves the commands waiting, at most a ring's worth per client per call
 * (no client holds the others up), each only when its answer has room
 * (a command taken is always answered).  Returns how many.
 */
static unsigned int
serve(void)
{
	unsigned int done = 0;

	for (unsigned int c = 0; c < LK_CLIENTS; c++) {
		const struct npu_cmd_env env = { .fp = fp, .npu_counters = npu_counters,
						 .npu_clear = npu_clear, .client = (int)c };
		unsigned int n = 0;

		for (unsigned int taken = 0; taken < LK_CMD_SLOTS && lk_ans_room(lk, c); taken++) {
			struct fc_cmd_hdr h;
			struct fc_ans_hdr a;
			uint64_t payload[FC_CMD_MAX_PAYLOAD / 8 + 1];
			uint64_t ans[FC_CMD_MAX_PAYLOAD / 8 + 1];
			int rc = lk_cmd_take(lk, c, &h, payload);

			if (rc == -EAGAIN)
				break;
			if (rc != 0) {
				if (h.op == 0xffff)
					continue;	/* nothing to answer to (counted by the link) */
				a = (struct fc_ans_hdr){ .op = h.op, .tag = h.tag, .rc = rc };
			} else {
				npu_cmd_exec(&env, &h, payload, now_ns(), &a, ans);
			}
			lk_ans_put(lk, c, &a, ans);	/* room checked above */
			if (h.op == FC_CMD_COUNTER_CLEAR)
				counters_publish();
			n++;
		}
		if (n) {
			lk_ans_kick(lk, c);
			done += n;
		}
	}
	return done;
}

/*
 * Reports what the workers gave back (at once), and sweeps part of the
 * table when `budget` is not 0 (npu_ev.h: while the lease is held the
 * sweep waits for room on the event ring; without it, aging goes on and
 * what does not fit is lost).  A lost event is counted here
 * (NPU_EVENT_RING_FULL) and in the region, and the host hears that some
 * were (lk_event_take's -EOVERFLOW) and reconciles with a read of the table.
 */
static void
events(uint32_t budget)
{
	uint64_t lost = npu_ev_post(fp, lk, now_ns(), budget);

	if (lost)
		count(&workers[0], FC_CNT_NPU_EVENT_RING_FULL, lost);
}

/* The host's lease: lapsed now?  Said once a lapse, on the log. */
static void
lease_tick(void)
{
	struct fp_lease l;

	if (!fp_lease_tick(fp, now_ns()))
		return;
	fp_lease_get(fp, now_ns(), &l);
	fprintf(stderr, "flowcut-npu: the host's lease lapsed (not renewed within %u ms, "
		"lapse %u): failing closed - cut connections drop, every other frame goes "
		"to the host\n", l.ms, l.lapses);
}

static bool
given_back_pending(void *unused)
{
	(void)unused;
	return fp_given_back_pending(fp);
}

/*
 * A turn of the control loop that took long (commands, events or the
 * counters window): said, at most every NPU_SLOW_SAY_NS, with where the
 * time went - everything the host waits for waited that long.
 */
static void
slow_turn(uint64_t t0, uint64_t t_cmds, uint64_t t_events, uint64_t t_end, uint64_t *said)
{
	if (t_end - t0 <= NPU_SLOW_NS || t_end - *said <= NPU_SLOW_SAY_NS)
		return;
	*said = t_end;
	fprintf(stderr, "flowcut-npu: a turn of the control loop took %" PRIu64 " ms (commands %"
		PRIu64 ", events %" PRIu64 ", counters window %" PRIu64 ")\n",
		(t_end - t0) / 1000000, (t_cmds - t0) / 1000000, (t_events - t_cmds) / 1000000,
		(t_end - t_events) / 1000000);
}

static void
control_loop(const struct npu_opts *o)
{
	uint64_t sweep_ns = (uint64_t)o->sweep_ms * 1000000ull;
	uint64_t next_sweep = now_ns() + sweep_ns, next_publish = 0, last_work = now_ns();
	/* the whole table in ten sweeps */
	uint32_t budget = fp_conn_capacity(fp) / 10 + 1;

	uint64_t said = 0;	/* when a slow turn was last said */

	while (!quit) {
		uint64_t now = now_ns();
		bool worked = serve() > 0;
		uint64_t t_cmds = now_ns(), t_events;

		lease_tick();

		if (worked)
			last_work = now;
		/* sweeps and the counters window keep their times, busy or not */
		if (now >= next_sweep) {
			events(budget);
			next_sweep = now + sweep_ns;
		} else {
			events(0);
		}
		t_events = now_ns();
		if (now >= next_publish) {
			counters_publish();
			next_publish = now + NPU_PUBLISH_NS;
		}
		slow_turn(now, t_cmds, t_events, now_ns(), &said);
		if (worked)
			continue;
		if (now - last_work < NPU_IDLE_SPIN_NS) {
			rte_pause();
			continue;
		}
		/* sleep until rung, or the next sweep or publish */
		{
			uint64_t next = next_sweep < next_publish ? next_sweep : next_publish;
			int ms = next > now ? (int)((next - now) / 1000000ull) + 1 : 0;
			uint64_t t0 = now_ns(), late;

			lk_npu_wait(lk, ms, given_back_pending, NULL);
			late = now_ns() - t0;
			late = late > (uint64_t)ms * 1000000ull ? late - (uint64_t)ms * 1000000ull : 0;
			if (late > NPU_SLOW_NS && now_ns() - said > NPU_SLOW_SAY_NS) {
				said = now_ns();
				fprintf(stderr, "flowcut-npu: the control thread woke %" PRIu64 " ms late "
					"(short of CPU): commands, events and the counters window "
					"waited\n", late / 1000000);
			}
		}
	}
}

/* ---- set-up ---- */

/* ports 0..n-1 stopped and closed (stopping one that never started does
 * nothing); one that will not is said, nothing more */
static void
ports_close(uint16_t n)
{
	for (uint16_t p = 0; p < n; p++) {
		int rc = rte_eth_dev_stop(p);

		if (rc != 0)
			fprintf(stderr, "flowcut-npu: port %u did not stop: %s\n", p, rte_strerror(-rc));
		rc = rte_eth_dev_close(p);
		if (rc != 0)
			fprintf(stderr, "flowcut-npu: port %u did not close: %s\n", p, rte_strerror(-rc));
	}
}

static int
port_init(uint16_t port, unsigned int queues)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	int rc;

	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0)
		return rc;
	if (info.max_rx_queues < queues || info.max_tx_queues < queues) {
		fprintf(stderr, "flowcut-npu: port %u (%s) has %u rx / %u tx queues, %u workers "
			"need one each\n", port, info.driver_name, info.max_rx_queues,
			info.max_tx_queues, queues);
		return -EINVAL;
	}
	if (queues > 1) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_IP & info.flow_type_rss_offloads;
	}
	rc = rte_eth_dev_configure(port, (uint16_t)queues, (uint16_t)queues, &conf);
	for (unsigned int q = 0; rc == 0 && q < queues; q++)
		rc = rte_eth_rx_queue_setup(port, (uint16_t)q, NPU_RXD,
					    rte_eth_dev_socket_id(port), NULL, pool);
	for (unsigned int q = 0; rc == 0 && q < queues; q++)
		rc = rte_eth_tx_queue_setup(port, (uint16_t)q, NPU_TXD,
					    rte_eth_dev_socket_id(port), NULL);
	if (rc == 0)
		rc = rte_eth_dev_start(port);
	/* the fast path checks MACs itself; a port that cannot is told of, not refused */
	if (rc == 0 && rte_eth_promiscuous_enable(port) != 0)
		fprintf(stderr, "flowcut-npu: port %u: promiscuous mode refused; only frames to "
			"its own MAC arrive\n", port);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcut-npu [EAL options] -- [--link PATH] [--conns N] [--nhops N]\n"
		"                   [--workers N] [--sweep-ms N] [--host-new-rate N] [--ports N]\n"
		"  --link      the link's shared memory file (default " LK_PATH ";\n"
		"              its directory made 0700 if missing, root's and writable by no other)\n"
		"  --conns     connection table size (default 1048576)\n"
		"  --nhops     next-hop table size (default 4096)\n"
		"  --workers   worker lcores (default 1; more need RSS on every port)\n"
		"  --sweep-ms  aging sweep period (default 100)\n"
		"  --host-new-rate  TCP SYNs a second that match no connection handed to\n"
		"              the host, for the whole coprocessor; over it they drop\n"
		"              (FROM_WIRE_DROP_NEW_CONN_RATE); 0 = no limit (default %u)\n"
		"  --ports     the ports EAL must have made, 0 to %u (default: at least one;\n"
		"              0 runs it on the link alone, as flowcut-bench does)\n",
		NPU_HOST_NEW_RATE, FP_MAX_PORTS);
}

static int
parse_args(int argc, char **argv, struct npu_opts *o)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "conns", required_argument, NULL, 'c' },
		{ "nhops", required_argument, NULL, 'n' },
		{ "workers", required_argument, NULL, 'w' },
		{ "sweep-ms", required_argument, NULL, 's' },
		{ "host-new-rate", required_argument, NULL, 'r' },
		{ "ports", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long v = 0;
		char *end = NULL;

		if (c == 'h' || c == '?') {
			usage();
			return -1;
		}
		if (c != 'l') {
			unsigned long max = c == 'p' ? FP_MAX_PORTS : 1ul << 26;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || (v == 0 && c != 'r' && c != 'p') ||
			    v > max) {
				fprintf(stderr, "flowcut-npu: --%s: '%s' is not a number from %d to %lu\n",
					c == 'c' ? "conns" : c == 'n' ? "nhops" : c == 'w' ? "workers"
					: c == 'r' ? "host-new-rate" : c == 'p' ? "ports" : "sweep-ms",
					optarg, c == 'r' || c == 'p' ? 0 : 1, max);
				return -1;
			}
		}
		switch (c) {
		case 'l': o->link = optarg; break;
		case 'c': o->conns = (uint32_t)v; break;
		case 'n': o->nhops = (uint32_t)v; break;
		case 'w': o->workers = (unsigned int)v; break;
		case 's': o->sweep_ms = (unsigned int)v; break;
		case 'r': o->host_new_rate = (uint32_t)v; break;
		case 'p': o->ports = (int)v; break;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "flowcut-npu: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct npu_opts o = { .link = LK_PATH, .conns = 1048576, .nhops = 4096,
			      .workers = 1, .sweep_ms = 100, .host_new_rate = NPU_HOST_NEW_RATE,
			      .ports = -1 };
	struct fp_params fpp = { .name = "npu", .socket_id = (int)SOCKET_ID_ANY };
	unsigned int lcore, i = 0;
	bool thp = false;
	char rundir[4096];
	int n = rte_eal_init(argc, argv);

	if (n < 0) {
		fprintf(stderr, "flowcut-npu: EAL: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	if (parse_args(argc - n, argv + n, &o) != 0)
		return 2;
	if (rte_lcore_count() < o.workers + 1) {
		fprintf(stderr, "flowcut-npu: %u workers and the control thread need %u lcores; "
			"EAL has %u (give -l)\n", o.workers, o.workers + 1, rte_lcore_count());
		return 2;
	}
	nports = rte_eth_dev_count_avail();
	/* EAL goes on when a device fails its probe: a coprocessor short of
	 * its wire would be programmed and forward nothing there */
	if (o.ports < 0 && nports == 0) {
		fprintf(stderr, "flowcut-npu: no ports: EAL made none (a device it could not "
			"make is said above; --ports 0 runs it on the link alone)\n");
		return 1;
	}
	if (o.ports >= 0 && nports != (unsigned int)o.ports) {
		fprintf(stderr, "flowcut-npu: EAL made %u ports, --ports says %d (a device it "
			"could not make is said above)\n", nports, o.ports);
		return 1;
	}
	if (nports > FP_MAX_PORTS) {
		fprintf(stderr, "flowcut-npu: %u ports, at most %u\n", nports, FP_MAX_PORTS);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	fpp.max_conns = o.conns;
	fpp.max_nhops = o.nhops;
	fpp.max_workers = o.workers;
	/* no hugepages (--no-huge): the tables on transparent huge pages instead
	 * of DPDK's 4 KiB ones, a TLB miss less per frame at scale (fp_heap.c) */
	if (!rte_eal_has_hugepages()) {
		fpp.socket_id = fp_heap_create("npu_tables", &fpp, &thp);
		if (fpp.socket_id < 0) {
			fprintf(stderr, "flowcut-npu: the tables' heap (%u connections): %s\n",
				o.conns, rte_strerror(rte_errno));
			return 1;
		}
	}
	fp = fp_create(&fpp);
	/* before the workers run (fp.h); fails only for a rate the options refuse */
	if (fp != NULL && fp_new_conn_rate_set(fp, o.host_new_rate) != 0) {
		fprintf(stderr, "flowcut-npu: --host-new-rate %u refused\n", o.host_new_rate);
		return 2;
	}
	pool = rte_pktmbuf_pool_create("npu_pool", NPU_POOL_SIZE, 256, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (fp == NULL || pool == NULL) {
		fprintf(stderr, "flowcut-npu: tables (%u connections): %s\n", o.conns,
			rte_strerror(rte_errno));
		return 1;
	}
	for (uint16_t p = 0; p < nports; p++) {
		int rc = port_init(p, o.workers);

		npu_wire_open(p);

		if (rc != 0) {
			fprintf(stderr, "flowcut-npu: port %u: %s\n", p, rte_strerror(-rc));
			/* closed, the half-made port too: an AF_XDP port has put
			 * its XDP program on the interface by now, and one left
			 * there refuses the next coprocessor's (EBUSY) */
			ports_close(p + 1);
			return 1;
		}
	}
	/* the link last: a host sees the boot once the ports run */
	lk = lk_create(o.link);
	if (lk == NULL) {
		fprintf(stderr, "flowcut-npu: link %s%s\n", lk_error(),
			errno == EBUSY ? " (another flowcut-npu, still running)" : "");
		return 1;
	}
	nworkers = o.workers;
	RTE_LCORE_FOREACH_WORKER(lcore) {
		if (i == nworkers)
			break;
		workers[i].id = i;
		workers[i].lcore = lcore;
		workers[i].fpw = fp_worker_create(fp, i);
		if (workers[i].fpw == NULL) {
			fprintf(stderr, "flowcut-npu: worker %u: %s\n", i, rte_strerror(rte_errno));
			return 1;
		}
		if (rte_eal_remote_launch(worker_main, &workers[i], lcore) != 0) {
			fprintf(stderr, "flowcut-npu: worker %u: lcore %u is busy\n", i, lcore);
			quit = 1;	/* stop those already started */
			rte_eal_mp_wait_lcore();
			return 1;
		}
		i++;
	}
	printf("flowcut-npu: %u ports, %u workers, %u connections (tables on %s), link %s, "
	       "boot %016" PRIx64 "\n", nports, nworkers, o.conns,
	       rte_eal_has_hugepages() ? "hugepages" : thp ? "transparent huge pages"
						       : "4 KiB pages: THP is off",
	       o.link, lk_boot_id(lk));
	fflush(stdout);

	control_loop(&o);

	rte_eal_mp_wait_lcore();
	ports_close(nports);
	counters_publish();
	for (i = 0; i < nworkers; i++)
		fp_worker_destroy(workers[i].fpw);
	fp_destroy(fp);
	lk_close(lk);
	snprintf(rundir, sizeof(rundir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(rundir);	/* empty with --no-shconf; EAL leaves it */
	return 0;
}
