/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_answer: the parser's answers over the channel, each acted on
 * for the connection being read that it names (one decided meanwhile:
 * stale), and the parser lost with the bytes it held.  See
 * fd_inspect_priv.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fd_inspect_priv.h"
#include "fi_wire.h"

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
		 * (ins_tcp_syn, ins_tcp_server).
		 */
		c->synrc = rc;
		if (rc == 0 && ins_judge(in, c, false, now, out, octx))
			return;
		if (rd->asked == 0)
			ins_release(in, rd, out, octx);
		return;
	}
	if (ins_answer(in, c, rc, now, out, octx) || c->state != C_READ)
		return;
	/* still reading, its held frames let go already: those waiting for this answer go on */
	if (rd->released && rd->asked == 0 && rd->held != NULL)
		ins_release(in, rd, out, octx);
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
	c = ins_conn_find(in, &k);
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
			ins_undecided(in, c, FD_INSPECT_PARSER_DOWN, now, out, octx);
	}
	pthread_mutex_unlock(&in->mu);
}
