/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inspect/fc_frag, one row per case: a TCP segment that fc_frame builds,
 * cut into fragments by the row's steps (offset, length, more to come,
 * and what a step changes of its fragment), fed to one reassembler on a
 * virtual clock, each step with the answer it must get; a whole packet
 * must be the segment again byte for byte and read by fc_seg_ip as it;
 * and the row's counters at its end.  Every frame is an exactly-sized
 * heap copy (the ASan build catches a read past it), and every row ends
 * with all held datagrams expired and the reassembler closed (a leak
 * fails the ASan build).
 *
 * Then the kernel's own reassembly, as root (skipped otherwise): every
 * row without a clock, a bound or a whole frame is sent again, frame by
 * frame, from one end of a veth pair in a namespace of its own, and what
 * a raw socket at the other end reads must be the packets the row made
 * whole, byte for byte, and nothing more.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_packet.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fc_frag.h"
#include "fc_frame.h"
#include "fc_seg.h"

#define ETH 14u
#define FRAME_MIN 60u		/* a shorter frame is padded: the padding is not payload */
#define PAYLOAD 100u		/* the segment's TCP payload: 120 bytes with its header */
#define STEPS_MAX 16u
#define FAR_FUTURE_MS (1ull << 40)

enum op {
	END,			/* the row's last step */
	ADD,			/* one fragment (repeat: that many, the id counting up) */
	EXPIRE,			/* fc_frag_expire at now_ms, n datagrams must go */
};

struct step {
	enum op op;
	uint32_t off, len;	/* the fragment's bytes of the segment (IPv4: after the IP
				   header; IPv6: after the headers before the Fragment header) */
	bool more;		/* MF, M */
	uint16_t id;		/* 0: 1 */
	uint8_t fill;		/* not 0: every byte of the fragment this one */
	uint8_t ecn;		/* the ECN bits its header carries */
	bool bad_csum;		/* IPv4: a header checksum off by one */
	uint8_t nh;		/* IPv6: the Fragment header's next header; 0: TCP */
	bool whole_frame;	/* the segment not cut: not a fragment */
	bool big;		/* WHOLE: 65535 bytes, the segment's header and payload first */
	unsigned int repeat;	/* ADD: 0 or 1 once */
	uint64_t now_ms;
	enum fc_frag_result want;	/* ADD */
	unsigned int n;		/* frames given back (ADD), datagrams expired (EXPIRE) */
};

struct row {
	const char *name;
	int family;
	bool destopts;		/* IPv6: a destination options header before the Fragment header */
	struct fc_frag_params params;
	struct step s[STEPS_MAX];
	struct fc_frag_stats want;	/* every counter; held and bytes at the end */
};

/* The segment as one IP packet: IPv4 with DF clear, IPv6 with destination options if asked. */
struct packet {
	uint8_t b[2048];
	uint32_t len;
	uint32_t unfrag;	/* its bytes before the fragmentable part */
	uint8_t eth[ETH];
};

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void
wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
ip4_csum(uint8_t *h)
{
	uint32_t s = 0;

	wr16(h + 10, 0);
	for (unsigned int i = 0; i < 20; i += 2)
		s += be16(h + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	wr16(h + 10, (uint16_t)~s);
}

static void
segment(const struct row *r, uint16_t id, struct packet *o)
{
	struct fc_frame_spec s = { .payload = PAYLOAD, .seq = 123456789, .tcp_flags = 0x18 };
	uint8_t f[2048];
	size_t len;

	if (r->family == 4)
		fc_key4(&s.key, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 443);
	else
		fc_key6(&s.key, IPPROTO_TCP, "2001:2::10", 40000, "2001:2:0:1::10", 443);
	len = fc_frame_build(&s, f, sizeof(f));
	assert_true(len > ETH);
	memcpy(o->eth, f, ETH);
	memset(o->b, 0, sizeof(o->b));
	if (r->family == 4) {
		o->len = be16(f + ETH + 2);
		memcpy(o->b, f + ETH, o->len);
		wr16(o->b + 4, id);
		wr16(o->b + 6, 0);
		ip4_csum(o->b);
		o->unfrag = 20;
	} else if (!r->destopts) {
		o->len = 40u + be16(f + ETH + 4);
		memcpy(o->b, f + ETH, o->len);
		o->unfrag = 40;
	} else {
		/* 40, then 8 bytes of destination options (PadN), then TCP */
		o->len = 48u + be16(f + ETH + 4);
		memcpy(o->b, f + ETH, 40);
		o->b[6] = 60;
		wr16(o->b + 4, o->len - 40);
		o->b[40] = IPPROTO_TCP;
		o->b[42] = 1;	/* PadN of 4 bytes */
		o->b[43] = 4;
		memcpy(o->b + 48, f + ETH + 40, o->len - 48);
		o->unfrag = 48;
	}
}

/* The fragment of step s as a frame on the heap, exactly sized (padded to 60). */
static uint8_t *
fragment(const struct row *r, const struct step *s, uint16_t id, uint32_t *flen)
{
	struct packet o;
	uint32_t hl, len;
	uint8_t *f, *h;

	segment(r, id, &o);
	if (s->whole_frame) {
		len = ETH + o.len;
		f = malloc(len);
		assert_non_null(f);
		memcpy(f, o.eth, ETH);
		memcpy(f + ETH, o.b, o.len);
		*flen = len;
		return f;
	}
	hl = r->family == 4 ? 20 : o.unfrag + 8;
	len = ETH + hl + s->len;
	*flen = len < FRAME_MIN ? FRAME_MIN : len;
	f = calloc(1, *flen);
	assert_non_null(f);
	memcpy(f, o.eth, ETH);
	h = f + ETH;
	memcpy(h, o.b, o.unfrag);
	for (uint32_t i = 0; i < s->len; i++) {
		uint32_t at = s->off + i;

		h[hl + i] = s->fill ? s->fill
			    : o.unfrag + at < o.len ? o.b[o.unfrag + at] : (uint8_t)(at * 7);
	}
	if (r->family == 4) {
		wr16(h + 2, hl + s->len);
		wr16(h + 6, (s->off >> 3) | (s->more ? 0x2000u : 0));
		h[1] |= s->ecn;
		ip4_csum(h);
		if (s->bad_csum)
			h[11] ^= 1;
	} else {
		uint8_t *fh = h + o.unfrag;

		h[r->destopts ? 40 : 6] = 44;
		wr16(h + 4, hl - 40 + s->len);
		h[1] |= (uint8_t)(s->ecn << 4);
		fh[0] = s->nh ? s->nh : IPPROTO_TCP;
		fh[1] = 0;
		wr16(fh + 2, s->off | (s->more ? 1u : 0));
		fh[4] = fh[5] = 0;
		wr16(fh + 6, id);
	}
	return f;
}

/* A whole packet: the segment again, byte for byte, and read by fc_seg_ip as it. */
static void
check_whole(const struct row *r, const struct step *s, uint16_t id, const struct fc_frag_datagram *d)
{
	struct packet o;
	struct fc_seg g;

	segment(r, id, &o);
	assert_non_null(d->ip);
	if (s->big) {
		/* the segment's header and payload, then every byte at x of it (x * 7) */
		assert_int_equal(d->len, 65535);
		assert_int_equal(be16(d->ip + 2), 65535);
		assert_memory_equal(d->ip + 20, o.b + 20, o.len - 20);
		assert_int_equal(d->ip[65534], (uint8_t)(65514 * 7));
	} else {
		if (r->family == 4 && s->ecn != 0) {
			o.b[1] |= 3;	/* the rows with ECN end on a CE fragment: CE on the packet */
			ip4_csum(o.b);
		}
		assert_int_equal(d->len, o.len);
		assert_memory_equal(d->ip, o.b, o.len);
	}
	assert_int_equal(fc_seg_ip(d->ip, d->len, &g), FC_SEG_OK);
	assert_int_equal(g.proto, IPPROTO_TCP);
	assert_int_equal(g.seq, 123456789);
	assert_int_equal(g.poff, o.unfrag + 20);
	assert_int_equal(g.plen, s->big ? 65535 - 40 : PAYLOAD);
	assert_true(g.whole);
	for (unsigned int i = 0; i < PAYLOAD; i++)
		assert_int_equal(d->ip[g.poff + i], (uint8_t)i);	/* fc_frame's counting pattern */
}

struct expired {
	unsigned int datagrams, frames;
};

static void
on_expired(void *arg, const struct fc_frag_datagram *d)
{
	struct expired *e = arg;

	assert_null(d->ip);
	assert_true(d->n > 0);
	for (unsigned int i = 0; i < d->n; i++)
		assert_non_null(d->pieces[i].frame);
	e->datagrams++;
	e->frames += d->n;
}

static void
run_row(const struct row *r)
{
	struct fc_frag *fr = fc_frag_open(&r->params);
	struct fc_frag_stats st;
	uint32_t tag = 0;

	assert_non_null(fr);
	for (const struct step *s = r->s; s->op != END; s++) {
		if (s->op == EXPIRE) {
			struct expired e = { 0 };

			assert_int_equal(fc_frag_expire(fr, s->now_ms, on_expired, &e), s->n);
			assert_int_equal(e.datagrams, s->n);
			continue;
		}
		for (unsigned int k = 0; k < (s->repeat ? s->repeat : 1); k++) {
			uint16_t id = (uint16_t)((s->id ? s->id : 1) + k);
			struct fc_frag_datagram d;
			uint32_t len;
			uint8_t *f = fragment(r, s, id, &len);
			enum fc_frag_result res = fc_frag_add(fr, f, len, ETH, tag++, s->now_ms, &d);

			free(f);	/* kept as a copy: the frames given back outlive it */
			if (res != s->want)
				fail_msg("%s: step %td (id %u): result %d, want %d", r->name,
					 s - r->s, id, res, s->want);
			assert_int_equal(d.n, s->n);
			for (unsigned int i = 1; i < d.n; i++)	/* arrival order */
				assert_true(d.pieces[i].tag > d.pieces[i - 1].tag);
			if (res == FC_FRAG_WHOLE)
				check_whole(r, s, id, &d);
			else
				assert_null(d.ip);
		}
	}
	fc_frag_stats(fr, &st);
	assert_int_equal(st.held, r->want.held);
	assert_true((st.held == 0) == (st.bytes == 0));
	st.bytes = r->want.bytes;
	if (memcmp(&st, &r->want, sizeof(st)) != 0)
		fail_msg("%s: counters: whole %ju overlap %ju oversize %ju other %ju dup %ju "
			 "restarted %ju expired %ju full %ju malformed %ju headers %ju unaligned %ju "
			 "too_long %ju", r->name, (uintmax_t)st.whole,
			 (uintmax_t)st.discarded_overlap, (uintmax_t)st.discarded_oversize,
			 (uintmax_t)st.discarded_other, (uintmax_t)st.duplicate,
			 (uintmax_t)st.restarted, (uintmax_t)st.expired, (uintmax_t)st.refused_full,
			 (uintmax_t)st.refused_malformed, (uintmax_t)st.refused_headers,
			 (uintmax_t)st.refused_unaligned, (uintmax_t)st.refused_too_long);
	fc_frag_expire(fr, FAR_FUTURE_MS, NULL, NULL);
	fc_frag_stats(fr, &st);
	assert_int_equal(st.held, 0);
	assert_int_equal(st.bytes, 0);
	fc_frag_close(fr);
}

/* Fragments: the segment's 120 bytes as 24 + 24 + 72, or as IPv4 cuts them at 8 bytes. */
#define F0 .op = ADD, .off = 0, .len = 24, .more = true
#define F1 .op = ADD, .off = 24, .len = 24, .more = true
#define F2 .op = ADD, .off = 48, .len = 72, .more = false

static const struct row rows[] = {
	{ "v4 in order", 4, .s = {
		{ F0, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ F2, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1 } },
	{ "v4 reversed", 4, .s = {
		{ F2, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ F0, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1 } },
	{ "v4 two datagrams interleaved", 4, .s = {
		{ F0, .id = 1, .want = FC_FRAG_HELD }, { F0, .id = 2, .want = FC_FRAG_HELD },
		{ F2, .id = 2, .want = FC_FRAG_HELD }, { F1, .id = 1, .want = FC_FRAG_HELD },
		{ F1, .id = 2, .want = FC_FRAG_WHOLE, .n = 3 },
		{ F2, .id = 1, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 2 } },
	{ "v4 exact duplicate dropped, datagram kept", 4, .s = {
		{ F0, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ F1, .fill = 0xee, .want = FC_FRAG_DUPLICATE },
		{ F2, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1, .duplicate = 1 } },
	/* in order, 0-24 and 24-48 are one run: 8-40 lies inside it (inet_frag_queue_insert) */
	{ "v4 inside a run of two: a duplicate", 4, .s = {
		{ F0, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 8, .len = 32, .more = true, .fill = 0xee,
		  .want = FC_FRAG_DUPLICATE },
		{ F2, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1, .duplicate = 1 } },
	/* reversed, they are two runs: the same 8-40 overlaps */
	{ "v4 across two runs: an overlap", 4, .s = {
		{ F1, .want = FC_FRAG_HELD }, { F0, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 8, .len = 32, .more = true, .fill = 0xee,
		  .want = FC_FRAG_DISCARDED, .n = 3 },
		{ F2, .want = FC_FRAG_HELD } },
	  .want = { .held = 1, .discarded_overlap = 1 } },
	{ "v4 overlap discards the datagram", 4, .s = {
		{ F0, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 16, .len = 32, .more = true, .fill = 0xee,
		  .want = FC_FRAG_DISCARDED, .n = 2 },
		{ F2, .want = FC_FRAG_HELD } },
	  .want = { .held = 1, .discarded_overlap = 1 } },
	{ "v4 two last fragments that disagree", 4, .s = {
		{ F0, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 48, .len = 72, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 48, .len = 80, .want = FC_FRAG_DISCARDED, .n = 3 } },
	  .want = { .discarded_other = 1 } },
	/* ip_frag_queue trims a non-last IPv4 fragment of 20 bytes to 16 */
	{ "v4 non-last not a multiple of 8: trimmed", 4, .s = {
		{ .op = ADD, .off = 0, .len = 20, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 16, .len = 104, .want = FC_FRAG_WHOLE, .n = 2 } },
	  .want = { .whole = 1 } },
	{ "v4 non-last of 7 bytes: empty once trimmed, discarded", 4, .s = {
		{ F2, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 0, .len = 7, .more = true, .want = FC_FRAG_DISCARDED, .n = 2 } },
	  .want = { .discarded_other = 1 } },
	{ "v4 past 65535 bytes: discarded once all there", 4, .s = {
		{ .op = ADD, .off = 0, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 8000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 16000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 24000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 32000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 40000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 48000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 56000, .len = 8000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 64000, .len = 1520, .want = FC_FRAG_DISCARDED, .n = 9 } },
	  .want = { .discarded_oversize = 1 } },
	{ "v4 at exactly 65535 bytes: whole", 4, .s = {
		{ .op = ADD, .off = 64000, .len = 1515, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 0, .len = 32000, .more = true, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 32000, .len = 32000, .more = true, .want = FC_FRAG_WHOLE,
		  .n = 3, .big = true } },
	  .want = { .whole = 1 } },
	{ "v4 ECN-capable mixed with not: discarded", 4, .s = {
		{ F0, .ecn = 2, .want = FC_FRAG_HELD }, { F1, .ecn = 2, .want = FC_FRAG_HELD },
		{ F2, .ecn = 0, .want = FC_FRAG_DISCARDED, .n = 3 } },
	  .want = { .discarded_other = 1 } },
	{ "v4 CE on one fragment: CE on the packet", 4, .s = {
		{ F0, .ecn = 2, .want = FC_FRAG_HELD }, { F1, .ecn = 2, .want = FC_FRAG_HELD },
		{ F2, .ecn = 3, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1 } },
	{ "v4 not a fragment, a bad checksum", 4, .s = {
		{ .op = ADD, .whole_frame = true, .want = FC_FRAG_NOT_FRAGMENT },
		{ .op = ADD, .off = 0, .len = 120, .want = FC_FRAG_NOT_FRAGMENT },
		{ F0, .bad_csum = true, .want = FC_FRAG_REFUSED } },
	  .want = { .refused_malformed = 1 } },
	{ "v4 expiry on the clock of its first fragment", 4, .s = {
		{ F0, .now_ms = 0, .want = FC_FRAG_HELD },
		{ F1, .now_ms = 900, .want = FC_FRAG_HELD },
		{ .op = EXPIRE, .now_ms = 999, .n = 0 },
		{ .op = EXPIRE, .now_ms = 1000, .n = 1 },
		{ F2, .now_ms = 1001, .want = FC_FRAG_HELD },
		{ .op = EXPIRE, .now_ms = 2000, .n = 0 },
		{ .op = EXPIRE, .now_ms = 2001, .n = 1 } },
	  .want = { .expired = 2 } },
	{ "v4 bounds: max_datagrams", 4, .params = { .max_datagrams = 2 }, .s = {
		{ F0, .id = 1, .want = FC_FRAG_HELD }, { F0, .id = 2, .want = FC_FRAG_HELD },
		{ F0, .id = 3, .want = FC_FRAG_REFUSED },
		{ F1, .id = 1, .want = FC_FRAG_HELD }, { F2, .id = 1, .want = FC_FRAG_WHOLE, .n = 3 },
		{ F0, .id = 3, .want = FC_FRAG_HELD } },
	  .want = { .held = 2, .whole = 1, .refused_full = 1 } },
	/* frames of 60 bytes (58 padded), 124 each with their records */
	{ "v4 bounds: max_bytes, a held datagram's fragment too", 4,
	  .params = { .max_bytes = 250 }, .s = {
		{ F0, .id = 1, .want = FC_FRAG_HELD }, { F0, .id = 2, .want = FC_FRAG_HELD },
		{ F0, .id = 3, .want = FC_FRAG_REFUSED }, { F1, .id = 1, .want = FC_FRAG_REFUSED } },
	  .want = { .held = 2, .refused_full = 2 } },
	/* ip_frag_too_far: 63 fragments of its source between two of its own are not too
	   many, 64 are: the datagram starts again from the fragment after them */
	{ "v4 64 fragments of its source between: started again", 4,
	  .params = { .max_datagrams = 256 }, .s = {
		{ F0, .id = 1, .fill = 0xee, .want = FC_FRAG_HELD },	/* let go: not in the packet */
		{ F0, .id = 100, .repeat = 63, .want = FC_FRAG_HELD },
		{ F1, .id = 1, .want = FC_FRAG_HELD },
		{ F0, .id = 200, .repeat = 64, .want = FC_FRAG_HELD },
		{ F2, .id = 1, .want = FC_FRAG_RESTARTED, .n = 2 },
		{ F0, .id = 1, .want = FC_FRAG_HELD },
		{ F1, .id = 1, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .held = 127, .whole = 1, .restarted = 1 } },
	{ "v4 64 fragments of its source between, then an empty one: all discarded", 4,
	  .params = { .max_datagrams = 256 }, .s = {
		{ F0, .id = 1, .want = FC_FRAG_HELD },
		{ F0, .id = 200, .repeat = 64, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 0, .len = 7, .more = true, .id = 1, .want = FC_FRAG_DISCARDED,
		  .n = 2 } },
	  .want = { .held = 64, .discarded_other = 1 } },
	{ "v6 in order, destination options before the Fragment header", 6, .destopts = true,
	  .s = {
		{ F0, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ F2, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 1 } },
	{ "v6 reversed, interleaved", 6, .s = {
		{ F2, .id = 7, .want = FC_FRAG_HELD }, { F1, .id = 8, .want = FC_FRAG_HELD },
		{ F1, .id = 7, .want = FC_FRAG_HELD }, { F0, .id = 8, .want = FC_FRAG_HELD },
		{ F0, .id = 7, .want = FC_FRAG_WHOLE, .n = 3 },
		{ F2, .id = 8, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 2 } },
	{ "v6 exact duplicate, then an overlap", 6, .s = {
		{ F0, .want = FC_FRAG_HELD }, { F0, .fill = 0xee, .want = FC_FRAG_DUPLICATE },
		{ .op = ADD, .off = 16, .len = 16, .more = true, .want = FC_FRAG_DISCARDED, .n = 2 } },
	  .want = { .duplicate = 1, .discarded_overlap = 1 } },
	/* RFC 7112: 8 bytes of a 20-byte TCP header; dropped alone, as Linux drops it */
	{ "v6 tiny first fragment", 6, .destopts = true, .s = {
		{ .op = ADD, .off = 0, .len = 8, .more = true, .want = FC_FRAG_REFUSED },
		{ .op = ADD, .off = 8, .len = 112, .want = FC_FRAG_HELD } },
	  .want = { .held = 1, .refused_headers = 1 } },
	/* the TCP header's first bytes read as an Authentication header of 264 bytes */
	{ "v6 first fragment whose AH runs past it", 6, .s = {
		{ F0, .nh = 51, .want = FC_FRAG_REFUSED } },
	  .want = { .refused_headers = 1 } },
	{ "v6 non-last not a multiple of 8, one ending past 65535", 6, .s = {
		{ .op = ADD, .off = 0, .len = 28, .more = true, .want = FC_FRAG_REFUSED },
		{ .op = ADD, .off = 65528, .len = 16, .want = FC_FRAG_REFUSED },
		{ F0, .want = FC_FRAG_HELD } },
	  .want = { .held = 1, .refused_unaligned = 1, .refused_too_long = 1 } },
	/* ipv6_frag_rcv drops a packet made whole that holds another Fragment header */
	{ "v6 a second Fragment header once whole: discarded", 6, .destopts = true, .s = {
		{ F0, .nh = 44, .want = FC_FRAG_HELD }, { F1, .want = FC_FRAG_HELD },
		{ F2, .want = FC_FRAG_DISCARDED, .n = 3 } },
	  .want = { .discarded_headers = 1 } },
	{ "v6 atomic fragment before a second Fragment header: refused", 6, .s = {
		{ .op = ADD, .off = 0, .len = 120, .nh = 44, .want = FC_FRAG_REFUSED } },
	  .want = { .refused_malformed = 1 } },
	{ "v6 atomic fragment: whole at once, held datagram untouched", 6, .destopts = true, .s = {
		{ F1, .want = FC_FRAG_HELD },
		{ .op = ADD, .off = 0, .len = 120, .want = FC_FRAG_WHOLE, .n = 1 },
		{ F0, .want = FC_FRAG_HELD }, { F2, .want = FC_FRAG_WHOLE, .n = 3 } },
	  .want = { .whole = 2 } },
};

static void
test_row(void **state)
{
	run_row(*state);
}

/* Parameters out of bounds are refused, a NULL reassembler closes. */
static void
test_open(void **state)
{
	struct fc_frag_params p = { .max_datagrams = FC_FRAG_DATAGRAMS_MAX + 1 };

	(void)state;
	assert_null(fc_frag_open(&p));
	p = (struct fc_frag_params){ .max_bytes = FC_FRAG_BYTES_MAX + 1 };
	assert_null(fc_frag_open(&p));
	fc_frag_close(NULL);
	fc_frag_close(fc_frag_open(NULL));
}

/* ---- the kernel's own reassembly ---------------------------------------------- */

#define KERNEL_SKIP 77		/* a child's exit: no namespace, no veth */
#define KERNEL_WAIT_MS 300	/* for a packet the row made whole */
#define KERNEL_QUIET_MS 100	/* for one it did not */
#define KERNEL_UP_TRIES 300	/* 10 ms apart: for the veth pair to carry frames */
#define KERNEL_UP_MS 10

static const char kernel_net[] =
	"ip link add fa type veth peer name fb"
	" && ip link set fa address 02:00:00:00:00:0a mtu 65000 up"
	" && ip link set fb address 02:00:00:00:00:0b mtu 65000 up"
	" && ip addr add 198.19.0.10/24 dev fb"
	" && ip -6 addr add 2001:2:0:1::10/64 dev fb nodad"
	" && sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.fb.rp_filter=0";

static bool
kernel_row_eligible(const struct row *r)
{
	if (r->want.refused_full != 0)
		return false;
	for (const struct step *s = r->s; s->op != END; s++)
		if (s->op != ADD || s->want == FC_FRAG_NOT_FRAGMENT)
			return false;
	return true;
}

/*
 * Until both ends of the veth pair run: before linkwatch brings a new one
 * up, its frames go to the noop qdisc and are dropped, while sendto says
 * they went.  0, or -1 when they never run.
 */
static int
kernel_link_up(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	for (int i = 0; fd >= 0 && i < KERNEL_UP_TRIES; i++) {
		struct ifreq a = { .ifr_name = "fa" }, b = { .ifr_name = "fb" };

		if (ioctl(fd, SIOCGIFFLAGS, &a) == 0 && ioctl(fd, SIOCGIFFLAGS, &b) == 0 &&
		    (a.ifr_flags & IFF_RUNNING) && (b.ifr_flags & IFF_RUNNING)) {
			close(fd);
			usleep(2 * KERNEL_UP_MS * 1000);	/* the qdisc follows the flag */
			return 0;
		}
		usleep(KERNEL_UP_MS * 1000);
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/*
 * In a child, in a namespace of its own: row r's frames sent through fa,
 * read at fb by a raw socket (IPv4: from the IP header; IPv6: from the
 * TCP header), held against what fc_frag made whole.  The child's exit: 0
 * the same, 1 not (said on stderr), KERNEL_SKIP.
 */
static int
kernel_row(const struct row *r)
{
	static uint8_t want[4][65536], got[65536];
	uint32_t wlen[4], nwant = 0, tag = 0;
	struct fc_frag *fr = fc_frag_open(&r->params);
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_halen = 6 };
	struct pollfd pfd = { .events = POLLIN };
	int tx;

	if (unshare(CLONE_NEWNET) != 0 || system(kernel_net) != 0)
		return KERNEL_SKIP;
	if (kernel_link_up() != 0) {
		fprintf(stderr, "%s: the veth pair never ran\n", r->name);
		return 1;
	}
	to.sll_ifindex = (int)if_nametoindex("fa");
	tx = socket(AF_PACKET, SOCK_RAW, 0);
	pfd.fd = socket(r->family == 4 ? AF_INET : AF_INET6, SOCK_RAW, IPPROTO_TCP);
	if (fr == NULL || to.sll_ifindex == 0 || tx < 0 || pfd.fd < 0)
		return KERNEL_SKIP;
	for (const struct step *s = r->s; s->op != END; s++) {
		for (unsigned int k = 0; k < (s->repeat ? s->repeat : 1); k++) {
			uint16_t id = (uint16_t)((s->id ? s->id : 1) + k);
			static const uint8_t mac[12] = { 2, 0, 0, 0, 0, 0x0b, 2, 0, 0, 0, 0, 0x0a };
			struct fc_frag_datagram d;
			struct fc_seg g;
			uint32_t len;
			uint8_t *f = fragment(r, s, id, &len);

			memcpy(f, mac, sizeof(mac));
			if (sendto(tx, f, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
				fprintf(stderr, "%s: send: %s\n", r->name, strerror(errno));
				return 1;
			}
			if (fc_frag_add(fr, f, len, ETH, tag++, 0, &d) == FC_FRAG_WHOLE) {
				uint32_t from = 0;

				if (r->family == 6 && fc_seg_ip(d.ip, d.len, &g) == FC_SEG_OK)
					from = g.poff - 20;	/* the raw socket reads from TCP */
				if (nwant == 4)
					return 1;
				wlen[nwant] = d.len - from;
				memcpy(want[nwant++], d.ip + from, d.len - from);
			}
			free(f);
		}
	}
	for (uint32_t i = 0; i <= nwant; i++) {
		ssize_t n;

		if (poll(&pfd, 1, i < nwant ? KERNEL_WAIT_MS : KERNEL_QUIET_MS) != 1) {
			if (i == nwant)
				break;
			fprintf(stderr, "%s: the kernel made %u packets whole, fc_frag %u\n",
				r->name, i, nwant);
			return 1;
		}
		n = recv(pfd.fd, got, sizeof(got), 0);
		if (i == nwant) {
			fprintf(stderr, "%s: the kernel made more whole than fc_frag's %u\n", r->name,
				nwant);
			return 1;
		}
		if (n != (ssize_t)wlen[i] || memcmp(got, want[i], wlen[i]) != 0) {
			uint32_t at = 0;

			while (at < wlen[i] && (ssize_t)at < n && got[at] == want[i][at])
				at++;
			fprintf(stderr, "%s: packet %u: the kernel's (%zd bytes) is not fc_frag's (%u):"
				" byte %u\n", r->name, i, n, wlen[i], at);
			return 1;
		}
	}
	fc_frag_expire(fr, FAR_FUTURE_MS, NULL, NULL);
	fc_frag_close(fr);
	return 0;
}

static void
test_kernel(void **state)
{
	unsigned int rows_run = 0;

	(void)state;
	if (geteuid() != 0)
		skip();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int st;
		pid_t pid;

		if (!kernel_row_eligible(&rows[i]))
			continue;
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0)
			_exit(kernel_row(&rows[i]));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		if (WEXITSTATUS(st) == KERNEL_SKIP)
			skip();
		if (WEXITSTATUS(st) != 0)
			fail_msg("%s: the kernel's reassembly differs", rows[i].name);
		rows_run++;
	}
	print_message("%u rows held against the kernel's own reassembly\n", rows_run);
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0]) + 2];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[n++] = (struct CMUnitTest){ .name = rows[i].name, .test_func = test_row,
						  .initial_state = (void *)&rows[i] };
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_open);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_kernel);
	return _cmocka_run_group_tests("test_frag", tests, n, NULL, NULL);
}
