/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect, the inspector, on frames built here: what it holds, what it
 * hands on (byte for byte the frames it was given, in sequence order,
 * once each), what it drops, and the decisions it queues - for a hello in
 * one segment, on the host path before the offload and flagged INSPECT
 * after; a post-quantum hello over two segments out of order; a JA4 and a
 * JA3 listed (cut: nothing goes on, the retransmissions and the server's
 * frames are dropped); bytes that are no ClientHello; a hello too big, or
 * not whole within the deadline on a virtual clock; a client that closes
 * first; the cap on connections being read; retransmissions of held
 * bytes; IPv6 behind a VLAN tag; connections whose SYN it never saw;
 * ports other than the TLS ports; entries forgotten in time; QUIC: the
 * RFC 9001 A.2 client Initial in a datagram, cut when its JA4 ('q') is
 * listed, handed on whole when not, and UDP that is no Initial passed.  The
 * expected fingerprints come from fc_tls and fc_ja on the whole hello.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <flowcut/fc_defs.h>

#include "fc_fplist.h"
#include "fc_frame.h"
#include "fc_hello.h"
#include "fc_hex.h"
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_quicvec.h"
#include "fc_tls.h"
#include "fd_inspect.h"
#include "fi_parse.h"

#define ISN 1000u		/* the client's initial sequence number */
#define SISN 4999u		/* the server's */

/* What out() was given, in order. */
struct sent {
	uint16_t port;
	uint32_t len;
	uint8_t frame[2048];
};
static struct sent sent[256];
static unsigned int nsent;

static void
out(void *octx, uint16_t port, const uint8_t *frame, uint32_t len)
{
	(void)octx;
	assert_true(nsent < 256 && len <= sizeof(sent[0].frame));
	sent[nsent].port = port;
	sent[nsent].len = len;
	memcpy(sent[nsent].frame, frame, len);
	nsent++;
}

struct fr {
	uint8_t b[2048];
	uint32_t len;
	bool reply;		/* the server's: it comes up on port 1, the client's on 0 */
};

static struct fc_key ckey;	/* the client's direction */
static uint16_t vlan;
static uint8_t ttl;		/* the next frames' TTL (0: 64) */

static void
use4(uint16_t sport, uint16_t dport)
{
	fc_key4(&ckey, IPPROTO_TCP, "198.18.0.2", sport, "198.18.1.2", dport);
	vlan = 0;
}

/* A TCP frame of the client's (or the server's, `reply`) with payload p[0..n). */
static void
mk(struct fr *f, bool reply, uint8_t flags, uint32_t seq, const uint8_t *p, uint32_t n)
{
	struct fc_frame_spec s = { .dmac = { 2, 0xfc, 0, 0, 0, 1 }, .smac = { 2, 0, 0, 0, 0, 2 },
				   .vlan = vlan, .key = ckey, .ttl = ttl, .tcp_flags = flags,
				   .seq = seq, .ack = reply ? ISN + 1 : SISN + 1, .win = 502,
				   .payload = (uint16_t)n };
	uint32_t at = 14 + (vlan ? 4 : 0) + (ckey.family == 4 ? 20 : 40) +
		      (ckey.proto == IPPROTO_UDP ? 8 : 20);

	if (reply) {
		memcpy(s.key.src, ckey.dst, 16);
		memcpy(s.key.dst, ckey.src, 16);
		s.key.sport = ckey.dport;
		s.key.dport = ckey.sport;
	}
	f->len = (uint32_t)fc_frame_build(&s, f->b, sizeof(f->b));
	f->reply = reply;
	assert_true(f->len > 0);
	if (n)
		memcpy(f->b + at, p, n);
	assert_int_equal(fc_frame_fix_l4(f->b, f->len), 0);	/* as its sender's stack sums it */
}

static struct fd_tuple
key_of(const struct fc_key *k)
{
	struct fd_tuple ik = { .sport = k->sport, .dport = k->dport, .family = k->family,
				     .proto = k->proto };

	memcpy(ik.src, k->src, k->family == 4 ? 4 : 16);
	memcpy(ik.dst, k->dst, k->family == 4 ? 4 : 16);
	return ik;
}

static uint8_t hello[1 << 15];
static size_t hello_len;
static char hello_ja4[FC_JA4_LEN + 1], hello_ja3[FC_JA3_MD5_LEN + 1];

/* The spec's hello (post-quantum: 1,216-byte key share), and its fingerprints read whole. */
static void
mk_hello(bool pq)
{
	struct fc_hello_spec s;
	static struct fc_tls_hello h;
	static char str[FC_JA_STR_MAX];

	fc_hello_chrome(&s, pq ? 0x11ec : 0x001d, pq ? 1216 : 32);
	hello_len = fc_hello_build(&s, hello, sizeof(hello), NULL);
	assert_true(hello_len > 0);
	fc_tls_init(&h);
	assert_int_equal(fc_tls_feed(&h, hello, hello_len, NULL), 0);
	assert_int_equal(fc_ja4(&h, 't', hello_ja4, NULL, 0), 0);
	assert_true(fc_ja3(&h, str, sizeof(str), hello_ja3) > 0);
}

static struct fd_inspect *
open_with(const char *watched, unsigned int max_conns)
{
	static const uint16_t ports[] = { 443, 465, 853, 993, 995, 8443 };
	struct fd_inspect_params p = { .max_conns = max_conns };
	struct fd_inspect *in = fd_inspect_open(&p);
	struct fc_fplist l = { 0 };

	assert_non_null(in);
	fd_inspect_ports(in, ports, 6);
	if (watched != NULL)
		assert_int_equal(fc_fplist_parse(watched, strlen(watched), &l, NULL, NULL), 0);
	fd_inspect_watch(in, &l);
	assert_int_equal(l.n, 0);	/* taken over */
	nsent = 0;
	return in;
}

static int
give(struct fd_inspect *in, const struct fr *f, bool flagged, uint64_t now)
{
	return fd_inspect_frame(in, f->reply ? 1 : 0, flagged, f->b, f->len, now, out, NULL);
}

static void
assert_sent(unsigned int i, const struct fr *f)
{
	assert_true(i < nsent);
	assert_int_equal(sent[i].len, f->len);
	assert_memory_equal(sent[i].frame, f->b, f->len);
}

static struct fd_inspect_stats
stats(struct fd_inspect *in)
{
	struct fd_inspect_stats st;

	fd_inspect_stats(in, &st);
	return st;
}

/* The handshake on the host path: the SYN (remembered) and the ACK go on. */
static void
handshake(struct fd_inspect *in, uint64_t now)
{
	unsigned int n0 = nsent;
	struct fr f;

	mk(&f, false, 0x02, ISN, NULL, 0);		/* SYN */
	assert_int_equal(give(in, &f, false, now), 0);
	mk(&f, true, 0x12, SISN, NULL, 0);		/* SYN-ACK */
	assert_int_equal(give(in, &f, false, now), 0);
	mk(&f, false, 0x10, ISN + 1, NULL, 0);		/* ACK */
	assert_int_equal(give(in, &f, false, now), 0);
	assert_int_equal(nsent, n0);
}

/* A hello in one segment, passed: on the host path (before the offload) and flagged (after). */
static void
test_pass_one_segment(void **state)
{
	struct fd_inspect_decision d;
	struct fd_tuple k;
	struct fr f, data;

	(void)state;
	mk_hello(false);
	for (int flagged = 0; flagged < 2; flagged++) {
		struct fd_inspect *in = open_with("e7d705a3286e19ea42f587b344ee6865\n", 0);

		use4(40000 + (uint16_t)flagged, 443);
		k = key_of(&ckey);
		handshake(in, 0);
		assert_int_equal(fd_inspect_verdict(in, &k), FC_VERDICT_SEND_TO_IPS);
		mk(&f, false, 0x18, ISN + 1, hello, (uint32_t)hello_len);
		/* taken, and handed on at once: the hello is whole and not listed */
		assert_int_equal(give(in, &f, flagged, 10), 1);
		assert_int_equal(nsent, 1);
		assert_sent(0, &f);
		assert_int_equal(fd_inspect_take(in, &d), 1);
		assert_false(d.cut);
		assert_int_equal(d.why, FD_INSPECT_NOT_LISTED);
		assert_memory_equal(&d.key, &k, sizeof(k));
		assert_string_equal(d.ja4, hello_ja4);
		assert_string_equal(d.ja3, hello_ja3);
		assert_string_equal(d.sni, "www.example.com");
		assert_int_equal(fd_inspect_take(in, &d), 0);
		/* an offload now is made CUT_THRU at once */
		assert_int_equal(fd_inspect_verdict(in, &k), FC_VERDICT_CUT_THRU);
		/* later frames both ways are the caller's */
		mk(&data, false, 0x10, ISN + 1 + (uint32_t)hello_len, NULL, 0);
		assert_int_equal(give(in, &data, flagged, 20), 0);
		mk(&data, true, 0x18, 5000, hello, 100);
		assert_int_equal(give(in, &data, flagged, 20), 0);
		assert_int_equal(nsent, 1);
		assert_int_equal(stats(in).why[FD_INSPECT_NOT_LISTED], 1);
		assert_int_equal(stats(in).hellos, 1);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_HELD], 1);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_RELEASED], 1);
		assert_int_equal(stats(in).reading, 0);
		fd_inspect_close(in);
	}
}

/* A post-quantum hello over two segments, the second first: both held, then both on in order. */
static void
test_two_segments_out_of_order(void **state)
{
	struct fd_inspect *in;
	struct fd_inspect_decision d;
	struct fr a, b;
	uint32_t cut_at = 1448;

	(void)state;
	mk_hello(true);
	assert_true(hello_len > cut_at);
	in = open_with("# nothing of this client's\n", 0);
	use4(40001, 443);
	handshake(in, 0);
	mk(&a, false, 0x10, ISN + 1, hello, cut_at);
	mk(&b, false, 0x18, ISN + 1 + cut_at, hello + cut_at, (uint32_t)hello_len - cut_at);
	assert_int_equal(give(in, &b, true, 5), 1);
	assert_int_equal(nsent, 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	assert_int_equal(stats(in).reading, 1);
	/* the second again (a retransmission): dropped, the first copy goes on */
	assert_int_equal(give(in, &b, true, 6), 1);
	assert_int_equal(stats(in).frames[FD_INSPECT_F_DUP], 1);
	assert_int_equal(give(in, &a, false, 7), 1);
	assert_int_equal(nsent, 2);
	assert_sent(0, &a);
	assert_sent(1, &b);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_false(d.cut);
	assert_string_equal(d.ja4, hello_ja4);
	assert_string_equal(d.ja3, hello_ja3);
	/* the first again, after the decision: the caller's */
	assert_int_equal(give(in, &a, true, 8), 0);
	assert_int_equal(nsent, 2);
	fd_inspect_close(in);
}

/* A JA4 or a JA3 listed: nothing goes on, and nothing more of the connection either way. */
static void
test_cut(void **state)
{
	char list[256];

	(void)state;
	mk_hello(true);
	for (int by_ja3 = 0; by_ja3 < 2; by_ja3++) {
		struct fd_inspect *in;
		struct fd_inspect_decision d;
		struct fd_tuple k;
		struct fr a, b, fin, srv;

		snprintf(list, sizeof(list), "# listed\n0123456789abcdef0123456789abcdef\n%s\n",
			 by_ja3 ? hello_ja3 : hello_ja4);
		in = open_with(list, 0);
		use4(40010 + (uint16_t)by_ja3, 8443);
		k = key_of(&ckey);
		handshake(in, 0);
		mk(&a, false, 0x10, ISN + 1, hello, 1000);
		mk(&b, false, 0x18, ISN + 1001, hello + 1000, (uint32_t)hello_len - 1000);
		assert_int_equal(give(in, &a, false, 1), 1);
		assert_int_equal(give(in, &b, true, 2), 1);
		assert_int_equal(nsent, 0);
		assert_int_equal(fd_inspect_take(in, &d), 1);
		assert_true(d.cut);
		assert_int_equal(d.why, by_ja3 ? FD_INSPECT_LISTED_JA3 : FD_INSPECT_LISTED_JA4);
		assert_int_equal(d.line, 3);
		assert_memory_equal(&d.key, &k, sizeof(k));
		assert_string_equal(d.ja4, hello_ja4);
		assert_string_equal(d.ja3, hello_ja3);
		/* a cut one is offloaded to be dropped: not CUT_THRU */
		assert_int_equal(fd_inspect_verdict(in, &k), FC_VERDICT_SEND_TO_IPS);
		/* the client's retransmissions, its FIN, the server's frames: dropped */
		assert_int_equal(give(in, &a, false, 200), 1);
		assert_int_equal(give(in, &b, true, 400), 1);
		mk(&fin, false, 0x11, ISN + 1 + (uint32_t)hello_len, NULL, 0);
		assert_int_equal(give(in, &fin, false, 500), 1);
		mk(&srv, true, 0x10, 5000, NULL, 0);
		assert_int_equal(give(in, &srv, true, 500), 1);
		assert_int_equal(nsent, 0);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_DROPPED], 6);
		assert_int_equal(stats(in).why[by_ja3 ? FD_INSPECT_LISTED_JA3 : FD_INSPECT_LISTED_JA4], 1);
		/* remembered while its frames come, forgotten after 10 s without */
		fd_inspect_tick(in, 10000, out, NULL);
		assert_int_equal(stats(in).entries, 1);
		fd_inspect_tick(in, 10500, out, NULL);
		assert_int_equal(stats(in).entries, 0);
		assert_int_equal(give(in, &srv, true, 10600), 0);
		fd_inspect_close(in);
	}
}

/* First bytes that are no ClientHello: on at once, CUT_THRU; the same from the server's port is not read. */
static void
test_not_hello(void **state)
{
	static const uint8_t get[] = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	struct fd_inspect *in = open_with(NULL, 0);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	use4(40020, 993);
	handshake(in, 0);
	mk(&f, false, 0x18, ISN + 1, get, sizeof(get) - 1);
	assert_int_equal(give(in, &f, true, 1), 1);
	assert_int_equal(nsent, 1);
	assert_sent(0, &f);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_false(d.cut);
	assert_int_equal(d.why, FD_INSPECT_NOT_HELLO);
	assert_string_equal(d.ja4, "");
	assert_int_equal(stats(in).why[FD_INSPECT_NOT_HELLO], 1);
	/* not a TLS port: nothing remembered, nothing taken */
	use4(40021, 80);
	mk(&f, false, 0x02, ISN, NULL, 0);
	assert_int_equal(give(in, &f, false, 2), 0);
	mk(&f, false, 0x18, ISN + 1, get, sizeof(get) - 1);
	assert_int_equal(give(in, &f, true, 2), 0);
	assert_int_equal(stats(in).entries, 1);
	assert_int_equal(stats(in).frames[FD_INSPECT_F_PASSED], 1);
	fd_inspect_close(in);
}

/* A client segment at stream offset `off` with hello bytes [from, from + n) (flags: ACK, PSH). */
static void
cseg(struct fr *f, uint32_t off, uint32_t from, uint32_t n)
{
	mk(f, false, 0x18, ISN + 1 + off, hello + from, n);
}

/* The hello from `from` to its end in one segment. */
static void
crest(struct fr *f, uint32_t from)
{
	cseg(f, from, from, (uint32_t)hello_len - from);
}

/* The one decision queued: its why and whether it cuts. */
static void
assert_decided(struct fd_inspect *in, enum fd_inspect_why why, bool is_cut)
{
	struct fd_inspect_decision d;

	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_string_equal(fd_inspect_why_name((enum fd_inspect_why)d.why),
			    fd_inspect_why_name(why));
	assert_int_equal(d.cut, is_cut);
	assert_int_equal(fd_inspect_take(in, &d), 0);
}

static void
assert_undecided(struct fd_inspect *in)
{
	struct fd_inspect_decision d;

	assert_int_equal(fd_inspect_take(in, &d), 0);
	assert_int_equal(stats(in).reading + stats(in).entries > 0, true);
}

/* The hello listed by its JA4. */
static struct fd_inspect *
open_listed(void)
{
	char list[80];

	snprintf(list, sizeof(list), "%s\n", hello_ja4);
	return open_with(list, 0);
}

/*
 * The hold deadline (2 s from the first byte, a virtual clock): held
 * frames go on, but reading goes on; a listed hello completed later is
 * still cut, its last frame dropped - one byte, a pause of 3 s, the rest.
 * Not listed, it passes.  120 s without a whole hello: undecided (timeout).
 */
static void
test_deadline(void **state)
{
	struct fr f, g;

	(void)state;
	mk_hello(false);
	for (int listed = 0; listed < 2; listed++) {
		struct fd_inspect *in = listed ? open_listed() : open_with(NULL, 0);

		use4(40030, 443);
		handshake(in, 0);
		cseg(&f, 0, 0, 1);
		assert_int_equal(give(in, &f, false, 1000), 1);
		fd_inspect_tick(in, 2999, out, NULL);
		assert_int_equal(nsent, 0);
		fd_inspect_tick(in, 3000, out, NULL);
		assert_int_equal(nsent, 1);	/* the byte let go */
		assert_sent(0, &f);
		assert_undecided(in);
		crest(&g, 1);
		if (listed) {
			assert_int_equal(give(in, &g, false, 4000), 1);	/* dropped: the hello never whole there */
			assert_decided(in, FD_INSPECT_LISTED_JA4, true);
			assert_int_equal(nsent, 1);
		} else {
			assert_int_equal(give(in, &g, false, 4000), 0);	/* the caller's */
			assert_decided(in, FD_INSPECT_NOT_LISTED, false);
		}
		fd_inspect_close(in);
	}
	/* never whole: read_ms (120 s from its first byte) makes it undecided; passed by default */
	{
		struct fd_inspect *in = open_with(NULL, 0);

		use4(40031, 443);
		handshake(in, 0);
		cseg(&f, 0, 0, 100);
		assert_int_equal(give(in, &f, false, 1000), 1);
		fd_inspect_tick(in, 120999, out, NULL);
		assert_undecided(in);
		fd_inspect_tick(in, 121000, out, NULL);
		assert_decided(in, FD_INSPECT_TIMEOUT, false);
		assert_int_equal(stats(in).reading, 0);
		/* a SYN answered, no byte for 120 s: forgotten, its bytes then undecided */
		use4(40032, 443);
		handshake(in, 2000);
		fd_inspect_tick(in, 121999, out, NULL);
		assert_int_equal(stats(in).entries, 2);
		fd_inspect_tick(in, 122000, out, NULL);
		assert_int_equal(stats(in).entries, 1);	/* the one decided at 121000 lingers */
		cseg(&f, 0, 0, 100);
		assert_int_equal(give(in, &f, false, 123000), 0);
		assert_decided(in, FD_INSPECT_TIMEOUT, false);
		fd_inspect_close(in);
	}
}

/*
 * The setting: inspect_undecided = cut.  An undecided connection is cut,
 * its held frames dropped; counted apart.
 */
static void
test_undecided_cut(void **state)
{
	struct fd_inspect *in = open_with(NULL, 0);
	struct fr f;

	(void)state;
	mk_hello(false);
	fd_inspect_tune(in, 2000, 5000, true);
	use4(40033, 443);
	handshake(in, 0);
	cseg(&f, 0, 0, 100);
	assert_int_equal(give(in, &f, false, 10), 1);
	fd_inspect_tick(in, 2010, out, NULL);	/* let go, read on */
	assert_int_equal(nsent, 1);
	fd_inspect_tick(in, 5010, out, NULL);
	assert_decided(in, FD_INSPECT_TIMEOUT, true);
	assert_int_equal(stats(in).undecided_cut, 1);
	cseg(&f, 100, 100, 100);
	assert_int_equal(give(in, &f, false, 5020), 1);	/* dropped: cut */
	fd_inspect_close(in);
}

/*
 * Too big: a hello announcing more than the largest a server takes
 * (undecided); one cut into segments of 2 bytes, the last 256 first:
 * held, then all let go and read on, cut or passed when whole.
 */
static void
test_too_big(void **state)
{
	const uint32_t len = FC_TLS_HELLO_MAX - 3;	/* the message's body: one byte too many */
	const uint8_t big[] = { 22, 3, 1, 0, 4, 1, (uint8_t)(len >> 16), (uint8_t)(len >> 8),
				(uint8_t)len };
	struct fd_inspect *in = open_with(NULL, 0);
	struct fr f;

	(void)state;
	use4(40040, 443);
	handshake(in, 0);
	mk(&f, false, 0x18, ISN + 1, big, sizeof(big));
	assert_int_equal(give(in, &f, true, 1), 1);
	assert_int_equal(nsent, 1);
	assert_decided(in, FD_INSPECT_TOO_BIG, false);
	fd_inspect_close(in);
	mk_hello(true);
	assert_true(hello_len >= 400 * 2);
	for (int listed = 0; listed < 2; listed++) {
		uint32_t nseg = (uint32_t)(hello_len + 1) / 2;

		in = listed ? open_listed() : open_with(NULL, 0);
		use4(40041, 443);
		handshake(in, 10);
		for (uint32_t i = 0; i < nseg; i++) {
			uint32_t j = i < 256 ? nseg - 1 - i : i - 256;	/* the last 256 first */
			uint32_t n = j == nseg - 1 ? (uint32_t)hello_len - 2 * j : 2;
			int rc;

			cseg(&f, 2 * j, 2 * j, n);
			rc = give(in, &f, false, 11);
			if (i < 256)
				assert_int_equal(rc, 1);
			else if (i == nseg - 1 && listed)
				assert_int_equal(rc, 1);	/* the hello's last gap: dropped */
			else
				assert_int_equal(rc, 0);	/* read, and on at once */
		}
		assert_int_equal(nsent, 256);	/* the held ones, let go in sequence order */
		for (uint32_t i = 1; i < 256; i++) {
			const uint8_t *q = sent[i].frame + 14 + 20 + 4, *p = sent[i - 1].frame + 14 + 20 + 4;

			assert_true(((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | q[2] << 8 | q[3]) >
				    ((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | p[2] << 8 | p[3]));
		}
		assert_decided(in, listed ? FD_INSPECT_LISTED_JA4 : FD_INSPECT_NOT_LISTED, listed);
		fd_inspect_close(in);
	}
}

/* The client closes (FIN, RST in the window) before a whole hello: what was held goes on first. */
static void
test_closed(void **state)
{
	struct fd_inspect *in = open_with(NULL, 0);
	struct fd_inspect_decision d;
	struct fr f, fin;

	(void)state;
	mk_hello(false);
	use4(40050, 443);
	handshake(in, 0);
	cseg(&f, 0, 0, 50);
	assert_int_equal(give(in, &f, false, 1), 1);
	mk(&fin, false, 0x11, ISN + 51, NULL, 0);
	assert_int_equal(give(in, &fin, false, 2), 0);	/* the FIN is the caller's, after */
	assert_int_equal(nsent, 1);
	assert_sent(0, &f);
	assert_int_equal(fd_inspect_take(in, &d), 0);	/* nothing to set: it is over */
	/* bytes after the FIN: the server takes none of them */
	crest(&f, 50);
	assert_int_equal(give(in, &f, false, 3), 1);
	assert_int_equal(stats(in).frames[FD_INSPECT_F_AFTER_CLOSE], 1);
	/* a FIN with the last bytes: held, then on with the rest */
	use4(40051, 443);
	nsent = 0;
	handshake(in, 3);
	cseg(&f, 0, 0, 50);
	assert_int_equal(give(in, &f, false, 4), 1);
	mk(&fin, false, 0x19, ISN + 51, hello + 50, 50);
	assert_int_equal(give(in, &fin, false, 5), 1);
	assert_int_equal(nsent, 2);
	assert_sent(0, &f);
	assert_sent(1, &fin);
	/* an RST at the server's next byte: on; nothing more is read */
	use4(40052, 443);
	nsent = 0;
	handshake(in, 6);
	mk(&fin, false, 0x14, ISN + 1, NULL, 0);
	assert_int_equal(give(in, &fin, false, 7), 0);
	assert_int_equal(stats(in).why[FD_INSPECT_CLOSED], 3);
	fd_inspect_close(in);
}

/*
 * What the server never takes is not read, and the real hello after it
 * is (listed: cut): an RST, a bare FIN, a second SYN out of the window;
 * a decoy hello with a bad checksum, one whose TTL expires at the host or
 * is below the SYN's; a segment that does not ACK the server's SYN-ACK
 * (a spoofer's: it cannot know the server's ISN); bytes unlike those
 * read at their place.
 */
static void
test_not_the_servers(void **state)
{
	static const struct {
		const char *what;
		uint8_t flags;		/* the decoy's */
		int32_t seq;		/* its place from ISN + 1 */
		uint8_t ttl;		/* 0: 64 */
		bool bad_csum, bad_ack, other_bytes;
		enum fd_inspect_frame_cnt counted;
	} rows[] = {
		{ "an RST out of the window", 0x14, 100000, 0, false, false, false, FD_INSPECT_F_OUTSIDE },
		{ "a bare FIN out of the window", 0x11, 1 << 30, 0, false, false, false, FD_INSPECT_F_OUTSIDE },
		{ "a second SYN", 0x02, 7777, 0, false, false, false, FD_INSPECT_F_OUTSIDE },
		{ "a decoy with a bad checksum", 0x18, 0, 0, true, false, true, FD_INSPECT_F_BAD_CSUM },
		{ "a decoy that expires at the host", 0x18, 0, 1, false, false, true, FD_INSPECT_F_LOW_TTL },
		{ "a decoy with a TTL below the SYN's", 0x18, 0, 60, false, false, true, FD_INSPECT_F_LOW_TTL },
		{ "a decoy not acking the SYN-ACK", 0x18, 0, 0, false, true, true, FD_INSPECT_F_OUTSIDE },
	};
	static uint8_t other[4096];
	struct fr f;

	(void)state;
	mk_hello(false);
	memset(other, 'x', sizeof(other));
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct fd_inspect *in = open_listed();

		print_message("%s\n", rows[r].what);
		use4((uint16_t)(41000 + r), 443);
		handshake(in, 0);
		ttl = rows[r].ttl;
		mk(&f, false, rows[r].flags, ISN + 1 + (uint32_t)rows[r].seq,
		   rows[r].other_bytes ? other : NULL, rows[r].other_bytes ? (uint32_t)hello_len : 0);
		ttl = 0;
		if (rows[r].bad_csum)
			f.b[14 + 20 + 16] ^= 0x55;
		if (rows[r].bad_ack) {
			f.b[14 + 20 + 8] ^= 0x10;
			assert_int_equal(fc_frame_fix_l4(f.b, f.len), 0);
		}
		assert_int_equal(give(in, &f, true, 1), 1);	/* dropped */
		assert_int_equal(stats(in).frames[rows[r].counted], 1);
		assert_int_equal(nsent, 0);
		crest(&f, 0);
		assert_int_equal(give(in, &f, true, 2), 1);
		assert_decided(in, FD_INSPECT_LISTED_JA4, true);
		fd_inspect_close(in);
	}
	/* bytes unlike those read at their place: dropped, the first copy judged */
	{
		struct fd_inspect *in = open_listed();

		use4(41100, 443);
		handshake(in, 0);
		cseg(&f, 0, 0, 100);
		assert_int_equal(give(in, &f, true, 1), 1);
		mk(&f, false, 0x18, ISN + 1 + 50, other, 200);
		assert_int_equal(give(in, &f, true, 2), 1);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_CONFLICT], 1);
		crest(&f, 100);
		assert_int_equal(give(in, &f, true, 3), 1);
		assert_decided(in, FD_INSPECT_LISTED_JA4, true);
		fd_inspect_close(in);
	}
}

/*
 * No entry without the handshake: a spoofed segment from a tuple whose
 * SYN was never seen (or whose SYN-ACK never came, or acked no SYN of
 * the client's) carrying a listed hello makes no cut.  Flagged
 * INSPECT (an offloaded connection flowcutd never saw begin) it is
 * passed unread (not_seen); on the host path, it is the host's.
 */
static void
test_spoofed(void **state)
{
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	mk_hello(false);
	for (int flagged = 0; flagged < 2; flagged++) {
		struct fd_inspect *in = open_listed();

		use4(42000, 443);
		for (uint32_t seq = 0; seq < 4; seq++) {
			mk(&f, false, 0x18, seq * 0x40000000u, hello, (uint32_t)hello_len);
			assert_int_equal(give(in, &f, flagged, 1), 0);
		}
		if (flagged)
			assert_decided(in, FD_INSPECT_NOT_SEEN, false);
		else
			assert_int_equal(fd_inspect_take(in, &d), 0);
		/* a SYN, no SYN-ACK: a hello is not read */
		use4(42001, 443);
		mk(&f, false, 0x02, ISN, NULL, 0);
		assert_int_equal(give(in, &f, false, 2), 0);
		crest(&f, 0);
		assert_int_equal(give(in, &f, flagged, 3), 1);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_OUTSIDE], 1);
		/* a SYN-ACK that acks no SYN of the client's: not its server's */
		mk(&f, true, 0x12, SISN, NULL, 0);
		f.b[14 + 20 + 8 + 3] ^= 0x40;
		assert_int_equal(fc_frame_fix_l4(f.b, f.len), 0);
		assert_int_equal(give(in, &f, false, 4), 0);
		crest(&f, 0);
		assert_int_equal(give(in, &f, flagged, 5), 1);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_OUTSIDE], 2);
		assert_int_equal(fd_inspect_take(in, &d), 0);
		assert_int_equal(nsent, 0);
		/*
		 * one up the client's own port (a one-armed appliance) acking its
		 * SYN is its server's: read (another's connection is kept by its
		 * conntrack start, in fd_ips)
		 */
		mk(&f, true, 0x12, SISN, NULL, 0);
		assert_int_equal(fd_inspect_frame(in, 0, false, f.b, f.len, 6, out, NULL), 0);
		crest(&f, 0);
		assert_int_equal(give(in, &f, flagged, 7), 1);
		assert_decided(in, FD_INSPECT_LISTED_JA4, true);
		fd_inspect_close(in);
	}
}

/* An urgent byte before the hello: the server's stack takes it out; so does the inspector.  Two: undecided. */
static void
test_urgent(void **state)
{
	struct fr f;

	(void)state;
	mk_hello(false);
	for (int two = 0; two < 2; two++) {
		struct fd_inspect *in = open_listed();

		use4((uint16_t)(42100 + two), 443);
		handshake(in, 0);
		mk(&f, false, 0x38, ISN + 1, (const uint8_t *)"X", 1);	/* URG, ptr 1: byte 0 */
		f.b[14 + 20 + 19] = 1;
		assert_int_equal(fc_frame_fix_l4(f.b, f.len), 0);
		assert_int_equal(give(in, &f, false, 1), 1);
		if (two) {
			mk(&f, false, 0x38, ISN + 2, (const uint8_t *)"Y", 1);
			f.b[14 + 20 + 19] = 1;
			assert_int_equal(fc_frame_fix_l4(f.b, f.len), 0);
			assert_int_equal(give(in, &f, false, 2), 0);
			assert_decided(in, FD_INSPECT_URGENT, false);
		} else {
			mk(&f, false, 0x18, ISN + 2, hello, (uint32_t)hello_len);
			assert_int_equal(give(in, &f, false, 2), 1);
			assert_decided(in, FD_INSPECT_LISTED_JA4, true);
		}
		fd_inspect_close(in);
	}
}

/*
 * TCP Fast Open: a whole listed hello on the SYN: the SYN dropped, cut;
 * part of one: the SYN goes on, the rest read, cut; a SYN-ACK that does
 * not ack the SYN's bytes (no cookie): they are not the stream's, the
 * client sends them again.
 */
static void
test_fast_open(void **state)
{
	struct fd_inspect *in;
	struct fr f;

	(void)state;
	mk_hello(false);
	in = open_listed();
	use4(42200, 443);
	mk(&f, false, 0x02, ISN, hello, (uint32_t)hello_len);
	assert_int_equal(give(in, &f, false, 1), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	assert_int_equal(give(in, &f, false, 2), 1);	/* its retransmission too */
	/* part of it on the SYN, taken by the server */
	use4(42201, 443);
	mk(&f, false, 0x02, ISN, hello, 100);
	assert_int_equal(give(in, &f, false, 3), 0);
	mk(&f, true, 0x12, SISN, NULL, 0);
	f.b[14 + 20 + 8 + 2] = (uint8_t)((ISN + 101) >> 8);	/* ack ISN + 101 */
	f.b[14 + 20 + 8 + 3] = (uint8_t)(ISN + 101);
	assert_int_equal(fc_frame_fix_l4(f.b, f.len), 0);
	assert_int_equal(give(in, &f, false, 4), 0);
	crest(&f, 100);
	assert_int_equal(give(in, &f, false, 5), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	/* not taken (the SYN-ACK acks ISN + 1): the bytes again after it, read from 0 */
	use4(42202, 443);
	mk(&f, false, 0x02, ISN, (const uint8_t *)"decoy bytes the server drops", 28);
	assert_int_equal(give(in, &f, false, 6), 0);
	mk(&f, true, 0x12, SISN, NULL, 0);
	assert_int_equal(give(in, &f, false, 7), 0);
	crest(&f, 0);
	assert_int_equal(give(in, &f, false, 8), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	fd_inspect_close(in);
}

/* A handshake, then 11 s (past any old entry's wait), then the hello's halves out of order: cut. */
static void
test_late_out_of_order(void **state)
{
	struct fd_inspect *in;
	struct fr a, b;

	(void)state;
	mk_hello(false);
	in = open_listed();
	use4(42300, 443);
	handshake(in, 0);
	fd_inspect_tick(in, 11000, out, NULL);
	crest(&b, 100);
	cseg(&a, 0, 0, 100);
	assert_int_equal(give(in, &b, false, 11001), 1);
	assert_int_equal(give(in, &a, false, 11002), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	assert_int_equal(nsent, 0);
	fd_inspect_close(in);
}

/*
 * The bounds: max_conns 4 being read, 2 a source (per_source); a new one
 * over either makes the oldest (of the source, or in all) undecided,
 * evicted, its held frames let go.  A flood of cut entries lets the
 * oldest go, never a new cut; a full queue never loses a CUT.
 */
static void
test_bounds(void **state)
{
	struct fd_inspect_params p = { .max_conns = 4, .per_source = 2, .max_entries = 64,
				       .queue = 2 };
	static const uint16_t ports[] = { 443 };
	struct fd_inspect *in = fd_inspect_open(&p);
	struct fd_inspect_decision d;
	struct fc_fplist l = { 0 };
	char list[80];
	struct fr f;

	(void)state;
	mk_hello(false);
	fd_inspect_ports(in, ports, 1);
	nsent = 0;
	/* one source: its third being read evicts its first */
	for (uint16_t i = 0; i < 3; i++) {
		fc_key4(&ckey, IPPROTO_TCP, "198.18.0.2", (uint16_t)(43000 + i), "198.18.1.2", 443);
		handshake(in, i);
		cseg(&f, 0, 0, 10);
		assert_int_equal(give(in, &f, false, 10 + i), 1);
	}
	assert_int_equal(stats(in).reading, 2);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_EVICTED);
	assert_int_equal(ntohs(d.key.sport), 43000);
	assert_int_equal(nsent, 1);	/* its held byte let go */
	/* others: in all 4, the oldest (43001) makes room */
	for (uint16_t i = 0; i < 3; i++) {
		char a[32];

		snprintf(a, sizeof(a), "198.18.0.%u", 10 + i);
		fc_key4(&ckey, IPPROTO_TCP, a, 43100, "198.18.1.2", 443);
		handshake(in, 20);
		cseg(&f, 0, 0, 10);
		assert_int_equal(give(in, &f, false, 20), 1);
	}
	assert_int_equal(stats(in).reading, 4);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_EVICTED);
	assert_int_equal(ntohs(d.key.sport), 43001);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	fd_inspect_close(in);
	/* listed hellos from one source: 40 cuts, none lost with a queue of 2 untaken */
	in = fd_inspect_open(&p);
	fd_inspect_ports(in, ports, 1);
	snprintf(list, sizeof(list), "%s\n", hello_ja4);
	assert_int_equal(fc_fplist_parse(list, strlen(list), &l, NULL, NULL), 0);
	fd_inspect_watch(in, &l);
	for (uint16_t i = 0; i < 40; i++) {
		fc_key4(&ckey, IPPROTO_TCP, "198.18.0.2", (uint16_t)(44000 + i), "198.18.1.2", 443);
		handshake(in, 100 + i);
		crest(&f, 0);
		assert_int_equal(give(in, &f, false, 100 + i), 1);
	}
	assert_true(stats(in).entries <= 64);
	for (uint16_t i = 0; i < 40; i++) {
		assert_int_equal(fd_inspect_take(in, &d), 1);
		assert_true(d.cut);
		assert_int_equal(ntohs(d.key.sport), 44000 + i);
	}
	assert_int_equal(stats(in).passes_lost, 0);
	fd_inspect_close(in);
}

/* IPv6 behind a VLAN tag, a hello in three segments out of order: cut. */
static void
test_v6_vlan(void **state)
{
	struct fd_inspect *in;
	struct fd_inspect_decision d;
	struct fr f[3];
	char text[80];
	uint32_t at = 0;

	(void)state;
	mk_hello(false);
	in = open_listed();
	fc_key6(&ckey, IPPROTO_TCP, "2001:2::2", 40070, "2001:2:0:1::2", 465);
	vlan = 12;
	handshake(in, 0);
	for (int i = 0; i < 3; i++) {
		uint32_t n = i < 2 ? (uint32_t)hello_len / 3 : (uint32_t)hello_len - at;

		cseg(&f[i], at, at, n);
		at += n;
	}
	assert_int_equal(give(in, &f[2], true, 1), 1);
	assert_int_equal(give(in, &f[0], true, 1), 1);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	assert_int_equal(give(in, &f[1], true, 1), 1);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_true(d.cut);
	assert_string_equal(fd_tuple_format(&d.key, text, sizeof(text)),
			    "tcp [2001:2::2]:40070 -> [2001:2:0:1::2]:465");
	assert_int_equal(nsent, 0);
	vlan = 0;
	fd_inspect_close(in);
}

/* No TLS ports: nothing is read; a malformed frame is never the inspector's. */
static void
test_off_and_garbage(void **state)
{
	struct fd_inspect *in = open_with(NULL, 0);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	mk_hello(false);
	fd_inspect_ports(in, NULL, 0);
	use4(40080, 443);
	mk(&f, false, 0x02, ISN, NULL, 0);
	assert_int_equal(give(in, &f, false, 0), 0);
	mk(&f, false, 0x18, ISN + 1, hello, (uint32_t)hello_len);
	assert_int_equal(give(in, &f, true, 0), 0);
	assert_int_equal(stats(in).entries, 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	/* every truncation of a frame: never taken, never read past its end */
	{
		static const uint16_t p443[] = { 443 };

		fd_inspect_ports(in, p443, 1);
	}
	for (uint32_t n = 0; n < f.len; n++) {
		uint8_t *cut = malloc(n ? n : 1);

		memcpy(cut, f.b, n);
		assert_int_equal(fd_inspect_frame(in, 0, true, cut, n, 0, out, NULL), 0);
		free(cut);
	}
	assert_int_equal(nsent, 0);
	fd_inspect_close(in);
	fd_inspect_close(NULL);
}


/* RFC 9001 A.2's client Initial, a 1,200-byte datagram (tests/lib/fc_quicvec's hex). */
static void
rfc9001_initial(uint8_t dgram[1200])
{
	assert_int_equal(fc_hex(fc_rfc9001_client_initial, strlen(fc_rfc9001_client_initial), dgram,
				1200), 1200);
}

/* QUIC: the RFC 9001 A.2 client Initial in a UDP datagram to 443: cut when its JA4 is listed, passed when not. */
static void
test_quic(void **state)
{
	static struct fc_quic_hello qh;
	static uint8_t dgram[1200];
	struct fd_inspect_decision d;
	struct fd_tuple k;
	struct fd_inspect *in;
	char ja4[FC_JA4_LEN + 1], list[80];
	struct fr f, srv;

	(void)state;
	rfc9001_initial(dgram);
	fc_quic_init(&qh);
	assert_int_equal(fc_quic_feed(&qh, dgram, sizeof(dgram)), 0);
	assert_int_equal(fc_ja4(&qh.hello, 'q', ja4, NULL, 0), 0);
	snprintf(list, sizeof(list), "%s\n", ja4);
	in = open_with(list, 0);
	/* listed: held, never handed on; the client's again and the server's dropped */
	fc_key4(&ckey, IPPROTO_UDP, "198.18.0.2", 50000, "198.18.1.2", 443);
	k = key_of(&ckey);
	mk(&f, false, 0, 0, dgram, sizeof(dgram));
	assert_int_equal(give(in, &f, false, 1), 1);
	assert_int_equal(nsent, 0);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_true(d.cut);
	assert_int_equal(d.why, FD_INSPECT_LISTED_JA4);
	assert_int_equal(d.key.proto, IPPROTO_UDP);
	assert_memory_equal(&d.key, &k, sizeof(k));
	assert_string_equal(d.ja4, ja4);
	assert_int_equal(d.ja4[0], 'q');
	assert_string_equal(d.sni, "example.com");
	assert_string_equal(fd_tuple_format(&d.key, list, sizeof(list)),
			    "udp 198.18.0.2:50000 -> 198.18.1.2:443");
	assert_int_equal(give(in, &f, true, 300), 1);
	mk(&srv, true, 0, 0, dgram, 100);
	assert_int_equal(give(in, &srv, true, 300), 1);
	assert_int_equal(nsent, 0);
	assert_int_equal(stats(in).frames[FD_INSPECT_F_DROPPED], 3);
	/* another client's, not listed: handed on whole, CUT_THRU from then on */
	fc_key4(&ckey, IPPROTO_UDP, "198.18.0.3", 50001, "198.18.1.2", 443);
	k = key_of(&ckey);
	{
		struct fc_fplist none = { 0 };

		fd_inspect_watch(in, &none);
	}
	mk(&f, false, 0, 0, dgram, sizeof(dgram));
	assert_int_equal(give(in, &f, true, 400), 0);	/* whole in one: the caller's, at once */
	assert_int_equal(nsent, 0);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_false(d.cut);
	assert_int_equal(d.why, FD_INSPECT_NOT_LISTED);
	assert_int_equal(fd_inspect_verdict(in, &k), FC_VERDICT_CUT_THRU);
	assert_int_equal(give(in, &f, true, 401), 0);
	/* UDP to 443 that is no QUIC Initial: passed at once, not read; UDP to 53: not the inspector's */
	fc_key4(&ckey, IPPROTO_UDP, "198.18.0.4", 50002, "198.18.1.2", 443);
	mk(&f, false, 0, 0, (const uint8_t *)"\x40short header", 13);
	assert_int_equal(give(in, &f, true, 500), 0);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_NOT_HELLO);
	assert_int_equal(give(in, &f, true, 501), 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	fc_key4(&ckey, IPPROTO_UDP, "198.18.0.4", 50003, "198.18.1.2", 53);
	mk(&f, false, 0, 0, dgram, sizeof(dgram));
	assert_int_equal(give(in, &f, true, 502), 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	assert_int_equal(stats(in).hellos, 2);
	fd_inspect_close(in);
}

/*
 * QUIC datagrams its server drops are not read and not handed on: a decoy
 * Initial that does not open (a bit flipped), then the client's own,
 * listed: cut on the real one.
 */
static void
test_quic_refused(void **state)
{
	static struct fc_quic_hello qh;
	static uint8_t dgram[1200];
	struct fd_inspect *in;
	char ja4[FC_JA4_LEN + 1], list[80];
	struct fr f;

	(void)state;
	rfc9001_initial(dgram);
	fc_quic_init(&qh);
	assert_int_equal(fc_quic_feed(&qh, dgram, sizeof(dgram)), 0);
	assert_int_equal(fc_ja4(&qh.hello, 'q', ja4, NULL, 0), 0);
	snprintf(list, sizeof(list), "%s\n", ja4);
	in = open_with(list, 0);
	fc_key4(&ckey, IPPROTO_UDP, "198.18.0.2", 50010, "198.18.1.2", 443);
	dgram[1000] ^= 1;
	mk(&f, false, 0, 0, dgram, sizeof(dgram));
	assert_int_equal(give(in, &f, false, 1), 1);
	assert_int_equal(stats(in).frames[FD_INSPECT_F_QUIC_REFUSED], 1);
	assert_int_equal(nsent, 0);
	dgram[1000] ^= 1;
	mk(&f, false, 0, 0, dgram, sizeof(dgram));
	assert_int_equal(give(in, &f, false, 2), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	fd_inspect_close(in);
}

/* New QUIC flows read a second are bounded (quic_per_sec 2): the third at once is undecided, one a second later read. */
static void
test_quic_rate(void **state)
{
	struct fd_inspect_params p = { .quic_per_sec = 2 };
	static const uint16_t ports[] = { 443 };
	static uint8_t dgram[1200];
	struct fd_inspect *in = fd_inspect_open(&p);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	rfc9001_initial(dgram);
	fd_inspect_ports(in, ports, 1);
	nsent = 0;
	for (uint16_t i = 0; i < 4; i++) {
		fc_key4(&ckey, IPPROTO_UDP, "198.18.0.2", (uint16_t)(50100 + i), "198.18.1.2", 443);
		mk(&f, false, 0, 0, dgram, sizeof(dgram));
		assert_int_equal(give(in, &f, false, i < 3 ? 0 : 1000), 0);
		assert_int_equal(fd_inspect_take(in, &d), 1);
		assert_int_equal(d.why, i == 2 ? FD_INSPECT_QUIC_RATE : FD_INSPECT_NOT_LISTED);
	}
	assert_int_equal(stats(in).hellos, 3);
	fd_inspect_close(in);
}

/* An IPv4 header's checksum (20 bytes at ip) written again. */
static void
ip4_csum(uint8_t *ip)
{
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (size_t i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/*
 * The untagged frame w cut into IP fragments of `chunk` bytes of its IP
 * payload (a multiple of 8), IPv4 or IPv6 (a Fragment header), into fr[];
 * their count.
 */
static unsigned int
fragments(const struct fr *w, uint32_t chunk, struct fr *fr)
{
	bool v6 = w->b[12] == 0x86;
	uint32_t hl = v6 ? 40 : 20, plen, n = 0;
	const uint8_t *ip = w->b + 14, *pl = ip + hl;

	plen = v6 ? ((uint32_t)ip[4] << 8 | ip[5]) : ((uint32_t)ip[2] << 8 | ip[3]) - hl;
	for (uint32_t o = 0; o < plen; o += chunk, n++) {
		uint32_t k = plen - o < chunk ? plen - o : chunk;
		bool more = o + k < plen;
		uint8_t *q = fr[n].b;

		memcpy(q, w->b, 14 + hl);
		fr[n].reply = w->reply;
		if (v6) {
			uint8_t *fh = q + 14 + 40;

			q[14 + 4] = (uint8_t)((8 + k) >> 8);
			q[14 + 5] = (uint8_t)(8 + k);
			fh[0] = ip[6];	/* the next header: TCP or UDP */
			q[14 + 6] = 44;
			fh[1] = 0;
			fh[2] = (uint8_t)(o >> 8);
			fh[3] = (uint8_t)((o & 0xf8) | (more ? 1 : 0));
			memcpy(fh + 4, "\x12\x34\x56\x78", 4);
			memcpy(fh + 8, pl + o, k);
			fr[n].len = 14 + 40 + 8 + k;
		} else {
			uint16_t fo = (uint16_t)(o / 8) | (more ? 0x2000 : 0);

			q[14 + 2] = (uint8_t)((20 + k) >> 8);
			q[14 + 3] = (uint8_t)(20 + k);
			q[14 + 4] = 0x43;
			q[14 + 5] = 0x21;
			q[14 + 6] = (uint8_t)(fo >> 8);
			q[14 + 7] = (uint8_t)fo;
			ip4_csum(q + 14);
			memcpy(q + 14 + 20, pl + o, k);
			fr[n].len = 14 + 20 + k;
		}
	}
	return n;
}

/*
 * A hello in IP fragments (IPv4, IPv6), given last first: put back
 * together and read - listed, cut, none of its fragments goes on; not
 * listed, every fragment handed on in the order it came.  Fragments of
 * what is not the inspector's go on whole; an overlap discards a
 * datagram, as the server's stack does.
 */
static void
test_fragments(void **state)
{
	static struct fr whole, fr[64];

	(void)state;
	mk_hello(false);
	for (int v6 = 0; v6 < 2; v6++)
		for (int listed = 0; listed < 2; listed++) {
			struct fd_inspect *in = listed ? open_listed() : open_with(NULL, 0);
			unsigned int n;

			if (v6)
				fc_key6(&ckey, IPPROTO_TCP, "2001:2::2", 45000, "2001:2:0:1::2", 443);
			else
				use4(45000, 443);
			handshake(in, 0);
			crest(&whole, 0);
			n = fragments(&whole, 64, fr);
			assert_true(n >= 4);
			for (unsigned int i = 0; i < n; i++)
				assert_int_equal(give(in, &fr[n - 1 - i], false, 1), 1);
			if (listed) {
				assert_decided(in, FD_INSPECT_LISTED_JA4, true);
				assert_int_equal(nsent, 0);
			} else {
				assert_decided(in, FD_INSPECT_NOT_LISTED, false);
				assert_int_equal(nsent, n);
				for (unsigned int i = 0; i < n; i++)
					assert_sent(i, &fr[n - 1 - i]);
			}
			fd_inspect_close(in);
		}
	/* UDP to 53 in fragments: the caller's, whole, when its last came */
	{
		struct fd_inspect *in = open_with(NULL, 0);
		unsigned int n;

		fc_key4(&ckey, IPPROTO_UDP, "198.18.0.2", 45001, "198.18.1.2", 53);
		mk(&whole, false, 0, 0, hello, 300);
		n = fragments(&whole, 128, fr);
		for (unsigned int i = 0; i < n; i++)
			assert_int_equal(give(in, &fr[i], false, 1), 1);
		assert_int_equal(nsent, n);
		/* the same again with its second fragment overlapping the first: discarded, none on */
		nsent = 0;
		n = fragments(&whole, 128, fr);
		fr[1].b[14 + 7] = 8;	/* its offset 64 bytes, inside the first's 128 */
		ip4_csum(fr[1].b + 14);
		for (unsigned int i = 0; i < n; i++)
			assert_int_equal(give(in, &fr[i], false, 2), 1);
		assert_int_equal(nsent, 0);
		assert_true(stats(in).frames[FD_INSPECT_F_FRAG_DROPPED] >= 2);
		fd_inspect_close(in);
	}
}

/* A cut entry forgotten (its cut was another connection's to refuse): the tuple's frames go on again. */
static void
test_forget(void **state)
{
	struct fd_inspect *in;
	struct fr f;

	(void)state;
	mk_hello(false);
	in = open_listed();
	use4(45100, 443);
	handshake(in, 0);
	crest(&f, 0);
	assert_int_equal(give(in, &f, false, 1), 1);
	assert_decided(in, FD_INSPECT_LISTED_JA4, true);
	mk(&f, true, 0x10, SISN + 1, NULL, 0);
	assert_int_equal(give(in, &f, false, 2), 1);	/* dropped: cut */
	{
		struct fd_tuple k = key_of(&ckey);

		fd_inspect_forget(in, &k);
	}
	assert_int_equal(give(in, &f, false, 3), 0);	/* the caller's again */
	assert_int_equal(stats(in).entries, 0);
	fd_inspect_close(in);
}

/* ---- the parser in another process: questions asked, answered later ---- */

/* The questions asked, in order (the channel), and what ask() says. */
static struct { size_t len; uint8_t *b; } qs[64];
static unsigned int nq;
static int ask_rc;

static int
ask_later(void *actx, const void *msg, size_t len)
{
	(void)actx;
	if (ask_rc != 0)
		return ask_rc;
	assert_true(nq < 64);
	qs[nq].b = malloc(len);
	assert_non_null(qs[nq].b);
	memcpy(qs[nq].b, msg, len);
	qs[nq++].len = len;
	return 0;
}

/* Every question asked so far answered by fi_parse (flowcut-inspect's own), in order. */
static void
answer_all(struct fd_inspect *in, struct fi_parse *fp, uint64_t now)
{
	for (unsigned int i = 0; i < nq; i++) {
		struct fi_ans a;

		if (fi_parse_ask(fp, qs[i].b, qs[i].len, &a, NULL) == 1)
			assert_int_equal(fd_inspect_answer(in, &a, sizeof(a), now, out, NULL), 0);
		free(qs[i].b);
	}
	nq = 0;
}

/* Questions never answered (asked as the inspector closed: its forgets) let go. */
static void
qs_free(void)
{
	while (nq > 0)
		free(qs[--nq].b);
}

static struct fd_inspect *
open_chan(bool listed, bool undecided_cut)
{
	static const uint16_t ports[] = { 443 };
	struct fd_inspect_params p = { .ask = ask_later, .answer_ms = 1000,
				       .undecided_cut = undecided_cut };
	struct fd_inspect *in = fd_inspect_open(&p);
	struct fc_fplist l = { 0 };
	char list[80];

	assert_non_null(in);
	fd_inspect_ports(in, ports, 1);
	snprintf(list, sizeof(list), "%s\n", listed ? hello_ja4 : "t13d0000h2_000000000000_000000000000");
	assert_int_equal(fc_fplist_parse(list, strlen(list), &l, NULL, NULL), 0);
	fd_inspect_watch(in, &l);
	nsent = 0;
	qs_free();
	ask_rc = 0;
	return in;
}

/*
 * Over the channel: a frame whose bytes were asked is held until they
 * are answered - listed, it and the rest are dropped; not listed, they go
 * on byte for byte, in order; an answer for a connection decided since
 * is stale; what is not an answer is refused.
 */
static void
test_chan_answers(void **state)
{
	struct fi_parse *fp = fi_parse_open(0);
	struct fd_inspect *in;
	struct fr a, b;

	(void)state;
	mk_hello(true);
	for (int listed = 0; listed < 2; listed++) {
		in = open_chan(listed, false);
		use4(43000 + (uint16_t)listed, 443);
		handshake(in, 0);
		cseg(&a, 0, 0, 1000);
		crest(&b, 1000);
		assert_int_equal(give(in, &a, false, 1), 1);
		assert_int_equal(give(in, &b, false, 2), 1);
		assert_int_equal(nq, 2);
		assert_int_equal(nsent, 0);
		assert_int_equal(stats(in).why[FD_INSPECT_NOT_LISTED] + stats(in).why[FD_INSPECT_LISTED_JA4], 0);
		answer_all(in, fp, 3);
		assert_decided(in, listed ? FD_INSPECT_LISTED_JA4 : FD_INSPECT_NOT_LISTED, listed);
		if (listed) {
			assert_int_equal(nsent, 0);
			assert_int_equal(stats(in).frames[FD_INSPECT_F_DROPPED], 2);
		} else {
			assert_int_equal(nsent, 2);
			assert_sent(0, &a);
			assert_sent(1, &b);
		}
		assert_int_equal(stats(in).asked, 2);
		assert_int_equal(stats(in).answered, 2);
		assert_int_equal(fd_inspect_answer(in, "not an answer", 13, 4, out, NULL), -EBADMSG);
		fd_inspect_close(in);
	}
	qs_free();
	fi_parse_close(fp);
}

/*
 * No answer within answer_ms (a parser stopped): undecided parser_late,
 * its held frames on (or dropped: inspect_undecided = cut); the answer
 * that comes after is stale.  The channel full: parser_busy; no parser,
 * or lost with the connection's bytes: parser_down.
 */
static void
test_chan_late_busy_lost(void **state)
{
	struct fi_parse *fp = fi_parse_open(0);
	struct fd_inspect *in;
	struct fr a;

	(void)state;
	mk_hello(false);
	for (int cut = 0; cut < 2; cut++) {
		in = open_chan(true, cut);
		use4(43010 + (uint16_t)cut, 443);
		handshake(in, 0);
		cseg(&a, 0, 0, 100);
		assert_int_equal(give(in, &a, false, 10), 1);
		fd_inspect_tick(in, 1009, out, NULL);
		assert_int_equal(nsent, 0);
		fd_inspect_tick(in, 1010, out, NULL);
		assert_decided(in, FD_INSPECT_PARSER_LATE, cut);
		assert_int_equal(nsent, cut ? 0 : 1);
		answer_all(in, fp, 1011);
		assert_int_equal(stats(in).answers_stale, 1);
		fd_inspect_close(in);
	}
	in = open_chan(true, false);
	ask_rc = -EAGAIN;
	use4(43020, 443);
	handshake(in, 0);
	cseg(&a, 0, 0, 100);
	assert_int_equal(give(in, &a, false, 1), 1);	/* held, then on through out() */
	assert_decided(in, FD_INSPECT_PARSER_BUSY, false);
	assert_int_equal(nsent, 1);
	ask_rc = -ENOTCONN;
	use4(43021, 443);
	handshake(in, 0);
	cseg(&a, 0, 0, 100);
	assert_int_equal(give(in, &a, false, 2), 1);
	assert_decided(in, FD_INSPECT_PARSER_DOWN, false);
	assert_int_equal(nsent, 2);
	ask_rc = 0;
	use4(43022, 443);
	handshake(in, 0);
	cseg(&a, 0, 0, 100);
	assert_int_equal(give(in, &a, false, 3), 1);
	nsent = 0;
	fd_inspect_parser_lost(in, 4, out, NULL);
	assert_decided(in, FD_INSPECT_PARSER_DOWN, false);
	assert_int_equal(nsent, 1);
	assert_sent(0, &a);
	answer_all(in, fp, 5);
	fd_inspect_close(in);
	qs_free();
	fi_parse_close(fp);
}

/*
 * Over the channel, the reading slots full (max_conns 2): a slot whose
 * bytes are with the parser is not let go (its answer would be thrown
 * away): the newcomer is undecided parser_busy, and both answers count;
 * once answered (a hello's first part: reading on, nothing asked), the
 * oldest makes room again, evicted.
 */
static void
test_chan_full(void **state)
{
	static const uint16_t ports[] = { 443 };
	struct fd_inspect_params p = { .ask = ask_later, .answer_ms = 1000, .max_conns = 2,
				       .per_source = 4 };
	struct fi_parse *fp = fi_parse_open(0);
	struct fd_inspect *in = fd_inspect_open(&p);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	assert_non_null(in);
	fd_inspect_ports(in, ports, 1);
	nsent = 0;
	qs_free();
	ask_rc = 0;
	mk_hello(false);
	for (uint16_t i = 0; i < 3; i++) {
		use4(43040 + i, 443);
		handshake(in, 0);
		cseg(&f, 0, 0, 100);
		/* the third not taken: it goes on (the caller's), undecided */
		assert_int_equal(give(in, &f, false, 1 + i), i < 2 ? 1 : 0);
	}
	assert_int_equal(stats(in).reading, 2);
	assert_int_equal(nq, 2);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_PARSER_BUSY);
	assert_int_equal(ntohs(d.key.sport), 43042);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	answer_all(in, fp, 5);	/* 100 bytes of a hello: more wanted, nothing decided */
	assert_int_equal(stats(in).answered, 2);
	assert_int_equal(stats(in).answers_stale, 0);
	assert_int_equal(stats(in).reading, 2);
	use4(43043, 443);
	handshake(in, 0);
	cseg(&f, 0, 0, 100);
	assert_int_equal(give(in, &f, false, 6), 1);
	assert_int_equal(stats(in).reading, 2);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_EVICTED);
	assert_int_equal(ntohs(d.key.sport), 43040);
	fd_inspect_close(in);
	qs_free();
	fi_parse_close(fp);
}

/* Over the channel, TCP Fast Open: the SYN waits for its answer; a listed hello on it drops it. */
static void
test_chan_fast_open(void **state)
{
	struct fi_parse *fp = fi_parse_open(0);
	struct fd_inspect *in;
	struct fr f;

	(void)state;
	mk_hello(false);
	for (int listed = 0; listed < 2; listed++) {
		in = open_chan(listed, false);
		use4(43030 + (uint16_t)listed, 443);
		mk(&f, false, 0x02, ISN, hello, (uint32_t)hello_len);
		assert_int_equal(give(in, &f, false, 1), 1);
		assert_int_equal(nsent, 0);
		answer_all(in, fp, 2);
		if (listed) {
			assert_decided(in, FD_INSPECT_LISTED_JA4, true);
			assert_int_equal(nsent, 0);
		} else {
			assert_int_equal(nsent, 1);	/* the SYN on: the SYN-ACK says whether its bytes stand */
			assert_sent(0, &f);
		}
		fd_inspect_close(in);
	}
	qs_free();
	fi_parse_close(fp);
}

/* Over the channel, QUIC: a datagram the parser refuses is dropped when answered; the next is read. */
static void
test_chan_quic(void **state)
{
	static struct fc_quic_hello qh;
	static uint8_t dgram[1200];
	struct fi_parse *fp = fi_parse_open(0);
	struct fd_inspect *in;
	char ja4[FC_JA4_LEN + 1];
	struct fr f, g;

	(void)state;
	rfc9001_initial(dgram);
	fc_quic_init(&qh);
	assert_int_equal(fc_quic_feed(&qh, dgram, sizeof(dgram)), 0);
	assert_int_equal(fc_ja4(&qh.hello, 'q', ja4, NULL, 0), 0);
	for (int listed = 0; listed < 2; listed++) {
		in = open_chan(false, false);
		if (listed) {
			struct fc_fplist l = { 0 };
			char list[80];

			snprintf(list, sizeof(list), "%s\n", ja4);
			assert_int_equal(fc_fplist_parse(list, strlen(list), &l, NULL, NULL), 0);
			fd_inspect_watch(in, &l);
		}
		fc_key4(&ckey, IPPROTO_UDP, "198.18.0.2", (uint16_t)(50020 + listed), "198.18.1.2", 443);
		dgram[1000] ^= 1;
		mk(&f, false, 0, 0, dgram, sizeof(dgram));
		dgram[1000] ^= 1;
		mk(&g, false, 0, 0, dgram, sizeof(dgram));
		assert_int_equal(give(in, &f, false, 1), 1);
		assert_int_equal(give(in, &g, false, 2), 1);
		assert_int_equal(nsent, 0);
		answer_all(in, fp, 3);
		assert_int_equal(stats(in).frames[FD_INSPECT_F_QUIC_REFUSED], 1);
		assert_decided(in, listed ? FD_INSPECT_LISTED_JA4 : FD_INSPECT_NOT_LISTED, listed);
		assert_int_equal(nsent, listed ? 0 : 1);
		if (!listed)
			assert_sent(0, &g);
		fd_inspect_close(in);
	}
	qs_free();
	fi_parse_close(fp);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_one_segment),
		cmocka_unit_test(test_two_segments_out_of_order),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_not_hello),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_undecided_cut),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_closed),
		cmocka_unit_test(test_not_the_servers),
		cmocka_unit_test(test_spoofed),
		cmocka_unit_test(test_urgent),
		cmocka_unit_test(test_fast_open),
		cmocka_unit_test(test_late_out_of_order),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_v6_vlan),
		cmocka_unit_test(test_off_and_garbage),
		cmocka_unit_test(test_quic),
		cmocka_unit_test(test_quic_refused),
		cmocka_unit_test(test_quic_rate),
		cmocka_unit_test(test_fragments),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_chan_answers),
		cmocka_unit_test(test_chan_late_busy_lost),
		cmocka_unit_test(test_chan_full),
		cmocka_unit_test(test_chan_fast_open),
		cmocka_unit_test(test_chan_quic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
