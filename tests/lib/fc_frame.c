/* SPDX-License-Identifier: BSD-3-Clause */
#include "fc_frame.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

static void
wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Plain RFC 1071 sum over big-endian words, an odd byte padded with 0. */
static uint32_t
sum_be(uint32_t s, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += rd16(p + i);
	if (i < len)
		s += (uint32_t)p[i] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The transport checksum over pseudo-header + segment (segment's csum zeroed). */
static uint16_t
l4_csum(int family, const uint8_t *l3, uint8_t proto, const uint8_t *l4, size_t l4len,
	size_t csum_off)
{
	uint32_t s = 0;

	if (family == 4) {
		s = sum_be(s, l3 + 12, 8);
	} else {
		s = sum_be(s, l3 + 8, 32);
	}
	if (proto != IPPROTO_ICMP) {	/* ICMPv4 has no pseudo-header */
		s += (uint32_t)(l4len >> 16) + (uint32_t)(l4len & 0xffff);
		s += proto;
	} else {
		s = 0;
	}
	s = sum_be(s, l4, csum_off);
	s = sum_be(s, l4 + csum_off + 2, l4len - csum_off - 2);
	return fold(s);
}

size_t
fc_frame_build(const struct fc_frame_spec *s, uint8_t *buf, size_t cap)
{
	const struct fc_key *k = &s->key;
	size_t l4hdr, l3hdr = k->family == 4 ? 20 : 40, l2 = s->vlan ? 18 : 14;
	size_t l4len, len;
	uint8_t *l3, *l4;
	size_t csum_off;

	switch (k->proto) {
	case IPPROTO_TCP: l4hdr = 20u + (s->tcp_optlen & ~3u); csum_off = 16; break;
	case IPPROTO_UDP: l4hdr = 8; csum_off = 6; break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: l4hdr = 8; csum_off = 2; break;
	default: l4hdr = 0; csum_off = 0; break;
	}
	l4len = l4hdr + s->payload;
	len = l2 + l3hdr + l4len;
	if (len < 60)
		len = 60;
	if (len > cap)
		return 0;
	memset(buf, 0, len);
	memcpy(buf, s->dmac, 6);
	memcpy(buf + 6, s->smac, 6);
	if (s->vlan) {
		wr16(buf + 12, 0x8100);
		wr16(buf + 14, s->vlan);
	}
	wr16(buf + l2 - 2, k->family == 4 ? 0x0800 : 0x86dd);
	l3 = buf + l2;
	l4 = l3 + l3hdr;
	if (k->family == 4) {
		l3[0] = 0x45;
		wr16(l3 + 2, (uint16_t)(l3hdr + l4len));
		wr16(l3 + 4, 0x1234);
		wr16(l3 + 6, 0x4000);	/* DF */
		l3[8] = s->ttl ? s->ttl : 64;
		l3[9] = k->proto;
		memcpy(l3 + 12, k->src, 4);
		memcpy(l3 + 16, k->dst, 4);
		wr16(l3 + 10, fold(sum_be(0, l3, 20)));
	} else {
		l3[0] = 0x60;
		wr16(l3 + 4, (uint16_t)l4len);
		l3[6] = k->proto;
		l3[7] = s->ttl ? s->ttl : 64;
		memcpy(l3 + 8, k->src, 16);
		memcpy(l3 + 24, k->dst, 16);
	}
	for (size_t i = 0; i < s->payload; i++)
		l4[l4hdr + i] = (uint8_t)i;
	switch (k->proto) {
	case IPPROTO_TCP:
		memcpy(l4, &k->sport, 2);
		memcpy(l4 + 2, &k->dport, 2);
		wr32(l4 + 4, s->seq);
		wr32(l4 + 8, s->ack);
		l4[12] = (uint8_t)((l4hdr / 4) << 4);
		memcpy(l4 + 20, s->tcp_opts, l4hdr - 20);
		l4[13] = s->tcp_flags;
		wr16(l4 + 14, s->win);
		break;
	case IPPROTO_UDP:
		memcpy(l4, &k->sport, 2);
		memcpy(l4 + 2, &k->dport, 2);
		wr16(l4 + 4, (uint16_t)l4len);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		l4[0] = (uint8_t)k->dport;	/* type */
		memcpy(l4 + 4, &k->sport, 2);	/* identifier */
		wr16(l4 + 6, 1);		/* sequence */
		break;
	default:
		return len;
	}
	if (k->proto == IPPROTO_UDP && s->udp_no_csum)
		return len;
	{
		uint16_t c = l4_csum(k->family, l3, k->proto, l4, l4len, csum_off);

		if (c == 0 && k->proto == IPPROTO_UDP)
			c = 0xffff;
		wr16(l4 + csum_off, c);
	}
	return len;
}

/*
 * Where an Ethernet frame's IP header and transport header are (untagged
 * or one tag; IPv4, or IPv6 without extension headers): 0 and the
 * fields, or -1 with *why.
 */
static int
frame_layers(const uint8_t *f, size_t len, int *family, const uint8_t **l3, size_t *l3hdr,
	     size_t *l4len, uint8_t *proto, const char **why)
{
	size_t l2 = 14;

	if (len < 14)
		return *why = "short frame", -1;
	if (rd16(f + 12) == 0x8100)
		l2 = 18;
	if (len < l2 + 20)
		return *why = "short frame", -1;
	*l3 = f + l2;
	if (rd16(f + l2 - 2) == 0x0800) {
		*family = 4;
		*l3hdr = (size_t)((*l3)[0] & 0xf) * 4;
		*l4len = rd16(*l3 + 2) - *l3hdr;
		*proto = (*l3)[9];
	} else if (rd16(f + l2 - 2) == 0x86dd) {
		*family = 6;
		*l3hdr = 40;
		*l4len = rd16(*l3 + 4);
		*proto = (*l3)[6];
	} else {
		return *why = "not IP", -1;
	}
	if (l2 + *l3hdr + *l4len > len)
		return *why = "IP length beyond the frame", -1;
	return 0;
}

int
fc_frame_check(const uint8_t *f, size_t len, const char **why)
{
	size_t l3hdr, l4len;
	const uint8_t *l3, *l4;
	int family;
	uint8_t proto;
	const char *dummy;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	if (frame_layers(f, len, &family, &l3, &l3hdr, &l4len, &proto, why) != 0)
		return -1;
	if (family == 4 && fold(sum_be(0, l3, l3hdr)) != 0)
		return *why = "IPv4 header checksum", -1;
	l4 = l3 + l3hdr;
	switch (proto) {
	case IPPROTO_TCP:
		if (l4_csum(family, l3, proto, l4, l4len, 16) != rd16(l4 + 16))
			return *why = "TCP checksum", -1;
		break;
	case IPPROTO_UDP: {
		uint16_t c = rd16(l4 + 6), want;

		if (c == 0)	/* none (IPv4), or a tunnel's zero (IPv6, RFC 6935) */
			break;
		want = l4_csum(family, l3, proto, l4, l4len, 6);
		if ((want == 0 ? 0xffff : want) != c)
			return *why = "UDP checksum", -1;
		break;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (l4_csum(family, l3, proto, l4, l4len, 2) != rd16(l4 + 2))
			return *why = proto == IPPROTO_ICMP ? "ICMP checksum" : "ICMPv6 checksum", -1;
		break;
	}
	return 0;
}

int
fc_frame_fix_l4(uint8_t *f, size_t len)
{
	size_t l3hdr, l4len;
	const uint8_t *l3;
	uint8_t *l4, proto;
	const char *why;
	int family;

	if (frame_layers(f, len, &family, &l3, &l3hdr, &l4len, &proto, &why) != 0)
		return -1;
	l4 = f + (size_t)(l3 - f) + l3hdr;
	if (proto == IPPROTO_TCP) {
		wr16(l4 + 16, l4_csum(family, l3, proto, l4, l4len, 16));
	} else if (proto == IPPROTO_UDP && rd16(l4 + 6) != 0) {
		uint16_t c = l4_csum(family, l3, proto, l4, l4len, 6);

		wr16(l4 + 6, c == 0 ? 0xffff : c);
	} else {
		return -1;
	}
	return 0;
}

static void
key_fill(struct fc_key *k, int family, uint8_t proto, const char *src, uint16_t sport,
	 const char *dst, uint16_t dport)
{
	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)family;
	k->proto = proto;
	inet_pton(family == 4 ? AF_INET : AF_INET6, src, k->src);
	inet_pton(family == 4 ? AF_INET : AF_INET6, dst, k->dst);
	k->sport = htons(sport);
	if (proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6)
		k->dport = dport;	/* the type, host order */
	else if (proto == IPPROTO_TCP || proto == IPPROTO_UDP)
		k->dport = htons(dport);
	else
		k->sport = 0;
}

void
fc_key4(struct fc_key *k, uint8_t proto, const char *src, uint16_t sport,
	const char *dst, uint16_t dport)
{
	key_fill(k, 4, proto, src, sport, dst, dport);
}

void
fc_key6(struct fc_key *k, uint8_t proto, const char *src, uint16_t sport,
	const char *dst, uint16_t dport)
{
	key_fill(k, 6, proto, src, sport, dst, dport);
}
