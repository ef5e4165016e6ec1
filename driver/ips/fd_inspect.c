/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect: see fd_inspect.h.
 *
 * Rooms: the table (a hash of entries, and a list of them oldest first),
 * the decisions (judged, queued), the reading of one connection (TCP:
 * hold, feed fc_tls in order, decide; QUIC: hold, its Initials decrypted
 * by fc_quic), and the main thread's side (ports, the fingerprints, the
 * decisions taken, verdicts, stats).  Each frame is read first by
 * fd_seg_parse() (fd_seg.c; its headers by inspect/fc_seg); fuzzed with
 * the rest by tests/fuzz/fuzz_inspect.c.  Hand-written: the frames come
 * from our own coprocessor over the link, and what is needed of them is
 * where a TCP segment's bytes sit; no library in Debian reassembles TCP
 * for an inline reader without taking the socket or the capture with it.
 */
#include "fd_inspect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowcut/fc_defs.h>

#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_tls.h"
#include "fd_seg.h"

#define TABLE_SIZE 4096			/* hash buckets */
#define HELD_MAX_FRAMES 64		/* a hello in more frames than this is too big */
/* a hello of FC_TLS_HELLO_MAX bytes in records; bytes further on are not the hello's */
#define STREAM_MAX (FC_TLS_HELLO_MAX + 1024)

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

/* ---- the table ---- */

enum conn_state {
	C_WAIT,		/* its SYN seen; no byte yet */
	C_READ,		/* bytes held; the parser reading */
	C_PASSED,	/* decided: its frames go on */
	C_CUT,		/* decided: its frames are dropped */
};

/* A client frame held: its payload is stream bytes [off, off + plen). */
struct held {
	struct held *next;		/* sorted by off */
	uint32_t off;
	uint32_t plen;
	uint32_t poff;
	uint32_t len;
	uint16_t port;
	uint8_t frame[];
};

struct conn {
	struct conn *hnext;		/* the bucket's chain */
	struct conn *older, *newer;	/* the age list */
	struct fd_tuple key;
	enum conn_state state;
	uint32_t start;			/* sequence number of stream byte 0 */
	uint32_t fed;			/* stream bytes given to the parser */
	uint64_t since;			/* ms: its SYN (WAIT), first byte (READ), decision */
	uint64_t last;			/* ms: its last frame */
	struct held *held;
	unsigned int nheld;
	struct fc_tls_hello *hello;	/* while READ (TCP) */
	struct fc_quic_hello *quic;	/* while READ (UDP: QUIC) */
};

struct fd_inspect {
	pthread_mutex_t mu;
	struct fd_inspect_params p;
	uint64_t ports[65536 / 64];	/* the TLS ports, a bit each (read without the lock) */
	unsigned int nports;
	struct conn *table[TABLE_SIZE];
	struct conn *oldest, *newest;
	unsigned int nentries;		/* also read without the lock */
	unsigned int nreading;
	struct fc_fplist watched;
	struct fd_inspect_decision *q;	/* a ring of p.queue */
	unsigned int qhead, qlen;
	uint64_t queued;		/* decisions ever queued (read without the lock) */
	struct fd_inspect_stats st;
	char ja3str[FC_JA_STR_MAX];	/* fc_ja3's scratch */
};

static const char *const why_names[FD_INSPECT_NWHY] = {
#define FD_INSPECT_WHY_NAME_(n, s) [FD_INSPECT_##n] = s,
	FD_INSPECT_WHYS(FD_INSPECT_WHY_NAME_)
#undef FD_INSPECT_WHY_NAME_
};

static const char *const frame_names[FD_INSPECT_NFRAME] = {
#define FD_INSPECT_FRAME_NAME_(n, s) [FD_INSPECT_F_##n] = s,
	FD_INSPECT_FRAMES(FD_INSPECT_FRAME_NAME_)
#undef FD_INSPECT_FRAME_NAME_
};

const char *
fd_inspect_why_name(enum fd_inspect_why w)
{
	return (unsigned int)w < FD_INSPECT_NWHY ? why_names[w] : "?";
}

const char *
fd_inspect_frame_name(enum fd_inspect_frame_cnt f)
{
	return (unsigned int)f < FD_INSPECT_NFRAME ? frame_names[f] : "?";
}

static bool
tls_port(const struct fd_inspect *in, uint16_t port_be)
{
	uint16_t p = ntohs(port_be);

	return __atomic_load_n(&in->ports[p / 64], __ATOMIC_RELAXED) >> (p % 64) & 1;
}

static uint32_t
conn_hash(const struct fd_tuple *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 16777619u;
	return h % TABLE_SIZE;
}

static struct conn *
conn_find(struct fd_inspect *in, const struct fd_tuple *k)
{
	for (struct conn *c = in->table[conn_hash(k)]; c != NULL; c = c->hnext)
		if (memcmp(&c->key, k, sizeof(*k)) == 0)
			return c;
	return NULL;
}

/* The other direction's key. */
static void
key_reverse(const struct fd_tuple *k, struct fd_tuple *r)
{
	*r = *k;
	memcpy(r->src, k->dst, 16);
	memcpy(r->dst, k->src, 16);
	r->sport = k->dport;
	r->dport = k->sport;
}

static void
age_unlink(struct fd_inspect *in, struct conn *c)
{
	if (c->older)
		c->older->newer = c->newer;
	else
		in->oldest = c->newer;
	if (c->newer)
		c->newer->older = c->older;
	else
		in->newest = c->older;
	c->older = c->newer = NULL;
}

static void
age_append(struct fd_inspect *in, struct conn *c)
{
	c->older = in->newest;
	c->newer = NULL;
	if (in->newest)
		in->newest->newer = c;
	else
		in->oldest = c;
	in->newest = c;
}

static void
held_free(struct conn *c)
{
	while (c->held != NULL) {
		struct held *h = c->held;

		c->held = h->next;
		free(h);
	}
	c->nheld = 0;
}

/* What reading needs, let go: held frames (already handed on or dropped) and the parser. */
static void
reading_end(struct fd_inspect *in, struct conn *c)
{
	held_free(c);
	free(c->hello);
	c->hello = NULL;
	free(c->quic);
	c->quic = NULL;
	if (c->state == C_READ)
		in->nreading--;
}

static void
conn_free(struct fd_inspect *in, struct conn *c)
{
	struct conn **pp = &in->table[conn_hash(&c->key)];

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	age_unlink(in, c);
	reading_end(in, c);
	free(c);
	__atomic_store_n(&in->nentries, in->nentries - 1, __ATOMIC_RELAXED);
}

/* Room for one more: the oldest entry not being read or cut goes.  false: none could. */
static bool
make_room(struct fd_inspect *in)
{
	if (in->nentries < 4 * in->p.max_conns)
		return true;
	for (struct conn *c = in->oldest; c != NULL; c = c->newer)
		if (c->state == C_WAIT || c->state == C_PASSED) {
			conn_free(in, c);
			return true;
		}
	return false;
}

static struct conn *
conn_new(struct fd_inspect *in, const struct fd_tuple *k, enum conn_state st,
	 uint64_t now)
{
	struct conn *c;
	uint32_t b;

	if (!make_room(in))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->key = *k;
	c->state = st;
	c->since = c->last = now;
	b = conn_hash(k);
	c->hnext = in->table[b];
	in->table[b] = c;
	age_append(in, c);
	__atomic_store_n(&in->nentries, in->nentries + 1, __ATOMIC_RELAXED);
	return c;
}

/* ---- decisions ---- */

static void
printable(const uint8_t *p, size_t n, char *out, size_t cap)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < cap; i++)
		out[o++] = p[i] > 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	out[o] = '\0';
}

static void
queue(struct fd_inspect *in, const struct conn *c, bool cut, enum fd_inspect_why why,
      const char *ja4, const char *ja3, unsigned long line)
{
	struct fd_inspect_decision *d;

	in->st.why[why]++;
	if (in->qlen == in->p.queue) {
		in->st.decisions_lost++;
		return;
	}
	d = &in->q[(in->qhead + in->qlen++) % in->p.queue];
	__atomic_store_n(&in->queued, in->queued + 1, __ATOMIC_RELEASE);
	memset(d, 0, sizeof(*d));
	d->key = c->key;
	d->cut = cut;
	d->why = (uint8_t)why;
	d->line = line;
	if (ja4)
		snprintf(d->ja4, sizeof(d->ja4), "%s", ja4);
	if (ja3)
		snprintf(d->ja3, sizeof(d->ja3), "%s", ja3);
	{
		const struct fc_tls_hello *h = c->quic != NULL ? &c->quic->hello : c->hello;

		if (h != NULL && ja4 != NULL && h->has_sni)
			printable(fc_tls_bytes_ptr(h, h->sni), h->sni.len, d->sni, sizeof(d->sni));
	}
}

/* Decided: the held frames handed on in sequence order, the connection's frames go on. */
static void
pass(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
     const char *ja3, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	for (struct held *h = c->held; h != NULL; h = h->next) {
		out(octx, h->port, h->frame, h->len);
		in->st.frames[FD_INSPECT_F_RELEASED]++;
	}
	queue(in, c, false, why, ja4, ja3, 0);
	reading_end(in, c);
	c->state = C_PASSED;
	c->since = c->last = now;
	age_unlink(in, c);
	age_append(in, c);
}

/* Decided: nothing goes on. */
static void
cut(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
    const char *ja3, unsigned long line, uint64_t now)
{
	in->st.frames[FD_INSPECT_F_DROPPED] += c->nheld;
	queue(in, c, true, why, ja4, ja3, line);
	reading_end(in, c);
	c->state = C_CUT;
	c->since = c->last = now;
	age_unlink(in, c);
	age_append(in, c);
}

/* A whole hello: fingerprinted, looked up, decided. */
static void
judge(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	char ja4[FC_JA4_LEN + 1] = "", ja3[FC_JA3_MD5_LEN + 1] = "";
	const struct fc_tls_hello *h = c->quic != NULL ? &c->quic->hello : c->hello;
	const struct fc_fp *hit = NULL;
	bool j4 = fc_ja4(h, c->quic != NULL ? 'q' : 't', ja4, NULL, 0) == 0;
	bool j3 = fc_ja3(h, in->ja3str, sizeof(in->ja3str), ja3) >= 0;

	in->st.hellos++;
	if (j4)
		hit = fc_fplist_find(&in->watched, ja4);
	if (hit != NULL) {
		cut(in, c, FD_INSPECT_LISTED_JA4, ja4, j3 ? ja3 : NULL, hit->line, now);
		return;
	}
	if (j3)
		hit = fc_fplist_find(&in->watched, ja3);
	if (hit != NULL) {
		cut(in, c, FD_INSPECT_LISTED_JA3, j4 ? ja4 : NULL, ja3, hit->line, now);
		return;
	}
	/* (a digest OpenSSL could not make leaves that fingerprint "": nothing matches it) */
	pass(in, c, FD_INSPECT_NOT_LISTED, ja4, ja3, now, out, octx);
}

/* ---- reading one connection ---- */

/* Feeds what is in order; 1 when the parser answered for good (judged or passed), else 0. */
static int
feed(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	int rc = -EAGAIN;

	for (struct held *h = c->held; h != NULL && rc == -EAGAIN; h = h->next) {
		if (h->off > c->fed)
			break;		/* a gap: wait for what fills it */
		if (h->off + h->plen <= c->fed)
			continue;
		rc = fc_tls_feed(c->hello, h->frame + h->poff + (c->fed - h->off),
				 h->off + h->plen - c->fed, NULL);
		c->fed = h->off + h->plen;
	}
	switch (rc) {
	case -EAGAIN:
		return 0;
	case 0:
		judge(in, c, now, out, octx);
		return 1;
	case -ENOMSG:
		pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		return 1;
	case -EMSGSIZE:
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);
		return 1;
	default:
		pass(in, c, FD_INSPECT_MALFORMED, NULL, NULL, now, out, octx);
		return 1;
	}
}

/*
 * A client segment with bytes, of a connection being read: held in
 * sequence order (a retransmission of what is held dropped), then what is
 * in order fed.  Returns 1 (the frame taken: held, dropped, or handed on
 * with the held ones), or 0 (handed on by the caller after the held ones:
 * the connection was passed without it).
 */
static int
read_segment(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f,
	     uint32_t len, const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	uint32_t off = s->seq - c->start;
	struct held **pp = &c->held, *h;

	if (off > UINT32_MAX / 2 || off + s->plen <= c->fed) {
		in->st.frames[FD_INSPECT_F_DUP]++;	/* before the start, or fed already */
		return 1;
	}
	if (off >= STREAM_MAX) {
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);
		return 0;
	}
	while (*pp != NULL && (*pp)->off < off)
		pp = &(*pp)->next;
	if (*pp != NULL && (*pp)->off == off && (*pp)->plen >= s->plen) {
		in->st.frames[FD_INSPECT_F_DUP]++;	/* held already, not fed yet */
		return 1;
	}
	if (c->nheld == HELD_MAX_FRAMES) {
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);
		return 0;
	}
	h = malloc(sizeof(*h) + len);
	if (h == NULL) {
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);	/* no room to hold */
		return 0;
	}
	h->off = off;
	h->plen = s->plen;
	h->poff = s->poff;
	h->len = len;
	h->port = port;
	memcpy(h->frame, f, len);
	h->next = *pp;
	*pp = h;
	c->nheld++;
	in->st.frames[FD_INSPECT_F_HELD]++;
	feed(in, c, now, out, octx);
	return 1;
}

/* A connection starts being read (its first bytes came): false when over the cap (passed). */
static bool
start_reading(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out,
	      void *octx)
{
	bool udp = c->key.proto == 17;

	if (in->nreading >= in->p.max_conns ||
	    (udp ? (void *)(c->quic = malloc(sizeof(*c->quic)))
		 : (void *)(c->hello = malloc(sizeof(*c->hello)))) == NULL) {
		pass(in, c, FD_INSPECT_OVER_CAP, NULL, NULL, now, out, octx);
		return false;
	}
	if (udp)
		fc_quic_init(c->quic);
	else
		fc_tls_init(c->hello);
	c->state = C_READ;
	c->since = now;
	c->fed = 0;
	in->nreading++;
	return true;
}

/* A frame from the client of a known connection. */
static int
client_frame(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f,
	     uint32_t len, const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	int taken = 0;

	c->last = now;
	switch (c->state) {
	case C_CUT:
		in->st.frames[FD_INSPECT_F_DROPPED]++;
		return 1;
	case C_PASSED:
		return 0;
	case C_WAIT:
		if (s->flags & TH_SYN) {
			c->start = s->seq + 1;	/* again, or a new ISN */
			return 0;
		}
		if (s->plen == 0 && !(s->flags & (TH_FIN | TH_RST)))
			return 0;	/* the handshake's ACK */
		if (s->flags & TH_RST) {
			pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
			return 0;
		}
		if (!start_reading(in, c, now, out, octx))
			return 0;
		break;
	case C_READ:
		break;
	}
	if (s->flags & (TH_SYN | TH_RST)) {
		pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
		return 0;
	}
	if (s->plen > 0)
		taken = read_segment(in, c, port, f, len, s, now, out, octx);
	if (c->state == C_READ && (s->flags & TH_FIN)) {
		pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
		return taken;	/* held (and now handed on), or the caller's after them */
	}
	return taken;
}

/*
 * A datagram from the client of a known UDP flow: while its hello is
 * read, held in arrival order and its Initials given to fc_quic.  Returns
 * as client_frame.
 */
static int
quic_frame(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	   const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct held *h, **pp = &c->held;
	int rc;

	c->last = now;
	switch (c->state) {
	case C_CUT:
		in->st.frames[FD_INSPECT_F_DROPPED]++;
		return 1;
	case C_PASSED:
		return 0;
	case C_WAIT:
		if (!start_reading(in, c, now, out, octx))
			return 0;
		break;
	case C_READ:
		break;
	}
	if (c->nheld == HELD_MAX_FRAMES || (h = malloc(sizeof(*h) + len)) == NULL) {
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);
		return 0;
	}
	h->off = c->nheld;	/* datagrams keep their order */
	h->plen = s->plen;
	h->poff = s->poff;
	h->len = len;
	h->port = port;
	h->next = NULL;
	memcpy(h->frame, f, len);
	while (*pp != NULL)
		pp = &(*pp)->next;
	*pp = h;
	c->nheld++;
	in->st.frames[FD_INSPECT_F_HELD]++;
	rc = fc_quic_feed(c->quic, f + s->poff, s->plen);
	switch (rc) {
	case -EAGAIN:
		break;
	case 0:
		judge(in, c, now, out, octx);
		break;
	case -ENOMSG:
		pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		break;
	case -EMSGSIZE:
		pass(in, c, FD_INSPECT_TOO_BIG, NULL, NULL, now, out, octx);
		break;
	default:
		pass(in, c, FD_INSPECT_MALFORMED, NULL, NULL, now, out, octx);
		break;
	}
	return 1;
}

/* A datagram to a TLS port of a flow not known: read when it holds a QUIC Initial, else passed. */
static int
quic_new(struct fd_inspect *in, const struct fd_seg *s, uint16_t port, const uint8_t *f,
	 uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c = conn_new(in, &s->key, C_WAIT, now);

	if (c == NULL) {
		in->st.no_room++;
		return 0;
	}
	if (!fc_quic_is_initial(f + s->poff, s->plen)) {
		/* not QUIC, or a flow met mid-way: not sent to the inspector for ever */
		pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		return 0;
	}
	return quic_frame(in, c, port, f, len, s, now, out, octx);
}

int
fd_inspect_frame(struct fd_inspect *in, uint16_t port, bool flagged, const uint8_t *f,
		 uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct fd_tuple rev;
	struct conn *c;
	struct fd_seg s;
	int rc = 0;

	if (fd_seg_parse(f, len, &s) != 0)
		goto theirs;
	if (!tls_port(in, s.key.dport) && !tls_port(in, s.key.sport) &&
	    __atomic_load_n(&in->nentries, __ATOMIC_RELAXED) == 0)
		goto theirs;
	pthread_mutex_lock(&in->mu);
	c = conn_find(in, &s.key);
	if (c != NULL && s.key.proto == 17) {
		rc = quic_frame(in, c, port, f, len, &s, now, out, octx);
	} else if (c != NULL) {
		rc = client_frame(in, c, port, f, len, &s, now, out, octx);
	} else if (key_reverse(&s.key, &rev), (c = conn_find(in, &rev)) != NULL) {
		/* the server's: it goes on, unless the connection is cut */
		c->last = now;
		if (c->state == C_CUT) {
			in->st.frames[FD_INSPECT_F_DROPPED]++;
			rc = 1;
		}
	} else if (in->nports > 0 && tls_port(in, s.key.dport) && s.key.proto == 17) {
		if (s.plen > 0)
			rc = quic_new(in, &s, port, f, len, now, out, octx);
	} else if (in->nports > 0 && tls_port(in, s.key.dport)) {
		if ((s.flags & (TH_SYN | TH_ACK)) == TH_SYN) {
			/* a client's SYN: its stream starts after it */
			c = conn_new(in, &s.key, C_WAIT, now);
			if (c != NULL)
				c->start = s.seq + 1;
			else
				in->st.no_room++;
		} else if (s.plen > 0 && !(s.flags & (TH_SYN | TH_RST | TH_FIN))) {
			/*
			 * Bytes of a connection whose SYN we did not see (flowcutd
			 * started after it, its entry was let go, or it comes back
			 * to the host): read from here; what is mid-stream is no
			 * ClientHello, and is passed (CUT_THRU, or offloaded).
			 */
			c = conn_new(in, &s.key, C_WAIT, now);
			if (c != NULL) {
				c->start = s.seq;
				rc = client_frame(in, c, port, f, len, &s, now, out, octx);
			} else {
				in->st.no_room++;
			}
		}
	}
	pthread_mutex_unlock(&in->mu);
	if (rc != 0)
		return rc;
theirs:
	if (flagged)	/* counted also where no lock is taken */
		__atomic_add_fetch(&in->st.frames[FD_INSPECT_F_PASSED], 1, __ATOMIC_RELAXED);
	return 0;
}

void
fd_inspect_tick(struct fd_inspect *in, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c, *next;

	if (__atomic_load_n(&in->nentries, __ATOMIC_RELAXED) == 0)
		return;
	pthread_mutex_lock(&in->mu);
	for (c = in->oldest; c != NULL; c = next) {
		next = c->newer;	/* pass() moves c to the end: seen again, not due */
		switch (c->state) {
		case C_READ:
			if (now - c->since >= in->p.deadline_ms)
				pass(in, c, FD_INSPECT_TIMEOUT, NULL, NULL, now, out, octx);
			break;
		case C_WAIT:
			if (now - c->since >= in->p.wait_ms)
				conn_free(in, c);
			break;
		default:
			if (now - c->last >= in->p.linger_ms)
				conn_free(in, c);
			break;
		}
	}
	pthread_mutex_unlock(&in->mu);
}

/* ---- the main thread's side ---- */

struct fd_inspect *
fd_inspect_open(const struct fd_inspect_params *p)
{
	struct fd_inspect *in = calloc(1, sizeof(*in));

	if (in == NULL)
		return NULL;
	if (p != NULL)
		in->p = *p;
	in->p.max_conns = in->p.max_conns ? in->p.max_conns : 1024;
	in->p.deadline_ms = in->p.deadline_ms ? in->p.deadline_ms : 2000;
	in->p.wait_ms = in->p.wait_ms ? in->p.wait_ms : 10000;
	in->p.linger_ms = in->p.linger_ms ? in->p.linger_ms : 10000;
	in->p.queue = in->p.queue ? in->p.queue : 4096;
	in->q = calloc(in->p.queue, sizeof(*in->q));
	if (in->q == NULL || pthread_mutex_init(&in->mu, NULL) != 0) {
		free(in->q);
		free(in);
		errno = ENOMEM;
		return NULL;
	}
	return in;
}

void
fd_inspect_close(struct fd_inspect *in)
{
	if (in == NULL)
		return;
	while (in->oldest != NULL)
		conn_free(in, in->oldest);
	fc_fplist_free(&in->watched);
	pthread_mutex_destroy(&in->mu);
	free(in->q);
	free(in);
}

void
fd_inspect_ports(struct fd_inspect *in, const uint16_t *ports, unsigned int n)
{
	uint64_t bits[65536 / 64] = { 0 };

	for (unsigned int i = 0; i < n; i++)
		bits[ports[i] / 64] |= 1ull << (ports[i] % 64);
	pthread_mutex_lock(&in->mu);
	for (unsigned int w = 0; w < 65536 / 64; w++)
		__atomic_store_n(&in->ports[w], bits[w], __ATOMIC_RELAXED);
	in->nports = n;
	pthread_mutex_unlock(&in->mu);
}

void
fd_inspect_watch(struct fd_inspect *in, struct fc_fplist *l)
{
	struct fc_fplist old;

	pthread_mutex_lock(&in->mu);
	old = in->watched;
	in->watched = *l;
	pthread_mutex_unlock(&in->mu);
	*l = (struct fc_fplist){ 0 };
	fc_fplist_free(&old);
}

int
fd_inspect_take(struct fd_inspect *in, struct fd_inspect_decision *d)
{
	int got = 0;

	pthread_mutex_lock(&in->mu);
	if (in->qlen > 0) {
		*d = in->q[in->qhead];
		in->qhead = (in->qhead + 1) % in->p.queue;
		in->qlen--;
		got = 1;
	}
	pthread_mutex_unlock(&in->mu);
	return got;
}

bool
fd_inspect_holds(const struct fd_inspect *in)
{
	return __atomic_load_n(&in->nentries, __ATOMIC_RELAXED) != 0;
}

uint64_t
fd_inspect_queued(const struct fd_inspect *in)
{
	return __atomic_load_n(&in->queued, __ATOMIC_ACQUIRE);
}

uint8_t
fd_inspect_verdict(struct fd_inspect *in, const struct fd_tuple *k)
{
	const struct conn *c;
	uint8_t v;

	pthread_mutex_lock(&in->mu);
	c = conn_find(in, k);
	v = c != NULL && c->state == C_PASSED ? FC_VERDICT_CUT_THRU : FC_VERDICT_SEND_TO_IPS;
	pthread_mutex_unlock(&in->mu);
	return v;
}

void
fd_inspect_stats(struct fd_inspect *in, struct fd_inspect_stats *out)
{
	pthread_mutex_lock(&in->mu);
	*out = in->st;
	out->frames[FD_INSPECT_F_PASSED] = __atomic_load_n(&in->st.frames[FD_INSPECT_F_PASSED],
							   __ATOMIC_RELAXED);
	out->reading = in->nreading;
	out->entries = in->nentries;
	pthread_mutex_unlock(&in->mu);
}
