/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-bench: measures and prints; asserts nothing.  main() reads a
 * subcommand's options and runs its bench, each a file of its own
 * (bench.h); this file holds main() and the helpers the benches share.
 *
 *   flowcut-bench fastpath [--conns N] [--frames N] [--burst N] [--warmup N]
 *                          [--reps N] [--only hit-1k|hit-big|miss-big|miss-syn]
 *                          [--pass parse|floor|entry|fastpath] [--heap thp|dpdk]
 *                                                      bench_fastpath.c
 *   flowcut-bench link [--calls N] [--secs N]          bench_link.c
 *   flowcut-bench cut [--conns N]                      bench_cut.c
 *   flowcut-bench ruleset [--conns N]                  bench_cut.c
 *   flowcut-bench read [--conns N]                     bench_read.c
 *   flowcut-bench ctdump [--conns N]                   bench_ctdump.c
 *   flowcut-bench rtcache [--lookups N]                bench_rtcache.c
 *   flowcut-bench inspect                              bench_inspect.c
 *
 * Each file's opening says what its bench measures and prints.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#include <rte_byteorder.h>

#include "bench.h"
#include "bench_inspect.h"
#include "fc_eal.h"
#include "fp.h"
#include "lk.h"

/* Connection i: 198.18.0.0 + i/64 : 10000 + i%64  ->  198.19.0.1 : 80. */
void
conn_key(uint32_t i, struct fc_key *k)
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

double
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

pid_t
npu_spawn(const char *link_path, unsigned int conns, unsigned int mem_mb)
{
	char nconns[16], mem[16];
	char self[4096], bin[4096], prefix[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(bin, sizeof(bin), "%s/flowcut-npu", dirname(self));
	snprintf(prefix, sizeof(prefix), "fc-bench-npu-%d", (int)getpid());
	snprintf(nconns, sizeof(nconns), "%u", conns);
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	pid = fork();
	if (pid == 0) {
		execl(bin, bin, "--no-huge", "-m", mem, "--no-pci", "--no-telemetry", "--no-shconf",
		      "--file-prefix", prefix, "-l", "0,1", "--log-level=error", "--",
		      "--link", link_path, "--conns", nconns, "--ports", "0", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	return pid;
}

/* The link of flowcut-npu `pid` on client slot `slot`, once it is up (within `secs`); or NULL. */
struct lk *
npu_attach(const char *link_path, pid_t pid, int slot, double secs)
{
	struct lk *lk = NULL;

	for (double t = mono_ns(); lk == NULL && mono_ns() - t < secs * 1e9; usleep(20000)) {
		lk = lk_attach(link_path, slot);
		if (lk != NULL && lk_npu_pid(lk) != (uint32_t)pid) {
			lk_close(lk);
			lk = NULL;
		}
	}
	return lk;
}

int
bench_npu_start(struct bench_npu *b, const char *tag, unsigned int conns, unsigned int mem_mb)
{
	*b = (struct bench_npu){ .pid = -1 };
	snprintf(b->dir, sizeof(b->dir), "/dev/shm/fc-bench-%s-XXXXXX", tag);
	if (mkdtemp(b->dir) == NULL) {
		fprintf(stderr, "flowcut-bench: mkdtemp %s: %s\n", b->dir, strerror(errno));
		b->dir[0] = '\0';
		return -1;
	}
	snprintf(b->path, sizeof(b->path), "%s/link", b->dir);
	b->pid = npu_spawn(b->path, conns, mem_mb);
	if (b->pid < 0) {
		fprintf(stderr, "flowcut-bench: cannot start flowcut-npu\n");
		return -1;
	}
	return 0;
}

void
bench_npu_stop(struct bench_npu *b)
{
	if (b->pid > 0) {
		kill(b->pid, SIGTERM);
		waitpid(b->pid, NULL, 0);
		b->pid = -1;
	}
	if (b->dir[0] != '\0') {
		unlink(b->path);
		rmdir(b->dir);
		b->dir[0] = '\0';
	}
}

void
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

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcut-bench fastpath [--conns N] [--frames N] [--burst N]\n"
		"                              [--warmup N] [--reps N] [--only hit-1k|hit-big|miss-big|miss-syn]\n"
		"                              [--pass parse|floor|entry|fastpath] [--heap thp|dpdk]\n"
		"       flowcut-bench link [--calls N] [--secs N]\n"
		"       flowcut-bench cut [--conns N]\n"
		"       flowcut-bench ruleset [--conns N]\n"
		"       flowcut-bench read [--conns N]\n"
		"       flowcut-bench ctdump [--conns N]\n"
		"       flowcut-bench rtcache [--lookups N]\n"
		"       flowcut-bench inspect\n");
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
		{ "reps", required_argument, NULL, 'r' },
		{ "pass", required_argument, NULL, 'p' },
		{ "heap", required_argument, NULL, 'H' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .conns = 1000000, .frames = 4000000, .warmup = UINT64_MAX,
			  .burst = 32, .reps = 5 };
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
	if (argc >= 2 && (strcmp(argv[1], "cut") == 0 || strcmp(argv[1], "ruleset") == 0 ||
			  strcmp(argv[1], "ctdump") == 0)) {
		bool ruleset = strcmp(argv[1], "ruleset") == 0;
		unsigned long n = ruleset ? 200000 : 100000;

		optind = 2;
		while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
			errno = 0;
			n = c == 'c' ? strtoul(optarg, &end, 10) : 0;
			if (c != 'c' || errno || *end || n == 0 || n > 1000000) {
				fprintf(stderr, "flowcut-bench %s: --conns wants 1 to 1000000\n",
					argv[1]);
				return 2;
			}
		}
		if (strcmp(argv[1], "ctdump") == 0)
			return bench_ctdump((unsigned int)n);
		return bench_cut((unsigned int)n, ruleset);
	}
	if (argc >= 2 && strcmp(argv[1], "read") == 0) {
		unsigned long n = 1048576;

		optind = 2;
		while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
			errno = 0;
			n = c == 'c' ? strtoul(optarg, &end, 10) : 0;
			if (c != 'c' || errno || *end || n == 0 || n > (1ul << 24)) {
				fprintf(stderr, "flowcut-bench read: --conns wants 1 to %lu\n",
					1ul << 24);
				return 2;
			}
		}
		return bench_read((uint32_t)n);
	}
	if (argc >= 2 && strcmp(argv[1], "inspect") == 0)
		return bench_inspect(argc - 1, argv + 1);	/* bench_inspect.c */
	if (argc >= 2 && strcmp(argv[1], "rtcache") == 0) {
		unsigned long n = 20000;

		if (argc == 4 && strcmp(argv[2], "--lookups") == 0) {
			errno = 0;
			n = strtoul(argv[3], &end, 10);
			if (errno || *end || n == 0 || n > 1000000) {
				fprintf(stderr, "flowcut-bench rtcache: --lookups wants 1 to 1000000, "
					"not '%s'\n", argv[3]);
				return 2;
			}
		} else if (argc != 2) {
			usage();
			return 2;
		}
		return bench_rtcache((unsigned int)n);
	}
	if (argc < 2 || strcmp(argv[1], "fastpath") != 0) {
		usage();
		return 2;
	}
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long long v = 0;

		if (c != 'o' && c != 'p' && c != 'H' && c != '?') {
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || (v == 0 && c != 'w')) {
				fprintf(stderr, "flowcut-bench: --%s wants a number, not '%s'\n",
					c == 'c' ? "conns" : c == 'f' ? "frames" : c == 'b' ? "burst"
					: c == 'r' ? "reps" : "warmup", optarg);
				return 2;
			}
		}
		switch (c) {
		case 'c': o.conns = v > (1u << 26) ? 0 : (uint32_t)v; break;
		case 'f': o.frames = v; break;
		case 'b': o.burst = v > FP_BURST_MAX ? 0 : (unsigned int)v; break;
		case 'o': o.only = optarg; break;
		case 'w': o.warmup = v; break;
		case 'r': o.reps = v > FP_BENCH_REPS_MAX ? 0 : (unsigned int)v; break;
		case 'p': o.pass = optarg; break;
		case 'H': o.heap = optarg; break;
		default: usage(); return 2;
		}
	}
	if (o.heap != NULL && strcmp(o.heap, "thp") != 0 && strcmp(o.heap, "dpdk") != 0) {
		fprintf(stderr, "flowcut-bench: --heap thp or dpdk, not '%s'\n", o.heap);
		return 2;
	}
	if (o.conns == 0 || o.burst == 0 || o.reps == 0) {
		fprintf(stderr, "flowcut-bench: --conns at most %u, --burst at most %u, "
			"--reps at most %u\n", 1u << 26, FP_BURST_MAX, FP_BENCH_REPS_MAX);
		return 2;
	}
	/* the fast path's tables (about 390 B a connection), the floor's copy of
	 * its hash and entries (about 370 B), and headroom for the pool */
	if (fc_eal_init("flowcut-bench", (unsigned int)(64 + (uint64_t)o.conns * 1100 / 1048576)))
		return 1;
	return bench_fastpath(&o);
}
