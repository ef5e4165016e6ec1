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
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <cmocka.h>

#include "fc_list.h"
#include "trust_rows.h"

/* The settings' defaults: 64 MiB, only 0.0.0.0/0 and ::/0 (and ranges as wide) refused. */
static const struct fc_list_limits dflt = { .max_bytes = 64u << 20, .min_prefix4 = 1,
					     .min_prefix6 = 1 };

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

/*
 * Spamhaus's JSON DROP, one object a line: each row a whole file, what it
 * reads as, and its bad lines (number and reason) under the defaults.
 */
#define DROP4 "{\"cidr\":\"1.10.16.0/20\",\"sblid\":\"SBL256894\",\"rir\":\"apnic\"}"
#define DROP6 "{\"cidr\":\"2001:678:738::/48\",\"sblid\":\"SBL636047\",\"rir\":\"ripencc\"}"
#define META "{\"type\":\"metadata\",\"timestamp\":1733011200,\"size\":12345,\"records\":2," \
	"\"copyright\":\"(c) 2024 The Spamhaus Project SLU\",\"terms\":\"https://www.spamhaus.org/drop/terms/\"}"

static void
test_json_drop(void **state)
{
	static const struct {
		const char *text, *want;
		unsigned int nbad;
		unsigned long line[3];
		const char *what[3];
	} rows[] = {
		{ DROP4 "\n", "1.10.16.0/20\n", 0, { 0 }, { NULL } },
		{ DROP6 "\n", "2001:678:738::/48\n", 0, { 0 }, { NULL } },
		{ DROP4 "\n" DROP6 "\n" META "\n", "1.10.16.0/20\n2001:678:738::/48\n", 0, { 0 }, { NULL } },
		{ META "\n", "", 0, { 0 }, { NULL } },				/* an empty list */
		{ DROP4 "\n" META "\n" DROP6 "\n" META "\n", "1.10.16.0/20\n2001:678:738::/48\n", 0, { 0 },
		  { NULL } },					/* cat drop_v4.json drop_v6.json */
		{ DROP4 "\r\n" DROP6 "\r\n" META "\r\n", "1.10.16.0/20\n2001:678:738::/48\n", 0, { 0 },
		  { NULL } },							/* CRLF */
		{ "\n   \n" DROP4 "\n\n\t\n" DROP6, "1.10.16.0/20\n2001:678:738::/48\n", 0, { 0 },
		  { NULL } },							/* blank lines, no last newline */
		{ "; Spamhaus DROP v4\n# mirrored\n" DROP4 "\n; end\n", "1.10.16.0/20\n", 0, { 0 },
		  { NULL } },							/* comment lines */
		{ "  \t{ \"cidr\" : \"198.18.0.1\" }  \n", "198.18.0.1\n", 0, { 0 }, { NULL } },
		{ "{\"rir\":\"arin\",\"x\":{\"y\":[1,2,null]},\"cidr\":\"198.18.0.77/24\",\"n\":1.5e3}\n",
		  "198.18.0.0/24\n", 0, { 0 }, { NULL } },			/* unknown members */
		{ "{\"cidr\":\"198.18.0.1#x\"}\n", NULL, 1, { 1 },		/* no comment in a string */
		  { "the \"cidr\": not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)" } },
		{ "{\"cidr\":\"198.18.0.1;x\"}\n" DROP4 "\n", "1.10.16.0/20\n", 1, { 1 },
		  { "the \"cidr\": not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)" } },
		{ "{\"type\":\"metadata\",\"cidr\":\"198.18.0.1\"}\n", "", 0, { 0 }, { NULL } },
		{ DROP4 "\n{\"sblid\":\"SBL1\",\"rir\":\"arin\"}\n", "1.10.16.0/20\n", 1, { 2 },
		  { "a JSON object without a \"cidr\" (nor \"type\": \"metadata\")" } },
		{ "{\"type\":\"other\"}\n{}\n", "", 2, { 1, 2 },
		  { "a JSON object without a \"cidr\" (nor \"type\": \"metadata\")",
		    "a JSON object without a \"cidr\" (nor \"type\": \"metadata\")" } },
		{ DROP6 "\n{\"cidr\":17}\n{\"cidr\":null}\n{\"cidr\":[\"198.18.0.1\"]}\n",
		  "2001:678:738::/48\n", 3, { 2, 3, 4 },
		  { "a \"cidr\" that is not a string", "a \"cidr\" that is not a string",
		    "a \"cidr\" that is not a string" } },
		{ "{\"cidr\":\"1.10.16.0/20\"\n{\"cidr\":\"1.10.16.0/20\"} {}\n{\"cidr\":\"198.18.0.1\",}\n",
		  NULL, 3, { 1, 2, 3 },
		  { "bad JSON: the object is cut short",
		    "bad JSON: text after the object (one object a line)",
		    "bad JSON: not an object of members" } },
		{ "{cidr:\"198.18.0.1\"}\n{\"cidr\":\"\xff\"}\n{\"cidr\":\"\\u0000\"}\n", NULL, 3, { 1, 2, 3 },
		  { "bad JSON: not an object of members", "bad JSON: not UTF-8",
		    "bad JSON: a \\u0000 in a string" } },
		{ "{\"cidr\":\"198.18.0.1\",\"cidr\":\"198.18.0.2\"}\n", NULL, 1, { 1 },
		  { "bad JSON: a member named twice" } },
		{ DROP4 "\n{\"cidr\":\"1.10.16.0/33\"}\n{\"cidr\":\"2001:678::/129\"}\n", "1.10.16.0/20\n", 2,
		  { 2, 3 },
		  { "the \"cidr\": the prefix length is not 0 to 32",
		    "the \"cidr\": the prefix length is not 0 to 128" } },
		{ "{\"cidr\":\"example.com/24\"}\n{\"cidr\":\"\"}\n{\"cidr\":\" 198.18.0.1\"}\n", NULL, 3,
		  { 1, 2, 3 },
		  { "the \"cidr\": not an address before the '/'",
		    "the \"cidr\": not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)",
		    "the \"cidr\": not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)" } },
		{ "{\"cidr\":\"198.18.0.5-198.18.0.9\"}\n", NULL, 1, { 1 },
		  { "a \"cidr\" that is a range (an address or ADDR/LEN, as Spamhaus writes)" } },
		{ "{\"cidr\":\"0.0.0.0/0\"}\n{\"cidr\":\"::/0\"}\n", NULL, 2, { 1, 2 },
		  { "wider than a /1 (list_min_prefix4)", "wider than a /1 (list_min_prefix6)" } },
		/* one format a file: the first entry's line sets it */
		{ "; DROP\n" DROP4 "\n198.18.0.1\n2001:2::/48 ; SBL1\n" DROP6 "\n", "1.10.16.0/20\n2001:678:738::/48\n",
		  2, { 3, 4 },
		  { "a text entry among JSON objects (one format a file: line 2 is JSON)",
		    "a text entry among JSON objects (one format a file: line 2 is JSON)" } },
		{ "\n198.18.0.1 ; SBL1\n" DROP4 "\n" META "\n", "198.18.0.1\n", 2, { 3, 4 },
		  { "a JSON object among text entries (one format a file: line 2 is text)",
		    "a JSON object among text entries (one format a file: line 2 is text)" } },
		{ "{ bad\n198.18.0.1\n", NULL, 2, { 1, 2 },	/* a bad object sets the format too */
		  { "bad JSON: not an object of members",
		    "a text entry among JSON objects (one format a file: line 1 is JSON)" } },
		{ "{\"cidr\":\"S3CR3T\"}\n{\"S3CR3T\":1}\n{S3CR3T}\n", NULL, 3, { 1, 2, 3 },	/* no echo */
		  { "the \"cidr\": not an address, a prefix (ADDR/LEN) or a range (ADDR-ADDR)",
		    "a JSON object without a \"cidr\" (nor \"type\": \"metadata\")",
		    "bad JSON: not an object of members" } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_list l = { 0 };
		struct bads b = { 0 };
		char buf[512];
		long nbad = fc_list_parse_within(rows[i].text, strlen(rows[i].text), &dflt, &l, on_bad,
						 &b);

		fc_list_canon(&l);
		print_message("row %zu: %ld bad, %zu read\n", i, nbad, l.n);
		if (nbad != (long)rows[i].nbad || b.n != rows[i].nbad)
			fail_msg("row %zu: %ld bad lines (first: %lu %s), not %u", i, nbad, b.line[0],
				 b.n ? b.what[0] : "-", rows[i].nbad);
		for (unsigned int k = 0; k < rows[i].nbad; k++) {
			if (b.line[k] != rows[i].line[k] || strcmp(b.what[k], rows[i].what[k]) != 0)
				fail_msg("row %zu: bad line %lu '%s', not %lu '%s'", i, b.line[k],
					 b.what[k], rows[i].line[k], rows[i].what[k]);
		}
		dump(&l, buf, sizeof(buf));
		if (strcmp(buf, rows[i].want ? rows[i].want : "") != 0)
			fail_msg("row %zu: read as '%s', not '%s'", i, buf, rows[i].want);
		fc_list_free(&l);
	}
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
	char dir[] = "/tmp/fc_list_XXXXXX", path[64], err[256];
	FILE *f;
	struct fc_list l = { 0 };
	struct timespec t0, t1;
	long rc;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/list", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (unsigned int i = 0; i < 1000000; i++)	/* 10.0.0.0 up, every other address */
		fprintf(f, "10.%u.%u.%u ; entry %u\n", (2 * i) >> 16 & 0xff, (2 * i) >> 8 & 0xff,
			(2 * i) & 0xff, i);
	fclose(f);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = fc_list_load(path, &dflt, &l, NULL, NULL, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	unlink(path);
	assert_int_equal(rc, 0);
	assert_int_equal(l.n, 1000000);
	print_message("# 1,000,000 lines loaded in %.2f s\n",
		      (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	assert_int_equal(fc_list_load(path, &dflt, &l, NULL, NULL, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, path));
	assert_int_equal(l.n, 1000000);			/* kept */
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	rc = fc_list_load(path, &dflt, &l, NULL, NULL, err, sizeof(err));
	rmdir(path);
	rmdir(dir);
	assert_int_equal(rc, -EISDIR);
	assert_int_equal(l.n, 1000000);			/* kept */
	fc_list_free(&l);
}

static long
trust_load(const char *path, char *err, size_t errlen)
{
	struct fc_list l = { 0 };
	long rc = fc_list_load(path, &dflt, &l, NULL, NULL, err, errlen);

	if (rc >= 0 && l.n != 2)
		fail_msg("%s: %zu ranges read, not 2", path, l.n);
	fc_list_free(&l);
	return rc;
}

/* A file anyone but root could have written (or swapped) is refused, saying whose path and why. */
static void
test_trust(void **state)
{
	(void)state;
	if (trust_rows_run(trust_load, "198.18.0.1\n2001:2::/64\n") > 0)
		print_message("# the rows that chown were skipped: not root\n");
}

/* A file over list_max_bytes is refused whole, with the reason; one at the cap reads. */
static void
test_cap(void **state)
{
	char dir[] = "/tmp/fc_list_XXXXXX", path[64], err[256], want[256];
	struct fc_list_limits lim = dflt;
	struct fc_list l = { 0 };
	long over, at;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/list", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	for (unsigned int i = 0; i < 200; i++)	/* 200 lines of 16 bytes: 3,200 bytes */
		fprintf(f, "198.18.%u.%u ;x\n", i / 100, i % 100 + 100);
	fclose(f);
	lim.max_bytes = 3199;
	over = fc_list_load(path, &lim, &l, NULL, NULL, err, sizeof(err));
	lim.max_bytes = 3200;
	at = fc_list_load(path, &lim, &l, NULL, NULL, want, sizeof(want));
	unlink(path);
	rmdir(dir);
	print_message("# %s\n", err);
	assert_int_equal(over, -EFBIG);
	snprintf(want, sizeof(want), "%s: 3200 bytes, more than list_max_bytes = 3199", path);
	assert_string_equal(err, want);
	assert_int_equal(at, 0);
	assert_int_equal(l.n, 2);	/* 198.18.0.100-199 and 198.18.1.100-199 */
	fc_list_free(&l);
}

/* An entry wider than the minimum prefix is a bad line by its number; the rest loads. */
static void
test_min_prefix(void **state)
{
	static const struct {
		unsigned int min4, min6;
		const char *line;
		const char *why;	/* NULL: loads */
	} rows[] = {
		{ 1, 1, "0.0.0.0/0", "wider than a /1 (list_min_prefix4)" },
		{ 1, 1, "198.18.0.1/0", "wider than a /1 (list_min_prefix4)" },
		{ 1, 1, "0.0.0.0-255.255.255.255", "wider than a /1 (list_min_prefix4)" },
		{ 1, 1, "0.0.0.0-128.0.0.0", "wider than a /1 (list_min_prefix4)" },
		{ 1, 1, "0.0.0.0-127.255.255.255", NULL },
		{ 1, 1, "0.0.0.1-128.0.0.0", NULL },	/* 2^31 addresses, not aligned */
		{ 1, 1, "0.0.0.0/1", NULL },
		{ 1, 1, "224.0.0.0/3", NULL },		/* FireHOL level 1's multicast */
		{ 1, 1, "::/0", "wider than a /1 (list_min_prefix6)" },
		{ 1, 1, "::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "wider than a /1 (list_min_prefix6)" },
		{ 1, 1, "::/1", NULL },
		{ 1, 1, "8000::/1", NULL },
		{ 8, 1, "10.0.0.0/7", "wider than a /8 (list_min_prefix4)" },
		{ 8, 1, "10.0.0.0/8", NULL },
		{ 8, 1, "10.0.0.0-11.0.0.0", "wider than a /8 (list_min_prefix4)" },
		{ 8, 1, "10.0.0.1-11.0.0.0", NULL },
		{ 8, 1, "::/0", "wider than a /1 (list_min_prefix6)" },
		{ 0, 0, "0.0.0.0/0", NULL },
		{ 0, 0, "::/0", NULL },
		{ 32, 128, "198.18.0.0/31", "wider than a /32 (list_min_prefix4)" },
		{ 32, 128, "198.18.0.1", NULL },
		{ 32, 128, "2001:2::/127", "wider than a /128 (list_min_prefix6)" },
		{ 32, 128, "2001:2::1", NULL },
		{ 1, 48, "2001:2::/47", "wider than a /48 (list_min_prefix6)" },
		{ 1, 48, "2001:2::/48", NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_list_limits lim = { 1 << 20, rows[i].min4, rows[i].min6, NULL };
		char text[128];
		struct fc_list l = { 0 };
		struct bads b = { 0 };
		long nbad;

		/* the row's line second, between two good ones */
		snprintf(text, sizeof(text), "198.19.0.1\n%s\n2001:2:ffff::1\n", rows[i].line);
		nbad = fc_list_parse_within(text, strlen(text), &lim, &l, on_bad, &b);
		print_message("row %zu: /%u /%u %s: %s\n", i, rows[i].min4, rows[i].min6,
			      rows[i].line, rows[i].why ? rows[i].why : "loads");
		if (rows[i].why == NULL) {
			if (nbad != 0)
				fail_msg("row %zu: refused: %s", i, b.what[0]);
			assert_int_equal(l.n, 3);
		} else {
			assert_int_equal(nbad, 1);
			assert_int_equal(b.line[0], 2);
			assert_string_equal(b.what[0], rows[i].why);
			assert_int_equal(l.n, 2);
		}
		fc_list_free(&l);
		/* fc_list_parse (the cut sets, flowcutctl cut) has no minimum */
		assert_int_equal(fc_list_parse(text, strlen(text), &l, NULL, NULL), 0);
		fc_list_free(&l);
	}
}

/* A file's lines are never told back: a secret-looking bad line gives its number and a reason only. */
static void
test_no_echo(void **state)
{
	static const char text[] =
		"root:$y$j9T$S3CR3Tsalt$S3CR3Thash:19000:0:99999:7:::\n"
		"S3CR3T\n"
		"S3CR3T/24\n"
		"198.18.0.1 S3CR3T\n"
		"198.18.0.1-S3CR3T\n"
		"S3CR3T-S3CR3T\n"
		"0.0.0.0/0 ; S3CR3T\n";
	char dir[] = "/tmp/fc_list_XXXXXX", path[64], err[256] = "";
	struct fc_list l = { 0 };
	struct bads b = { 0 };
	FILE *f;
	long rc;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/list", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	rc = fc_list_load(path, &dflt, &l, on_bad, &b, err, sizeof(err));
	unlink(path);
	rmdir(dir);
	assert_int_equal(rc, 7);
	assert_int_equal(b.n, 7);
	for (unsigned int i = 0; i < b.n; i++) {
		print_message("# line %lu: %s\n", b.line[i], b.what[i]);
		assert_int_equal(b.line[i], i + 1);
		assert_null(strstr(b.what[i], "S3CR3T"));
	}
	fc_list_free(&l);
}

/* The file truncated and written again, in place, while it is read many times: never a crash. */
struct rewriter {
	const char *path;
	const char *text;
	size_t len;
	volatile int stop;
	unsigned long rounds;
};

static void *
rewrite(void *arg)
{
	struct rewriter *w = arg;

	while (!w->stop) {	/* as `curl -o` does: truncated, then written in pieces */
		int fd = open(w->path, O_WRONLY | O_TRUNC);

		if (fd < 0)
			break;
		for (size_t o = 0; o < w->len && !w->stop; o += 4096)
			if (write(fd, w->text + o, w->len - o < 4096 ? w->len - o : 4096) < 0)
				break;
		close(fd);
		w->rounds++;
		usleep(2000);	/* a moment whole, to be read whole */
	}
	return NULL;
}

static void
test_truncated_while_read(void **state)
{
	char dir[] = "/tmp/fc_list_XXXXXX", path[64], err[256];
	struct rewriter w = { 0 };
	struct timespec t0, t;
	unsigned long loads = 0, whole = 0, changed = 0;
	size_t cap = 100000 * 16;
	char *text = malloc(cap);
	pthread_t th;
	FILE *f;

	(void)state;
	assert_non_null(text);
	for (unsigned int i = 0; i < 100000; i++)
		w.len += (size_t)snprintf(text + w.len, cap - w.len, "10.%u.%u.%u\n", i >> 16 & 0xff,
					  i >> 8 & 0xff, i & 0xff);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/list", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(text, 1, w.len, f);
	fclose(f);
	w.path = path;
	w.text = text;
	assert_int_equal(pthread_create(&th, NULL, rewrite, &w), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {	/* 300 loads, or 10 s */
		struct fc_list l = { 0 };
		long rc = fc_list_load(path, &dflt, &l, NULL, NULL, err, sizeof(err));

		if (rc < 0 && rc != -EAGAIN) {
			w.stop = 1;
			pthread_join(th, NULL);
			fail_msg("load %lu: %ld %s", loads, rc, err);
		}
		/* what was read is a whole file or a part the writer had written, no more */
		assert_true(rc < 0 || (rc <= 1 && l.n <= 1));
		whole += rc >= 0 && l.n == 1 && l.r[0].hi[3] == 0x9f;
		changed += rc == -EAGAIN;
		fc_list_free(&l);
		loads++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (loads < 300 && t.tv_sec - t0.tv_sec < 10);
	w.stop = 1;
	pthread_join(th, NULL);
	unlink(path);
	rmdir(dir);
	free(text);
	print_message("# %lu loads against %lu rewrites: %lu whole, %lu refused as changed\n", loads,
		      w.rounds, whole, changed);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_file_formats),
		cmocka_unit_test(test_json_drop),
		cmocka_unit_test(test_long_line_and_nul),
		cmocka_unit_test(test_canon),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_holds),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_trust),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_min_prefix),
		cmocka_unit_test(test_no_echo),
		cmocka_unit_test(test_truncated_while_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
