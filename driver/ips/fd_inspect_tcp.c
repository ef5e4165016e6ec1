/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_tcp: a TCP connection's frames - the handshake, the window,
 * and its stream (its bytes by their place, chunked, each byte's first
 * copy kept so a later copy that differs is refused, asked of the parser
 * in order with urgent bytes taken out).  See fd_inspect_priv.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "fd_inspect_priv.h"
#include "fd_seg.h"
#include "fi_wire.h"

#define ACK_SLACK 65536u		/* a client's ACK may run this far past the server's ISN */

/* ---- the stream of one connection ---- */

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
			if (!ins_take_bytes(in, rd, CHUNK + CHUNK / 8))
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
 * The parser's answer (-EAGAIN while it needs more), or ins_ask's.  Over the
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
		rc = ins_ask(in, c, FI_TLS, rd->chunk[from / CHUNK] + from % CHUNK, to - from);
		rd->fed = to;
	}
	return rc;
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
			return ins_drop(in, FD_INSPECT_F_DUP);	/* the first copy is held */
		held = ins_hold(in, rd, port, f, len, off, out, octx);
	} else if (rc == -EINPROGRESS) {
		/* its bytes are the parser's now: it waits for the answer, let go or not */
		held = ins_hold(in, rd, port, f, len, off, out, octx);
	}
	if (ins_answer(in, c, rc, now, out, octx)) {
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
		ins_conn_move(in, c, C_CLOSED);
		in->st.why[FD_INSPECT_CLOSED]++;
	} else {
		ins_pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
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
		return ins_drop(in, c->state == C_READ && !c->rd->released ? FD_INSPECT_F_DUP
								       : FD_INSPECT_F_OUTSIDE);
	}
	if (off >= STREAM_MAX)
		return ins_drop(in, FD_INSPECT_F_OUTSIDE);
	if (c->state == C_WAIT && !ins_start_reading(in, c, now, out, octx))
		return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
	rd = c->rd;
	if (rd->end != NO_END && off + s->plen > rd->end)
		return ins_drop(in, FD_INSPECT_F_AFTER_CLOSE);
	pr = stream_put(in, rd, off, f + s->poff, s->plen);
	if (pr == PUT_CONFLICT)
		return ins_drop(in, FD_INSPECT_F_CONFLICT);
	if (pr == PUT_NOMEM) {
		ins_undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	if (s->flags & TH_URG) {
		/* its byte, Linux's way (tcp_check_urg, tcp_stdurg off): seq + ptr - 1, or seq */
		uint32_t u = off + (s->urp ? s->urp - 1u : 0);

		if (!urgent_at(rd, u)) {
			/* one the parser has read already, or a second: not ours to place */
			if (u < rd->fed || rd->nurg == URG_MAX) {
				ins_undecided(in, c, FD_INSPECT_URGENT, now, out, octx);
				return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
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
int
ins_tcp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	       const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	enum fd_inspect_frame_cnt why;
	bool undecided_state = c->state == C_WAIT || c->state == C_READ;

	ins_touch(in, c, now);
	switch (c->state) {
	case C_CUT:
		return ins_drop(in, FD_INSPECT_F_DROPPED);
	case C_PASSED:
		return 0;
	case C_CLOSED:
		return s->plen > 0 ? ins_drop(in, FD_INSPECT_F_AFTER_CLOSE) : 0;
	default:
		break;
	}
	if (undecided_state && (s->flags & TH_SYN)) {
		if (c->hs != HS_SYN || port != c->cport)
			return ins_drop(in, FD_INSPECT_F_OUTSIDE);	/* the server will not take it */
		if (s->seq != c->isn)
			c->isn2 = s->seq;	/* another SYN: the SYN-ACK says which */
		return 0;
	}
	if (s->flags & TH_RST) {
		/* the server takes it at its next byte only (RFC 5961, Linux) */
		uint32_t next = c->start + (c->rd != NULL && c->rd->released ? c->rd->fed : 0);

		if (port != c->cport || s->seq != next)
			return ins_drop(in, FD_INSPECT_F_OUTSIDE);
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
		return ins_drop(in, why);
	c->hs = HS_EST;
	if (s->plen == 0) {	/* a bare FIN in the window: the stream ends there */
		uint32_t off = s->seq - c->start;

		if (off >= STREAM_MAX)
			return ins_drop(in, FD_INSPECT_F_OUTSIDE);
		if (c->state == C_WAIT && !ins_start_reading(in, c, now, out, octx))
			return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
		if (off < c->rd->end)
			c->rd->end = off;
		(void)ins_answer(in, c, -EAGAIN, now, out, octx);
		return 0;
	}
	return tcp_bytes(in, c, port, f, len, s, now, out, octx);
}

/* A frame from the server of a known TCP connection: its SYN-ACK sets the window. */
int
ins_tcp_server(struct fd_inspect *in, struct conn *c, uint16_t port, const struct fd_seg *s,
	       uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	ins_touch(in, c, now);
	if (c->state == C_CUT)
		return ins_drop(in, FD_INSPECT_F_DROPPED);
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
				(void)ins_answer(in, c, c->synrc, now, out, octx);
			} else if (acked != c->isn + c->synlen || c->synlen == 0) {
				/* the server did not take the SYN's bytes (no cookie), or another SYN's */
				c->start = acked + 1;
				if (c->state == C_READ) {
					ins_reading_free(in, c);
					ins_conn_move(in, c, C_WAIT);
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
int
ins_tcp_syn(struct fd_inspect *in, uint16_t port, const uint8_t *f, uint32_t len,
	    const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c = ins_conn_new(in, &s->key, C_WAIT, port, now, out, octx);
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
	if (!ins_start_reading(in, c, now, out, octx))
		return c->state == C_CUT;
	pr = stream_put(in, c->rd, 0, f + s->poff, s->plen);
	if (pr == PUT_NOMEM) {
		ins_undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
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
		return ins_hold(in, c->rd, port, f, len, 0, out, octx) ? 1 : 0;
	return rc == 0 && ins_judge(in, c, false, now, out, octx) ? 1 : 0;
}
