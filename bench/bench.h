/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench: what flowcut-bench's subcommands share, private to bench/.  Each
 * bench is a file (bench_fastpath.c, bench_link.c, bench_cut.c,
 * bench_ctdump.c, bench_read.c, bench_rtcache.c; bench_inspect.c has a
 * header of its own); flowcut-bench.c holds main(), which parses a
 * subcommand's options and calls its bench_*(), and the helpers below,
 * which the benches call and which call no bench.  Single-threaded; a
 * bench holds nothing after it returns.
 */
#ifndef FLOWCUT_BENCH_H
#define FLOWCUT_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct fc_key;
struct lk;
struct rte_mempool;

#define FP_BENCH_REPS_MAX 99	/* --reps at most: struct pass_cycles holds as many */

#define CUT_MARK 0x40000000u	/* the offload bit the binding is told the ruleset sets */

/* `flowcut-bench fastpath`'s options, as main() read them. */
struct opts {
	uint32_t conns;
	uint64_t frames;
	uint64_t warmup;	/* UINT64_MAX: frames / 10 */
	unsigned int burst;
	unsigned int reps;		/* each pass this many times, interleaved */
	const char *only;		/* one run */
	const char *pass;		/* one pass */
	const char *heap;		/* "thp" or "dpdk"; NULL: thp without hugepages */
	struct rte_mempool *pool;
};

/* The client's completions: how many answered, how many failed. */
struct cmdq_tally {
	uint64_t ok;
	uint64_t failed;
	int first_rc;
};

/*
 * The benches, one a subcommand: each prints its figures and returns the
 * process's exit status (0; 1 when what it measures failed, said on
 * stderr).  A bench that needs the test lab's front ports (cut, ruleset,
 * ctdump, rtcache) prints that it is skipped, and returns 0, without them.
 */
int bench_fastpath(struct opts *o);			/* bench_fastpath.c; 2: a bad --pass */
int bench_link(unsigned int calls, unsigned int secs);	/* bench_link.c */
int bench_cut(unsigned int n, bool ruleset);		/* bench_cut.c: cut and ruleset */
int bench_ctdump(unsigned int n);			/* bench_ctdump.c */
int bench_read(uint32_t n);				/* bench_read.c */
int bench_rtcache(unsigned int n);			/* bench_rtcache.c */

/* Connection i's key: 198.18.0.0 + i/64 : 10000 + i%64  ->  198.19.0.1 : 80, UDP. */
void conn_key(uint32_t i, struct fc_key *k);

/* CLOCK_MONOTONIC in ns. */
double mono_ns(void);

/*
 * npu_spawn - start flowcut-npu, the one beside this binary (no ports,
 * --no-huge, mem_mb MiB, a table of conns), on the link at link_path.
 * Its pid, to SIGTERM and wait for; -1 when this binary's path could not
 * be read or fork failed (a failed exec shows as a link that never comes
 * up).
 */
pid_t npu_spawn(const char *link_path, unsigned int conns, unsigned int mem_mb);

/* The link of flowcut-npu `pid` on client slot `slot`, once it is up (within `secs`); or NULL. */
struct lk *npu_attach(const char *link_path, pid_t pid, int slot, double secs);

/* flowcut-npu beside a bench, its link in a 0700 folder of its own under /dev/shm */
struct bench_npu {
	char dir[64];	/* "" until made */
	char path[80];	/* dir/link */
	pid_t pid;	/* -1 until started */
};

/*
 * bench_npu_start - the folder /dev/shm/fc-bench-TAG-XXXXXX made (lk_create
 * refuses /dev/shm itself) and flowcut-npu started on its link (npu_spawn's
 * conns and mem_mb): 0, or -1 (said on stderr).  bench_npu_stop must follow
 * either way.
 */
int bench_npu_start(struct bench_npu *b, const char *tag, unsigned int conns, unsigned int mem_mb);
/* bench_npu_stop - flowcut-npu stopped and waited for, its folder removed: what start made. */
void bench_npu_stop(struct bench_npu *b);

/* An fd_cmdq completion counting into the struct cmdq_tally at ctx. */
void cmdq_tally_done(void *ctx, int rc, const void *ans, uint16_t len);

#endif
