/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_nat: what a NATed direction's frames leave with, and the rewrite with
 * RFC 1624 incremental checksum updates (DPDK 22.11 only recomputes
 * checksums in full, which costs a pass over the payload).
 *
 * NAT is what a connection's two keys say, as conntrack's two tuples do:
 * a frame of one direction leaves with the addresses and ports of the
 * other direction's key reversed.  fp_nat_of() works that out once, when
 * the connection is made; fp_nat_rewrite() applies it to each frame.
 *
 * Plain structs and bytes: no tables, no DPDK, no I/O; any thread.  Used
 * by fp_conn.c (at create) and fp_burst.c (per frame); tested alone in
 * tests/unit/test_fp_nat.c against checksums recomputed in full.
 */
#ifndef FLOWCUT_FP_NAT_H
#define FLOWCUT_FP_NAT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fp_parse.h"

/*
 * One direction's translation: what its frames' headers become.  Network
 * byte order, as in struct fc_key; IPv4 addresses in the first 4 bytes.
 * ICMP and ICMPv6 echo: sport is the identifier, dport unused (0).
 */
struct fp_nat {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
};
_Static_assert(sizeof(struct fp_nat) == 36, "fp_nat is 36 bytes, unpadded");

static inline bool
fp_nat_is_icmp(uint8_t proto)
{
	return proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6;
}

/*
 * fp_nat_of - the translation of the direction whose partner is `other`:
 * src = other.dst, dst = other.src, and the ports swapped (ICMP: the same
 * identifier, which both directions of an echo carry).
 */
static inline void
fp_nat_of(const struct fc_key *other, struct fp_nat *out)
{
	memcpy(out->src, other->dst, 16);
	memcpy(out->dst, other->src, 16);
	if (fp_nat_is_icmp(other->proto)) {
		out->sport = other->sport;
		out->dport = 0;
	} else {
		out->sport = other->dport;
		out->dport = other->sport;
	}
}

/* fp_nat_needed - whether frames matching `own` leave rewritten by `x`. */
static inline bool
fp_nat_needed(const struct fc_key *own, const struct fp_nat *x)
{
	if (memcmp(own->src, x->src, 16) != 0 || memcmp(own->dst, x->dst, 16) != 0)
		return true;
	if (fp_nat_is_icmp(own->proto))
		return own->sport != x->sport;
	return own->sport != x->sport || own->dport != x->dport;
}

/*
 * fp_csum_acc - adds the 16-bit words of p (len even) to sum, each
 * complemented when `neg`.  One's complement sums do not depend on byte
 * order, so the words are taken as they lie in memory and the result is
 * stored back the same way.  The sum is folded by fp_csum_apply(); up to
 * 65,535 words may be added before it could overflow.
 */
static inline uint32_t
fp_csum_acc(uint32_t sum, const void *p, unsigned int len, bool neg)
{
	const uint8_t *b = p;

	for (unsigned int i = 0; i < len; i += 2) {
		uint16_t w;

		memcpy(&w, b + i, 2);
		sum += neg ? (uint16_t)~w : w;
	}
	return sum;
}

/*
 * fp_csum_apply - the checksum at `field` after the change `diff`:
 * HC' = ~(~HC + ~m + m'), with diff = sum(~m) + sum(m') (RFC 1624 eqn 3).
 */
static inline void
fp_csum_apply(uint8_t *field, uint32_t diff)
{
	uint16_t hc;
	uint32_t s;

	memcpy(&hc, field, 2);
	s = (uint16_t)~hc + diff;
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	hc = (uint16_t)~s;
	memcpy(field, &hc, 2);
}

/*
 * fp_nat_rewrite - rewrite the frame `f` (headers found by fp_parse_frame
 * into `pp`; TCP, UDP, ICMP or ICMPv6 echo) to `x`, and fix its transport
 * checksum.  The IPv4 header checksum is the caller's to fix, once, with
 * the other changes it makes (the TTL): the addresses' part is added to
 * *ip_diff.  A UDP datagram sent without a checksum stays so (IPv6: RFC
 * 6935); one whose new checksum comes to 0 carries 0xffff (RFC 768).
 */
static inline void
fp_nat_rewrite(uint8_t *f, const struct fp_parsed *pp, const struct fp_nat *x,
	       uint32_t *ip_diff)
{
	const unsigned int alen = pp->key.family == 4 ? 4 : 16;
	uint8_t *l3 = f + pp->l3_off, *l4 = f + pp->l4_off;
	uint8_t *src = l3 + (alen == 4 ? 12 : 8), *dst = src + alen;
	uint32_t addr_diff = 0, l4_diff = 0;
	uint8_t *csum = NULL;

	/* pseudo-header: the addresses */
	addr_diff = fp_csum_acc(addr_diff, src, alen, true);
	addr_diff = fp_csum_acc(addr_diff, dst, alen, true);
	memcpy(src, x->src, alen);
	memcpy(dst, x->dst, alen);
	addr_diff = fp_csum_acc(addr_diff, src, alen, false);
	addr_diff = fp_csum_acc(addr_diff, dst, alen, false);
	if (alen == 4)
		*ip_diff += addr_diff;

	switch (pp->key.proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		l4_diff = fp_csum_acc(addr_diff, l4, 4, true);
		memcpy(l4, &x->sport, 2);
		memcpy(l4 + 2, &x->dport, 2);
		l4_diff = fp_csum_acc(l4_diff, l4, 4, false);
		csum = l4 + (pp->key.proto == IPPROTO_TCP ? 16 : 6);
		if (pp->key.proto == IPPROTO_UDP) {
			uint16_t z;

			memcpy(&z, csum, 2);
			if (z == 0)
				return;		/* UDP without checksum stays so */
			fp_csum_apply(csum, l4_diff);
			memcpy(&z, csum, 2);
			if (z == 0)
				memset(csum, 0xff, 2);	/* 0 is sent as ~0 */
			return;
		}
		break;
	default:	/* ICMP / ICMPv6 echo: the identifier */
		l4_diff = alen == 16 ? addr_diff : 0;	/* ICMPv6 has a pseudo-header */
		l4_diff = fp_csum_acc(l4_diff, l4 + 4, 2, true);
		memcpy(l4 + 4, &x->sport, 2);
		l4_diff = fp_csum_acc(l4_diff, l4 + 4, 2, false);
		csum = l4 + 2;
		break;
	}
	fp_csum_apply(csum, l4_diff);
}

#endif /* FLOWCUT_FP_NAT_H */
