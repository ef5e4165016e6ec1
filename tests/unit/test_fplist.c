/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_fplist, the watched fingerprints file: every rule of a line as a
 * table row (good lines and what they load as, bad lines and the reason
 * told with their number), a file mixing both, the last good contents
 * kept when a file cannot be read, and lookups.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fc_fplist.h"
#include "trust_rows.h"

#define MAX_BYTES (64u << 20)	/* list_max_bytes' default */

#define SPEC_JA4 "t13d1516h2_8daaf6152771_e5627efa2ab1"
#define SPEC_JA3 "e7d705a3286e19ea42f587b344ee6865"

struct told {
	unsigned long line[16];
	char what[16][256];
	unsigned int n;
};

static void
on_bad(void *arg, unsigned long line, const char *what)
{
	struct told *t = arg;

	if (t->n < 16) {
		t->line[t->n] = line;
		snprintf(t->what[t->n], sizeof(t->what[0]), "%s", what);
	}
	t->n++;
}

static void
test_rows(void **state)
{
	static const struct {
		const char *line;
		const char *loads;	/* NULL: a bad line */
		int kind;
		const char *why;	/* for a bad line: what it is told */
	} rows[] = {
		{ SPEC_JA4, SPEC_JA4, FC_FP_JA4, NULL },
		{ "  " SPEC_JA4 "\t# a chrome", SPEC_JA4, FC_FP_JA4, NULL },
		{ "t13d1516h2_8DAAF6152771_E5627EFA2AB1", SPEC_JA4, FC_FP_JA4, NULL },
		{ "q13d0310h3_55b375c5d22e_cd85d2d88918", "q13d0310h3_55b375c5d22e_cd85d2d88918",
		  FC_FP_JA4, NULL },
		{ "t12i0000Ha_000000000000_000000000000", "t12i0000Ha_000000000000_000000000000",
		  FC_FP_JA4, NULL },
		{ SPEC_JA3, SPEC_JA3, FC_FP_JA3, NULL },
		{ "E7D705A3286E19EA42F587B344EE6865\r", SPEC_JA3, FC_FP_JA3, NULL },
		{ "x13d1516h2_8daaf6152771_e5627efa2ab1", NULL, 0,
		  "a JA4 starts with t (TCP) or q (QUIC)" },
		{ "t1-d1516h2_8daaf6152771_e5627efa2ab1", NULL, 0,
		  "a JA4's version is two characters (13, 12, s3...)" },
		{ "t13x1516h2_8daaf6152771_e5627efa2ab1", NULL, 0,
		  "a JA4's fourth character is d (SNI) or i (none)" },
		{ "t13d15a6h2_8daaf6152771_e5627efa2ab1", NULL, 0,
		  "a JA4's cipher and extension counts are two digits each" },
		{ "t13d1516h._8daaf6152771_e5627efa2ab1", NULL, 0,
		  "a JA4's ALPN characters are letters or digits" },
		{ "t13d1516h2_8daaf615277g_e5627efa2ab1", NULL, 0,
		  "a JA4's two hashes are 12 hex digits each" },
		{ "t13d1516h2_8daaf6152771_e5627efa2ab", NULL, 0,
		  "not a JA4 (36 characters: t13d1516h2_8daaf6152771_e5627efa2ab1)" },
		{ "e7d705a3286e19ea42f587b344ee686z", NULL, 0,
		  "a JA3 is 32 hex digits (its MD5)" },
		{ "e7d705a3286e19ea42f587b344ee686", NULL, 0,
		  "neither a JA4 (t13d1516h2_8daaf6152771_e5627efa2ab1) nor a JA3 (32 hex digits)" },
		{ SPEC_JA3 " " SPEC_JA4, NULL, 0,
		  "more than one fingerprint on the line" },
		{ "771,4865-4866,0-23,29,0", NULL, 0,
		  "neither a JA4 (t13d1516h2_8daaf6152771_e5627efa2ab1) nor a JA3 (32 hex digits)" },
		{ "e7d705a3\x01", NULL, 0, "a control or non-ASCII byte" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_fplist l = { 0 };
		struct told t = { 0 };
		long nbad = fc_fplist_parse(rows[i].line, strlen(rows[i].line), &l, on_bad, &t);

		print_message("row %zu: %s\n", i, rows[i].loads ? rows[i].loads : rows[i].why);
		if (rows[i].loads != NULL) {
			if (nbad != 0)
				fail_msg("row %zu: refused: %s", i, t.what[0]);
			assert_int_equal(l.n, 1);
			assert_string_equal(l.fp[0].s, rows[i].loads);
			assert_int_equal(l.fp[0].kind, rows[i].kind);
			assert_int_equal(l.fp[0].line, 1);
			assert_int_equal(fc_fp_kind_of(l.fp[0].s, strlen(l.fp[0].s)), rows[i].kind);
		} else {
			assert_int_equal(nbad, 1);
			assert_int_equal(t.n, 1);
			assert_int_equal(t.line[0], 1);
			assert_string_equal(t.what[0], rows[i].why);
			assert_int_equal(l.n, 0);
		}
		fc_fplist_free(&l);
	}
}

/* A file of good and bad lines: the good load, each bad told with its number. */
static void
test_file(void **state)
{
	static const char text[] =
		"# watched TLS clients\n"			/* 1 */
		"\n"						/* 2 */
		SPEC_JA4 "  # the spec's example\n"		/* 3 */
		"not-a-fingerprint\n"				/* 4 */
		SPEC_JA3 "\n"					/* 5 */
		"   \t\n"					/* 6 */
		SPEC_JA4 "\n"					/* 7: again, kept once */
		"t13d1516h2_8daaf6152771\n"			/* 8 */
		"0123456789abcdef0123456789ABCDEF";		/* 9: no newline at the end */
	char dir[] = "/tmp/fc-fplist-XXXXXX", path[128], err[256];
	struct fc_fplist l = { 0 };
	struct told t = { 0 };
	const struct fc_fp *fp;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ja.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, sizeof(text) - 1, f), sizeof(text) - 1);
	assert_int_equal(fclose(f), 0);

	assert_int_equal(fc_fplist_load(path, MAX_BYTES, &l, on_bad, &t, err, sizeof(err)), 2);
	assert_int_equal(t.n, 2);
	assert_int_equal(t.line[0], 4);
	assert_int_equal(t.line[1], 8);
	assert_int_equal(l.n, 3);
	/* sorted: a binary search finds each, and nothing else */
	fp = fc_fplist_find(&l, SPEC_JA4);
	assert_non_null(fp);
	assert_int_equal(fp->line, 3);
	assert_int_equal(fp->kind, FC_FP_JA4);
	fp = fc_fplist_find(&l, SPEC_JA3);
	assert_non_null(fp);
	assert_int_equal(fp->line, 5);
	fp = fc_fplist_find(&l, "0123456789abcdef0123456789abcdef");
	assert_non_null(fp);
	assert_int_equal(fp->kind, FC_FP_JA3);
	assert_null(fc_fplist_find(&l, "0123456789abcdef0123456789abcdee"));
	assert_null(fc_fplist_find(&l, "t13d1516h2_8daaf6152771_e5627efa2ab2"));
	assert_null(fc_fplist_find(&l, ""));
	for (size_t i = 1; i < l.n; i++)
		assert_true(strcmp(l.fp[i - 1].s, l.fp[i].s) < 0);

	/* unreadable: the last good contents stay */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(fc_fplist_load(path, MAX_BYTES, &l, on_bad, &t, err, sizeof(err)), -ENOENT);
	assert_int_equal(l.n, 3);
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(fc_fplist_load(path, MAX_BYTES, &l, on_bad, &t, err, sizeof(err)), -EISDIR);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/ja.txt", dir);
	assert_int_equal(l.n, 3);
	/* an empty file empties the list */
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(fc_fplist_load(path, MAX_BYTES, &l, on_bad, &t, err, sizeof(err)), 0);
	assert_int_equal(l.n, 0);
	assert_null(fc_fplist_find(&l, SPEC_JA4));
	fc_fplist_free(&l);
	fc_fplist_free(NULL);
	unlink(path);
	rmdir(dir);
}

/* A line over 1024 bytes is one bad line, and the next still reads. */
static void
test_long_line(void **state)
{
	static char text[1100 + sizeof(SPEC_JA3) + 1];
	struct fc_fplist l = { 0 };
	struct told t = { 0 };

	(void)state;
	memset(text, 'a', 1100);
	text[1100] = '\n';
	memcpy(text + 1101, SPEC_JA3, sizeof(SPEC_JA3) - 1);
	assert_int_equal(fc_fplist_parse(text, 1101 + sizeof(SPEC_JA3) - 1, &l, on_bad, &t), 1);
	assert_int_equal(t.line[0], 1);
	assert_string_equal(t.what[0], "longer than 1024 bytes");
	assert_int_equal(l.n, 1);
	assert_string_equal(l.fp[0].s, SPEC_JA3);
	fc_fplist_free(&l);
}

static long
trust_load(const char *path, char *err, size_t errlen)
{
	struct fc_fplist l = { 0 };
	long rc = fc_fplist_load(path, MAX_BYTES, &l, NULL, NULL, err, errlen);

	if (rc >= 0 && l.n != 2)
		fail_msg("%s: %zu fingerprints read, not 2", path, l.n);
	fc_fplist_free(&l);
	return rc;
}

/* A file anyone but root could have written (or swapped) is refused, saying whose path and why. */
static void
test_trust(void **state)
{
	(void)state;
	if (trust_rows_run(trust_load, SPEC_JA4 "\n" SPEC_JA3 "\n") > 0)
		print_message("# the rows that chown were skipped: not root\n");
}

/*
 * A file's lines are never told back, whatever they hold (the path may
 * name /etc/shadow): only the line's number and a reason.  And a file
 * over list_max_bytes is refused whole.
 */
static void
test_no_echo_and_cap(void **state)
{
	static const char text[] =
		"root:$y$j9T$S3CR3Tsalt$S3CR3Thash:19000:0:99999:7:::\n"	/* 1 */
		"S3CR3T\n"							/* 2 */
		"S3CR3T S3CR3T\n"						/* 3 */
		"S3CR3Tabcdefghijklmnopqrstuvwxyz\n"				/* 4: 32 long */
		"S3CR3Taaaa_bbbbbbbbbbbb_cccccccccccc\n"			/* 5: a JA4's shape */
		"t13d1516h2_S3CR3Taaaaaa_cccccccccccc\n"			/* 6 */
		"t13d1516h2_8daaf6152771_e5627efa2ab1 S3CR3T\n"			/* 7 */
		SPEC_JA3 "\n";							/* 8 */
	char dir[] = "/tmp/fc-fplist-XXXXXX", path[128], err[256] = "";
	struct fc_fplist l = { 0 };
	struct told t = { 0 };
	long rc, over;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ja.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	rc = fc_fplist_load(path, MAX_BYTES, &l, on_bad, &t, err, sizeof(err));
	over = fc_fplist_load(path, sizeof(text) - 2, &l, on_bad, &t, err, sizeof(err));
	unlink(path);
	rmdir(dir);
	assert_int_equal(rc, 7);
	assert_int_equal(t.n, 7);
	for (unsigned int i = 0; i < t.n; i++) {
		print_message("# line %lu: %s\n", t.line[i], t.what[i]);
		assert_int_equal(t.line[i], i + 1);
		assert_null(strstr(t.what[i], "S3CR3T"));
	}
	assert_int_equal(l.n, 1);
	assert_int_equal(over, -EFBIG);
	assert_int_equal(l.n, 1);	/* kept */
	assert_non_null(strstr(err, "more than list_max_bytes"));
	assert_null(strstr(err, "S3CR3T"));
	fc_fplist_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_long_line),
		cmocka_unit_test(test_trust),
		cmocka_unit_test(test_no_echo_and_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
