/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_pool as rows: a sequence of gets and puts on a pool keeping `keep`,
 * and what must hold after each step - how many are kept, whether a get
 * handed back the last object put (LIFO reuse) and zeroed, the ones past
 * `keep` freed (asan's leak check sees the rest: fd_pool_free frees the
 * kept).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fd_pool.h"

#define HELD 8

static void
test_pool_rows(void **state)
{
	/* ops: 'g' a get (into the next hold), 'p' the last held put back */
	static const struct {
		const char *what;
		size_t size;
		unsigned int keep;
		const char *ops;
		unsigned int nfree;	/* kept at the end */
		int reused;		/* the last get's the last put's: 1, a new one's: 0, no get: -1 */
	} rows[] = {
		{ "nothing done", 144, 4, "", 0, -1 },
		{ "one get: made new", 144, 4, "g", 0, 0 },
		{ "a get, a put: kept", 144, 4, "gp", 1, 0 },
		{ "a get, a put, a get: the kept one again, zeroed", 144, 4, "gpg", 0, 1 },
		{ "three put with keep 2: two kept, one freed", 144, 2, "gggppp", 2, 0 },
		{ "keep 0: nothing kept", 144, 0, "gp", 0, 0 },
		{ "LIFO: two put, the last put comes first", 144, 4, "ggppg", 1, 1 },
		{ "smaller than a pointer: rounded up, still kept", 1, 4, "gpg", 0, 1 },
	};

	(void)state;
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct fd_pool p;
		unsigned char *held[HELD] = { 0 }, *last_put = NULL;
		unsigned int nheld = 0;
		int reused = -1;

		fd_pool_init(&p, rows[r].size, rows[r].keep);
		for (const char *op = rows[r].ops; *op != '\0'; op++) {
			if (*op == 'g') {
				unsigned char *o = fd_pool_get(&p);

				assert_non_null(o);
				for (size_t i = 0; i < rows[r].size; i++)
					if (o[i] != 0)
						fail_msg("%s: byte %zu of a get is %u, not 0", rows[r].what,
							 i, o[i]);
				memset(o, 0xa5, rows[r].size);	/* dirty: the next get must zero it */
				reused = o == last_put;
				held[nheld++] = o;
			} else {
				assert_true(nheld > 0);
				last_put = held[--nheld];
				fd_pool_put(&p, last_put);
			}
		}
		if (p.nfree != rows[r].nfree)
			fail_msg("%s: %u kept, not %u", rows[r].what, p.nfree, rows[r].nfree);
		if (reused != rows[r].reused)
			fail_msg("%s: reused %d, not %d", rows[r].what, reused, rows[r].reused);
		while (nheld > 0)
			fd_pool_put(&p, held[--nheld]);
		fd_pool_put(&p, NULL);	/* nothing */
		fd_pool_free(&p);
		assert_int_equal(p.nfree, 0);
		assert_null(p.free);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
