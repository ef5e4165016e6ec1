/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_decide: decisions - a connection passed (its held frames
 * handed on in sequence order), cut or undecided (the setting's), a whole
 * hello judged against the list, the parser's answer acted on; each
 * queued for the caller (fd_inspect_take).  See fd_inspect_priv.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_inspect_priv.h"

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

void
ins_release(struct fd_inspect *in, struct reading *rd, fd_inspect_out_fn *out, void *octx)
{
	for (struct held *h = rd->held; h != NULL; h = h->next) {
		out(octx, h->port, h->frame, h->len);
		in->st.frames[FD_INSPECT_F_RELEASED]++;
	}
	ins_held_free(in, rd);
}

/* Decided: the held frames handed on in sequence order, the connection's frames go on. */
void
ins_pass(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, const char *ja4,
	 const char *ja3, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	in->st.why[why]++;
	if (c->rd != NULL)
		ins_release(in, c->rd, out, octx);
	if (why != FD_INSPECT_CLOSED)	/* closed: nothing to set, nothing more goes on */
		queue(in, c, false, why, ja4, ja3, 0);
	ins_reading_free(in, c);
	c->last = now;
	ins_conn_move(in, c, why == FD_INSPECT_CLOSED ? C_CLOSED : C_PASSED);
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
	ins_reading_free(in, c);
	c->last = now;
	ins_conn_move(in, c, C_CUT);
	ins_evict_cut(in, c);
}

/* Undecided: the setting says. */
void
ins_undecided(struct fd_inspect *in, struct conn *c, enum fd_inspect_why why, uint64_t now,
	      fd_inspect_out_fn *out, void *octx)
{
	if (in->p.undecided_cut) {
		in->st.undecided_cut++;
		cut(in, c, why, NULL, NULL, 0, now);
	} else {
		ins_pass(in, c, why, NULL, NULL, now, out, octx);
	}
}

/*
 * A whole hello, fingerprinted by the parser: looked up, decided (not listed: passed
 * only when `may_pass`).  true: cut.
 */
bool
ins_judge(struct fd_inspect *in, struct conn *c, bool may_pass, uint64_t now,
	  fd_inspect_out_fn *out, void *octx)
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
		ins_pass(in, c, FD_INSPECT_NOT_LISTED, ja4, ja3, now, out, octx);
	return false;
}

/* The parser's answer acted on.  true: the connection was cut. */
bool
ins_answer(struct fd_inspect *in, struct conn *c, int rc, uint64_t now, fd_inspect_out_fn *out,
	   void *octx)
{
	switch (rc) {
	case -EINPROGRESS:	/* asked: the answer comes */
		return false;
	case -EBUSY:
		ins_undecided(in, c, FD_INSPECT_PARSER_BUSY, now, out, octx);
		break;
	case -ENOTCONN:
	case -ESTALE:
		ins_undecided(in, c, FD_INSPECT_PARSER_DOWN, now, out, octx);
		break;
	case -ENOMEM:
		ins_undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		break;
	case -EAGAIN:
		if (c->rd->fed >= c->rd->end && c->rd->asked == 0) {
			/* its end read, every answer in: no more bytes reach the server */
			ins_pass(in, c, FD_INSPECT_CLOSED, NULL, NULL, now, out, octx);
			return false;
		}
		return false;
	case 0:
		return ins_judge(in, c, true, now, out, octx);
	case -ENOMSG:
		ins_pass(in, c, FD_INSPECT_NOT_HELLO, NULL, NULL, now, out, octx);
		return false;
	case -EMSGSIZE:
		ins_undecided(in, c, FD_INSPECT_TOO_BIG, now, out, octx);
		break;
	default:
		ins_undecided(in, c, FD_INSPECT_MALFORMED, now, out, octx);
		break;
	}
	return c->state == C_CUT;
}
