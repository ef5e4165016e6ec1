/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_tlscap: frames to TCP segments (their headers read by fc_seg),
 * segments to ordered stream bytes per flow direction (flow_segment),
 * stream bytes to fc_tls; UDP datagrams that start with a QUIC Initial to
 * fc_quic, per flow.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <pcap/pcap.h>

#include "fc_quic.h"
#include "fc_seg.h"
#include "fc_tlscap.h"

#define HOLD_MAX   (64 * 1024)	/* out-of-order bytes held per flow direction */
#define TABLE_SIZE 4096		/* hash buckets */

/* One direction of a TCP flow.  Hashed over key; flow_find() and key_hash() change with it. */
struct key {
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;
	uint16_t dport;
	uint8_t family;
	uint8_t proto;		/* 6 TCP, 17 UDP */
	uint8_t pad[2];
};
_Static_assert(sizeof(struct key) == 40, "struct key has no padding");

struct seg {
	struct seg *next;
	uint32_t off;		/* from the start of the stream */
	uint32_t len;
	uint8_t data[];
};

enum flow_state {
	FLOW_READING,	/* bytes go to the parser */
	FLOW_DECIDED,	/* reported or not a hello: later bytes ignored */
};

struct flow {
	struct flow *next;
	struct key key;
	enum flow_state state;
	bool isn_known;
	uint32_t isn;		/* sequence number of the stream's first byte */
	uint32_t fed;		/* stream bytes given to the parser */
	uint32_t held;		/* bytes in segs */
	struct seg *segs;	/* out of order, sorted by off */
	struct fc_tls_hello *hello;	/* while reading, once data came */
	struct fc_quic_hello *quic;	/* UDP: while reading, once an Initial came */
};

struct walk {
	struct flow *table[TABLE_SIZE];
	fc_tlscap_fn *fn;
	void *arg;
	struct fc_tlscap_stats st;
	int reported;
	int stop;		/* fn's non-zero answer */
	const struct pcap_pkthdr *ph;
};

struct tcpseg {
	struct key key;
	uint32_t seq;
	uint8_t flags;
	const uint8_t *data;
	uint32_t len;
};

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04

static int
seterr(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

static uint16_t
be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- the flow table ---- */

static uint32_t
key_hash(const struct key *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % TABLE_SIZE;
}

static struct flow *
flow_find(struct walk *w, const struct key *k, bool make)
{
	struct flow **head = &w->table[key_hash(k)], *f;

	for (f = *head; f != NULL; f = f->next)
		if (memcmp(&f->key, k, sizeof(*k)) == 0)
			return f;
	if (!make)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return NULL;
	f->key = *k;
	f->next = *head;
	*head = f;
	return f;
}

/* What a flow reading a hello no longer needs once decided. */
static void
flow_release(struct flow *f)
{
	while (f->segs != NULL) {
		struct seg *s = f->segs;

		f->segs = s->next;
		free(s);
	}
	f->held = 0;
	free(f->hello);
	f->hello = NULL;
	free(f->quic);
	f->quic = NULL;
	f->state = FLOW_DECIDED;
}

static void
report(struct walk *w, struct flow *f, int rc)
{
	struct fc_tls_hello *h = f->quic != NULL ? &f->quic->hello : f->hello;
	struct fc_tlscap_hello ch = {
		.family = f->key.family == 4 ? AF_INET : AF_INET6,
		.sport = f->key.sport,
		.dport = f->key.dport,
		.transport = f->quic != NULL ? 'q' : 't',
		.frame = w->st.frames,
		.ts = w->ph != NULL ? w->ph->ts : (struct timeval){ 0, 0 },
		.rc = rc,
		.hello = h,
	};

	memcpy(ch.src, f->key.src, sizeof(ch.src));
	memcpy(ch.dst, f->key.dst, sizeof(ch.dst));
	if (rc == -EAGAIN && f->quic != NULL)
		snprintf(h->err, sizeof(h->err), "the capture ended %u bytes into the ClientHello "
			 "(%u Initials read)", f->quic->fed, f->quic->packets);
	else if (rc == -EAGAIN)
		snprintf(h->err, sizeof(h->err), "the stream ended %u bytes into the ClientHello",
			 f->fed);
	else if (f->quic != NULL && rc != 0)
		snprintf(h->err, sizeof(h->err), "%s", f->quic->err);
	w->reported++;
	if (w->stop == 0)
		w->stop = w->fn(w->arg, &ch);
}

/* Stream bytes in order: to the parser, and what it answers. */
static void
flow_feed(struct walk *w, struct flow *f, const uint8_t *data, uint32_t len)
{
	int rc;

	if (f->hello == NULL) {
		f->hello = malloc(sizeof(*f->hello));
		if (f->hello == NULL) {
			w->stop = -ENOMEM;
			return;
		}
		fc_tls_init(f->hello);
	}
	rc = fc_tls_feed(f->hello, data, len, NULL);
	f->fed += len;
	if (rc == -EAGAIN)
		return;
	if (rc != -ENOMSG)
		report(w, f, rc);
	flow_release(f);
}

/* A segment of one direction: in order, held for later, or already had. */
static void
flow_segment(struct walk *w, struct flow *f, const struct tcpseg *s)
{
	uint32_t off, skip;

	if (s->flags & TH_SYN) {
		f->isn = s->seq + 1;
		f->isn_known = true;
		return;	/* data on a SYN (TFO) is not read */
	}
	if (!f->isn_known) {
		f->isn = s->seq;
		f->isn_known = true;
	}
	off = s->seq - f->isn;
	if (off > UINT32_MAX / 2 || off + s->len <= f->fed)
		return;	/* before the stream's start, or had already */
	if (off > f->fed) {
		struct seg **pp = &f->segs, *n;

		if (f->held + s->len > HOLD_MAX) {
			w->st.dropped += s->len;
			return;
		}
		n = malloc(sizeof(*n) + s->len);
		if (n == NULL) {
			w->stop = -ENOMEM;
			return;
		}
		n->off = off;
		n->len = s->len;
		memcpy(n->data, s->data, s->len);
		while (*pp != NULL && (*pp)->off < off)
			pp = &(*pp)->next;
		n->next = *pp;
		*pp = n;
		f->held += s->len;
		return;
	}
	skip = f->fed - off;
	flow_feed(w, f, s->data + skip, s->len - skip);
	/* held segments now in reach */
	while (f->state == FLOW_READING && f->segs != NULL && f->segs->off <= f->fed) {
		struct seg *h = f->segs;

		f->segs = h->next;
		f->held -= h->len;
		if (h->off + h->len > f->fed)
			flow_feed(w, f, h->data + (f->fed - h->off), h->off + h->len - f->fed);
		free(h);
	}
}

static void
tcp_segment(struct walk *w, const struct tcpseg *s)
{
	struct flow *f = flow_find(w, &s->key, s->len > 0 || (s->flags & TH_SYN));

	if (f == NULL) {
		if (s->len > 0 || (s->flags & TH_SYN))
			w->stop = -ENOMEM;
		return;
	}
	if (f->state != FLOW_READING)
		return;
	if (s->len > 0 || (s->flags & TH_SYN))
		flow_segment(w, f, s);
	if (f->state == FLOW_READING && (s->flags & (TH_FIN | TH_RST)) && f->fed > 0) {
		report(w, f, -EAGAIN);
		flow_release(f);
	}
}

/* ---- QUIC ---- */

/* One UDP datagram with a QUIC Initial at its start (the caller checked). */
static void
quic_datagram(struct walk *w, const struct key *k, const uint8_t *d, uint32_t len)
{
	struct key rev = *k;
	struct flow *f;
	int rc;

	memcpy(rev.src, k->dst, 16);
	memcpy(rev.dst, k->src, 16);
	rev.sport = k->dport;
	rev.dport = k->sport;
	if (flow_find(w, &rev, false) != NULL)
		return;		/* the server's: its client spoke first */
	f = flow_find(w, k, true);
	if (f == NULL) {
		w->stop = -ENOMEM;
		return;
	}
	if (f->state != FLOW_READING)
		return;
	if (f->quic == NULL) {
		f->quic = malloc(sizeof(*f->quic));
		if (f->quic == NULL) {
			w->stop = -ENOMEM;
			return;
		}
		fc_quic_init(f->quic);
	}
	w->st.quic_initials++;
	rc = fc_quic_feed(f->quic, d, len);
	if (rc == -EAGAIN || ((rc == -EPROTO || rc == -E2BIG) && f->quic->packets > 0))
		return;	/* (a datagram its server drops: the next is read) */
	if (rc == -EPROTO || rc == -E2BIG)
		w->st.quic_undecrypted++;	/* a server's, or damaged: not a client's hello */
	else if (rc != -ENOMSG)
		report(w, f, rc);
	flow_release(f);
}

/* ---- frames to segments (fc_seg reads the headers) ---- */

static void
ip_parse(struct walk *w, const uint8_t *p, uint32_t caplen)
{
	struct fc_seg g;
	struct key k = { 0 };

	switch (fc_seg_ip(p, caplen, &g)) {
	case FC_SEG_FRAGMENT:
		w->st.fragments++;
		return;
	case FC_SEG_OTHER:
		w->st.other++;
		return;
	case FC_SEG_OK:
		break;
	}
	memcpy(k.src, g.src, sizeof(k.src));
	memcpy(k.dst, g.dst, sizeof(k.dst));
	k.sport = g.sport;
	k.dport = g.dport;
	k.family = g.family;
	k.proto = g.proto;
	if (g.proto == 17) {
		if (!fc_quic_is_initial(p + g.poff, g.pcap))
			return;		/* UDP, not a QUIC Initial: not ours */
		if (!g.whole) {
			w->st.truncated++;
			return;
		}
		quic_datagram(w, &k, p + g.poff, g.plen);
		return;
	}
	if (!g.whole) {
		w->st.truncated++;
		return;
	}
	struct tcpseg s = { .key = k, .seq = g.seq, .flags = g.flags, .data = p + g.poff,
			    .len = g.plen };

	w->st.segments += s.len > 0;
	tcp_segment(w, &s);
}

/* The network layer of a frame by link type: its offset, or -1 if not IP. */
static int
l3_offset(int dlt, const uint8_t *p, uint32_t caplen)
{
	uint32_t off;
	uint16_t type;

	switch (dlt) {
	case DLT_EN10MB:
		return fc_seg_ether(p, caplen);
	case DLT_LINUX_SLL:
		if (caplen < 16)
			return -1;
		off = 16;
		type = be16(p + 14);
		break;
	case DLT_LINUX_SLL2:
		if (caplen < 20)
			return -1;
		off = 20;
		type = be16(p);
		break;
	case DLT_NULL:
		if (caplen < 4)
			return -1;
		/* the address family in the capturing host's order: 2 is IPv4, 24, 28, 30 IPv6 */
		return p[0] == 2 || p[3] == 2 || p[0] == 24 || p[0] == 28 || p[0] == 30 ||
		       p[3] == 24 || p[3] == 28 || p[3] == 30 ? 4 : -1;
	default:	/* DLT_RAW, DLT_IPV4, DLT_IPV6 */
		return 0;
	}
	return type == 0x0800 || type == 0x86dd ? (int)off : -1;
}

int
fc_tlscap_read(const char *path, fc_tlscap_fn *fn, void *arg, struct fc_tlscap_stats *stats,
	       char *err, size_t errlen)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *ph;
	const u_char *p;
	struct walk *w;
	pcap_t *pc;
	int dlt, rc = 0;

	pc = pcap_open_offline(path, perr);
	if (pc == NULL)
		return seterr(err, errlen, -EIO, "%s: %s", path, perr);
	dlt = pcap_datalink(pc);
	if (dlt != DLT_EN10MB && dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2 && dlt != DLT_NULL &&
	    dlt != DLT_RAW && dlt != DLT_IPV4 && dlt != DLT_IPV6) {
		rc = seterr(err, errlen, -EPROTONOSUPPORT, "%s: link type %s is not read", path,
			    pcap_datalink_val_to_name(dlt) ? pcap_datalink_val_to_name(dlt) : "?");
		pcap_close(pc);
		return rc;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		pcap_close(pc);
		return seterr(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	w->fn = fn;
	w->arg = arg;
	while (w->stop == 0 && (rc = pcap_next_ex(pc, &ph, &p)) == 1) {
		int off;

		w->st.frames++;
		w->ph = ph;
		off = l3_offset(dlt, p, ph->caplen);
		if (off < 0)
			w->st.other++;
		else
			ip_parse(w, p + off, ph->caplen - (uint32_t)off);
	}
	if (w->stop == 0 && rc == -1)
		w->stop = seterr(err, errlen, -EIO, "%s: %s", path, pcap_geterr(pc));
	/* hellos the capture ended in the middle of; then everything freed */
	w->ph = NULL;
	for (unsigned int b = 0; b < TABLE_SIZE; b++) {
		while (w->table[b] != NULL) {
			struct flow *f = w->table[b];

			if (f->state == FLOW_READING &&
			    (f->quic != NULL ? f->quic->packets > 0 : f->fed > 0))
				report(w, f, -EAGAIN);
			w->table[b] = f->next;
			flow_release(f);
			free(f);
		}
	}
	if (w->stop == -ENOMEM)
		seterr(err, errlen, -ENOMEM, "%s: out of memory", path);
	rc = w->stop != 0 ? w->stop : w->reported;
	if (stats != NULL)
		*stats = w->st;
	free(w);
	pcap_close(pc);
	return rc;
}
