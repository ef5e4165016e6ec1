/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload_table: the binding's offloaded connections, and the small
 * helpers every room's commands use.  See fd_offload_priv.h.
 *
 * A million connections in under 128 bytes each (flowcutd's RSS over the
 * count; it was 889 B with uthash, a whole nf_conntrack a connection and
 * its ends kept):
 *  - the entries in one array of 96-byte slots (struct off_entry), in
 *    chunks of OFF_CHUNK so an entry never moves (a flight, a cut's
 *    completion hold its pointer over turns), freed slots on a free list;
 *  - two indexes over it, by state (orig and ct_id) and by fast-path id:
 *    open addressing, linear probing, a 4-byte slot each (the entry's
 *    slot + 1, and 6 bits of its hash above it), grown at load 1/2
 *    (tombstones counted): 8 to 16 bytes an entry each.  The tag: a
 *    lookup that finds nothing (every NEW event's) read about 1.5
 *    entries it did not want, each a cache miss at a million (ix_find
 *    was 7.8 % of flowcutd's time, lab/scale.sh 1000000); with it, one in
 *    64 of them.  Its price: at most OFF_IX_REFS_MAX (67,108,861)
 *    entries, 50 times the coprocessor's largest table here.  Written here, not taken from a library: the binding may
 *    not link DPDK (USES_driver/offload has no "dpdk": rte_hash is the
 *    coprocessor's), uthash needs a 56-byte handle in every entry, and a
 *    map of keys (klib's khash, glib's) would store each 52-byte key again
 *    beside the entry; an index whose slots name entries, hashed and
 *    compared through the entry, is 4 bytes;
 *  - the tuple rebuilt from orig when a request needs it (off_tuple), and
 *    each microflow's routed address derived from orig (off_dst): only a
 *    DNAT'd connection's (its reply's source is not orig.dst) kept, in a
 *    side table indexed the same way;
 *  - the extension FIFO linked through the entries by slot (8 bytes in
 *    each, taken out in O(1)), not the plan's ring of indices: a ring's
 *    removed ones stay until they come due 12 h on (or a compaction), and
 *    each would need its due time again.
 */
#include "fd_offload_priv.h"

#include "fd_clock.h"
#include "fd_mem.h"

_Static_assert(sizeof(struct off_entry) <= 96, "an entry is 96 bytes (see above)");

/*
 * CONN_RECLAIM_FP: the connection out of the fast path.  Its answer (the
 * final counts) must have room, or the link calls the answer too long
 * although the command took effect.
 */
int
off_reclaim_idle(struct fd_offload *o, uint64_t fp_id, uint64_t *idle_s)
{
	struct fc_cmd_conn_id id = { .id = fp_id };
	struct fc_ans_reclaim ans = { 0 };
	int rc = off_call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), &ans, sizeof(ans));

	*idle_s = rc == 0 ? off_idle_s(o, ans.mf) : 0;
	return rc;
}

int
off_reclaim(struct fd_offload *o, uint64_t fp_id)
{
	uint64_t idle_s;

	return off_reclaim_idle(o, fp_id, &idle_s);
}

uint64_t
off_idle_s(const struct fd_offload *o, const struct fc_mflow_stats st[2])
{
	uint64_t seen = st[0].last_seen > st[1].last_seen ? st[0].last_seen : st[1].last_seen;
	uint64_t now = off_now_ns(o);

	return seen == 0 || seen >= now ? 0 : (now - seen) / 1000000000u;
}

/* ---- the entry array ---- */

static struct off_entry *
at(const struct off_table *t, uint32_t slot)
{
	return &t->chunk[slot >> OFF_CHUNK_SHIFT][slot & (OFF_CHUNK - 1)];
}

struct off_entry *
off_entry_new(struct fd_offload *o)
{
	struct off_table *t = &o->tab;
	struct off_entry *e;
	uint32_t slot;

	if (t->free != 0) {
		slot = t->free - 1;
		t->free = at(t, slot)->ext_next;
	} else {
		if (t->used == OFF_IX_REFS_MAX)
			return NULL;	/* slot + 1 in the index's ref bits, apart from the tombstone */
		if ((t->used & (OFF_CHUNK - 1)) == 0 && (t->used >> OFF_CHUNK_SHIFT) == t->nchunks) {
			struct off_entry **ch = realloc(t->chunk, (t->nchunks + 1) * sizeof(*ch));

			if (ch == NULL)
				return NULL;
			t->chunk = ch;
			if ((ch[t->nchunks] = malloc(OFF_CHUNK * sizeof(**ch))) == NULL)
				return NULL;
			fd_mem_populate(ch[t->nchunks], OFF_CHUNK * sizeof(**ch));	/* filled in order */
			t->nchunks++;
		}
		slot = t->used++;
	}
	e = at(t, slot);
	memset(e, 0, sizeof(*e));
	e->self = slot;
	e->live = true;
	return e;
}

/* ---- the indexes: open addressing over the array ---- */

static uint64_t
mix(uint64_t h)
{
	/* splitmix64's finalizer */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static uint64_t
hash_ct(const struct fc_key *orig, uint32_t ct_id)
{
	uint64_t w[sizeof(*orig) / 8], h = ct_id;

	memcpy(w, orig, sizeof(w));
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		h = mix(h ^ w[i]);
	return h;
}

/*
 * by_fp's: the tag's bits mixed, the position's the coprocessor's slot
 * (the id's low 32 bits, fp.h's fp_conn_id).  Live connections never share
 * a slot, and the coprocessor hands its slots out from a FIFO (in order,
 * at first): a burst of offloads adds to neighbouring index slots, where
 * a mixed position made each add a cache miss of its own (ix_add 4 % of
 * flowcutd's time at a million, 72 % of it that one load).
 */
static uint64_t
hash_fp(uint64_t fp_id)
{
	return (mix(fp_id) & ~(uint64_t)UINT32_MAX) | (uint32_t)fp_id;
}

uint64_t
off_key_hash(const struct fc_key *k)
{
	return hash_ct(k, 0);
}

enum ix_kind { IX_CT, IX_FP, IX_NAT };

static struct off_ix *
ix_of(struct off_table *t, enum ix_kind k)
{
	return k == IX_CT ? &t->by_ct : k == IX_FP ? &t->by_fp : &t->by_nat;
}

/* A slot's tag of hash `h`: its top bits, above the ref. */
static uint32_t
tag_of(uint64_t h)
{
	return (uint32_t)(h >> (64 - (32 - OFF_IX_REF_BITS))) << OFF_IX_REF_BITS;
}

/* The ref (slot + 1) a held index slot names. */
static uint32_t
ref_of(uint32_t v)
{
	return v & OFF_IX_REF_MASK;
}

/* The hash of what `ref` (slot + 1) names in index `k`. */
static uint64_t
hash_ref(const struct off_table *t, enum ix_kind k, uint32_t ref)
{
	const struct off_entry *e;

	if (k == IX_NAT)
		return mix(t->nat[ref - 1].self);
	e = at(t, ref - 1);
	return k == IX_CT ? hash_ct(&e->orig, e->ct_id) : hash_fp(e->fp_id);
}

/* A lookup's key, compared through what a slot names. */
struct ix_key {
	uint64_t h;
	const struct fc_key *orig;	/* IX_CT's, with ct_id */
	uint32_t ct_id;
	uint64_t fp_id;			/* IX_FP's */
	uint32_t self;			/* IX_NAT's: the entry's slot */
	uint32_t ref;			/* nonzero: this slot value itself (a removal) */
};

static bool
ix_eq(const struct off_table *t, enum ix_kind k, uint32_t ref, const struct ix_key *q)
{
	const struct off_entry *e;

	if (q->ref != 0)
		return ref == q->ref;
	if (k == IX_NAT)
		return t->nat[ref - 1].self == q->self;
	e = at(t, ref - 1);
	if (k == IX_FP)
		return e->fp_id == q->fp_id;
	return e->ct_id == q->ct_id && memcmp(&e->orig, q->orig, sizeof(e->orig)) == 0;
}

/* The slot holding what `q` looks for, or NULL. */
static uint32_t *
ix_find(struct off_table *t, enum ix_kind k, const struct ix_key *q)
{
	struct off_ix *ix = ix_of(t, k);

	if (ix->cap == 0)
		return NULL;
	uint32_t tag = tag_of(q->h);

	for (uint32_t i = (uint32_t)q->h & (ix->cap - 1);; i = (i + 1) & (ix->cap - 1)) {
		uint32_t v = ix->slot[i];

		if (v == 0)
			return NULL;
		/* a tag that differs: not it, and its entry not read */
		if (v != OFF_IX_TOMB && (v & ~OFF_IX_REF_MASK) == tag && ix_eq(t, k, ref_of(v), q))
			return &ix->slot[i];
	}
}

#define OFF_IX_AHEAD 16	/* slots: about a miss's latency of this loop's work */

/* Index `k` rebuilt at `cap` slots, its tombstones gone: 0, or -ENOMEM (as it was). */
static int
ix_rebuild(struct off_table *t, enum ix_kind k, uint32_t cap)
{
	struct off_ix *ix = ix_of(t, k);
	uint32_t *slot = calloc(cap, sizeof(*slot));

	if (slot == NULL)
		return -ENOMEM;
	/*
	 * Faulted in whole (fd_mem.h): a quarter to half full, every page
	 * holds hundreds.  Not by_fp's: its positions are the coprocessor's
	 * slots, the first ones taken first, so at a million half of its
	 * 2^21 slots stay untouched (4.7 MB of RSS when faulted in).
	 */
	if (k == IX_CT)
		fd_mem_populate(slot, (size_t)cap * sizeof(*slot));
	for (uint32_t j = 0; j < ix->cap; j++) {
		uint32_t v = ix->slot[j], i;

		/*
		 * Each entry's hash is read from it, in the index's order: a
		 * cache miss each at a million (hash_ref 2.5 % of flowcutd's
		 * time, mostly here): the entry OFF_IX_AHEAD slots on asked
		 * for now, so its line is there when its turn comes.
		 */
		if (k != IX_NAT && j + OFF_IX_AHEAD < ix->cap) {
			uint32_t a = ix->slot[j + OFF_IX_AHEAD];

			if (a != 0 && a != OFF_IX_TOMB)
				__builtin_prefetch(at(t, ref_of(a) - 1));
		}
		if (v == 0 || v == OFF_IX_TOMB)
			continue;
		for (i = (uint32_t)hash_ref(t, k, ref_of(v)) & (cap - 1); slot[i] != 0;
		     i = (i + 1) & (cap - 1))
			;
		slot[i] = v;	/* its tag with it */
	}
	free(ix->slot);
	ix->slot = slot;
	ix->cap = cap;
	ix->tomb = 0;
	return 0;
}

/*
 * `ref` into index `k`, `h` its hash (hash_ref's, computed once by the
 * caller who has it): 0, or -ENOMEM (no room; the index as it was).
 */
static int
ix_add_h(struct off_table *t, enum ix_kind k, uint32_t ref, uint64_t h)
{
	struct off_ix *ix = ix_of(t, k);
	uint32_t i;

	/*
	 * At most half full, tombstones counted: probes stay short, and end.
	 * Past it, rebuilt without them: at the size if that leaves it a
	 * quarter full, else at twice (so 4 to 8 bytes of slots an entry
	 * past 16).
	 */
	if ((uint64_t)(ix->n + ix->tomb + 1) * 2 > ix->cap) {
		uint64_t cap = ix->cap ? ix->cap : 16;

		if ((uint64_t)(ix->n + 1) * 4 > cap)
			cap *= 2;
		if (cap > (1u << 31) || ix_rebuild(t, k, (uint32_t)cap) != 0)
			return -ENOMEM;
	}
	for (i = (uint32_t)h & (ix->cap - 1);
	     ix->slot[i] != 0 && ix->slot[i] != OFF_IX_TOMB; i = (i + 1) & (ix->cap - 1))
		;
	if (ix->slot[i] == OFF_IX_TOMB)
		ix->tomb--;
	ix->slot[i] = ref | tag_of(h);
	ix->n++;
	return 0;
}

static int
ix_add(struct off_table *t, enum ix_kind k, uint32_t ref)
{
	return ix_add_h(t, k, ref, hash_ref(t, k, ref));
}

/* Slot value `ref` out of index `k` (it is in). */
static void
ix_del(struct off_table *t, enum ix_kind k, uint32_t ref)
{
	struct off_ix *ix = ix_of(t, k);
	struct ix_key q = { .h = hash_ref(t, k, ref), .ref = ref };
	uint32_t *s = ix_find(t, k, &q);

	if (s == NULL)
		return;
	/* a tombstone, unless the next slot is empty: then no probe passes here */
	if (ix->slot[(uint32_t)(s - ix->slot + 1) & (ix->cap - 1)] == 0) {
		*s = 0;
	} else {
		*s = OFF_IX_TOMB;
		ix->tomb++;
	}
	ix->n--;
}

static void
ix_free(struct off_ix *ix)
{
	free(ix->slot);
	*ix = (struct off_ix){ 0 };
}

/* ---- the side table: a DNAT'd connection's ends ---- */

static struct off_nat *
nat_of(const struct fd_offload *o, const struct off_entry *e)
{
	struct off_table *t = (struct off_table *)&o->tab;
	struct ix_key q = { .h = mix(e->self), .self = e->self };
	uint32_t *s = e->nat ? ix_find(t, IX_NAT, &q) : NULL;

	return s != NULL ? &t->nat[ref_of(*s) - 1] : NULL;
}

static void
nat_del(struct fd_offload *o, struct off_entry *e)
{
	struct off_table *t = &o->tab;
	struct off_nat *r = nat_of(o, e);
	uint32_t last;

	e->nat = false;
	if (r == NULL)
		return;
	ix_del(t, IX_NAT, (uint32_t)(r - t->nat) + 1);
	last = --t->nnat;
	if (r != &t->nat[last]) {
		/* the last record moves into the hole: its index slot names it there */
		struct ix_key q = { .h = mix(t->nat[last].self), .ref = last + 1 };
		uint32_t *s = ix_find(t, IX_NAT, &q);

		*r = t->nat[last];
		if (s != NULL)	/* the same record, the same hash: its tag stays */
			*s = (*s & ~OFF_IX_REF_MASK) | ((uint32_t)(r - t->nat) + 1);
	}
}

void
off_dst(const struct fd_offload *o, const struct off_entry *e, int d, uint8_t out[16])
{
	const struct off_nat *r = nat_of(o, e);

	if (r != NULL)
		memcpy(out, r->dst[d], 16);
	else
		memcpy(out, d == 0 ? e->orig.dst : e->orig.src, 16);
}

int
off_set_dst(struct fd_offload *o, struct off_entry *e, const uint8_t dst[2][16])
{
	struct off_table *t = &o->tab;
	struct off_nat *r, *n;

	nat_del(o, e);
	if (memcmp(dst[0], e->orig.dst, 16) == 0 && memcmp(dst[1], e->orig.src, 16) == 0)
		return 0;	/* not DNAT'd: the key has them */
	n = t->nnat < UINT32_MAX ? fc_grow(t->nat, &t->nat_cap, t->nnat, sizeof(*n), 64) : NULL;
	if (n == NULL)
		return -ENOMEM;
	t->nat = n;
	r = &t->nat[t->nnat];
	r->self = e->self;
	memcpy(r->dst, dst, sizeof(r->dst));
	if (ix_add(t, IX_NAT, t->nnat + 1) != 0)
		return -ENOMEM;
	t->nnat++;
	e->nat = true;
	return 0;
}

/* ---- the extension FIFO (see fd_offload_work) ---- */

static struct off_entry *
by_ref(const struct off_table *t, uint32_t ref)
{
	return ref != 0 ? at(t, ref - 1) : NULL;
}

void
off_ext_add(struct fd_offload *o, struct off_entry *e, uint64_t due_ms)
{
	struct off_table *t = &o->tab;

	off_ext_del(o, e);
	e->due_ms = (uint32_t)due_ms;
	e->ext_prev = t->ext_tail;
	e->ext_next = 0;
	if (t->ext_tail != 0)
		by_ref(t, t->ext_tail)->ext_next = e->self + 1;
	else
		t->ext_head = e->self + 1;
	t->ext_tail = e->self + 1;
	e->in_ext = true;
}

void
off_ext_del(struct fd_offload *o, struct off_entry *e)
{
	struct off_table *t = &o->tab;

	if (!e->in_ext)
		return;
	if (e->ext_prev != 0)
		by_ref(t, e->ext_prev)->ext_next = e->ext_next;
	else
		t->ext_head = e->ext_next;
	if (e->ext_next != 0)
		by_ref(t, e->ext_next)->ext_prev = e->ext_prev;
	else
		t->ext_tail = e->ext_prev;
	e->ext_prev = e->ext_next = 0;
	e->in_ext = false;
}

struct off_entry *
off_ext_due(const struct fd_offload *o, uint64_t now_ms)
{
	struct off_entry *e = by_ref(&o->tab, o->tab.ext_head);

	/* serial numbers: a due time is within 12 h of now, far under 2^31 ms */
	return e != NULL && (int32_t)(e->due_ms - (uint32_t)now_ms) <= 0 ? e : NULL;
}

/* ---- the table of offloaded connections ---- */

struct off_entry *
off_find_key(struct fd_offload *o, uint32_t ct_id, const struct fc_key *orig)
{
	struct ix_key q = { .h = hash_ct(orig, ct_id), .orig = orig, .ct_id = ct_id };
	uint32_t *s = ix_find(&o->tab, IX_CT, &q);

	return s != NULL ? at(&o->tab, ref_of(*s) - 1) : NULL;
}

/* The entry of state `ct_id` whose original tuple `ct` carries. */
struct off_entry *
off_find_ct(struct fd_offload *o, uint32_t ct_id, const struct nf_conntrack *ct)
{
	struct fc_key k;

	off_orig_of(ct, &k);
	return off_find_key(o, ct_id, &k);
}

struct off_entry *
off_find_state(struct fd_offload *o, const struct nf_conntrack *ct)
{
	return off_find_ct(o, nfct_get_attr_u32(ct, ATTR_ID), ct);
}

struct off_entry *
off_find_fp(struct fd_offload *o, uint64_t fp_id)
{
	struct ix_key q = { .h = hash_fp(fp_id), .fp_id = fp_id };
	uint32_t *s = ix_find(&o->tab, IX_FP, &q);

	return s != NULL ? at(&o->tab, ref_of(*s) - 1) : NULL;
}

int
off_index_ct(struct fd_offload *o, struct off_entry *e)
{
	e->oom = ix_add(&o->tab, IX_CT, e->self + 1) != 0;
	e->in_ct = !e->oom;
	return e->oom ? -ENOMEM : 0;
}

void
off_unindex_ct(struct fd_offload *o, struct off_entry *e)
{
	if (e->in_ct)
		ix_del(&o->tab, IX_CT, e->self + 1);
	e->in_ct = false;
}

int
off_index(struct fd_offload *o, struct off_entry *e, bool by_ct)
{
	e->oom = false;
	e->born = o->sync.epoch;	/* made during a reconcile: no difference of its */
	if (by_ct && off_index_ct(o, e) != 0)
		return -ENOMEM;
	if (ix_add(&o->tab, IX_FP, e->self + 1) != 0) {
		e->oom = true;
		if (by_ct)
			off_unindex_ct(o, e);
		return -ENOMEM;
	}
	e->in_fp = true;
	return 0;
}

static void
unindex_fp(struct fd_offload *o, struct off_entry *e)
{
	if (e->in_fp)
		ix_del(&o->tab, IX_FP, e->self + 1);
	e->in_fp = false;
}

/* The entry's cell of o->conns, `d` (+1 or -1) added. */
static void
count(struct fd_offload *o, const struct off_entry *e, int d)
{
	struct fd_offload_conns *n = &o->conns;

	if (e->action < FC_ACTION_MAX && e->verdict < FC_VERDICT_MAX)
		n->n[e->action][e->verdict] += (uint32_t)d;
	n->cut += e->cut ? (uint32_t)d : 0;
}

void
off_count_in(struct fd_offload *o, struct off_entry *e)
{
	if (e->counted)
		return;
	e->counted = true;
	o->nentries++;
	count(o, e, 1);
}

void
off_reclass(struct fd_offload *o, struct off_entry *e, uint8_t action, uint8_t verdict, bool cut)
{
	if (e->counted)
		count(o, e, -1);
	e->action = action;
	e->verdict = verdict & 3;
	e->cut = cut;
	if (e->counted)
		count(o, e, 1);
}

/* An entry out of by_fp already: out of by_ct and the FIFO too, no longer counted. */
static void
unlink_unindexed(struct fd_offload *o, struct off_entry *e)
{
	off_unindex_ct(o, e);
	off_ext_del(o, e);
	if (e->counted) {
		count(o, e, -1);
		e->counted = false;
		o->nentries--;
	}
}

/* An entry out of by_fp already: unlinked, and freed. */
static void
forget_unindexed(struct fd_offload *o, struct off_entry *e)
{
	unlink_unindexed(o, e);
	off_free_entry(o, e);
}

void
off_unlink(struct fd_offload *o, struct off_entry *e)
{
	unindex_fp(o, e);
	unlink_unindexed(o, e);
}

void
off_forget(struct fd_offload *o, struct off_entry *e)
{
	unindex_fp(o, e);
	forget_unindexed(o, e);
}

int
off_rekey_fp(struct fd_offload *o, struct off_entry *e, uint64_t fp_id)
{
	unindex_fp(o, e);
	e->fp_id = fp_id;
	if (off_index(o, e, false) == 0)
		return 0;
	forget_unindexed(o, e);
	return -ENOMEM;
}

void
off_free_entry(struct fd_offload *o, struct off_entry *e)
{
	struct off_table *t = &o->tab;

	if (e == NULL || !e->live)
		return;
	nat_del(o, e);
	e->live = false;
	e->ext_next = t->free;
	t->free = e->self + 1;
}

/* Forgets every entry (the fast path is being emptied or was). */
void
off_forget_all(struct fd_offload *o)
{
	struct off_table *t = &o->tab;

	/*
	 * Every indexed entry goes (its side record too); one not indexed (a
	 * flight's, a cut's on its way) stays, its caller's to free, out of
	 * by_ct as the index goes.  The free list is made again.
	 */
	for (uint32_t i = 0; i < t->used; i++) {
		struct off_entry *e = at(t, i);

		if (e->live && e->in_fp) {
			nat_del(o, e);
			e->live = false;
		}
		e->in_ct = e->in_fp = e->in_ext = e->counted = false;
	}
	ix_free(&t->by_ct);
	ix_free(&t->by_fp);
	t->ext_head = t->ext_tail = 0;
	t->free = 0;
	for (uint32_t i = t->used; i-- > 0;) {
		struct off_entry *e = at(t, i);

		if (!e->live) {
			e->ext_next = t->free;
			t->free = i + 1;
		}
	}
	o->nentries = 0;
	memset(&o->conns, 0, sizeof(o->conns));
}

struct off_entry *
off_next(const struct fd_offload *o, uint32_t *i)
{
	for (; *i < o->tab.used; (*i)++) {
		struct off_entry *e = at(&o->tab, *i);

		if (e->live && e->in_fp) {
			(*i)++;
			return e;
		}
	}
	return NULL;
}

struct off_entry *
off_slot(const struct fd_offload *o, uint32_t slot)
{
	struct off_entry *e = slot < o->tab.used ? at(&o->tab, slot) : NULL;

	return e != NULL && e->live && e->in_fp ? e : NULL;
}

/*
 * Every offloaded connection, in an array of its own (the caller frees
 * it): for a caller whose work on each may index others (an iteration
 * would meet those).  NULL when there is no memory.
 */
struct off_entry **
off_snapshot(const struct fd_offload *o, size_t *n)
{
	struct off_entry **all = calloc(o->nentries ? o->nentries : 1, sizeof(*all)), *e;
	uint32_t i = 0;

	*n = 0;
	if (all == NULL)
		return NULL;
	while ((e = off_next(o, &i)) != NULL && *n < o->nentries)
		all[(*n)++] = e;
	return all;
}

void
off_table_free(struct fd_offload *o)
{
	struct off_table *t = &o->tab;

	ix_free(&t->by_ct);
	ix_free(&t->by_fp);
	ix_free(&t->by_nat);
	free(t->nat);
	for (uint32_t c = 0; c < t->nchunks; c++)
		free(t->chunk[c]);
	free(t->chunk);
	*t = (struct off_table){ 0 };
}

/* Forgets every entry but the cut ones a resync found held (their mark cleared for the next). */
void
off_forget_uncut(struct fd_offload *o)
{
	size_t n;
	struct off_entry **all = off_snapshot(o, &n);

	if (all == NULL) {
		off_forget_all(o);	/* no memory: the cut ones go too (the host's rule drops) */
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (all[i]->cut && all[i]->held)
			all[i]->held = false;
		else
			off_forget(o, all[i]);
	}
	free(all);
}
