/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect: see fd_inspect.h; docs/fingerprints.md says what it reads
 * and why.
 *
 * Rooms: the table (entries hashed, each on one of four lists by what it
 * waits for - waiting, reading, decided, cut - oldest first, and on its
 * source's list), the ghosts (entries let go before their first byte,
 * remembered by a hash so their bytes meet the undecided setting), the
 * decisions (judged, queued), the stream of one connection (its bytes by
 * their place, chunked, each byte's first copy kept so a later copy that
 * differs is refused, asked of the parser in order with urgent bytes
 * taken out), the parser (asked in this process, or over the caller's
 * channel: a frame whose bytes were asked held until answered), its
 * frames (held, let go, dropped), TCP (the handshake, the window), QUIC,
 * the parser's answers, and the main thread's side.  Each frame is read first by
 * fd_seg_parse (its headers by inspect/fc_seg).  Hand-written: the
 * frames come from our own coprocessor over the link; what is needed is a
 * normaliser that reads a stream as one peer's stack will, holds the
 * frames, and hands on only bytes it read - no library in Debian does
 * that for an inline reader without taking the socket or the capture.
 */
#include "fd_inspect.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <flowcut/fc_defs.h>

#include "fc_frag.h"
#include "fc_quic.h"
#include "fc_seg.h"
#include "fc_tls.h"
#include "fd_seg.h"
#include "fi_parse.h"
#include "fi_wire.h"

#define TABLE_SIZE 65536		/* hash buckets of entries */
#define SOURCE_BUCKETS 4096		/* ... of sources */
#define GHOSTS 65536			/* entries let go before their bytes, remembered */
#define CHUNK 4096			/* a stream's bytes are kept in chunks of this */
/*
 * The stream bytes a hello can take: its message in records of one byte
 * each (a record header of 5 bytes a byte), as a server reassembles any
 * record split.
 */
#define STREAM_MAX (6u * FC_TLS_HELLO_MAX + 5u)
#define STREAM_CHUNKS ((STREAM_MAX + CHUNK - 1) / CHUNK)
#define HOLD_FRAMES_MAX 256		/* held a connection; past it they are let go, reading on */
#define HOLD_BYTES_MAX (1u << 20)	/* ... or past these bytes of frames */
#define PARSER_BYTES (32u << 10)	/* its parser's share of max_bytes (the parser's own, in its process) */
#define EVICT_LOOK 8			/* reading slots full: the oldest this many looked at for one to let go */
#define ACK_SLACK 65536u		/* a client's ACK may run this far past the server's ISN */
/*
 * Urgent bytes taken out of a stream: one.  A later urgent pointer moves
 * Linux's mark, and whether the byte it left is then read in the stream
 * or skipped depends on how far the server's application has read
 * (tcp_check_urg): not the inspector's to know, so a second is URGENT.
 */
#define URG_MAX 1
#define NO_END UINT32_MAX
/* IP fragments: Linux's own wait for the rest of a datagram (ipfrag_time), and what may be held */
#define FRAG_TIMEOUT_MS 30000u
#define FRAG_DATAGRAMS 1024u
#define FRAG_BYTES (16u << 20)

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10
#define TH_URG 0x20

/* ---- the table ---- */

enum conn_state {
	C_WAIT,		/* no byte yet: its handshake */
	C_READ,		/* bytes read; deciding */
	C_PASSED,	/* decided: its frames go on */
	C_CLOSED,	/* its stream ended before a whole hello: no more bytes go on */
	C_CUT,		/* decided: its frames are dropped */
};

/* Where a TCP connection's handshake stands (what the inspector saw cross the host). */
enum conn_hs {
	HS_SYN,		/* the client's SYN */
	HS_SYNACK,	/* the server's SYN-ACK answering it: the window known */
	HS_EST,		/* the client's ACK of it */
};

/* One list of entries, oldest first (the BSD tail queues of <sys/queue.h>). */
TAILQ_HEAD(conn_queue, conn);
struct clist {
	struct conn_queue q;
	unsigned int n;
};

enum { L_WAITING, L_READING, L_DECIDED, L_CUT, NLISTS };

/* A client frame held: its bytes are stream bytes [off, off + plen) (QUIC: its arrival). */
struct held {
	struct held *next;		/* sorted by off, then arrival */
	uint32_t off;
	uint32_t len;
	uint16_t port;
	uint8_t frame[];
};

/* A connection being read. */
struct reading {
	uint8_t *chunk[STREAM_CHUNKS];	/* each CHUNK bytes, then CHUNK / 8 bits: had */
	uint32_t fed;			/* stream bytes up to here given to the parser (or skipped) */
	uint32_t end;			/* a FIN's place: no byte from here is the server's */
	uint32_t urg[URG_MAX];		/* urgent bytes' places: not the stream's */
	unsigned int nurg;
	struct held *held;
	unsigned int nheld;
	uint32_t held_bytes;
	uint64_t since;			/* ms: its first byte */
	bool released;			/* held frames let go: frames go on as they are read */
	size_t bytes;			/* of max_bytes */
	uint64_t id;			/* the parser's name for it (fi_wire) */
	uint32_t seq;			/* questions asked of the parser so far */
	uint32_t asked;			/* ... not answered yet */
	uint64_t asked_at;		/* ms: the oldest of those, about (the last answer's time) */
	/* a whole hello's, from the parser */
	char ja4[37], ja3[33], sni[64];
};

struct source;

struct conn {
	struct conn *hnext;		/* the bucket's chain */
	TAILQ_ENTRY(conn) age;		/* its list */
	TAILQ_ENTRY(conn) by_src;	/* its source's, in the order made */
	struct source *src;
	struct fd_tuple key;
	enum conn_state state;
	enum conn_hs hs;
	uint16_t cport;			/* the port its client's frames come up on */
	uint16_t sport;			/* ... its server's (once its SYN-ACK came) */
	uint8_t ttl;			/* its SYN's (first datagram's) TTL: one below is not read */
	uint32_t isn, isn2;		/* the client's SYN's sequence number (and another SYN's) */
	uint32_t synlen;		/* bytes on the SYN (TCP Fast Open) */
	int synrc;			/* the parser's answer on them, acted on once the server took them */
	uint32_t start;			/* sequence number of stream byte 0 */
	uint32_t sisn;			/* the server's SYN-ACK's */
	uint64_t born;			/* ms: its SYN, its first datagram */
	uint64_t last;			/* ms: its last frame */
	struct reading *rd;		/* while C_READ */
};

/* A source: an IPv4 address or an IPv6 /64, and what it holds. */
struct source {
	struct source *next;
	uint8_t addr[16];
	uint8_t family;
	unsigned int entries, reading, cut;
	struct conn_queue conns;
};

/* An entry let go before its first byte: its bytes, if they come, are undecided. */
struct ghost {
	uint64_t h;			/* the tuple's hash (0: none) */
	uint64_t born;
	uint8_t why;
};

struct fd_inspect {
	pthread_mutex_t mu;
	struct fd_inspect_params p;
	unsigned int max_cut;		/* cut entries at once (a quarter of max_entries) */
	unsigned int src_entries, src_cut;	/* ... from one source */
	uint64_t ports[65536 / 64];	/* the TLS ports, a bit each (read without the lock) */
	unsigned int nports;
	struct conn **table;
	struct source *sources[SOURCE_BUCKETS];
	struct clist lists[NLISTS];
	unsigned int nentries;		/* also read without the lock */
	struct ghost *ghosts;
	struct fc_fplist watched;
	struct fd_inspect_decision *q;	/* a ring of qcap */
	unsigned int qcap, qhead, qlen;
	uint64_t queued;		/* decisions ever queued (read without the lock) */
	struct fd_inspect_stats st;
	struct fc_frag *frag;		/* IP fragments being put back together */
	/* the fragments of the reassembled packet being read (n 0: a frame of its own) */
	const struct fc_frag_piece *pieces;
	unsigned int npieces;
	double quic_tokens;		/* new QUIC flows that may be read now (a bucket of quic_per_sec) */
	uint64_t quic_at;		/* ms: the bucket last filled */
	uint64_t next_id;		/* the last reading's id */
	struct fi_parse *local;		/* the parser, in this process (no p.ask) */
	uint64_t now;			/* ms: the call's (ask's) */
	uint8_t *req;			/* a question being written: FI_REQ_MAX bytes */
};

static const char *const why_names[FD_INSPECT_NWHY] = {
#define FD_INSPECT_WHY_NAME_(n, s, u) [FD_INSPECT_##n] = s,
	FD_INSPECT_WHYS(FD_INSPECT_WHY_NAME_)
#undef FD_INSPECT_WHY_NAME_
};

static const bool why_undecided[FD_INSPECT_NWHY] = {
#define FD_INSPECT_WHY_U_(n, s, u) [FD_INSPECT_##n] = (u),
	FD_INSPECT_WHYS(FD_INSPECT_WHY_U_)
#undef FD_INSPECT_WHY_U_
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

bool
fd_inspect_why_undecided(enum fd_inspect_why w)
{
	return (unsigned int)w < FD_INSPECT_NWHY && why_undecided[w];
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

/* FNV-1a over the whole key (it has no padding: fd_tuple.h). */
static uint64_t
key_hash(const struct fd_tuple *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h | 1;	/* never 0: a ghost's empty slot */
}

static struct conn *
conn_find(struct fd_inspect *in, const struct fd_tuple *k)
{
	for (struct conn *c = in->table[key_hash(k) % TABLE_SIZE]; c != NULL; c = c->hnext)
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

static int
list_of(enum conn_state st)
{
	switch (st) {
	case C_WAIT:
		return L_WAITING;
	case C_READ:
		return L_READING;
	case C_CUT:
		return L_CUT;
	default:
		return L_DECIDED;
	}
}

static void
list_unlink(struct fd_inspect *in, struct conn *c)
{
	struct clist *l = &in->lists[list_of(c->state)];

	TAILQ_REMOVE(&l->q, c, age);
	l->n--;
}

static void
list_append(struct fd_inspect *in, struct conn *c)
{
	struct clist *l = &in->lists[list_of(c->state)];

	TAILQ_INSERT_TAIL(&l->q, c, age);
	l->n++;
}

/* c moves to the state st (and the end of its list); its source counts follow. */
static void
conn_move(struct fd_inspect *in, struct conn *c, enum conn_state st)
{
	list_unlink(in, c);
	c->src->reading -= c->state == C_READ;
	c->src->cut -= c->state == C_CUT;
	c->state = st;
	c->src->reading += st == C_READ;
	c->src->cut += st == C_CUT;
	list_append(in, c);
}

/* A frame of c at now: a decided one moves to its list's end (the linger counts from it). */
static void
touch(struct fd_inspect *in, struct conn *c, uint64_t now)
{
	c->last = now;
	if (c->state != C_WAIT && c->state != C_READ && TAILQ_NEXT(c, age) != NULL) {
		list_unlink(in, c);
		list_append(in, c);
	}
}

/* ---- sources ---- */

static uint32_t
source_hash(const uint8_t *a)
{
	uint32_t h = 2166136261u;

	for (int i = 0; i < 8; i++)
		h = (h ^ a[i]) * 16777619u;
	return h % SOURCE_BUCKETS;
}

/* The source of a client: its IPv4 address, its IPv6 /64.  NULL: no memory. */
static struct source *
source_get(struct fd_inspect *in, const struct fd_tuple *k)
{
	uint8_t a[16] = { 0 };
	struct source *s;
	uint32_t b;

	memcpy(a, k->src, k->family == 4 ? 4 : 8);
	b = source_hash(a);
	for (s = in->sources[b]; s != NULL; s = s->next)
		if (s->family == k->family && memcmp(s->addr, a, 16) == 0)
			return s;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return NULL;
	memcpy(s->addr, a, 16);
	s->family = k->family;
	TAILQ_INIT(&s->conns);
	s->next = in->sources[b];
	in->sources[b] = s;
	return s;
}

static void
source_put(struct fd_inspect *in, struct source *s)
{
	struct source **pp = &in->sources[source_hash(s->addr)];

	if (s->entries > 0)
		return;
	while (*pp != s)
		pp = &(*pp)->next;
	*pp = s->next;
	free(s);
}

/* ---- ghosts ---- */

static void
ghost_add(struct fd_inspect *in, const struct conn *c, enum fd_inspect_why why)
{
	uint64_t h = key_hash(&c->key);
	struct ghost *g = &in->ghosts[h % GHOSTS];

	g->h = h;
	g->born = c->born;
	g->why = (uint8_t)why;
}

/* The ghost of k, taken: true and *g, or false. */
static bool
ghost_take(struct fd_inspect *in, const struct fd_tuple *k, struct ghost *out)
{
	uint64_t h = key_hash(k);
	struct ghost *g = &in->ghosts[h % GHOSTS];

	if (g->h != h)
		return false;
	*out = *g;
	g->h = 0;
	return true;
}

/* ---- the stream of one connection ---- */

/* ---- the parser: asked, in this process or over the channel ---- */

/*
 * A question of c's parser: FI_TLS (the stream's next bytes), FI_QUIC (a
 * datagram) or FI_FORGET.  In this process (no p.ask) the parser's
 * answer at once (fc_tls_feed's, fc_quic_feed's; a whole hello's
 * fingerprints kept in c->rd); over the channel -EINPROGRESS (the answer
 * comes to fd_inspect_answer), -EBUSY (the channel is full) or
 * -ENOTCONN (no parser).
 */
static int
ask(struct fd_inspect *in, struct conn *c, uint8_t kind, const uint8_t *data, uint32_t len)
{
	struct reading *rd = c->rd;
	struct fi_req *r = (struct fi_req *)in->req;
	struct fi_ans a;
	int rc;

	memset(r, 0, sizeof(*r));
	r->version = FI_WIRE_VERSION;
	r->kind = kind;
	r->flags = kind != FI_FORGET && rd->seq == 0 ? FI_FIRST : 0;
	r->len = (uint16_t)len;
	r->seq = rd->seq;
	r->id = rd->id;
	_Static_assert(sizeof(c->key) == FI_CTX_LEN, "the tuple is the question's context");
	memcpy(r->ctx, &c->key, sizeof(c->key));
	if (len > 0)
		memcpy(r->data, data, len);
	if (kind != FI_FORGET)
		rd->seq++;
	in->st.asked += kind != FI_FORGET;
	if (in->local != NULL) {
		if (fi_parse_ask(in->local, r, sizeof(*r) + len, &a, NULL) != 1)
			return kind == FI_FORGET ? 0 : -EBADMSG;
		in->st.answered++;
		if (a.rc == 0) {
			memcpy(rd->ja4, a.ja4, sizeof(rd->ja4));
			memcpy(rd->ja3, a.ja3, sizeof(rd->ja3));
			memcpy(rd->sni, a.sni, sizeof(rd->sni));
		}
		return a.rc;
	}
	rc = in->p.ask(in->p.actx, r, sizeof(*r) + len);
	if (kind == FI_FORGET)
		return 0;
	if (rc == -EAGAIN) {
		in->st.asked--;
		return -EBUSY;
	}
	if (rc != 0) {
		in->st.asked--;
		return -ENOTCONN;
	}
	if (rd->asked++ == 0)
		rd->asked_at = in->now;
	return -EINPROGRESS;
}

static void
held_free(struct fd_inspect *in, struct reading *rd)
{
	while (rd->held != NULL) {
		struct held *h = rd->held;

		rd->held = h->next;
		in->st.bytes -= sizeof(*h) + h->len;
		rd->bytes -= sizeof(*h) + h->len;
		free(h);
	}
	rd->nheld = 0;
	rd->held_bytes = 0;
}

/* What reading needs, let go: held frames (handed on or dropped already), the stream, the parser. */
static void
reading_free(struct fd_inspect *in, struct conn *c)
{
	struct reading *rd = c->rd;

	if (rd == NULL)
		return;
	held_free(in, rd);
	for (unsigned int i = 0; i < STREAM_CHUNKS; i++)
		free(rd->chunk[i]);
	if (rd->seq > 0)	/* the parser's state of it let go (a lost one is no matter) */
		(void)ask(in, c, FI_FORGET, NULL, 0);
	in->st.bytes -= rd->bytes;
	free(rd);
	c->rd = NULL;
}

static void
conn_free(struct fd_inspect *in, struct conn *c)
{
	struct conn **pp = &in->table[key_hash(&c->key) % TABLE_SIZE];
	struct source *s = c->src;

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	list_unlink(in, c);
	TAILQ_REMOVE(&s->conns, c, by_src);
	s->entries--;
	s->reading -= c->state == C_READ;
	s->cut -= c->state == C_CUT;
	source_put(in, s);
	reading_free(in, c);
	free(c);
	__atomic_store_n(&in->nentries, in->nentries - 1, __ATOMIC_RELAXED);
}

/* Bytes for c's reading, of max_bytes: false (and nothing taken) when over. */
static bool
take_bytes(struct fd_inspect *in, struct reading *rd, size_t n)
{
	if (in->st.bytes + n > in->p.max_bytes)
		return false;
	in->st.bytes += n;
	rd->bytes += n;
	return true;
}

static bool
had(const struct reading *rd, uint32_t off)
{
	const uint8_t *ch = rd->chunk[off / CHUNK];

	return ch != NULL && (ch[CHUNK + off % CHUNK / 8] >> (off % 8) & 1);
}

enum put_result { PUT_NEW, PUT_DUP, PUT_CONFLICT, PUT_NOMEM };

/*
 * Stream bytes [off, off + n) (capped at STREAM_MAX): each kept where no
 * byte was yet.  PUT_CONFLICT (nothing kept) when one differs from the
 * byte read at its place before: the server takes one copy, which is
 * not ours to guess, so the frame is not read and goes no further.
 */
static enum put_result
stream_put(struct fd_inspect *in, struct reading *rd, uint32_t off, const uint8_t *p, uint32_t n)
{
	bool fresh = false;

	if (off >= STREAM_MAX)
		return PUT_DUP;
	if (n > STREAM_MAX - off)
		n = STREAM_MAX - off;
	for (uint32_t i = 0; i < n; i++)
		if (had(rd, off + i) && rd->chunk[(off + i) / CHUNK][(off + i) % CHUNK] != p[i])
			return PUT_CONFLICT;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t o = off + i;
		uint8_t **ch = &rd->chunk[o / CHUNK];

		if (*ch == NULL) {
			if (!take_bytes(in, rd, CHUNK + CHUNK / 8))
				return PUT_NOMEM;
			*ch = calloc(1, CHUNK + CHUNK / 8);
			if (*ch == NULL)
				return PUT_NOMEM;
		}
		if (!had(rd, o)) {
			(*ch)[o % CHUNK] = p[i];
			(*ch)[CHUNK + o % CHUNK / 8] |= (uint8_t)(1u << (o % 8));
			fresh = true;
		}
	}
	return fresh ? PUT_NEW : PUT_DUP;
}

static bool
urgent_at(const struct reading *rd, uint32_t off)
{
	for (unsigned int i = 0; i < rd->nurg; i++)
		if (rd->urg[i] == off)
			return true;
	return false;
}

/*
 * The bytes in order from rd->fed, to the parser (TCP): up to the first
 * gap or the stream's end, each urgent byte skipped (the server's stack
 * takes it out of the stream: Linux's tcp_recvmsg without SO_OOBINLINE).
 * The parser's answer (-EAGAIN while it needs more), or ask's.  Over the
 * channel every piece is asked: -EINPROGRESS when any was, else -EAGAIN.
 */
static int
stream_feed(struct fd_inspect *in, struct conn *c)
{
	struct reading *rd = c->rd;
	int rc = -EAGAIN;

	while ((rc == -EAGAIN || rc == -EINPROGRESS) && rd->fed < rd->end && rd->fed < STREAM_MAX &&
	       had(rd, rd->fed)) {
		uint32_t from = rd->fed, to = from;

		if (urgent_at(rd, from)) {
			rd->fed++;
			continue;
		}
		while (to < rd->end && to < STREAM_MAX && (to == from || to % CHUNK != 0) &&
		       had(rd, to) && !urgent_at(rd, to))
			to++;
		rc = ask(in, c, FI_TLS, rd->chunk[from / CHUNK] + from % CHUNK, to - from);
		rd->fed = to;
	}
	return rc;
}

/* ---- decisions ---- */

/* Room for one more decision: a CUT grows the ring, a PASS does not.  false: none. */
static bool
queue_room(struct fd_inspect *in, bool cut)
{
	struct fd_inspect_decision *q;
	unsigned int n;

	if (in->qlen < in->qcap)
		return true;
	if (!cut)
		return false;
	n = in->qcap * 2;
	q = malloc((size_t)n * sizeof(*q));
	if (q == NULL)
		return false;
	for (unsigned int i = 0; i < in->qlen; i++)
		q[i] = in->q[(in->qhead + i) % in->qcap];
	free(in->q);
	in->q = q;
	in->qcap = n;
	in->qhead = 0;
	return true;
}

static void
queue(struct fd_inspect *in, const struct conn *c, bool cut, enum fd_inspect_why why,
      const char *ja4, const char *ja3, unsigned long line)
{
	struct fd_inspect_decision *d;

	if (!queue_room(in, cut)) {
		in->st.passes_lost++;	/* the connection stays SEND_TO_IPS: its frames come up */
		return;
	}
	d = &in->q[(in->qhead + in->qlen++) % in->qcap];
	__atomic_store_n(&in->queued, in->queued + 1, __ATOMIC_RELEASE);
	memset(d, 0, sizeof(*d));
	d->key = c->key;
	d->born_ms = c->born;
	d->cut = cut;
	d->why = (uint8_t)why;
	d->line = line;
	if (ja4)
		snprintf(d->ja4, sizeof(d->ja4), "%s", ja4);
	if (ja3)
		snprintf(d->ja3, sizeof(d->ja3), "%s", ja3);
	if (c->rd != NULL && ja4 != NULL)
		memcpy(d->sni, c->rd->sni, sizeof(d->sni));
}

static void
release(struct fd_inspect *in, struct reading *rd, fd_inspect_out_fn *out, void *octx)
{
	for (struct held *h = rd->held; h != NULL; h = h->next) {
		out(octx, h->port, h->frame, h->len);
		in->st.frames[FD_INSPECT_F_RELEASED]++;
	}
	held_free(in, rd);
}

static void evict_cut(struct fd_inspect *in, struct conn *keep);

/* Decided: the held frames handed on in sequence order, the connection's frames go on. */
static void
pass(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
     const char *ja3, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	in->st.why[why]++;
	if (c->rd != NULL)
		release(in, c->rd, out, octx);
	if (why != FD_INSPECT_CLOSED)	/* closed: nothing to set, nothing more goes on */
		queue(in, c, false, why, ja4, ja3, 0);
	reading_free(in, c);
	c->last = now;
	conn_move(in, c, why == FD_INSPECT_CLOSED ? C_CLOSED : C_PASSED);
}

/* Decided: nothing goes on; the oldest cut entry makes room when they are too many. */
static void
cut(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
    const char *ja3, unsigned long line, uint64_t now)
{
	in->st.why[why]++;
	if (c->rd != NULL)
		in->st.frames[FD_INSPECT_F_DROPPED] += c->rd->nheld;
	queue(in, c, true, why, ja4, ja3, line);
	reading_free(in, c);
	c->last = now;
	conn_move(in, c, C_CUT);
	evict_cut(in, c);
}

/* Undecided: the setting says. */
static void
undecided(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, uint64_t now,
	  fd_inspect_out_fn *out, void *octx)
{
	if (in->p.undecided_cut) {
		in->st.undecided_cut++;
		cut(in, c, why, NULL, NULL, 0, now);
	} else {
		pass(in, c, why, NULL, NULL, now, out, octx);
	}
}

/*
 * A whole hello, fingerprinted by the parser: looked up, decided (not listed: passed
 * only when `may_pass`).  true: cut.
 */
static bool
judge(struct fd_inspect *in, struct conn *c, bool may_pass, uint64_t now, fd_inspect_out_fn *out,
      void *octx)
{
	const char *ja4 = c->rd->ja4, *ja3 = c->rd->ja3;
	const struct fc_fp *hit = NULL;
	bool j4 = ja4[0] != '\0', j3 = ja3[0] != '\0';

	in->st.hellos++;
	if (j4)
		hit = fc_fplist_find(&in->watched, ja4);
	if (hit != NULL) {
		cut(in, c, FD_INSPECT_LISTED_JA4, ja4, j3 ? ja3 : NULL, hit->line, now);
		return true;
	}
	if (j3)
		hit = fc_fplist_find(&in->watched, ja3);
	if (hit != NULL) {
		cut(in, c, FD_INSPECT_LISTED_JA3, j4 ? ja4 : NULL, ja3, hit->line, now);
		return true;
	}
	/* (a digest OpenSSL could not make leaves that fingerprint "": nothing matches it) */
	if (may_pass)
		pass(in, c, FD_INSPECT_NOT_LISTED, ja4, ja3, now, out, octx);
	return false;
}

/* The parser's answer acted on.  true: the connection was cut. */
static bool
answer(struct fd_inspect *in, struct conn *c, int rc, uint64_t now, fd_inspect_out_fn *out,
       void *octx)
{
	switch (rc) {
	case -EINPROGRESS:	/* asked: the answer comes */
		return false;
	case -EBUSY:
		undecided(in, c, FD_INSPECT_PARSER_BUSY, now, out, octx);
		break;
	case -ENOTCONN:
	case -ESTALE:
		undecided(in, c, FD_INSPECT_PARSER_DOWN, now, out, octx);
		break;
	case -ENOMEM:
		undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		break;
	case -EAGAIN:
		if (c->rd->fed >= c->rd->end && c->rd->asked == 0) {
			/* its end read, every answer in: no more bytes reach the server */
			pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
			return false;
		}
		return false;
	case 0:
		return judge(in, c, true, now, out, octx);
	case -ENOMSG:
		pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		return false;
	case -EMSGSIZE:
		undecided(in, c, FD_INSPECT_TOO_BIG, now, out, octx);
		break;
	default:
		undecided(in, c, FD_INSPECT_MALFORMED, now, out, octx);
		break;
	}
	return c->state == C_CUT;
}

/* ---- entries: made, let go ---- */

/* c let go to make room: undecided when it was being read, a ghost when it was waiting. */
static void
evict(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	if (c->state == C_READ) {
		undecided(in, c, FD_INSPECT_EVICTED, now, out, octx);
	} else if (c->state == C_WAIT) {
		in->st.evicted_waiting++;
		ghost_add(in, c, FD_INSPECT_EVICTED);
	}
	conn_free(in, c);
}

/* Cut entries past their bounds (in all, from c's source): the oldest let go (their cut is made). */
static void
evict_cut(struct fd_inspect *in, struct conn *keep)
{
	struct source *s = keep->src;

	if (s->cut > in->src_cut) {
		struct conn *c;

		TAILQ_FOREACH(c, &s->conns, by_src)
			if (c->state == C_CUT && c != keep) {
				conn_free(in, c);
				break;
			}
	}
	if (in->lists[L_CUT].n > in->max_cut && TAILQ_FIRST(&in->lists[L_CUT].q) != keep)
		conn_free(in, TAILQ_FIRST(&in->lists[L_CUT].q));
}

/* The oldest entry of a source in a state, or NULL. */
static struct conn *
source_oldest(struct source *s, enum conn_state st)
{
	struct conn *c;

	TAILQ_FOREACH(c, &s->conns, by_src)
		if (c->state == st)
			return c;
	return NULL;
}

static struct conn *
conn_new(struct fd_inspect *in, const struct fd_tuple *k, enum conn_state st, uint16_t port,
	 uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct source *s = source_get(in, k);
	struct conn *c;
	uint32_t b;

	if (s == NULL)
		return NULL;
	s->entries++;	/* held while room is made: the source stays */
	if (s->entries > in->src_entries && !TAILQ_EMPTY(&s->conns))
		evict(in, TAILQ_FIRST(&s->conns), now, out, octx);
	if (in->nentries >= in->p.max_entries) {
		static const int order[] = { L_DECIDED, L_CUT, L_WAITING, L_READING };

		for (unsigned int i = 0; i < sizeof(order) / sizeof(order[0]); i++)
			if (!TAILQ_EMPTY(&in->lists[order[i]].q)) {
				evict(in, TAILQ_FIRST(&in->lists[order[i]].q), now, out, octx);
				break;
			}
	}
	s->entries--;
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		source_put(in, s);
		return NULL;
	}
	c->key = *k;
	c->state = st;
	c->cport = port;
	c->born = c->last = now;
	c->src = s;
	s->entries++;
	s->reading += st == C_READ;
	s->cut += st == C_CUT;
	TAILQ_INSERT_TAIL(&s->conns, c, by_src);
	b = key_hash(k) % TABLE_SIZE;
	c->hnext = in->table[b];
	in->table[b] = c;
	list_append(in, c);
	__atomic_store_n(&in->nentries, in->nentries + 1, __ATOMIC_RELAXED);
	return c;
}

/*
 * The oldest of the first EVICT_LOOK entries being read whose bytes are
 * not with the parser, or NULL.  One whose question is out is answered
 * within answer_ms: letting it go would throw the parser's work on it
 * away, and under a flood of new flows (QUIC Initials from everywhere)
 * nearly every answer would come for an entry let go meanwhile, the
 * parser busy on nothing but stale questions.
 */
static struct conn *
oldest_unasked(struct fd_inspect *in)
{
	struct conn *c;
	unsigned int n = 0;

	TAILQ_FOREACH(c, &in->lists[L_READING].q, age) {
		if (c->rd->asked == 0)
			return c;
		if (++n == EVICT_LOOK)
			break;
	}
	return NULL;
}

/*
 * c starts being read: its stream and parser.  The reading slots are
 * bounded in all and a source: the oldest being read makes room
 * (undecided), in all only one whose bytes are not with the parser.
 * false: c is decided instead - undecided, no room (PARSER_BUSY: every
 * slot looked at waits on the parser) or no memory (MEMORY).
 */
static bool
start_reading(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out,
	      void *octx)
{
	struct reading *rd;
	struct conn *old;

	if (c->src->reading >= in->p.per_source && (old = source_oldest(c->src, C_READ)) != NULL)
		evict(in, old, now, out, octx);
	if (in->lists[L_READING].n >= in->p.max_conns && !TAILQ_EMPTY(&in->lists[L_READING].q)) {
		if ((old = oldest_unasked(in)) == NULL) {
			undecided(in, c, FD_INSPECT_PARSER_BUSY, now, out, octx);
			return false;
		}
		evict(in, old, now, out, octx);
	}
	rd = calloc(1, sizeof(*rd));
	if (rd == NULL || !take_bytes(in, rd, sizeof(*rd) + PARSER_BYTES)) {
		free(rd);
		undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return false;
	}
	rd->id = ++in->next_id;	/* its parser is made by its first question */
	rd->end = NO_END;
	rd->since = now;
	c->rd = rd;
	conn_move(in, c, C_READ);
	return true;
}

/*
 * A client frame to hold (its bytes at `off`, TCP; in arrival order,
 * QUIC).  false: past what one connection may hold: the held ones are let
 * go, and this one goes on (reading goes on).
 */
static bool
hold(struct fd_inspect *in, struct reading *rd, uint16_t port, const uint8_t *f, uint32_t len,
     uint32_t off, fd_inspect_out_fn *out, void *octx)
{
	struct held **pp = &rd->held, *h;

	if (in->npieces > 0) {	/* a reassembled packet: its fragments are held, each */
		const struct fc_frag_piece *pc = in->pieces;
		unsigned int n = in->npieces, i;

		in->npieces = 0;
		for (i = 0; i < n; i++)
			if (!hold(in, rd, (uint16_t)pc[i].tag, pc[i].frame, pc[i].len, off, out,
				  octx))
				break;
		/* not all: the held ones went on (let go), the rest are the caller's */
		in->pieces = pc + i;
		in->npieces = n - i;
		return i == n;
	}
	if (rd->nheld >= HOLD_FRAMES_MAX || rd->held_bytes + len > HOLD_BYTES_MAX ||
	    !take_bytes(in, rd, sizeof(*h) + len)) {
		release(in, rd, out, octx);
		rd->released = true;
		return false;
	}
	h = malloc(sizeof(*h) + len);
	if (h == NULL) {
		in->st.bytes -= sizeof(*h) + len;
		rd->bytes -= sizeof(*h) + len;
		release(in, rd, out, octx);
		rd->released = true;
		return false;
	}
	h->off = off;
	h->len = len;
	h->port = port;
	memcpy(h->frame, f, len);
	while (*pp != NULL && (*pp)->off <= off)
		pp = &(*pp)->next;
	h->next = *pp;
	*pp = h;
	rd->nheld++;
	rd->held_bytes += len;
	in->st.frames[FD_INSPECT_F_HELD]++;
	return true;
}

/* Counts a frame not read and says it is taken (dropped). */
static int
drop(struct fd_inspect *in, enum fd_inspect_frame_cnt why)
{
	in->st.frames[why]++;
	return 1;
}

/*
 * A client frame of a connection being read, once its bytes are kept:
 * the parser fed, the frame held (or, held ones let go, on at once), or
 * dropped (a dup while its first copy is held; the cut).  Returns as
 * fd_inspect_frame.
 */
static int
after_put(struct fd_inspect *in, struct conn *c, enum put_result pr, int rc, uint16_t port,
	  const uint8_t *f, uint32_t len, uint32_t off, uint64_t now, fd_inspect_out_fn *out,
	  void *octx)
{
	struct reading *rd = c->rd;
	bool held = false;

	if (!rd->released) {
		if (pr == PUT_DUP)
			return drop(in, FD_INSPECT_F_DUP);	/* the first copy is held */
		held = hold(in, rd, port, f, len, off, out, octx);
	} else if (rc == -EINPROGRESS) {
		/* its bytes are the parser's now: it waits for the answer, let go or not */
		held = hold(in, rd, port, f, len, off, out, octx);
	}
	if (answer(in, c, rc, now, out, octx)) {
		if (!held)
			in->st.frames[FD_INSPECT_F_DROPPED]++;
		return 1;	/* cut: this frame too */
	}
	if (held)
		return 1;	/* held, or handed on with the held ones */
	if (c->state == C_READ)
		in->st.frames[FD_INSPECT_F_READ_ON]++;
	return 0;
}

/* ---- TCP ---- */

/* Its stream ended before a whole hello (an RST taken): what was held goes on, nothing more is read. */
static void
closed(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	if (c->state == C_WAIT) {
		conn_move(in, c, C_CLOSED);
		in->st.why[FD_INSPECT_CLOSED]++;
	} else {
		pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
	}
}

/*
 * Whether a client segment with bytes is the server's to take: from the
 * port its SYN came on, answering the server's SYN-ACK (its ACK in the
 * window from the server's ISN), its checksum right, its TTL no lower
 * than its SYN's (one that expires before the server is no byte of the
 * server's: a decoy).  The counter of why not, or FD_INSPECT_NFRAME.
 */
static enum fd_inspect_frame_cnt
tcp_readable(const struct conn *c, uint16_t port, const uint8_t *f, const struct fd_seg *s)
{
	if (port != c->cport || c->hs == HS_SYN || !(s->flags & TH_ACK) ||
	    s->ack - (c->sisn + 1) > ACK_SLACK)
		return FD_INSPECT_F_OUTSIDE;
	if (s->ttl <= 1 || s->ttl < c->ttl)
		return FD_INSPECT_F_LOW_TTL;
	if (!fd_seg_csum_ok(f + s->ipoff, s))
		return FD_INSPECT_F_BAD_CSUM;
	return FD_INSPECT_NFRAME;
}

/* A client segment's bytes, of a connection past its SYN-ACK: read.  Returns as fd_inspect_frame. */
static int
tcp_bytes(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	  const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	uint32_t off = s->seq - c->start;
	struct reading *rd;
	enum put_result pr;
	int rc;

	if (off >= STREAM_MAX && off > UINT32_MAX / 2) {
		/* before the stream's start: bytes the server took already, or junk */
		return drop(in, c->state == C_READ && !c->rd->released ? FD_INSPECT_F_DUP
								       : FD_INSPECT_F_OUTSIDE);
	}
	if (off >= STREAM_MAX)
		return drop(in, FD_INSPECT_F_OUTSIDE);
	if (c->state == C_WAIT && !start_reading(in, c, now, out, octx))
		return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
	rd = c->rd;
	if (rd->end != NO_END && off + s->plen > rd->end)
		return drop(in, FD_INSPECT_F_AFTER_CLOSE);
	pr = stream_put(in, rd, off, f + s->poff, s->plen);
	if (pr == PUT_CONFLICT)
		return drop(in, FD_INSPECT_F_CONFLICT);
	if (pr == PUT_NOMEM) {
		undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	if (s->flags & TH_URG) {
		/* its byte, Linux's way (tcp_check_urg, tcp_stdurg off): seq + ptr - 1, or seq */
		uint32_t u = off + (s->urp ? s->urp - 1u : 0);

		if (!urgent_at(rd, u)) {
			/* one the parser has read already, or a second: not ours to place */
			if (u < rd->fed || rd->nurg == URG_MAX) {
				undecided(in, c, FD_INSPECT_URGENT, now, out, octx);
				return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
			}
			rd->urg[rd->nurg++] = u;
		}
	}
	if (s->flags & TH_FIN && off + s->plen < rd->end)
		rd->end = off + s->plen;
	rc = stream_feed(in, c);
	return after_put(in, c, pr, rc, port, f, len, off, now, out, octx);
}

/* A frame from the client of a known TCP connection. */
static int
tcp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	   const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	enum fd_inspect_frame_cnt why;
	bool undecided_state = c->state == C_WAIT || c->state == C_READ;

	touch(in, c, now);
	switch (c->state) {
	case C_CUT:
		return drop(in, FD_INSPECT_F_DROPPED);
	case C_PASSED:
		return 0;
	case C_CLOSED:
		return s->plen > 0 ? drop(in, FD_INSPECT_F_AFTER_CLOSE) : 0;
	default:
		break;
	}
	if (undecided_state && (s->flags & TH_SYN)) {
		if (c->hs != HS_SYN || port != c->cport)
			return drop(in, FD_INSPECT_F_OUTSIDE);	/* the server will not take it */
		if (s->seq != c->isn)
			c->isn2 = s->seq;	/* another SYN: the SYN-ACK says which */
		return 0;
	}
	if (s->flags & TH_RST) {
		/* the server takes it at its next byte only (RFC 5961, Linux) */
		uint32_t next = c->start + (c->rd != NULL && c->rd->released ? c->rd->fed : 0);

		if (port != c->cport || s->seq != next)
			return drop(in, FD_INSPECT_F_OUTSIDE);
		closed(in, c, now, out, octx);
		return 0;
	}
	if (s->plen == 0 && !(s->flags & TH_FIN)) {
		/* an ACK: the handshake's, when it answers the SYN-ACK */
		if (c->hs == HS_SYNACK && port == c->cport && (s->flags & TH_ACK) &&
		    s->ack == c->sisn + 1)
			c->hs = HS_EST;
		return 0;
	}
	why = tcp_readable(c, port, f, s);
	if (why != FD_INSPECT_NFRAME)
		return drop(in, why);
	c->hs = HS_EST;
	if (s->plen == 0) {	/* a bare FIN in the window: the stream ends there */
		uint32_t off = s->seq - c->start;

		if (off >= STREAM_MAX)
			return drop(in, FD_INSPECT_F_OUTSIDE);
		if (c->state == C_WAIT && !start_reading(in, c, now, out, octx))
			return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
		if (off < c->rd->end)
			c->rd->end = off;
		(void)answer(in, c, -EAGAIN, now, out, octx);
		return 0;
	}
	return tcp_bytes(in, c, port, f, len, s, now, out, octx);
}

/* A frame from the server of a known TCP connection: its SYN-ACK sets the window. */
static int
tcp_server(struct fd_inspect *in, struct conn *c, uint16_t port, const struct fd_seg *s,
	   uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	touch(in, c, now);
	if (c->state == C_CUT)
		return drop(in, FD_INSPECT_F_DROPPED);
	if (c->state != C_WAIT && c->state != C_READ)
		return 0;
	/*
	 * Its SYN-ACK, on whichever port it comes up (a one-armed appliance
	 * has its clients and servers behind one): it must ACK a SYN of the
	 * client's, which a spoofer off the path never saw.  One who sent
	 * the SYN itself may answer it too and have a hello read: what keeps
	 * its cut off another's connection is that connection's conntrack
	 * start (fd_ips).
	 */
	if ((s->flags & (TH_SYN | TH_ACK)) == (TH_SYN | TH_ACK) && c->hs == HS_SYN) {
		uint32_t acked = s->ack - 1;

		if (acked == c->isn + c->synlen || acked == c->isn ||
		    (c->isn2 != c->isn && acked == c->isn2)) {
			c->sisn = s->seq;
			c->sport = port;
			c->hs = HS_SYNACK;
			if (acked == c->isn + c->synlen && c->synlen > 0 && c->state == C_READ &&
			    c->synrc != -EAGAIN) {
				/* the server took the SYN's bytes: what they said stands now */
				(void)answer(in, c, c->synrc, now, out, octx);
			} else if (acked != c->isn + c->synlen || c->synlen == 0) {
				/* the server did not take the SYN's bytes (no cookie), or another SYN's */
				c->start = acked + 1;
				if (c->state == C_READ) {
					reading_free(in, c);
					conn_move(in, c, C_WAIT);
				}
			}
		}
		return 0;
	}
	if ((s->flags & TH_RST) && c->hs != HS_SYN && port == c->sport && s->seq == c->sisn + 1) {
		closed(in, c, now, out, octx);	/* the server ended it */
	}
	return 0;
}

/*
 * A client's SYN to a TLS port, of no connection known: an entry, its
 * stream from the byte after it; bytes on it (TCP Fast Open) read at
 * once, and the SYN dropped when they are a listed hello whole.
 */
static int
tcp_syn(struct fd_inspect *in, uint16_t port, const uint8_t *f, uint32_t len,
	const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c = conn_new(in, &s->key, C_WAIT, port, now, out, octx);
	enum put_result pr;
	int rc;

	if (c == NULL)
		return 0;	/* no memory: the SYN goes on, its bytes not seen (not_seen) */
	c->isn = c->isn2 = s->seq;
	c->synrc = -EAGAIN;
	c->start = s->seq + 1;
	c->ttl = s->ttl;
	if (s->plen == 0 || !fd_seg_csum_ok(f + s->ipoff, s))
		return 0;
	c->synlen = s->plen;
	if (!start_reading(in, c, now, out, octx))
		return c->state == C_CUT;
	pr = stream_put(in, c->rd, 0, f + s->poff, s->plen);
	if (pr == PUT_NOMEM) {
		undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return c->state == C_CUT;
	}
	rc = stream_feed(in, c);
	/*
	 * The SYN itself goes on (no handshake without it) unless its bytes
	 * are a listed hello whole.  Any other answer waits for the SYN-ACK:
	 * a server without the client's cookie drops the SYN's bytes, and
	 * what the client sends after is then the stream.
	 */
	c->rd->released = true;
	c->synrc = rc;
	if (rc == -EINPROGRESS)	/* the SYN waits for the answer (fd_inspect_answer) */
		return hold(in, c->rd, port, f, len, 0, out, octx) ? 1 : 0;
	return rc == 0 && judge(in, c, false, now, out, octx) ? 1 : 0;
}

/* ---- QUIC ---- */

/* A datagram from the client of a known UDP flow: read while its hello is. */
static int
udp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	   const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct reading *rd = c->rd;
	bool held = false;
	uint32_t off;
	int rc;

	touch(in, c, now);
	switch (c->state) {
	case C_CUT:
		return drop(in, FD_INSPECT_F_DROPPED);
	case C_READ:
		break;
	default:
		return 0;
	}
	if (port != c->cport)
		return drop(in, FD_INSPECT_F_OUTSIDE);
	if (s->ttl <= 1 || s->ttl < c->ttl)
		return drop(in, FD_INSPECT_F_LOW_TTL);
	if (!fd_seg_csum_ok(f + s->ipoff, s))
		return drop(in, FD_INSPECT_F_BAD_CSUM);
	if (!take_bytes(in, rd, s->plen)) {	/* what fc_quic keeps of it */
		undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	off = rd->seq;	/* held in the order they came: the question's number */
	rc = ask(in, c, FI_QUIC, f + s->poff, s->plen);
	if (rc == -EPROTO || rc == -E2BIG)	/* its server drops it: not read, not on */
		return drop(in, FD_INSPECT_F_QUIC_REFUSED);
	if ((rc == -EAGAIN && !rd->released) || rc == -EINPROGRESS)
		held = hold(in, rd, port, f, len, off, out, octx);
	if (answer(in, c, rc, now, out, octx)) {
		if (!held)
			in->st.frames[FD_INSPECT_F_DROPPED]++;
		return 1;
	}
	if (held)
		return 1;
	if (c->state == C_READ)
		in->st.frames[FD_INSPECT_F_READ_ON]++;
	return 0;
}

/* A datagram to a TLS port of a flow not known: read when it holds a QUIC Initial, else passed. */
static int
udp_new(struct fd_inspect *in, const struct fd_seg *s, uint16_t port, const uint8_t *f,
	uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c;

	if (!fd_seg_csum_ok(f + s->ipoff, s) || s->ttl <= 1)
		return 0;	/* the server will not take it either: no entry */
	c = conn_new(in, &s->key, C_WAIT, port, now, out, octx);
	if (c == NULL)
		return 0;
	c->ttl = s->ttl;
	if (!fc_quic_is_initial(f + s->poff, s->plen)) {
		/* not QUIC, or a flow met mid-way: not sent to the inspector for ever */
		pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		return 0;
	}
	/*
	 * A new flow's keys and first open cost the parser some 10 us; a
	 * flood of new flows (their sources spoofed at will: UDP has no
	 * handshake) is bounded by a bucket of quic_per_sec, the rest
	 * undecided.
	 */
	in->quic_tokens += (double)(now - in->quic_at) * in->p.quic_per_sec / 1000.0;
	if (in->quic_tokens > in->p.quic_per_sec)
		in->quic_tokens = in->p.quic_per_sec;
	in->quic_at = now;
	if (in->quic_tokens < 1.0) {
		undecided(in, c, FD_INSPECT_QUIC_RATE, now, out, octx);
		return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	in->quic_tokens -= 1.0;
	if (!start_reading(in, c, now, out, octx))
		return c->state == C_CUT;
	return udp_client(in, c, port, f, len, s, now, out, octx);
}

/* ---- a frame of no connection known ---- */

/*
 * Bytes to a TLS port of a connection with no entry: an entry let go
 * before its bytes came is undecided now; one flagged INSPECT is an
 * offloaded connection the inspector never saw begin (flowcutd started
 * after it): passed, so its verdict is set; else the host's.
 */
static int
unknown_bytes(struct fd_inspect *in, uint16_t port, bool flagged, const struct fd_seg *s,
	      uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct ghost g;
	struct conn *c;

	if (ghost_take(in, &s->key, &g)) {
		c = conn_new(in, &s->key, C_WAIT, port, now, out, octx);
		if (c == NULL)
			return 0;
		c->born = g.born;
		undecided(in, c, (enum fd_inspect_why)g.why, now, out, octx);
		return c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	if (!flagged)
		return 0;
	c = conn_new(in, &s->key, C_WAIT, port, now, out, octx);
	if (c != NULL)
		pass(in, c, FD_INSPECT_NOT_SEEN, NULL, NULL, now, out, octx);
	return 0;
}

/* A segment or datagram (the lock held): the inspector's (1) or the caller's (0). */
static int
segment(struct fd_inspect *in, uint16_t port, bool flagged, const uint8_t *f, uint32_t len,
	const struct fd_seg *sp, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct fd_seg s = *sp;
	struct fd_tuple rev;
	struct conn *c;
	int rc = 0;

	c = conn_find(in, &s.key);
	if (c != NULL && s.key.proto == 17) {
		rc = udp_client(in, c, port, f, len, &s, now, out, octx);
	} else if (c != NULL) {
		rc = tcp_client(in, c, port, f, len, &s, now, out, octx);
	} else if (key_reverse(&s.key, &rev), (c = conn_find(in, &rev)) != NULL) {
		if (s.key.proto == 17) {
			touch(in, c, now);
			rc = c->state == C_CUT ? drop(in, FD_INSPECT_F_DROPPED) : 0;
		} else {
			rc = tcp_server(in, c, port, &s, now, out, octx);
		}
	} else if (in->nports > 0 && tls_port(in, s.key.dport) && s.key.proto == 17) {
		if (s.plen > 0)
			rc = udp_new(in, &s, port, f, len, now, out, octx);
	} else if (in->nports > 0 && tls_port(in, s.key.dport)) {
		if ((s.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN)
			rc = tcp_syn(in, port, f, len, &s, now, out, octx);
		else if (s.plen > 0 && !(s.flags & (TH_SYN | TH_RST)))
			rc = unknown_bytes(in, port, flagged, &s, now, out, octx);
	}
	return rc;
}

/* The frames of a datagram dropped (discarded, expired): as the server's stack drops them. */
static void
frag_drop(void *arg, const struct fc_frag_datagram *d)
{
	struct fd_inspect *in = arg;

	in->st.frames[FD_INSPECT_F_FRAG_DROPPED] += d->n;
}

/*
 * An IP fragment (the lock held): held until its datagram is whole
 * (fc_frag: put back as Linux does), which is then read as a segment of
 * its own - its fragments held, handed on or dropped together.  Every
 * fragment is the inspector's (1): one the server's stack drops (a
 * duplicate, an overlap, over the bounds, expired) is dropped here too,
 * so no datagram the inspector did not read reaches the server.
 */
static int
fragment(struct fd_inspect *in, uint16_t port, bool flagged, const uint8_t *f, uint32_t len,
	 uint32_t ipoff, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct fc_frag_datagram d;
	struct fd_seg s;
	int rc;

	fc_frag_expire(in->frag, now, frag_drop, in);
	switch (fc_frag_add(in->frag, f, len, ipoff, port, now, &d)) {
	case FC_FRAG_NOT_FRAGMENT:
		return 0;
	case FC_FRAG_HELD:
		in->st.frames[FD_INSPECT_F_FRAG_HELD]++;
		return 1;
	case FC_FRAG_RESTARTED:	/* this one held, the others dropped */
		in->st.frames[FD_INSPECT_F_FRAG_HELD]++;
		frag_drop(in, &d);
		return 1;
	case FC_FRAG_WHOLE:
		break;
	case FC_FRAG_DISCARDED:	/* the others and this one */
		frag_drop(in, &d);
		in->st.frames[FD_INSPECT_F_FRAG_DROPPED]++;
		return 1;
	default:	/* DUPLICATE, REFUSED */
		in->st.frames[FD_INSPECT_F_FRAG_DROPPED]++;
		return 1;
	}
	in->st.frames[FD_INSPECT_F_FRAG_HELD]++;
	in->pieces = d.pieces;
	in->npieces = d.n;
	rc = fd_seg_parse_ip(d.ip, d.len, 0, &s) == 0 &&
	     (tls_port(in, s.key.dport) || tls_port(in, s.key.sport) || in->nentries > 0)
		? segment(in, port, flagged, d.ip, d.len, &s, now, out, octx) : 0;
	if (rc == 0)	/* the caller's: its fragments go on, in the order they came */
		for (unsigned int i = 0; i < in->npieces; i++)
			out(octx, (uint16_t)in->pieces[i].tag, in->pieces[i].frame,
			    in->pieces[i].len);
	in->npieces = 0;
	return 1;
}

int
fd_inspect_frame(struct fd_inspect *in, uint16_t port, bool flagged, const uint8_t *f,
		 uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct fd_seg s;
	struct fc_seg g;
	int rc = 0, ipoff;

	if (fd_seg_parse(f, len, &s) != 0) {
		/* an IP fragment, while anything is read: put back together first */
		if (__atomic_load_n(&in->nports, __ATOMIC_RELAXED) == 0 ||
		    (ipoff = fc_seg_ether(f, len)) < 0 ||
		    fc_seg_ip(f + ipoff, len - (uint32_t)ipoff, &g) != FC_SEG_FRAGMENT)
			goto theirs;
		pthread_mutex_lock(&in->mu);
		in->now = now;
		rc = fragment(in, port, flagged, f, len, (uint32_t)ipoff, now, out, octx);
		pthread_mutex_unlock(&in->mu);
		if (rc != 0)
			return rc;
		goto theirs;
	}
	if (!tls_port(in, s.key.dport) && !tls_port(in, s.key.sport) &&
	    __atomic_load_n(&in->nentries, __ATOMIC_RELAXED) == 0)
		goto theirs;
	pthread_mutex_lock(&in->mu);
	in->now = now;
	rc = segment(in, port, flagged, f, len, &s, now, out, octx);
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

	pthread_mutex_lock(&in->mu);
	in->now = now;
	fc_frag_expire(in->frag, now, frag_drop, in);
	/* asked, and no answer within answer_ms: the parser is stopped, or swamped */
	if (in->local == NULL)
		for (c = TAILQ_FIRST(&in->lists[L_READING].q); c != NULL; c = next) {
			next = TAILQ_NEXT(c, age);
			if (c->rd->asked > 0 && now - c->rd->asked_at >= in->p.answer_ms)
				undecided(in, c, FD_INSPECT_PARSER_LATE, now, out, octx);
		}
	/* waiting for their first byte: read_ms from their SYN; their bytes undecided if they come */
	while ((c = TAILQ_FIRST(&in->lists[L_WAITING].q)) != NULL && now - c->born >= in->p.read_ms) {
		ghost_add(in, c, FD_INSPECT_TIMEOUT);
		conn_free(in, c);
	}
	/* being read, in the order they started: held frames let go, then read_ms */
	for (c = TAILQ_FIRST(&in->lists[L_READING].q); c != NULL; c = next) {
		next = TAILQ_NEXT(c, age);	/* undecided() moves c off this list */
		if (now - c->rd->since < in->p.hold_ms)
			break;
		if (now - c->rd->since >= in->p.read_ms) {
			undecided(in, c, FD_INSPECT_TIMEOUT, now, out, octx);
		} else if (!c->rd->released) {
			release(in, c->rd, out, octx);
			c->rd->released = true;
		}
	}
	for (int l = L_DECIDED; l <= L_CUT; l++)
		while ((c = TAILQ_FIRST(&in->lists[l].q)) != NULL && now - c->last >= in->p.linger_ms)
			conn_free(in, c);
	pthread_mutex_unlock(&in->mu);
}

/* ---- the parser's answers (over the channel) ---- */

/* The held frame of a datagram the parser refused (the server drops it too): dropped. */
static void
held_drop(struct fd_inspect *in, struct reading *rd, uint32_t off)
{
	for (struct held **pp = &rd->held; *pp != NULL; pp = &(*pp)->next) {
		struct held *h = *pp;

		if (h->off != off)
			continue;
		*pp = h->next;
		rd->nheld--;
		rd->held_bytes -= h->len;
		in->st.bytes -= sizeof(*h) + h->len;
		rd->bytes -= sizeof(*h) + h->len;
		free(h);
		in->st.frames[FD_INSPECT_F_QUIC_REFUSED]++;
		return;
	}
}

/* One answer, for c (being read, its id the answer's): what it says acted on. */
static void
answered(struct fd_inspect *in, struct conn *c, const struct fi_ans *a, uint64_t now,
	 fd_inspect_out_fn *out, void *octx)
{
	struct reading *rd = c->rd;
	int rc = a->rc;

	rd->asked--;
	rd->asked_at = now;
	if (rc == 0) {
		memcpy(rd->ja4, a->ja4, sizeof(rd->ja4));
		memcpy(rd->ja3, a->ja3, sizeof(rd->ja3));
		memcpy(rd->sni, a->sni, sizeof(rd->sni));
	}
	if (a->kind == FI_QUIC && (rc == -EPROTO || rc == -E2BIG)) {
		held_drop(in, rd, a->seq);	/* not read, not on; the flow's reading goes on */
		rc = -EAGAIN;
	}
	if (c->key.proto == 6 && c->hs == HS_SYN) {
		/*
		 * The SYN's own bytes (TCP Fast Open): the SYN goes on unless
		 * they are a listed hello whole; the rest waits for the SYN-ACK
		 * (tcp_syn, tcp_server).
		 */
		c->synrc = rc;
		if (rc == 0 && judge(in, c, false, now, out, octx))
			return;
		if (rd->asked == 0)
			release(in, rd, out, octx);
		return;
	}
	if (answer(in, c, rc, now, out, octx) || c->state != C_READ)
		return;
	/* still reading, its held frames let go already: those waiting for this answer go on */
	if (rd->released && rd->asked == 0 && rd->held != NULL)
		release(in, rd, out, octx);
}

int
fd_inspect_answer(struct fd_inspect *in, const void *msg, size_t len, uint64_t now,
		  fd_inspect_out_fn *out, void *octx)
{
	struct fi_ans a;
	struct fd_tuple k;
	struct conn *c;

	if (fi_wire_ans_check(msg, len, NULL) != 0)
		return -EBADMSG;
	memcpy(&a, msg, sizeof(a));
	memcpy(&k, a.ctx, sizeof(k));
	pthread_mutex_lock(&in->mu);
	in->now = now;
	in->st.answered++;
	c = conn_find(in, &k);
	if (c == NULL || c->state != C_READ || c->rd->id != a.id || c->rd->asked == 0)
		in->st.answers_stale++;	/* decided meanwhile (late, evicted, the setting's) */
	else
		answered(in, c, &a, now, out, octx);
	pthread_mutex_unlock(&in->mu);
	return 0;
}

void
fd_inspect_parser_lost(struct fd_inspect *in, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c, *next;

	pthread_mutex_lock(&in->mu);
	in->now = now;
	for (c = TAILQ_FIRST(&in->lists[L_READING].q); c != NULL; c = next) {
		next = TAILQ_NEXT(c, age);
		if (c->rd->seq > 0)	/* its parser was there: gone with its bytes */
			undecided(in, c, FD_INSPECT_PARSER_DOWN, now, out, octx);
	}
	pthread_mutex_unlock(&in->mu);
}

/* ---- the main thread's side ---- */

static void
params_fill(struct fd_inspect_params *p)
{
	p->max_conns = p->max_conns ? p->max_conns : 1024;
	p->per_source = p->per_source ? p->per_source : (p->max_conns + 7) / 8;
	p->max_entries = p->max_entries ? p->max_entries : 65536;
	p->max_bytes = p->max_bytes ? p->max_bytes : (size_t)256 << 20;
	p->quic_per_sec = p->quic_per_sec ? p->quic_per_sec : 5000;
	p->hold_ms = p->hold_ms ? p->hold_ms : 2000;
	p->read_ms = p->read_ms ? p->read_ms : 120000;
	p->linger_ms = p->linger_ms ? p->linger_ms : 10000;
	p->queue = p->queue ? p->queue : 4096;
	p->answer_ms = p->answer_ms ? p->answer_ms : 1000;
}

struct fd_inspect *
fd_inspect_open(const struct fd_inspect_params *p)
{
	struct fd_inspect *in = calloc(1, sizeof(*in));

	if (in == NULL)
		return NULL;
	if (p != NULL)
		in->p = *p;
	params_fill(&in->p);
	for (int l = 0; l < NLISTS; l++)
		TAILQ_INIT(&in->lists[l].q);
	in->max_cut = (in->p.max_entries + 3) / 4;
	in->src_entries = (in->p.max_entries + 15) / 16;
	in->src_cut = (in->max_cut + 15) / 16;
	in->qcap = in->p.queue;
	in->quic_tokens = in->p.quic_per_sec;
	in->frag = fc_frag_open(&(struct fc_frag_params){ .max_datagrams = FRAG_DATAGRAMS,
							  .max_bytes = FRAG_BYTES,
							  .timeout_ms = FRAG_TIMEOUT_MS });
	in->q = calloc(in->qcap, sizeof(*in->q));
	in->table = calloc(TABLE_SIZE, sizeof(*in->table));
	in->ghosts = calloc(GHOSTS, sizeof(*in->ghosts));
	in->req = malloc(FI_REQ_MAX);
	if (in->p.ask == NULL)
		in->local = fi_parse_open(in->p.max_conns + in->p.max_conns / 4);
	if (in->q == NULL || in->table == NULL || in->ghosts == NULL || in->frag == NULL ||
	    in->req == NULL || (in->p.ask == NULL && in->local == NULL) ||
	    pthread_mutex_init(&in->mu, NULL) != 0) {
		fi_parse_close(in->local);
		free(in->req);
		fc_frag_close(in->frag);
		free(in->q);
		free(in->table);
		free(in->ghosts);
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
	for (int l = 0; l < NLISTS; l++)
		while (!TAILQ_EMPTY(&in->lists[l].q))
			conn_free(in, TAILQ_FIRST(&in->lists[l].q));
	fc_fplist_free(&in->watched);
	fc_frag_close(in->frag);
	fi_parse_close(in->local);
	free(in->req);
	pthread_mutex_destroy(&in->mu);
	free(in->q);
	free(in->table);
	free(in->ghosts);
	free(in);
}

void
fd_inspect_tune(struct fd_inspect *in, uint32_t hold_ms, uint32_t read_ms, bool undecided_cut)
{
	pthread_mutex_lock(&in->mu);
	in->p.hold_ms = hold_ms;
	in->p.read_ms = read_ms;
	in->p.undecided_cut = undecided_cut;
	params_fill(&in->p);
	pthread_mutex_unlock(&in->mu);
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
	__atomic_store_n(&in->nports, n, __ATOMIC_RELAXED);
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
		in->qhead = (in->qhead + 1) % in->qcap;
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
fd_inspect_forget(struct fd_inspect *in, const struct fd_tuple *k)
{
	struct conn *c;

	pthread_mutex_lock(&in->mu);
	c = conn_find(in, k);
	if (c != NULL && c->state == C_CUT)
		conn_free(in, c);
	pthread_mutex_unlock(&in->mu);
}

void
fd_inspect_stats(struct fd_inspect *in, struct fd_inspect_stats *out)
{
	pthread_mutex_lock(&in->mu);
	*out = in->st;
	out->frames[FD_INSPECT_F_PASSED] = __atomic_load_n(&in->st.frames[FD_INSPECT_F_PASSED],
							   __ATOMIC_RELAXED);
	out->reading = in->lists[L_READING].n;
	out->entries = in->nentries;
	pthread_mutex_unlock(&in->mu);
}
