/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_seg: see fd_seg.h.  The headers are inspect/fc_seg's to read. */
#include "fd_seg.h"

#include <arpa/inet.h>
#include <string.h>

#include "fc_seg.h"

int
fd_seg_parse(const uint8_t *f, uint32_t len, struct fd_seg *s)
{
	int off = fc_seg_ether(f, len);
	struct fc_seg g;

	memset(s, 0, sizeof(*s));
	/* a frame is all there: one that is shorter than its IP length is no segment */
	if (off < 0 || fc_seg_ip(f + off, len - (uint32_t)off, &g) != FC_SEG_OK || !g.whole)
		return -1;
	memcpy(s->key.src, g.src, sizeof(g.src));
	memcpy(s->key.dst, g.dst, sizeof(g.dst));
	s->key.sport = htons(g.sport);
	s->key.dport = htons(g.dport);
	s->key.family = g.family;
	s->key.proto = g.proto;
	s->seq = g.seq;
	s->flags = g.flags;
	s->poff = (uint32_t)off + g.poff;
	s->plen = g.plen;
	return 0;
}
