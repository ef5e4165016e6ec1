/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the IP fragment reassembler (inspect/fc_frag) that
 * flowcutd's inspector reads fragmented ClientHellos through.  The input
 * is a run of records, each a frame fed to one small reassembler (8
 * datagrams, 16 KiB, 100 ms):
 *
 *   +------+---------+----------------+
 *   | ctl  | len, BE | len bytes      |   (fewer when the input ends first)
 *   +------+---------+----------------+
 *   ctl bits 0-3: the clock steps 16 ms that many times first
 *       bit 4: an IPv4 header's checksum set right (so that the fuzzer
 *              gets past it)
 *       bit 5: fc_frag_expire first
 *       bit 6: the frame is a bare IP packet (no Ethernet header)
 *       bit 7: the frame fed 32 times (ip_frag_too_far counts 64)
 *
 * Each frame is an exactly-sized heap copy, freed once added.  Checks: no
 * crash, no read past a frame (ASan); each result's *out as the header
 * says; a whole packet is whole (IPv4: no fragment bits, its lengths and
 * checksum right; IPv6: its payload length) and fc_seg_ip does not read
 * it as a fragment; every frame kept comes back exactly once, as it was
 * given (whole, discarded, let go or expired, all expired at the end);
 * nothing is held after, and nothing leaks (LeakSanitizer).
 */
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_frag.h"
#include "fc_frame.h"
#include "fc_seg.h"
#include "fuzz.h"

#define RECORD_HDR 3u
#define REPEAT 32u
#define CLOCK_STEP_MS 16u
#define FUZZ_DATAGRAMS 8u
#define FUZZ_BYTES (16u << 10)
#define FUZZ_TIMEOUT_MS 100u
#define FAR_FUTURE_MS (1ull << 40)
#define ETH 14u

enum {
	CTL_CLOCK = 0x0f,
	CTL_CSUM = 0x10,
	CTL_EXPIRE = 0x20,
	CTL_BARE = 0x40,
	CTL_REPEAT = 0x80,
};

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_frag: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

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

static uint16_t
sum16(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0;

	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The frames fed, by tag, and which have come back. */
struct ledger {
	uint8_t **frame;
	uint32_t *len;
	bool *back;
	unsigned int n;
	unsigned int kept, returned;
};

/* The frames of a datagram given back: each one fed, unreturned, as it was fed. */
static void
returned(struct ledger *l, const struct fc_frag_datagram *d)
{
	if (d->n == 0 || d->pieces == NULL)
		die("a datagram given back without its frames");
	for (unsigned int i = 0; i < d->n; i++) {
		const struct fc_frag_piece *pc = &d->pieces[i];

		if (pc->tag >= l->n || l->back[pc->tag])
			die("a frame given back twice, or one never fed");
		if (i > 0 && pc->tag <= d->pieces[i - 1].tag)
			die("frames not in arrival order");
		if (pc->len != l->len[pc->tag] || memcmp(pc->frame, l->frame[pc->tag], pc->len) != 0)
			die("a frame given back changed");
		l->back[pc->tag] = true;
		l->returned++;
	}
}

static void
on_expired(void *arg, const struct fc_frag_datagram *d)
{
	if (d->ip != NULL)
		die("an expired datagram with a packet");
	returned(arg, d);
}

static void
check_whole(const struct fc_frag_datagram *d)
{
	struct fc_seg g;

	if (d->ip == NULL || d->len < 20 || d->len > FC_FRAG_PACKET_MAX)
		die("a whole packet missing or of an impossible length");
	if ((d->ip[0] >> 4) == 4) {
		uint32_t ihl = (uint32_t)(d->ip[0] & 0xf) * 4;

		if (be16(d->ip + 2) != d->len || (be16(d->ip + 6) & 0x3fff) || ihl > d->len ||
		    sum16(d->ip, ihl) != 0xffff)
			die("a whole IPv4 packet with fragment bits, a wrong length or checksum");
	} else if ((d->ip[0] >> 4) != 6 || d->len < 40 || 40u + be16(d->ip + 4) != d->len) {
		die("a whole IPv6 packet with a wrong payload length");
	}
	if (fc_seg_ip(d->ip, d->len, &g) == FC_SEG_FRAGMENT)
		die("a whole packet still a fragment");
}

static void
check(struct ledger *l, enum fc_frag_result r, const struct fc_frag_datagram *d)
{
	switch (r) {
	case FC_FRAG_WHOLE:
		check_whole(d);
		l->kept++;
		returned(l, d);
		if (!l->back[l->n - 1])
			die("a whole datagram without the frame that made it whole");
		break;
	case FC_FRAG_DISCARDED:
		if (d->ip != NULL)
			die("a discarded datagram with a packet");
		l->kept++;
		returned(l, d);
		if (!l->back[l->n - 1])
			die("a discarded datagram without the frame that discarded it");
		break;
	case FC_FRAG_RESTARTED:
		if (d->ip != NULL)
			die("a restarted datagram with a packet");
		l->kept++;
		returned(l, d);
		if (l->back[l->n - 1])
			die("the frame a datagram restarted from given back");
		break;
	case FC_FRAG_HELD:
		l->kept++;
		/* fall through */
	case FC_FRAG_NOT_FRAGMENT:
	case FC_FRAG_DUPLICATE:
	case FC_FRAG_REFUSED:
		if (d->ip != NULL || d->n != 0)
			die("a result that gives nothing back with something in *out");
		break;
	default:
		die("an answer the header does not name");
	}
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	struct fc_frag_params p = { .max_datagrams = FUZZ_DATAGRAMS, .max_bytes = FUZZ_BYTES,
				    .timeout_ms = FUZZ_TIMEOUT_MS };
	struct fc_frag *fr = fc_frag_open(&p);
	size_t most = (size / RECORD_HDR + 1) * REPEAT;
	struct ledger l = { .frame = calloc(most, sizeof(*l.frame)),
			    .len = calloc(most, sizeof(*l.len)), .back = calloc(most, sizeof(*l.back)) };
	struct fc_frag_stats st;
	uint64_t now = 0;
	size_t at = 0;

	if (fr == NULL || l.frame == NULL || l.len == NULL || l.back == NULL)
		die("out of memory");
	while (size - at >= RECORD_HDR) {
		uint8_t ctl = data[at];
		uint32_t len = be16(data + at + 1), ip;
		struct fc_frag_datagram d;
		uint8_t *f;
		int off;

		at += RECORD_HDR;
		if (len > size - at)
			len = (uint32_t)(size - at);
		if ((f = malloc(len ? len : 1)) == NULL)
			die("out of memory");
		memcpy(f, data + at, len);
		at += len;
		now += (uint64_t)(ctl & CTL_CLOCK) * CLOCK_STEP_MS;
		off = ctl & CTL_BARE ? 0 : fc_seg_ether(f, len);
		ip = off < 0 ? 0 : (uint32_t)off;
		if ((ctl & CTL_CSUM) && len >= ip + 20 && (f[ip] >> 4) == 4 &&
		    ip + (uint32_t)(f[ip] & 0xf) * 4 <= len) {
			wr16(f + ip + 10, 0);
			wr16(f + ip + 10, (uint16_t)~sum16(f + ip, (uint32_t)(f[ip] & 0xf) * 4));
		}
		if (ctl & CTL_EXPIRE)
			fc_frag_expire(fr, now, on_expired, &l);
		for (unsigned int k = 0; k < (ctl & CTL_REPEAT ? REPEAT : 1); k++) {
			/* the ledger keeps what was fed, to hold the copies against */
			if (k > 0) {
				if ((f = malloc(len ? len : 1)) == NULL)
					die("out of memory");
				memcpy(f, l.frame[l.n - 1], len);
			}
			l.frame[l.n] = f;
			l.len[l.n] = len;
			l.n++;
			check(&l, fc_frag_add(fr, f, len, ip, l.n - 1, now, &d), &d);
			fc_frag_stats(fr, &st);
			if (st.bytes > FUZZ_BYTES || st.held > FUZZ_DATAGRAMS)
				die("over a bound");
		}
	}
	fc_frag_expire(fr, FAR_FUTURE_MS, on_expired, &l);
	fc_frag_stats(fr, &st);
	if (st.held != 0 || st.bytes != 0)
		die("something held after everything expired");
	if (l.returned != l.kept)
		die("a frame kept and never given back");
	fc_frag_close(fr);
	for (unsigned int i = 0; i < l.n; i++)
		free(l.frame[i]);
	free(l.frame);
	free(l.len);
	free(l.back);
	return 0;
}

/* ---- seeds: fragments of a TCP segment fc_frame builds ----------------------- */

struct cut {
	uint16_t off, len;
	bool more;
	uint16_t id;
	uint8_t ctl;		/* added to the record's */
	uint8_t nh;		/* IPv6: the Fragment header's next header; 0: TCP */
};

/* One record: the fragment c of the segment of family (IPv6: with destination options). */
static size_t
record(int family, bool destopts, const struct cut *c, uint8_t ctl, uint8_t *out)
{
	struct fc_frame_spec s = { .payload = 100, .seq = 1000, .tcp_flags = 0x18 };
	uint8_t f[2048], *h = out + RECORD_HDR + ETH;
	uint32_t unfrag, hl, seglen;
	const uint8_t *seg;

	if (family == 4)
		fc_key4(&s.key, IPPROTO_TCP, "198.18.0.10", 40000, "198.19.0.10", 443);
	else
		fc_key6(&s.key, IPPROTO_TCP, "2001:2::10", 40000, "2001:2:0:1::10", 443);
	fc_frame_build(&s, f, sizeof(f));
	unfrag = family == 4 ? 20 : destopts ? 48 : 40;
	hl = family == 4 ? 20 : unfrag + 8;
	seg = f + ETH + (family == 4 ? 20 : 40);
	seglen = 120;
	memcpy(out + RECORD_HDR, f, ETH);
	memcpy(h, f + ETH, family == 4 ? 20 : 40);
	for (uint32_t i = 0; i < c->len; i++)
		h[hl + i] = c->off + i < seglen ? seg[c->off + i] : (uint8_t)i;
	if (family == 4) {
		wr16(h + 2, hl + c->len);
		wr16(h + 4, c->id);
		wr16(h + 6, (c->off >> 3) | (c->more ? 0x2000u : 0));
		wr16(h + 10, 0);
		wr16(h + 10, (uint16_t)~sum16(h, 20));
	} else {
		uint8_t *fh = h + unfrag;

		if (destopts) {
			h[6] = 60;
			memset(h + 40, 0, 8);
			h[40] = 44;
			h[42] = 1;	/* PadN */
			h[43] = 4;
		} else {
			h[6] = 44;
		}
		wr16(h + 4, hl - 40 + c->len);
		fh[0] = c->nh ? c->nh : IPPROTO_TCP;
		fh[1] = 0;
		wr16(fh + 2, c->off | (c->more ? 1u : 0));
		fh[4] = fh[5] = 0;
		wr16(fh + 6, c->id);
	}
	out[0] = ctl | c->ctl;
	wr16(out + 1, ETH + hl + c->len);
	return RECORD_HDR + ETH + hl + c->len;
}

int
fuzz_seeds(const char *dir)
{
	static const struct {
		int family;
		bool destopts;
		struct cut c[6];
		unsigned int n;
	} rows[] = {
		{ 4, false, { { 0, 24, true, 1, 0, 0 }, { 24, 24, true, 1, 0, 0 }, { 48, 72, false, 1, 0, 0 } }, 3 },
		{ 4, false, { { 48, 72, false, 1, 0, 0 }, { 0, 24, true, 2, 0, 0 }, { 24, 24, true, 1, 0, 0 },
			      { 0, 24, true, 1, 0, 0 }, { 48, 72, false, 2, 0, 0 }, { 24, 24, true, 2, 0, 0 } }, 6 },
		{ 4, false, { { 24, 24, true, 1, 0, 0 }, { 0, 24, true, 1, 0, 0 }, { 8, 32, true, 1, 0, 0 },
			      { 48, 72, false, 1, 0, 0 } }, 4 },
		{ 6, true, { { 0, 24, true, 7, 0, 0 }, { 24, 24, true, 7, 0, 0 }, { 48, 72, false, 7, 0, 0 } }, 3 },
		{ 6, false, { { 48, 72, false, 7, 0, 0 }, { 0, 8, true, 7, 0, 0 }, { 0, 24, true, 7, 0, 0 },
			      { 0, 24, true, 7, 0, 0 }, { 24, 24, true, 7, 0, 0 } }, 5 },
		{ 6, true, { { 24, 24, true, 7, 0, 0 }, { 0, 120, false, 8, 0, 0 } }, 2 },
		/* a second Fragment header: once whole, and after an atomic fragment */
		{ 6, true, { { 0, 24, true, 7, 0, 44 }, { 24, 24, true, 7, 0, 0 }, { 48, 72, false, 7, 0, 0 },
			     { 0, 120, false, 8, 0, 44 } }, 4 },
		/* 64 fragments of the source between two of a datagram's: it starts again */
		{ 4, false, { { 0, 24, true, 1, 0, 0 }, { 0, 24, true, 2, CTL_REPEAT, 0 },
			      { 0, 24, true, 2, CTL_REPEAT, 0 }, { 24, 24, true, 1, 0, 0 },
			      { 0, 24, true, 1, 0, 0 }, { 48, 72, false, 1, 0, 0 } }, 6 },
	};
	uint8_t buf[4096];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t len = 0;

		for (unsigned int k = 0; k < rows[i].n; k++)
			len += record(rows[i].family, rows[i].destopts, &rows[i].c[k],
				      (uint8_t)(k == rows[i].n - 1 ? CTL_EXPIRE | 3 : 1), buf + len);
		if (fuzz_seed_put(dir, i, buf, len) != 0)
			return -1;
	}
	return 0;
}
