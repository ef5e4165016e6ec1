/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * inspect/fc_seg against frames fc_frame builds, one case each: where a
 * segment's payload sits, what it says of its flow, and what it refuses;
 * and every truncation of each frame, which it must answer without reading
 * past (the ASan build runs this on exactly-sized heap copies).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fc_frame.h"
#include "fc_seg.h"

static size_t
build(struct fc_frame_spec *s, int family, uint8_t proto, uint16_t payload, uint8_t *f)
{
	memset(s, 0, sizeof(*s));
	if (family == 4)
		fc_key4(&s->key, proto, "198.18.0.10", 40000, "198.19.0.10", 443);
	else
		fc_key6(&s->key, proto, "2001:2::10", 40000, "2001:2:0:1::10", 443);
	s->payload = payload;
	s->seq = 123456789;
	s->tcp_flags = 0x18;	/* PSH ACK */
	return fc_frame_build(s, f, 2048);
}

/* fc_seg_ether then fc_seg_ip over the first len bytes of f, on a heap copy of that size. */
static enum fc_seg_result
seg(const uint8_t *f, size_t len, struct fc_seg *g, int *off)
{
	uint8_t *c = malloc(len ? len : 1);
	enum fc_seg_result r = FC_SEG_OTHER;

	assert_non_null(c);
	memcpy(c, f, len);
	*off = fc_seg_ether(c, (uint32_t)len);
	memset(g, 0, sizeof(*g));
	if (*off >= 0)
		r = fc_seg_ip(c + *off, (uint32_t)(len - (size_t)*off), g);
	free(c);
	return r;
}

/* What every answer keeps to: what it says is given lies within the bytes given. */
static void
every_prefix(const uint8_t *f, size_t len)
{
	for (size_t n = 0; n <= len; n++) {
		struct fc_seg g;
		int off;

		if (seg(f, n, &g, &off) != FC_SEG_OK)
			continue;
		assert_true(g.family == 4 || g.family == 6);
		assert_true(g.proto == 6 || g.proto == 17);
		assert_true(g.pcap <= g.plen);
		/* past what is given (TCP options cut short): nothing of it given */
		if ((size_t)off + g.poff > n)
			assert_true(g.pcap == 0 && !g.whole);
		else
			assert_true((size_t)off + g.poff + g.pcap <= n);
		if (g.whole)
			assert_int_equal(g.pcap, g.plen);
	}
}

static void
test_tcp4_with_options(void **state)
{
	struct fc_frame_spec s;
	uint8_t f[2048];
	struct fc_seg g;
	size_t len;
	int off;

	(void)state;
	len = build(&s, 4, IPPROTO_TCP, 300, f);
	s.tcp_optlen = 12;
	memset(s.tcp_opts, 1, 12);	/* NOPs */
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OK);
	assert_int_equal(off, 14);
	assert_int_equal(g.family, 4);
	assert_int_equal(g.proto, 6);
	assert_int_equal(g.sport, 40000);
	assert_int_equal(g.dport, 443);
	assert_int_equal(g.seq, 123456789);
	assert_int_equal(g.flags, 0x18);
	assert_memory_equal(g.src, f + 14 + 12, 4);
	assert_memory_equal(g.dst, f + 14 + 16, 4);
	assert_int_equal(g.poff, 20 + 32);
	assert_int_equal(g.plen, 300);
	assert_int_equal(g.pcap, 300);
	assert_true(g.whole);
	/* cut short inside the payload: read, not whole */
	assert_int_equal(seg(f, len - 100, &g, &off), FC_SEG_OK);
	assert_int_equal(g.plen, 300);
	assert_int_equal(g.pcap, 200);
	assert_false(g.whole);
	/* cut inside the TCP header's first 20 bytes: none */
	assert_int_equal(seg(f, 14 + 20 + 19, &g, &off), FC_SEG_OTHER);
	every_prefix(f, len);
}

static void
test_udp6_vlan(void **state)
{
	struct fc_frame_spec s;
	uint8_t f[2048];
	struct fc_seg g;
	size_t len;
	int off;

	(void)state;
	build(&s, 6, IPPROTO_UDP, 200, f);
	s.vlan = 42;
	len = fc_frame_build(&s, f, sizeof(f));
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OK);
	assert_int_equal(off, 18);
	assert_int_equal(g.family, 6);
	assert_int_equal(g.proto, 17);
	assert_int_equal(g.sport, 40000);
	assert_int_equal(g.poff, 40 + 8);
	assert_int_equal(g.plen, 200);
	assert_true(g.whole);
	every_prefix(f, len);
}

/* A small datagram's frame is padded to 60 bytes: the padding is not payload. */
static void
test_padding_is_not_payload(void **state)
{
	struct fc_frame_spec s;
	uint8_t f[2048];
	struct fc_seg g;
	size_t len;
	int off;

	(void)state;
	len = build(&s, 4, IPPROTO_UDP, 2, f);
	assert_int_equal(len, 60);
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OK);
	assert_int_equal(g.plen, 2);
	assert_int_equal(g.pcap, 2);
	assert_true(g.whole);
}

/* IPv6 with a hop-by-hop header before TCP: stepped over. */
static void
test_v6_extension_header(void **state)
{
	struct fc_frame_spec s;
	uint8_t f[2048], h[2048];
	struct fc_seg g;
	size_t len;
	int off;

	(void)state;
	len = build(&s, 6, IPPROTO_TCP, 50, f);
	memcpy(h, f, 14 + 40);
	memset(h + 54, 0, 8);
	h[54] = IPPROTO_TCP;	/* the header after it */
	memcpy(h + 62, f + 54, len - 54);
	h[14 + 6] = 0;		/* hop-by-hop */
	h[14 + 5] = (uint8_t)(h[14 + 5] + 8);	/* payload length, low byte: 20 + 50 + 8 fits */
	assert_int_equal(seg(h, len + 8, &g, &off), FC_SEG_OK);
	assert_int_equal(g.poff, 40 + 8 + 20);
	assert_int_equal(g.plen, 50);
	assert_int_equal(g.seq, 123456789);
	every_prefix(h, len + 8);
}

static void
test_refused(void **state)
{
	struct fc_frame_spec s;
	uint8_t f[2048];
	struct fc_seg g;
	size_t len;
	int off;

	(void)state;
	/* an IPv4 fragment (More Fragments), and one at an offset */
	len = build(&s, 4, IPPROTO_TCP, 100, f);
	f[14 + 6] = 0x20;
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_FRAGMENT);
	f[14 + 6] = 0x00;
	f[14 + 7] = 0x10;
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_FRAGMENT);
	/* an IPv6 fragment header */
	len = build(&s, 6, IPPROTO_UDP, 100, f);
	f[14 + 6] = 44;
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_FRAGMENT);
	/* ICMP: another protocol */
	len = build(&s, 4, IPPROTO_ICMP, 20, f);
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OTHER);
	/* ARP: no IP header at all */
	len = build(&s, 4, IPPROTO_UDP, 20, f);
	f[12] = 0x08;
	f[13] = 0x06;
	assert_int_equal(fc_seg_ether(f, (uint32_t)len), -1);
	/* a TCP data offset below 20 bytes, and a UDP length past the IP length */
	len = build(&s, 4, IPPROTO_TCP, 20, f);
	f[14 + 20 + 12] = 0x40;
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OTHER);
	len = build(&s, 4, IPPROTO_UDP, 20, f);
	f[14 + 20 + 4] = 0x10;
	assert_int_equal(seg(f, len, &g, &off), FC_SEG_OTHER);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp4_with_options),
		cmocka_unit_test(test_udp6_vlan),
		cmocka_unit_test(test_padding_is_not_payload),
		cmocka_unit_test(test_v6_extension_header),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
