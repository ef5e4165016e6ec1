/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_seg: see fc_seg.h. */
#include "fc_seg.h"

#include <string.h>

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The transport header at p: len bytes of it by the IP length, cap of
 * them given.  off is p's distance from the IP header.
 */
static enum fc_seg_result
l4(const uint8_t *p, uint32_t len, uint32_t cap, uint32_t off, struct fc_seg *s)
{
	uint32_t hl;

	if (s->proto == 17) {
		uint32_t ulen;

		if (cap < 8 || len < 8 || (ulen = be16(p + 4)) < 8 || ulen > len)
			return FC_SEG_OTHER;
		hl = 8;
		len = ulen;	/* UDP's own length: what follows it is not payload */
	} else {
		if (cap < 20 || len < 20 || (hl = (uint32_t)(p[12] >> 4) * 4) < 20 || hl > len)
			return FC_SEG_OTHER;
		s->seq = be32(p + 4);
		s->ack = be32(p + 8);
		s->flags = p[13];
		s->urp = be16(p + 18);
	}
	s->l4off = off;
	s->l4len = len;
	s->sport = be16(p);
	s->dport = be16(p + 2);
	s->poff = off + hl;
	s->plen = len - hl;
	s->pcap = cap > hl ? (cap < len ? cap : len) - hl : 0;
	s->whole = cap >= len;
	return FC_SEG_OK;
}

static enum fc_seg_result
ipv4(const uint8_t *p, uint32_t caplen, struct fc_seg *s)
{
	uint32_t ihl, tot;

	if (caplen < 20 || (ihl = (uint32_t)(p[0] & 0xf) * 4) < 20 || (tot = be16(p + 2)) < ihl ||
	    caplen < ihl)
		return FC_SEG_OTHER;
	if (be16(p + 6) & 0x3fff)	/* MF or an offset */
		return FC_SEG_FRAGMENT;
	if (p[9] != 6 && p[9] != 17)
		return FC_SEG_OTHER;
	s->family = 4;
	s->proto = p[9];
	s->ttl = p[8];
	memcpy(s->src, p + 12, 4);
	memcpy(s->dst, p + 16, 4);
	return l4(p + ihl, tot - ihl, (caplen < tot ? caplen : tot) - ihl, ihl, s);
}

static enum fc_seg_result
ipv6(const uint8_t *p, uint32_t caplen, struct fc_seg *s)
{
	uint32_t off = 40, len;
	uint8_t nh;

	if (caplen < 40)
		return FC_SEG_OTHER;
	len = 40 + be16(p + 4);
	nh = p[6];
	while (nh == 0 || nh == 43 || nh == 60) {	/* hop-by-hop, routing, destination */
		if (off + 8 > caplen || off + 8 > len)
			return FC_SEG_OTHER;
		nh = p[off];
		off += 8 + (uint32_t)p[off + 1] * 8;
	}
	if (nh == 44)
		return FC_SEG_FRAGMENT;
	if ((nh != 6 && nh != 17) || off > len || off > caplen)
		return FC_SEG_OTHER;
	s->family = 6;
	s->proto = nh;
	s->ttl = p[7];
	memcpy(s->src, p + 8, 16);
	memcpy(s->dst, p + 24, 16);
	return l4(p + off, len - off, (caplen < len ? caplen : len) - off, off, s);
}

enum fc_seg_result
fc_seg_ip(const uint8_t *ip, uint32_t caplen, struct fc_seg *s)
{
	memset(s, 0, sizeof(*s));
	if (caplen >= 1 && (ip[0] >> 4) == 4)
		return ipv4(ip, caplen, s);
	if (caplen >= 1 && (ip[0] >> 4) == 6)
		return ipv6(ip, caplen, s);
	return FC_SEG_OTHER;
}

int
fc_seg_ether(const uint8_t *f, uint32_t caplen)
{
	uint32_t off = 14;
	uint16_t type;

	if (caplen < 14)
		return -1;
	type = be16(f + 12);
	for (int tags = 0; tags < 2 && (type == 0x8100 || type == 0x88a8); tags++) {
		if (caplen < off + 4)
			return -1;
		type = be16(f + off + 2);
		off += 4;
	}
	return type == 0x0800 || type == 0x86dd ? (int)off : -1;
}

/* The one's complement sum of n bytes at p, added to sum (RFC 1071). */
static uint32_t
sum16(const uint8_t *p, uint32_t n, uint32_t sum)
{
	uint32_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += be16(p + i);
	if (i < n)
		sum += (uint32_t)p[i] << 8;
	return sum;
}

bool
fc_seg_csum_ok(const uint8_t *ip, const struct fc_seg *s)
{
	const uint8_t *l4 = ip + s->l4off;
	uint32_t sum = 0, alen = s->family == 4 ? 4 : 16;

	if (!s->whole)
		return false;
	if (s->proto == 17 && s->family == 4 && be16(l4 + 6) == 0)
		return true;	/* no checksum sent */
	sum = sum16(s->src, alen, sum);
	sum = sum16(s->dst, alen, sum);
	sum += s->proto;
	sum += s->l4len & 0xffff;
	sum += s->l4len >> 16;
	sum = sum16(l4, s->l4len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}
