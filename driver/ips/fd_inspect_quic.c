/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_quic: a UDP flow's datagrams - a new one read when it holds
 * a QUIC Initial (new flows bounded by quic_per_sec), each asked of the
 * parser whole and held in the order it came.  See fd_inspect_priv.h.
 */
#include <errno.h>

#include "fc_quic.h"
#include "fd_inspect_priv.h"
#include "fd_seg.h"
#include "fi_wire.h"

/* ---- QUIC ---- */

/* A datagram from the client of a known UDP flow: read while its hello is. */
int
ins_udp_client(struct fd_inspect *in, struct conn *c, uint16_t port, const uint8_t *f, uint32_t len,
	       const struct fd_seg *s, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct reading *rd = c->rd;
	bool held = false;
	uint32_t off;
	int rc;

	ins_touch(in, c, now);
	switch (c->state) {
	case C_CUT:
		return ins_drop(in, FD_INSPECT_F_DROPPED);
	case C_READ:
		break;
	default:
		return 0;
	}
	if (port != c->cport)
		return ins_drop(in, FD_INSPECT_F_OUTSIDE);
	if (s->ttl <= 1 || s->ttl < c->ttl)
		return ins_drop(in, FD_INSPECT_F_LOW_TTL);
	if (!fd_seg_csum_ok(f + s->ipoff, s))
		return ins_drop(in, FD_INSPECT_F_BAD_CSUM);
	if (!ins_take_bytes(in, rd, s->plen)) {	/* what fc_quic keeps of it */
		ins_undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	off = rd->seq;	/* held in the order they came: the question's number */
	rc = ins_ask(in, c, FI_QUIC, f + s->poff, s->plen);
	if (rc == -EPROTO || rc == -E2BIG)	/* its server drops it: not read, not on */
		return ins_drop(in, FD_INSPECT_F_QUIC_REFUSED);
	if ((rc == -EAGAIN && !rd->released) || rc == -EINPROGRESS)
		held = ins_hold(in, rd, port, f, len, off, out, octx);
	if (ins_answer(in, c, rc, now, out, octx)) {
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
int
ins_udp_new(struct fd_inspect *in, const struct fd_seg *s, uint16_t port, const uint8_t *f,
	    uint32_t len, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct conn *c;

	if (!fd_seg_csum_ok(f + s->ipoff, s) || s->ttl <= 1)
		return 0;	/* the server will not take it either: no entry */
	c = ins_conn_new(in, &s->key, C_WAIT, port, now, out, octx);
	if (c == NULL)
		return 0;
	c->ttl = s->ttl;
	if (!fc_quic_is_initial(f + s->poff, s->plen)) {
		/* not QUIC, or a flow met mid-way: not sent to the inspector for ever */
		ins_pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
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
		ins_undecided(in, c, FD_INSPECT_QUIC_RATE, now, out, octx);
		return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	in->quic_tokens -= 1.0;
	if (!ins_start_reading(in, c, now, out, octx))
		return c->state == C_CUT;
	return ins_udp_client(in, c, port, f, len, s, now, out, octx);
}
