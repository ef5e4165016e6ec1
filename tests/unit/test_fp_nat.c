/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_nat alone: the translation a connection's two keys give, and the
 * rewrite with RFC 1624 incremental checksums held against frames built
 * with every checksum computed in full (fc_frame), byte for byte, over
 * random rewrites of IPv4 and IPv6 TCP, UDP (with and without a
 * checksum) and ICMP echo.  No fast path, no tables.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "fc_frame.h"
#include "fp_nat.h"
#include "fp_parse.h"

#define ROUNDS 3000	/* random rewrites per row */

/* ---- fp_nat_of and fp_nat_needed, one row per kind of NAT ---- */

static const struct {
	const char *name;
	uint8_t proto;
	const char *own_src, *own_dst, *oth_src, *oth_dst;
	uint16_t own_sport, own_dport, oth_sport, oth_dport;
	bool needed;
	uint16_t want_sport, want_dport;	/* the translation's ports */
} key_rows[] = {
	{ "tcp, no NAT", IPPROTO_TCP, "198.18.0.1", "198.19.0.1", "198.19.0.1", "198.18.0.1",
	  1000, 80, 80, 1000, false, 1000, 80 },
	{ "tcp, source NAT", IPPROTO_TCP, "198.18.0.1", "198.19.0.1", "198.19.0.1", "198.18.9.9",
	  1000, 80, 80, 1000, true, 1000, 80 },
	{ "tcp, destination NAT", IPPROTO_TCP, "198.18.0.1", "198.19.0.1", "198.19.5.5",
	  "198.18.0.1", 1000, 80, 80, 1000, true, 1000, 80 },
	{ "udp, port translation only", IPPROTO_UDP, "198.18.0.1", "198.19.0.1", "198.19.0.1",
	  "198.18.0.1", 1000, 53, 53, 40000, true, 40000, 53 },
	{ "icmp echo, no NAT (the type differs, the id not)", IPPROTO_ICMP, "198.18.0.1",
	  "198.19.0.1", "198.19.0.1", "198.18.0.1", 77, 8, 77, 0, false, 77, 0 },
	{ "icmp echo, id translated", IPPROTO_ICMP, "198.18.0.1", "198.19.0.1", "198.19.0.1",
	  "198.18.0.1", 77, 8, 99, 0, true, 99, 0 },
};

static void
test_translation(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++) {
		struct fc_key own, oth;
		struct fp_nat x;

		print_message("%s\n", key_rows[i].name);
		fc_key4(&own, key_rows[i].proto, key_rows[i].own_src, key_rows[i].own_sport,
			key_rows[i].own_dst, key_rows[i].own_dport);
		fc_key4(&oth, key_rows[i].proto, key_rows[i].oth_src, key_rows[i].oth_sport,
			key_rows[i].oth_dst, key_rows[i].oth_dport);
		fp_nat_of(&oth, &x);
		assert_memory_equal(x.src, oth.dst, 16);
		assert_memory_equal(x.dst, oth.src, 16);
		assert_int_equal(ntohs(x.sport), key_rows[i].want_sport);
		assert_int_equal(ntohs(x.dport), key_rows[i].want_dport);
		assert_int_equal(fp_nat_needed(&own, &x), key_rows[i].needed);
	}
}

/* ---- the rewrite against full recomputation ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static void
rnd_addr(uint8_t *a, int family)
{
	memset(a, 0, 16);
	for (int i = 0; i < (family == 4 ? 4 : 16); i++)
		a[i] = (uint8_t)rnd();
}

static void
rnd_key(struct fc_key *k, int family, uint8_t proto)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)family;
	k->proto = proto;
	rnd_addr(k->src, family);
	rnd_addr(k->dst, family);
	k->sport = (uint16_t)rnd();
	if (fp_nat_is_icmp(proto))
		k->dport = proto == IPPROTO_ICMP ? 8 : 128;	/* echo request */
	else
		k->dport = (uint16_t)rnd();
}

/* A frame of `spec`, parsed: its length. */
static size_t
build(const struct fc_frame_spec *spec, uint8_t *buf, size_t cap, struct fp_parsed *pp)
{
	size_t len = fc_frame_build(spec, buf, cap);

	assert_true(len > 0);
	assert_int_equal(fp_parse_frame(buf, (uint16_t)len, (uint32_t)len, pp), FP_PARSE_FLOW);
	return len;
}

/*
 * Rewrites a frame of `spec` to `x` as the packet path does (the IPv4
 * header checksum fixed by the caller, once) and holds it byte for byte
 * against the frame built directly with the new headers.
 */
static void
rewrite_and_compare(const struct fc_frame_spec *spec, const struct fp_nat *x)
{
	struct fc_frame_spec want_spec = *spec;
	uint8_t got[1600], want[1600];
	struct fp_parsed pp, pw;
	uint32_t ip_diff = 0;
	const char *why = NULL;
	size_t len, wlen;

	len = build(spec, got, sizeof(got), &pp);
	memcpy(want_spec.key.src, x->src, 16);
	memcpy(want_spec.key.dst, x->dst, 16);
	want_spec.key.sport = x->sport;
	if (!fp_nat_is_icmp(spec->key.proto))
		want_spec.key.dport = x->dport;
	wlen = build(&want_spec, want, sizeof(want), &pw);

	fp_nat_rewrite(got, &pp, x, &ip_diff);
	if (spec->key.family == 4)
		fp_csum_apply(got + pp.l3_off + 10, ip_diff);
	else
		assert_int_equal(ip_diff, 0);
	assert_int_equal(len, wlen);
	if (fc_frame_check(got, len, &why) != 0)
		fail_msg("checksum wrong after the rewrite: %s", why);
	assert_memory_equal(got, want, len);
}

static const struct {
	const char *name;
	int family;
	uint8_t proto;
	bool udp_no_csum;
} rw_rows[] = {
	{ "v4 tcp", 4, IPPROTO_TCP, false },
	{ "v4 udp", 4, IPPROTO_UDP, false },
	{ "v4 udp without checksum", 4, IPPROTO_UDP, true },
	{ "v4 icmp echo", 4, IPPROTO_ICMP, false },
	{ "v6 tcp", 6, IPPROTO_TCP, false },
	{ "v6 udp", 6, IPPROTO_UDP, false },
	{ "v6 udp without checksum", 6, IPPROTO_UDP, true },
	{ "v6 icmpv6 echo", 6, IPPROTO_ICMPV6, false },
};

static void
test_rewrite_random(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rw_rows) / sizeof(rw_rows[0]); i++) {
		print_message("%s\n", rw_rows[i].name);
		for (unsigned int r = 0; r < ROUNDS; r++) {
			struct fc_frame_spec spec = { 0 };
			struct fc_key other;
			struct fp_nat x;

			rnd_key(&spec.key, rw_rows[i].family, rw_rows[i].proto);
			rnd_key(&other, rw_rows[i].family, rw_rows[i].proto);
			/* some rows change only the addresses, some only the ports */
			switch (r % 3) {
			case 1:
				memcpy(other.src, spec.key.dst, 16);
				memcpy(other.dst, spec.key.src, 16);
				break;
			case 2:
				other.sport = fp_nat_is_icmp(spec.key.proto) ? spec.key.sport
									       : spec.key.dport;
				other.dport = fp_nat_is_icmp(spec.key.proto) ? 0 : spec.key.sport;
				break;
			default:
				break;
			}
			spec.vlan = (r & 4) ? (uint16_t)(1 + rnd() % 4094) : 0;
			spec.ttl = (uint8_t)(2 + rnd() % 250);
			spec.tcp_flags = FP_TCP_ACK;
			spec.seq = rnd();
			spec.ack = rnd();
			spec.win = (uint16_t)rnd();
			spec.payload = (uint16_t)(rnd() % 1200);
			spec.udp_no_csum = rw_rows[i].udp_no_csum;
			fp_nat_of(&other, &x);
			rewrite_and_compare(&spec, &x);
		}
	}
}

/*
 * A UDP checksum that comes to 0 must leave as 0xffff (0 means "none"):
 * among the 65,536 source ports one makes it so; find it with frames
 * computed in full, then rewrite to it.
 */
static void
test_udp_zero_result(void **state)
{
	static const int families[] = { 4, 6 };

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		struct fc_frame_spec spec = { 0 }, probe;
		struct fc_key other;
		struct fp_nat x;
		uint8_t buf[256];
		struct fp_parsed pp;
		unsigned int found = 0;

		rnd_key(&spec.key, families[f], IPPROTO_UDP);
		rnd_key(&other, families[f], IPPROTO_UDP);
		spec.payload = 20;
		fp_nat_of(&other, &x);
		probe = spec;
		memcpy(probe.key.src, x.src, 16);
		memcpy(probe.key.dst, x.dst, 16);
		probe.key.dport = x.dport;
		for (uint32_t port = 0; port <= 0xffff; port++) {
			uint16_t c;

			probe.key.sport = htons((uint16_t)port);
			build(&probe, buf, sizeof(buf), &pp);
			memcpy(&c, buf + pp.l4_off + 6, 2);
			if (c != 0xffff)
				continue;
			x.sport = probe.key.sport;
			rewrite_and_compare(&spec, &x);
			found++;
		}
		assert_true(found >= 1);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_translation),
		cmocka_unit_test(test_rewrite_random),
		cmocka_unit_test(test_udp_zero_result),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
