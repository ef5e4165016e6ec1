/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_inspect_table: the table's keeping below the decisions - an entry
 * let go (its reading, held frames, source), cut entries past their
 * bounds, the sources, the ghosts (entries let go before their first
 * byte, remembered by a hash so their bytes meet the undecided setting).
 * See fd_inspect_priv.h.
 */
#include <stdlib.h>
#include <string.h>

#include "fd_inspect_priv.h"
#include "fi_wire.h"

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
struct source *
ins_source_get(struct fd_inspect *in, const struct fd_tuple *k)
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

void
ins_source_put(struct fd_inspect *in, struct source *s)
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

void
ins_ghost_add(struct fd_inspect *in, const struct conn *c, enum fd_inspect_why why)
{
	uint64_t h = ins_key_hash(&c->key);
	struct ghost *g = &in->ghosts[h % GHOSTS];

	g->h = h;
	g->born = c->born;
	g->why = (uint8_t)why;
}

/* The ghost of k, taken: true and *g, or false. */
bool
ins_ghost_take(struct fd_inspect *in, const struct fd_tuple *k, struct ghost *out)
{
	uint64_t h = ins_key_hash(k);
	struct ghost *g = &in->ghosts[h % GHOSTS];

	if (g->h != h)
		return false;
	*out = *g;
	g->h = 0;
	return true;
}

/* ---- entries: let go ---- */

void
ins_held_free(struct fd_inspect *in, struct reading *rd)
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
void
ins_reading_free(struct fd_inspect *in, struct conn *c)
{
	struct reading *rd = c->rd;

	if (rd == NULL)
		return;
	ins_held_free(in, rd);
	for (unsigned int i = 0; i < STREAM_CHUNKS; i++)
		free(rd->chunk[i]);
	if (rd->seq > 0)	/* the parser's state of it let go (a lost one is no matter) */
		(void)ins_ask(in, c, FI_FORGET, NULL, 0);
	in->st.bytes -= rd->bytes;
	free(rd);
	c->rd = NULL;
}

void
ins_conn_free(struct fd_inspect *in, struct conn *c)
{
	struct conn **pp = &in->table[ins_key_hash(&c->key) % TABLE_SIZE];
	struct source *s = c->src;

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
	ins_list_unlink(in, c);
	TAILQ_REMOVE(&s->conns, c, by_src);
	s->entries--;
	s->reading -= c->state == C_READ;
	s->cut -= c->state == C_CUT;
	ins_source_put(in, s);
	ins_reading_free(in, c);
	free(c);
	__atomic_store_n(&in->nentries, in->nentries - 1, __ATOMIC_RELAXED);
}

/* Cut entries past their bounds (in all, from c's source): the oldest let go (their cut is made). */
void
ins_evict_cut(struct fd_inspect *in, struct conn *keep)
{
	struct source *s = keep->src;

	if (s->cut > in->src_cut) {
		struct conn *c;

		TAILQ_FOREACH(c, &s->conns, by_src)
			if (c->state == C_CUT && c != keep) {
				ins_conn_free(in, c);
				break;
			}
	}
	if (in->lists[L_CUT].n > in->max_cut && TAILQ_FIRST(&in->lists[L_CUT].q) != keep)
		ins_conn_free(in, TAILQ_FIRST(&in->lists[L_CUT].q));
}
