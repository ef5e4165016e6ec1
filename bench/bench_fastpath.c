/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_fastpath: `flowcut-bench fastpath`, what the fast path spends on a
 * frame on one core (fp_process_burst()), beside its floor measured over
 * the same frames in the same run.
 *
 *   flowcut-bench fastpath [--conns N] [--frames N] [--burst N] [--warmup N]
 *                          [--reps N] [--only hit-1k|hit-big|miss-big|miss-syn]
 *                          [--pass parse|floor|entry|fastpath] [--heap thp|dpdk]
 *
 * fastpath: a table of N connections (UDP over IPv4, action IPS, the IPS
 * switch on, verdict CUT_THRU: the path "Cut in hardware" runs), then
 * 64-byte frames of random connections pushed through fp_process_burst()
 * in bursts on one core.  Four runs: hits at 1,000 connections, hits at N,
 * misses at N, and metered misses at N (miss-syn: TCP SYNs that miss, with
 * the new-connection limit at 1 a second - a flood's, nearly all dropped
 * as FROM_WIRE_DROP_NEW_CONN_RATE: the cost of the meter beside a miss).  Beside the fast path, in the same run and over the same
 * frames, its floor (fp_parse_frame() and rte_hash_lookup_bulk_data() over
 * a table like its own) and two steps in between (enum pass); the fast
 * path is printed as a multiple of its floor, the figure that holds from
 * machine to machine.  Only the calls that decide a burst are timed (TSC).
 * Memory per connection is the DPDK heap the fast path takes at creation,
 * divided by N: every table is preallocated, so a full table costs no more.
 * The tables (the fast path's and the floor's) are made where flowcut-npu
 * makes them: without hugepages (this EAL runs --no-huge), on an anonymous
 * heap advised for transparent huge pages (fp_heap_create, --heap thp);
 * --heap dpdk puts them on DPDK's own heap, a memfd on 4 KiB pages.
 */
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
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "bench.h"
#include "fc_frame.h"
#include "fp.h"

#define FRAME_LEN 64
#define POOL_BURSTS 4
#define PREEMPTED_US 200	/* a burst this long lost the core: left out */

static const uint8_t LIF0_MAC[6] = { 0x02, 0, 0, 0, 0, 0x01 };
static const uint8_t LIF1_MAC[6] = { 0x02, 0, 0, 0, 0, 0x02 };

/* The socket id the tables are made on: DPDK's, or fp_heap_create()'s. */
static int tables_socket = SOCKET_ID_ANY;

static uint64_t
heap_bytes(void)
{
	uint64_t sum = 0;

	if (tables_socket != SOCKET_ID_ANY) {
		struct rte_malloc_socket_stats st;

		if (rte_malloc_get_socket_stats(tables_socket, &st) == 0)
			return st.heap_allocsz_bytes;
		return 0;
	}

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
			       .socket_id = tables_socket };
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
	struct fc_key k;
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
	if (f[23] == IPPROTO_UDP)
		f[40] = f[41] = 0;	/* UDP checksum: none (TCP's is left wrong: never checked) */
}

/*
 * What a timed pass pushes the frames through.  The fast path is measured
 * against its floor: the work no flow table over rte_hash can skip, which
 * is reading each frame's headers as far as the key (fp_parse_frame(), the
 * fast path's own parser) and one rte_hash_lookup_bulk_data() per burst
 * over a table like the fast path's.  Two more passes split the rest:
 * parsing alone, and the floor plus the line of a connection entry the
 * fast path touches per frame.
 */
enum pass {
	PASS_PARSE,	/* fp_parse_frame() */
	PASS_FLOOR,	/* + rte_hash_lookup_bulk_data() */
	PASS_ENTRY,	/* + the entry's direction's line read and written */
	PASS_FASTPATH,	/* fp_process_burst() */
	PASS_MAX
};

static const char *const pass_names[PASS_MAX] = { "parse", "floor", "entry", "fastpath" };

/*
 * A stand-in for the fast path's connection entry (struct fp_conn in
 * fastpath/fp_priv.h: a header line and one line per direction), so that
 * the entry pass reads and writes the line decide() does: its direction's
 * (the state and ctl byte read, the counters written).
 */
struct floor_entry {
	uint8_t hdr[RTE_CACHE_LINE_SIZE];
	struct {
		uint64_t last_seen;
		uint64_t packets;
		uint64_t bytes;
		uint8_t rest[38];
		uint8_t ctl;
		uint8_t state;
	} mf[2];
} __rte_cache_aligned;
_Static_assert(sizeof(struct floor_entry) == 3 * RTE_CACHE_LINE_SIZE,
	       "a floor entry is the size of a connection");

/* The floor's own tables, built beside the fast path's. */
struct floor {
	struct rte_hash *h;
	struct floor_entry *entries;
};

/*
 * The floor's table holds the keys of table_make(), with the data the
 * fast path stores (slot << 1 | direction), added in the same order and
 * created with the parameters fp_create() gives its table (fastpath/fp.c:
 * change these with them), so buckets and key store are laid out alike.
 */
static struct floor
floor_make(uint32_t conns)
{
	static unsigned int n;
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = RTE_MAX(2 * conns, 16u),
		.key_len = sizeof(struct fc_key),
		.hash_func = rte_hash_crc,
		.socket_id = tables_socket,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	struct floor fl;

	snprintf(name, sizeof(name), "benchfloor%u", n++);
	fl.h = rte_hash_create(&hp);
	fl.entries = rte_zmalloc_socket("benchfloor", sizeof(*fl.entries) * conns,
					RTE_CACHE_LINE_SIZE, tables_socket);
	if (fl.h == NULL || fl.entries == NULL) {
		fprintf(stderr, "flowcut-bench: floor table of %u connections: %s\n", conns,
			rte_strerror(rte_errno));
		exit(1);
	}
	for (uint32_t i = 0; i < conns; i++) {
		struct fc_key k[2];

		conn_key(i, &k[0]);
		fp_key_reverse(&k[0], &k[1]);
		k[1].port = 1;
		for (unsigned int d = 0; d < 2; d++) {
			int rc = rte_hash_add_key_data(fl.h, &k[d], (void *)((uintptr_t)i << 1 | d));

			if (rc != 0) {
				fprintf(stderr, "flowcut-bench: floor key %u/%u: %s\n", i, d,
					strerror(-rc));
				exit(1);
			}
		}
	}
	return fl;
}

static void
floor_free(struct floor *fl)
{
	rte_hash_free(fl->h);
	rte_free(fl->entries);
}

/*
 * One burst of a floor pass (PASS_PARSE, PASS_FLOOR or PASS_ENTRY).
 * Returns the frames parsed (PASS_PARSE) or found in the table.  Not
 * inlined, so that callgrind can count it as it counts fp_process_burst().
 */
static __rte_noinline unsigned int
floor_burst(const struct floor *fl, enum pass pass, uint16_t port, struct rte_mbuf **m,
	    unsigned int n, uint64_t now)
{
	struct fp_parsed pp[FP_BURST_MAX];
	const void *keys[FP_BURST_MAX];
	void *data[FP_BURST_MAX];
	uint64_t hits = 0;
	unsigned int nk = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (fp_parse_frame(rte_pktmbuf_mtod(m[i], const uint8_t *), m[i]->data_len,
				   m[i]->pkt_len, &pp[nk]) != FP_PARSE_FLOW)
			continue;
		pp[nk].key.port = port;
		keys[nk] = &pp[nk].key;
		nk++;
	}
	if (pass == PASS_PARSE || nk == 0)
		return nk;
	rte_hash_lookup_bulk_data(fl->h, keys, nk, &hits, data);
	if (pass == PASS_ENTRY) {
		for (unsigned int j = 0; j < nk; j++)
			if (hits & (1ull << j)) {
				const struct floor_entry *e = &fl->entries[(uintptr_t)data[j] >> 1];

				rte_prefetch0(&e->mf[(uintptr_t)data[j] & 1]);
			}
		for (unsigned int j = 0; j < nk; j++)
			if (hits & (1ull << j)) {
				struct floor_entry *e = &fl->entries[(uintptr_t)data[j] >> 1];
				unsigned int dir = (uintptr_t)data[j] & 1;

				if (e->mf[dir].state == 0 && e->mf[dir].ctl == 0) {
					e->mf[dir].last_seen = now;
					e->mf[dir].packets++;
					e->mf[dir].bytes += pp[j].l3_len;
				}
			}
	}
	return (unsigned int)__builtin_popcountll(hits);
}

/* One run's fixed parts: its tables, its worker and its frames. */
struct bench_run {
	struct fp *fp;
	struct fp_worker *w;
	const struct floor *fl;
	uint32_t conns;
	bool miss;
	bool syn;	/* TCP SYNs, metered (fp_new_conn_rate_set) */
	uint8_t tmpl[FRAME_LEN];
	struct rte_mbuf *m[POOL_BURSTS][FP_BURST_MAX];
};

struct result {
	uint64_t frames;
	uint64_t cycles;
	uint64_t counted;	/* frames with the expected outcome */
	uint64_t bursts;	/* timed */
	uint64_t preempted;	/* of them, left out */
};

/*
 * One pass: warm-up, then o->frames timed frames.  Every pass starts from
 * the same seed, so every pass sees the same connections in the same order
 * and bursts.  Only the call that decides a burst is timed; the frames are
 * rewritten between bursts, outside the timing, as a NIC would have
 * written them.  A burst that took longer than PREEMPTED_US (ten times
 * the slowest pass's 20 us for 64 frames at a million connections on a
 * loaded machine) lost the core to another process: it is left out, and
 * counted.
 */
static struct result
pass_run(struct bench_run *br, enum pass pass, const struct opts *o)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	uint64_t warm = o->warmup == UINT64_MAX ? o->frames / 10 : o->warmup;
	struct fp_out out[FP_BURST_MAX];
	struct result r = { 0 };
	uint64_t preempted = rte_get_tsc_hz() / 1000000 * PREEMPTED_US;
	enum fc_cnt want = br->miss ? FC_CNT_FROM_WIRE_TO_KN_NON_ACCEL
				    : FC_CNT_FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU;

	for (uint64_t done = 0; done < warm + o->frames; done += o->burst) {
		struct rte_mbuf **m = br->m[(done / o->burst) % POOL_BURSTS];
		unsigned int got = 0;
		uint64_t t0, t1;

		for (unsigned int i = 0; i < o->burst; i++)
			frame_write(m[i], br->tmpl, (uint32_t)(xorshift(&seed) % br->conns), br->miss);
		t0 = rte_rdtsc();
		if (pass == PASS_FASTPATH)
			fp_process_burst(br->w, 0, m, (uint16_t)o->burst, 0, out);
		else
			got = floor_burst(br->fl, pass, 0, m, o->burst, done);
		t1 = rte_rdtsc();
		if (done < warm)
			continue;
		r.bursts++;
		if (t1 - t0 > preempted) {
			r.preempted++;
			continue;
		}
		r.cycles += t1 - t0;
		r.frames += o->burst;
		if (pass == PASS_FASTPATH)
			for (unsigned int i = 0; i < o->burst; i++)
				r.counted += out[i].reason == want ||
					     (br->syn && out[i].reason == FC_CNT_FROM_WIRE_DROP_NEW_CONN_RATE);
		else
			r.counted += pass == PASS_PARSE || !br->miss ? got : o->burst - got;
	}
	return r;
}

static int
cmp_double_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(const double *v, unsigned int n)
{
	double s[n];

	memcpy(s, v, sizeof(s));
	qsort(s, n, sizeof(double), cmp_double_asc);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Cycles per frame of each pass in each repetition; 0 for a pass not run. */
struct pass_cycles {
	unsigned int reps;
	double cyc[PASS_MAX][FP_BENCH_REPS_MAX];
	uint64_t bursts;	/* timed, all passes */
	uint64_t preempted;	/* of them, left out */
};

/*
 * The passes one after the other, o->reps times over, so that a change
 * of load on the machine falls on the floor and the fast path alike.
 */
static struct pass_cycles
run_passes(struct bench_run *br, const struct opts *o)
{
	struct pass_cycles pc = { .reps = o->reps };
	struct fc_frame_spec spec = { .payload = FRAME_LEN - 42, .ttl = 64 };

	br->w = fp_worker_create(br->fp, 0);
	if (br->w == NULL || rte_pktmbuf_alloc_bulk(o->pool, &br->m[0][0],
						    POOL_BURSTS * FP_BURST_MAX)) {
		fprintf(stderr, "flowcut-bench: worker or mbufs: %s\n", rte_strerror(rte_errno));
		exit(1);
	}
	memcpy(spec.dmac, LIF0_MAC, 6);
	conn_key(0, &spec.key);
	if (br->syn) {	/* the same addresses and ports, a TCP SYN: 20 bytes of header */
		spec.key.proto = IPPROTO_TCP;
		spec.tcp_flags = FP_TCP_SYN;
		spec.payload = FRAME_LEN - 54;
	}
	if (fc_frame_build(&spec, br->tmpl, sizeof(br->tmpl)) != FRAME_LEN) {
		fprintf(stderr, "flowcut-bench: template frame\n");
		exit(1);
	}
	for (unsigned int rep = 0; rep < o->reps; rep++)
		for (unsigned int p = 0; p < PASS_MAX; p++) {
			struct result r;

			if (o->pass != NULL && strcmp(o->pass, pass_names[p]) != 0)
				continue;
			r = pass_run(br, (enum pass)p, o);
			pc.cyc[p][rep] = (double)r.cycles / (double)r.frames;
			pc.bursts += r.bursts;
			pc.preempted += r.preempted;
			if (r.counted != r.frames)
				printf("  warning: %s pass: %" PRIu64 " of %" PRIu64
				       " frames had another outcome\n", pass_names[p],
				       r.frames - r.counted, r.frames);
		}
	rte_pktmbuf_free_bulk(&br->m[0][0], POOL_BURSTS * FP_BURST_MAX);
	fp_worker_destroy(br->w);
	return pc;
}

/* The median over the repetitions of the ratio of pass a to pass b, and its range. */
static double
ratio_median(const struct pass_cycles *pc, enum pass a, enum pass b, double *lo, double *hi)
{
	double r[FP_BENCH_REPS_MAX];

	for (unsigned int i = 0; i < pc->reps; i++) {
		r[i] = pc->cyc[a][i] / pc->cyc[b][i];
		*lo = i == 0 || r[i] < *lo ? r[i] : *lo;
		*hi = i == 0 || r[i] > *hi ? r[i] : *hi;
	}
	return median(r, pc->reps);
}

static void
report(const char *name, uint32_t conns, uint64_t mem, const struct pass_cycles *pc)
{
	double ghz = (double)rte_get_tsc_hz() / 1e9;
	double fpc = median(pc->cyc[PASS_FASTPATH], pc->reps);
	double flc = median(pc->cyc[PASS_FLOOR], pc->reps);
	double lo = 0, hi = 0, x;

	printf("%-8s %9" PRIu32 " %7.2f %8.1f %8.1f %7.0f %9.1f", name, conns,
	       fpc > 0 ? ghz * 1e3 / fpc : 0, fpc / ghz, fpc, (double)mem / conns,
	       (double)mem / 1048576.0);
	if (fpc > 0 && flc > 0) {
		x = ratio_median(pc, PASS_FASTPATH, PASS_FLOOR, &lo, &hi);
		printf(" %8.2f %8.1f   %.1fx floor (%.1f-%.1f)\n", ghz * 1e3 / flc, flc, x, lo, hi);
	} else {
		printf(" %8s %8s   -\n", "-", "-");
	}
	if (pc->preempted > 0)
		printf("  (%" PRIu64 " of %" PRIu64 " bursts descheduled, left out)\n",
		       pc->preempted, pc->bursts);
}

/* Where a frame's cycles go: each pass adds a step to the one before. */
static void
report_steps(const char *name, const struct pass_cycles *pc)
{
	double c[PASS_MAX];

	for (unsigned int p = 0; p < PASS_MAX; p++)
		c[p] = median(pc->cyc[p], pc->reps);
	printf("%-8s %8.1f %8.1f %8.1f %8.1f   %8.1f %8.1f %8.1f\n", name, c[PASS_PARSE],
	       c[PASS_FLOOR], c[PASS_ENTRY], c[PASS_FASTPATH], c[PASS_FLOOR] - c[PASS_PARSE],
	       c[PASS_ENTRY] - c[PASS_FLOOR], c[PASS_FASTPATH] - c[PASS_ENTRY]);
}

/* kB of this process's memory on transparent huge pages (smaps_rollup). */
static unsigned long
anon_huge_kb(void)
{
	char line[256];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * Where the tables go: as flowcut-npu does, on fp_heap_create()'s heap
 * when the EAL has no hugepages, unless --heap dpdk.  The heap is sized
 * for the big run's two tables (the floor's is about the fast path's
 * size) and the 1,000-connection pair.
 */
static int
tables_heap(const struct opts *o, bool *huge)
{
	struct fp_params p = { .name = "bench", .max_conns = 2 * o->conns + 2000,
			       .max_nhops = 8, .max_workers = 2 };
	bool thp = o->heap != NULL ? strcmp(o->heap, "thp") == 0 : !rte_eal_has_hugepages();

	*huge = false;
	if (!thp)
		return 0;
	tables_socket = fp_heap_create("bench_tables", &p, huge);
	if (tables_socket < 0) {
		fprintf(stderr, "flowcut-bench: the tables' heap: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

int
bench_fastpath(struct opts *o)
{
	static const struct {
		const char *name;
		bool big;
		bool miss;
		bool syn;
	} runs[] = {
		{ "hit-1k", false, false, false },
		{ "hit-big", true, false, false },
		{ "miss-big", true, true, false },
		{ "miss-syn", true, true, true },
	};
	struct pass_cycles pc[sizeof(runs) / sizeof(runs[0])];
	bool ran[sizeof(runs) / sizeof(runs[0])] = { false };
	struct fp *big = NULL;
	struct floor big_fl = { NULL, NULL };
	uint64_t big_mem = 0;
	bool huge;

	if (o->pass != NULL) {
		unsigned int p = 0;

		while (p < PASS_MAX && strcmp(o->pass, pass_names[p]) != 0)
			p++;
		if (p == PASS_MAX) {
			fprintf(stderr, "flowcut-bench: --pass parse, floor, entry or fastpath, "
				"not '%s'\n", o->pass);
			return 2;
		}
	}
	if (tables_heap(o, &huge) != 0)
		return 1;
	o->pool = rte_pktmbuf_pool_create("bench_pool", 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					  SOCKET_ID_ANY);
	if (o->pool == NULL) {
		fprintf(stderr, "flowcut-bench: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	printf("flowcut-bench fastpath: %u-byte UDP/IPv4 frames, bursts of %u, one core, "
	       "TSC %.2f GHz\n", FRAME_LEN, o->burst, (double)rte_get_tsc_hz() / 1e9);
	printf("%u repetitions of %" PRIu64 " timed frames per pass; medians.  "
	       "floor: fp_parse_frame + rte_hash_lookup_bulk_data, same keys, table, order\n",
	       o->reps, o->frames);
	printf("tables (the fast path's and the floor's): %s\n",
	       tables_socket == SOCKET_ID_ANY
		       ? (rte_eal_has_hugepages() ? "DPDK's heap, on hugepages"
						  : "DPDK's heap (--no-huge: a memfd on 4 KiB pages)")
		       : huge ? "an anonymous heap advised for transparent huge pages (fp_heap_create)"
			      : "an anonymous heap; the kernel refused huge pages (THP off)");
	printf("%-8s %9s %7s %8s %8s %7s %9s %8s %8s   %s\n", "run", "conns", "Mpps", "ns/frame",
	       "cyc/frm", "B/conn", "table MiB", "floorMpps", "cyc/frm", "fastpath (range)");
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct bench_run br = { .miss = runs[i].miss, .syn = runs[i].syn };
		struct floor fl;
		uint64_t mem;

		if (o->only != NULL && strcmp(o->only, runs[i].name) != 0)
			continue;
		br.conns = runs[i].big ? o->conns : 1000;
		if (runs[i].big) {
			if (big == NULL) {
				big = table_make(br.conns, &big_mem);
				big_fl = floor_make(br.conns);
			}
			br.fp = big;
			br.fl = &big_fl;
			mem = big_mem;
		} else {
			br.fp = table_make(br.conns, &mem);
			fl = floor_make(br.conns);
			br.fl = &fl;
		}
		/* before the worker is made: its bucket holds one SYN, and the
		 * passes' clock stands still (0), so the rest drop */
		fp_new_conn_rate_set(br.fp, br.syn ? 1 : 0);
		pc[i] = run_passes(&br, o);
		fp_new_conn_rate_set(br.fp, 0);
		ran[i] = true;
		report(runs[i].name, br.conns, mem, &pc[i]);
		if (br.fp != big) {
			fp_destroy(br.fp);
			floor_free(&fl);
		}
	}
	if (o->pass == NULL) {
		printf("cycles per frame (medians), each pass one step more than the last:\n");
		printf("%-8s %8s %8s %8s %8s   %8s %8s %8s\n", "run", "parse", "floor", "entry",
		       "fastpath", "lookup", "entry-fl", "fp-entry");
		for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
			if (ran[i])
				report_steps(runs[i].name, &pc[i]);
	}
	printf("this process's memory on transparent huge pages: %lu MiB\n",
	       anon_huge_kb() / 1024);
	fp_destroy(big);
	if (big != NULL)
		floor_free(&big_fl);
	rte_mempool_free(o->pool);
	return 0;
}
