/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_frag: see fc_frag.h.  Each rule names the Linux function it follows
 * (6.18: net/ipv4/ip_fragment.c, net/ipv6/reassembly.c,
 * net/ipv4/inet_fragment.c, include/net/ipv6_frag.h).
 */
#include "fc_frag.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The header fields' bits, as include/net/ip.h and include/net/ipv6.h name them. */
#define IP4_DF 0x4000u
#define IP4_MF 0x2000u
#define IP4_OFFSET 0x1fffu
#define IP6_OFFSET 0xfff8u
#define IP6_MF 0x0001u
#define IP_MAXLEN 65535u		/* IPv4's total length, IPv6's payload length (IPV6_MAXPLEN) */
#define IP4_MAX_DIST 64u		/* ipfrag_max_dist's default (ip_frag_too_far) */
#define IP4_HDR_MIN 20u
#define IP6_HDR 40u
#define IP6_FRAG_HDR 8u
#define PIECES_MIN 4u			/* a new datagram's room, doubled as it fills */

enum nexthdr {
	NH_HOP = 0,
	NH_TCP = 6,
	NH_UDP = 17,
	NH_ROUTING = 43,
	NH_FRAGMENT = 44,
	NH_AUTH = 51,
	NH_ICMP6 = 58,
	NH_NONE = 59,
	NH_DEST = 60,
};

/* inet_frag_queue's flags that decide when a datagram is whole. */
enum {
	FIRST_IN = 1,
	LAST_IN = 2,
};

/*
 * A datagram's key: IPv4's (src, dst, id, protocol) as ip_find builds
 * frag_v4_compare_key, IPv6's (src, dst, id) as fq_find builds
 * frag_v6_compare_key (proto 0).  Compared as bytes: no padding, unused
 * bytes 0.  Change with it: parse4(), parse6().
 */
struct frag_key {
	uint8_t src[16];	/* IPv4 in the first 4 bytes */
	uint8_t dst[16];
	uint32_t id;		/* as on the wire, read big-endian */
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;		/* IPv4's protocol; IPv6: 0 */
	uint8_t pad[2];
};
_Static_assert(sizeof(struct frag_key) == 40, "a key has no padding");

/* Where a held fragment's parts sit, beside its fc_frag_piece. */
struct place {
	uint32_t ip;		/* its IP header, from the frame's first byte */
	uint32_t hlen;		/* IPv4: the header; IPv6: the headers before the Fragment header */
	uint32_t nhoff;		/* IPv6: the next-header byte naming the Fragment header */
	uint32_t data;		/* its payload, from the frame's first byte */
	uint32_t off, end;	/* its bytes in the datagram, as Linux trims them */
};

/*
 * Adjacent fragments, as inet_frag_queue_insert keeps them in its tree: a
 * fragment that starts where the last ends grows the last run; any other
 * makes a run of its own, and runs are never joined.  A fragment inside
 * one run is a duplicate, so which fragments are duplicates depends on
 * their order, as it does in Linux.
 */
struct run {
	uint32_t start, end;
};

/* Frames held: pieces, places and runs side by side, cap of each. */
struct held {
	struct fc_frag_piece *pieces;	/* arrival order */
	struct place *places;
	struct run *runs;		/* by offset; at most one a piece */
	unsigned int n, nruns, cap;
};

/* One datagram being put together: an inet_frag_queue. */
struct dgram {
	struct frag_key key;
	uint64_t since_ms;		/* its first fragment, or its restart: its timer */
	struct held h;
	uint64_t bytes;			/* its frames and records, against max_bytes */
	uint32_t len;			/* q.len: the end as known so far */
	uint32_t meat;			/* q.meat: the bytes held */
	uint32_t max_size;		/* IPv4: the largest fragment, and the largest with DF */
	uint32_t max_df_size;
	uint32_t dist;			/* IPv4: fragments of its source since its last one */
	uint8_t flags;			/* FIRST_IN, LAST_IN */
	uint8_t ecn;			/* 1 << each ECN value its fragments carried */
};

struct fc_frag {
	struct fc_frag_params p;
	struct dgram *d;		/* p.max_datagrams slots, the first st.held of them in use */
	struct held gone;		/* the frames last given out: freed at the next call */
	uint8_t *pkt;			/* FC_FRAG_PACKET_MAX: the last whole packet */
	struct fc_frag_stats st;
};

/* One fragment as read from its frame. */
struct frag {
	struct frag_key key;
	struct place at;
	bool last;		/* MF (M) clear */
	bool df;		/* IPv4's DF */
	bool atomic;		/* IPv6: offset 0 and M clear */
	uint8_t ecn;		/* ip4_frag_ecn, ip6_frag_ecn: 1 << its ECN bits */
};

/*
 * ip_frag_ecn_table (inet_fragment.c): from the ECN values a datagram's
 * fragments carried (bit 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE) to the CE to
 * set on the whole packet, or 0xff: Not-ECT mixed with another, dropped.
 */
#define ECN_DROP 0xffu
static const uint8_t ecn_table[16] = {
	[0x8 | 0x4] = 3,
	[0x8 | 0x2] = 3,
	[0x8 | 0x4 | 0x2] = 3,
	[0x1 | 0x8] = ECN_DROP,
	[0x1 | 0x4] = ECN_DROP,
	[0x1 | 0x2] = ECN_DROP,
	[0x1 | 0x4 | 0x2] = ECN_DROP,
	[0x1 | 0x8 | 0x4] = ECN_DROP,
	[0x1 | 0x8 | 0x2] = ECN_DROP,
	[0x1 | 0x8 | 0x4 | 0x2] = ECN_DROP,
};

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

static void
wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The one's complement sum of an IPv4 header, folded: 0xffff when its checksum holds. */
static uint16_t
sum16(const uint8_t *p, uint32_t len)
{
	uint32_t s = 0;

	for (uint32_t i = 0; i + 1 < len; i += 2)
		s += be16(p + i);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* ---- frames held ------------------------------------------------------------ */

/* Room for cap frames in h; 0 or -ENOMEM (h unchanged but for room). */
static int
held_reserve(struct held *h, unsigned int cap)
{
	void *p;

	if (cap <= h->cap)
		return 0;
	if ((p = realloc(h->pieces, cap * sizeof(*h->pieces))) == NULL)
		return -ENOMEM;
	h->pieces = p;
	if ((p = realloc(h->places, cap * sizeof(*h->places))) == NULL)
		return -ENOMEM;
	h->places = p;
	if ((p = realloc(h->runs, cap * sizeof(*h->runs))) == NULL)
		return -ENOMEM;
	h->runs = p;
	h->cap = cap;
	return 0;
}

/* Free h's frames and records; h is then empty. */
static void
held_free(struct held *h)
{
	for (unsigned int i = 0; i < h->n; i++)
		free((void *)(uintptr_t)h->pieces[i].frame);	/* our copy, const to the caller */
	free(h->pieces);
	free(h->places);
	free(h->runs);
	memset(h, 0, sizeof(*h));
}

static void
held_append(struct held *h, const struct fc_frag_piece *pc, const struct place *at)
{
	h->pieces[h->n] = *pc;
	h->places[h->n] = *at;
	h->n++;
}

enum insert_result {
	INSERT_OK,
	INSERT_DUP,
	INSERT_OVERLAP,
};

/*
 * inet_frag_queue_insert: [off, end) among the runs.  Past the last run's
 * end it is appended (growing the last run when it starts at its end)
 * unless it starts inside it; before that, a fragment inside one run is a
 * duplicate, one touching any run another way an overlap (RFC 5722,
 * Errata 3089, for IPv4 too since Linux 4.19), else a run of its own.
 * Room for one more run is the caller's.
 */
static enum insert_result
insert(struct held *h, uint32_t off, uint32_t end)
{
	struct run *r = h->runs;
	unsigned int lo = 0, hi;

	if (h->nruns == 0 || r[h->nruns - 1].end < end) {
		if (h->nruns > 0 && off < r[h->nruns - 1].end)
			return INSERT_OVERLAP;
		if (h->nruns > 0 && off == r[h->nruns - 1].end)
			r[h->nruns - 1].end = end;
		else
			r[h->nruns++] = (struct run){ off, end };
		return INSERT_OK;
	}
	/* the first run that ends past off: the last one does */
	hi = h->nruns - 1;
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (r[mid].end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (end > r[lo].start)
		return off >= r[lo].start && end <= r[lo].end ? INSERT_DUP : INSERT_OVERLAP;
	memmove(r + lo + 1, r + lo, (h->nruns - lo) * sizeof(*r));
	r[lo] = (struct run){ off, end };
	h->nruns++;
	return INSERT_OK;
}

/* ---- reading a fragment ------------------------------------------------------ */

/*
 * An IPv4 fragment: 0 (*g filled in), -ENOMSG (not a fragment, or too
 * short to tell) or -EBADMSG (a header ip_rcv_core drops: shorter than 20
 * bytes or past the frame, a bad checksum, a total length past the frame
 * or inside the header).
 */
static int
parse4(const uint8_t *f, uint32_t len, uint32_t ip, struct frag *g)
{
	const uint8_t *p = f + ip;
	uint32_t cap = len - ip, ihl, tot, fo;

	if (cap < IP4_HDR_MIN)
		return -ENOMSG;
	fo = be16(p + 6);
	if (!(fo & (IP4_MF | IP4_OFFSET)))	/* ip_is_fragment */
		return -ENOMSG;
	ihl = (uint32_t)(p[0] & 0xf) * 4;
	tot = be16(p + 2);
	if (ihl < IP4_HDR_MIN || ihl > cap || sum16(p, ihl) != 0xffff || tot > cap || tot < ihl)
		return -EBADMSG;
	memset(g, 0, sizeof(*g));
	memcpy(g->key.src, p + 12, 4);
	memcpy(g->key.dst, p + 16, 4);
	g->key.id = be16(p + 4);
	g->key.family = 4;
	g->key.proto = p[9];
	g->at = (struct place){ .ip = ip, .hlen = ihl, .data = ip + ihl,
				.off = (fo & IP4_OFFSET) << 3 };
	/* ip_frag_queue: the end by the total length (ip_rcv_core trimmed the frame to it) */
	g->at.end = g->at.off + tot - ihl;
	g->last = !(fo & IP4_MF);
	g->df = fo & IP4_DF;
	g->ecn = (uint8_t)(1u << (p[1] & 3));
	return 0;
}

/*
 * ipv6frag_thdr_truncated (include/net/ipv6_frag.h) over ipv6_skip_exthdr:
 * a first fragment whose packet of plen bytes (from the IPv6 header) ends
 * before the upper-layer header's first bytes (TCP 20, UDP and ICMPv6 8,
 * another 1).  A header chain that cannot be read to its end is not
 * truncated, as there.
 */
static bool
thdr_truncated(const uint8_t *p, uint32_t plen)
{
	uint32_t off = IP6_HDR, hl;
	uint8_t nh = p[6];

	while (nh == NH_HOP || nh == NH_ROUTING || nh == NH_FRAGMENT || nh == NH_AUTH ||
	       nh == NH_NONE || nh == NH_DEST) {
		if (nh == NH_NONE || off + 2 > plen)
			return false;
		if (nh == NH_FRAGMENT) {
			if (off + 4 > plen || (be16(p + off + 2) & IP6_OFFSET))
				return false;	/* not a first fragment: nothing to check */
			hl = IP6_FRAG_HDR;
		} else if (nh == NH_AUTH) {
			hl = ((uint32_t)p[off + 1] + 2) * 4;
		} else {
			hl = ((uint32_t)p[off + 1] + 1) * 8;
		}
		nh = p[off];
		off += hl;
	}
	switch (nh) {
	case NH_TCP:
		off += 20;
		break;
	case NH_UDP:
	case NH_ICMP6:
		off += 8;
		break;
	default:
		off += 1;
	}
	return off > plen;
}

/*
 * An IPv6 fragment: its Fragment header after the headers fc_seg steps
 * over (hop-by-hop, routing, destination options).  0 (*g filled in),
 * -ENOMSG (no Fragment header, or the chain runs past the frame),
 * -EBADMSG (ip6_rcv_core: a payload past the frame; ipv6_frag_rcv: a
 * payload length of 0, a Fragment header past the payload) or -EPROTO
 * (ipv6_frag_rcv, RFC 7112: a first fragment without the upper-layer
 * header; dropped before its datagram is looked up).
 */
static int
parse6(const uint8_t *f, uint32_t len, uint32_t ip, struct frag *g)
{
	const uint8_t *p = f + ip;
	uint32_t cap = len - ip, off = IP6_HDR, nhoff = 6, plen, fo;
	uint8_t nh;

	if (cap < IP6_HDR)
		return -ENOMSG;
	nh = p[6];
	while (nh == NH_HOP || nh == NH_ROUTING || nh == NH_DEST) {
		if (off + 8 > cap)
			return -ENOMSG;
		nhoff = off;
		nh = p[off];
		off += 8 + (uint32_t)p[off + 1] * 8;
	}
	if (nh != NH_FRAGMENT)
		return -ENOMSG;
	plen = IP6_HDR + be16(p + 4);
	if (plen == IP6_HDR || plen > cap || off + IP6_FRAG_HDR > plen)
		return -EBADMSG;
	fo = be16(p + off + 2);
	memset(g, 0, sizeof(*g));
	memcpy(g->key.src, p + 8, 16);
	memcpy(g->key.dst, p + 24, 16);
	g->key.id = be32(p + off + 4);
	g->key.family = 6;
	g->at = (struct place){ .ip = ip, .hlen = off, .nhoff = nhoff,
				.data = ip + off + IP6_FRAG_HDR, .off = fo & IP6_OFFSET };
	/* ip6_frag_queue: the end by the payload length */
	g->at.end = g->at.off + plen - off - IP6_FRAG_HDR;
	g->last = !(fo & IP6_MF);
	g->atomic = !(fo & (IP6_OFFSET | IP6_MF));
	g->ecn = (uint8_t)(1u << ((p[1] >> 4) & 3));
	if (!g->atomic && thdr_truncated(p, plen))
		return -EPROTO;
	return 0;
}

/*
 * After a Fragment header removed, another one past destination options
 * and routing headers in the len bytes at p, nh naming the first: Linux
 * drops the packet (ipv6_frag_rcv refuses a packet IP6SKB_FRAGMENTED).
 */
static bool
fragment_again(uint8_t nh, const uint8_t *p, uint32_t len)
{
	uint32_t off = 0;

	while (nh == NH_HOP || nh == NH_ROUTING || nh == NH_DEST) {
		if (off + 2 > len)
			return false;
		nh = p[off];
		off += 8 + (uint32_t)p[off + 1] * 8;
	}
	return nh == NH_FRAGMENT;
}

/* ---- results ----------------------------------------------------------------- */

static enum fc_frag_result
refuse(uint64_t *why)
{
	(*why)++;
	return FC_FRAG_REFUSED;
}

/* Stop holding d: its frames go to fr->gone and *out; d's slot is reused. */
static void
forget(struct fc_frag *fr, struct dgram *d, struct fc_frag_datagram *out)
{
	fr->gone = d->h;
	fr->st.bytes -= d->bytes;
	*d = fr->d[--fr->st.held];
	out->pieces = fr->gone.pieces;
	out->n = fr->gone.n;
}

/* inet_frag_kill: d discarded with every frame, pc (not yet held) among them. */
static enum fc_frag_result
discard(struct fc_frag *fr, struct dgram *d, const struct fc_frag_piece *pc,
	const struct place *at, uint64_t *why, struct fc_frag_datagram *out)
{
	held_append(&d->h, pc, at);
	forget(fr, d, out);
	(*why)++;
	return FC_FRAG_DISCARDED;
}

/*
 * ip_frag_reasm, ip6_frag_reasm: d holds every byte; the packet built in
 * fr->pkt from its first fragment's headers and every fragment's payload,
 * unless its ECN values mix, it is past 65535 bytes, or (IPv6) it holds a
 * second Fragment header.
 */
static enum fc_frag_result
reassemble(struct fc_frag *fr, struct dgram *d, struct fc_frag_datagram *out)
{
	const struct place *head;
	const uint8_t *hp;
	uint8_t ecn = ecn_table[d->ecn], *pkt = fr->pkt;
	uint32_t total;
	unsigned int first = 0;

	/* the first fragment (FIRST_IN says there is one): its headers head the packet */
	while (d->h.places[first].off != 0)
		first++;
	head = &d->h.places[first];
	hp = d->h.pieces[first].frame + head->ip;
	if (ecn == ECN_DROP) {
		forget(fr, d, out);
		fr->st.discarded_other++;
		return FC_FRAG_DISCARDED;
	}
	total = head->hlen + d->len;
	if (total - (d->key.family == 6 ? IP6_HDR : 0) > IP_MAXLEN) {
		forget(fr, d, out);
		fr->st.discarded_oversize++;
		return FC_FRAG_DISCARDED;
	}
	memcpy(pkt, hp, head->hlen);
	for (unsigned int i = 0; i < d->h.n; i++) {
		const struct place *at = &d->h.places[i];

		memcpy(pkt + head->hlen + at->off, d->h.pieces[i].frame + at->data, at->end - at->off);
	}
	if (d->key.family == 4) {
		/* DF kept only when the largest fragment had it, as ip_frag_reasm keeps it */
		wr16(pkt + 2, total);
		pkt[1] |= ecn;
		wr16(pkt + 6, d->max_df_size == d->max_size ? IP4_DF : 0);
		wr16(pkt + 10, 0);
		wr16(pkt + 10, (uint16_t)~sum16(pkt, head->hlen));
	} else {
		pkt[head->nhoff] = hp[head->hlen];	/* the Fragment header's next header */
		wr16(pkt + 4, total - IP6_HDR);
		pkt[1] |= (uint8_t)(ecn << 4);
		if (fragment_again(pkt[head->nhoff], pkt + head->hlen, d->len)) {
			forget(fr, d, out);
			fr->st.discarded_headers++;
			return FC_FRAG_DISCARDED;
		}
	}
	forget(fr, d, out);
	out->ip = pkt;
	out->len = total;
	fr->st.whole++;
	return FC_FRAG_WHOLE;
}

/*
 * ipv6_frag_rcv: offset 0 and M clear is no fragment at all: the packet
 * goes on with its Fragment header stepped over, no datagram looked up
 * (RFC 6946); a second Fragment header after it is dropped.
 */
static enum fc_frag_result
atomic_fragment(struct fc_frag *fr, const uint8_t *frame, uint32_t len, uint32_t tag,
		const struct frag *g, struct fc_frag_datagram *out)
{
	const uint8_t *p = frame + g->at.ip;
	uint32_t hl = g->at.hlen, plen = g->at.end;	/* the end is the payload's length */
	struct fc_frag_piece pc = { .len = len, .tag = tag };
	uint8_t *copy;

	if (fragment_again(p[hl], p + hl + IP6_FRAG_HDR, plen))
		return refuse(&fr->st.refused_malformed);
	if ((copy = malloc(len ? len : 1)) == NULL || held_reserve(&fr->gone, 1) != 0) {
		free(copy);
		return refuse(&fr->st.refused_full);
	}
	memcpy(copy, frame, len);
	pc.frame = copy;
	held_append(&fr->gone, &pc, &g->at);
	memcpy(fr->pkt, p, hl);
	fr->pkt[g->at.nhoff] = p[hl];
	memcpy(fr->pkt + hl, p + hl + IP6_FRAG_HDR, plen);
	wr16(fr->pkt + 4, hl - IP6_HDR + plen);
	out->ip = fr->pkt;
	out->len = hl + plen;
	out->pieces = fr->gone.pieces;
	out->n = fr->gone.n;
	fr->st.whole++;
	return FC_FRAG_WHOLE;
}

static struct dgram *
find(struct fc_frag *fr, const struct frag_key *k)
{
	for (unsigned int i = 0; i < fr->st.held; i++)
		if (memcmp(&fr->d[i].key, k, sizeof(*k)) == 0)
			return &fr->d[i];
	return NULL;
}

/*
 * ip_frag_queue, ip6_frag_queue: the fragment g of frame into its
 * datagram.  What can fail (memory) is taken first, so that a refusal
 * leaves everything as it was.
 */
static enum fc_frag_result
queue(struct fc_frag *fr, const uint8_t *frame, uint32_t len, uint32_t tag, uint64_t now_ms,
      const struct frag *g, struct fc_frag_datagram *out)
{
	struct dgram *d = find(fr, &g->key);
	uint64_t cost = (uint64_t)len + FC_FRAG_FRAME_COST;
	struct fc_frag_piece pc = { .len = len, .tag = tag };
	struct place at = g->at;
	struct held fresh = { 0 };
	bool far;
	uint8_t *copy;

	/* inet_frag_find: over the bound no fragment is queued, a held datagram's neither */
	if (fr->st.bytes + cost > fr->p.max_bytes || (d == NULL && fr->st.held == fr->p.max_datagrams))
		return refuse(&fr->st.refused_full);
	if (g->key.family == 6) {
		/* ip6_frag_queue: dropped alone (a Parameter Problem), the datagram kept */
		if (at.end > IP_MAXLEN)
			return refuse(&fr->st.refused_too_long);
		if (!g->last && (at.end & 7))
			return refuse(&fr->st.refused_unaligned);
	} else if (!g->last) {
		at.end &= ~7u;	/* ip_frag_queue trims a non-last IPv4 fragment to 8 bytes */
	}
	/* ip_frag_too_far: IPv4, more than 64 fragments of its source since its last one */
	far = d != NULL && g->key.family == 4 && d->dist >= IP4_MAX_DIST;
	if ((copy = malloc(len ? len : 1)) == NULL ||
	    ((d == NULL || far) && held_reserve(&fresh, PIECES_MIN) != 0) ||
	    (d != NULL && held_reserve(&d->h, d->h.n < d->h.cap ? d->h.cap : d->h.cap * 2) != 0)) {
		free(copy);
		held_free(&fresh);
		return refuse(&fr->st.refused_full);
	}
	memcpy(copy, frame, len);
	pc.frame = copy;
	if (g->key.family == 4)
		for (unsigned int i = 0; i < fr->st.held; i++)
			if (&fr->d[i] != d && fr->d[i].key.family == 4 &&
			    memcmp(fr->d[i].key.src, g->key.src, 4) == 0)
				fr->d[i].dist++;
	if (d == NULL) {
		d = &fr->d[fr->st.held++];
		memset(d, 0, sizeof(*d));
		d->key = g->key;
		d->since_ms = now_ms;
		d->h = fresh;
	} else if (far && at.end == at.off) {
		/* ip_frag_reinit, then an empty fragment: every frame dropped */
		held_free(&fresh);
		return discard(fr, d, &pc, &at, &fr->st.discarded_other, out);
	} else if (far) {
		/*
		 * ip_frag_reinit: the frames held let go, the timer started
		 * again; max_size and max_df_size are kept, as there.  What
		 * follows holds this fragment: an empty datagram discards none
		 * but an empty fragment (above) and is not whole with one
		 * IPv4 fragment.
		 */
		fr->gone = d->h;
		fr->st.bytes -= d->bytes;
		d->h = fresh;
		d->bytes = 0;
		d->len = d->meat = 0;
		d->flags = d->ecn = 0;
		d->since_ms = now_ms;
		out->pieces = fr->gone.pieces;
		out->n = fr->gone.n;
		fr->st.restarted++;
	}
	d->dist = 0;
	if (g->last) {
		/* bits held past its end, or another last fragment that ends elsewhere */
		if (at.end < d->len || ((d->flags & LAST_IN) && at.end != d->len))
			return discard(fr, d, &pc, &at, &fr->st.discarded_other, out);
		d->flags |= LAST_IN;
		d->len = at.end;
	} else if (at.end > d->len) {
		/* bits past the last fragment's end */
		if (d->flags & LAST_IN)
			return discard(fr, d, &pc, &at, &fr->st.discarded_other, out);
		d->len = at.end;
	}
	if (at.end == at.off)
		return discard(fr, d, &pc, &at, &fr->st.discarded_other, out);
	switch (insert(&d->h, at.off, at.end)) {
	case INSERT_DUP:
		/* dropped, but what it changed of the end above stays changed, as in Linux */
		free(copy);
		fr->st.duplicate++;
		return FC_FRAG_DUPLICATE;
	case INSERT_OVERLAP:
		return discard(fr, d, &pc, &at, &fr->st.discarded_overlap, out);
	case INSERT_OK:
		break;
	}
	held_append(&d->h, &pc, &at);
	d->bytes += cost;
	fr->st.bytes += cost;
	d->meat += at.end - at.off;
	d->ecn |= g->ecn;
	if (g->key.family == 4) {
		uint32_t size = at.end - at.off + at.hlen;

		if (size > d->max_size)
			d->max_size = size;
		if (g->df && size > d->max_df_size)
			d->max_df_size = size;
	}
	if (at.off == 0)
		d->flags |= FIRST_IN;
	if (d->flags == (FIRST_IN | LAST_IN) && d->meat == d->len)
		return reassemble(fr, d, out);
	return far ? FC_FRAG_RESTARTED : FC_FRAG_HELD;
}

/* ---- the API ----------------------------------------------------------------- */

struct fc_frag *
fc_frag_open(const struct fc_frag_params *p)
{
	struct fc_frag_params q = p ? *p : (struct fc_frag_params){ 0 };
	struct fc_frag *fr;

	if (q.max_datagrams == 0)
		q.max_datagrams = FC_FRAG_DATAGRAMS_DEFAULT;
	if (q.max_bytes == 0)
		q.max_bytes = FC_FRAG_BYTES_DEFAULT;
	if (q.timeout_ms == 0)
		q.timeout_ms = FC_FRAG_TIMEOUT_DEFAULT_MS;
	if (q.max_datagrams > FC_FRAG_DATAGRAMS_MAX || q.max_bytes > FC_FRAG_BYTES_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((fr = calloc(1, sizeof(*fr))) == NULL)
		return NULL;
	fr->p = q;
	fr->d = calloc(q.max_datagrams, sizeof(*fr->d));
	fr->pkt = malloc(FC_FRAG_PACKET_MAX);
	if (fr->d == NULL || fr->pkt == NULL) {
		fc_frag_close(fr);
		errno = ENOMEM;
		return NULL;
	}
	return fr;
}

void
fc_frag_close(struct fc_frag *fr)
{
	if (fr == NULL)
		return;
	held_free(&fr->gone);
	for (unsigned int i = 0; fr->d != NULL && i < fr->st.held; i++)
		held_free(&fr->d[i].h);
	free(fr->d);
	free(fr->pkt);
	free(fr);
}

enum fc_frag_result
fc_frag_add(struct fc_frag *fr, const uint8_t *frame, uint32_t len, uint32_t ip_off,
	    uint32_t tag, uint64_t now_ms, struct fc_frag_datagram *out)
{
	struct frag g;
	int rc;

	held_free(&fr->gone);
	memset(out, 0, sizeof(*out));
	if (frame == NULL || ip_off >= len)
		return FC_FRAG_NOT_FRAGMENT;
	switch (frame[ip_off] >> 4) {
	case 4:
		rc = parse4(frame, len, ip_off, &g);
		break;
	case 6:
		rc = parse6(frame, len, ip_off, &g);
		break;
	default:
		return FC_FRAG_NOT_FRAGMENT;
	}
	switch (rc) {
	case -ENOMSG:
		return FC_FRAG_NOT_FRAGMENT;
	case -EBADMSG:
		return refuse(&fr->st.refused_malformed);
	case -EPROTO:
		return refuse(&fr->st.refused_headers);
	}
	if (g.atomic)
		return atomic_fragment(fr, frame, len, tag, &g, out);
	return queue(fr, frame, len, tag, now_ms, &g, out);
}

unsigned int
fc_frag_expire(struct fc_frag *fr, uint64_t now_ms,
	       void (*fn)(void *arg, const struct fc_frag_datagram *d), void *arg)
{
	unsigned int n = 0;

	held_free(&fr->gone);
	for (unsigned int i = 0; i < fr->st.held;) {
		struct dgram *d = &fr->d[i];
		struct fc_frag_datagram out = { 0 };

		/* ip_expire, ip6frag_expire_frag_queue: timed from the first fragment */
		if (now_ms < d->since_ms || now_ms - d->since_ms < fr->p.timeout_ms) {
			i++;
			continue;
		}
		forget(fr, d, &out);	/* the last slot moves into i: looked at next */
		if (fn != NULL)
			fn(arg, &out);
		held_free(&fr->gone);
		fr->st.expired++;
		n++;
	}
	return n;
}

void
fc_frag_stats(const struct fc_frag *fr, struct fc_frag_stats *st)
{
	*st = fr->st;
}
