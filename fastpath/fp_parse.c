/* SPDX-License-Identifier: BSD-3-Clause */
/* fp_parse: see fp_parse.h. */
#include "fp_parse.h"

#include <flowcut/fc_key.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#define ETH_HLEN 14
#define VLAN_HLEN 4
#define ETYPE_IPV4 0x0800
#define ETYPE_IPV6 0x86dd
#define ETYPE_VLAN 0x8100
#define IPV6_HLEN 40
#define IPV6_MAX_EXT 8		/* extension headers stepped over at most */

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Ports as raw network-order 16-bit values, the key's form. */
static inline uint16_t
rdport(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return v;
}

/*
 * The SACK blocks of a TCP header's options (kind 5), folded into 32 bits;
 * 0 when there are none.  Malformed options end the walk: the digest is of
 * what was well formed, and the frame's fate does not depend on it beyond
 * the duplicate-ACK count.
 */
static uint32_t
sack_digest(const uint8_t *o, uint32_t len)
{
	uint32_t d = 0;

	for (uint32_t i = 0; i < len;) {
		uint32_t olen;

		if (o[i] == 0)		/* end of options */
			break;
		if (o[i] == 1) {	/* no-op */
			i++;
			continue;
		}
		if (i + 1 >= len || (olen = o[i + 1]) < 2 || i + olen > len)
			break;
		if (o[i] == 5)
			for (uint32_t k = 2; k + 3 < olen; k += 4)
				d = (d * 31) ^ rd32(o + i + k);
		i += olen;
	}
	return d;
}

/*
 * The transport header at off, inside a datagram ending at end (both from
 * the frame's start; end <= seg_len is not assumed: only headers must be in
 * the first segment, the payload may run on).
 */
static enum fp_parse_result
parse_l4(const uint8_t *f, uint32_t seg_len, uint32_t off, uint32_t end,
	 struct fp_parsed *out)
{
	struct fc_key *k = &out->key;
	uint32_t avail = end - off;

	out->l4_off = (uint16_t)off;
	switch (k->proto) {
	case IPPROTO_TCP: {
		uint32_t doff;

		if (avail < 20 || off + 20 > seg_len)
			return FP_PARSE_ERROR;
		doff = (uint32_t)(f[off + 12] >> 4) * 4;
		if (doff < 20 || doff > avail || off + doff > seg_len)
			return FP_PARSE_ERROR;
		k->sport = rdport(f + off);
		k->dport = rdport(f + off + 2);
		out->tcp_seq = rd32(f + off + 4);
		out->tcp_ack = rd32(f + off + 8);
		out->tcp_flags = f[off + 13];
		out->tcp_win = rd16(f + off + 14);
		out->tcp_payload = (uint16_t)(avail - doff);
		out->tcp_sack = doff > 20 ? sack_digest(f + off + 20, doff - 20) : 0;
		return FP_PARSE_FLOW;
	}
	case IPPROTO_UDP: {
		uint32_t ulen;

		if (avail < 8 || off + 8 > seg_len)
			return FP_PARSE_ERROR;
		ulen = rd16(f + off + 4);
		if (ulen < 8 || ulen > avail)
			return FP_PARSE_ERROR;
		k->sport = rdport(f + off);
		k->dport = rdport(f + off + 2);
		return FP_PARSE_FLOW;
	}
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6: {
		uint8_t type;

		if (avail < 8 || off + 8 > seg_len)
			return FP_PARSE_ERROR;
		type = f[off];
		if (k->proto == IPPROTO_ICMP ? (type != 8 && type != 0)
					     : (type != 128 && type != 129))
			return FP_PARSE_NO_FLOW;
		k->sport = rdport(f + off + 4);
		k->dport = type;
		return FP_PARSE_FLOW;
	}
	default:
		return FP_PARSE_FLOW;	/* keyed by addresses and protocol */
	}
}

static enum fp_parse_result
parse_ipv4(const uint8_t *f, uint32_t seg_len, uint32_t frame_len, uint32_t off,
	   struct fp_parsed *out)
{
	struct fc_key *k = &out->key;
	uint32_t ihl, tot;

	if (off + 20 > seg_len)
		return FP_PARSE_ERROR;
	if (f[off] >> 4 != 4)
		return FP_PARSE_ERROR;
	ihl = (uint32_t)(f[off] & 0x0f) * 4;
	tot = rd16(f + off + 2);
	if (ihl < 20 || off + ihl > seg_len || tot < ihl || off + tot > frame_len)
		return FP_PARSE_ERROR;
	out->l3_len = (uint16_t)tot;
	k->family = 4;
	k->proto = f[off + 9];
	memcpy(k->src, f + off + 12, 4);
	memcpy(k->dst, f + off + 16, 4);
	if (rd16(f + off + 6) & 0x3fff)		/* MF or a fragment offset */
		return FP_PARSE_FRAG;
	return parse_l4(f, seg_len, off + ihl, off + tot, out);
}

static enum fp_parse_result
parse_ipv6(const uint8_t *f, uint32_t seg_len, uint32_t frame_len, uint32_t off,
	   struct fp_parsed *out)
{
	struct fc_key *k = &out->key;
	uint32_t end, nh_off;
	uint8_t nh;

	if (off + IPV6_HLEN > seg_len)
		return FP_PARSE_ERROR;
	if (f[off] >> 4 != 6)
		return FP_PARSE_ERROR;
	end = off + IPV6_HLEN + rd16(f + off + 4);
	if (end > frame_len)
		return FP_PARSE_ERROR;
	out->l3_len = (uint16_t)(end - off);
	k->family = 6;
	memcpy(k->src, f + off + 8, 16);
	memcpy(k->dst, f + off + 24, 16);
	nh = f[off + 6];
	nh_off = off + IPV6_HLEN;
	for (int i = 0;; i++) {
		uint32_t len;

		switch (nh) {
		case IPPROTO_HOPOPTS:
		case IPPROTO_ROUTING:
		case IPPROTO_DSTOPTS:
		case IPPROTO_AH:
		case IPPROTO_FRAGMENT:
			break;
		case IPPROTO_NONE:
			return FP_PARSE_NO_FLOW;
		default:
			k->proto = nh;
			return parse_l4(f, seg_len, nh_off, end, out);
		}
		if (i == IPV6_MAX_EXT || nh_off + 8 > end || nh_off + 8 > seg_len)
			return FP_PARSE_ERROR;
		if (nh == IPPROTO_FRAGMENT) {
			/* offset or M set: a real fragment; else atomic */
			if (rd16(f + nh_off + 2) & 0xfff9)
				return FP_PARSE_FRAG;
			len = 8;
		} else if (nh == IPPROTO_AH) {
			len = ((uint32_t)f[nh_off + 1] + 2) * 4;
		} else {
			len = ((uint32_t)f[nh_off + 1] + 1) * 8;
		}
		nh = f[nh_off];
		nh_off += len;
		if (nh_off > end)
			return FP_PARSE_ERROR;
	}
}

enum fp_parse_result
fp_parse_frame(const uint8_t *f, uint32_t seg_len, uint32_t frame_len,
	       struct fp_parsed *out)
{
	uint32_t off = ETH_HLEN;
	uint16_t etype;

	memset(&out->key, 0, sizeof(out->key));
	out->tagged = 0;
	out->tcp_flags = 0;
	out->tcp_seq = out->tcp_ack = 0;
	out->tcp_win = out->tcp_payload = 0;
	out->tcp_sack = 0;
	if (seg_len > frame_len || seg_len < ETH_HLEN || frame_len > UINT16_MAX)
		return FP_PARSE_ERROR;
	etype = rd16(f + 12);
	if (etype == ETYPE_VLAN) {
		if (seg_len < ETH_HLEN + VLAN_HLEN)
			return FP_PARSE_ERROR;
		out->tagged = 1;
		out->key.vlan = rd16(f + 14) & 0x0fff;
		etype = rd16(f + 16);
		off += VLAN_HLEN;
	}
	out->l3_off = (uint16_t)off;
	switch (etype) {
	case ETYPE_IPV4:
		return parse_ipv4(f, seg_len, frame_len, off, out);
	case ETYPE_IPV6:
		return parse_ipv6(f, seg_len, frame_len, off, out);
	default:
		return FP_PARSE_NON_IP;
	}
}

void
fp_key_reverse(const struct fc_key *key, struct fc_key *out)
{
	const struct fc_key copy = *key;	/* out may be key */
	const struct fc_key *k = &copy;

	*out = copy;
	memcpy(out->src, k->dst, 16);
	memcpy(out->dst, k->src, 16);
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		switch (k->dport) {
		case 8: out->dport = 0; break;
		case 0: out->dport = 8; break;
		case 128: out->dport = 129; break;
		case 129: out->dport = 128; break;
		}
		return;
	}
	out->sport = k->dport;
	out->dport = k->sport;
}

char *
fp_key_format(const struct fc_key *k, char *buf, unsigned int len)
{
	return fc_key_format(k, buf, len);
}
