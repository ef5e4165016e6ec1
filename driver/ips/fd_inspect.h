/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect: flowcutd's inspector - the TLS ClientHello of each TCP
 * connection to a TLS port, read like an inline IPS reads it.
 *
 * It sees the frames the coprocessor hands up: those flagged INSPECT (a
 * connection offloaded with verdict SEND_TO_IPS) and those of the host
 * path (a connection not offloaded yet: its ClientHello often comes up
 * before its offload is done).  For each connection to a TLS port it
 * puts the client's bytes back in order from the first (the SYN says
 * where the stream starts; without it, from the first bytes it sees),
 * across segments (a post-quantum ClientHello
 * spans two), into fc_tls, and HOLDS the client's frames until it has
 * decided:
 *
 *   - the hello is whole and neither its JA4 nor its JA3 is listed: the
 *     held frames are handed on (out(), unchanged, in sequence order),
 *     and a PASS decision is queued (the binding sets the verdict
 *     CUT_THRU; fd_inspect_verdict() says CUT_THRU to an offload from
 *     then on);
 *   - its JA4 or JA3 is listed: no frame goes on, every later frame of
 *     the connection (both ways) is dropped while it is remembered, and a
 *     CUT decision is queued (the binding cuts it: fd_cut);
 *   - the first bytes are not a ClientHello, the hello is malformed or
 *     over 16 KiB (or its frames too many), 2 s pass without a whole one
 *     (from the first byte), or the client closes first: handed on,
 *     PASS, counted by why;
 *   - more than max_conns connections are being read: the new one is
 *     not, PASS, counted.
 *
 * QUIC (UDP to a TLS port): a flow whose first client datagram holds a
 * QUIC Initial is read the same way, its datagrams held in their order,
 * their Initials decrypted by fc_quic until the hello is whole, its JA4
 * taken with 'q'; a flow to a TLS port whose first datagram is no Initial
 * is passed (not_hello) so it is not sent to the inspector for ever.
 *
 * A decided connection is remembered (linger_ms after its last frame) so
 * the frames still in flight meet the same fate; a connection seen by its
 * SYN waits (wait_ms) for its first bytes.  Entries are bounded (4 x
 * max_conns; the oldest not being read make room).  Frames that are not
 * its - not TCP, not to or from a TLS port, not of a connection it knows,
 * IP fragments - it leaves to the caller (return 0).
 *
 * Pure of I/O: frames come in by call, leave through the caller's out()
 * callback; time is the caller's clock (ms); decisions are taken by the
 * caller (fd_inspect_take).  Threads: fd_inspect_frame and fd_inspect_tick
 * from one thread (the relay's "up"); the others from any (the main
 * thread): a mutex inside.  out() is called with it held: it must not
 * call back in.  fd_inspect_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_INSPECT_H
#define FLOWCUT_FD_INSPECT_H

#include <stdbool.h>
#include <stdint.h>

#include "fc_fplist.h"
#include "fd_tuple.h"

/*
 * A connection's key is a struct fd_tuple (fd_tuple.h): as its client's
 * frames carry it (before any NAT), src the client, dport a TLS port,
 * proto 6 TCP or 17 UDP (QUIC); printed by fd_tuple_format.
 */

/* Why a connection was passed or cut: the decision's `why`, and a counter each. */
#define FD_INSPECT_WHYS(X)						\
	X(LISTED_JA4, "cut_ja4")	/* its JA4 is listed: cut */	\
	X(LISTED_JA3, "cut_ja3")	/* its JA3 is listed (its JA4 not): cut */ \
	X(NOT_LISTED, "passed")		/* a whole hello, not listed: CUT_THRU */ \
	X(NOT_HELLO, "not_hello")	/* its first bytes are not a ClientHello */ \
	X(MALFORMED, "malformed")	/* a ClientHello fc_tls refused */ \
	X(TOO_BIG, "too_big")		/* no whole hello within 16 KiB (or 64 frames) */ \
	X(TIMEOUT, "timeout")		/* no whole hello within the deadline (2 s) */ \
	X(CLOSED, "closed")		/* a FIN or RST before a whole hello */ \
	X(OVER_CAP, "over_cap")		/* not read: max_conns were being read */

enum fd_inspect_why {
#define FD_INSPECT_WHY_(n, s) FD_INSPECT_##n,
	FD_INSPECT_WHYS(FD_INSPECT_WHY_)
#undef FD_INSPECT_WHY_
	FD_INSPECT_NWHY
};

/* Frames, counted once each by what happened to them. */
#define FD_INSPECT_FRAMES(X)						\
	X(HELD, "frames_held")		/* a client frame held, waiting */ \
	X(RELEASED, "frames_released")	/* a held frame handed on */	\
	X(DROPPED, "frames_dropped")	/* of a connection cut: held ones and later ones */ \
	X(DUP, "frames_dup")		/* a retransmission of bytes held: the first copy goes on */ \
	X(PASSED, "frames_passed")	/* flagged INSPECT, the inspector's no more: handed on as is */

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
	uint64_t decisions_lost;		/* the queue was full (the connection stays SEND_TO_IPS) */
	uint64_t no_room;			/* a SYN not remembered: every entry in use */
	uint32_t reading;			/* connections being read now (<= max_conns) */
	uint32_t entries;			/* connections remembered now */
};

const char *fd_inspect_why_name(enum fd_inspect_why w);
const char *fd_inspect_frame_name(enum fd_inspect_frame_cnt f);

/* One decision, for the binding: pass (verdict CUT_THRU) or cut. */
struct fd_inspect_decision {
	struct fd_tuple key;
	bool cut;
	uint8_t why;			/* enum fd_inspect_why */
	char ja4[37];			/* "" when no whole hello was read */
	char ja3[33];
	char sni[64];			/* printable, cut short; "" without SNI */
	unsigned long line;		/* the watched file's line that matched (cut) */
};

struct fd_inspect_params {
	unsigned int max_conns;		/* being read at once; 0: 1024 */
	uint32_t deadline_ms;		/* for a whole hello from the first byte; 0: 2000 */
	uint32_t wait_ms;		/* a SYN waits this long for the first bytes; 0: 10000 */
	uint32_t linger_ms;		/* a decided one is remembered after its last frame; 0: 10000 */
	unsigned int queue;		/* decisions waiting to be taken; 0: 4096 */
};

/* Where the frames go on: the host's TAP of `port` (the caller's). */
typedef void fd_inspect_out_fn(void *octx, uint16_t port, const uint8_t *frame, uint32_t len);

struct fd_inspect;

/* fd_inspect_open - an inspector reading nothing yet (no TLS ports).  NULL p: the defaults.  NULL, errno. */
struct fd_inspect *fd_inspect_open(const struct fd_inspect_params *p);
/* fd_inspect_close - frees everything; held frames are dropped. */
void fd_inspect_close(struct fd_inspect *in);

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

/* fd_inspect_tick - deadlines: connections read too long are handed on; old entries forgotten. */
void fd_inspect_tick(struct fd_inspect *in, uint64_t now_ms, fd_inspect_out_fn *out, void *octx);

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

void fd_inspect_stats(struct fd_inspect *in, struct fd_inspect_stats *out);

#endif
