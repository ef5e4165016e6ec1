/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_heap: where a fast path's tables live when DPDK has no hugepages.
 *
 * Under --no-huge, DPDK's heap is a memfd mapped on 4 KiB pages, and a
 * kernel that gives shared memory no transparent huge pages (shmem_enabled
 * "never", the common default) keeps it there.  At a million connections
 * the tables are 440 MiB: nearly every frame's connection line then costs
 * a TLB miss on top of its memory round, and under a hypervisor's nested
 * paging a page walk is up to 24 memory references.  Private anonymous
 * memory is eligible for transparent huge pages (MADV_HUGEPAGE, honoured
 * when THP is "madvise" or "always"), and DPDK takes such memory as an
 * external malloc heap (rte_malloc_heap_create / _memory_add): the tables
 * are made there by passing the heap's socket id to fp_create(), and
 * rte_hash, rte_ring and the rest allocate from it as from any socket.
 *
 * Nothing here is hand-written allocation: DPDK's malloc carves the heap;
 * this room only maps the memory, asks for huge pages and hands it over.
 */
#include <errno.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "fp_priv.h"

#define FP_HEAP_PAGE (2u << 20)		/* a transparent huge page on x86-64 */

/*
 * The bytes to map for the tables of p: an upper bound, since DPDK zeroes
 * the whole of an external heap when it is added (every byte is memory
 * from then on).  Per connection: its entry and its NAT pair (our sizes),
 * and DPDK's share, 288 bytes: rte_hash's two keys (a 56-byte key slot
 * each, buckets of eight and as many extension buckets, two slot rings),
 * the free-slot ring and the RCU defer queue.  flowcut-bench measures that
 * share at 197 bytes at a million connections and 253 at its worst, just
 * past a power of two (1,048,577), where the rings and buckets double.
 */
#define FP_HEAP_DPDK_PER_CONN 288
#define FP_HEAP_FIXED (8u << 20)

static size_t
heap_bytes_for(const struct fp_params *p)
{
	size_t n = FP_HEAP_FIXED +
		   (size_t)p->max_conns * (sizeof(struct fp_conn) + sizeof(struct fp_nat[2]) +
					   FP_HEAP_DPDK_PER_CONN) +
		   (size_t)p->max_nhops * sizeof(struct fp_nhop_rt) +
		   rte_rcu_qsbr_get_memsize(p->max_workers);

	return RTE_ALIGN_CEIL(n, (size_t)FP_HEAP_PAGE);
}

int
fp_heap_create(const char *name, const struct fp_params *p, bool *huge)
{
	size_t len, map_len;
	uint8_t *raw, *base;
	int sock;

	if (name == NULL || p == NULL || p->max_conns == 0) {
		rte_errno = EINVAL;
		return -1;
	}
	len = heap_bytes_for(p);
	map_len = len + FP_HEAP_PAGE;	/* room to align the start to a huge page */
	raw = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		rte_errno = errno;
		return -1;
	}
	base = RTE_PTR_ALIGN_CEIL(raw, FP_HEAP_PAGE);
	/* the unaligned head and the tail past len are never used: give them back */
	if (base > raw)
		munmap(raw, (size_t)(base - raw));
	if (raw + map_len > base + len)
		munmap(base + len, (size_t)(raw + map_len - (base + len)));
	/* EINVAL: THP off in this kernel; the heap still works, on small pages */
	*huge = madvise(base, len, MADV_HUGEPAGE) == 0;
	if (rte_malloc_heap_create(name) != 0)
		goto fail;
	if (rte_malloc_heap_memory_add(name, base, len, NULL, 0, FP_HEAP_PAGE) != 0) {
		int err = rte_errno;

		rte_malloc_heap_destroy(name);
		rte_errno = err;
		goto fail;
	}
	sock = rte_malloc_heap_get_socket(name);
	RTE_VERIFY(sock >= 0);	/* the heap was made just above */
	return sock;
fail: {
	int err = rte_errno;

	munmap(base, len);
	rte_errno = err;
	return -1;
}
}
