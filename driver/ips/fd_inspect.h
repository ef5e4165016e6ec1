/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect: flowcutd's inspector - the TLS ClientHello (TCP) or QUIC
 * Initial (UDP) of each connection to a TLS port, read from the frames
 * the coprocessor hands up as the server's stack will take them, and the
 * client's frames held until it has decided: passed (handed on in
 * sequence order, a PASS queued: the binding sets CUT_THRU) or cut (a
 * listed JA4 or JA3: nothing goes on, a CUT queued).  What it reads, what
 * it refuses to read, and why: docs/fingerprints.md ("How the inspector
 * reads"); in short an entry is made only by a client's SYN and read
 * only once the server's SYN-ACK answered it, and only segments the
 * server will take are read (in the window, right checksum, a TTL that
 * reaches, urgent bytes taken out); what it cannot decide (memory, a
 * hello it cannot read, time) is "undecided": passed or cut as the
 * setting says, counted by why.
 *
 * Pure of I/O: frames in by call, out through the caller's out(); time is
 * the caller's (ms); decisions taken by the caller (fd_inspect_take).
 * The parsing of the hello itself (inspector/fi_parse: fc_tls, fc_quic,
 * fc_ja) is asked of another process through the caller's ask() and its
 * answers come back by fd_inspect_answer: flowcutd's parser is
 * flowcut-inspect, without root (docs/fingerprints.md, "The inspector's
 * own process").  Without ask() it runs in this process, answering at
 * once (the tests, the fuzz target, the benchmark's floor).
 * Threads: fd_inspect_frame and fd_inspect_tick from one thread (the
 * relay's "up"), the rest from any: a mutex inside; out() is called with
 * it held and must not call back in.  fd_inspect_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_INSPECT_H
#define FLOWCUT_FD_INSPECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_fplist.h"
#include "fd_tuple.h"

/*
 * Why a connection was passed or cut: the decision's `why`, a counter
 * each.  U: 1 when it is undecided (its fate the setting's).
 */
#define FD_INSPECT_WHYS(X)						\
	X(LISTED_JA4, "cut_ja4", 0)	/* its JA4 is listed: cut */	\
	X(LISTED_JA3, "cut_ja3", 0)	/* its JA3 is listed (its JA4 not): cut */ \
	X(NOT_LISTED, "passed", 0)	/* a whole hello, not listed */	\
	X(NOT_HELLO, "not_hello", 0)	/* its stream is no ClientHello, no QUIC Initial */ \
	X(NOT_SEEN, "not_seen", 0)	/* met mid-stream: its SYN was never seen */ \
	X(CLOSED, "closed", 0)		/* closed (FIN, RST) before a whole hello: nothing more read */ \
	X(MALFORMED, "malformed", 1)	/* a hello fc_tls or fc_quic refused */ \
	X(TOO_BIG, "too_big", 1)	/* past the largest hello a server takes */ \
	X(TIMEOUT, "timeout", 1)	/* no whole hello within read_ms */ \
	X(MEMORY, "memory", 1)		/* the bytes it needs are over max_bytes */ \
	X(EVICTED, "evicted", 1)	/* its entry made room for a newer one */ \
	X(URGENT, "urgent", 1)		/* urgent bytes whose place the server's reads decide */ \
	X(QUIC_RATE, "quic_over_rate", 1)	/* a new QUIC flow over quic_per_sec: not read */ \
	X(PARSER_DOWN, "parser_down", 1)	/* no parser, or it went with this one's bytes */ \
	X(PARSER_BUSY, "parser_busy", 1)	/* the channel to the parser was full */ \
	X(PARSER_LATE, "parser_late", 1)	/* no answer within answer_ms */

enum fd_inspect_why {
#define FD_INSPECT_WHY_(n, s, u) FD_INSPECT_##n,
	FD_INSPECT_WHYS(FD_INSPECT_WHY_)
#undef FD_INSPECT_WHY_
	FD_INSPECT_NWHY
};

/* Frames, counted once each by what happened to them. */
#define FD_INSPECT_FRAMES(X)						\
	X(HELD, "frames_held")		/* a client frame held, waiting */ \
	X(RELEASED, "frames_released")	/* a held frame handed on */	\
	X(DROPPED, "frames_dropped")	/* of a connection cut: held ones and later ones */ \
	X(DUP, "frames_dup")		/* bytes held already: the first copy goes on */ \
	X(PASSED, "frames_passed")	/* flagged INSPECT, the inspector's no more: handed on */ \
	X(READ_ON, "frames_read_on")	/* read and handed on at once: held ones let go (hold_ms) */ \
	X(BAD_CSUM, "frames_bad_csum")	/* not read, dropped: a wrong checksum */ \
	X(LOW_TTL, "frames_low_ttl")	/* not read, dropped: a TTL below the SYN's, or 1 */ \
	X(OUTSIDE, "frames_outside")	/* not read, dropped: outside the window, unanswered ACK, wrong port */ \
	X(CONFLICT, "frames_conflict")	/* not read, dropped: bytes unlike those read at their place */ \
	X(AFTER_CLOSE, "frames_after_close")	/* data after the stream's end, dropped */ \
	X(QUIC_REFUSED, "frames_quic_refused")	/* not read, dropped: a QUIC datagram its server drops */ \
	X(FRAG_HELD, "frames_fragment_held")	/* an IP fragment held until its datagram is whole */ \
	X(FRAG_DROPPED, "frames_fragment_dropped")	/* an IP fragment the server's stack drops too */

enum fd_inspect_frame_cnt {
#define FD_INSPECT_FRAME_(n, s) FD_INSPECT_F_##n,
	FD_INSPECT_FRAMES(FD_INSPECT_FRAME_)
#undef FD_INSPECT_FRAME_
	FD_INSPECT_NFRAME
};

struct fd_inspect_stats {
	uint64_t why[FD_INSPECT_NWHY];		/* connections decided, by why */
	uint64_t frames[FD_INSPECT_NFRAME];
	uint64_t hellos;			/* ClientHellos read whole and fingerprinted */
	uint64_t asked;				/* questions to the parser (bytes, datagrams) */
	uint64_t answered;			/* ... answered */
	uint64_t answers_stale;			/* answers for a connection decided or let go since */
	uint64_t passes_lost;			/* a PASS not queued: full (CUTs never are) */
	uint64_t evicted_waiting;		/* entries without bytes yet made room */
	uint64_t undecided_cut;			/* undecided, cut (the setting) */
	uint32_t reading;			/* connections being read now (<= max_conns) */
	uint32_t entries;			/* connections remembered now */
	uint64_t bytes;				/* bytes held now (streams and frames) */
};

const char *fd_inspect_why_name(enum fd_inspect_why w);
/* fd_inspect_why_undecided - whether w leaves the connection's fate to the setting. */
bool fd_inspect_why_undecided(enum fd_inspect_why w);
const char *fd_inspect_frame_name(enum fd_inspect_frame_cnt f);

/* One decision, for the binding: pass (verdict CUT_THRU) or cut. */
struct fd_inspect_decision {
	struct fd_tuple key;
	uint64_t born_ms;		/* the caller's clock: its SYN (its first datagram) was seen */
	bool cut;
	uint8_t why;			/* enum fd_inspect_why */
	char ja4[37];			/* "" when no whole hello was read */
	char ja3[33];
	char sni[64];			/* printable, cut short; "" without SNI */
	unsigned long line;		/* the watched file's line that matched (cut) */
};

/*
 * The parser asked (flowcutd: flowcut-inspect over its socket): one
 * question of fi_wire, len bytes, sent whole or not at all, never
 * waiting.  0 sent, -EAGAIN the channel is full, another negative errno
 * no parser.  Called with the inspector's lock held: must not call back.
 */
typedef int fd_inspect_ask_fn(void *actx, const void *msg, size_t len);

struct fd_inspect_params {
	unsigned int max_conns;		/* being read at once; 0: 1024 */
	unsigned int per_source;	/* ... from one source (an IPv4 address, an IPv6 /64); 0: max_conns / 8 */
	unsigned int max_entries;	/* remembered at once; 0: 65536 (a sixteenth a source) */
	size_t max_bytes;		/* held in all (streams, frames, parsers); 0: 256 MiB */
	unsigned int quic_per_sec;	/* new QUIC flows read a second, at most; 0: 5000 */
	uint32_t hold_ms;		/* held frames let go after (reading goes on); 0: 2000 */
	uint32_t read_ms;		/* a hello may take this long from the SYN; 0: 120000 */
	uint32_t linger_ms;		/* a decided one is remembered after its last frame; 0: 10000 */
	bool undecided_cut;		/* what an undecided connection gets: cut, or pass */
	unsigned int queue;		/* decisions waiting to be taken; 0: 4096 (CUTs grow it) */
	fd_inspect_ask_fn *ask;		/* the parser, in another process; NULL: in this one */
	void *actx;
	uint32_t answer_ms;		/* an answer may take this long, or undecided; 0: 1000 */
};

/* Where the frames go on: the host's TAP of `port` (the caller's). */
typedef void fd_inspect_out_fn(void *octx, uint16_t port, const uint8_t *frame, uint32_t len);

struct fd_inspect;

/* fd_inspect_open - an inspector reading nothing yet (no TLS ports).  NULL p: the defaults.  NULL, errno. */
struct fd_inspect *fd_inspect_open(const struct fd_inspect_params *p);
/* fd_inspect_close - frees everything; held frames are dropped. */
void fd_inspect_close(struct fd_inspect *in);

/* fd_inspect_tune - hold_ms, read_ms (0: their defaults) and undecided_cut from now on. */
void fd_inspect_tune(struct fd_inspect *in, uint32_t hold_ms, uint32_t read_ms, bool undecided_cut);
/*
 * fd_inspect_ports - the TLS ports (host order); n 0: none, nothing new
 * is read (connections being read finish as they would).
 */
void fd_inspect_ports(struct fd_inspect *in, const uint16_t *ports, unsigned int n);
/* fd_inspect_watch - the watched fingerprints, taken over (*l is left empty). */
void fd_inspect_watch(struct fd_inspect *in, struct fc_fplist *l);

/*
 * fd_inspect_frame - one Ethernet frame the coprocessor handed up on
 * `port`, `flagged` INSPECT or not, at `now_ms`.  Returns 1 when the
 * inspector took it (held, handed on through out(), or dropped) and 0
 * when it is the caller's to hand on as usual (not the inspector's, or
 * to go on now: frames it released first have gone through out()).
 */
int fd_inspect_frame(struct fd_inspect *in, uint16_t port, bool flagged, const uint8_t *frame,
		     uint32_t len, uint64_t now_ms, fd_inspect_out_fn *out, void *octx);

/* fd_inspect_tick - deadlines: held frames let go, connections read too long undecided, old entries forgotten. */
void fd_inspect_tick(struct fd_inspect *in, uint64_t now_ms, fd_inspect_out_fn *out, void *octx);

/*
 * fd_inspect_answer - one answer of the parser (an fi_ans record of len
 * bytes), from any thread: acted on as the answer to the question it
 * names (decided, held frames handed on or dropped through out()), or
 * counted stale.  0, or -EBADMSG (not an answer: the channel is not to
 * be trusted further).
 */
int fd_inspect_answer(struct fd_inspect *in, const void *msg, size_t len, uint64_t now_ms,
		      fd_inspect_out_fn *out, void *octx);

/*
 * fd_inspect_parser_lost - the parser went (its process ended, its
 * channel closed): every connection it was reading is undecided
 * (parser_down) now, as the setting says.
 */
void fd_inspect_parser_lost(struct fd_inspect *in, uint64_t now_ms, fd_inspect_out_fn *out,
			    void *octx);

/* fd_inspect_take - the oldest decision not taken: 1 and *d, or 0 (none). */
int fd_inspect_take(struct fd_inspect *in, struct fd_inspect_decision *d);
/* fd_inspect_holds - any connection remembered (any thread, no lock): fd_inspect_tick has work. */
bool fd_inspect_holds(const struct fd_inspect *in);
/* fd_inspect_queued - decisions ever queued (any thread, no lock): a change means news. */
uint64_t fd_inspect_queued(const struct fd_inspect *in);

/*
 * fd_inspect_verdict - for an offload: FC_VERDICT_CUT_THRU when the
 * connection was passed already, else FC_VERDICT_SEND_TO_IPS (being read,
 * not seen yet, or cut: its cut is queued, and its frames meet it here).
 */
uint8_t fd_inspect_verdict(struct fd_inspect *in, const struct fd_tuple *k);

/*
 * fd_inspect_forget - a cut entry of k let go: its cut was not made (the
 * tuple's state is another connection's), so its frames go on again.
 */
void fd_inspect_forget(struct fd_inspect *in, const struct fd_tuple *k);

void fd_inspect_stats(struct fd_inspect *in, struct fd_inspect_stats *out);

#endif
