/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_priv.h: what fd_inspect's files share and nobody else sees -
 * the table (entries hashed, each on one of four lists by what it waits
 * for - waiting, reading, decided, cut - oldest first, and on its
 * source's list), a reading and its held frames, the frame path's small
 * helpers (static inline) and the ins_ calls one file makes in another.
 *
 * The files, one job each; a file calls only files below it:
 *   fd_inspect.c         the main thread's side (-> table)
 *   fd_inspect_frame.c   a frame in, fragments, no connection known, the tick
 *   fd_inspect_answer.c  the parser's answers over the channel (-> decide)
 *   fd_inspect_tcp.c     TCP: the handshake, the window, the stream
 *   fd_inspect_quic.c    QUIC
 *   fd_inspect_entry.c   entries made, their reading started, frames held
 *   fd_inspect_decide.c  decisions: passed, cut, undecided, queued
 *   fd_inspect_table.c   entries let go, sources, ghosts
 *   fd_inspect_parse.c   the parser asked, here or over the channel
 * so frame -> tcp, quic -> entry -> decide -> table -> parse.  Making an
 * entry may let an older one go undecided: entries made sit above the
 * decisions, entries let go below them.
 *
 * Hand-written: the frames come from our own coprocessor over the link;
 * what is needed is a normaliser that reads a stream as one peer's stack
 * will, holds the frames, and hands on only bytes it read - no library
 * in Debian does that for an inline reader without taking the socket or
 * the capture.
 */
#ifndef FLOWCUT_FD_INSPECT_PRIV_H
#define FLOWCUT_FD_INSPECT_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/queue.h>

#include "fc_tls.h"
#include "fd_inspect.h"

struct fc_frag;
struct fc_frag_piece;
struct fd_seg;
struct fi_ans;
struct fi_parse;

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
/*
 * Urgent bytes taken out of a stream: one.  A later urgent pointer moves
 * Linux's mark, and whether the byte it left is then read in the stream
 * or skipped depends on how far the server's application has read
 * (tcp_check_urg): not the inspector's to know, so a second is URGENT.
 */
#define URG_MAX 1
#define NO_END UINT32_MAX

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

/* FNV-1a over the whole key (it has no padding: fd_tuple.h). */
static inline uint64_t
ins_key_hash(const struct fd_tuple *k)
{
	const uint8_t *p = (const uint8_t *)k;
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < sizeof(*k); i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h | 1;	/* never 0: a ghost's empty slot */
}

static inline struct conn *
ins_conn_find(struct fd_inspect *in, const struct fd_tuple *k)
{
	for (struct conn *c = in->table[ins_key_hash(k) % TABLE_SIZE]; c != NULL; c = c->hnext)
		if (memcmp(&c->key, k, sizeof(*k)) == 0)
			return c;
	return NULL;
}

static inline int
ins_list_of(enum conn_state st)
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

static inline void
ins_list_unlink(struct fd_inspect *in, struct conn *c)
{
	struct clist *l = &in->lists[ins_list_of(c->state)];

	TAILQ_REMOVE(&l->q, c, age);
	l->n--;
}

static inline void
ins_list_append(struct fd_inspect *in, struct conn *c)
{
	struct clist *l = &in->lists[ins_list_of(c->state)];

	TAILQ_INSERT_TAIL(&l->q, c, age);
	l->n++;
}

/* c moves to the state st (and the end of its list); its source counts follow. */
static inline void
ins_conn_move(struct fd_inspect *in, struct conn *c, enum conn_state st)
{
	ins_list_unlink(in, c);
	c->src->reading -= c->state == C_READ;
	c->src->cut -= c->state == C_CUT;
	c->state = st;
	c->src->reading += st == C_READ;
	c->src->cut += st == C_CUT;
	ins_list_append(in, c);
}

/* A frame of c at now: a decided one moves to its list's end (the linger counts from it). */
static inline void
ins_touch(struct fd_inspect *in, struct conn *c, uint64_t now)
{
	c->last = now;
	if (c->state != C_WAIT && c->state != C_READ && TAILQ_NEXT(c, age) != NULL) {
		ins_list_unlink(in, c);
		ins_list_append(in, c);
	}
}

/* Bytes for c's reading, of max_bytes: false (and nothing taken) when over. */
static inline bool
ins_take_bytes(struct fd_inspect *in, struct reading *rd, size_t n)
{
	if (in->st.bytes + n > in->p.max_bytes)
		return false;
	in->st.bytes += n;
	rd->bytes += n;
	return true;
}

/* Counts a frame not read and says it is taken (dropped). */
static inline int
ins_drop(struct fd_inspect *in, enum fd_inspect_frame_cnt why)
{
	in->st.frames[why]++;
	return 1;
}

/* fd_inspect_tcp.c */
int ins_tcp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f,
		   uint32_t len, const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out,
		   void *octx);
int ins_tcp_server(struct fd_inspect *in, struct conn *c, uint16_t port, const struct fd_seg *s,
		   uint64_t now, fd_inspect_out_fn *out, void *octx);
int ins_tcp_syn(struct fd_inspect *in, uint16_t port, const uint8_t *f, uint32_t len,
		const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx);

/* fd_inspect_quic.c */
int ins_udp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f,
		   uint32_t len, const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out,
		   void *octx);
int ins_udp_new(struct fd_inspect *in, const struct fd_seg *s, uint16_t port, const uint8_t *f,
		uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx);

/* fd_inspect_entry.c */
struct conn *ins_conn_new(struct fd_inspect *in, const struct fd_tuple *k, enum conn_state st,
			  uint16_t port, uint64_t now, fd_inspect_out_fn *out, void *octx);
bool ins_start_reading(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out,
		       void *octx);
bool ins_hold(struct fd_inspect *in, struct reading *rd, uint16_t port, const uint8_t *f,
	      uint32_t len, uint32_t off, fd_inspect_out_fn *out, void *octx);

/* fd_inspect_decide.c */
void ins_release(struct fd_inspect *in, struct reading *rd, fd_inspect_out_fn *out, void *octx);
void ins_pass(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
	      const char *ja3, uint64_t now, fd_inspect_out_fn *out, void *octx);
void ins_undecided(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, uint64_t now,
		   fd_inspect_out_fn *out, void *octx);
bool ins_judge(struct fd_inspect *in, struct conn *c, bool may_pass, uint64_t now,
	       fd_inspect_out_fn *out, void *octx);
bool ins_answer(struct fd_inspect *in, struct conn *c, int rc, uint64_t now, fd_inspect_out_fn *out,
		void *octx);

/* fd_inspect_table.c */
struct source *ins_source_get(struct fd_inspect *in, const struct fd_tuple *k);
void ins_source_put(struct fd_inspect *in, struct source *s);
void ins_ghost_add(struct fd_inspect *in, const struct conn *c, enum fd_inspect_why why);
bool ins_ghost_take(struct fd_inspect *in, const struct fd_tuple *k, struct ghost *out);
void ins_held_free(struct fd_inspect *in, struct reading *rd);
void ins_reading_free(struct fd_inspect *in, struct conn *c);
void ins_conn_free(struct fd_inspect *in, struct conn *c);
void ins_evict_cut(struct fd_inspect *in, struct conn *keep);

/* fd_inspect_parse.c */
int ins_ask(struct fd_inspect *in, struct conn *c, uint8_t kind, const uint8_t *data, uint32_t len);

#endif
