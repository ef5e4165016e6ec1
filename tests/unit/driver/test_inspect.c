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
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_quicvec.h"
#include "fc_tls.h"
#include "fd_inspect.h"

#define ISN 1000u		/* the client's initial sequence number */

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
};

static struct fc_key ckey;	/* the client's direction */
static uint16_t vlan;

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
				   .vlan = vlan, .key = ckey, .tcp_flags = flags, .seq = seq,
				   .ack = 5000, .win = 502, .payload = (uint16_t)n };
	uint32_t at = 14 + (vlan ? 4 : 0) + (ckey.family == 4 ? 20 : 40) +
		      (ckey.proto == IPPROTO_UDP ? 8 : 20);

	if (reply) {
		memcpy(s.key.src, ckey.dst, 16);
		memcpy(s.key.dst, ckey.src, 16);
		s.key.sport = ckey.dport;
		s.key.dport = ckey.sport;
	}
	f->len = (uint32_t)fc_frame_build(&s, f->b, sizeof(f->b));
	assert_true(f->len > 0);
	if (n)
		memcpy(f->b + at, p, n);
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
	return fd_inspect_frame(in, 0, flagged, f->b, f->len, now, out, NULL);
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
	struct fr f;

	mk(&f, false, 0x02, ISN, NULL, 0);		/* SYN */
	assert_int_equal(give(in, &f, false, now), 0);
	mk(&f, true, 0x12, 5000 - 1, NULL, 0);		/* SYN-ACK */
	assert_int_equal(give(in, &f, false, now), 0);
	mk(&f, false, 0x10, ISN + 1, NULL, 0);		/* ACK */
	assert_int_equal(give(in, &f, false, now), 0);
	assert_int_equal(nsent, 0);
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

/* Not whole within 2 s (a virtual clock): on, CUT_THRU, counted. */
static void
test_deadline(void **state)
{
	struct fd_inspect *in = open_with(NULL, 0);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	mk_hello(false);
	use4(40030, 443);
	handshake(in, 0);
	mk(&f, false, 0x10, ISN + 1, hello, 100);
	assert_int_equal(give(in, &f, false, 1000), 1);
	fd_inspect_tick(in, 2999, out, NULL);
	assert_int_equal(nsent, 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
	fd_inspect_tick(in, 3000, out, NULL);
	assert_int_equal(nsent, 1);
	assert_sent(0, &f);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_TIMEOUT);
	assert_int_equal(stats(in).why[FD_INSPECT_TIMEOUT], 1);
	assert_int_equal(stats(in).reading, 0);
	/* a SYN with no bytes after it is forgotten after 10 s */
	use4(40031, 443);
	mk(&f, false, 0x02, ISN, NULL, 0);
	assert_int_equal(give(in, &f, false, 2000), 0);
	assert_int_equal(stats(in).entries, 2);
	fd_inspect_tick(in, 12999, out, NULL);
	assert_int_equal(stats(in).entries, 1);	/* the one passed at 3000 lingers to 13000 */
	fd_inspect_tick(in, 13000, out, NULL);
	assert_int_equal(stats(in).entries, 0);
	fd_inspect_close(in);
}

/* Too big: a hello announcing more than 16 KiB; and one in more than 64 frames. */
static void
test_too_big(void **state)
{
	static const uint8_t big[] = { 22, 3, 1, 0x40, 0x00, 1, 0x00, 0x40, 0x01 };
	struct fd_inspect *in = open_with(NULL, 0);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	use4(40040, 443);
	handshake(in, 0);
	mk(&f, false, 0x18, ISN + 1, big, sizeof(big));
	assert_int_equal(give(in, &f, true, 1), 1);
	assert_int_equal(nsent, 1);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_TOO_BIG);
	/* a hello in 65 frames of 8 bytes: the 65th hands on all 64 held, then itself (the caller's) */
	mk_hello(true);
	assert_true(hello_len > 65 * 8);
	use4(40041, 443);
	nsent = 0;
	handshake(in, 10);
	for (uint32_t i = 0; i < 65; i++) {
		/* sent from the last to the first, but for the 65th */
		uint32_t j = i < 64 ? 63 - i : 64;

		mk(&f, false, 0x10, ISN + 1 + 8 * j, hello + 8 * j, 8);
		assert_int_equal(give(in, &f, false, 11), i < 64 ? 1 : 0);
	}
	assert_int_equal(nsent, 64);
	for (uint32_t i = 0; i < 64; i++) {	/* in sequence order */
		const uint8_t *q = sent[i].frame + 14 + 20 + 4;

		assert_int_equal((uint32_t)q[0] << 24 | (uint32_t)q[1] << 16 | q[2] << 8 | q[3],
				 ISN + 1 + 8 * i);
	}
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_TOO_BIG);
	assert_int_equal(stats(in).why[FD_INSPECT_TOO_BIG], 2);
	fd_inspect_close(in);
}

/* The client closes (FIN, RST) before a whole hello: what was held goes on first. */
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
	mk(&f, false, 0x10, ISN + 1, hello, 50);
	assert_int_equal(give(in, &f, false, 1), 1);
	mk(&fin, false, 0x11, ISN + 51, NULL, 0);
	assert_int_equal(give(in, &fin, false, 2), 0);	/* the FIN is the caller's, after */
	assert_int_equal(nsent, 1);
	assert_sent(0, &f);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_CLOSED);
	/* a FIN with the last bytes: held, then on with the rest */
	use4(40051, 443);
	nsent = 0;
	handshake(in, 3);
	mk(&f, false, 0x10, ISN + 1, hello, 50);
	assert_int_equal(give(in, &f, false, 4), 1);
	mk(&fin, false, 0x19, ISN + 51, hello + 50, 50);
	assert_int_equal(give(in, &fin, false, 5), 1);
	assert_int_equal(nsent, 2);
	assert_sent(0, &f);
	assert_sent(1, &fin);
	assert_int_equal(stats(in).why[FD_INSPECT_CLOSED], 2);
	fd_inspect_close(in);
}

/* max_conns 2: a third connection's bytes are not read, they go on; counted. */
static void
test_cap(void **state)
{
	struct fd_inspect *in = open_with(NULL, 2);
	struct fd_inspect_decision d;
	struct fr f;

	(void)state;
	mk_hello(false);
	for (uint16_t i = 0; i < 3; i++) {
		use4(40060 + i, 443);
		handshake(in, 0);
		mk(&f, false, 0x10, ISN + 1, hello, 100);
		assert_int_equal(give(in, &f, false, 1), i < 2 ? 1 : 0);
	}
	assert_int_equal(nsent, 0);
	assert_int_equal(stats(in).reading, 2);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_OVER_CAP);
	assert_int_equal(ntohs(d.key.sport), 40062);
	assert_int_equal(stats(in).why[FD_INSPECT_OVER_CAP], 1);
	/* its next frame too */
	mk(&f, false, 0x10, ISN + 101, hello + 100, 100);
	assert_int_equal(give(in, &f, false, 2), 0);
	fd_inspect_close(in);	/* held frames dropped, nothing leaks (ASan) */
}

/* IPv6 behind a VLAN tag, a hello in three segments; a connection whose SYN was not seen. */
static void
test_v6_vlan_and_midstream(void **state)
{
	struct fd_inspect *in;
	struct fd_inspect_decision d;
	struct fr f[3];
	char text[80];
	uint32_t at = 0;

	(void)state;
	mk_hello(false);
	snprintf(text, sizeof(text), "%s\n", hello_ja4);
	in = open_with(text, 0);
	fc_key6(&ckey, IPPROTO_TCP, "2001:2::2", 40070, "2001:2:0:1::2", 465);
	vlan = 12;
	handshake(in, 0);
	for (int i = 0; i < 3; i++) {
		uint32_t n = i < 2 ? (uint32_t)hello_len / 3 : (uint32_t)hello_len - at;

		mk(&f[i], false, 0x10, ISN + 1 + at, hello + at, n);
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
	/* bytes flagged INSPECT of a connection never seen from its SYN: read from there */
	use4(40071, 443);
	mk(&f[0], false, 0x10, 777777, hello, (uint32_t)hello_len);
	assert_int_equal(give(in, &f[0], true, 2), 1);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_true(d.cut);
	/* ... and mid-stream bytes of another: no hello, passed */
	use4(40072, 443);
	mk(&f[0], false, 0x10, 888888, (const uint8_t *)"HTTP/1.1 mid-stream bytes", 25);
	assert_int_equal(give(in, &f[0], true, 3), 1);
	assert_int_equal(nsent, 1);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_int_equal(d.why, FD_INSPECT_NOT_HELLO);
	/* on the host path too (an entry let go, a connection back from the fast path) */
	use4(40073, 443);
	mk(&f[0], false, 0x10, 999999, hello, (uint32_t)hello_len);
	assert_int_equal(give(in, &f[0], false, 4), 1);
	assert_int_equal(fd_inspect_take(in, &d), 1);
	assert_true(d.cut);
	assert_int_equal(nsent, 1);
	/* the server's bytes, or a pure ACK, of a connection it does not know: not read */
	use4(40074, 443);
	mk(&f[0], true, 0x18, 5000, hello, 200);
	assert_int_equal(give(in, &f[0], false, 5), 0);
	mk(&f[0], false, 0x10, 5000, NULL, 0);
	assert_int_equal(give(in, &f[0], false, 5), 0);
	assert_int_equal(fd_inspect_take(in, &d), 0);
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
	unsigned int x;

	(void)state;
	for (size_t i = 0; i < sizeof(dgram); i++) {
		assert_int_equal(sscanf(fc_rfc9001_client_initial + 2 * i, "%2x", &x), 1);
		dgram[i] = (uint8_t)x;
	}
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
	assert_int_equal(give(in, &f, true, 400), 1);
	assert_int_equal(nsent, 1);
	assert_sent(0, &f);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pass_one_segment),
		cmocka_unit_test(test_two_segments_out_of_order),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_not_hello),
		cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_closed),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_v6_vlan_and_midstream),
		cmocka_unit_test(test_off_and_garbage),
		cmocka_unit_test(test_quic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
