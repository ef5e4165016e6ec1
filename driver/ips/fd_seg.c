/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_seg: see fd_seg.h.  The headers are inspect/fc_seg's to read. */
#include "fd_seg.h"

#include <arpa/inet.h>
#include <string.h>

int
fd_seg_parse_ip(const uint8_t *ip, uint32_t len, uint32_t ipoff, struct fd_seg *s)
{
	struct fc_seg *g = &s->g;

	memset(s, 0, sizeof(*s));
	/* a packet is all there: one shorter than its IP length is no segment */
	if (fc_seg_ip(ip, len, g) != FC_SEG_OK || !g->whole)
		return -1;
	memcpy(s->key.src, g->src, sizeof(g->src));
	memcpy(s->key.dst, g->dst, sizeof(g->dst));
	s->key.sport = htons(g->sport);
	s->key.dport = htons(g->dport);
	s->key.family = g->family;
	s->key.proto = g->proto;
	s->seq = g->seq;
	s->ack = g->ack;
	s->urp = g->urp;
	s->flags = g->flags;
	s->ttl = g->ttl;
	s->ipoff = ipoff;
	s->poff = ipoff + g->poff;
	s->plen = g->plen;
	return 0;
}

int
fd_seg_parse(const uint8_t *f, uint32_t len, struct fd_seg *s)
{
	int off = fc_seg_ether(f, len);

	if (off < 0) {
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return fd_seg_parse_ip(f + off, len - (uint32_t)off, (uint32_t)off, s);
}

bool
fd_seg_csum_ok(const uint8_t *ip, const struct fd_seg *s)
{
	return fc_seg_csum_ok(ip, &s->g);
}
