/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_frame: a frame in - read first by fd_seg_parse (its headers
 * by inspect/fc_seg), IP fragments put back together first - handed to
 * its connection's TCP or QUIC reading, or met here when no connection is
 * known; and the clock (fd_inspect_tick).  See fd_inspect_priv.h.
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <string.h>

#include "fc_frag.h"
#include "fc_seg.h"
#include "fd_inspect_priv.h"
#include "fd_seg.h"

static bool
tls_port(const struct fd_inspect *in, uint16_t port_be)
{
	uint16_t p = ntohs(port_be);

	return __atomic_load_n(&in->ports[p / 64], __ATOMIC_RELAXED) >> (p % 64) & 1;
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

	if (ins_ghost_take(in, &s->key, &g)) {
		c = ins_conn_new(in, &s->key, C_WAIT, port, now, out, octx);
		if (c == NULL)
			return 0;
		c->born = g.born;
		ins_undecided(in, c, (enum fd_inspect_why)g.why, now, out, octx);
		return c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
	}
	if (!flagged)
		return 0;
	c = ins_conn_new(in, &s->key, C_WAIT, port, now, out, octx);
	if (c != NULL)
		ins_pass(in, c, FD_INSPECT_NOT_SEEN, NULL, NULL, now, out, octx);
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

	c = ins_conn_find(in, &s.key);
	if (c != NULL && s.key.proto == 17) {
		rc = ins_udp_client(in, c, port, f, len, &s, now, out, octx);
	} else if (c != NULL) {
		rc = ins_tcp_client(in, c, port, f, len, &s, now, out, octx);
	} else if (key_reverse(&s.key, &rev), (c = ins_conn_find(in, &rev)) != NULL) {
		if (s.key.proto == 17) {
			ins_touch(in, c, now);
			rc = c->state == C_CUT ? ins_drop(in, FD_INSPECT_F_DROPPED) : 0;
		} else {
			rc = ins_tcp_server(in, c, port, &s, now, out, octx);
		}
	} else if (in->nports > 0 && tls_port(in, s.key.dport) && s.key.proto == 17) {
		if (s.plen > 0)
			rc = ins_udp_new(in, &s, port, f, len, now, out, octx);
	} else if (in->nports > 0 && tls_port(in, s.key.dport)) {
		if ((s.flags & (TH_SYN | TH_ACK | TH_RST)) == TH_SYN)
			rc = ins_tcp_syn(in, port, f, len, &s, now, out, octx);
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
				ins_undecided(in, c, FD_INSPECT_PARSER_LATE, now, out, octx);
		}
	/* waiting for their first byte: read_ms from their SYN; their bytes undecided if they come */
	while ((c = TAILQ_FIRST(&in->lists[L_WAITING].q)) != NULL && now - c->born >= in->p.read_ms) {
		ins_ghost_add(in, c, FD_INSPECT_TIMEOUT);
		ins_conn_free(in, c);
	}
	/* being read, in the order they started: held frames let go, then read_ms */
	for (c = TAILQ_FIRST(&in->lists[L_READING].q); c != NULL; c = next) {
		next = TAILQ_NEXT(c, age);	/* ins_undecided() moves c off this list */
		if (now - c->rd->since < in->p.hold_ms)
			break;
		if (now - c->rd->since >= in->p.read_ms) {
			ins_undecided(in, c, FD_INSPECT_TIMEOUT, now, out, octx);
		} else if (!c->rd->released) {
			ins_release(in, c->rd, out, octx);
			c->rd->released = true;
		}
	}
	for (int l = L_DECIDED; l <= L_CUT; l++)
		while ((c = TAILQ_FIRST(&in->lists[l].q)) != NULL && now - c->last >= in->p.linger_ms)
			ins_conn_free(in, c);
	pthread_mutex_unlock(&in->mu);
}
