/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_hist as rows.  The buckets: a value, its bucket and the bucket's
 * upper edge, at the edges (the exact values below 16, the first
 * log-linear bucket, either side of 1 ms, either side of a power of two,
 * the last bucket).  The percentiles: samples added (`n` of `us`, then
 * `n2` of `us2`), the maximum, the p50 and the p99 wanted - one bucket,
 * a bucket's edges, the 1 % tail above the p99 and one sample more than
 * it, the cap at the maximum, the last bucket, no sample, a reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fd_hist.h"

static void
test_hist_buckets(void **state)
{
	static const struct {
		uint64_t us;
		unsigned int bucket;
		uint64_t upper;
	} rows[] = {
		{ 0, 0, 0 },
		{ 1, 1, 1 },
		{ 15, 15, 15 },
		{ 16, 16, 16 },		/* the first log-linear octave: width 1 */
		{ 31, 31, 31 },
		{ 32, 32, 33 },		/* width 2 */
		{ 33, 32, 33 },
		{ 34, 33, 35 },
		{ 959, 109, 959 },
		{ 960, 110, 991 },
		{ 991, 110, 991 },	/* under 1 ms */
		{ 992, 111, 1023 },	/* 992..1023: across 1 ms */
		{ 1000, 111, 1023 },
		{ 1023, 111, 1023 },
		{ 1024, 112, 1087 },	/* width 64 */
		{ 1087, 112, 1087 },
		{ 1088, 113, 1151 },
		{ (1ull << 26) - 1, FD_HIST_BUCKETS - 2, (1ull << 26) - 1 },
		{ 1ull << 26, FD_HIST_BUCKETS - 1, UINT64_MAX },	/* the last */
		{ UINT64_MAX, FD_HIST_BUCKETS - 1, UINT64_MAX },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint64_t upper = 0;

		print_message("bucket row %zu: %llu us\n", i, (unsigned long long)rows[i].us);
		assert_int_equal(fd_hist_bucket(rows[i].us, &upper), rows[i].bucket);
		assert_int_equal(upper, rows[i].upper);
	}
	/* every bucket's upper edge is in it, one more is in the next */
	for (uint64_t us = 0, upper; us < (1ull << 26); us = upper + 1) {
		unsigned int b = fd_hist_bucket(us, &upper);
		uint64_t u2;

		assert_int_equal(fd_hist_bucket(upper, &u2), b);
		assert_true(upper - us <= (us >> 4));	/* the width: under 1/16 of the value */
		assert_int_equal(fd_hist_bucket(upper + 1, &u2), b + 1);
	}
}

static void
test_hist_rows(void **state)
{
	static const struct {
		const char *what;
		unsigned int n;
		uint64_t us;
		unsigned int n2;
		uint64_t us2;
		uint64_t max_us, p50_us, p99_us;
	} rows[] = {
		{ "no sample", 0, 0, 0, 0, 0, 0, 0 },
		{ "one of 0 us", 1, 0, 0, 0, 0, 0, 0 },
		{ "all 100 us: capped at the maximum", 1000, 100, 0, 0, 100, 100, 100 },
		{ "all 3 us: exact below 16", 10, 3, 0, 0, 3, 3, 3 },
		{ "990 us: under 1 ms, [960,991]", 10, 990, 0, 0, 990, 990, 990 },
		{ "990 and 1,000 us: the p50 under 1 ms, the p99 across", 50, 990, 50, 1000, 1000,
		  991, 1000 },
		{ "51 of 1,000 us: the p50 across 1 ms", 49, 990, 51, 1000, 1000, 1000, 1000 },
		{ "a bucket's upper edge: 1,087 us in [1024,1087]", 99, 1087, 1, 1088, 1088, 1087,
		  1087 },
		{ "1 % above: the p99 is the 99 %'s bucket", 99, 10, 1, 5000, 5000, 10, 10 },
		{ "2 % above: the p99 is the tail's", 98, 10, 2, 5000, 5000, 10, 5000 },
		{ "150 samples, 1 above: ceil(0.99 n) = 149 below", 149, 500, 1, 100000, 100000, 511,
		  511 },
		{ "150 samples, 2 above", 148, 500, 2, 100000, 100000, 511, 100000 },
		{ "the last bucket: above 67 s", 100, 100000000, 0, 0, 100000000, 100000000,
		  100000000 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_hist h;

		print_message("row %zu: %s\n", i, rows[i].what);
		fd_hist_reset(&h);
		for (unsigned int k = 0; k < rows[i].n; k++)
			fd_hist_add(&h, rows[i].us);
		for (unsigned int k = 0; k < rows[i].n2; k++)
			fd_hist_add(&h, rows[i].us2);
		assert_int_equal(h.max_us, rows[i].max_us);
		assert_int_equal(fd_hist_pct(&h, 50), rows[i].p50_us);
		assert_int_equal(fd_hist_p99(&h), rows[i].p99_us);
		fd_hist_reset(&h);
		assert_int_equal(fd_hist_p99(&h), 0);
		assert_int_equal(h.max_us, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_hist_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
