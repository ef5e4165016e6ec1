/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_grow: the house's one growable array.  An array is a pointer, a count
 * and a capacity kept by its owner; before it writes item n (== the
 * count), the owner asks for room:
 *
 *	struct fc_range *r = fc_grow(l->r, &l->cap, l->n, sizeof(*r), 256);
 *	if (r == NULL)
 *		return -ENOMEM;		// l->r and l->cap as they were
 *	l->r = r;
 *	l->r[l->n++] = *range;
 *
 * Returns `a` itself while n < *cap; else the array doubled (from `first`
 * items), with *cap updated; NULL when there is no memory or the size
 * would overflow (then `a` and *cap are as they were, and still the
 * owner's).  Any thread, on an array of its own.  Header only: libc's
 * realloc, with the doubling and the overflow check written once.
 */
#ifndef FLOWCUT_FC_GROW_H
#define FLOWCUT_FC_GROW_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void *
fc_grow(void *a, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want;
	void *b;

	if (n < *cap)
		return a;
	want = *cap ? *cap * 2 : first;
	if (want <= n || size == 0 || want > SIZE_MAX / size)
		return NULL;
	b = realloc(a, want * size);
	if (b != NULL)
		*cap = want;
	return b;
}

#endif
