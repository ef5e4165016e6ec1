/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-bench: measures and prints; asserts nothing.
 *
 *   flowcut-bench fastpath [--conns N] [--frames N] [--burst N] [--warmup N]
 *                          [--only hit-1k|hit-big|miss-big]
 *
 * fastpath: a table of N connections (UDP over IPv4, action IPS, the IPS
 * switch on, verdict CUT_THRU: the path "Cut in hardware" runs), then
 * 64-byte frames of random connections pushed through fp_process_burst()
 * in bursts on one core.  Three runs: hits at 1,000 connections, hits at N,
 * misses at N.  Only the calls to fp_process_burst() are timed (TSC); the
 * frames are rewritten between bursts, outside the timing, as a NIC would
 * have written them.  Memory per connection is the DPDK heap the fast
 * path takes at creation, divided by N: every table is preallocated, so a
 * full table costs no more.
 *
 *   flowcut-bench link [--calls N] [--secs N]
 *
 * link: starts flowcut-npu (no ports) beside it and talks to it over the
 * link as flowcutctl would: N single CONN_MODIFY_FP_VERDICT round trips,
 * one after the other (median and 99th percentile), then batches of 64
 * commands for --secs seconds (commands per second), then the same N
 * commands twice, timed whole: one round trip at a time (lk_call), and
 * through the driver's command client (driver/fd_cmdq: batched, up to 64
 * in flight), with the ratio of the two rates.
 */
#include <errno.h>
#include <libgen.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "fc_eal.h"
#include "fc_frame.h"
#include "fd_cmdq.h"
#include "fp.h"
#include "lk.h"

#define FRAME_LEN 64
#define POOL_BURSTS 4

static const uint8_t LIF0_MAC[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t LIF1_MAC[6] = { 0x02, 0, 0, 0, 0, 0x02 };

struct opts {
	uint32_t conns;
	uint64_t frames;
	uint64_t warmup;	/* UINT64_MAX: frames / 10 */
	unsigned int burst;
	const char *only;
};

/* Connection i: 198.18.0.0 + i/64 : 10000 + i%64  ->  198.19.0.1 : 80. */
static void
conn_key(uint32_t i, struct fp_key *k)
{
	uint32_t src = (198u << 24 | 18u << 16) + i / 64;
	uint32_t dst = 198u << 24 | 19u << 16 | 1;

	memset(k, 0, sizeof(*k));
	k->family = 4;
	k->proto = IPPROTO_UDP;
	src = rte_cpu_to_be_32(src);
	dst = rte_cpu_to_be_32(dst);
	memcpy(k->src, &src, 4);
	memcpy(k->dst, &dst, 4);
	k->sport = rte_cpu_to_be_16((uint16_t)(10000 + i % 64));
	k->dport = rte_cpu_to_be_16(80);
}

static uint64_t
heap_bytes(void)
{
	uint64_t sum = 0;

	for (unsigned int s = 0; s < rte_socket_count(); s++) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(s), &st) == 0)
			sum += st.heap_allocsz_bytes;
	}
	return sum;
}

static uint64_t
xorshift(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static struct fp *
table_make(uint32_t conns, uint64_t *mem)
{
	static unsigned int n;
	char name[16];
	struct fp_params p = { .max_conns = conns, .max_nhops = 4, .max_workers = 1,
			       .socket_id = SOCKET_ID_ANY };
	struct fp_lif l0 = { .port = 0, .mtu = 1500 }, l1 = { .port = 1, .mtu = 1500 };
	struct fp_nhop nh = { .port = 1, .mtu = 1500, .resolved = true,
			      .dmac = { 0x02, 0, 0, 0, 0, 0xb2 } };
	uint64_t before = heap_bytes();
	struct fp *fp;

	snprintf(name, sizeof(name), "bench%u", n++);
	p.name = name;
	fp = fp_create(&p);
	if (fp == NULL) {
		fprintf(stderr, "flowcut-bench: fp_create(%u connections): %s\n", conns,
			rte_strerror(rte_errno));
		exit(1);
	}
	*mem = heap_bytes() - before;
	memcpy(l0.mac, LIF0_MAC, 6);
	memcpy(l1.mac, LIF1_MAC, 6);
	memcpy(nh.smac, LIF1_MAC, 6);
	if (fp_lif_set(fp, 0, &l0) || fp_lif_set(fp, 1, &l1) || fp_nhop_set(fp, 0, &nh, false) ||
	    fp_nhop_set(fp, 1, &nh, false) || fp_cfg_set(fp, FC_CFG_OFFLOAD | FC_CFG_IPS)) {
		fprintf(stderr, "flowcut-bench: programming ports failed\n");
		exit(1);
	}
	for (uint32_t i = 0; i < conns; i++) {
		struct fp_conn_spec cs = { .verdict = FC_VERDICT_CUT_THRU };
		fp_conn_id id;
		int rc;

		conn_key(i, &cs.mf[0].key);
		fp_key_reverse(&cs.mf[0].key, &cs.mf[1].key);
		cs.mf[1].key.port = 1;
		cs.mf[1].nhop = 1;
		cs.mf[0].action = cs.mf[1].action = FC_ACTION_IPS;
		rc = fp_conn_create(fp, &cs, 0, &id);
		if (rc != 0) {
			fprintf(stderr, "flowcut-bench: connection %u: %s\n", i, strerror(-rc));
			exit(1);
		}
	}
	return fp;
}

/* Writes a 64-byte frame of connection i (or a miss) into m. */
static void
frame_write(struct rte_mbuf *m, const uint8_t tmpl[FRAME_LEN], uint32_t i, bool miss)
{
	struct fp_key k;
	uint8_t *f;
	struct rte_ipv4_hdr *ip;

	rte_pktmbuf_reset(m);
	f = (uint8_t *)rte_pktmbuf_append(m, FRAME_LEN);
	memcpy(f, tmpl, FRAME_LEN);
	conn_key(i, &k);
	if (miss)
		k.sport = rte_cpu_to_be_16(9);
	ip = (struct rte_ipv4_hdr *)(f + 14);
	memcpy(&ip->src_addr, k.src, 4);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memcpy(f + 34, &k.sport, 2);
	f[40] = f[41] = 0;	/* UDP checksum: none */
}

struct result {
	uint64_t frames;
	uint64_t cycles;
	uint64_t counted;	/* frames with the expected outcome */
};

static struct result
run(struct fp *fp, uint32_t conns, bool miss, const struct opts *o,
    struct rte_mempool *pool)
{
	struct fp_worker *w = fp_worker_create(fp, 0);
	struct rte_mbuf *m[POOL_BURSTS][FP_BURST_MAX];
	struct fp_out out[FP_BURST_MAX];
	struct fc_frame_spec spec = { .payload = FRAME_LEN - 42, .ttl = 64 };
	uint8_t tmpl[FRAME_LEN];
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint64_t warm = o->warmup == UINT64_MAX ? o->frames / 10 : o->warmup;
	struct result r = { 0 };
	enum fc_cnt want = miss ? FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL
				: FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU;

	if (w == NULL || rte_pktmbuf_alloc_bulk(pool, &m[0][0], POOL_BURSTS * FP_BURST_MAX)) {
		fprintf(stderr, "flowcut-bench: worker or mbufs: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
	memcpy(spec.dmac, LIF0_MAC, 6);
	conn_key(0, &spec.key);
	if (fc_frame_build(&spec, tmpl, sizeof(tmpl)) != FRAME_LEN) {
		fprintf(stderr, "flowcut-bench: template frame\n");
		exit(1);
	}
	for (uint64_t done = 0; done < warm + o->frames;) {
		unsigned int b = (unsigned int)(done / o->burst) % POOL_BURSTS;
		uint64_t t0;

		for (unsigned int i = 0; i < o->burst; i++)
			frame_write(m[b][i], tmpl, (uint32_t)(xorshift(&seed) % conns), miss);
		t0 = rte_rdtsc();
		fp_process_burst(w, 0, m[b], (uint16_t)o->burst, 0, out);
		if (done >= warm) {
			r.cycles += rte_rdtsc() - t0;
			r.frames += o->burst;
			for (unsigned int i = 0; i < o->burst; i++)
				r.counted += out[i].reason == want;
		}
		done += o->burst;
	}
	rte_pktmbuf_free_bulk(&m[0][0], POOL_BURSTS * FP_BURST_MAX);
	fp_worker_destroy(w);
	return r;
}

static void
report(const char *name, uint32_t conns, uint64_t mem, const struct result *r)
{
	double hz = (double)rte_get_tsc_hz();
	double secs = (double)r->cycles / hz;

	printf("%-8s %10" PRIu32 " %10" PRIu64 " %8.2f %8.1f %8.1f %10.0f %12.1f\n",
	       name, conns, r->frames, (double)r->frames / secs / 1e6,
	       secs * 1e9 / (double)r->frames, (double)r->cycles / (double)r->frames,
	       (double)mem / conns, (double)mem / 1048576.0);
	if (r->counted != r->frames)
		printf("         warning: %" PRIu64 " of %" PRIu64 " frames had another outcome\n",
		       r->frames - r->counted, r->frames);
}

static int
bench_fastpath(const struct opts *o)
{
	static const struct {
		const char *name;
		bool big;
		bool miss;
	} runs[] = {
		{ "hit-1k", false, false },
		{ "hit-big", true, false },
		{ "miss-big", true, true },
	};
	struct rte_mempool *pool = rte_pktmbuf_pool_create("bench_pool", 511, 0, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE,
							   SOCKET_ID_ANY);
	struct fp *big = NULL;
	uint64_t big_mem = 0;

	if (pool == NULL) {
		fprintf(stderr, "flowcut-bench: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	printf("flowcut-bench fastpath: %u-byte UDP/IPv4 frames, bursts of %u, one core, "
	       "TSC %.2f GHz\n", FRAME_LEN, o->burst, (double)rte_get_tsc_hz() / 1e9);
	printf("%-8s %10s %10s %8s %8s %8s %10s %12s\n", "run", "conns", "frames", "Mpps",
	       "ns/frame", "cyc/frm", "B/conn", "table MiB");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		uint32_t conns = runs[i].big ? o->conns : 1000;
		struct result r;
		uint64_t mem;
		struct fp *fp;

		if (o->only != NULL && strcmp(o->only, runs[i].name) != 0)
			continue;
		if (runs[i].big) {
			if (big == NULL)
				big = table_make(conns, &big_mem);
			fp = big;
			mem = big_mem;
		} else {
			fp = table_make(conns, &mem);
		}
		r = run(fp, conns, runs[i].miss, o, pool);
		report(runs[i].name, conns, mem, &r);
		if (fp != big)
			fp_destroy(fp);
	}
	fp_destroy(big);
	return 0;
}

/* ---- link ---- */

static double
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CPU seconds a process has used (user + system), from /proc. */
static double
cpu_secs(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* fields after the command name */
	if (p == NULL || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				&ut, &st) != 2)
		return 0;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static pid_t
npu_spawn(const char *link_path)
{
	char self[4096], bin[4096], prefix[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(bin, sizeof(bin), "%s/flowcut-npu", dirname(self));
	snprintf(prefix, sizeof(prefix), "fc-bench-npu-%d", (int)getpid());
	pid = fork();
	if (pid == 0) {
		execl(bin, bin, "--no-huge", "-m", "128", "--no-pci", "--no-telemetry", "--no-shconf",
		      "--file-prefix", prefix, "-l", "0,1", "--log-level=error", "--",
		      "--link", link_path, "--conns", "1024", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	return pid;
}

/* The client's completions: how many answered, how many failed. */
struct cmdq_tally {
	uint64_t ok;
	uint64_t failed;
	int first_rc;
};

static void
cmdq_tally_done(void *ctx, int rc, const void *ans, uint16_t len)
{
	struct cmdq_tally *t = ctx;

	(void)ans;
	(void)len;
	if (rc == 0) {
		t->ok++;
	} else if (t->failed++ == 0) {
		t->first_rc = rc;
	}
}

/*
 * The same n verdict changes one round trip at a time (lk_call), then
 * through fd_cmdq with up to `cap` in flight; prints both rates and their
 * ratio.  0, or -1 after saying what failed.
 */
static int
link_call_vs_cmdq(struct lk *lk, uint64_t id, unsigned int n, unsigned int cap)
{
	struct fc_cmd_conn_verdict v = { .id = id, .verdict = FC_VERDICT_CUT_THRU };
	struct fd_cmdq_params p = { .max_inflight = cap };
	struct cmdq_tally t = { 0 };
	struct fd_cmdq_stats st;
	struct fd_cmdq *q;
	double s, call_s, cmdq_s;
	int rc;

	s = mono_ns();
	for (unsigned int i = 0; i < n; i++) {
		rc = lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000);
		if (rc != 0) {
			fprintf(stderr, "flowcut-bench: lk_call %u: %s\n", i, strerror(-rc));
			return -1;
		}
	}
	call_s = (mono_ns() - s) / 1e9;

	q = fd_cmdq_create(lk, &p);
	if (q == NULL) {
		fprintf(stderr, "flowcut-bench: fd_cmdq_create: %s\n", strerror(errno));
		return -1;
	}
	s = mono_ns();
	for (unsigned int i = 0; i < n;) {
		rc = fd_cmdq_post(q, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), cmdq_tally_done,
				  &t);
		if (rc == 0) {
			i++;
			continue;
		}
		if (rc != -ENOBUFS) {
			fprintf(stderr, "flowcut-bench: fd_cmdq_post %u: %s\n", i, strerror(-rc));
			goto fail;
		}
		fd_cmdq_poll(q);	/* the cap is reached: take what has come */
	}
	rc = fd_cmdq_flush(q, 2000);
	cmdq_s = (mono_ns() - s) / 1e9;
	if (rc != 0 || t.ok != n) {
		fprintf(stderr, "flowcut-bench: fd_cmdq: flush %s, %" PRIu64 " answered, %" PRIu64
			" failed (first: %s)\n", strerror(-rc), t.ok, t.failed,
			strerror(-t.first_rc));
		goto fail;
	}
	fd_cmdq_stats(q, &st);
	printf("  the same %u commands, timed whole:\n", n);
	printf("    one round trip at a time (lk_call): %.0f commands per second\n", n / call_s);
	printf("    command client (fd_cmdq, up to %u in flight, %.1f per doorbell): "
	       "%.0f commands per second, %.1f x lk_call\n", cap,
	       (double)st.posted / (double)st.batches, n / cmdq_s, call_s / cmdq_s);
	fd_cmdq_destroy(q);
	return 0;
fail:
	fd_cmdq_destroy(q);
	return -1;
}

static int
bench_link(unsigned int calls, unsigned int secs)
{
	char path[64];
	struct lk *lk = NULL;
	struct fc_cmd_flow_create fc = { .verdict = FC_VERDICT_CUT_THRU };
	struct fc_ans_conn_id cid;
	double *rtt = calloc(calls, sizeof(double)), t0, cmds = 0, elapsed;
	const unsigned int idle_calls = 500;
	double idle[500];
	pid_t pid;
	int rc = 1;

	snprintf(path, sizeof(path), "/dev/shm/fc-bench-%d", (int)getpid());
	unlink(path);
	pid = npu_spawn(path);
	if (pid < 0 || rtt == NULL) {
		fprintf(stderr, "flowcut-bench: cannot start flowcut-npu\n");
		goto out;
	}
	for (t0 = mono_ns(); lk == NULL && mono_ns() - t0 < 20e9; usleep(20000)) {
		lk = lk_attach(path, -1);
		if (lk != NULL && lk_npu_pid(lk) != (uint32_t)pid) {
			lk_close(lk);
			lk = NULL;
		}
	}
	if (lk == NULL) {
		fprintf(stderr, "flowcut-bench: flowcut-npu's link did not come up\n");
		goto out;
	}
	conn_key(0, (struct fp_key *)&fc.mf[0].key);
	fp_key_reverse((struct fp_key *)&fc.mf[0].key, (struct fp_key *)&fc.mf[1].key);
	fc.mf[1].key.port = 1;
	if (lk_call(lk, FC_CMD_FLOW_CREATE_FP, &fc, sizeof(fc), &cid, sizeof(cid), NULL, 2000)) {
		fprintf(stderr, "flowcut-bench: FLOW_CREATE_FP failed\n");
		goto out;
	}
	/* single round trips */
	for (unsigned int i = 0; i < calls; i++) {
		struct fc_cmd_conn_verdict v = { .id = cid.id,
						 .verdict = i & 1 ? FC_VERDICT_DROP : FC_VERDICT_CUT_THRU };
		double s = mono_ns();

		if (lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000)) {
			fprintf(stderr, "flowcut-bench: call %u failed\n", i);
			goto out;
		}
		rtt[i] = mono_ns() - s;
	}
	qsort(rtt, calls, sizeof(double), cmp_double);
	/* from sleep: the coprocessor idle (asleep on its doorbell) before each */
	for (unsigned int i = 0; i < idle_calls; i++) {
		struct fc_cmd_conn_verdict v = { .id = cid.id, .verdict = FC_VERDICT_CUT_THRU };
		double s;

		usleep(2000);
		s = mono_ns();
		if (lk_call(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, &v, sizeof(v), NULL, 0, NULL, 2000)) {
			fprintf(stderr, "flowcut-bench: call %u failed\n", i);
			goto out;
		}
		idle[i] = mono_ns() - s;
	}
	qsort(idle, idle_calls, sizeof(double), cmp_double);
	/* batches of 64 */
	t0 = mono_ns();
	while ((elapsed = mono_ns() - t0) < secs * 1e9) {
		struct fc_cmd_conn_verdict v = { .id = cid.id, .verdict = FC_VERDICT_CUT_THRU };
		unsigned int got = 0;

		for (uint32_t i = 0; i < 64; i++)
			if (lk_cmd_post(lk, FC_CMD_CONN_MODIFY_FP_VERDICT, i, &v, sizeof(v))) {
				fprintf(stderr, "flowcut-bench: post failed\n");
				goto out;
			}
		lk_cmd_kick(lk);
		while (got < 64) {
			struct fc_ans_hdr a;

			if (lk_ans_take(lk, &a, NULL, 0) == 0) {
				if (a.rc != 0) {
					fprintf(stderr, "flowcut-bench: batch answer %d\n", a.rc);
					goto out;
				}
				got++;
			}
		}
		cmds += 64;
	}
	printf("flowcut-bench link: flowcut-npu beside it, CONN_MODIFY_FP_VERDICT\n");
	printf("  round trip, one at a time (%u calls): median %.1f us, 99th percentile %.1f us,"
	       " max %.1f us\n", calls, rtt[calls / 2] / 1e3, rtt[calls * 99 / 100] / 1e3,
	       rtt[calls - 1] / 1e3);
	printf("  round trip to a sleeping coprocessor (%u calls, 2 ms apart): median %.1f us, "
	       "99th percentile %.1f us\n", idle_calls, idle[idle_calls / 2] / 1e3,
	       idle[idle_calls * 99 / 100] / 1e3);
	printf("  batches of 64 for %.1f s: %.0f commands per second\n", elapsed / 1e9,
	       cmds / (elapsed / 1e9));
	if (link_call_vs_cmdq(lk, cid.id, calls, LK_CMD_SLOTS) != 0)
		goto out;
	/* idle: what the coprocessor costs when nothing happens */
	{
		double c0 = cpu_secs(pid), w0 = mono_ns();

		sleep(3);
		printf("  idle for %.1f s: flowcut-npu used %.2f %% of one core\n",
		       (mono_ns() - w0) / 1e9, 100.0 * (cpu_secs(pid) - c0) / ((mono_ns() - w0) / 1e9));
	}
	rc = 0;
out:
	lk_close(lk);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	unlink(path);
	free(rtt);
	return rc;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcut-bench fastpath [--conns N] [--frames N] [--burst N]\n"
		"                              [--warmup N] [--only hit-1k|hit-big|miss-big]\n"
		"       flowcut-bench link [--calls N] [--secs N]\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "conns", required_argument, NULL, 'c' },
		{ "frames", required_argument, NULL, 'f' },
		{ "burst", required_argument, NULL, 'b' },
		{ "only", required_argument, NULL, 'o' },
		{ "warmup", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .conns = 1000000, .frames = 20000000, .warmup = UINT64_MAX,
			  .burst = 32 };
	char *end;
	int c;

	if (argc >= 2 && strcmp(argv[1], "link") == 0) {
		static const struct option ll[] = {
			{ "calls", required_argument, NULL, 'c' },
			{ "secs", required_argument, NULL, 's' },
			{ NULL, 0, NULL, 0 },
		};
		unsigned long calls = 20000, secs = 2;

		optind = 2;
		while ((c = getopt_long(argc, argv, "", ll, NULL)) != -1) {
			unsigned long v;

			if (c == '?') {
				usage();
				return 2;
			}
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v == 0 || v > 10000000) {
				fprintf(stderr, "flowcut-bench: --%s wants a number from 1 to 10000000, "
					"not '%s'\n", c == 'c' ? "calls" : "secs", optarg);
				return 2;
			}
			if (c == 'c')
				calls = v;
			else
				secs = v;
		}
		return bench_link((unsigned int)calls, (unsigned int)secs);
	}
	if (argc < 2 || strcmp(argv[1], "fastpath") != 0) {
		usage();
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long v = 0;

		if (c != 'o' && c != '?') {
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || (v == 0 && c != 'w')) {
				fprintf(stderr, "flowcut-bench: --%s wants a number, not '%s'\n",
					c == 'c' ? "conns" : c == 'f' ? "frames" : c == 'b' ? "burst"
					: "warmup", optarg);
				return 2;
			}
		}
		switch (c) {
		case 'c': o.conns = v > (1u << 26) ? 0 : (uint32_t)v; break;
		case 'f': o.frames = v; break;
		case 'b': o.burst = v > FP_BURST_MAX ? 0 : (unsigned int)v; break;
		case 'o': o.only = optarg; break;
		case 'w': o.warmup = v; break;
		default: usage(); return 2;
		}
	}
	if (o.conns == 0 || o.burst == 0) {
		fprintf(stderr, "flowcut-bench: --conns at most %u, --burst at most %u\n",
			1u << 26, FP_BURST_MAX);
		return 2;
	}
	/* the tables, their hash and defer queue, and headroom for the pool */
	if (fc_eal_init("flowcut-bench", (unsigned int)(64 + (uint64_t)o.conns * 1100 / 1048576)))
		return 1;
	return bench_fastpath(&o);
}
