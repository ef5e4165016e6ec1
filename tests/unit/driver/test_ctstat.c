/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctstat, conntrack's own figures from procfs: fd_ctstat_parse as rows
 * (this kernel's /proc/net/stat/nf_conntrack layout, an older kernel's
 * columns, a column missing, a short line, garbage, figures summed past
 * 63 bits) -> the three sums or the error; fd_ctstat_read as rows on a
 * folder of the test's own (a count, a limit, a stat file of more CPUs
 * than a 64 KiB read holds, files missing) and on this machine's /proc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_ctstat.h"

/* Linux 6.x's header (this kernel's), then an older one's (4.x: searched, delete_list). */
#define HEAD6 "entries  clashres found new invalid ignore delete chainlength insert " \
	"insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete " \
	"search_restart\n"
#define HEAD4 "entries  searched found new invalid ignore delete delete_list insert " \
	"insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete " \
	"search_restart\n"
/* a CPU's line: insert_failed, drop, early_drop as given, the rest figures of their own */
#define CPU(f, d, e) "0000002a  00000001 00000002 00000003 00000004 00000005 00000006 " \
	"00000007 00000008 " f " " d " " e " 0000000c  0000000d 0000000e 0000000f 00000010\n"

static void
test_parse_rows(void **state)
{
	static const struct {
		const char *what, *text;
		int rc;
		int64_t insert_failed, drop, early_drop;
		const char *err;	/* rc != 0: the error says it */
	} rows[] = {
		{ "this kernel's layout, two CPUs", HEAD6 CPU("00000001", "00000010", "000000ff")
		  CPU("00000002", "00000020", "00000001"), 0, 3, 0x30, 0x100, NULL },
		{ "this kernel's layout, no CPU line", HEAD6, 0, 0, 0, 0, NULL },
		{ "an older kernel's columns", HEAD4 CPU("0000000a", "0000000b", "0000000c"), 0,
		  10, 11, 12, NULL },
		{ "no newline at the end", HEAD6 "0 0 0 0 0 0 0 0 0 5 6 7 0 0 0 0 0", 0, 5, 6, 7,
		  NULL },
		{ "a blank line between CPUs", HEAD6 CPU("00000001", "00000001", "00000001") "\n"
		  CPU("00000001", "00000001", "00000001"), 0, 2, 2, 2, NULL },
		{ "early_drop missing: -1, the others summed",
		  "entries insert_failed drop\n00000001 00000002 00000003\n"
		  "00000001 00000002 00000003\n", 0, 4, 6, -1, NULL },
		{ "none of the three", "entries found\n1 2\n", 0, -1, -1, -1, NULL },
		{ "a short line", HEAD6 CPU("1", "1", "1") "00000000 00000000 00000000\n",
		  -22, -1, -1, -1, "line 3: 3 columns, its header 17" },
		{ "a long line", "entries drop\n1 2 3\n", -22, -1, -1, -1,
		  "line 2: more columns than its header" },
		{ "garbage in a figure", "entries drop\n1 zz\n", -22, -1, -1, -1,
		  "line 2, column 2: 'zz' is not hex" },
		{ "a sign is not hex", "entries drop\n1 -1\n", -22, -1, -1, -1,
		  "line 2, column 2: '-1' is not hex" },
		{ "0x is not the file's", "entries drop\n1 0x10\n", -22, -1, -1, -1,
		  "line 2, column 2: '0x10' is not hex" },
		{ "a figure over 16 hex digits", "entries drop\n1 00000000000000001\n", -22, -1, -1,
		  -1, "line 2: a figure over 16 hex digits" },
		{ "no header line", "", -22, -1, -1, -1, "no header line" },
		{ "a newline alone", "\n1 2\n", -22, -1, -1, -1, "no header line" },
		{ "sums past 63 bits held at the most", "entries drop\n0 7fffffffffffffff\n"
		  "0 7fffffffffffffff\n0 ffffffffffffffff\n", 0, -1, INT64_MAX, -1, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctstat s = { .entries = 77, .limit = 78 };
		char err[128] = "";

		print_message("row %zu: %s\n", i, rows[i].what);
		assert_int_equal(fd_ctstat_parse(rows[i].text, strlen(rows[i].text), &s, err,
						 sizeof(err)), rows[i].rc);
		assert_int_equal(s.insert_failed, rows[i].insert_failed);
		assert_int_equal(s.drop, rows[i].drop);
		assert_int_equal(s.early_drop, rows[i].early_drop);
		assert_int_equal(s.entries, 77);	/* not the parser's */
		assert_int_equal(s.limit, 78);
		if (rows[i].err != NULL)
			assert_string_equal(err, rows[i].err);
	}
}

/* path's text written whole (folders made); NULL text: nothing written */
static void
put(const char *dir, const char *name, const char *text, size_t len)
{
	char path[512], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (slash = strchr(path + strlen(dir) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		(void)mkdir(path, 0755);
		*slash = '/';
	}
	assert_non_null(f = fopen(path, "w"));
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void
test_read_rows(void **state)
{
	enum { MANY = 1024 };	/* CPUs: 1024 lines of 155 bytes, past a 64 KiB read */
	static const struct {
		const char *what, *count, *max;
		unsigned int cpus;	/* 0: no stat file */
		int rc;
		int64_t entries, limit, drop;
	} rows[] = {
		{ "two CPUs", "12\n", "262144\n", 2, 0, 12, 262144, 2 * 0x10 },
		{ "more CPUs than a 64 KiB read holds", "5\n", "65536\n", MANY, 0, 5, 65536,
		  MANY * 0x10 },
		{ "no conntrack loaded: nothing", NULL, NULL, 0, 0, -1, -1, -1 },
		{ "a count that is not a number", "12x\n", "-3\n", 1, 0, -1, -1, 0x10 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[] = "/tmp/test_ctstat.XXXXXX", err[128] = "", cmd[64];
		struct fd_ctstat s;
		size_t line = strlen(CPU("00000001", "00000010", "00000000"));
		char *stat = malloc(sizeof(HEAD6) + (size_t)rows[i].cpus * line);

		print_message("row %zu: %s\n", i, rows[i].what);
		assert_non_null(stat);
		assert_non_null(mkdtemp(dir));
		if (rows[i].count) {
			put(dir, "sys/net/netfilter/nf_conntrack_count", rows[i].count,
			    strlen(rows[i].count));
			put(dir, "sys/net/netfilter/nf_conntrack_max", rows[i].max,
			    strlen(rows[i].max));
		}
		if (rows[i].cpus) {
			char *p = stpcpy(stat, HEAD6);

			for (unsigned int c = 0; c < rows[i].cpus; c++)
				p = stpcpy(p, CPU("00000001", "00000010", "00000000"));
			put(dir, "net/stat/nf_conntrack", stat, (size_t)(p - stat));
		}
		assert_int_equal(fd_ctstat_read(dir, &s, err, sizeof(err)), rows[i].rc);
		if (err[0])
			print_message("  %s\n", err);
		assert_int_equal(s.entries, rows[i].entries);
		assert_int_equal(s.limit, rows[i].limit);
		assert_int_equal(s.drop, rows[i].drop);
		assert_int_equal(s.insert_failed, rows[i].cpus ? (int64_t)rows[i].cpus : -1);
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
		free(stat);
	}
}

/* This machine's own files, where conntrack is loaded: every figure given. */
static void
test_read_this_kernel(void **state)
{
	struct fd_ctstat s;
	char err[128] = "";

	(void)state;
	if (access("/proc/net/stat/nf_conntrack", R_OK) != 0)
		skip();
	assert_int_equal(fd_ctstat_read(NULL, &s, err, sizeof(err)), 0);
	print_message("entries %lld limit %lld insert_failed %lld drop %lld early_drop %lld\n",
		      (long long)s.entries, (long long)s.limit, (long long)s.insert_failed,
		      (long long)s.drop, (long long)s.early_drop);
	assert_true(s.entries >= 0 && s.limit > 0);
	assert_true(s.insert_failed >= 0 && s.drop >= 0 && s.early_drop >= 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rows),
		cmocka_unit_test(test_read_rows),
		cmocka_unit_test(test_read_this_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
