/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_hist as rows: samples added (`n` of `us`, then `n2` of `us2`), the
 * maximum and the p99 wanted - one bucket, a bucket's edges, the 1 % tail
 * above the p99 and one sample more than it, the cap at the maximum, the
 * last bucket, no sample, a reset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fd_hist.h"

static void
test_hist_rows(void **state)
{
	static const struct {
		const char *what;
		unsigned int n;
		uint64_t us;
		unsigned int n2;
		uint64_t us2;
		uint64_t max_us, p99_us;
	} rows[] = {
		{ "no sample", 0, 0, 0, 0, 0, 0 },
		{ "one of 0 us", 1, 0, 0, 0, 0, 0 },
		{ "all 100 us: p99 capped at the maximum", 1000, 100, 0, 0, 100, 100 },
		{ "all 3 us: the bucket (2,4] capped at 3", 10, 3, 0, 0, 3, 3 },
		{ "a bucket's upper edge: 64 us is in (32,64]", 99, 64, 1, 65, 65, 64 },
		{ "1 % above: the p99 is the 99 %'s bucket", 99, 10, 1, 5000, 5000, 16 },
		{ "2 % above: the p99 is the tail's", 98, 10, 2, 5000, 5000, 5000 },
		{ "150 samples, 1 above: ceil(0.99 n) = 149 below", 149, 500, 1, 100000, 100000, 512 },
		{ "150 samples, 2 above", 148, 500, 2, 100000, 100000, 100000 },
		{ "the last bucket: above 4.2 s", 100, 10000000, 0, 0, 10000000, 10000000 },
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
		assert_int_equal(fd_hist_p99(&h), rows[i].p99_us);
		fd_hist_reset(&h);
		assert_int_equal(fd_hist_p99(&h), 0);
		assert_int_equal(h.max_us, 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_hist_rows) };

	return cmocka_run_group_tests(tests, NULL, NULL);
}
