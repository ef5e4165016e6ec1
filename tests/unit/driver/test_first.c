/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_first as rows: one sample offered at t0 (qualified) and answered at
 * 1 ms, then its reads' answers, each a row's step: the connection's two
 * directions as CONN_READ_BY_ID reads them (first_fwd_us and last seen),
 * or an rc.  What is wanted: when each read is due, the sample measured
 * (the earlier direction, to the microsecond), read again, or unseen.
 * Then the places: FD_FIRST_MAX samples wait, the next is skipped, and a
 * freed place takes the next offer; the wire's encoding at its edges.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fd_first.h"

#define MS 1000000ull
#define T0 (5000 * MS)		/* qualified */
#define OFFER (T0 + MS)		/* FLOW_CREATE_FP answered */

/* One read's answer: rc, and each direction's first forward (ns, 0 none) and last seen. */
struct reply {
	int rc;
	uint64_t first[2], last[2];
};

static struct fc_conn_info
info_of(const struct reply *r)
{
	struct fc_conn_info ci = { .id = 7 };

	for (unsigned int d = 0; d < 2; d++) {
		ci.mf[d].stats.last_seen = r->last[d];
		ci.mf[d].first_fwd_us = fc_first_fwd_us(r->first[d], r->last[d]);
	}
	return ci;
}

static void
test_first_rows(void **state)
{
	enum { MEASURED, AGAIN, UNSEEN };
	static const struct {
		const char *what;
		unsigned int nreads;
		struct reply r[FD_FIRST_TRIES];
		int end;
		uint64_t us;	/* MEASURED: the sample, us */
	} rows[] = {
		{ "forwarded 700 us after qualifying, the original way", 1,
		  { { 0, { T0 + 700000, 0 }, { T0 + 90 * MS, 0 } } }, MEASURED, 700 },
		{ "the reply first: the earlier of the two", 1,
		  { { 0, { T0 + 2 * MS, T0 + 1 * MS }, { T0 + 9 * MS, T0 + 9 * MS } } },
		  MEASURED, 1000 },
		{ "a stamp between microseconds: read up to one after", 1,
		  { { 0, { T0 + 1 * MS + 300, 0 }, { T0 + 9 * MS, 0 } } }, MEASURED, 1001 },
		{ "under a microsecond after qualifying", 1,
		  { { 0, { T0 + 10, 0 }, { T0 + 10, 0 } } }, MEASURED, 0 },
		{ "nothing at the first read, then at the second", 2,
		  { { 0, { 0, 0 }, { OFFER, OFFER } }, { 0, { T0 + 150 * MS, 0 }, { T0 + 290 * MS, 0 } } },
		  MEASURED, 150000 },
		{ "no answer, then read again and measured", 2,
		  { { -ETIMEDOUT, { 0 }, { 0 } }, { 0, { T0 + 3 * MS, 0 }, { T0 + 4 * MS, 0 } } },
		  MEASURED, 3000 },
		{ "gone before it forwarded: unseen", 1, { { -ENOENT, { 0 }, { 0 } } }, UNSEEN, 0 },
		{ "silent through every read: unseen", FD_FIRST_TRIES,
		  { { 0, { 0 }, { OFFER } }, { 0, { 0 }, { OFFER } }, { 0, { 0 }, { OFFER } },
		    { 0, { 0 }, { OFFER } }, { 0, { 0 }, { OFFER } } }, UNSEEN, 0 },
		{ "silent but the last read: measured", FD_FIRST_TRIES,
		  { { 0, { 0 }, { OFFER } }, { 0, { 0 }, { OFFER } }, { 0, { 0 }, { OFFER } },
		    { 0, { 0 }, { OFFER } }, { 0, { T0 + 2000 * MS, 0 }, { T0 + 2000 * MS, 0 } } },
		  MEASURED, 2000000 },
		{ "a stamp before it qualified (not one clock): unseen", 1,
		  { { 0, { T0 - 5 * MS, 0 }, { T0 + 5 * MS, 0 } } }, UNSEEN, 0 },
		{ "forwarded 71 minutes before its last seen: too long to say, read again", 1,
		  { { 0, { T0 + 10, 0 }, { T0 + 4300000000000ull, 0 } } }, AGAIN, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_first f;
		uint64_t now = OFFER, wait = FD_FIRST_AFTER_MS * MS;
		struct fd_first_sample *s;

		print_message("row %zu: %s\n", i, rows[i].what);
		fd_first_init(&f);
		assert_true(fd_first_offer(&f, 7, T0, OFFER));
		for (unsigned int k = 0; k < rows[i].nreads; k++) {
			struct fc_conn_info ci = info_of(&rows[i].r[k]);

			/* due exactly `wait` after the last answer, not a nanosecond before */
			assert_null(fd_first_due(&f, now + wait - 1));
			now += wait;
			s = fd_first_due(&f, now);
			assert_non_null(s);
			assert_int_equal(s->id, 7);
			assert_null(fd_first_due(&f, now));	/* posted: not again */
			fd_first_answer(&f, s, rows[i].r[k].rc, &ci, now);
			wait *= 2;
		}
		switch (rows[i].end) {
		case MEASURED:
			assert_int_equal(f.us.n, 1);
			assert_int_equal(f.us.max_us, rows[i].us);
			assert_int_equal(f.unseen, 0);
			assert_int_equal(f.n, 0);
			break;
		case UNSEEN:
			assert_int_equal(f.us.n, 0);
			assert_int_equal(f.unseen, 1);
			assert_int_equal(f.n, 0);
			break;
		default:
			assert_int_equal(f.us.n, 0);
			assert_int_equal(f.n, 1);
			assert_non_null(fd_first_due(&f, now + wait));
		}
		assert_null(fd_first_due(&f, UINT64_MAX - 1));
	}
}

/* FD_FIRST_MAX wait; the next offer is skipped; one measured frees a place for the next. */
static void
test_first_places(void **state)
{
	struct fd_first f;
	struct fc_conn_info ci = { 0 };
	struct fd_first_sample *s;
	uint64_t due = OFFER + FD_FIRST_AFTER_MS * MS;

	(void)state;
	fd_first_init(&f);
	for (unsigned int i = 0; i < FD_FIRST_MAX; i++)
		assert_true(fd_first_offer(&f, 100 + i, T0, OFFER));
	assert_false(fd_first_offer(&f, 99, T0, OFFER));
	assert_int_equal(f.skipped, 1);
	s = fd_first_due(&f, due);
	assert_non_null(s);
	ci.mf[1].stats.last_seen = T0 + 2 * MS;
	ci.mf[1].first_fwd_us = fc_first_fwd_us(T0 + 2 * MS, T0 + 2 * MS);
	fd_first_answer(&f, s, 0, &ci, due);
	assert_int_equal(f.us.n, 1);
	assert_true(fd_first_offer(&f, 500, T0, due));
	assert_int_equal(f.n, FD_FIRST_MAX);
	/* every other one due at once, one at a time */
	for (unsigned int i = 1; i < FD_FIRST_MAX; i++)
		assert_non_null(fd_first_due(&f, due));
	assert_null(fd_first_due(&f, due));
	s = fd_first_due(&f, due + FD_FIRST_AFTER_MS * MS);
	assert_non_null(s);
	assert_int_equal(s->id, 500);
}

/* The wire's first_fwd_us and back: none, the same ns, the microsecond, the saturation. */
static void
test_first_wire(void **state)
{
	static const struct {
		uint64_t first, last;
		uint32_t us;
		uint64_t back;
	} rows[] = {
		{ 0, 5000, 0, 0 },				/* none forwarded */
		{ 5000, 5000, 1, 5000 },			/* the last frame was the first */
		{ 4001, 5000, 1, 5000 },			/* under a microsecond: rounds up to last */
		{ 4000, 5000, 2, 4000 },
		{ 1, 1, 1, 1 },					/* a burst at 0 stamps 1 */
		{ 1000, 4294967294000ull + 1000, UINT32_MAX - 0, 0 },	/* too long to say */
		{ 1000, UINT64_MAX, UINT32_MAX, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_mflow_info mf = { .stats.last_seen = rows[i].last };

		print_message("wire row %zu\n", i);
		mf.first_fwd_us = fc_first_fwd_us(rows[i].first, rows[i].last);
		assert_int_equal(mf.first_fwd_us, rows[i].us);
		assert_int_equal(fc_first_fwd_ns(&mf), rows[i].back);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_rows),
		cmocka_unit_test(test_first_places),
		cmocka_unit_test(test_first_wire),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
