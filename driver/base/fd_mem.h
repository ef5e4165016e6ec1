/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_mem: a new table's pages faulted in with one call, for the tables
 * the driver fills at once and whole.
 *
 * Page by page, a first write to fresh anonymous memory is a fault, and an
 * open-addressing table's is two: a probe's read maps the shared zero
 * page, the write after it copies it and shoots down the TLB of every core
 * the process's threads ran on (an IPI each).  On this project's VMs that
 * was 7 % of flowcutd's time while it offloaded a million (perf of
 * lab/scale.sh's drain), and a cut of 100,000 reached its last DROP in
 * 468-515 ms with its records' table faulted in page by page, 350-368 ms
 * with it faulted in whole (docs/measurements.md, 2026-12-05 evening).
 * MADV_POPULATE_WRITE (Linux 5.14) makes them all in one call.
 *
 * Only for memory that will be written whole soon (every page): a table
 * whose used part is a prefix (positions by a dense id) would be charged
 * its untouched half.  Refused - an older kernel, memory the kernel will
 * not commit - the pages fault in as they would have: nothing to report.
 * Any thread.
 */
#ifndef FLOWCUT_FD_MEM_H
#define FLOWCUT_FD_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* fd_mem_populate - the whole pages inside [p, p + len) faulted in, writable. */
static inline void
fd_mem_populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = ((uintptr_t)p + pg - 1) & ~(pg - 1), b = ((uintptr_t)p + len) & ~(pg - 1);

	if (b > a)
		(void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

#endif
