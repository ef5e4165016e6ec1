/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-ctgen against the kernel's conntrack, as root, in a network
 * namespace of the test's own (unshare: the machine's table is not
 * touched).  Rows: 1,000 states made (UDP and TCP, IPv4 and IPv6, a
 * source prefix, one a datagram at a bounded rate), counted by
 * `conntrack -C` and by a filtered `conntrack -L` (the status, TCP's
 * ESTABLISHED, the mark), one of them read back by `conntrack -G`, then
 * the same deleted and counted again; states of another run beside them
 * are not deleted; a state made twice is refused, said with its tuple,
 * and the exit status says so.  flowcut-ctgen is the one beside this
 * program (build/ or build/asan/ ...).
 */

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static char ctgen[512];
static const char *why_not;	/* set: every test skipped, this said */

#define NEED_SETUP()							\
	do {								\
		if (why_not) {						\
			print_message("skipped: %s\n", why_not);	\
			skip();						\
		}							\
	} while (0)

/* cmd's stdout into out; its exit status (-1 if it did not run) */
static int
run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (p == NULL)
		return -1;
	while (n + 1 < len && fgets(out + n, (int)(len - n), p))
		n += strlen(out + n);
	out[n] = '\0';
	while (fgets((char[256]){ 0 }, 256, p))
		;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long
count(const char *cmd)
{
	char out[64];

	if (run(cmd, out, sizeof(out)) != 0)
		return -1;
	return strtol(out, NULL, 10);
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int
setup(void **state)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	(void)state;
	if (getuid() != 0 || n < 0) {
		why_not = "needs root";
		return 0;
	}
	self[n] = '\0';
	snprintf(ctgen, sizeof(ctgen), "%s/flowcut-ctgen", dirname(self));
	/* not built, or no conntrack(8): failures, not skips */
	if (access(ctgen, X_OK) != 0) {
		fprintf(stderr, "test_ctgen: %s: %s\n", ctgen, strerror(errno));
		return -1;
	}
	if (system("modprobe nf_conntrack 2>/dev/null; command -v conntrack >/dev/null") != 0) {
		fprintf(stderr, "test_ctgen: no conntrack(8) on PATH\n");
		return -1;
	}
	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "test_ctgen: unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void
test_make_count_delete_rows(void **state)
{
	static const struct {
		const char *args;	/* after N (1000) */
		const char *list;	/* conntrack -L's filter: all 1,000 match it, each [ASSURED] */
		const char *get;	/* conntrack -G of one of them: what its line holds */
		const char *holds;
		double min_s;		/* the least time the making may take */
	} rows[] = {
		{ "--mark 0x40000000", "-p udp --mark 0x40000000",
		  "-p udp -s 198.18.0.2 -d 198.18.1.2 --sport 2023 --dport 10000",
		  "mark=1073741824", 0 },
		{ "--proto tcp --timeout 300", "-p tcp --state ESTABLISHED",
		  "-p tcp -s 198.18.0.2 -d 198.18.1.2 --sport 1024 --dport 10000", "ESTABLISHED", 0 },
		{ "--family 6 --mark 7", "-f ipv6 -p udp --mark 7",
		  "-p udp -s 2001:2::2 -d 2001:2:0:1::2 --sport 1500 --dport 10000",
		  "[ASSURED]", 0 },
		{ "--family 6 --proto tcp", "-f ipv6 -p tcp --state ESTABLISHED",
		  "-p tcp -s 2001:2::2 -d 2001:2:0:1::2 --sport 1025 --dport 10000",
		  "ESTABLISHED", 0 },
		/* 256 sources x 4 source ports: the last, 198.18.0.233:1027 (from .2) */
		{ "--src 198.18.0.2/24 --dport 53", "-p udp -d 198.18.1.2 --dport 53",
		  "-p udp -s 198.18.0.233 -d 198.18.1.2 --sport 1027 --dport 53", "dport=53", 0 },
		/* one a datagram, 2,000 a second: at least half a second */
		{ "--batch 1 --rate 2000", "-p udp", "-p udp -s 198.18.0.2 -d 198.18.1.2 --sport 1024 "
		  "--dport 10000", "[ASSURED]", 0.45 },
	};
	char cmd[2048], out[4096];

	(void)state;
	NEED_SETUP();
	assert_int_equal(system("conntrack -F 2>/dev/null"), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double t0;

		print_message("row %zu: %s\n", i, rows[i].args);
		assert_int_equal(count("conntrack -C"), 0);
		snprintf(cmd, sizeof(cmd), "%s 1000 %s", ctgen, rows[i].args);
		t0 = now();
		assert_int_equal(run(cmd, out, sizeof(out)), 0);
		assert_true(now() - t0 >= rows[i].min_s);
		assert_non_null(strstr(out, "1000 states made in"));
		assert_non_null(strstr(out, "0 failed"));
		assert_int_equal(count("conntrack -C"), 1000);
		snprintf(cmd, sizeof(cmd), "conntrack -L %s 2>/dev/null | grep -c ASSURED",
			 rows[i].list);
		assert_int_equal(count(cmd), 1000);
		snprintf(cmd, sizeof(cmd), "conntrack -G %s 2>/dev/null", rows[i].get);
		assert_int_equal(run(cmd, out, sizeof(out)), 0);
		assert_non_null(strstr(out, rows[i].holds));
		snprintf(cmd, sizeof(cmd), "%s 1000 %s --delete", ctgen, rows[i].args);
		assert_int_equal(run(cmd, out, sizeof(out)), 0);
		assert_non_null(strstr(out, "1000 states deleted in"));
		assert_int_equal(count("conntrack -C"), 0);
	}
}

/* a delete takes its own states and no other; a state made twice is refused and said */
static void
test_others_kept_and_refusals_said(void **state)
{
	char cmd[2048], out[4096];

	(void)state;
	NEED_SETUP();
	assert_int_equal(system("conntrack -F 2>/dev/null"), 0);
	snprintf(cmd, sizeof(cmd), "%s 10 --dport 20000", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	snprintf(cmd, sizeof(cmd), "%s 1000", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_int_equal(count("conntrack -C"), 1010);
	/* made again: each refused (EEXIST) on stderr with its tuple, counted, exit 1 */
	snprintf(cmd, sizeof(cmd), "%s 1000 --batch 100 2>&1 >/dev/null | grep -c 'File exists'",
		 ctgen);
	assert_int_equal(count(cmd), 1000);
	snprintf(cmd, sizeof(cmd), "%s 1000 --batch 100 2>/dev/null", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "0 states made"));
	assert_non_null(strstr(out, "1000 failed"));
	snprintf(cmd, sizeof(cmd), "%s 1000 --batch 100 2>&1 >/dev/null | head -1", ctgen);
	(void)run(cmd, out, sizeof(out));
	assert_string_equal(out, "flowcut-ctgen: state 0 udp 198.18.0.2:1024 -> 198.18.1.2:10000: "
				 "File exists\n");
	snprintf(cmd, sizeof(cmd), "%s 1000 --delete", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_int_equal(count("conntrack -C"), 10);
	assert_int_equal(count("conntrack -L -p udp --dport 20000 2>/dev/null | wc -l"), 10);
	/* deleted again: none there, each said (ENOENT), exit 1 */
	snprintf(cmd, sizeof(cmd), "%s 1000 --delete 2>&1 >/dev/null | grep -c 'No such file'",
		 ctgen);
	assert_int_equal(count(cmd), 1000);
	snprintf(cmd, sizeof(cmd), "%s 1000 --delete 2>/dev/null", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 1);
	snprintf(cmd, sizeof(cmd), "%s 10 --dport 20000 --delete", ctgen);
	assert_int_equal(run(cmd, out, sizeof(out)), 0);
	assert_int_equal(count("conntrack -C"), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_make_count_delete_rows),
		cmocka_unit_test(test_others_kept_and_refusals_said),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
