/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_parse against hand-made frames, one row each, and against every
 * truncation of every row: the parser must answer for each prefix without
 * reading past it (the ASan build runs this on exactly-sized heap copies).
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fc_frame.h"
#include "fp_parse.h"

/* Frame mutations applied after fc_frame_build(). */
enum mut {
	M_NONE, M_ARP, M_V4_OPTIONS, M_V4_MF, M_V4_OFFSET, M_V4_BAD_VERSION, M_V4_IHL4,
	M_V4_TOTLEN_LONG, M_V4_TOTLEN_SHORT, M_TCP_DOFF4, M_TCP_DOFF_LONG, M_UDP_LEN_LONG,
	M_UDP_LEN_SHORT, M_V6_HOPOPTS, M_V6_FRAG_ATOMIC, M_V6_FRAG, M_V6_NONE,
	M_V6_EXT_LOOP, M_V6_EXT_LONG, M_V6_PAYLOAD_LONG, M_ICMP_ERROR, M_ESP, M_VLAN_SHORT,
};

struct row {
	const char *name;
	int family;
	uint8_t proto;
	uint16_t vlan;
	enum mut mut;
	enum fp_parse_result want;
};

static const struct row rows[] = {
	{ "v4 tcp", 4, IPPROTO_TCP, 0, M_NONE, FP_PARSE_FLOW },
	{ "v4 udp vlan", 4, IPPROTO_UDP, 42, M_NONE, FP_PARSE_FLOW },
	{ "v4 icmp echo", 4, IPPROTO_ICMP, 0, M_NONE, FP_PARSE_FLOW },
	{ "v4 icmp error", 4, IPPROTO_ICMP, 0, M_ICMP_ERROR, FP_PARSE_NO_FLOW },
	{ "v4 gre", 4, IPPROTO_GRE, 0, M_NONE, FP_PARSE_FLOW },
	{ "v4 esp", 4, IPPROTO_UDP, 0, M_ESP, FP_PARSE_FLOW },
	{ "v4 options", 4, IPPROTO_UDP, 0, M_V4_OPTIONS, FP_PARSE_FLOW },
	{ "v4 more fragments", 4, IPPROTO_UDP, 0, M_V4_MF, FP_PARSE_FRAG },
	{ "v4 fragment offset", 4, IPPROTO_UDP, 0, M_V4_OFFSET, FP_PARSE_FRAG },
	{ "v4 version 5", 4, IPPROTO_UDP, 0, M_V4_BAD_VERSION, FP_PARSE_ERROR },
	{ "v4 ihl 4", 4, IPPROTO_UDP, 0, M_V4_IHL4, FP_PARSE_ERROR },
	{ "v4 total length past the frame", 4, IPPROTO_UDP, 0, M_V4_TOTLEN_LONG, FP_PARSE_ERROR },
	{ "v4 total length below the header", 4, IPPROTO_UDP, 0, M_V4_TOTLEN_SHORT, FP_PARSE_ERROR },
	{ "tcp data offset 4", 4, IPPROTO_TCP, 0, M_TCP_DOFF4, FP_PARSE_ERROR },
	{ "tcp data offset past the datagram", 6, IPPROTO_TCP, 0, M_TCP_DOFF_LONG, FP_PARSE_ERROR },
	{ "udp length past the datagram", 4, IPPROTO_UDP, 0, M_UDP_LEN_LONG, FP_PARSE_ERROR },
	{ "udp length below 8", 6, IPPROTO_UDP, 0, M_UDP_LEN_SHORT, FP_PARSE_ERROR },
	{ "arp", 4, IPPROTO_UDP, 0, M_ARP, FP_PARSE_NON_IP },
	{ "vlan header cut", 4, IPPROTO_UDP, 0, M_VLAN_SHORT, FP_PARSE_ERROR },
	{ "v6 tcp", 6, IPPROTO_TCP, 0, M_NONE, FP_PARSE_FLOW },
	{ "v6 icmpv6 echo vlan", 6, IPPROTO_ICMPV6, 7, M_NONE, FP_PARSE_FLOW },
	{ "v6 hop-by-hop then udp", 6, IPPROTO_UDP, 0, M_V6_HOPOPTS, FP_PARSE_FLOW },
	{ "v6 atomic fragment then udp", 6, IPPROTO_UDP, 0, M_V6_FRAG_ATOMIC, FP_PARSE_FLOW },
	{ "v6 fragment", 6, IPPROTO_UDP, 0, M_V6_FRAG, FP_PARSE_FRAG },
	{ "v6 no next header", 6, IPPROTO_UDP, 0, M_V6_NONE, FP_PARSE_NO_FLOW },
	{ "v6 nine extension headers", 6, IPPROTO_UDP, 0, M_V6_EXT_LOOP, FP_PARSE_ERROR },
	{ "v6 extension header past the datagram", 6, IPPROTO_UDP, 0, M_V6_EXT_LONG, FP_PARSE_ERROR },
	{ "v6 payload length past the frame", 6, IPPROTO_UDP, 0, M_V6_PAYLOAD_LONG, FP_PARSE_ERROR },
};

/* Inserts `n` bytes at `off`, growing the frame. */
static void
insert(uint8_t *f, size_t *len, size_t off, const uint8_t *b, size_t n)
{
	memmove(f + off + n, f + off, *len - off);
	memcpy(f + off, b, n);
	*len += n;
}

static size_t
make(const struct row *r, uint8_t *f, size_t cap)
{
	struct fc_frame_spec s = { .payload = 40, .win = 100, .tcp_flags = FP_TCP_ACK };
	size_t len, l2 = r->vlan ? 18 : 14;
	uint8_t *l3;

	s.vlan = r->vlan;
	if (r->family == 4)
		fc_key4(&s.key, r->proto, "198.18.0.1", 1234, "198.19.0.1",
			r->proto == IPPROTO_ICMP ? 8 : 80);
	else
		fc_key6(&s.key, r->proto, "2001:2::1", 1234, "2001:2:0:1::1",
			r->proto == IPPROTO_ICMPV6 ? 128 : 80);
	len = fc_frame_build(&s, f, cap);
	assert_true(len > 0);
	l3 = f + l2;
	switch (r->mut) {
	case M_NONE: break;
	case M_ARP: f[12] = 0x08; f[13] = 0x06; break;
	case M_V4_OPTIONS: {
		static const uint8_t nop[8] = { 1, 1, 1, 1, 1, 1, 1, 0 };

		insert(f, &len, l2 + 20, nop, 8);
		l3[0] = 0x47;
		l3[3] += 8;
		break;
	}
	case M_V4_MF: l3[6] |= 0x20; break;
	case M_V4_OFFSET: l3[7] = 1; break;
	case M_V4_BAD_VERSION: l3[0] = 0x55; break;
	case M_V4_IHL4: l3[0] = 0x44; break;
	case M_V4_TOTLEN_LONG: l3[2] = 0x10; break;
	case M_V4_TOTLEN_SHORT: l3[2] = 0; l3[3] = 19; break;
	case M_TCP_DOFF4: l3[20 + 12] = 4 << 4; break;
	case M_TCP_DOFF_LONG: l3[40 + 12] = 15 << 4; l3[5] = 56; break;
	case M_UDP_LEN_LONG: l3[20 + 4] = 0x10; break;
	case M_UDP_LEN_SHORT: l3[40 + 4] = 0; l3[40 + 5] = 7; break;
	case M_ICMP_ERROR: l3[20] = 3; break;
	case M_ESP: l3[9] = IPPROTO_ESP; break;
	case M_VLAN_SHORT: f[12] = 0x81; f[13] = 0; len = 16; break;
	case M_V6_HOPOPTS:
	case M_V6_FRAG_ATOMIC:
	case M_V6_FRAG: {
		uint8_t ext[8] = { IPPROTO_UDP, 0, 0, 0, 0, 0, 0, 0 };

		if (r->mut == M_V6_FRAG)
			ext[3] = 1;	/* M */
		insert(f, &len, l2 + 40, ext, 8);
		l3[6] = r->mut == M_V6_HOPOPTS ? IPPROTO_HOPOPTS : IPPROTO_FRAGMENT;
		l3[5] += 8;
		break;
	}
	case M_V6_NONE: l3[6] = IPPROTO_NONE; break;
	case M_V6_EXT_LOOP:
		for (int i = 0; i < 9; i++) {
			uint8_t ext[8] = { i == 0 ? IPPROTO_UDP : IPPROTO_DSTOPTS };

			insert(f, &len, l2 + 40, ext, 8);
			l3[5] += 8;
		}
		l3[6] = IPPROTO_DSTOPTS;
		break;
	case M_V6_EXT_LONG: {
		uint8_t ext[8] = { IPPROTO_UDP, 200 };

		insert(f, &len, l2 + 40, ext, 8);
		l3[6] = IPPROTO_DSTOPTS;
		l3[5] += 8;
		break;
	}
	case M_V6_PAYLOAD_LONG: l3[4] = 0x10; break;
	}
	return len;
}

static void
test_rows(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		uint8_t f[512];
		size_t len = make(r, f, sizeof(f));
		struct fp_parsed p;
		enum fp_parse_result got = fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p);

		print_message("%s\n", r->name);
		if (got != r->want)
			fail_msg("%s: got %d, want %d", r->name, got, r->want);
		if (got != FP_PARSE_FLOW)
			continue;
		assert_int_equal(p.key.family, r->family);
		assert_int_equal(p.key.vlan, r->vlan);
		assert_int_equal(p.tagged, r->vlan != 0);
		assert_int_equal(p.l3_off, r->vlan ? 18 : 14);
		if (r->mut == M_ESP) {
			assert_int_equal(p.key.proto, IPPROTO_ESP);
			assert_int_equal(p.key.sport, 0);
			continue;
		}
		assert_int_equal(p.key.proto, r->proto);
		if (r->proto == IPPROTO_TCP || r->proto == IPPROTO_UDP) {
			assert_int_equal(p.key.sport, htons(1234));
			assert_int_equal(p.key.dport, htons(80));
		}
		if (r->proto == IPPROTO_ICMP || r->proto == IPPROTO_ICMPV6) {
			assert_int_equal(p.key.sport, htons(1234));
			assert_int_equal(p.key.dport, r->proto == IPPROTO_ICMP ? 8 : 128);
		}
		if (r->proto == IPPROTO_TCP) {
			assert_int_equal(p.tcp_payload, 40);
			assert_int_equal(p.tcp_win, 100);
			assert_int_equal(p.tcp_flags, FP_TCP_ACK);
		}
		assert_int_equal(p.l4_off + (r->proto == IPPROTO_TCP ? 20 : r->proto == IPPROTO_GRE ? 0 : 8) + 40,
				 p.l3_off + p.l3_len);
	}
}

/* Every prefix of every row, in a heap block of exactly its size. */
static void
test_truncations(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint8_t f[512];
		size_t len = make(&rows[i], f, sizeof(f));

		for (size_t n = 0; n <= len; n++) {
			uint8_t *copy = malloc(n ? n : 1);
			struct fp_parsed p;
			enum fp_parse_result got;

			memcpy(copy, f, n);
			got = fp_parse_frame(copy, (uint32_t)n, (uint32_t)n, &p);
			/* a frame cut inside its IP datagram can never be a flow */
			if (n < len && got == FP_PARSE_FLOW)
				assert_true(p.l3_off + p.l3_len <= n);
			/* headers in a first segment shorter than the frame */
			fp_parse_frame(copy, (uint32_t)n, (uint32_t)len, &p);
			free(copy);
		}
	}
}

/* SACK blocks are digested; other options, and none, give 0. */
static void
test_sack_digest(void **state)
{
	struct fc_frame_spec s = { .tcp_flags = FP_TCP_ACK };
	static const uint8_t ts[12] = { 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2 };
	static const uint8_t sack1[12] = { 1, 1, 5, 10, 0, 0, 1, 0, 0, 0, 2, 0 };
	static const uint8_t sack2[12] = { 1, 1, 5, 10, 0, 0, 1, 0, 0, 0, 3, 0 };
	static const uint8_t bad[4] = { 5, 40, 0, 0 };	/* longer than the header */
	uint8_t f[256];
	struct fp_parsed p;
	uint32_t d1, d2;
	size_t len;

	(void)state;
	fc_key4(&s.key, IPPROTO_TCP, "198.18.0.1", 1, "198.19.0.1", 2);
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p), FP_PARSE_FLOW);
	assert_int_equal(p.tcp_sack, 0);
	memcpy(s.tcp_opts, ts, 12);
	s.tcp_optlen = 12;
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p), FP_PARSE_FLOW);
	assert_int_equal(p.tcp_sack, 0);
	memcpy(s.tcp_opts, sack1, 12);
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p), FP_PARSE_FLOW);
	d1 = p.tcp_sack;
	memcpy(s.tcp_opts, sack2, 12);
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p), FP_PARSE_FLOW);
	d2 = p.tcp_sack;
	assert_int_not_equal(d1, 0);
	assert_int_not_equal(d1, d2);
	memcpy(s.tcp_opts, bad, 4);
	s.tcp_optlen = 4;
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(fp_parse_frame(f, (uint32_t)len, (uint32_t)len, &p), FP_PARSE_FLOW);
	assert_int_equal(p.tcp_sack, 0);
}

static void
test_lengths_contradict(void **state)
{
	uint8_t f[128] = { 0 };
	struct fp_parsed p;

	(void)state;
	assert_int_equal(fp_parse_frame(f, 64, 32, &p), FP_PARSE_ERROR);	/* seg > frame */
	assert_int_equal(fp_parse_frame(f, 13, 13, &p), FP_PARSE_ERROR);
	assert_int_equal(fp_parse_frame(f, 64, 70000, &p), FP_PARSE_ERROR);
}

static void
test_key_reverse_and_format(void **state)
{
	struct fc_key k, r;
	char buf[128];

	(void)state;
	fc_key4(&k, IPPROTO_TCP, "198.18.0.1", 1000, "198.19.0.1", 80);
	fp_key_reverse(&k, &r);
	assert_int_equal(r.sport, htons(80));
	assert_int_equal(r.dport, htons(1000));
	assert_string_equal(fp_key_format(&r, buf, sizeof(buf)),
			    "4 tcp 198.19.0.1:80 > 198.18.0.1:1000 port 0 vlan 0");
	fc_key6(&k, IPPROTO_ICMPV6, "2001:2::1", 7, "2001:2::2", 128);
	fp_key_reverse(&k, &r);
	assert_int_equal(r.sport, htons(7));
	assert_int_equal(r.dport, 129);
	assert_string_equal(fp_key_format(&r, buf, sizeof(buf)),
			    "6 icmpv6 2001:2::2 > 2001:2::1 id 7 type 129 port 0 vlan 0");
	fc_key6(&k, IPPROTO_UDP, "2001:2::1", 53, "2001:2::2", 5353);
	assert_string_equal(fp_key_format(&k, buf, sizeof(buf)),
			    "6 udp [2001:2::1]:53 > [2001:2::2]:5353 port 0 vlan 0");
	fc_key4(&k, IPPROTO_GRE, "198.18.0.1", 0, "198.19.0.1", 0);
	assert_string_equal(fp_key_format(&k, buf, sizeof(buf)),
			    "4 proto 47 198.18.0.1 > 198.19.0.1 port 0 vlan 0");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_truncations),
		cmocka_unit_test(test_lengths_contradict),
		cmocka_unit_test(test_sack_digest),
		cmocka_unit_test(test_key_reverse_and_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
