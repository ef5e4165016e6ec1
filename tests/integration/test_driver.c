/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver's binding (fd_offload) against the real fast path and the
 * real kernel conntrack, in one process:
 *
 *   test thread: fd_offload  --fd_cmds_q (fd_cmdq)-->  link region  --> serving
 *   thread: npu_cmd_exec on a real fp (as flowcut-npu's control thread)
 *   conntrack: the kernel's, in a network namespace of the test's own
 *   (unshare), with two veth front ports, their addresses and permanent
 *   neighbours; states made with NFCT_Q_CREATE.
 *
 * The test plays flowcutd's main loop (events, rtnetlink's changes through
 * the route cache, coprocessor events, resync) and looks at the fast
 * path's table directly.  Root only: without
 * CAP_SYS_ADMIN or conntrack, every case reports SKIP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter.h>
#include <net/if.h>
#include <poll.h>
#include <rte_mbuf.h>
#include <rte_memory.h>

#include <flowcut/fc_ctl.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fc_netns.h"
#include "fd_cmdq.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_cut.h"
#include "fd_explain.h"
#include "fd_frames.h"
#include "fd_lease.h"
#include "fd_nft.h"
#include "fd_offload.h"
#include "fd_page.h"
#include "fd_rtcache.h"
#include "fd_trigger.h"
#include "fd_watch.h"
#include "fd_why.h"
#include "fp.h"
#include "lk.h"
#include "npu_cmd.h"

#define BIT 0x40000000u
static const uint8_t MAC0[6] = { 0x02, 0xfc, 0, 0, 0, 1 }, MAC1[6] = { 0x02, 0xfc, 0, 0, 0, 2 };
static const uint8_t CLIENT_MAC[6] = { 0x02, 0, 0, 0, 0, 0x0a };
static const uint8_t SERVER_MAC[6] = { 0x02, 0, 0, 0, 0, 0x0b };

static const char *skip_why;	/* set: every case skips */
static char link_dir[64], link_path[80];	/* the link in a 0700 directory of its own */
static struct lk *npu_lk, *host_lk;
static struct fp *fp;
static struct fp_worker *worker;
static struct rte_mempool *pool;
static pthread_mutex_t fp_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t server;
static volatile int stop;
static struct fd_cmds cmds;
static struct fd_cmdq *cmdq;
static struct fd_offload *off;
static struct fd_cut *cut;
/* the binding's parts, opened by the test as flowcutd opens them */
static struct fd_ct *ct_socks;
static struct fd_route *route;
static struct fd_route_watch *rtw;
static struct fd_rtcache *rtc;
static struct fd_nhop *nhops;
static struct fd_ct_io ctio;
static struct fd_route_io rtio;
static struct nfct_handle *nfct;	/* the test's own conntrack handle */
static unsigned int boots;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The coprocessor's control thread: client 0's commands, on the real fp. */
static void *
serve(void *arg)
{
	(void)arg;
	while (!stop) {
		struct fc_cmd_hdr h;
		uint8_t payload[FC_CMD_MAX_PAYLOAD], ans[FC_CMD_MAX_PAYLOAD];
		struct fc_ans_hdr a;
		unsigned int n = 0;

		lk_npu_wait(npu_lk, 5, NULL, NULL);
		while (lk_ans_room(npu_lk, 0) && lk_cmd_take(npu_lk, 0, &h, payload) == 0) {
			pthread_mutex_lock(&fp_lock);
			npu_cmd_exec(&(struct npu_cmd_env){ .fp = fp }, &h, payload, now_ns(), &a, ans);
			pthread_mutex_unlock(&fp_lock);
			lk_ans_put(npu_lk, 0, &a, ans);	/* room checked */
			n++;
		}
		if (n)
			lk_ans_kick(npu_lk, 0);
	}
	return NULL;
}

/*
 * The cut's order, seen from the command interface: when the coprocessor
 * answers a drop (CONN_MODIFY_FP_VERDICT, CONN_MODIFY_FP, or a
 * FLOW_CREATE_FP made with verdict DROP), the fast path already drops the
 * connection and its conntrack state is still there - checked in the
 * completion, before the cut's own completion kills it.
 */
static struct fd_cmds real_cmds;
static struct {
	unsigned int drops_answered;	/* drops whose answer found the order right */
	unsigned int wrong;		/* ... found it wrong */
} spy;

struct spy_post {
	uint16_t op;
	bool made_cut;		/* FLOW_CREATE_FP with verdict DROP */
	uint64_t id;
	fd_cmds_done_fn *done;
	void *dctx;
};

/* Is the connection's conntrack state (its original key) still there? */
static bool
state_there(const struct fc_key *k)
{
	struct nf_conntrack *t = nfct_new();
	bool there;

	assert_non_null(t);
	nfct_set_attr_u8(t, ATTR_L3PROTO, k->family == 4 ? AF_INET : AF_INET6);
	if (k->family == 4) {
		nfct_set_attr_u32(t, ATTR_IPV4_SRC, *(const uint32_t *)k->src);
		nfct_set_attr_u32(t, ATTR_IPV4_DST, *(const uint32_t *)k->dst);
	} else {
		nfct_set_attr(t, ATTR_IPV6_SRC, k->src);
		nfct_set_attr(t, ATTR_IPV6_DST, k->dst);
	}
	nfct_set_attr_u8(t, ATTR_L4PROTO, k->proto);
	nfct_set_attr_u16(t, ATTR_PORT_SRC, k->sport);
	nfct_set_attr_u16(t, ATTR_PORT_DST, k->dport);
	there = nfct_query(nfct, NFCT_Q_GET, t) == 0;
	nfct_destroy(t);
	return there;
}

static void
spy_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct spy_post *p = dctx;

	if (rc == 0 && p->made_cut && len >= sizeof(p->id))
		memcpy(&p->id, ans, sizeof(p->id));	/* the new connection's id */
	if (rc == 0 && (p->op == FC_CMD_CONN_MODIFY_FP_VERDICT || p->op == FC_CMD_CONN_MODIFY_FP ||
			p->made_cut)) {
		struct fp_conn_info ci;
		bool dropping;

		pthread_mutex_lock(&fp_lock);
		dropping = fp_conn_get(fp, p->id, &ci) == 0 &&
			   (ci.verdict == FC_VERDICT_DROP ||
			    (ci.mf[0].action == FC_ACTION_DROP && ci.mf[1].action == FC_ACTION_DROP));
		pthread_mutex_unlock(&fp_lock);
		if (dropping && state_there(&ci.mf[0].key))
			spy.drops_answered++;
		else
			spy.wrong++;
	}
	p->done(p->dctx, rc, ans, len);
	free(p);
}

static int
spy_post_fn(void *ctx, uint16_t op, const void *payload, uint16_t len, fd_cmds_done_fn *done,
	    void *dctx)
{
	struct spy_post *p = malloc(sizeof(*p));
	int rc;

	(void)ctx;
	assert_non_null(p);
	*p = (struct spy_post){ .op = op, .done = done, .dctx = dctx };
	if (len >= sizeof(uint64_t))
		memcpy(&p->id, payload, sizeof(p->id));
	p->made_cut = op == FC_CMD_FLOW_CREATE_FP &&
		      ((const struct fc_cmd_flow_create *)payload)->verdict == FC_VERDICT_DROP;
	rc = fd_cmds_post(&real_cmds, op, payload, len, spy_done, p);
	if (rc != 0)
		free(p);
	return rc;
}

/*
 * A ruleset change's order, seen from the command interface: when the new
 * revision is sent, nothing per state has been done yet (the state's mark
 * bit is still set): the revision is the change's first step, whatever
 * the table's size.  Armed with the state and a conntrack handle.
 */
static struct {
	struct fd_ct *c;
	const struct nf_conntrack *state;
	bool seen;
	uint32_t mark;		/* the state's mark when FW_STATE_REV_SET was sent */
} rev_probe;

static uint32_t mark_now(struct fd_ct *c, const struct nf_conntrack *ct);

static int
spy_call(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t cap)
{
	(void)ctx;
	if (op == FC_CMD_FW_STATE_REV_SET && rev_probe.state != NULL && !rev_probe.seen) {
		rev_probe.mark = mark_now(rev_probe.c, rev_probe.state);
		rev_probe.seen = true;
	}
	return fd_cmds_call(&real_cmds, op, payload, len, ans, cap);
}

static int
spy_flush(void *ctx, int ms)
{
	(void)ctx;
	return fd_cmds_flush(&real_cmds, ms);
}

/* A coprocessor booting: a fresh fast path with its ports (flowcutd's program()). */
static void
boot(void)
{
	char name[16];
	struct fp_params p = { .max_conns = 256, .max_nhops = 16, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY };
	struct fp_lif l0 = { .port = 0, .mtu = 1500 }, l1 = { .port = 1, .mtu = 1500 };
	struct fp *old = fp, *nfp;

	snprintf(name, sizeof(name), "drv%u", boots++);
	p.name = name;
	nfp = fp_create(&p);
	assert_non_null(nfp);
	memcpy(l0.mac, MAC0, 6);
	memcpy(l1.mac, MAC1, 6);
	assert_int_equal(fp_lif_set(nfp, 0, &l0), 0);
	assert_int_equal(fp_lif_set(nfp, 1, &l1), 0);
	assert_int_equal(fp_cfg_set(nfp, FC_CFG_OFFLOAD | FC_CFG_IPS), 0);
	pthread_mutex_lock(&fp_lock);
	if (worker)
		fp_worker_destroy(worker);
	fp = nfp;
	worker = fp_worker_create(fp, 0);
	pthread_mutex_unlock(&fp_lock);
	assert_non_null(worker);
	if (old)
		fp_destroy(old);
}

/* the binding's settings, as flowcutd gives them */
static struct fd_offload_cfg cfg = { .nports = 2, .mark_bit = BIT, .cut_in_hardware = true,
				     .timeout_s = 30, .first_frame_reads = true };

/*
 * As flowcutd: conntrack, routes (the watch socket, then the route cache
 * over them) and next hops opened, the binding and the cut over them.
 */
static void
bind_open(void)
{
	ct_socks = fd_ct_open();
	route = fd_route_open();
	rtw = fd_route_watch_open();
	assert_non_null(ct_socks);
	assert_non_null(route);
	assert_non_null(rtw);
	rtio = fd_route_io_of(route);
	rtc = fd_rtcache_open(&rtio, FD_RTCACHE_ROUTES, FD_RTCACHE_NEIGHS);
	assert_non_null(rtc);
	rtio = fd_rtcache_io(rtc);
	nhops = fd_nhop_open(&cmds, cfg.nports, cfg.mac);
	assert_non_null(nhops);
	ctio = fd_ct_io_of(ct_socks);
	off = fd_offload_open(&cmds, &ctio, &rtio, nhops, &cfg);
	assert_non_null(off);
	cut = fd_cut_open(&(struct fd_cut_parts){ .off = off, .ct = ctio, .cmds = cmds,
						  .cut_in_hardware = cfg.cut_in_hardware });
	assert_non_null(cut);
}

static void
bind_close(void)
{
	fd_cut_close(cut);
	fd_offload_close(off);
	fd_nhop_close(nhops);
	fd_rtcache_close(rtc);
	fd_route_watch_close(rtw);
	fd_route_close(route);
	fd_ct_close(ct_socks);
}

/* The settings flowcutd applies: the binding's and the cut's together. */
static void
settings(bool cut_in_hardware, uint16_t timeout_s)
{
	fd_offload_settings(off, cut_in_hardware, timeout_s);
	fd_cut_settings(cut, cut_in_hardware);
}

static int
setup(void **state)
{

	(void)state;
	skip_why = fc_netns_front_ports();
	if (skip_why)
		return 0;
	if (fc_eal_init("test_driver", 128) != 0) {
		skip_why = "no DPDK EAL";
		return 0;
	}
	pool = rte_pktmbuf_pool_create("drvpool", 256, 0, 0, 2048, SOCKET_ID_ANY);
	assert_non_null(pool);
	boot();
	snprintf(link_dir, sizeof(link_dir), "/dev/shm/test_driver-XXXXXX");
	assert_non_null(mkdtemp(link_dir));
	snprintf(link_path, sizeof(link_path), "%s/link", link_dir);
	npu_lk = lk_create(link_path);
	if (npu_lk == NULL)
		print_error("link %s\n", lk_error());
	assert_non_null(npu_lk);
	host_lk = lk_attach(link_path, 0);
	assert_non_null(host_lk);
	assert_int_equal(pthread_create(&server, NULL, serve, NULL), 0);
	/* as flowcutd: through the command client, commands in flight together */
	cmdq = fd_cmdq_create(host_lk, &(struct fd_cmdq_params){ 0 });
	assert_non_null(cmdq);
	real_cmds = fd_cmds_q(cmdq);
	cmds = (struct fd_cmds){ .call = spy_call, .post = spy_post_fn, .flush = spy_flush };
	cfg.ifindex[0] = if_nametoindex("fp0");
	cfg.ifindex[1] = if_nametoindex("fp1");
	memcpy(cfg.mac[0], MAC0, 6);
	memcpy(cfg.mac[1], MAC1, 6);
	bind_open();
	nfct = nfct_open(CONNTRACK, 0);
	assert_non_null(nfct);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (skip_why)
		return 0;
	bind_close();
	fd_cmdq_destroy(cmdq);
	nfct_close(nfct);
	stop = 1;
	pthread_join(server, NULL);
	lk_close(host_lk);
	lk_close(npu_lk);
	unlink(link_path);
	rmdir(link_dir);
	fp_worker_destroy(worker);
	fp_destroy(fp);
	return 0;	/* the namespace goes with the process */
}

/* Each case: no state in conntrack, nothing in the fast path, the binding resynced. */
static int
fresh(void **state)
{
	uint8_t family = AF_INET;

	(void)state;
	if (skip_why)
		return 0;
	nfct_query(nfct, NFCT_Q_FLUSH, &family);
	family = AF_INET6;
	nfct_query(nfct, NFCT_Q_FLUSH, &family);
	settings(true, 30);
	boot();			/* an empty fast path: a resync keeps cut connections */
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
	pthread_mutex_lock(&fp_lock);
	fp_sweep(fp, now_ns(), 0, (struct fp_event[64]){ 0 }, 64);	/* reclaimed: freed */
	assert_int_equal(fp_conn_count(fp), 0);
	pthread_mutex_unlock(&fp_lock);
	return 0;
}

/* A state as conntrack would hold it; `dnat`: orig to .99:8080, replied by .10:80. */
static struct nf_conntrack *
state4(uint8_t tcp_state, uint32_t status, uint32_t mark, bool dnat)
{
	struct nf_conntrack *ct = nfct_new();

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
	nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr("198.18.0.10"));
	nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr(dnat ? "198.19.0.99" : "198.19.0.10"));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr("198.19.0.10"));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr("198.18.0.10"));
	nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(40000));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(dnat ? 8080 : 80));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(80));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(40000));
	nfct_set_attr_u8(ct, ATTR_TCP_STATE, tcp_state);
	nfct_set_attr_u32(ct, ATTR_STATUS, status);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 300);
	nfct_set_attr_u32(ct, ATTR_MARK, mark);
	return ct;
}

static void
create(const struct nf_conntrack *ct)
{
	if (nfct_query(nfct, NFCT_Q_CREATE, ct) != 0)
		fail_msg("NFCT_Q_CREATE: %s", strerror(errno));
}

/* rtnetlink's changes as flowcutd hands them on: the route cache's first. */
static void
on_rt_change(void *arg, const struct fd_rt_change *c)
{
	fd_rtcache_change(rtc, c);
	fd_offload_rt_change(off, c);
	if (c->what == FD_RT_ROUTE)
		(*(unsigned int *)arg)++;
}

/* What rtnetlink said, as flowcutd's rt_events: the paths looked at after it.  Route changes read. */
static unsigned int
rt_turn(void)
{
	uint64_t bad = 0;
	unsigned int routes = 0;
	int rc = fd_route_watch_read(rtw, 64, on_rt_change, &routes, &bad);

	if (rc == -ENOBUFS) {
		(void)fd_rtcache_lost(rtc);
		fd_offload_rt_lost(off);
	}
	fd_offload_paths(off);
	return routes;
}

/* The binding's turn, as flowcutd's main loop gives it, for `ms`. */
static void
turns(unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;

	while (now_ns() < end) {
		fd_offload_events(off);
		(void)rt_turn();
		fd_offload_work(off);
		usleep(2000);
	}
}

/* The binding's turns until its jobs are done (a ruleset change's unmark), without a wait. */
static void
jobs_done(void)
{
	for (unsigned int t = 0; fd_offload_busy(off); t++) {
		assert_true(t < 100000);
		fd_offload_events(off);
		fd_offload_work(off);
	}
}

static struct fd_offload_stats
stats(void)
{
	struct fd_offload_stats s;

	fd_offload_stats(off, &s);
	return s;
}

/* The fast path's only connection. */
static struct fp_conn_info
the_conn(void)
{
	struct fp_conn_info ci;
	uint32_t slot = 0;

	pthread_mutex_lock(&fp_lock);
	assert_int_equal(fp_conn_count(fp), 1);
	assert_int_equal(fp_conn_next(fp, &slot, &ci), 0);
	pthread_mutex_unlock(&fp_lock);
	return ci;
}

static uint32_t
conns(void)
{
	uint32_t n;

	pthread_mutex_lock(&fp_lock);
	n = fp_conn_count(fp);
	pthread_mutex_unlock(&fp_lock);
	return n;
}

#define SKIP_UNLESS_READY()						\
	do {								\
		if (skip_why) {						\
			print_message("skipped: %s\n", skip_why);	\
			skip();						\
		}							\
	} while (0)

#define ASSURED (IPS_ASSURED | IPS_SEEN_REPLY)

static void
check_key(const struct fc_key *k, uint16_t port, const char *src, uint16_t sport,
	  const char *dst, uint16_t dport)
{
	struct fc_key want;

	fc_key4(&want, IPPROTO_TCP, src, sport, dst, dport);
	want.port = port;
	if (memcmp(k, &want, sizeof(want)) != 0)
		fail_msg("key on port %u is not %s:%u -> %s:%u", port, src, sport, dst, dport);
}

static void
test_offloaded_with_keys_nat_action(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT | 0x5, true);
	struct fp_conn_info ci;
	uint64_t offloaded;

	(void)state;
	SKIP_UNLESS_READY();
	offloaded = stats().offloaded;
	create(ct);
	nfct_destroy(ct);
	turns(300);
	assert_int_equal(stats().offloaded, offloaded + 1);
	ci = the_conn();
	assert_int_equal(ci.state, FP_CONN_VALID);
	/* in on fp0 from the client to the DNAT address; in on fp1 from the real server */
	check_key(&ci.mf[0].key, 0, "198.18.0.10", 40000, "198.19.0.99", 8080);
	check_key(&ci.mf[1].key, 1, "198.19.0.10", 80, "198.18.0.10", 40000);
	assert_int_equal(ci.mf[0].action, FC_ACTION_IPS);
	assert_int_equal(ci.mf[1].action, FC_ACTION_IPS);
	assert_int_equal(ci.mf[0].timeout_s, 30);
	assert_true(ci.mf[0].nat || ci.mf[1].nat);
}

static void
test_not_qualifying_stays(void **state)
{
	struct nf_conntrack *a = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, 0x5, false);
	struct nf_conntrack *b = state4(TCP_CONNTRACK_SYN_RECV, IPS_SEEN_REPLY, BIT, false);
	uint64_t offloaded;

	(void)state;
	SKIP_UNLESS_READY();
	offloaded = stats().offloaded;
	create(a);	/* not through the rules */
	turns(200);
	assert_int_equal(conns(), 0);
	nfct_query(nfct, NFCT_Q_DESTROY, a);
	create(b);	/* through the rules, not established */
	turns(200);
	assert_int_equal(conns(), 0);
	assert_int_equal(stats().offloaded, offloaded);
	nfct_destroy(a);
	nfct_destroy(b);
}

static void
test_destroy_takes_out(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT, false);
	uint64_t removed;

	(void)state;
	SKIP_UNLESS_READY();
	removed = stats().removed;
	create(ct);
	turns(200);
	assert_int_equal(conns(), 1);
	assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct), 0);
	turns(200);
	assert_int_equal(stats().removed, removed + 1);
	pthread_mutex_lock(&fp_lock);
	fp_sweep(fp, now_ns(), 0, (struct fp_event[4]){ 0 }, 4);	/* frees after the grace period */
	pthread_mutex_unlock(&fp_lock);
	assert_int_equal(conns(), 0);
	nfct_destroy(ct);
}

/* One TCP frame of the connection through the fast path's worker: what became of it. */
static struct fp_out
frame_out(uint16_t port, const struct fc_frame_spec *s)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t buf[2048];
	size_t len = fc_frame_build(s, buf, sizeof(buf));
	struct fp_out o;

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	pthread_mutex_lock(&fp_lock);
	assert_int_equal(fp_process_burst(worker, port, &m, 1, now_ns(), &o), 1);
	pthread_mutex_unlock(&fp_lock);
	rte_pktmbuf_free(m);
	return o;
}

static uint16_t
frame(uint16_t port, const struct fc_frame_spec *s)
{
	return frame_out(port, s).dest;
}

static void
test_max_retrans_given_back_is_revived(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT, false);
	struct fc_frame_spec o = { .payload = 18, .win = 1000, .tcp_flags = FP_TCP_ACK,
				   .seq = 1000, .ack = 5000 };
	struct fc_frame_spec p;
	struct fp_event ev[2];
	struct lk_event le;
	uint64_t revived;
	unsigned int n;

	(void)state;
	SKIP_UNLESS_READY();
	create(ct);
	turns(200);
	assert_int_equal(conns(), 1);
	memcpy(o.dmac, MAC0, 6);
	memcpy(o.smac, CLIENT_MAC, 6);
	fc_key4(&o.key, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80);
	p = o;
	fp_key_reverse(&o.key, &p.key);
	memcpy(p.dmac, MAC1, 6);
	memcpy(p.smac, SERVER_MAC, 6);
	p.seq = 5000;
	p.ack = 1018;
	p.payload = 0;
	for (int i = 0; i < 30; i++, o.seq += o.payload)
		frame(0, &o);
	/* the same ACK again and again: a stalled sender, given back */
	for (int i = 0; i < FP_MAX_RETRANS + 1; i++)
		frame(1, &p);
	pthread_mutex_lock(&fp_lock);
	n = fp_sweep(fp, now_ns(), 0, ev, 2);
	pthread_mutex_unlock(&fp_lock);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].reason, FC_REASON_TCP_MAX_RETRANS);
	assert_int_equal(the_conn().state, FP_CONN_INVALID);
	npu_cmd_event(&ev[0], &le);
	revived = stats().revived;
	fd_offload_fp_event(off, &le);
	assert_int_equal(stats().revived, revived + 1);
	assert_int_equal(the_conn().state, FP_CONN_VALID);
	nfct_destroy(ct);
}

/*
 * Qualify to the first frame forwarded (first_frame_us_*, fd_first.h), on
 * the real fast path and flowcutd's clock: a state offloaded, its first
 * frame sent 50 ms after the state was made (frames every 0.5 ms from
 * there), read back once: one sample, at least the 50 ms waited and at
 * most the time from the state's creation to the frame.
 */
static void
test_first_frame_measured(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT, false);
	struct fc_frame_spec o = { .payload = 18, .win = 1000, .tcp_flags = FP_TCP_ACK,
				   .seq = 1000, .ack = 5000 };
	struct fd_offload_stats after;
	uint64_t made, sent;

	(void)state;
	SKIP_UNLESS_READY();
	/* a new binding: its figures from 0, this connection's alone */
	bind_close();
	bind_open();
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
	memcpy(o.dmac, MAC0, 6);
	memcpy(o.smac, CLIENT_MAC, 6);
	fc_key4(&o.key, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80);
	made = now_ns();
	create(ct);
	turns(50);
	assert_int_equal(conns(), 1);
	assert_int_equal(the_conn().mf[0].first_fwd, 0);	/* nothing forwarded yet */
	sent = now_ns();
	for (int i = 0; i < 20; i++, o.seq += o.payload) {
		assert_int_equal(frame_out(0, &o).reason, FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU);
		usleep(500);
	}
	turns(300);		/* the sample's read, 100 ms after the offload */
	after = stats();
	assert_int_equal(after.first_frame_samples, 1);
	assert_int_equal(after.first_frame_unseen, 0);
	assert_int_equal(after.first_frame_skipped, 0);
	print_message("qualify to first frame: %" PRIu64 " us (p50 of 1), the first frame sent %"
		      PRIu64 " us after the state was made; qualify to FLOW_CREATE answered %" PRIu64
		      " us\n", after.first_frame_us_p50, (sent - made) / 1000u,
		      after.offload_us_p50);
	/*
	 * one sample: the percentile is it (capped at the maximum); the state
	 * qualifies at the first turn's read of its event (within 10 ms of
	 * its making, on a busy machine), 50 ms before the frame
	 */
	assert_int_equal(after.first_frame_us_p50, after.first_frame_us_p99);
	assert_true(after.first_frame_us_p50 >= 40000);
	assert_true(after.first_frame_us_p50 <= (now_ns() - made) / 1000u);
	nfct_destroy(ct);
}

/* The state's mark as conntrack holds it now. */
static uint32_t
mark_now(struct fd_ct *c, const struct nf_conntrack *ct)
{
	struct nf_conntrack *now = fd_ct_get(c, ct);
	uint32_t m;

	assert_non_null(now);
	m = nfct_get_attr_u32(now, ATTR_MARK);
	nfct_destroy(now);
	return m;
}

/* The state's timeout as the kernel says it now (the time left, s). */
static uint32_t
timeout_now(const struct nf_conntrack *ct)
{
	struct nf_conntrack *now = fd_ct_get(ct_socks, ct);
	uint32_t t;

	assert_non_null(now);
	t = nfct_get_attr_u32(now, ATTR_TIMEOUT);
	nfct_destroy(now);
	return t;
}

/*
 * The kernel's timeout: above P (T_long) once offloaded, P or less once
 * the connection left (aged out: P - idle, idle unknown here: P), and the
 * fast path's idle timeout at most P.
 */
static void
test_long_timeout_then_leave(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT, false);
	uint32_t p = fd_ct_established_timeout(ct_socks, IPPROTO_TCP);
	struct lk_event ev = { .type = FC_EV_AGED_OUT, .reason = FC_REASON_IDLE };
	uint64_t left;

	(void)state;
	SKIP_UNLESS_READY();
	create(ct);
	turns(200);
	assert_int_equal(conns(), 1);
	print_message("P %u s, offloaded: %u s left\n", p, timeout_now(ct));
	assert_true(timeout_now(ct) > p);
	assert_true(the_conn().mf[0].timeout_s <= p);
	ev.id = the_conn().id;
	left = stats().left;
	fd_offload_fp_event(off, &ev);
	turns(50);	/* the leave's update is posted: it goes at the turn's flush */
	assert_int_equal(stats().left, left + 1);
	print_message("left: %u s\n", timeout_now(ct));
	assert_true(timeout_now(ct) <= p);
	assert_int_equal(mark_now(ct_socks, ct) & BIT, 0);
	nfct_destroy(ct);
}

/* fd_ct_mark against the real conntrack: only the masked bits change. */
static void
test_masked_mark(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_SYN_SENT, 0, 0x12340005, false);
	struct fd_ct *c;

	(void)state;
	SKIP_UNLESS_READY();
	c = fd_ct_open();
	assert_non_null(c);
	create(ct);
	assert_int_equal(fd_ct_mark(c, ct, BIT, BIT), 0);
	assert_int_equal(mark_now(c, ct), 0x12340005 | BIT);
	assert_int_equal(fd_ct_mark(c, ct, 0, BIT), 0);
	assert_int_equal(mark_now(c, ct), 0x12340005);
	assert_int_equal(fd_ct_mark(c, ct, 0x00000a00, 0x00000f0f), 0);
	assert_int_equal(mark_now(c, ct), 0x12340a00);
	assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct), 0);
	assert_int_equal(fd_ct_mark(c, ct, 0, BIT), -ENOENT);
	fd_ct_close(c);
	nfct_destroy(ct);
}

static void
test_ruleset_change_takes_out_and_clears_marks(void **state)
{
	struct nf_conntrack *a = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT | 0x5, false);
	struct nf_conntrack *b = state4(TCP_CONNTRACK_SYN_SENT, 0, BIT | 0x700, true);
	struct fd_offload_stats before;
	struct fd_ct *c;
	uint32_t rev;

	(void)state;
	SKIP_UNLESS_READY();
	before = stats();
	c = fd_ct_open();
	assert_non_null(c);
	nfct_set_attr_u16(b, ATTR_PORT_SRC, htons(40001));	/* another connection */
	nfct_set_attr_u16(b, ATTR_REPL_PORT_DST, htons(40001));
	create(a);
	create(b);
	turns(200);
	assert_int_equal(conns(), 1);
	rev = the_conn().fw_rev;
	rev_probe.c = c;
	rev_probe.state = a;
	rev_probe.seen = false;
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	rev_probe.state = NULL;
	jobs_done();	/* the unmark is a job of the turns */
	/* the revision first: sent while the marks were all still set */
	assert_true(rev_probe.seen);
	assert_int_equal(rev_probe.mark, BIT | 0x5);
	assert_int_equal(stats().rev_bumps, before.rev_bumps + 1);
	pthread_mutex_lock(&fp_lock);
	assert_int_equal(fp_fw_rev_get(fp), rev + 1);	/* the connection no longer matches */
	pthread_mutex_unlock(&fp_lock);
	/* every state's bit cleared, the rest of each mark kept */
	assert_int_equal(mark_now(c, a), 0x5);
	assert_int_equal(mark_now(c, b), 0x700);
	/* and nothing comes back until the rules pass it again */
	turns(200);
	assert_int_equal(stats().offloaded, before.offloaded + 1);	/* a, once */
	fd_ct_close(c);
	nfct_destroy(a);
	nfct_destroy(b);
}

static void
test_resync_after_boot(void **state)
{
	struct nf_conntrack *ct = state4(TCP_CONNTRACK_ESTABLISHED, ASSURED, BIT, false);
	uint64_t resyncs;

	(void)state;
	SKIP_UNLESS_READY();
	create(ct);
	turns(200);
	assert_int_equal(conns(), 1);
	boot();		/* the coprocessor forgot everything */
	assert_int_equal(conns(), 0);
	resyncs = stats().resyncs;
	fd_offload_resync(off);
	fd_offload_sync_finish(off);	/* as flowcutd does on LK_EV_BOOT */
	assert_int_equal(stats().resyncs, resyncs + 1);
	turns(100);	/* its offloads are posted: answered in the next turns */
	assert_int_equal(conns(), 1);
	check_key(&the_conn().mf[0].key, 0, "198.18.0.10", 40000, "198.19.0.10", 80);
	nfct_destroy(ct);
}

/* ---- the cut (fd_cut) ---- */

/*
 * A state from text: the client `c`:cport to `d`:dport, replied by the
 * server `srv`:sport (another than d: DNAT).  IPv6 when c has a ':'.
 * TCP established or UDP, assured, with `mark`.
 */
static struct nf_conntrack *
conn(uint8_t l4, const char *c, uint16_t cport, const char *d, uint16_t dport, const char *srv,
     uint16_t sport, uint32_t mark)
{
	struct nf_conntrack *ct = nfct_new();
	bool v6 = strchr(c, ':') != NULL;
	uint8_t a[16];

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_L3PROTO, v6 ? AF_INET6 : AF_INET);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, v6 ? AF_INET6 : AF_INET);
#define ADDR_(attr4, attr6, text)						\
	do {									\
		assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, text, a), 1);	\
		nfct_set_attr(ct, v6 ? attr6 : attr4, a);			\
	} while (0)
	ADDR_(ATTR_IPV4_SRC, ATTR_IPV6_SRC, c);
	ADDR_(ATTR_IPV4_DST, ATTR_IPV6_DST, d);
	ADDR_(ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, srv);
	ADDR_(ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST, c);
#undef ADDR_
	nfct_set_attr_u8(ct, ATTR_L4PROTO, l4);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, l4);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(cport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(dport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(sport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(cport));
	if (l4 == IPPROTO_TCP)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	nfct_set_attr_u32(ct, ATTR_STATUS, ASSURED);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 300);
	nfct_set_attr_u32(ct, ATTR_MARK, mark);
	return ct;
}

/*
 * An offload whose conntrack update fails - the state deleted between its
 * event and the update, its DESTROY unread - is taken out: the update's
 * error (no ack for a success: fd_ct.h) is read before any FLOW_CREATE_FP
 * is posted, so none is, the fast path stays empty and no entry is left.
 * IPv4 TCP (loosened and T_long), IPv6 UDP (T_long), in the middle of a
 * batch of the same kind whose others go through.
 */
static void
test_update_failed_takes_out(void **state)
{
	static const struct {
		const char *name;
		uint8_t l4;
		const char *c, *d;
	} rows[] = {
		{ "IPv4 TCP", IPPROTO_TCP, "198.18.0.10", "198.19.0.10" },
		{ "IPv6 UDP", IPPROTO_UDP, "2001:2::10", "2001:2:0:1::10" },
	};
	enum { N = 3, GONE = 1 };

	(void)state;
	SKIP_UNLESS_READY();
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct nf_conntrack *ct[N], *now[N];
		uint64_t offloaded = stats().offloaded;
		struct fd_offload_conn oc;

		for (unsigned int i = 0; i < N; i++) {
			ct[i] = conn(rows[r].l4, rows[r].c, (uint16_t)(41000 + i), rows[r].d, 80,
				     rows[r].d, 80, BIT);
			create(ct[i]);
			now[i] = fd_ct_get(ct_socks, ct[i]);	/* the whole state, its id */
			assert_non_null(now[i]);
		}
		fd_offload_skip_events(off);	/* handed in below, not by their events */
		for (unsigned int i = 0; i < N; i++)
			if (fd_offload_try(off, now[i]) != 0)
				fail_msg("%s: state %u not posted", rows[r].name, i);
		assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct[GONE]), 0);
		fd_offload_skip_events(off);	/* its DESTROY unread: the update's error alone tells */
		turns(50);
		if (conns() != N - 1 || stats().offloaded != offloaded + N - 1)
			fail_msg("%s: %u in the fast path, %llu offloaded, not %u", rows[r].name,
				 conns(), (unsigned long long)(stats().offloaded - offloaded), N - 1);
		for (unsigned int i = 0; i < N; i++) {
			int rc = fd_offload_find(off, FD_OFFLOAD_BY_CT, nfct_get_attr_u32(now[i], ATTR_ID), now[i],
						    &oc, NULL);

			if (rc != (i == GONE ? -ENOENT : 0))
				fail_msg("%s: state %u: %d", rows[r].name, i, rc);
			if (i != GONE)
				nfct_query(nfct, NFCT_Q_DESTROY, ct[i]);
			nfct_destroy(ct[i]);
			nfct_destroy(now[i]);
		}
		turns(50);	/* their DESTROYs: out */
		pthread_mutex_lock(&fp_lock);
		fp_sweep(fp, now_ns(), 0, (struct fp_event[4]){ 0 }, 4);
		pthread_mutex_unlock(&fp_lock);
		assert_int_equal(conns(), 0);
	}
}

/* A one-range list from "ADDR/LEN" text. */
static struct fc_list
list_of(const char *text)
{
	struct fc_list l = { 0 };

	assert_int_equal(fc_list_parse(text, strlen(text), &l, NULL, NULL), 0);
	fc_list_canon(&l);
	return l;
}

/* The fast-path connection whose original key starts at client port `cport`, by lookup. */
static struct fp_conn_info
conn_by_cport(uint16_t cport)
{
	struct fp_conn_info ci;
	uint32_t slot = 0;

	pthread_mutex_lock(&fp_lock);
	while (fp_conn_next(fp, &slot, &ci) == 0)
		if (ntohs(ci.mf[0].key.sport) == cport) {
			pthread_mutex_unlock(&fp_lock);
			return ci;
		}
	pthread_mutex_unlock(&fp_lock);
	fail_msg("no connection from client port %u in the fast path", cport);
	return ci;
}

static bool
alive(const struct nf_conntrack *ct)
{
	return nfct_query(nfct, NFCT_Q_GET, ct) == 0;
}

static struct fd_cut_stats
cut_stats(void)
{
	struct fd_cut_stats s;

	fd_cut_stats(cut, &s);
	return s;
}

/* The MAC the fast path sends a connection's original direction to (its next hop's). */
static void
orig_dmac(uint16_t cport, uint8_t mac[6])
{
	struct fp_conn_info ci = conn_by_cport(cport);
	struct fp_nhop nh;
	uint32_t rev;

	pthread_mutex_lock(&fp_lock);
	assert_int_equal(fp_nhop_get(fp, ci.mf[0].nhop, &nh, &rev), 0);
	pthread_mutex_unlock(&fp_lock);
	memcpy(mac, nh.dmac, 6);
}

/* rtnetlink's changes read (within 2 s) until a route change was among them. */
static void
rt_route_seen(void)
{
	struct pollfd p = { .fd = fd_route_watch_fd(rtw), .events = POLLIN };
	unsigned int routes = 0;

	for (int i = 0; i < 20 && routes == 0; i++) {
		poll(&p, 1, 100);
		routes += rt_turn();
	}
	assert_true(routes > 0);
}

/*
 * A real `ip route replace` between two offloads to one server, through
 * the route cache as flowcutd has it: the route's message empties the
 * cache before the paths are looked at, so the connection made before is
 * moved (its route goes through a gateway now), and the one made after
 * goes to the gateway's MAC.  With a stale route, the first would stay
 * and the second would go to the server's own MAC.
 */
static void
test_route_replaced_between_two_offloads(void **state)
{
	static const struct {
		const char *client, *server, *replace, *restore;
	} rows[] = {
		{ "198.18.0.10", "198.19.0.10",
		  "ip route replace 198.19.0.10/32 via 198.19.0.11 dev fp1",
		  "ip route del 198.19.0.10/32" },
		{ "2001:2::10", "2001:2:0:1::10",
		  "ip -6 route replace 2001:2:0:1::10/128 via 2001:2:0:1::11 dev fp1",
		  "ip -6 route del 2001:2:0:1::10/128" },
	};
	static const uint8_t GW_MAC[6] = { 0x02, 0, 0, 0, 0, 0x0c };

	(void)state;
	SKIP_UNLESS_READY();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint16_t first = (uint16_t)(41000 + 2 * i), second = (uint16_t)(first + 1);
		struct nf_conntrack *a = conn(IPPROTO_TCP, rows[i].client, first, rows[i].server, 80,
					      rows[i].server, 80, BIT);
		struct nf_conntrack *b = conn(IPPROTO_TCP, rows[i].client, second, rows[i].server,
					      80, rows[i].server, 80, BIT);
		uint64_t rerouted = stats().rerouted;
		uint8_t mac[6];

		create(a);
		turns(300);
		orig_dmac(first, mac);
		if (memcmp(mac, SERVER_MAC, 6) != 0)
			fail_msg("%s: the first connection not to the server's MAC", rows[i].server);
		assert_int_equal(fc_netns_sh(rows[i].replace), 0);
		rt_route_seen();
		if (stats().rerouted != rerouted + 1)
			fail_msg("%s: the first connection not moved (rerouted %" PRIu64 ", was %" PRIu64
				 ")", rows[i].server, stats().rerouted, rerouted);
		create(b);
		turns(300);
		orig_dmac(second, mac);
		if (memcmp(mac, GW_MAC, 6) != 0)
			fail_msg("%s: the second connection not to the gateway's MAC (..:%02x)",
				 rows[i].server, mac[5]);
		assert_int_equal(fc_netns_sh(rows[i].restore), 0);
		rt_route_seen();
		nfct_destroy(a);
		nfct_destroy(b);
	}
}

/*
 * A state whose client has no neighbour entry - as after a flowcutd
 * restart, whose TAPs' carrier went down and took their entries with it -
 * forwarded one way only (the host sends nothing towards the client that
 * would resolve it): it waits, and the host is asked to resolve the
 * client (an entry appears in the kernel, an ordinary one, not PERMANENT,
 * as the kernel makes one when it sends: the veth's far end never answers,
 * so it stays INCOMPLETE or FAILED).  The answer (the entry resolved) lets
 * it go in.  Without the ask, no entry appeared and the state waited until
 * some frame of the host's went towards the client.  IPv4 and IPv6 UDP.
 */
static void
test_waiting_state_asks_its_neighbour(void **state)
{
	static const struct {
		const char *client, *server, *dev;
	} rows[] = {
		{ "198.18.0.50", "198.19.0.10", "fp0" },
		{ "2001:2::50", "2001:2:0:1::10", "fp0" },
	};
	char sh[256];

	(void)state;
	SKIP_UNLESS_READY();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct nf_conntrack *ct = conn(IPPROTO_UDP, rows[i].client, (uint16_t)(42000 + i),
					       rows[i].server, 5201, rows[i].server, 5201, BIT);
		uint64_t solicited = stats().solicited, offloaded = stats().offloaded;

		snprintf(sh, sizeof(sh), "! ip neigh show %s dev %s | grep -q .", rows[i].client,
			 rows[i].dev);
		if (fc_netns_sh(sh) != 0)
			fail_msg("%s: a neighbour entry before the state", rows[i].client);
		create(ct);
		turns(300);
		if (conns() != 0)
			fail_msg("%s: offloaded with its neighbour unresolved", rows[i].client);
		if (fc_netns_sh(sh + 2) != 0)	/* "ip neigh show ... | grep -q .": there */
			fail_msg("%s: the host was not asked to resolve the client (no entry; "
				 "%" PRIu64 " asked)", rows[i].client, stats().solicited - solicited);
		snprintf(sh, sizeof(sh), "! ip neigh show %s dev %s | grep -q PERMANENT",
			 rows[i].client, rows[i].dev);
		if (fc_netns_sh(sh) != 0)
			fail_msg("%s: the entry asked for is PERMANENT", rows[i].client);
		assert_true(stats().solicited >= solicited + 1);
		snprintf(sh, sizeof(sh), "ip neigh replace %s lladdr 02:00:00:00:00:0d dev %s "
			 "nud reachable", rows[i].client, rows[i].dev);
		assert_int_equal(fc_netns_sh(sh), 0);
		turns(300);
		if (conns() != 1 || stats().offloaded != offloaded + 1)
			fail_msg("%s: not offloaded once resolved (%u in the fast path)",
				 rows[i].client, conns());
		assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct), 0);
		nfct_destroy(ct);
		turns(50);	/* its DESTROY: out */
		pthread_mutex_lock(&fp_lock);
		fp_sweep(fp, now_ns(), 0, (struct fp_event[4]){ 0 }, 4);
		pthread_mutex_unlock(&fp_lock);
		snprintf(sh, sizeof(sh), "ip neigh del %s dev %s", rows[i].client, rows[i].dev);
		assert_int_equal(fc_netns_sh(sh), 0);
	}
}

/*
 * A waiting state whose neighbour never answered (the veth's far end
 * answers no ARP: the entry goes FAILED after the kernel's 3 s): it is
 * asked for again while the state waits, with no neighbour change to
 * prompt it (fd_offload_work's retry, every 5 s).  Without it the state
 * waited for some other neighbour to change, even once its sender was back.
 */
static void
test_failed_neighbour_asked_again(void **state)
{
	struct nf_conntrack *ct = conn(IPPROTO_UDP, "198.18.0.71", 42100, "198.19.0.10", 5201,
				       "198.19.0.10", 5201, BIT);
	uint64_t first;

	(void)state;
	SKIP_UNLESS_READY();
	create(ct);
	turns(300);
	assert_int_equal(conns(), 0);
	first = stats().solicited;
	assert_true(first >= 1);
	/*
	 * FAILED at about 3 s; a retry every 5 s, whose ask is let through
	 * once 3 s have passed since the last: asked again within 10 s
	 */
	turns(10500);
	if (stats().solicited < first + 1)
		fail_msg("198.18.0.71: asked %" PRIu64 " times in 10.8 s while it waited, %" PRIu64
			 " before", stats().solicited, first);
	assert_int_equal(conns(), 0);
	assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct), 0);
	nfct_destroy(ct);
	turns(50);
	assert_int_equal(fc_netns_sh("ip neigh del 198.18.0.71 dev fp0"), 0);
}

/* A coprocessor event about connection `id`, as flowcutd hands it on. */
static void
fp_event(uint8_t type, uint64_t id)
{
	struct lk_event ev = { .type = type, .id = id };

	fd_offload_fp_event(off, &ev);
}

/*
 * IPv4: a cut of the server 198.19.0.10 cuts the connection to it and the
 * DNAT one whose real server it is (the reply's source, as the wire sees
 * it), not the one to .11; drops answered before the states die; a DESTROY
 * leaves them in, a give-back is ignored, an aged-out forgets them.
 */
static void
test_cut_range_v4_nat(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80,
				      "198.19.0.10", 80, BIT);
	struct nf_conntrack *b = conn(IPPROTO_TCP, "198.18.0.10", 40001, "198.19.0.11", 80,
				      "198.19.0.11", 80, BIT);
	struct nf_conntrack *d = conn(IPPROTO_UDP, "198.18.0.10", 40002, "198.19.0.99", 8080,
				      "198.19.0.10", 80, BIT);
	struct fc_list l = list_of("198.19.0.10/32\n");
	struct fd_cut_stats before = cut_stats();
	struct fd_offload_conn oc;
	struct fp_conn_info ca, cb, cd;
	uint64_t removed, revived;

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	create(b);
	create(d);
	turns(300);
	assert_int_equal(conns(), 3);
	spy.drops_answered = spy.wrong = 0;
	removed = stats().removed;
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 2);
	assert_int_equal(spy.drops_answered, 2);
	assert_int_equal(spy.wrong, 0);
	ca = conn_by_cport(40000);
	cb = conn_by_cport(40001);
	cd = conn_by_cport(40002);
	assert_int_equal(ca.verdict, FC_VERDICT_DROP);
	assert_int_equal(cd.verdict, FC_VERDICT_DROP);
	assert_int_equal(cb.verdict, FC_VERDICT_CUT_THRU);
	assert_false(alive(a));
	assert_false(alive(d));
	assert_true(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_HAND], before.in_hardware[FD_CUT_HAND] + 2);
	assert_int_equal(cut_stats().on_host[FD_CUT_HAND], before.on_host[FD_CUT_HAND]);
	/* their DESTROYs came: still in, still dropping */
	turns(200);
	assert_int_equal(conns(), 3);
	assert_int_equal(stats().removed, removed);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, ca.id, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(conn_by_cport(40000).state, FP_CONN_VALID);
	{	/* its sender's FIN and the server's RST are dropped there, never given back */
		struct fc_frame_spec fin = { .payload = 0, .win = 1000, .seq = 1000, .ack = 5000,
					     .tcp_flags = FP_TCP_FIN | FP_TCP_ACK }, rst;

		memcpy(fin.dmac, MAC0, 6);
		memcpy(fin.smac, CLIENT_MAC, 6);
		fc_key4(&fin.key, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80);
		rst = fin;
		fp_key_reverse(&fin.key, &rst.key);
		memcpy(rst.dmac, MAC1, 6);
		memcpy(rst.smac, SERVER_MAC, 6);
		rst.tcp_flags = FP_TCP_RST;
		assert_int_equal(frame_out(0, &fin).reason, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT);
		assert_int_equal(frame_out(1, &rst).reason, FC_CNT_FROM_WIRE_DROP_IPS_VERDICT);
		assert_int_equal(conn_by_cport(40000).state, FP_CONN_VALID);
	}
	/* a second cut finds nothing more to cut */
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 0);
	/* a resync (lost events) keeps the cut ones, dropping, and the live one as it is */
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
	turns(100);	/* its offloads are posted: answered in the next turns */
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, ca.id, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cd.id, NULL, &oc, NULL), 0);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cb.id, NULL, &oc, NULL), 0);	/* never to the host */
	assert_int_equal(stats().resync_taken_out, 0);
	assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40000).state, FP_CONN_VALID);
	assert_int_equal(conn_by_cport(40001).id, cb.id);
	assert_int_equal(cb.state, FP_CONN_VALID);
	/* a give-back is ignored: never revived, still known */
	revived = stats().revived;
	fp_event(FC_EV_GIVEN_BACK, cd.id);
	assert_int_equal(stats().revived, revived);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cd.id, NULL, &oc, NULL), 0);
	/* aged out: forgotten */
	fp_event(FC_EV_AGED_OUT, ca.id);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, ca.id, NULL, &oc, NULL), -ENOENT);
	fp_event(FC_EV_REMOVED, cd.id);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cd.id, NULL, &oc, NULL), -ENOENT);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cb.id, NULL, &oc, NULL), 0);
	assert_false(oc.cut);
	fc_list_free(&l);
	nfct_destroy(a);
	nfct_destroy(b);
	nfct_destroy(d);
}

/*
 * A cut connection after a ruleset change: made again (a new id) at the
 * revision now in force, dropping both ways by its action.
 */
static void
check_remade_dropping(const struct fp_conn_info *after, uint64_t old_id)
{
	assert_int_not_equal(after->id, old_id);
	assert_int_equal(after->fw_rev, fp_fw_rev_get(fp));
	assert_int_equal(after->mf[0].action, FC_ACTION_DROP);
	assert_int_equal(after->mf[1].action, FC_ACTION_DROP);
}

/*
 * A ruleset change after a cut: the cut connection stays dropping, made
 * again at the new revision (its old one would send its frames to the
 * host); the connection not cut leaves the binding, its frames to the host.
 */
static void
test_cut_kept_across_ruleset_change(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "2001:2::10", 40010, "2001:2:0:1::10", 53,
				      "2001:2:0:1::10", 53, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40011, "198.19.0.10", 53,
				      "198.19.0.10", 53, BIT);
	struct fc_list l = list_of("2001:2::10\n");
	struct fc_frame_spec f = { .payload = 100 };
	struct fd_offload_conn oc;
	struct fp_conn_info before, after;

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	before = conn_by_cport(40010);
	assert_int_equal(before.verdict, FC_VERDICT_DROP);
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	after = conn_by_cport(40010);
	check_remade_dropping(&after, before.id);
	assert_int_equal(after.verdict, FC_VERDICT_DROP);
	assert_memory_equal(&after.mf[0].key, &before.mf[0].key, sizeof(after.mf[0].key));
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, after.id, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, before.id, NULL, &oc, NULL), -ENOENT);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, conn_by_cport(40011).id, NULL, &oc, NULL), -ENOENT);
	/* the client's next datagram is dropped there, not sent to the host */
	memcpy(f.dmac, MAC0, 6);
	memcpy(f.smac, CLIENT_MAC, 6);
	fc_key6(&f.key, IPPROTO_UDP, "2001:2::10", 40010, "2001:2:0:1::10", 53);
	assert_int_equal(frame_out(0, &f).reason, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION);
	fc_list_free(&l);
	nfct_destroy(a);
	nfct_destroy(b);
}

/*
 * A flowcutd restarted after a cut: the new binding's resync finds the
 * connection dropping, which it did not make, and takes it up as cut
 * instead of taking it out (its state is dead: a binding that reclaimed
 * it would send the flood to the host); it stays dropping across the
 * next ruleset change, made again at the new revision.  A connection
 * that does not drop is taken out as before.
 */
static void
test_cut_taken_up_by_a_new_binding(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40020, "198.19.0.10", 53,
				      "198.19.0.10", 53, BIT);
	struct nf_conntrack *b = conn(IPPROTO_TCP, "198.18.0.10", 40021, "198.19.0.11", 80,
				      "198.19.0.11", 80, BIT);
	struct fc_list l = list_of("198.19.0.10");
	struct fc_frame_spec f = { .payload = 100 };
	struct fd_offload_stats st;
	struct fd_offload_conn oc;
	struct fp_conn_info cut_one, after;

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	cut_one = conn_by_cport(40020);
	assert_int_equal(cut_one.verdict, FC_VERDICT_DROP);
	assert_false(alive(a));
	/* flowcutd stops; b's state goes meanwhile; a new flowcutd binds */
	bind_close();
	assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, b), 0);
	bind_open();
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
	pthread_mutex_lock(&fp_lock);
	fp_sweep(fp, now_ns(), 0, (struct fp_event[64]){ 0 }, 64);	/* reclaimed: freed */
	pthread_mutex_unlock(&fp_lock);
	assert_int_equal(conns(), 1);
	assert_int_equal(the_conn().id, cut_one.id);
	fd_offload_stats(off, &st);
	assert_int_equal(st.cut_adopted, 1);
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, cut_one.id, NULL, &oc, NULL), 0);
	assert_true(oc.cut);
	/* a second resync keeps it, not adopted again */
	fd_offload_resync(off);
	fd_offload_sync_finish(off);
	fd_offload_stats(off, &st);
	assert_int_equal(st.cut_adopted, 1);
	assert_int_equal(conns(), 1);
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
	after = the_conn();
	check_remade_dropping(&after, cut_one.id);
	memcpy(f.dmac, MAC0, 6);
	memcpy(f.smac, CLIENT_MAC, 6);
	fc_key4(&f.key, IPPROTO_UDP, "198.18.0.10", 40020, "198.19.0.10", 53);
	assert_int_equal(frame_out(0, &f).reason, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION);
	/*
	 * taken up, its trigger unknown (a fingerprint's, one by id?): nothing
	 * in force any more releases it - it drops on until its sender stops
	 */
	{
		struct fc_list none = { 0 };

		assert_int_equal(fd_cut_release(cut, &none), 0);
		assert_int_equal(frame_out(0, &f).reason, FC_CNT_FROM_WIRE_DROP_MFLOW_ACTION);
	}
	fc_list_free(&l);
	nfct_destroy(a);
	nfct_destroy(b);
}

/*
 * flowcutd's lease through the command interface: taken; released (the
 * coprocessor fails closed, as at a clean stop); a renewal finds it lapsed
 * and, asked again without the re-judging that reopen stands for, still
 * finds it lapsed - only fd_lease_reopen reopens it.
 */
static void
test_lease_reopens_only_when_judged(void **state)
{
	struct fd_lease l;
	struct fp_lease fl;

	(void)state;
	SKIP_UNLESS_READY();
	boot();		/* a fresh coprocessor: no lease since boot */
	fd_lease_init(&l, 1000);
	assert_int_equal(fd_lease_renew(&l, &cmds, 0, true), 0);
	assert_int_equal(l.last.state, FC_LEASE_HELD);
	assert_int_equal(fd_lease_release(&l, &cmds), 0);
	assert_int_equal(l.last.state, FC_LEASE_LAPSED);
	assert_int_equal(fd_lease_renew(&l, &cmds, 1, true), 1);	/* lapsed: judge again */
	assert_int_equal(fd_lease_renew(&l, &cmds, 2, true), 1);	/* not judged: still */
	pthread_mutex_lock(&fp_lock);
	fp_lease_get(fp, now_ns(), &fl);
	pthread_mutex_unlock(&fp_lock);
	assert_int_equal(fl.state, FC_LEASE_LAPSED);
	assert_int_equal(fd_lease_reopen(&l, &cmds, 3), 0);
	assert_int_equal(l.last.state, FC_LEASE_HELD);
	assert_int_equal(fd_lease_renew(&l, &cmds, 4, true), 0);
	assert_int_equal(fd_lease_release(&l, &cmds), 0);	/* as flowcutd stops */
}

/* IPv6: a cut of the clients' prefix cuts the IPv6 connection, not the IPv4 one. */
static void
test_cut_range_v6(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "2001:2::10", 40000, "2001:2:0:1::10", 53,
				      "2001:2:0:1::10", 53, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40001, "198.19.0.10", 53,
				      "198.19.0.10", 53, BIT);
	struct fc_list l = list_of("2001:2::/64\n");

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);
	spy.drops_answered = spy.wrong = 0;
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	assert_int_equal(spy.drops_answered, 1);
	assert_int_equal(spy.wrong, 0);
	assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40000).mf[0].key.family, 6);
	assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_CUT_THRU);
	assert_false(alive(a));
	assert_true(alive(b));
	fc_list_free(&l);
	nfct_destroy(a);
	nfct_destroy(b);
}

/* A state in range that is not offloaded (the rules have not passed it): made dropping. */
static void
test_cut_not_offloaded_made_dropping(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.11", 443,
				      "198.19.0.11", 443, 0x5);
	struct fc_list l = list_of("198.19.0.0/24\n");
	struct fd_cut_stats before = cut_stats();
	struct fp_conn_info ci;

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	turns(200);
	assert_int_equal(conns(), 0);
	spy.drops_answered = spy.wrong = 0;
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	assert_int_equal(spy.drops_answered, 1);	/* made dropping, then killed */
	assert_int_equal(spy.wrong, 0);
	ci = the_conn();
	assert_int_equal(ci.verdict, FC_VERDICT_DROP);
	assert_int_equal(ci.mf[0].action, FC_ACTION_IPS);
	assert_int_equal(ci.mf[1].action, FC_ACTION_IPS);
	check_key(&ci.mf[0].key, 0, "198.18.0.10", 40000, "198.19.0.11", 443);
	check_key(&ci.mf[1].key, 1, "198.19.0.11", 443, "198.18.0.10", 40000);
	assert_false(alive(a));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_HAND], before.in_hardware[FD_CUT_HAND] + 1);
	turns(200);	/* its DESTROY: it stays */
	assert_int_equal(conns(), 1);
	fc_list_free(&l);
	nfct_destroy(a);
}

/*
 * States in range whose client has no neighbour entry (a sender that
 * never answers: spoofed, or gone; the host never sent to it): made
 * dropping all the same - a cut connection's frames drop before any next
 * hop is read - and on one placeholder next hop, not one a sender: two
 * such senders program one next hop between them.  Before, each was
 * killed and not made dropping, its flood on to the host.  IPv4 and IPv6.
 */
static void
test_cut_unresolved_made_dropping(void **state)
{
	static const struct {
		const char *c1, *c2, *server, *range;
	} rows[] = {
		{ "198.18.0.61", "198.18.0.62", "198.19.0.11", "198.19.0.0/24\n" },
		{ "2001:2::61", "2001:2::62", "2001:2:0:1::11", "2001:2:0:1::/64\n" },
	};

	(void)state;
	SKIP_UNLESS_READY();
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct nf_conntrack *a = conn(IPPROTO_UDP, rows[r].c1, 40000, rows[r].server, 53,
					      rows[r].server, 53, 0);
		struct nf_conntrack *b = conn(IPPROTO_UDP, rows[r].c2, 40001, rows[r].server, 53,
					      rows[r].server, 53, 0);
		struct fc_list l = list_of(rows[r].range);
		struct fd_nhop_stats n0, n1;
		char sh[128];

		snprintf(sh, sizeof(sh), "! ip neigh show %s | grep -q . && ! ip neigh show %s | "
			 "grep -q .", rows[r].c1, rows[r].c2);
		assert_int_equal(fc_netns_sh(sh), 0);
		create(a);
		create(b);
		turns(200);
		assert_int_equal(conns(), 0);
		fd_nhop_stats(nhops, &n0);
		spy.drops_answered = spy.wrong = 0;
		assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 2);
		if (spy.drops_answered != 2 || conns() != 2)
			fail_msg("%s: %u made dropping, %u in the fast path, not 2", rows[r].server,
				 spy.drops_answered, conns());
		assert_int_equal(spy.wrong, 0);
		assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_DROP);
		assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_DROP);
		/* towards the senders (the reply's microflow): one next hop, the placeholder */
		if (conn_by_cport(40000).mf[1].nhop != conn_by_cport(40001).mf[1].nhop)
			fail_msg("%s: a next hop each for two unresolved senders", rows[r].server);
		fd_nhop_stats(nhops, &n1);
		if (n1.programmed - n0.programmed > 2)	/* the placeholder, and the server's */
			fail_msg("%s: %" PRIu64 " next hops programmed", rows[r].server,
				 n1.programmed - n0.programmed);
		assert_false(alive(a));
		assert_false(alive(b));
		fc_list_free(&l);
		nfct_destroy(a);
		nfct_destroy(b);
		boot();		/* the next row's fast path empty: cut connections stay */
		fd_offload_resync(off);
		fd_offload_sync_finish(off);
	}
}

/* "Cut in hardware" off: taken out of the fast path, state killed, counted on the host. */
static void
test_cut_setting_off_reclaims(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, BIT);
	struct nf_conntrack *n = conn(IPPROTO_UDP, "198.18.0.10", 40001, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, 0);
	struct fc_list l = list_of("198.19.0.10\n");
	struct fd_cut_stats before = cut_stats();
	struct fd_offload_conn oc;
	uint64_t id;

	(void)state;
	SKIP_UNLESS_READY();
	settings(false, 30);
	create(a);
	create(n);
	turns(300);
	assert_int_equal(conns(), 1);
	id = the_conn().id;
	assert_int_equal(the_conn().mf[0].action, FC_ACTION_FWD);
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 2);
	pthread_mutex_lock(&fp_lock);
	{	/* out: freed, or being reclaimed */
		struct fp_conn_info ci;
		int rc = fp_conn_get(fp, id, &ci);

		pthread_mutex_unlock(&fp_lock);
		assert_true(rc == -ENOENT || (rc == 0 && ci.state == FP_CONN_RECLAIM));
	}
	assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, id, NULL, &oc, NULL), -ENOENT);
	assert_false(alive(a));
	assert_false(alive(n));
	assert_int_equal(cut_stats().on_host[FD_CUT_HAND], before.on_host[FD_CUT_HAND] + 2);
	assert_int_equal(cut_stats().in_hardware[FD_CUT_HAND], before.in_hardware[FD_CUT_HAND]);
	fc_list_free(&l);
	nfct_destroy(a);
	nfct_destroy(n);
}

/* A FWD connection (offloaded with the setting off) cut in hardware: its action DROP both ways. */
static void
test_cut_fwd_by_action(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80,
				      "198.19.0.10", 80, BIT);
	struct fc_list l = list_of("198.18.0.10\n");	/* the client's end */
	struct fp_conn_info ci;

	(void)state;
	SKIP_UNLESS_READY();
	settings(false, 30);
	create(a);
	turns(300);
	assert_int_equal(the_conn().mf[0].action, FC_ACTION_FWD);
	settings(true, 30);
	spy.drops_answered = spy.wrong = 0;
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	assert_int_equal(spy.drops_answered, 1);
	ci = the_conn();
	assert_int_equal(ci.state, FP_CONN_VALID);
	assert_int_equal(ci.mf[0].action, FC_ACTION_DROP);
	assert_int_equal(ci.mf[1].action, FC_ACTION_DROP);
	assert_false(alive(a));
	fc_list_free(&l);
	nfct_destroy(a);
}

/* fd_ct_kill_post's done: what conntrack answered, per state. */
static void
kill_rec(void *arg, int rc)
{
	int *r = arg;

	assert_int_equal(*r, 1);	/* once */
	*r = rc;
}

/*
 * Kills in batches (fd_ct_kill_post/_flush): 150 states, IPv4 and IPv6,
 * more than two batches, and two states that are not there: one inside
 * the second batch (its error comes though only the batch's last is
 * acked) and the last.  Each done runs once with conntrack's own answer,
 * and every state is gone.
 */
static void
test_kills_batched(void **state)
{
	enum { N = 150, MISSING = FD_CT_KILL_BATCH + 6 };
	struct nf_conntrack *ct[N + 1];
	int rc[N + 1];
	struct fd_ct *c = ct_socks;

	(void)state;
	SKIP_UNLESS_READY();
	for (int i = 0; i <= N; i++) {
		ct[i] = i % 2 ? conn(IPPROTO_UDP, "198.18.0.10", (uint16_t)(20000 + i), "198.19.0.10",
				     53, "198.19.0.10", 53, 0)
			      : conn(IPPROTO_TCP, "2001:2::10", (uint16_t)(20000 + i),
				     "2001:2:0:1::10", 443, "2001:2:0:1::10", 443, 0);
		if (i < N && i != MISSING)
			create(ct[i]);	/* MISSING and the last are never made */
		rc[i] = 1;
	}
	for (int i = 0; i <= N; i++)
		assert_int_equal(fd_ct_kill_post(c, ct[i], kill_rec, &rc[i]), 0);
	/* two full batches went out from inside the posts */
	for (int i = 0; i < 2 * FD_CT_KILL_BATCH; i++)
		assert_int_equal(rc[i], i == MISSING ? -ENOENT : 0);
	assert_int_equal(rc[2 * FD_CT_KILL_BATCH], 1);	/* queued, not sent */
	assert_int_equal(fd_ct_kill_flush(c), N + 1 - 2 * FD_CT_KILL_BATCH);
	for (int i = 0; i < N; i++) {
		assert_int_equal(rc[i], i == MISSING ? -ENOENT : 0);
		assert_int_not_equal(nfct_query(nfct, NFCT_Q_GET, ct[i]), 0);	/* gone */
	}
	assert_int_equal(rc[N], -ENOENT);
	assert_int_equal(fd_ct_kill_flush(c), 0);	/* nothing queued */
	for (int i = 0; i <= N; i++)
		nfct_destroy(ct[i]);
}

/* One connection by its fast-path id; again: cut already; an unknown id: none. */
static void
test_cut_conn_by_id(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 80,
				      "198.19.0.10", 80, BIT);
	struct nf_conntrack *b = conn(IPPROTO_TCP, "198.18.0.10", 40001, "198.19.0.10", 80,
				      "198.19.0.10", 80, BIT);
	struct fd_cut_stats before = cut_stats();
	uint64_t id;

	(void)state;
	SKIP_UNLESS_READY();
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);
	id = conn_by_cport(40000).id;
	assert_int_equal(fd_cut_conn(cut, id, FD_CUT_CONN), 0);
	assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_CUT_THRU);
	assert_false(alive(a));
	assert_true(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_CONN], before.in_hardware[FD_CUT_CONN] + 1);
	assert_int_equal(fd_cut_conn(cut, id, FD_CUT_CONN), -EALREADY);
	assert_int_equal(fd_cut_conn(cut, id + 12345, FD_CUT_CONN), -ENOENT);
	nfct_destroy(a);
	nfct_destroy(b);
}

/* fd_nft's events until one says something (at most 1 s): its FD_NFT_* bits. */
static int
nft_events(struct fd_nft *n)
{
	for (int i = 0; i < 100; i++) {
		int rc = fd_nft_events(n);

		if (rc != 0)
			return rc;
		usleep(10000);
	}
	return 0;
}

/*
 * fd_nft_close leaves the table in force (fd_nft.h, 7); a case takes it
 * away after, so the next starts from none.
 */
static void
nft_close(struct fd_nft *n)
{
	fd_nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet flowcut"), 0);
}

/*
 * By hand: an element added to flowcutd's cut4/cut6 (as `flowcutctl cut`
 * adds it) is reported as a cut-set change and no ruleset change, the sets
 * read back whole, and what they hold is cut; an element removed is
 * FD_NFT_UNCUT alone; another table is a ruleset change; the rules drop the sets'
 * members both ways before the mark.
 */
static void
test_cut_by_hand_through_the_sets(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, BIT);
	struct fc_list l = { 0 };
	struct fd_nft *n;
	uint8_t a4[4], a6[16];

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	assert_int_equal(fc_netns_sh("nft list chain inet flowcut seen | grep -q 'ip saddr @cut4 drop' && "
			    "nft list chain inet flowcut seen | grep -q 'ip6 daddr @cut6 drop'"), 0);
	create(a);
	turns(300);
	assert_int_equal(conns(), 1);
	assert_int_equal(fc_netns_sh("nft add element inet flowcut cut4 '{ 198.19.0.0/24 timeout 30s }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_CUT);
	assert_int_equal(fd_nft_cut_read(n, &l), 0);
	inet_pton(AF_INET, "198.19.0.10", a4);
	assert_true(fc_list_holds(&l, 4, a4));
	inet_pton(AF_INET, "198.18.0.10", a4);
	assert_false(fc_list_holds(&l, 4, a4));
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	assert_int_equal(the_conn().verdict, FC_VERDICT_DROP);
	assert_false(alive(a));
	fc_list_free(&l);
	assert_int_equal(fc_netns_sh("nft add element inet flowcut cut6 '{ 2001:2::5-2001:2::20 }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_CUT);
	l = (struct fc_list){ 0 };
	assert_int_equal(fd_nft_cut_read(n, &l), 0);
	inet_pton(AF_INET6, "2001:2::10", a6);
	assert_true(fc_list_holds(&l, 6, a6));
	inet_pton(AF_INET6, "2001:2::4", a6);
	assert_false(fc_list_holds(&l, 6, a6));
	fc_list_free(&l);
	assert_int_equal(fc_netns_sh("nft delete element inet flowcut cut6 '{ 2001:2::5-2001:2::20 }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_UNCUT);	/* what it cut may be released */
	assert_int_equal(fc_netns_sh("nft add table inet other"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_RULESET, FD_NFT_RULESET);
	assert_int_equal(fc_netns_sh("nft delete table inet other"), 0);
	(void)nft_events(n);
	/* a flowcutd that stops leaves its cuts in force; the next one takes them */
	fd_nft_close(n);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut cut4 | grep -q '198.19.0.0/24 timeout 30s'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	l = (struct fc_list){ 0 };
	assert_int_equal(fd_nft_cut_read(n, &l), 0);
	inet_pton(AF_INET, "198.19.0.10", a4);
	assert_true(fc_list_holds(&l, 4, a4));
	fc_list_free(&l);
	assert_int_equal(fc_netns_sh("test \"$(nft list chain inet flowcut seen | "
				     "grep -c 'ip saddr @cut4 drop')\" = 1"), 0);
	nft_close(n);
	nfct_destroy(a);
}

/*
 * A `flush ruleset` (as `nft -f` of a ruleset file that starts with one)
 * takes flowcutd's table with the rest: it is made again and its cut sets
 * put back as they were - an element taken out before (`flowcutctl uncut`)
 * stays out, one with a timeout keeps what is left of it.
 */
static void
test_cut_sets_put_back_after_flush(void **state)
{
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	assert_int_equal(fc_netns_sh("nft add element inet flowcut cut4 "
				     "'{ 198.19.0.0/24 timeout 30s, 198.19.1.1 }' && "
				     "nft add element inet flowcut cut6 '{ 2001:2::5 }'"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_CUT, FD_NFT_CUT);
	assert_int_equal(fc_netns_sh("nft delete element inet flowcut cut4 '{ 198.19.1.1 }'"), 0);
	(void)nft_events(n);
	assert_int_equal(fc_netns_sh("nft flush ruleset"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_RULESET, FD_NFT_RULESET);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut cut4 | "
				     "grep -q '198.19.0.0/24 timeout [0-9]*s'"), 0);
	assert_int_equal(fc_netns_sh("! nft list set inet flowcut cut4 | grep -q '198.19.1.1'"), 0);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut cut6 | grep -q '2001:2::5'"), 0);
	assert_int_equal(fc_netns_sh("nft list chain inet flowcut seen | grep -q 'ip saddr @cut4 drop'"),
			 0);
	/* put back once: the restore is flowcutd's own change, no cut */
	assert_int_equal(nft_events(n) & (FD_NFT_CUT | FD_NFT_RULESET), 0);
	nft_close(n);
}

/* A list as text, one space after each range. */
static void
ranges_text(const struct fc_list *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && used < len; i++) {
		char r[96];

		used += (size_t)snprintf(buf + used, len - used, "%s ",
					 fc_range_format(&l->r[i], r, sizeof(r)));
	}
}

/*
 * The hand's trigger (fd_trigger): each change of cut4/cut6 another
 * process makes is read from its notifications - fd_nft_cut_take gives
 * what that transaction added, not what the sets held before (IPv4 and
 * IPv6, an address, a prefix, a range, with and without a timeout); a
 * removal adds nothing.  fd_trigger_hand cuts what was added, and with
 * lost events (an error) what the sets hold whole; fd_trigger_conn
 * answers a cut by connection.
 */
static void
test_cut_by_hand_from_notifications(void **state)
{
	static const struct {
		const char *cmd;
		int events;		/* fd_nft_events' bits */
		const char *added;	/* fd_nft_cut_take's ranges */
	} rows[] = {
		{ "nft add element inet flowcut cut4 '{ 198.19.5.0/24 }'", FD_NFT_CUT,
		  "198.19.5.0/24 " },
		{ "nft add element inet flowcut cut4 '{ 198.19.7.1 timeout 30s, 198.19.8.5-198.19.8.9 }'",
		  FD_NFT_CUT, "198.19.7.1 198.19.8.5-198.19.8.9 " },
		{ "nft add element inet flowcut cut6 '{ 2001:2::5-2001:2::20 timeout 1h }' && "
		  "nft add element inet flowcut cut6 '{ 2001:2:0:9::/64 }'", FD_NFT_CUT,
		  "2001:2::5-2001:2::20 2001:2:0:9::/64 " },
		{ "nft delete element inet flowcut cut6 '{ 2001:2::5-2001:2::20 }'", FD_NFT_UNCUT, "" },
	};
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40010, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40011, "198.19.0.11", 5201,
				      "198.19.0.11", 5201, BIT);
	struct nf_conntrack *c = conn(IPPROTO_TCP, "198.18.0.10", 40012, "198.19.0.11", 80,
				      "198.19.0.11", 80, BIT);
	struct fd_cut_stats before = cut_stats();
	char got[400], ans[FC_CTL_ANS_MAX], want[FC_CTL_ANS_MAX];
	struct fd_nft *n;
	uint64_t id;

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_list l = { 0 };

		print_message("row %zu: %s\n", i, rows[i].cmd);
		assert_int_equal(fc_netns_sh(rows[i].cmd), 0);
		assert_int_equal(nft_events(n), rows[i].events);
		assert_int_equal(fd_nft_cut_take(n, &l), 0);
		ranges_text(&l, got, sizeof(got));
		assert_string_equal(got, rows[i].added);
		fc_list_free(&l);
	}
	create(a);
	create(b);
	create(c);
	turns(300);
	assert_int_equal(conns(), 3);
	/* by connection: the control socket's answers */
	id = conn_by_cport(40012).id;
	fd_trigger_conn(cut, id, ans, sizeof(ans));
	snprintf(want, sizeof(want), "ok connection %" PRIu64 " cut in hardware\n", id);
	assert_string_equal(ans, want);
	assert_false(alive(c));
	fd_trigger_conn(cut, id, ans, sizeof(ans));
	snprintf(want, sizeof(want), "error connection %" PRIu64 ": cut already\n", id);
	assert_string_equal(ans, want);
	fd_trigger_conn(cut, id + 12345, ans, sizeof(ans));
	snprintf(want, sizeof(want), "error connection %" PRIu64 ": not an offloaded connection "
		 "of this flowcutd\n", id + 12345);
	assert_string_equal(ans, want);
	assert_int_equal(cut_stats().in_hardware[FD_CUT_CONN], before.in_hardware[FD_CUT_CONN] + 1);
	/* an addition: what it added is cut, by hand */
	assert_int_equal(fc_netns_sh("nft add element inet flowcut cut4 '{ 198.19.0.10 }'"), 0);
	fd_trigger_hand(n, cut, nft_events(n));
	assert_int_equal(conn_by_cport(40010).verdict, FC_VERDICT_DROP);
	assert_false(alive(a));
	assert_true(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_HAND], before.in_hardware[FD_CUT_HAND] + 1);
	/* nothing about the cut sets: nothing cut */
	fd_trigger_hand(n, cut, 0);
	fd_trigger_hand(n, cut, FD_NFT_RULESET);
	assert_true(alive(b));
	/* events lost: the sets read whole, what they hold cut (its notification dropped here) */
	assert_int_equal(fc_netns_sh("nft add element inet flowcut cut4 '{ 198.19.0.11 }'"), 0);
	/* next to 198.19.0.10: nft's auto-merge takes that out and puts the two in as one */
	assert_int_equal(nft_events(n), FD_NFT_CUT | FD_NFT_UNCUT);
	{
		struct fc_list dropped = { 0 };

		assert_int_equal(fd_nft_cut_take(n, &dropped), 0);
		ranges_text(&dropped, got, sizeof(got));
		assert_string_equal(got, "198.19.0.10/31 ");
		fc_list_free(&dropped);
	}
	fd_trigger_hand(n, cut, -ENOBUFS);
	assert_int_equal(conn_by_cport(40011).verdict, FC_VERDICT_DROP);
	assert_false(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_HAND], before.in_hardware[FD_CUT_HAND] + 2);
	nft_close(n);
	nfct_destroy(a);
	nfct_destroy(b);
	nfct_destroy(c);
}

/*
 * With Cut in hardware off, a state killed on the host goes into the
 * connection drop sets first, both directions as the forward hook sees
 * them (the DNAT target, not the address the client asked), so its
 * sender's next segment opens no new state; our own element adds are no
 * ruleset change.
 */
static void
test_cut_on_host_blocks_the_five_tuple(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_TCP, "198.18.0.10", 40001, "198.19.0.99", 8443,
				      "198.19.0.10", 443, 0);
	struct fc_list l = list_of("198.19.0.10");
	struct fd_cut *c;
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	c = fd_cut_open(&(struct fd_cut_parts){ .off = off, .ct = ctio, .cmds = cmds, .nft = n,
						.cut_in_hardware = true });
	assert_non_null(c);
	assert_int_equal(fc_netns_sh("nft list chain inet flowcut seen | grep -q "
				     "'ip saddr . meta l4proto . th sport . ip daddr . th dport @conn4 drop'"), 0);
	settings(false, 30);
	fd_cut_settings(c, false);
	create(a);		/* no mark: not offloaded */
	turns(100);
	assert_int_equal(conns(), 0);
	assert_int_equal(fd_cut_ranges(c, &l, FD_CUT_HAND), 1);
	assert_false(alive(a));
	assert_int_equal(fc_netns_sh("nft list set inet flowcut conn4 | grep -q "
				     "'198.18.0.10 . tcp . 40001 . 198.19.0.10 . 443' && "
				     "nft list set inet flowcut conn4 | grep -q "
				     "'198.19.0.10 . tcp . 443 . 198.18.0.10 . 40001'"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_RULESET, 0);
	fc_list_free(&l);
	fd_cut_close(c);
	nft_close(n);
	nfct_destroy(a);
}

static bool
holds(const struct fc_list *l, const char *addr)
{
	uint8_t a[16] = { 0 };
	bool v6 = strchr(addr, ':') != NULL;

	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, addr, a), 1);
	return fc_list_holds(l, v6 ? 6 : 4, a);
}

/*
 * Watched sets of the host's own ruleset: an address set is looked up
 * (family, interval), a set of ports or none at all is refused with a
 * reason; what another process adds to a followed set is read from its
 * notifications - a prefix and a range in an interval set, an address in
 * a plain IPv6 set - as no ruleset change, and cut; the set reads back
 * whole; a removal is FD_NFT_UNCUT, no ruleset change.
 */
static void
test_watched_set_additions_cut(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, BIT);
	struct fd_setio_set s[4] = {
		{ .nfproto = NFPROTO_INET, .table = "filter", .name = "blocked4" },
		{ .nfproto = NFPROTO_INET, .table = "filter", .name = "blocked6" },
		{ .nfproto = NFPROTO_INET, .table = "filter", .name = "ports" },
		{ .nfproto = NFPROTO_INET, .table = "filter", .name = "nosuch" },
	};
	struct fd_cut_stats before = cut_stats();
	struct fc_list l = { 0 };
	struct fd_nft *n;
	char why[160];

	(void)state;
	SKIP_UNLESS_READY();
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter blocked4 '{ type ipv4_addr; flags interval; }' && "
			    "nft add set inet filter blocked6 '{ type ipv6_addr; }' && "
			    "nft add set inet filter ports '{ type inet_service; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	assert_int_equal(fd_setio_get(fd_nft_io(n), &s[0], why, sizeof(why)), 0);
	assert_int_equal(s[0].family, 4);
	assert_true(s[0].interval);
	assert_string_equal(why, "ipv4_addr, interval");
	assert_int_equal(fd_setio_get(fd_nft_io(n), &s[1], why, sizeof(why)), 0);
	assert_int_equal(s[1].family, 6);
	assert_false(s[1].interval);
	assert_int_equal(fd_setio_get(fd_nft_io(n), &s[2], why, sizeof(why)), -EMEDIUMTYPE);
	assert_string_equal(why, "its type is not ipv4_addr or ipv6_addr (nftables type 13, keys "
			    "of 2 bytes)");
	assert_int_equal(fd_setio_get(fd_nft_io(n), &s[3], why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "no such table or set");
	assert_int_equal(fd_nft_follow(n, s, 2), 0);
	create(a);
	turns(300);
	assert_int_equal(conns(), 1);

	assert_int_equal(fc_netns_sh("nft add element inet filter blocked4 '{ 198.19.0.0/24, "
			    "10.0.0.5-10.0.0.9 }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_WATCHED);
	assert_int_equal(fd_nft_followed_take(n, &l), 0);
	assert_int_equal(l.n, 2);
	assert_true(holds(&l, "198.19.0.10"));
	assert_true(holds(&l, "10.0.0.9"));
	assert_false(holds(&l, "10.0.0.10"));
	assert_false(holds(&l, "198.18.0.10"));
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_SET), 1);
	assert_int_equal(the_conn().verdict, FC_VERDICT_DROP);
	assert_false(alive(a));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_SET], before.in_hardware[FD_CUT_SET] + 1);
	fc_list_free(&l);

	assert_int_equal(fc_netns_sh("nft add element inet filter blocked6 '{ 2001:2::5 }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_WATCHED);
	assert_int_equal(fd_nft_followed_take(n, &l), 0);
	assert_int_equal(l.n, 1);
	assert_true(holds(&l, "2001:2::5"));
	fc_list_free(&l);

	assert_int_equal(fd_setio_read(fd_nft_io(n), &s[0], &l, NULL), 0);
	assert_int_equal(l.n, 2);
	assert_true(holds(&l, "10.0.0.5") && holds(&l, "198.19.0.255"));
	fc_list_free(&l);
	assert_int_equal(fc_netns_sh("nft delete element inet filter blocked4 '{ 10.0.0.5-10.0.0.9 }'"), 0);
	assert_int_equal(nft_events(n), FD_NFT_UNCUT);
	assert_int_equal(fc_netns_sh("nft add chain inet filter other"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_RULESET, FD_NFT_RULESET);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
	nfct_destroy(a);
}

/*
 * The list sets: filled whole (addresses into list4/list6, prefixes and
 * ranges into listnet4/listnet6), dropped both ways by the chain, changed
 * by a difference in one transaction; a difference that does not fit
 * what they hold is refused whole; a `flush ruleset` takes them, and
 * fd_nft_lists_lost says so once the table is back.
 */
static void
test_list_sets(void **state)
{
	struct fc_list l, to, add = { 0 }, del = { 0 };
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	assert_true(fd_nft_lists_lost(n));
	assert_false(fd_nft_lists_lost(n));
	assert_int_equal(fc_netns_sh("nft list chain inet flowcut seen | grep -q 'ip daddr @list4 drop' && "
			    "nft list chain inet flowcut seen | grep -q 'ip6 saddr @listnet6 drop'"), 0);
	l = list_of("198.19.0.10\n198.20.0.0/16\n2001:2::/64\n2001:2:0:1::10\n");
	assert_int_equal(fd_setio_lists_apply(fd_nft_io(n), NULL, &l, true), 0);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q '198.19.0.10' && "
			    "nft list set inet flowcut listnet4 | grep -q '198.20.0.0/16' && "
			    "nft list set inet flowcut listnet6 | grep -q '2001:2::/64' && "
			    "nft list set inet flowcut list6 | grep -q '2001:2:0:1::10'"), 0);
	to = list_of("198.19.0.11\n198.20.0.0/16\n198.22.0.0-198.22.0.9\n2001:2::/64\n");
	assert_int_equal(fc_list_diff(&l, &to, &add, &del), 0);
	assert_int_equal(fd_setio_lists_apply(fd_nft_io(n), &del, &add, false), 0);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q '198.19.0.11' && "
			    "! nft list set inet flowcut list4 | grep -q '198.19.0.10' && "
			    "nft list set inet flowcut listnet4 | grep -q '198.22.0.0-198.22.0.9' && "
			    "! nft list set inet flowcut list6 | grep -q '2001:2:0:1::10'"), 0);
	/* the same difference again: what it removes is not there, nothing changes */
	assert_int_equal(fd_setio_lists_apply(fd_nft_io(n), &del, &add, false), -ENOENT);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q '198.19.0.11'"), 0);
	assert_int_equal(nft_events(n), 0);	/* its own writes: no ruleset change */
	assert_int_equal(fc_netns_sh("nft flush ruleset"), 0);
	assert_int_equal(nft_events(n) & FD_NFT_RULESET, FD_NFT_RULESET);
	assert_true(fd_nft_lists_lost(n));
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q 'type ipv4_addr' && "
			    "! nft list set inet flowcut list4 | grep -q '198.19.0.11'"), 0);
	nft_close(n);
	fc_list_free(&l);
	fc_list_free(&to);
	fc_list_free(&add);
	fc_list_free(&del);
}

/* fd_watch's inotify descriptor readable within 2 s, then read. */
static void
files_turn(struct fd_watch *w)
{
	struct pollfd p = { .fd = fd_watch_fd(w), .events = POLLIN };

	assert_int_equal(poll(&p, 1, 2000), 1);
	fd_watch_files(w);
}

static void
file_put(const char *path, const char *text, bool append)
{
	char tmp[300];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(append ? path : tmp, append ? "a" : "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	if (!append)
		assert_int_equal(rename(tmp, path), 0);	/* a save, as an editor makes it */
}

/*
 * fd_watch end to end: a watched list file is put into the list sets; a
 * line appended is applied and its live connection cut (trigger "list");
 * the file saved anew is a difference; a file that cannot be read keeps
 * its last contents.  A watched set named in the settings is followed:
 * `nft add element` cuts (trigger "set").
 */
static void
test_watch_lists_and_sets(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 5201,
				      "198.19.0.10", 5201, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40001, "198.19.0.11", 5201,
				      "198.19.0.11", 5201, BIT);
	struct fd_cut_stats before = cut_stats();
	char dir[] = "/tmp/fc-watch-XXXXXX", path[128], cmd[300];
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/block.txt", dir);
	file_put(path, "# nothing yet\n198.20.0.1\n", false);
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter blocked4 '{ type ipv4_addr; flags interval; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fc_settings_default(&s);
	s.nlists = 1;
	snprintf(s.lists[0], sizeof(s.lists[0]), "%s", path);
	s.nsets = 1;
	snprintf(s.sets[0].family, sizeof(s.sets[0].family), "inet");
	snprintf(s.sets[0].table, sizeof(s.sets[0].table), "filter");
	snprintf(s.sets[0].set, sizeof(s.sets[0].set), "blocked4");
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q '198.20.0.1'"), 0);
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);

	file_put(path, "198.19.0.10\nnot an address\n", true);
	files_turn(w);
	assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_CUT_THRU);
	assert_false(alive(a));
	assert_true(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_LIST], before.in_hardware[FD_CUT_LIST] + 1);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut list4 | grep -q '198.19.0.10'"), 0);

	file_put(path, "198.21.0.0/16 ; a comment\n", false);
	files_turn(w);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut listnet4 | grep -q '198.21.0.0/16' && "
			    "! nft list set inet flowcut list4 | grep -q '198.19.0.10'"), 0);
	/* not a file any more: the last good contents stay */
	snprintf(cmd, sizeof(cmd), "mkfifo %s/fifo && mv %s/fifo %s", dir, dir, path);
	assert_int_equal(fc_netns_sh(cmd), 0);
	files_turn(w);
	assert_int_equal(fc_netns_sh("nft list set inet flowcut listnet4 | grep -q '198.21.0.0/16'"), 0);

	assert_int_equal(fc_netns_sh("nft add element inet filter blocked4 '{ 198.19.0.11 }'"), 0);
	fd_watch_nft(w, nft_events(n));
	assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_DROP);
	assert_false(alive(b));
	assert_int_equal(cut_stats().in_hardware[FD_CUT_SET], before.in_hardware[FD_CUT_SET] + 1);
	fd_watch_close(w);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(fc_netns_sh(cmd), 0);
	nfct_destroy(a);
	nfct_destroy(b);
}

static struct fp_out datagram(uint16_t cport, const char *dst);

/*
 * `why`, on the real kernel: a watched set's element cuts two
 * connections (one server, two client ports); the set's figures say 2 cut
 * and 1 element; `why` of the server names the set and the element and
 * both connections (in hardware, set); `why-conn` of one says the same; an
 * address nothing holds is "not cut"; a never-cut one names its entry.
 * The frames reader (fd_frames): its first read is each one's base, then
 * 3 datagrams dropped on one of them read as the set's 3.
 */
static void
test_why_names_the_set(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40050, "198.19.0.11", 5201,
				      "198.19.0.11", 5201, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40051, "198.19.0.11", 5201,
				      "198.19.0.11", 5201, BIT);
	static const char *const wants[] = {
		"\"cut\":true", "\"kind\":\"set\",\"name\":\"inet filter blocked4\","
		"\"element\":\"198.19.0.11\"", "\"trigger\":\"set\"", "\"in_hardware\":true",
	};
	struct fd_why *why = fd_why_open();
	struct fd_explain_parts p = { .why = why, .cut = cut, .off = off, .frames_read = true };
	struct fd_frames *frames;
	struct fc_list nv = { 0 }, none = { 0 };
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;
	char ans[4096];
	uint8_t addr[4];
	int src;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(why);
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter blocked4 '{ type ipv4_addr; flags interval; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	p.nft = n;
	fd_cut_why(cut, why);
	fd_watch_why(w, why);	/* before the settings */
	fc_settings_default(&s);
	s.nsets = 1;
	snprintf(s.sets[0].family, sizeof(s.sets[0].family), "inet");
	snprintf(s.sets[0].table, sizeof(s.sets[0].table), "filter");
	snprintf(s.sets[0].set, sizeof(s.sets[0].set), "blocked4");
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	create(a);
	create(b);
	turns(300);
	assert_int_equal(conns(), 2);
	assert_int_equal(fc_netns_sh("nft add element inet filter blocked4 '{ 198.19.0.11 }'"), 0);
	fd_watch_nft(w, nft_events(n));
	assert_int_equal(conn_by_cport(40050).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40051).verdict, FC_VERDICT_DROP);

	src = fd_why_source(why, FD_WHY_SET, "inet filter blocked4");
	assert_true(src >= 0);
	print_message("  the set's figures: %" PRIu64 " elements, %" PRIu64 " cut; %zu B kept\n",
		      fd_why_src(why, src)->elements, fd_why_src(why, src)->cut,
		      fd_why_bytes(why));
	assert_int_equal(fd_why_src(why, src)->cut, 2);
	assert_int_equal(fd_why_src(why, src)->elements, 1);
	assert_true(fd_why_src(why, src)->followed);
	frames = fd_frames_open(off, &cmds, why);
	assert_non_null(frames);
	assert_int_equal(fd_frames_turn(frames, 1), 2);	/* the base */
	assert_int_equal(fd_frames_turn(frames, 2), 0);	/* not due yet */
	assert_int_equal(fd_cmds_flush(&cmds, -1), 0);
	assert_int_equal(fd_frames_read(frames), 2);
	for (int i = 0; i < 3; i++)
		assert_int_equal(datagram(40050, "198.19.0.11").dest, FP_DEST_DROP);
	/*
	 * a new round every 5 s at most: not every second, and not once a
	 * minute either (the page and `why` showed 0 frames dropped for a cut
	 * flood's first minute: tests/lab/test_web.sh)
	 */
	assert_int_equal(fd_frames_turn(frames, 1 + FD_FRAMES_PERIOD_MS), 0);
	assert_int_equal(fd_frames_turn(frames, 1 + 6000), 2);
	assert_int_equal(fd_cmds_flush(&cmds, -1), 0);
	assert_int_equal(fd_why_src(why, src)->frames, 3);
	fd_frames_close(frames);
	fd_explain_triggers(&p, ans, sizeof(ans));
	assert_non_null(strstr(ans, "\"name\":\"inet filter blocked4\",\"followed\":true,"
				    "\"elements\":1,\"cut\":2,\"frames\":3}"));

	inet_pton(AF_INET, "198.19.0.11", addr);
	fd_explain_addr(&p, 4, addr, ans, sizeof(ans));
	print_message("  why 198.19.0.11: %s", ans);
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++)
		if (strstr(ans, wants[i]) == NULL)
			fail_msg("why 198.19.0.11: no '%s' in %s", wants[i], ans);
	assert_non_null(strstr(strstr(ans, "\"connections\":[{") + 16, "},{\"id\":"));	/* two */
	fd_explain_conn(&p, conn_by_cport(40051).id, ans, sizeof(ans));
	assert_non_null(strstr(ans, "\"trigger\":\"set\""));
	assert_non_null(strstr(ans, "\"element\":\"198.19.0.11\""));

	inet_pton(AF_INET, "203.0.113.9", addr);	/* nothing holds it */
	fd_explain_addr(&p, 4, addr, ans, sizeof(ans));
	assert_non_null(strstr(ans, "\"cut\":false,\"why\":\"not cut: no cut set, watched set or "
				    "list holds it\""));
	assert_int_equal(fc_list_parse("203.0.113.0/28\n", 15, &nv, NULL, NULL), 0);
	fc_list_canon(&nv);
	assert_int_equal(fd_cut_never(cut, &nv), 0);
	fd_explain_addr(&p, 4, addr, ans, sizeof(ans));
	assert_non_null(strstr(ans, "\"never_cut\":\"203.0.113.0/28\""));
	assert_non_null(strstr(ans, "never cut: a never_cut entry holds it"));
	assert_int_equal(fd_cut_never(cut, &none), 0);

	fd_cut_why(cut, NULL);
	fd_watch_close(w);
	nft_close(n);
	fd_why_close(why);
	fc_list_free(&nv);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
	nfct_destroy(a);
	nfct_destroy(b);
}

/* Every key of `keys` in `o` with its type (jansson's), or the test fails naming it. */
struct page_key {
	const char *key;
	json_type type;
};

static void
page_keys(const json_t *o, const struct page_key *keys, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_object_get(o, keys[i].key);

		if (v == NULL || json_typeof(v) != keys[i].type)
			fail_msg("%s: key '%s' %s", what, keys[i].key, v ? "of another type" : "missing");
	}
}

/* An answer "ok JSON\n" parsed (the caller decrefs it). */
static json_t *
page_ok(const char *ans)
{
	json_error_t e;
	json_t *doc;

	if (strncmp(ans, "ok ", 3) != 0)
		fail_msg("not ok: %s", ans);
	doc = json_loads(ans + 3, 0, &e);
	if (doc == NULL)
		fail_msg("not JSON (%s): %s", e.text, ans);
	return doc;
}

/*
 * The page's requests, on the real kernel and coprocessor: a watched set cuts
 * two of three connections; `conns` answers every key of the protocol
 * with its type, each filter as a row (rows, cut rows), a page of one
 * row's `next` goes on to the next, a FROM past the table answers no row
 * and `next` null; `cuts` the two, newest first, with their tuples.
 */
static void
test_page_conns_cuts(void **state)
{
	struct nf_conntrack *ct[3] = {
		conn(IPPROTO_UDP, "198.18.0.10", 40060, "198.19.0.11", 5201, "198.19.0.11", 5201, BIT),
		conn(IPPROTO_UDP, "198.18.0.10", 40061, "198.19.0.11", 5201, "198.19.0.11", 5201, BIT),
		conn(IPPROTO_UDP, "198.18.0.10", 40062, "198.19.0.10", 5201, "198.19.0.10", 5201, BIT),
	};
	static const struct page_key row_keys[] = {
		{ "id", JSON_INTEGER }, { "family", JSON_INTEGER }, { "proto", JSON_STRING },
		{ "src", JSON_STRING }, { "sport", JSON_INTEGER }, { "dst", JSON_STRING },
		{ "dport", JSON_INTEGER }, { "action", JSON_STRING }, { "verdict", JSON_STRING },
		{ "state", JSON_STRING }, { "idle_ms", JSON_INTEGER }, { "packets", JSON_INTEGER },
		{ "bytes", JSON_INTEGER },
	};
	static const struct page_key cut_keys[] = {
		{ "trigger", JSON_STRING }, { "source", JSON_STRING }, { "element", JSON_STRING },
		{ "line", JSON_NULL }, { "when_s", JSON_INTEGER }, { "in_hardware", JSON_TRUE },
		{ "frames_dropped", JSON_INTEGER },
	};
	static const struct page_key cuts_keys[] = {
		{ "id", JSON_INTEGER }, { "family", JSON_INTEGER }, { "proto", JSON_STRING },
		{ "src", JSON_STRING }, { "sport", JSON_INTEGER }, { "dst", JSON_STRING },
		{ "dport", JSON_INTEGER },
	};
	static const struct {
		const char *what;
		const char *addr;	/* NULL: none */
		uint8_t plen;
		int32_t port;
		const char *state, *action;
		size_t rows, cut;
	} rows[] = {
		{ "no filter", NULL, 0, -1, NULL, NULL, 3, 2 },
		{ "state=cut", NULL, 0, -1, "cut", NULL, 2, 2 },
		{ "state=valid", NULL, 0, -1, "valid", NULL, 3, 2 },
		{ "addr=198.19.0.11", "198.19.0.11", 32, -1, NULL, NULL, 2, 2 },
		{ "addr=198.19.0.10", "198.19.0.10", 32, -1, NULL, NULL, 1, 0 },
		{ "addr=198.19.0.0/16", "198.19.0.0", 16, -1, NULL, NULL, 3, 2 },
		{ "addr=198.19.0.64/26 (holds none)", "198.19.0.64", 26, -1, NULL, NULL, 0, 0 },
		{ "port=40062", NULL, 0, 40062, NULL, NULL, 1, 0 },
		{ "port=5201", NULL, 0, 5201, NULL, NULL, 3, 2 },
		{ "action=NONE_SUCH", NULL, 0, -1, NULL, "NONE_SUCH", 0, 0 },
	};
	struct fd_why *why = fd_why_open();
	struct fd_page_parts pp = { .cmds = &cmds, .off = off, .why = why };
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;
	static char ans[FC_CTL_ANS_MAX];
	json_t *doc, *a;
	uint64_t next;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(why);
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter blocked4 '{ type ipv4_addr; flags interval; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fd_cut_why(cut, why);
	fd_watch_why(w, why);
	fc_settings_default(&s);
	s.nsets = 1;
	snprintf(s.sets[0].family, sizeof(s.sets[0].family), "inet");
	snprintf(s.sets[0].table, sizeof(s.sets[0].table), "filter");
	snprintf(s.sets[0].set, sizeof(s.sets[0].set), "blocked4");
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	for (int i = 0; i < 3; i++)
		create(ct[i]);
	turns(300);
	assert_int_equal(conns(), 3);
	assert_int_equal(fc_netns_sh("nft add element inet filter blocked4 '{ 198.19.0.11 }'"), 0);
	fd_watch_nft(w, nft_events(n));

	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct fd_page_filter f = { .port = rows[r].port, .state = rows[r].state,
					    .action = rows[r].action };
		struct timespec t0, t1;
		size_t ncut = 0;

		if (rows[r].addr) {
			f.family = 4;
			f.plen = rows[r].plen;
			inet_pton(AF_INET, rows[r].addr, f.addr);
		}
		clock_gettime(CLOCK_MONOTONIC, &t0);
		fd_page_conns(&pp, 0, FD_PAGE_ROWS, &f, ans, sizeof(ans));
		clock_gettime(CLOCK_MONOTONIC, &t1);
		doc = page_ok(ans);
		a = json_object_get(doc, "conns");
		assert_true(json_is_array(a));
		assert_true(json_is_null(json_object_get(doc, "next")));
		assert_true(json_is_integer(json_object_get(doc, "from")));
		for (size_t i = 0; i < json_array_size(a); i++) {
			json_t *row = json_array_get(a, i), *c = json_object_get(row, "cut");

			page_keys(row, row_keys, sizeof(row_keys) / sizeof(row_keys[0]), rows[r].what);
			if (c == NULL)
				fail_msg("%s: no key 'cut'", rows[r].what);
			if (!json_is_null(c)) {
				ncut++;
				page_keys(c, cut_keys, sizeof(cut_keys) / sizeof(cut_keys[0]),
					  rows[r].what);
				assert_string_equal(json_string_value(json_object_get(c, "source")),
						    "inet filter blocked4");
				assert_string_equal(json_string_value(json_object_get(c, "element")),
						    "198.19.0.11");
			}
		}
		print_message("  conns (%s): %zu rows, %zu cut, %.3f ms\n", rows[r].what,
			      json_array_size(a), ncut, (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		if (json_array_size(a) != rows[r].rows || ncut != rows[r].cut)
			fail_msg("%s: %zu rows, %zu cut; want %zu, %zu: %s", rows[r].what,
				 json_array_size(a), ncut, rows[r].rows, rows[r].cut, ans);
		json_decref(doc);
	}

	/* a page of one: next is the second's id, and from it the second and third */
	fd_page_conns(&pp, 0, 1, &(struct fd_page_filter){ .port = -1 }, ans, sizeof(ans));
	doc = page_ok(ans);
	assert_int_equal(json_array_size(json_object_get(doc, "conns")), 1);
	assert_true(json_is_integer(json_object_get(doc, "next")));
	next = (uint64_t)json_integer_value(json_object_get(doc, "next"));
	json_decref(doc);
	fd_page_conns(&pp, next, FD_PAGE_ROWS, &(struct fd_page_filter){ .port = -1 }, ans,
		      sizeof(ans));
	doc = page_ok(ans);
	assert_int_equal(json_array_size(json_object_get(doc, "conns")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(doc,
		"conns"), 0), "id")), next);
	json_decref(doc);
	/* past the table's end: no row, next null */
	fd_page_conns(&pp, 0xfffffff0u, FD_PAGE_ROWS, &(struct fd_page_filter){ .port = -1 }, ans,
		      sizeof(ans));
	doc = page_ok(ans);
	assert_int_equal(json_array_size(json_object_get(doc, "conns")), 0);
	assert_true(json_is_null(json_object_get(doc, "next")));
	json_decref(doc);

	/* cuts: the two, with their tuples; cuts 1: one, none left out */
	fd_page_cuts(&pp, 50, ans, sizeof(ans));
	print_message("  cuts: %s", ans);
	doc = page_ok(ans);
	a = json_object_get(doc, "cuts");
	assert_int_equal(json_array_size(a), 2);
	assert_int_equal(json_integer_value(json_object_get(doc, "cuts_left")), 0);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *row = json_array_get(a, i);

		page_keys(row, cut_keys, sizeof(cut_keys) / sizeof(cut_keys[0]), "cuts");
		page_keys(row, cuts_keys, sizeof(cuts_keys) / sizeof(cuts_keys[0]), "cuts");
		assert_string_equal(json_string_value(json_object_get(row, "dst")), "198.19.0.11");
		assert_int_equal(json_integer_value(json_object_get(row, "dport")), 5201);
	}
	json_decref(doc);
	fd_page_cuts(&pp, 1, ans, sizeof(ans));
	doc = page_ok(ans);
	assert_int_equal(json_array_size(json_object_get(doc, "cuts")), 1);
	json_decref(doc);

	fd_cut_why(cut, NULL);
	fd_watch_close(w);
	nft_close(n);
	fd_why_close(why);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
	for (int i = 0; i < 3; i++)
		nfct_destroy(ct[i]);
}

/* The ids of one `conns` page (rows cut by the list at `path`, IPv6) into seen[]; its next. */
static json_t *
page_take(const char *ans, size_t cap, const char *path, uint64_t *seen, size_t *nseen,
	  size_t max, const char *what)
{
	json_t *doc, *a, *next;

	if (strlen(ans) >= cap)
		fail_msg("%s: %zu bytes, over the cap %zu", what, strlen(ans), cap);
	doc = page_ok(ans);
	a = json_object_get(doc, "conns");
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *row = json_array_get(a, i), *c = json_object_get(row, "cut");
		uint64_t id = (uint64_t)json_integer_value(json_object_get(row, "id"));

		if (json_integer_value(json_object_get(row, "family")) != 6 || !json_is_object(c) ||
		    !json_is_string(json_object_get(c, "source")) ||
		    strcmp(json_string_value(json_object_get(c, "source")), path) != 0)
			fail_msg("%s: row %zu not an IPv6 row cut by the list: %s", what, i, ans);
		for (size_t j = 0; j < *nseen; j++)
			if (seen[j] == id)
				fail_msg("%s: id %" PRIu64 " on two pages", what, id);
		if (*nseen == max)
			fail_msg("%s: more rows than connections", what);
		seen[(*nseen)++] = id;
	}
	next = json_object_get(doc, "next");
	if (!json_is_null(next) && !json_is_integer(next))
		fail_msg("%s: next neither null nor an id: %s", what, ans);
	return doc;
}

/*
 * The page's biggest answers, on the real kernel and coprocessor: 100 IPv6
 * states cut through a watched list whose path is the longest source
 * name (FD_WHY_NAME_MAX - 1 bytes).  `conns 0 100` and `cuts 100` as
 * rows of answer caps: FC_CTL_ANS_MAX (the socket's), and smaller ones
 * that shorten them (fd_page's `used + len > cap`: a cap is the
 * function's contract, and at 64 KiB 100 such rows fit - the figures
 * printed).  Each answer under its cap, JSON; conns' pages followed by
 * `next` give each of the 100 once, a shortened page's `next` the first
 * row of the next; cuts' rows and `cuts_left` make 100, and asking for as
 * many as were shown leaves none out.
 */
static void
test_page_biggest(void **state)
{
	enum { NCONN = FD_PAGE_ROWS };
	static const size_t caps[] = { FC_CTL_ANS_MAX, 16384, 4096, 1500 };
	static char ans[FC_CTL_ANS_MAX];
	static struct nf_conntrack *ct[NCONN];
	struct fd_page_filter all = { .port = -1 };
	char dir[] = "/tmp/fc-page-XXXXXX", path[FD_WHY_NAME_MAX], cmd[300];
	struct fd_why *why = fd_why_open();
	struct fd_page_parts pp = { .cmds = &cmds, .off = off, .why = why };
	uint64_t seen[NCONN], end;
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;
	size_t len;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(why);
	assert_non_null(mkdtemp(dir));
	len = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	memset(path + len, 'l', sizeof(path) - 1 - len - 4);
	snprintf(path + sizeof(path) - 5, 5, ".txt");
	assert_int_equal(strlen(path), FD_WHY_NAME_MAX - 1);
	file_put(path, "# nothing yet\n", false);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fd_cut_why(cut, why);
	fd_watch_why(w, why);
	fc_settings_default(&s);
	s.nlists = 1;
	snprintf(s.lists[0], sizeof(s.lists[0]), "%s", path);
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	for (int i = 0; i < NCONN; i++) {
		ct[i] = conn(IPPROTO_UDP, "2001:2::10", (uint16_t)(41000 + i), "2001:2:0:1::10", 5201,
			     "2001:2:0:1::10", 5201, BIT);
		create(ct[i]);
	}
	for (end = now_ns() + 5000000000ull; conns() < NCONN && now_ns() < end;)
		turns(50);
	assert_int_equal(conns(), NCONN);
	file_put(path, "2001:2:0:1::10\n", true);
	files_turn(w);
	turns(200);

	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		uint64_t from = 0;
		size_t nseen = 0, pages = 0, biggest = 0, shown;
		char what[64];
		json_t *doc, *next;

		for (;;) {
			snprintf(what, sizeof(what), "conns at cap %zu, page %zu", caps[c], pages);
			fd_page_conns(&pp, from, FD_PAGE_ROWS, &all, ans, caps[c]);
			size_t before = nseen;

			doc = page_take(ans, caps[c], path, seen, &nseen, NCONN, what);
			biggest = strlen(ans) > biggest ? strlen(ans) : biggest;
			pages++;
			if (from != 0 && nseen > before && seen[before] != from)
				fail_msg("%s: the page from %" PRIu64 " starts at %" PRIu64, what, from,
					 seen[before]);
			next = json_object_get(doc, "next");
			if (json_is_null(next)) {
				json_decref(doc);
				break;
			}
			if (nseen == before || pages > NCONN)
				fail_msg("%s: next %" PRIu64 " and no row: no way on", what,
					 (uint64_t)json_integer_value(next));
			from = (uint64_t)json_integer_value(next);
			json_decref(doc);
		}
		print_message("  conns 0 100 at cap %zu: %zu pages, the biggest %zu bytes\n",
			      caps[c], pages, biggest);
		if (nseen != NCONN)
			fail_msg("conns at cap %zu: %zu rows over its pages, want %d", caps[c], nseen,
				 NCONN);
		if (caps[c] < FC_CTL_ANS_MAX && pages < 2)
			fail_msg("conns at cap %zu: not shortened (one page)", caps[c]);

		fd_page_cuts(&pp, FD_PAGE_ROWS, ans, caps[c]);
		if (strlen(ans) >= caps[c])
			fail_msg("cuts at cap %zu: %zu bytes", caps[c], strlen(ans));
		doc = page_ok(ans);
		shown = json_array_size(json_object_get(doc, "cuts"));
		print_message("  cuts 100 at cap %zu: %zu rows, cuts_left %lld, %zu bytes\n", caps[c],
			      shown, (long long)json_integer_value(json_object_get(doc, "cuts_left")),
			      strlen(ans));
		if (shown == 0 || shown + (size_t)json_integer_value(json_object_get(doc, "cuts_left"))
				  != NCONN)
			fail_msg("cuts at cap %zu: %zu rows and cuts_left %lld, want %d together",
				 caps[c], shown,
				 (long long)json_integer_value(json_object_get(doc, "cuts_left")), NCONN);
		for (size_t i = 0; i < shown; i++) {
			json_t *row = json_array_get(json_object_get(doc, "cuts"), i);

			if (strcmp(json_string_value(json_object_get(row, "source")), path) != 0 ||
			    json_integer_value(json_object_get(row, "family")) != 6)
				fail_msg("cuts at cap %zu: row %zu: %s", caps[c], i, ans);
		}
		json_decref(doc);
		fd_page_cuts(&pp, (unsigned int)shown, ans, caps[c]);
		doc = page_ok(ans);
		assert_int_equal(json_array_size(json_object_get(doc, "cuts")), shown);
		assert_int_equal(json_integer_value(json_object_get(doc, "cuts_left")), 0);
		json_decref(doc);
	}

	fd_cut_why(cut, NULL);
	fd_watch_close(w);
	nft_close(n);
	fd_why_close(why);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(fc_netns_sh(cmd), 0);
	for (int i = 0; i < NCONN; i++)
		nfct_destroy(ct[i]);
}

/* A UDP datagram of the client at 198.18.0.10 (or 2001:2::10) from `cport` to `dst`:5201. */
static struct fp_out
datagram(uint16_t cport, const char *dst)
{
	struct fc_frame_spec f = { .payload = 100 };

	memcpy(f.dmac, MAC0, 6);
	memcpy(f.smac, CLIENT_MAC, 6);
	if (strchr(dst, ':'))
		fc_key6(&f.key, IPPROTO_UDP, "2001:2::10", cport, dst, 5201);
	else
		fc_key4(&f.key, IPPROTO_UDP, "198.18.0.10", cport, dst, 5201);
	return frame_out(0, &f);
}

/* How one connection of test_uncut_releases is cut, and what must become of it. */
struct uncut_case {
	uint16_t cport;
	const char *dst;	/* the far end cut */
	const char *cut;	/* the shell command that cuts it (NULL: fd_cut_conn, by id) */
	bool released_by_sets;	/* after the sets' elements are removed */
	bool released_by_list;	/* after the list's line is removed too */
	bool released_by_time;	/* after cut4's timed element ran out */
};

/*
 * An uncut releases what it cut: connections cut through a watched set
 * (IPv4 interval, IPv6 plain), by hand (cut4/cut6), by a list line and by
 * id; then the elements are deleted (`nft delete element`, as `flowcutctl
 * uncut` does for cut4/cut6): the ones nothing else holds leave the fast
 * path and their next datagram goes to the host (where the rules judge
 * it), the one still in the list stays dropping until its line goes, the
 * one cut by id stays; a timed element of cut4 running out releases its
 * connection within a second.
 */
static void
test_uncut_releases(void **state)
{
	static const struct uncut_case cases[] = {
		{ 40030, "198.19.0.10", "nft add element inet filter blocked4 '{ 198.19.0.10 }'",
		  true, true, true },
		{ 40031, "198.19.0.11", "nft add element inet filter blocked4 '{ 198.19.0.11 }'",
		  false, true, true },	/* the list holds it too */
		{ 40032, "2001:2:0:1::10", "nft add element inet filter blocked6 "
		  "'{ 2001:2:0:1::10 }'", true, true, true },
		{ 40033, "198.19.0.12", "nft add element inet flowcut cut4 '{ 198.19.0.12 }'",
		  true, true, true },
		{ 40034, "2001:2:0:1::11", "nft add element inet flowcut cut6 '{ 2001:2:0:1::11 }'",
		  true, true, true },
		{ 40035, "198.19.0.13", NULL, false, false, false },	/* by id: stays */
		{ 40036, "198.19.0.14", "nft add element inet flowcut cut4 "
		  "'{ 198.19.0.14 timeout 2s }'", false, false, true },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	char dir[] = "/tmp/fc-uncut-XXXXXX", path[128], cmd[300];
	struct nf_conntrack *ct[N];
	uint64_t id[N];
	struct fc_settings s;
	struct fd_offload_conn oc;
	struct fd_watch *w;
	struct fd_nft *n;
	uint64_t released, timed_at = 0;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/block.txt", dir);
	file_put(path, "198.20.0.1\n", false);
	assert_int_equal(fc_netns_sh("for a in 12 13 14; do ip neigh replace 198.19.0.$a lladdr "
			    "02:00:00:00:00:0c dev fp1 nud permanent || exit 1; done"), 0);
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter blocked4 '{ type ipv4_addr; flags interval; }' && "
			    "nft add set inet filter blocked6 '{ type ipv6_addr; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fc_settings_default(&s);
	s.nlists = 1;
	snprintf(s.lists[0], sizeof(s.lists[0]), "%s", path);
	s.nsets = 2;
	for (int i = 0; i < 2; i++) {
		snprintf(s.sets[i].family, sizeof(s.sets[i].family), "inet");
		snprintf(s.sets[i].table, sizeof(s.sets[i].table), "filter");
		snprintf(s.sets[i].set, sizeof(s.sets[i].set), "blocked%d", i ? 6 : 4);
	}
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	for (int i = 0; i < N; i++) {
		bool v6 = strchr(cases[i].dst, ':') != NULL;

		ct[i] = conn(IPPROTO_UDP, v6 ? "2001:2::10" : "198.18.0.10", cases[i].cport,
			     cases[i].dst, 5201, cases[i].dst, 5201, BIT);
		create(ct[i]);
	}
	turns(300);
	assert_int_equal(conns(), N);
	/* each cut its way, as flowcutd's loop hands the events on */
	for (int i = 0; i < N; i++) {
		int rc;

		if (cases[i].cut == NULL) {
			assert_int_equal(fd_cut_conn(cut, conn_by_cport(cases[i].cport).id,
						     FD_CUT_CONN), 0);
			continue;
		}
		assert_int_equal(fc_netns_sh(cases[i].cut), 0);
		if (cases[i].released_by_time && !cases[i].released_by_list)
			timed_at = now_ns();	/* its 2 s run from here */
		rc = nft_events(n);
		if (rc & FD_NFT_CUT) {
			struct fc_list l = { 0 };

			assert_int_equal(fd_nft_cut_read(n, &l), 0);
			assert_true(fd_cut_ranges(cut, &l, FD_CUT_HAND) >= 1);
			fc_list_free(&l);
		}
		fd_watch_nft(w, rc);
	}
	file_put(path, "198.20.0.1\n198.19.0.11\n", false);
	files_turn(w);
	for (int i = 0; i < N; i++) {
		id[i] = conn_by_cport(cases[i].cport).id;
		assert_int_equal(conn_by_cport(cases[i].cport).verdict, FC_VERDICT_DROP);
		assert_int_equal(datagram(cases[i].cport, cases[i].dst).dest, FP_DEST_DROP);
		assert_false(alive(ct[i]));
	}

	/* the elements removed: what nothing else holds is released */
	released = cut_stats().cut_released;
	assert_int_equal(fc_netns_sh("nft delete element inet filter blocked4 '{ 198.19.0.10, "
			    "198.19.0.11 }' && nft delete element inet filter blocked6 "
			    "'{ 2001:2:0:1::10 }' && nft delete element inet flowcut cut4 "
			    "'{ 198.19.0.12 }' && nft delete element inet flowcut cut6 "
			    "'{ 2001:2:0:1::11 }'"), 0);
	for (int k = 0; k < 100 && cut_stats().cut_released < released + 4; k++) {
		fd_watch_nft(w, fd_nft_events(n));
		usleep(10000);
	}
	for (int i = 0; i < N; i++) {
		struct fp_out o = datagram(cases[i].cport, cases[i].dst);

		if (cases[i].released_by_sets) {
			assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, id[i], NULL, &oc, NULL), -ENOENT);
			assert_int_equal(o.dest, FP_DEST_HOST);
		} else {
			assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, id[i], NULL, &oc, NULL), 0);
			assert_true(oc.cut);
			assert_int_equal(o.dest, FP_DEST_DROP);
		}
	}
	assert_int_equal(cut_stats().cut_released, released + 4);

	/* the list's line removed: the one it held goes too */
	file_put(path, "198.20.0.1\n", false);
	files_turn(w);
	for (int i = 0; i < N; i++)
		if (cases[i].released_by_list && !cases[i].released_by_sets)
			assert_int_equal(datagram(cases[i].cport, cases[i].dst).dest, FP_DEST_HOST);
	assert_int_equal(cut_stats().cut_released, released + 5);

	/* the timed element runs out: within a second of it, released */
	for (int k = 0; k < 400 && cut_stats().cut_released < released + 6; k++) {
		fd_watch_expiry(w);
		usleep(10000);
	}
	for (int i = 0; i < N; i++) {
		struct fp_out o = datagram(cases[i].cport, cases[i].dst);

		assert_int_equal(o.dest, cases[i].released_by_time ? FP_DEST_HOST : FP_DEST_DROP);
		nfct_destroy(ct[i]);
	}
	assert_int_equal(cut_stats().cut_released, released + 6);
	assert_true(now_ns() - timed_at < 3000000000ull);	/* 2 s, and within 1 s of them */
	fd_watch_close(w);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(fc_netns_sh(cmd), 0);
}

/* How one connection of test_uncut_on_expiry is cut, and what must become of it. */
struct expiry_case {
	uint16_t cport;
	const char *dst;	/* the far end cut */
	const char *cut;	/* the shell command that cuts it (a timed element first) */
	bool stays;		/* another watched set holds it without a timeout */
	const char *refresh;	/* a command run 500 ms after, that gives its element longer */
	unsigned int ms;	/* its element's time from the cut (or the refresh) */
};

/*
 * An element of a watched set runs out (`flags timeout`, `timeout 2s`:
 * CrowdSec's bans, fail2ban's bantime) - the kernel says nothing - and
 * within a second of it the connections it alone cut are released, as
 * for a deletion (IPv4 in an interval set, IPv6 in a plain one), not
 * before: out of the binding, their next datagram to the host.  One also
 * in a watched set without timeouts stays cut; one whose element was
 * refreshed (added again with a longer timeout: the set read again at
 * the first time finds it still there) is released at the new time.
 */
static void
test_uncut_on_expiry(void **state)
{
	static const struct expiry_case cases[] = {
		{ 40040, "198.19.0.20", "nft add element inet filter timed4 '{ 198.19.0.20 timeout 2s }'",
		  false, NULL, 2000 },
		{ 40041, "2001:2:0:1::20", "nft add element inet filter timed6 "
		  "'{ 2001:2:0:1::20 timeout 2s }'", false, NULL, 2000 },
		{ 40042, "198.19.0.21", "nft add element inet filter timed4 '{ 198.19.0.21 timeout 2s }' && "
		  "nft add element inet filter keep4 '{ 198.19.0.21 }'", true, NULL, 2000 },
		{ 40043, "2001:2:0:1::21", "nft add element inet filter timed6 "
		  "'{ 2001:2:0:1::21 timeout 2s }' && nft add element inet filter keep6 "
		  "'{ 2001:2:0:1::21 }'", true, NULL, 2000 },
		{ 40044, "198.19.0.22", "nft add element inet filter timed4 '{ 198.19.0.22 timeout 2s }'",
		  false, "nft add element inet filter timed4 '{ 198.19.0.22 timeout 3s }'", 3000 },
		{ 40045, "2001:2:0:1::22", "nft add element inet filter timed6 "
		  "'{ 2001:2:0:1::22 timeout 2s }'", false,
		  "nft add element inet filter timed6 '{ 2001:2:0:1::22 timeout 3s }'", 3000 },
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	static const char *const sets[4] = { "timed4", "timed6", "keep4", "keep6" };
	struct nf_conntrack *ct[N];
	/*
	 * Each element's time starts when the kernel adds it: somewhere
	 * between `from` (before the command) and `upto` (once it returned:
	 * a shell and nft spawned, up to a second on a loaded machine).  Not
	 * before from + its time, and within 1 s of upto + its time.
	 */
	uint64_t id[N], from[N], upto[N], gone[N] = { 0 }, released;
	bool refreshed[N] = { false };
	struct fd_offload_conn oc;
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	assert_int_equal(fc_netns_sh("for a in 20 21 22; do ip neigh replace 198.19.0.$a lladdr "
			    "02:00:00:00:00:0c dev fp1 nud permanent && ip -6 neigh replace "
			    "2001:2:0:1::$a lladdr 02:00:00:00:00:0c dev fp1 nud permanent || exit 1; "
			    "done"), 0);
	assert_int_equal(fc_netns_sh("nft add table inet filter && "
			    "nft add set inet filter timed4 '{ type ipv4_addr; flags interval, timeout; }' && "
			    "nft add set inet filter timed6 '{ type ipv6_addr; flags timeout; }' && "
			    "nft add set inet filter keep4 '{ type ipv4_addr; flags interval; }' && "
			    "nft add set inet filter keep6 '{ type ipv6_addr; }'"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fc_settings_default(&s);
	s.nsets = 4;
	for (int i = 0; i < 4; i++) {
		snprintf(s.sets[i].family, sizeof(s.sets[i].family), "inet");
		snprintf(s.sets[i].table, sizeof(s.sets[i].table), "filter");
		snprintf(s.sets[i].set, sizeof(s.sets[i].set), "%s", sets[i]);
	}
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	for (int i = 0; i < N; i++) {
		bool v6 = strchr(cases[i].dst, ':') != NULL;

		ct[i] = conn(IPPROTO_UDP, v6 ? "2001:2::10" : "198.18.0.10", cases[i].cport,
			     cases[i].dst, 5201, cases[i].dst, 5201, BIT);
		create(ct[i]);
	}
	turns(300);
	assert_int_equal(conns(), N);
	released = cut_stats().cut_released;
	for (int i = 0; i < N; i++) {
		from[i] = now_ns();
		assert_int_equal(fc_netns_sh(cases[i].cut), 0);
		upto[i] = now_ns();
		fd_watch_nft(w, nft_events(n));	/* as flowcutd's loop hands them on */
		id[i] = conn_by_cport(cases[i].cport).id;
		assert_int_equal(conn_by_cport(cases[i].cport).verdict, FC_VERDICT_DROP);
		assert_int_equal(datagram(cases[i].cport, cases[i].dst).dest, FP_DEST_DROP);
	}

	/* flowcutd's loop for 5 s: nftables' events, then the expiries, each turn */
	for (uint64_t t0 = now_ns(); now_ns() - t0 < 5000000000ull;) {
		for (int i = 0; i < N; i++) {
			if (cases[i].refresh && !refreshed[i] && now_ns() - from[i] >= 500000000ull) {
				from[i] = now_ns();	/* its new time runs from here */
				assert_int_equal(fc_netns_sh(cases[i].refresh), 0);
				upto[i] = now_ns();
				refreshed[i] = true;
			}
			if (gone[i] == 0 && fd_offload_find(off, FD_OFFLOAD_BY_FP, id[i], NULL, &oc, NULL) == -ENOENT)
				gone[i] = now_ns();
		}
		fd_watch_nft(w, fd_nft_events(n));
		fd_watch_expiry(w);
		usleep(5000);
	}
	for (int i = 0; i < N; i++) {
		struct fp_out o = datagram(cases[i].cport, cases[i].dst);

		if (cases[i].stays) {
			print_message("%s: still cut\n", cases[i].dst);
			assert_int_equal(gone[i], 0);
			assert_int_equal(fd_offload_find(off, FD_OFFLOAD_BY_FP, id[i], NULL, &oc, NULL), 0);
			assert_true(oc.cut);
			assert_int_equal(o.dest, FP_DEST_DROP);
		} else {
			uint64_t after_ms = gone[i] ? (gone[i] - from[i]) / 1000000 : 0;
			int64_t late_ms = gone[i] ? ((int64_t)gone[i] - (int64_t)upto[i]) / 1000000 -
						    (int64_t)cases[i].ms : 0;

			if (gone[i])
				print_message("%s: released %" PRIu64 " ms after the command that "
					      "gave its element %u ms (the command took %" PRIu64 " ms: "
					      "%" PRId64 " ms late at most)\n", cases[i].dst, after_ms,
					      cases[i].ms, (upto[i] - from[i]) / 1000000, late_ms);
			else
				print_message("%s: not released\n", cases[i].dst);
			assert_true(gone[i] != 0);
			assert_true(after_ms >= cases[i].ms);	/* not before its time */
			assert_true(late_ms < 1000);		/* within 1 s of it */
			assert_int_equal(o.dest, FP_DEST_HOST);
		}
		nfct_destroy(ct[i]);
	}
	assert_int_equal(cut_stats().cut_released, released + 4);
	fd_watch_close(w);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet filter"), 0);
}

/*
 * A list bigger than one transaction: filled a transaction per turn
 * (fd_watch_work), the loop free in between; a line appended meanwhile
 * waits for the fill, then goes in as a difference of one.
 */
static void
test_watch_big_list_in_steps(void **state)
{
	char dir[] = "/tmp/fc-watch-XXXXXX", path[128], cmd[512];
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;
	FILE *f;
	int steps = 0;

	(void)state;
	SKIP_UNLESS_READY();
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/big.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (unsigned int i = 0; i < 2 * FD_WATCH_CHUNK + 20000; i++)
		fprintf(f, "2001:2:0:ee::%x:%x\n", (2 * i + 2) >> 16, (2 * i + 2) & 0xffff);
	assert_int_equal(fclose(f), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	fc_settings_default(&s);
	s.nlists = 1;
	snprintf(s.lists[0], sizeof(s.lists[0]), "%s", path);
	fd_watch_settings(w, &s);	/* the first transaction */
	fd_watch_boot(w);
	file_put(path, "198.19.0.10\n", true);
	files_turn(w);			/* read, its change waits for the fill */
	while (fd_watch_work(w) == 1)
		steps++;
	assert_int_equal(steps, 1);	/* 3 transactions: the settings', 2 turns */
	assert_int_equal(fd_watch_work(w), 0);
	snprintf(cmd, sizeof(cmd), "test $(nft list set inet flowcut list6 | grep -o '2001:2:0:ee::' "
		 "| wc -l) = %u && nft list set inet flowcut list4 | grep -q 198.19.0.10",
		 2 * FD_WATCH_CHUNK + 20000);
	assert_int_equal(fc_netns_sh(cmd), 0);
	fd_watch_close(w);
	nft_close(n);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(fc_netns_sh(cmd), 0);
}


/* A connection of test_watch_by_pattern: its client port and far end, IPv4 or IPv6. */
struct pattern_conn {
	uint16_t cport;
	const char *dst;
};

/* One step of test_watch_by_pattern: what another process does, and what must follow. */
struct pattern_step {
	const char *what;
	unsigned int remake;	/* the connections (bits) whose states are made again first */
	const char *cmd;	/* nft's input, run with `nft -f -` (NULL: none) */
	unsigned int dropping;	/* the connections (bits) dropping after, the others not */
	unsigned int followed;	/* fd_watch_stats' watched_sets_followed after */
};

static struct fd_watch_stats
watch_stats(const struct fd_watch *w)
{
	struct fd_watch_stats st;

	fd_watch_stats(w, &st);
	return st;
}

/* Whether each connection is dropping as `dropping` says, and `followed` sets followed. */
static bool
pattern_holds(const struct fd_watch *w, const struct pattern_conn *c, unsigned int nc,
	      unsigned int dropping, unsigned int followed)
{
	if (watch_stats(w).watched_sets_followed != followed)
		return false;
	for (unsigned int i = 0; i < nc; i++)
		if ((datagram(c[i].cport, c[i].dst).dest == FP_DEST_DROP) != !!(dropping & (1u << i)))
			return false;
	return true;
}

/* The watched lines of the pattern tests: patterns only, never a set's name. */
static void
pattern_settings(struct fc_settings *s, const char *const (*lines)[3], unsigned int n)
{
	fc_settings_default(s);
	s->nsets = n;
	for (unsigned int i = 0; i < n; i++) {
		snprintf(s->sets[i].family, sizeof(s->sets[i].family), "%s", lines[i][0]);
		snprintf(s->sets[i].table, sizeof(s->sets[i].table), "%s", lines[i][1]);
		snprintf(s->sets[i].set, sizeof(s->sets[i].set), "%s", lines[i][2]);
		assert_true(fc_settings_is_pattern(s->sets[i].set));
	}
}

/*
 * Watched by table or by pattern (`inet f2b-table *`, `ip crowdsec
 * crowdsec-blacklists*`, `ip6 crowdsec6 *`), the tables made after the
 * watcher started, as fail2ban and CrowdSec's bouncer make and delete
 * them: a set made later is found, followed and what is added to it cut
 * (IPv4 and IPv6, interval, plain and timeout sets); a map keyed by
 * address and a set of ports under `*` are skipped, a set whose name does
 * not match is not watched; a set deleted releases what it alone cut, and
 * made again is followed again; a table deleted releases its sets' cuts,
 * made anew is followed again.
 */
static void
test_watch_by_pattern(void **state)
{
	static const char *const lines[][3] = {
		{ "inet", "f2b-table", "*" },
		{ "ip", "crowdsec", "crowdsec-blacklists*" },
		{ "ip6", "crowdsec6", "*" },
	};
	static const struct pattern_conn c[] = {
		{ 40050, "198.19.0.30" },	/* A: inet f2b-table addr-set-* */
		{ 40051, "2001:2:0:1::30" },	/* B: inet f2b-table addr6-set-* */
		{ 40052, "198.19.0.31" },	/* C: ip crowdsec crowdsec-blacklists-cscli */
		{ 40053, "2001:2:0:1::31" },	/* D: ip6 crowdsec6 crowdsec6-blacklists-cscli */
		{ 40054, "198.19.0.32" },	/* E: a key of a map in inet f2b-table: never cut */
		{ 40055, "198.19.0.33" },	/* F: ip crowdsec's set not matching: never cut */
	};
	enum { A = 1, B = 2, C = 4, D = 8, NC = sizeof(c) / sizeof(c[0]) };
	static const struct pattern_step steps[] = {
		{ "no table yet", 0, NULL, 0, 0 },
		{ "fail2ban's table made, its sets empty; a map and a set of ports beside", 0,
		  "add table inet f2b-table\n"
		  "add set inet f2b-table addr-set-sshd { type ipv4_addr; flags interval; }\n"
		  "add set inet f2b-table addr6-set-sshd { type ipv6_addr; flags interval; }\n"
		  "add set inet f2b-table ports { type inet_service; }\n"
		  "add map inet f2b-table m { type ipv4_addr : verdict; elements = { 198.19.0.32 : drop } }\n",
		  0, 2 },
		{ "bans added (banip)", 0,
		  "add element inet f2b-table addr-set-sshd { 198.19.0.30 }\n"
		  "add element inet f2b-table addr6-set-sshd { 2001:2:0:1::30 }\n"
		  "add element inet f2b-table ports { 5201 }\n", A | B, 2 },
		{ "the bouncer starts: tables, sets and bans in one transaction", 0,
		  "add table ip crowdsec\n"
		  "add set ip crowdsec crowdsec-blacklists-cscli { type ipv4_addr; flags timeout; }\n"
		  "add element ip crowdsec crowdsec-blacklists-cscli { 198.19.0.31 timeout 1h }\n"
		  "add set ip crowdsec other { type ipv4_addr; }\n"
		  "add element ip crowdsec other { 198.19.0.33 }\n"
		  "add table ip6 crowdsec6\n"
		  "add set ip6 crowdsec6 crowdsec6-blacklists-cscli { type ipv6_addr; flags timeout; }\n"
		  "add element ip6 crowdsec6 crowdsec6-blacklists-cscli { 2001:2:0:1::31 timeout 1h }\n",
		  A | B | C | D, 4 },
		{ "a jail stops: its IPv4 set deleted", 0,
		  "delete set inet f2b-table addr-set-sshd\n", B | C | D, 3 },
		{ "the jail starts again: its set made again, its ban added", A,
		  "add set inet f2b-table addr-set-sshd { type ipv4_addr; flags interval; }\n"
		  "add element inet f2b-table addr-set-sshd { 198.19.0.30 }\n", A | B | C | D, 4 },
		{ "the last jail stops: fail2ban's table deleted", 0,
		  "delete table inet f2b-table\n", C | D, 2 },
		{ "fail2ban starts again: the table made anew, other jails", A | B,
		  "add table inet f2b-table\n"
		  "add set inet f2b-table addr-set-web { type ipv4_addr; }\n"
		  "add set inet f2b-table addr6-set-web { type ipv6_addr; flags timeout; }\n"
		  "add element inet f2b-table addr-set-web { 198.19.0.30 }\n"
		  "add element inet f2b-table addr6-set-web { 2001:2:0:1::30 timeout 1h }\n",
		  A | B | C | D, 4 },
		{ "the bouncer stops: ip crowdsec deleted", 0, "delete table ip crowdsec\n",
		  A | B | D, 3 },
		{ "... and ip6 crowdsec6", 0, "delete table ip6 crowdsec6\n", A | B, 2 },
	};
	struct nf_conntrack *ct[NC];
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	assert_int_equal(fc_netns_sh("for a in 30 31 32 33; do ip neigh replace 198.19.0.$a lladdr "
			    "02:00:00:00:00:0c dev fp1 nud permanent && ip -6 neigh replace "
			    "2001:2:0:1::$a lladdr 02:00:00:00:00:0c dev fp1 nud permanent || exit 1; "
			    "done"), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	pattern_settings(&s, lines, sizeof(lines) / sizeof(lines[0]));
	fd_watch_settings(w, &s);
	fd_watch_boot(w);
	for (unsigned int i = 0; i < NC; i++) {
		bool v6 = strchr(c[i].dst, ':') != NULL;

		ct[i] = conn(IPPROTO_UDP, v6 ? "2001:2::10" : "198.18.0.10", c[i].cport, c[i].dst,
			     5201, c[i].dst, 5201, BIT);
		create(ct[i]);
	}
	turns(300);
	assert_int_equal(conns(), NC);
	for (unsigned int k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		const struct pattern_step *st = &steps[k];
		char cmd[2048];
		bool held = false;

		print_message("step %u: %s\n", k, st->what);
		for (unsigned int i = 0; i < NC; i++)
			if (st->remake & (1u << i)) {
				assert_false(alive(ct[i]));	/* its cut killed it */
				create(ct[i]);
			}
		if (st->remake) {
			turns(300);
			for (unsigned int i = 0; i < NC; i++)
				if (st->remake & (1u << i))
					assert_int_equal(conn_by_cport(c[i].cport).verdict,
							 FC_VERDICT_CUT_THRU);
		}
		if (st->cmd) {
			snprintf(cmd, sizeof(cmd), "nft -f - <<'EOF'\n%sEOF\n", st->cmd);
			assert_int_equal(fc_netns_sh(cmd), 0);
		}
		/* flowcutd's loop for up to 2 s: nftables' events handed on */
		for (int t = 0; t < 200 && !held; t++) {
			fd_watch_nft(w, fd_nft_events(n));
			held = pattern_holds(w, c, NC, st->dropping, st->followed);
			if (!held)
				usleep(10000);
		}
		for (unsigned int i = 0; i < NC; i++)
			print_message("  %s: %s\n", c[i].dst,
				      datagram(c[i].cport, c[i].dst).dest == FP_DEST_DROP ? "dropping"
											  : "not dropping");
		print_message("  followed: %" PRIu64 "\n", watch_stats(w).watched_sets_followed);
		assert_true(held);
		assert_int_equal(watch_stats(w).watched_sets_beyond, 0);
	}
	fd_watch_close(w);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet f2b-table"), 0);
	for (unsigned int i = 0; i < NC; i++)
		nfct_destroy(ct[i]);
}

/*
 * The bound on sets under patterns: a table of FD_WATCH_PATTERN_SETS + 2
 * address sets (and a map, skipped, not counted) watched by `*`: the
 * first FD_WATCH_PATTERN_SETS followed, the 2 beyond counted and cutting
 * nothing; one before them deleted, the first beyond is followed and cuts.
 */
static void
test_watch_pattern_bound(void **state)
{
	static const char *const lines[][3] = { { "inet", "many", "*" } };
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40060, "198.19.0.30", 5201,
				      "198.19.0.30", 5201, BIT);
	enum { SETS = FD_WATCH_PATTERN_SETS + 2 };
	char path[] = "/tmp/fc-many-XXXXXX";
	struct fc_settings s;
	struct fd_watch *w;
	struct fd_nft *n;
	char cmd[256];
	uint64_t t0;
	FILE *f;
	int fd;

	(void)state;
	SKIP_UNLESS_READY();
	assert_int_equal(fc_netns_sh("ip neigh replace 198.19.0.30 lladdr 02:00:00:00:00:0c dev fp1 "
			    "nud permanent"), 0);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "add table inet many\nadd map inet many m { type ipv4_addr : verdict; }\n");
	for (int i = 0; i < SETS; i++)
		fprintf(f, "add set inet many s%03d { type %s; }\n", i, i % 2 ? "ipv6_addr" : "ipv4_addr");
	assert_int_equal(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "nft -f %s && rm %s", path, path);
	assert_int_equal(fc_netns_sh(cmd), 0);
	n = fd_nft_open(BIT);
	assert_non_null(n);
	w = fd_watch_open(n, cut);
	assert_non_null(w);
	pattern_settings(&s, lines, 1);
	t0 = now_ns();
	fd_watch_settings(w, &s);
	print_message("%d sets looked at and read whole in %.1f ms\n", SETS,
		      (double)(now_ns() - t0) / 1e6);
	fd_watch_boot(w);
	assert_int_equal(watch_stats(w).watched_sets_followed, FD_WATCH_PATTERN_SETS);
	assert_int_equal(watch_stats(w).watched_sets_beyond, 2);
	create(a);
	turns(300);
	/* the first beyond (s256, IPv4): not followed, its element cuts nothing */
	snprintf(cmd, sizeof(cmd), "nft add element inet many s%03d '{ 198.19.0.30 }'",
		 FD_WATCH_PATTERN_SETS);
	assert_int_equal(fc_netns_sh(cmd), 0);
	for (int t = 0; t < 50; t++) {
		fd_watch_nft(w, fd_nft_events(n));
		usleep(10000);
	}
	assert_int_equal(datagram(40060, "198.19.0.30").dest != FP_DEST_DROP, 1);
	assert_true(alive(a));
	/* one before it deleted: it comes under the bound, read whole, cut */
	assert_int_equal(fc_netns_sh("nft delete set inet many s000"), 0);
	for (int t = 0; t < 200 && datagram(40060, "198.19.0.30").dest != FP_DEST_DROP; t++) {
		fd_watch_nft(w, fd_nft_events(n));
		usleep(10000);
	}
	assert_int_equal(datagram(40060, "198.19.0.30").dest, FP_DEST_DROP);
	assert_int_equal(watch_stats(w).watched_sets_followed, FD_WATCH_PATTERN_SETS);
	assert_int_equal(watch_stats(w).watched_sets_beyond, 1);
	t0 = now_ns();
	fd_watch_nft(w, -ENOBUFS);	/* a whole look, as after lost events */
	print_message("a look at %d sets after lost events: %.1f ms\n", SETS - 1,
		      (double)(now_ns() - t0) / 1e6);
	fd_watch_close(w);
	nft_close(n);
	assert_int_equal(fc_netns_sh("nft delete table inet many"), 0);
	nfct_destroy(a);
}

/*
 * Never cut, against the real kernel: flowcutd's table holds never_cut4
 * and never_cut6 with their accept rules (marking) ahead of every drop
 * (listed by `nft -j list table inet flowcut`, IPv4 and IPv6), put back
 * after a `flush ruleset`; a hand cut of a /24 holding a never-cut /32
 * cuts the rest (the other connection dropping and killed, the never-cut
 * one forwarding and alive); an IPv6 connection whose client is never
 * cut stays forwarding under a cut of its /64 (the rest of a prefix
 * IPv6: test_cut's rows; the namespace routes one IPv6 pair).
 */
static void
test_never_cut_table_and_cut(void **state)
{
	struct nf_conntrack *a = conn(IPPROTO_UDP, "198.18.0.10", 40000, "198.19.0.10", 53,
				      "198.19.0.10", 53, BIT);
	struct nf_conntrack *b = conn(IPPROTO_UDP, "198.18.0.10", 40001, "198.19.0.11", 53,
				      "198.19.0.11", 53, BIT);
	struct nf_conntrack *c6 = conn(IPPROTO_UDP, "2001:2::10", 40002, "2001:2:0:1::10", 53,
				       "2001:2:0:1::10", 53, BIT);
	struct fc_list never = list_of("198.19.0.10\n198.51.100.0/24\n2001:2::10\n"), l;
	/* the chain's rules in order: each an accept of a never-cut set before the first drop */
	static const char check[] =
		"nft -j list table inet flowcut | jq -e '[.nftables[] | .rule? | select(.) | "
		"select(.chain == \"seen\") | .expr | tostring] as $r | ($r[0:4] | "
		"map(test(\"never_cut[46]\") and test(\"accept\") and test(\"mangle\")) | all) and "
		"($r[4:] | map(test(\"never_cut\")) | any | not) and "
		"(($r | map(test(\"drop\")) | index(true)) >= 4)' >/dev/null && "
		"nft -j list set inet flowcut never_cut4 | jq -e '[.nftables[].set? | select(.) | "
		".elem[]? | tostring] | any(. == \"198.19.0.10\") and any(test(\"198.51.100.0\"))' "
		">/dev/null && nft -j list set inet flowcut never_cut6 | jq -e '[.nftables[].set? | "
		"select(.) | .elem[]? | tostring] | any(. == \"2001:2::10\")' >/dev/null";
	struct fd_nft *n;

	(void)state;
	SKIP_UNLESS_READY();
	n = fd_nft_open(BIT);
	assert_non_null(n);
	assert_int_equal(fd_nft_never(n, &never), 0);
	assert_int_equal(fc_netns_sh(check), 0);
	assert_int_equal(fc_netns_sh("nft flush ruleset"), 0);
	(void)nft_events(n);	/* the ruleset change: the table put in again */
	while (fd_nft_events(n) != 0)
		;
	assert_int_equal(fc_netns_sh(check), 0);	/* put back with the table */
	assert_int_equal(fd_cut_never(cut, &never), 0);
	create(a);
	create(b);
	create(c6);
	turns(300);
	assert_int_equal(conns(), 3);
	l = list_of("198.19.0.0/24\n2001:2::/64\n");
	assert_int_equal(fd_cut_ranges(cut, &l, FD_CUT_HAND), 1);
	assert_int_equal(conn_by_cport(40000).verdict, FC_VERDICT_CUT_THRU);
	assert_int_equal(conn_by_cport(40001).verdict, FC_VERDICT_DROP);
	assert_int_equal(conn_by_cport(40002).verdict, FC_VERDICT_CUT_THRU);
	assert_true(alive(a));
	assert_false(alive(b));
	assert_true(alive(c6));
	fc_list_free(&l);
	fc_list_free(&never);
	never = (struct fc_list){ 0 };
	assert_int_equal(fd_cut_never(cut, &never), 0);
	nft_close(n);
	nfct_destroy(a);
	nfct_destroy(b);
	nfct_destroy(c6);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_offloaded_with_keys_nat_action, fresh),
		cmocka_unit_test_setup(test_cut_taken_up_by_a_new_binding, fresh),
		cmocka_unit_test_setup(test_lease_reopens_only_when_judged, fresh),
		cmocka_unit_test_setup(test_not_qualifying_stays, fresh),
		cmocka_unit_test_setup(test_destroy_takes_out, fresh),
		cmocka_unit_test_setup(test_update_failed_takes_out, fresh),
		cmocka_unit_test_setup(test_max_retrans_given_back_is_revived, fresh),
		cmocka_unit_test_setup(test_first_frame_measured, fresh),
		cmocka_unit_test_setup(test_masked_mark, fresh),
		cmocka_unit_test_setup(test_long_timeout_then_leave, fresh),
		cmocka_unit_test_setup(test_ruleset_change_takes_out_and_clears_marks, fresh),
		cmocka_unit_test_setup(test_resync_after_boot, fresh),
		cmocka_unit_test_setup(test_route_replaced_between_two_offloads, fresh),
		cmocka_unit_test_setup(test_waiting_state_asks_its_neighbour, fresh),
		cmocka_unit_test_setup(test_failed_neighbour_asked_again, fresh),
		cmocka_unit_test_setup(test_cut_range_v4_nat, fresh),
		cmocka_unit_test_setup(test_cut_range_v6, fresh),
		cmocka_unit_test_setup(test_cut_not_offloaded_made_dropping, fresh),
		cmocka_unit_test_setup(test_cut_unresolved_made_dropping, fresh),
		cmocka_unit_test_setup(test_cut_setting_off_reclaims, fresh),
		cmocka_unit_test_setup(test_cut_fwd_by_action, fresh),
		cmocka_unit_test_setup(test_cut_conn_by_id, fresh),
		cmocka_unit_test_setup(test_kills_batched, fresh),
		cmocka_unit_test_setup(test_cut_by_hand_through_the_sets, fresh),
		cmocka_unit_test_setup(test_cut_sets_put_back_after_flush, fresh),
		cmocka_unit_test_setup(test_cut_by_hand_from_notifications, fresh),
		cmocka_unit_test_setup(test_cut_on_host_blocks_the_five_tuple, fresh),
		cmocka_unit_test_setup(test_cut_kept_across_ruleset_change, fresh),
		cmocka_unit_test_setup(test_watched_set_additions_cut, fresh),
		cmocka_unit_test_setup(test_list_sets, fresh),
		cmocka_unit_test_setup(test_watch_lists_and_sets, fresh),
		cmocka_unit_test_setup(test_why_names_the_set, fresh),
		cmocka_unit_test_setup(test_page_conns_cuts, fresh),
		cmocka_unit_test_setup(test_page_biggest, fresh),
		cmocka_unit_test_setup(test_watch_big_list_in_steps, fresh),
		cmocka_unit_test_setup(test_uncut_releases, fresh),
		cmocka_unit_test_setup(test_uncut_on_expiry, fresh),
		cmocka_unit_test_setup(test_watch_by_pattern, fresh),
		cmocka_unit_test_setup(test_watch_pattern_bound, fresh),
		cmocka_unit_test_setup(test_never_cut_table_and_cut, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
