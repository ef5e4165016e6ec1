/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_pool: objects of one size kept for reuse on a free list, so a path
 * that makes and ends one an event (the binding's flights: one an
 * offload, fd_offload.c) does not call malloc and free each time.
 *
 * An object given back is kept (LIFO: the warmest first) up to `keep`,
 * past that freed: a burst's peak is not held for ever.  fd_pool_get
 * hands one out zeroed, as calloc would.  Written here, not taken from a
 * library: the binding may not link DPDK (rte_mempool is the
 * coprocessor's), glib's GSlice is deprecated for malloc, and a free list
 * of one size is these few lines.  Measured: the allocator was 3 % of
 * flowcutd's time at a million offloads (lab/scale.sh 1000000, perf), a
 * flight one of its four allocations an offload.  One owner, no locks.
 */
#ifndef FLOWCUT_FD_POOL_H
#define FLOWCUT_FD_POOL_H

#include <stddef.h>

struct fd_pool {
	size_t size;		/* an object's bytes (at least a pointer's) */
	unsigned int keep;	/* the most kept on the free list */
	unsigned int nfree;	/* kept now */
	void *free;		/* the free list's head, linked through each object's first bytes */
};

/* fd_pool_init - an empty pool of `size`-byte objects keeping at most `keep`. */
void fd_pool_init(struct fd_pool *p, size_t size, unsigned int keep);
/* fd_pool_get - a zeroed object (a kept one, or a new one), or NULL (no memory). */
void *fd_pool_get(struct fd_pool *p);
/* fd_pool_put - `obj` (of this pool's, or NULL) given back: kept, or freed past `keep`. */
void fd_pool_put(struct fd_pool *p, void *obj);
/* fd_pool_free - the kept objects freed (those handed out are their holders'). */
void fd_pool_free(struct fd_pool *p);

#endif
