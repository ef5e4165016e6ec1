/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_why: see fd_why.h. */
#include "fd_why.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fd_mem.h"

struct fd_why {
	struct fd_why_src src[FD_WHY_SOURCES];
	const struct fc_list *held[FD_WHY_SOURCES];
	struct fc_list owned[FD_WHY_SOURCES];	/* fd_why_own's */
	unsigned int nsrc;
	struct fd_why_rec *tab;	/* open addressing by slot; cap a power of 2 */
	uint32_t cap, n;
};

struct fd_why *
fd_why_open(void)
{
	return calloc(1, sizeof(struct fd_why));
}

void
fd_why_close(struct fd_why *w)
{
	if (w == NULL)
		return;
	for (unsigned int i = 0; i < w->nsrc; i++)
		fc_list_free(&w->owned[i]);
	free(w->tab);
	free(w);
}

int
fd_why_source(struct fd_why *w, enum fd_why_kind kind, const char *name)
{
	if (strlen(name) >= FD_WHY_NAME_MAX)
		return -ENAMETOOLONG;
	for (unsigned int i = 0; i < w->nsrc; i++)
		if (w->src[i].kind == kind && strcmp(w->src[i].name, name) == 0)
			return (int)i;
	if (w->nsrc == FD_WHY_SOURCES)
		return -E2BIG;
	w->src[w->nsrc].kind = kind;
	w->src[w->nsrc].followed = kind == FD_WHY_FINGERPRINTS;	/* named by its cut: read */
	strcpy(w->src[w->nsrc].name, name);
	return (int)w->nsrc++;
}

void
fd_why_holds(struct fd_why *w, int src, const struct fc_list *l)
{
	if (src < 0 || (unsigned int)src >= w->nsrc)
		return;
	w->held[src] = l;
	w->src[src].followed = l != NULL;
	w->src[src].elements = l ? l->n : 0;
}

void
fd_why_own(struct fd_why *w, int src, struct fc_list *l)
{
	if (src < 0 || (unsigned int)src >= w->nsrc)
		return;
	fc_list_free(&w->owned[src]);
	w->owned[src] = *l;
	*l = (struct fc_list){ 0 };
	fd_why_holds(w, src, &w->owned[src]);
}

int
fd_why_add(struct fd_why *w, int src, const struct fc_list *add)
{
	struct fc_list *o;

	if (src < 0 || (unsigned int)src >= w->nsrc || add->n == 0)
		return 0;
	o = &w->owned[src];
	for (size_t i = 0; i < add->n; i++)
		if (fc_list_add(o, &add->r[i]) != 0) {
			o->n -= i;	/* the ones added here taken back */
			return -ENOMEM;
		}
	fc_list_canon(o);
	fd_why_holds(w, src, o);
	return 0;
}

void
fd_why_gone(struct fd_why *w, int src)
{
	if (src < 0 || (unsigned int)src >= w->nsrc)
		return;
	fc_list_free(&w->owned[src]);
	fd_why_holds(w, src, NULL);
}

const struct fc_list *
fd_why_held(const struct fd_why *w, int src)
{
	return src >= 0 && (unsigned int)src < w->nsrc ? w->held[src] : NULL;
}

int
fd_why_owner(const struct fd_why *w, enum fd_why_kind kind, uint8_t family,
	     const uint8_t *a, const uint8_t *b)
{
	for (unsigned int i = 0; i < w->nsrc; i++) {
		const struct fc_list *l = w->held[i];

		if (w->src[i].kind == kind && l != NULL &&
		    (fc_list_holds(l, family, a) || fc_list_holds(l, family, b)))
			return (int)i;
	}
	return FD_WHY_NONE;
}

/* The table's place of `slot`: its record, or the empty one where it goes. */
static struct fd_why_rec *
place(const struct fd_why *w, uint32_t slot)
{
	uint32_t i = (slot * 2654435761u) & (w->cap - 1);

	while (w->tab[i].used && w->tab[i].slot != slot)
		i = (i + 1) & (w->cap - 1);
	return &w->tab[i];
}

/* Twice the room, every record placed again.  0, or -ENOMEM (the table as it was). */
static int
grow(struct fd_why *w)
{
	uint32_t cap = w->cap ? w->cap * 2 : 1024;
	struct fd_why_rec *old = w->tab, *tab = calloc(cap, sizeof(*tab));
	uint32_t oldcap = w->cap;

	if (tab == NULL)
		return -ENOMEM;
	fd_mem_populate(tab, (size_t)cap * sizeof(*tab));	/* a quarter to half full: every page */
	w->tab = tab;
	w->cap = cap;
	for (uint32_t i = 0; i < oldcap; i++)
		if (old[i].used)
			*place(w, old[i].slot) = old[i];
	free(old);
	return 0;
}

int
fd_why_cut(struct fd_why *w, const struct fd_why_rec *r)
{
	struct fd_why_rec *p;

	if (r->src < w->nsrc)
		w->src[r->src].cut++;
	if ((w->n + 1) * 2 > w->cap && grow(w) != 0)
		return -ENOMEM;
	p = place(w, r->slot);
	w->n += !p->used;
	*p = *r;
	p->used = 1;
	p->frames = 0;
	if (!p->based)
		p->base = 0;
	return 0;
}

const struct fd_why_rec *
fd_why_get(const struct fd_why *w, uint32_t slot)
{
	const struct fd_why_rec *p;

	if (w->cap == 0)
		return NULL;
	p = place(w, slot);
	return p->used ? p : NULL;
}

const struct fd_why_rec *
fd_why_next(const struct fd_why *w, uint32_t *at)
{
	for (; *at < w->cap; (*at)++)
		if (w->tab[*at].used)
			return &w->tab[(*at)++];
	return NULL;
}

int
fd_why_frames(struct fd_why *w, uint32_t slot, uint64_t packets)
{
	struct fd_why_rec *p = w->cap ? place(w, slot) : NULL;
	uint64_t now;

	if (p == NULL || !p->used)
		return -ENOENT;
	if (!p->based) {	/* the first reading: the base */
		p->based = 1;
		p->base = packets;
	}
	now = packets >= p->base ? packets - p->base : 0;
	if (p->src < w->nsrc)
		w->src[p->src].frames += now - p->frames;
	p->frames = now;
	return 0;
}

unsigned int
fd_why_nsources(const struct fd_why *w)
{
	return w->nsrc;
}

const struct fd_why_src *
fd_why_src(const struct fd_why *w, int src)
{
	return src >= 0 && (unsigned int)src < w->nsrc ? &w->src[src] : NULL;
}

size_t
fd_why_bytes(const struct fd_why *w)
{
	return (size_t)w->cap * sizeof(struct fd_why_rec);
}
