/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_page: the operator's page's `conns FROM N [filters]` and `cuts [N]`
 * answered (the control protocol: include/flowcut/fc_ctl.h,
 * docs/commands.md): the fast path's table a page at a time, joined with
 * the binding's entry and fd_why's record of a cut one, and the recent
 * cuts, newest first.  Each answer is "ok JSON\n" or "error TEXT\n", at
 * most `cap` bytes (FC_CTL_ANS_MAX, 64 KiB).
 *
 * `conns` reads the coprocessor through the caller's command client
 * (CONN_READ_RANGE), FD_PAGE_CMDS commands a page at most, synchronous:
 * the page holds the main loop for those round trips.  FROM is a
 * connection id or a slot: its low 32 bits are the slot the read starts
 * at.  `next` is a FROM for the next page, null once the table's end was
 * read; a page may hold fewer than N rows with `next` not null (the
 * commands' budget or the answer's room spent: a page is shortened, never
 * refused), and the page asks again from `next`.
 *
 * `cuts`: fd_why's records whose entry is still cut by the record's
 * trigger, newest first, N at most; no command.  Rows that do not fit the
 * answer are left out, newest kept, and `cuts_left` says how many.
 *
 * Main thread only (the cut's, the command client's).  Nothing to open or
 * close: the parts are the caller's.
 *
 * Design notes (a row's fields, the filters): driver/cut/README.md.
 */
#ifndef FLOWCUT_FD_PAGE_H
#define FLOWCUT_FD_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fd_cmds;
struct fd_offload;
struct fd_why;

#define FD_PAGE_CMDS 32		/* CONN_READ_RANGE commands a `conns` page at most */
#define FD_PAGE_ROWS 100	/* rows a page at most (fd_ctl's FD_CTL_PAGE_MAX) */

/* What the answers read; each the caller's. */
struct fd_page_parts {
	const struct fd_cmds *cmds;	/* CONN_READ_RANGE */
	struct fd_offload *off;
	const struct fd_why *why;	/* may be NULL: no record known */
};

/* A `conns` page's filters: each one unset (family 0, port -1, ""), or all set ones must hold. */
struct fd_page_filter {
	uint8_t family;		/* addr's: 4 or 6; 0 none */
	uint8_t addr[16];
	uint8_t plen;
	int32_t port;		/* 0-65535; -1 none */
	const char *state;	/* NULL or "": none */
	const char *action;	/* NULL or "": none */
};

/*
 * fd_page_conns - `conns FROM N [filters]` (N 1 to FD_PAGE_ROWS): "ok
 * {"from","next","conns":[...]}" or "error conns: " and what failed (the
 * command and its slot, its error).
 */
void fd_page_conns(const struct fd_page_parts *p, uint64_t from, unsigned int n,
		   const struct fd_page_filter *f, char *ans, size_t cap);

/* fd_page_cuts - `cuts [N]` (N 1 to FD_PAGE_ROWS): "ok {"cuts":[...],"cuts_left":N}". */
void fd_page_cuts(const struct fd_page_parts *p, unsigned int n, char *ans, size_t cap);

#endif
