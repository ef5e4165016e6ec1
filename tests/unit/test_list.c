/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The list files' reader (settings/fc_list): entries, comments in the
 * Spamhaus DROP and FireHOL formats, bad lines with their numbers, the
 * canonical form, differences, membership, and a million lines.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "fc_list.h"

struct bads {
	unsigned int n;
	unsigned long line[16];
	char what[16][128];
};

static void
on_bad(void *arg, unsigned long line, const char *what)
{
	struct bads *b = arg;

	if (b->n < 16) {
		b->line[b->n] = line;
		snprintf(b->what[b->n], sizeof(b->what[0]), "%s", what);
	}
	b->n++;
}

/* The list's entries as text, one a line. */
static char *
dump(const struct fc_list *l, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && o < len; i++) {
		char r[128];

		o += (size_t)snprintf(buf + o, len - o, "%s\n", fc_range_format(&l->r[i], r, sizeof(r)));
	}
	return buf;
}

static void
parse_canon(const char *text, struct fc_list *l, struct bads *b)
{
	assert_true(fc_list_parse(text, strlen(text), l, on_bad, b) >= 0);
	fc_list_canon(l);
}

static void
test_entries(void **state)
{
	/* each row: a line, and what it reads as (NULL: a bad line) */
	static const struct { const char *line, *want; } rows[] = {
		{ "198.18.0.1", "198.18.0.1" },
		{ "198.18.0.0/24", "198.18.0.0/24" },
		{ "198.18.0.77/24", "198.18.0.0/24" },		/* host bits: the network */
		{ "198.18.0.5-198.18.0.9", "198.18.0.5-198.18.0.9" },
		{ "198.18.0.0-198.18.0.255", "198.18.0.0/24" },
		{ "0.0.0.0/0", "0.0.0.0/0" },
		{ "2001:2::1", "2001:2::1" },
		{ "2001:2::/48", "2001:2::/48" },
		{ "2001:2::1-2001:2::5", "2001:2::1-2001:2::5" },
		{ "::/0", "::/0" },
		{ "  198.18.0.1  ", "198.18.0.1" },
		{ "\t198.18.0.1\r", "198.18.0.1" },		/* CRLF files */
		{ "1.10.16.0/20 ; SBL256894", "1.10.16.0/20" },	/* Spamhaus DROP */
		{ "2001:2::/32 ; SBL1", "2001:2::/32" },
		{ "198.18.0.1 # a note", "198.18.0.1" },
		{ "198.18.0.300", NULL },
		{ "198.18.0.0/33", NULL },
		{ "2001:2::/129", NULL },
		{ "198.18.0.0/", NULL },
		{ "198.18.0.0/x", NULL },
		{ "198.18.0.0/-1", NULL },
		{ "198.18.0.9-198.18.0.5", NULL },
		{ "198.18.0.1-2001:2::1", NULL },
		{ "198.18.0.1 198.18.0.2", NULL },
		{ "example.com", NULL },
		{ "198.18.0.1/24/8", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_list l = { 0 };
		struct bads b = { 0 };
		char buf[256], want[256];

		parse_canon(rows[i].line, &l, &b);
		if (rows[i].want == NULL) {
			if (b.n != 1 || l.n != 0)
				fail_msg("'%s' should be a bad line", rows[i].line);
			assert_int_equal(b.line[0], 1);
		} else {
			snprintf(want, sizeof(want), "%s\n", rows[i].want);
			if (b.n != 0 || strcmp(dump(&l, buf, sizeof(buf)), want) != 0)
				fail_msg("'%s' read as '%s' (%u bad), not '%s'", rows[i].line, buf, b.n,
					 rows[i].want);
		}
		fc_list_free(&l);
	}
}

/* Comments, blanks and bad lines: the good lines load, each bad one is told with its number. */
static void
test_file_formats(void **state)
{
	static const char firehol[] =
		"#\n# firehol_level1\n#\n# Maintainer : FireHOL\n#\n"
		"0.0.0.0/8\n1.10.16.0/20\n\n   \n";
	static const char mixed[] =
		"; Spamhaus DROP List 2026/11/30\n"
		"1.10.16.0/20 ; SBL256894\n"
		"not-an-address\n"
		"198.18.0.1\n"
		"198.18.0.0/99 ; bad prefix\n"
		"2001:2::/48";			/* no newline at the end */
	struct fc_list l = { 0 };
	struct bads b = { 0 };
	char buf[512];

	(void)state;
	parse_canon(firehol, &l, &b);
	assert_int_equal(b.n, 0);
	assert_string_equal(dump(&l, buf, sizeof(buf)), "0.0.0.0/8\n1.10.16.0/20\n");
	fc_list_free(&l);

	assert_int_equal(fc_list_parse(mixed, strlen(mixed), &l, on_bad, &b), 2);
	fc_list_canon(&l);
	assert_int_equal(b.n, 2);
	assert_int_equal(b.line[0], 3);
	assert_int_equal(b.line[1], 5);
	assert_non_null(strstr(b.what[1], "0 to 32"));
	assert_string_equal(dump(&l, buf, sizeof(buf)), "1.10.16.0/20\n198.18.0.1\n2001:2::/48\n");
	fc_list_free(&l);
}

static void
test_long_line_and_nul(void **state)
{
	char text[FC_LIST_MAX_LINE + 40];
	struct fc_list l = { 0 };
	struct bads b = { 0 };

	(void)state;
	memset(text, ' ', sizeof(text));
	memcpy(text + FC_LIST_MAX_LINE + 2, "\n198.18.0.1\n", 12);
	memcpy(text, "198.18.0.2", 10);
	assert_int_equal(fc_list_parse(text, FC_LIST_MAX_LINE + 14, &l, on_bad, &b), 1);
	assert_int_equal(b.line[0], 1);
	assert_int_equal(l.n, 1);
	fc_list_free(&l);

	b.n = 0;
	assert_int_equal(fc_list_parse("198.18.0.1\0\n198.18.0.2\n", 23, &l, on_bad, &b), 1);
	assert_int_equal(l.n, 1);
	fc_list_free(&l);
}

/* Sorted, overlapping and adjacent ranges merged, families apart. */
static void
test_canon(void **state)
{
	struct fc_list l = { 0 };
	struct bads b = { 0 };
	char buf[512];

	(void)state;
	parse_canon("198.18.0.10\n198.18.0.0/28\n198.18.0.16-198.18.0.20\n198.18.0.22\n"
		    "2001:2::/64\n10.0.0.0/8\n2001:2::5\n255.255.255.255\n255.255.255.254\n"
		    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\n",
		    &l, &b);
	assert_int_equal(b.n, 0);
	assert_string_equal(dump(&l, buf, sizeof(buf)),
			    "10.0.0.0/8\n198.18.0.0-198.18.0.20\n198.18.0.22\n255.255.255.254/31\n"
			    "2001:2::/64\nffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\n");
	fc_list_free(&l);
}

static void
test_diff(void **state)
{
	struct fc_list a = { 0 }, c = { 0 }, add = { 0 }, rem = { 0 };
	struct bads b = { 0 };
	char buf[512];

	(void)state;
	parse_canon("198.18.0.1\n198.18.0.0/30\n198.18.1.0/24\n2001:2::1\n", &a, &b);
	parse_canon("198.18.0.0/29\n198.18.1.0/24\n2001:2::2\n198.19.0.1\n", &c, &b);
	assert_int_equal(fc_list_diff(&a, &c, &add, &rem), 0);
	assert_string_equal(dump(&add, buf, sizeof(buf)), "198.18.0.0/29\n198.19.0.1\n2001:2::2\n");
	assert_string_equal(dump(&rem, buf, sizeof(buf)), "198.18.0.0/30\n2001:2::1\n");
	fc_list_free(&add);
	fc_list_free(&rem);
	/* no change, no difference */
	assert_int_equal(fc_list_diff(&c, &c, &add, &rem), 0);
	assert_int_equal(add.n + rem.n, 0);
	fc_list_free(&a);
	fc_list_free(&c);
}

static void
test_holds(void **state)
{
	struct fc_list l = { 0 };
	struct bads b = { 0 };
	uint8_t a[16];

	(void)state;
	parse_canon("198.18.0.0/24\n198.18.2.5-198.18.2.9\n2001:2::/48\n", &l, &b);
#define HOLDS(fam, s) (inet_pton(fam == 4 ? AF_INET : AF_INET6, s, a) == 1 && \
		       fc_list_holds(&l, fam, a))
	assert_true(HOLDS(4, "198.18.0.0"));
	assert_true(HOLDS(4, "198.18.0.255"));
	assert_false(HOLDS(4, "198.18.1.0"));
	assert_false(HOLDS(4, "198.17.255.255"));
	assert_true(HOLDS(4, "198.18.2.5"));
	assert_true(HOLDS(4, "198.18.2.9"));
	assert_false(HOLDS(4, "198.18.2.10"));
	assert_true(HOLDS(6, "2001:2:0:ffff::1"));
	assert_false(HOLDS(6, "2001:3::1"));
	assert_false(HOLDS(6, "::c612:1"));		/* 198.18.0.1's bytes, the other family */
#undef HOLDS
	fc_list_free(&l);
}

/* A file that cannot be read leaves the last good contents; a million lines load. */
static void
test_load(void **state)
{
	char path[] = "/tmp/fc_list_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	struct fc_list l = { 0 };
	struct timespec t0, t1;
	long rc;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	for (unsigned int i = 0; i < 1000000; i++)	/* 10.0.0.0 up, every other address */
		fprintf(f, "10.%u.%u.%u ; entry %u\n", (2 * i) >> 16 & 0xff, (2 * i) >> 8 & 0xff,
			(2 * i) & 0xff, i);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = fc_list_load(path, &l, NULL, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_int_equal(rc, 0);
	assert_int_equal(l.n, 1000000);
	print_message("# 1,000,000 lines loaded in %.2f s\n",
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	unlink(path);
	assert_int_equal(fc_list_load(path, &l, NULL, NULL), -ENOENT);
	assert_int_equal(l.n, 1000000);			/* kept */
	assert_int_equal(fc_list_load("/tmp", &l, NULL, NULL), -EINVAL);
	fc_list_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_file_formats),
		cmocka_unit_test(test_long_line_and_nul),
		cmocka_unit_test(test_canon),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_load),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
