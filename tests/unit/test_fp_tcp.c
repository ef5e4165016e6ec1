/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_tcp alone: the window check (conntrack's tcp_in_window cases for a
 * connection picked up mid-stream), which FIN, SYN and RST may give a
 * connection back, the repeated-ACK count, and the sequence-space
 * comparisons, one row per case.  No fast path, no DPDK.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "fp_tcp.h"

static void
test_seq_compare(void **state)
{
	static const struct {
		uint32_t a, b;
		bool before, after;
	} rows[] = {
		{ 1, 2, true, false },
		{ 2, 1, false, true },
		{ 7, 7, false, false },
		{ 0xfffffff0u, 0x10, true, false },	/* across the wrap */
		{ 0x10, 0xfffffff0u, false, true },
		{ 0, 0x7fffffffu, true, false },	/* half the space ahead */
		{ 0, 0x80000001u, false, true },	/* more than half: behind */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(fp_seq_before(rows[i].a, rows[i].b), rows[i].before);
		assert_int_equal(fp_seq_after(rows[i].a, rows[i].b), rows[i].after);
	}
}

/* A direction already seen: end, maxwin, rmaxend. */
struct dir {
	bool seen;
	uint32_t end, maxwin, rmaxend;
	uint8_t wscale;
};

struct seg {
	uint32_t seq, ack;
	uint16_t win, len;
	bool ack_flag;
};

/*
 * Both directions as conntrack would hold them; the sender sends `seg`.
 * In most rows the receiver (rcv) has sent up to 50,000, advertised at
 * most 20,000, and allows the sender up to 110,000 (its ack + window:
 * rmaxend); the sender has sent up to 100,000.
 */
static const struct {
	const char *name;
	struct dir snd, rcv;
	struct seg seg;
	bool seq_chk;
	bool want;
	struct dir after;	/* snd after the segment */
} rows[] = {
	{ "first segment learns",
	  { false, 0, 0, 0, 0 }, { false, 0, 0, 0, 0 },
	  { 1000, 5000, 2000, 100, true }, true, true,
	  { true, 1100, 2000, 7000, 0 } },
	{ "first segment, window 0: maxwin 1",
	  { false, 0, 0, 0, 0 }, { false, 0, 0, 0, 0 },
	  { 1000, 5000, 0, 0, true }, true, true,
	  { true, 1000, 1, 5000, 0 } },
	{ "first segment without ACK: no limit learnt",
	  { false, 0, 0, 0, 0 }, { false, 0, 0, 0, 0 },
	  { 1000, 5000, 2000, 10, false }, true, true,
	  { true, 1010, 2000, 0, 0 } },
	{ "first segment, window scaled",
	  { false, 0, 0, 0, 7 }, { false, 0, 0, 0, 0 },
	  { 1000, 5000, 100, 0, true }, true, true,
	  { true, 1000, 12800, 17800, 7 } },
	{ "in the window: end, window, limit climb",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50000, 30000, 1000, true }, true, true,
	  { true, 101000, 30000, 80000, 0 } },
	{ "beyond the receiver's window",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 110001, 50000, 1000, 10, true }, true, false,
	  { true, 100000, 20000, 60000, 0 } },
	{ "at the receiver's window edge",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 110000, 50000, 1000, 10, true }, true, true,
	  { true, 110010, 20000, 60000, 0 } },
	{ "beyond the window, TCP_SEQ_CHK off: learnt",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 200000, 50000, 1000, 10, true }, false, true,
	  { true, 200010, 20000, 60000, 0 } },
	{ "receiver never seen: nothing to check against",
	  { true, 100000, 20000, 60000, 0 }, { false, 0, 0, 0, 0 },
	  { 900000, 1, 1000, 10, true }, true, true,
	  { true, 900010, 20000, 60000, 0 } },
	{ "wholly before what the receiver can still take",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 70000, 50000, 1000, 9999, true }, true, false,
	  { true, 100000, 20000, 60000, 0 } },
	{ "ending at the receiver's oldest acceptable byte",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 70000, 50000, 1000, 10000, true }, true, true,
	  { true, 100000, 20000, 60000, 0 } },
	{ "acks data never sent",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50001, 1000, 10, true }, true, false,
	  { true, 100000, 20000, 60000, 0 } },
	{ "acks data never sent, no ACK flag: not checked",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 90000, 1000, 10, false }, true, true,
	  { true, 100010, 20000, 60000, 0 } },
	{ "acks further back than MAXACKWINCONST",
	  { true, 100000, 20000, 60000, 0 }, { true, 70000, 20000, 110000, 0 },
	  { 100000, 70000 - 66001, 1000, 10, true }, true, false,
	  { true, 100000, 20000, 60000, 0 } },
	{ "acks exactly MAXACKWINCONST back",
	  { true, 100000, 20000, 60000, 0 }, { true, 70000, 20000, 110000, 0 },
	  { 100000, 70000 - 66000, 1000, 10, true }, true, true,
	  { true, 100010, 20000, 60000, 0 } },
	{ "a window past MAXACKWINCONST widens what may be acked",
	  { true, 100000, 100000, 60000, 0 }, { true, 170000, 20000, 110000, 0 },
	  { 100000, 170000 - 90000, 1000, 10, true }, true, true,
	  { true, 100010, 100000, 81000, 0 } },
	{ "across the wrap",
	  { true, 0xfffff000u, 20000, 0x4000, 0 }, { true, 0x1000, 20000, 0x3000, 0 },
	  { 0xfffff000u, 0x1000, 2000, 0x2000, true }, true, true,
	  { true, 0x1000, 20000, 0x4000, 0 } },
	{ "window and limit never shrink",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 99000, 40000, 1000, 500, true }, true, true,
	  { true, 100000, 20000, 60000, 0 } },
};

static void
dir_set(struct fp_tcp_dir *t, const struct dir *d)
{
	*t = (struct fp_tcp_dir){ 0 };
	t->seen = d->seen;
	t->end = d->end;
	t->maxwin = d->maxwin;
	t->rmaxend = d->rmaxend;
	t->wscale = d->wscale;
}

static void
test_window(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fp_tcp_dir snd, rcv;
		struct fp_parsed pp = { 0 };
		bool got;

		print_message("%s\n", rows[i].name);
		dir_set(&snd, &rows[i].snd);
		dir_set(&rcv, &rows[i].rcv);
		pp.tcp_seq = rows[i].seg.seq;
		pp.tcp_ack = rows[i].seg.ack;
		pp.tcp_win = rows[i].seg.win;
		pp.tcp_payload = rows[i].seg.len;
		pp.tcp_flags = rows[i].seg.ack_flag ? FP_TCP_ACK : 0;
		got = fp_tcp_track(&snd, &rcv, &pp, rows[i].seq_chk);
		assert_int_equal(got, rows[i].want);
		assert_int_equal(snd.seen, rows[i].after.seen);
		assert_int_equal(snd.end, rows[i].after.end);
		assert_int_equal(snd.maxwin, rows[i].after.maxwin);
		assert_int_equal(snd.rmaxend, rows[i].after.rmaxend);
		assert_int_equal(snd.wscale, rows[i].after.wscale);
	}
}

/*
 * A FIN, SYN or RST may give the connection back only inside the tracked
 * window (coprocessor-model.md step 6); with no window yet it may.  The
 * directions as in `rows` above: the sender has sent up to 100,000, the
 * receiver up to 50,000 with windows of at most 20,000, and allows the
 * sender up to 110,000.  TCP_SEQ_CHK plays no part.
 */
static const struct {
	const char *name;
	struct dir snd, rcv;
	struct seg seg;
	uint8_t flags;		/* FP_TCP_FIN, _SYN or _RST, with ack_flag's ACK */
	bool want;
} gb_rows[] = {
	{ "FIN in the window",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50000, 1000, 0, true }, FP_TCP_FIN, true },
	{ "FIN with data, at the receiver's window edge",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 110000, 50000, 1000, 10, true }, FP_TCP_FIN, true },
	{ "FIN beyond the receiver's window",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 110001, 50000, 1000, 0, true }, FP_TCP_FIN, false },
	{ "FIN wholly before what the receiver can take",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 79999, 50000, 1000, 0, true }, FP_TCP_FIN, false },
	{ "FIN acking data never sent",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50001, 1000, 0, true }, FP_TCP_FIN, false },
	{ "FIN acking further back than MAXACKWINCONST",
	  { true, 100000, 20000, 60000, 0 }, { true, 70000, 20000, 110000, 0 },
	  { 100000, 70000 - 66001, 1000, 0, true }, FP_TCP_FIN, false },
	{ "SYN in the window",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 0, 1000, 0, false }, FP_TCP_SYN, true },
	{ "SYN half the sequence space away (a new connection's, or a guess)",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000 + 0x7fffffffu, 0, 1000, 0, false }, FP_TCP_SYN, false },
	{ "RST at the sender's end",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 0, 0, 0, false }, FP_TCP_RST, true },
	{ "RST|ACK at the sender's end",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50000, 0, 0, true }, FP_TCP_RST, true },
	{ "RST a receiver's window before the sender's end",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 80000, 0, 0, 0, false }, FP_TCP_RST, true },
	{ "RST one byte before that",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 79999, 0, 0, 0, false }, FP_TCP_RST, false },
	{ "RST one byte past what the sender has sent (RFC 5961: no reset there)",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100001, 0, 0, 0, false }, FP_TCP_RST, false },
	{ "RST at the receiver's window edge, past the sender's end",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 110000, 0, 0, 0, false }, FP_TCP_RST, false },
	{ "RST far outside",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000 + 0x40000000u, 0, 0, 0, false }, FP_TCP_RST, false },
	{ "RST|ACK acking data never sent",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 50001, 0, 0, true }, FP_TCP_RST, false },
	{ "RST|ACK with ack 0 (a broken stack's): the ack not checked",
	  { true, 100000, 20000, 60000, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 100000, 0, 0, 0, true }, FP_TCP_RST, true },
	{ "RST across the wrap",
	  { true, 0x1000, 20000, 0x4000, 0 }, { true, 0x1000, 20000, 0x3000, 0 },
	  { 0xfffff000u, 0x1000, 0, 0, true }, FP_TCP_RST, true },
	{ "sender not seen yet: no window, gives back",
	  { false, 0, 0, 0, 0 }, { true, 50000, 20000, 110000, 0 },
	  { 900000, 1, 0, 0, false }, FP_TCP_RST, true },
	{ "receiver not seen yet: no window, gives back",
	  { true, 100000, 20000, 60000, 0 }, { false, 0, 0, 0, 0 },
	  { 900000, 1, 0, 0, false }, FP_TCP_RST, true },
	{ "neither seen (just offloaded): a FIN gives back",
	  { false, 0, 0, 0, 0 }, { false, 0, 0, 0, 0 },
	  { 900000, 1, 0, 0, true }, FP_TCP_FIN, true },
};

static void
test_may_give_back(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(gb_rows) / sizeof(gb_rows[0]); i++) {
		struct fp_tcp_dir snd, rcv, before;
		struct fp_parsed pp = { 0 };

		print_message("%s\n", gb_rows[i].name);
		dir_set(&snd, &gb_rows[i].snd);
		dir_set(&rcv, &gb_rows[i].rcv);
		before = snd;
		pp.tcp_seq = gb_rows[i].seg.seq;
		pp.tcp_ack = gb_rows[i].seg.ack;
		pp.tcp_win = gb_rows[i].seg.win;
		pp.tcp_payload = gb_rows[i].seg.len;
		pp.tcp_flags = (uint8_t)(gb_rows[i].flags | (gb_rows[i].seg.ack_flag ? FP_TCP_ACK : 0));
		assert_int_equal(fp_tcp_may_give_back(&snd, &rcv, &pp), gb_rows[i].want);
		assert_memory_equal(&snd, &before, sizeof(snd));	/* learns nothing */
	}
}

/* Repeated ACKs: from step `change_at` on, one field takes another value. */
enum field { F_NONE, F_ACK, F_END, F_WIN, F_SACK };

static const struct {
	const char *name;
	unsigned int steps;
	enum field field;
	unsigned int change_at;
	uint32_t fires;		/* bit i: step i gives back */
} dup_rows[] = {
	{ "nine in a row: nothing", 9, F_NONE, 0, 0 },
	{ "the tenth in a row gives back", 10, F_NONE, 0, 1u << 9 },
	{ "and counting starts again", 20, F_NONE, 0, 1u << 9 | 1u << 19 },
	{ "another ack starts again", 15, F_ACK, 5, 1u << 14 },
	{ "more data sent starts again", 15, F_END, 5, 1u << 14 },
	{ "another window starts again", 15, F_WIN, 5, 1u << 14 },
	{ "growing SACK blocks start again", 15, F_SACK, 5, 1u << 14 },
};

static void
test_dup_ack(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(dup_rows) / sizeof(dup_rows[0]); i++) {
		struct fp_tcp_dir t = { 0 };

		print_message("%s\n", dup_rows[i].name);
		for (unsigned int s = 0; s < dup_rows[i].steps; s++) {
			bool changed = dup_rows[i].field != F_NONE && s >= dup_rows[i].change_at;
			struct fp_parsed pp = {
				.tcp_seq = 1000,
				.tcp_ack = 5000,
				.tcp_win = 512,
				.tcp_payload = 0,
				.tcp_flags = FP_TCP_ACK,
				.tcp_sack = 0x00010002,
			};

			if (changed) {
				switch (dup_rows[i].field) {
				case F_ACK: pp.tcp_ack += 1460; break;
				case F_END: pp.tcp_payload = 1460; break;
				case F_WIN: pp.tcp_win = 1024; break;
				case F_SACK: pp.tcp_sack = 0x00010008; break;
				default: break;
				}
			}
			assert_int_equal(fp_tcp_dup_ack(&t, &pp), !!(dup_rows[i].fires & 1u << s));
		}
	}
}

/* Reset forgets what was learnt and keeps the handshake's window scale. */
static void
test_reset(void **state)
{
	struct fp_tcp_dir t = { .end = 5, .maxwin = 6, .rmaxend = 7, .dup_cnt = 3,
				.seen = 1, .wscale = 9 };
	struct fp_tcp_dir rcv = { 0 };
	struct fp_parsed pp = { .tcp_seq = 42, .tcp_win = 1, .tcp_flags = FP_TCP_ACK,
				.tcp_ack = 100 };

	(void)state;
	fp_tcp_reset(&t);
	assert_int_equal(t.seen, 0);
	assert_int_equal(t.dup_cnt, 0);
	assert_int_equal(t.wscale, 9);
	assert_true(fp_tcp_track(&t, &rcv, &pp, true));
	assert_int_equal(t.end, 42);
	assert_int_equal(t.maxwin, 512);
	assert_int_equal(t.rmaxend, 612);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seq_compare),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_may_give_back),
		cmocka_unit_test(test_dup_ack),
		cmocka_unit_test(test_reset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
