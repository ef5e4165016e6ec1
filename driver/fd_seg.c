/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_seg: see fd_seg.h. */
#include "fd_seg.h"

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

/* The UDP header at f + off, l4len bytes of the IP payload: 0, or -1. */
static int
udp_parse(const uint8_t *f, uint32_t len, uint32_t off, uint32_t l4len, struct fd_seg *s)
{
	uint32_t ulen;

	if (l4len < 8 || off + l4len > len || (ulen = be16(f + off + 4)) < 8 || ulen > l4len)
		return -1;
	memcpy(&s->key.sport, f + off, 2);
	memcpy(&s->key.dport, f + off + 2, 2);
	s->key.proto = 17;
	s->poff = off + 8;
	s->plen = ulen - 8;
	return 0;
}

/* The TCP header at f + off, l4len bytes of the IP payload: 0, or -1 (not a whole TCP header). */
static int
tcp_parse(const uint8_t *f, uint32_t len, uint32_t off, uint32_t l4len, struct fd_seg *s)
{
	uint32_t doff;

	s->key.proto = 6;
	if (l4len < 20 || off + l4len > len)
		return -1;
	doff = (uint32_t)(f[off + 12] >> 4) * 4;
	if (doff < 20 || doff > l4len)
		return -1;
	memcpy(&s->key.sport, f + off, 2);
	memcpy(&s->key.dport, f + off + 2, 2);
	s->seq = be32(f + off + 4);
	s->flags = f[off + 13];
	s->poff = off + doff;
	s->plen = l4len - doff;
	return 0;
}

/*
 * A frame as a TCP segment: 0, or -1 when it is none (not IP, not TCP, a
 * fragment, headers that do not hold).  The IP length bounds the segment:
 * an Ethernet frame's padding is not payload.
 */
int
fd_seg_parse(const uint8_t *f, uint32_t len, struct fd_seg *s)
{
	uint32_t off = 14, ip_len, hl;
	uint16_t type;

	memset(s, 0, sizeof(*s));
	if (len < 14)
		return -1;
	type = be16(f + 12);
	if (type == 0x8100 || type == 0x88a8) {
		if (len < 18)
			return -1;
		type = be16(f + 16);
		off = 18;
	}
	if (type == 0x0800) {
		if (len < off + 20 || (f[off] >> 4) != 4)
			return -1;
		hl = (uint32_t)(f[off] & 0xf) * 4;
		ip_len = be16(f + off + 2);
		if (hl < 20 || ip_len < hl || off + ip_len > len)
			return -1;
		if ((be16(f + off + 6) & 0x3fff) != 0 || (f[off + 9] != 6 && f[off + 9] != 17))
			return -1;	/* a fragment, or not TCP or UDP */
		s->key.family = 4;
		memcpy(s->key.src, f + off + 12, 4);
		memcpy(s->key.dst, f + off + 16, 4);
		return (f[off + 9] == 17 ? udp_parse : tcp_parse)(f, len, off + hl, ip_len - hl, s);
	}
	if (type == 0x86dd) {
		uint32_t end, at = off + 40;
		uint8_t nh;

		if (len < off + 40 || (f[off] >> 4) != 6)
			return -1;
		end = off + 40 + be16(f + off + 4);
		if (end > len)
			return -1;
		nh = f[off + 6];
		while (nh == 0 || nh == 43 || nh == 60) {	/* hop-by-hop, routing, destination */
			if (at + 8 > end)
				return -1;
			nh = f[at];
			at += 8 + (uint32_t)f[at + 1] * 8;
		}
		if ((nh != 6 && nh != 17) || at > end)
			return -1;	/* a fragment (44), or not TCP or UDP */
		s->key.family = 6;
		memcpy(s->key.src, f + off + 8, 16);
		memcpy(s->key.dst, f + off + 24, 16);
		return (nh == 17 ? udp_parse : tcp_parse)(f, len, at, end - at, s);
	}
	return -1;
}

