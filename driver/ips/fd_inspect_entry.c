/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_entry: entries made - a connection's entry (room made by
 * letting the oldest go), its reading started (bounded in all and by
 * source), its client frames held while it is read.  See
 * fd_inspect_priv.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fc_frag.h"
#include "fd_inspect_priv.h"

#define HOLD_FRAMES_MAX 256		/* held a connection; past it they are let go, reading on */
#define HOLD_BYTES_MAX (1u << 20)	/* ... or past these bytes of frames */
#define PARSER_BYTES (32u << 10)	/* its parser's share of max_bytes (the parser's own, in its process) */
#define EVICT_LOOK 8			/* reading slots full: the oldest this many looked at for one to let go */

/* ---- entries: made ---- */

/* c let go to make room: undecided when it was being read, a ghost when it was waiting. */
static void
evict(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	if (c->state == C_READ) {
		ins_undecided(in, c, FD_INSPECT_EVICTED, now, out, octx);
	} else if (c->state == C_WAIT) {
		in->st.evicted_waiting++;
		ins_ghost_add(in, c, FD_INSPECT_EVICTED);
	}
	ins_conn_free(in, c);
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

struct conn *
ins_conn_new(struct fd_inspect *in, const struct fd_tuple *k, enum conn_state st, uint16_t port,
	     uint64_t now, fd_inspect_out_fn *out, void *octx)
{
	struct source *s = ins_source_get(in, k);
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
		ins_source_put(in, s);
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
	b = ins_key_hash(k) % TABLE_SIZE;
	c->hnext = in->table[b];
	in->table[b] = c;
	ins_list_append(in, c);
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
bool
ins_start_reading(struct fd_inspect *in, struct conn *c, uint64_t now, fd_inspect_out_fn *out,
		  void *octx)
{
	struct reading *rd;
	struct conn *old;

	if (c->src->reading >= in->p.per_source && (old = source_oldest(c->src, C_READ)) != NULL)
		evict(in, old, now, out, octx);
	if (in->lists[L_READING].n >= in->p.max_conns && !TAILQ_EMPTY(&in->lists[L_READING].q)) {
		if ((old = oldest_unasked(in)) == NULL) {
			ins_undecided(in, c, FD_INSPECT_PARSER_BUSY, now, out, octx);
			return false;
		}
		evict(in, old, now, out, octx);
	}
	rd = calloc(1, sizeof(*rd));
	if (rd == NULL || !ins_take_bytes(in, rd, sizeof(*rd) + PARSER_BYTES)) {
		free(rd);
		ins_undecided(in, c, FD_INSPECT_MEMORY, now, out, octx);
		return false;
	}
	rd->id = ++in->next_id;	/* its parser is made by its first question */
	rd->end = NO_END;
	rd->since = now;
	c->rd = rd;
	ins_conn_move(in, c, C_READ);
	return true;
}

/*
 * A client frame to hold (its bytes at `off`, TCP; in arrival order,
 * QUIC).  false: past what one connection may hold: the held ones are let
 * go, and this one goes on (reading goes on).
 */
bool
ins_hold(struct fd_inspect *in, struct reading *rd, uint16_t port, const uint8_t *f, uint32_t len,
	 uint32_t off, fd_inspect_out_fn *out, void *octx)
{
	struct held **pp = &rd->held, *h;

	if (in->npieces > 0) {	/* a reassembled packet: its fragments are held, each */
		const struct fc_frag_piece *pc = in->pieces;
		unsigned int n = in->npieces, i;

		in->npieces = 0;
		for (i = 0; i < n; i++)
			if (!ins_hold(in, rd, (uint16_t)pc[i].tag, pc[i].frame, pc[i].len, off, out,
				      octx))
				break;
		/* not all: the held ones went on (let go), the rest are the caller's */
		in->pieces = pc + i;
		in->npieces = n - i;
		return i == n;
	}
	if (rd->nheld >= HOLD_FRAMES_MAX || rd->held_bytes + len > HOLD_BYTES_MAX ||
	    !ins_take_bytes(in, rd, sizeof(*h) + len)) {
		ins_release(in, rd, out, octx);
		rd->released = true;
		return false;
	}
	h = malloc(sizeof(*h) + len);
	if (h == NULL) {
		in->st.bytes -= sizeof(*h) + len;
		rd->bytes -= sizeof(*h) + len;
		ins_release(in, rd, out, octx);
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
