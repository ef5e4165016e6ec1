/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_page: the operator's page's `conns FROM N [filters]` and `cuts [N]`
 * answered (issue 18, /work/prompts/t18-proto.md; docs/commands.md's
 * control socket rows): the fast path's table a page at a time, joined
 * with the binding's entry and fd_why's record of a cut one, and the
 * recent cuts, newest first.  Each answer is "ok JSON\n" or "error
 * TEXT\n", at most `cap` bytes (FC_CTL_ANS_MAX, 64 KiB).
 *
 * `conns`: read from the coprocessor through the caller's command client
 * (CONN_READ_RANGE: 5 connections a command, with their counts; a brief
 * read has no packets or bytes), FD_PAGE_CMDS commands a page at most,
 * synchronous: the page holds the main loop for those round trips (each
 * one's scan of empty slots is the fast path's used bitmap, 64 slots a
 * load).  FROM is a connection id or a slot: its low 32 bits are the slot
 * the read starts at (docs/commands.md: an id is its slot and the slot's
 * generation), its high 32 bits are not looked at.  `next` is a FROM for
 * the next page: the id of the first connection read and not shown
 * (the page full, or the answer's room spent: a page is shortened, never
 * refused), or, when the commands' budget ran out in an empty or filtered
 * stretch, the slot the read reached (a FROM with no generation); null
 * once the table's end was read.  A page may so hold fewer than N rows
 * with `next` not null: the page asks again from `next`.
 *
 * A row's fields from the coprocessor's answer: the original direction's
 * key (src, sport, dst, dport, family, proto: as the wire sees it, before
 * NAT), the verdict, both microflows' actions ("FWD", or "FWD/DROP" where
 * the two differ), `state` the fast path's connection state
 * (fc_conn_state_name: VALID, INVALID, RECLAIM) - not the TCP state,
 * which conntrack holds and a page would need a GET a row to read -,
 * idle_ms (CLOCK_MONOTONIC, the coprocessor's clock, less the newer
 * microflow's last frame), packets and bytes of both microflows.  `cut`
 * from the binding (its entry cut) and fd_why's record: trigger ("set",
 * "list", "fingerprint" for fd_cut's tls, "hand", "conn"; "unknown" for a
 * flowcutd before's), source (a set's "FAMILY TABLE SET", a list's or a
 * fingerprints file's path; null for hand and conn, which have none),
 * element (the range of the set or list that holds an end, from what the
 * source holds now in memory; null for the others), line (a
 * fingerprint's list line, kept in the record; null for a list, whose
 * line is found by reading the file again - `why-conn ID` does - which a
 * page of 100 rows must not do), when_s, in_hardware, frames_dropped.  A
 * cut one with no record kept (a flowcutd before's, or no memory): its
 * trigger alone, the record's keys left out.
 *
 * Filters (struct fd_page_filter): addr, an address (plen 32 or 128) or a
 * prefix either end of either microflow is equal to or inside (so a NAT'd
 * server's address finds it too); port, either port of the original
 * direction; state, the state's name or "cut" (cut in the binding);
 * action, as the row shows it (case not minded).
 *
 * `cuts`: fd_why's records whose entry is still cut by the record's
 * trigger (a stale record - its entry released, aged out, or cut again
 * by another trigger - is left out: the 32-byte record keeps no tuple, so
 * the tuple is the binding's entry's, struct fd_offload_conn's orig),
 * newest first, N at most; each {when_s, trigger, source, element, line,
 * id, family, proto, src, sport, dst, dport, in_hardware,
 * frames_dropped}.  Work per record (fd_why_next), no command.  Rows that
 * do not fit the answer are left out, newest kept, and `cuts_left` says
 * how many (0: none left out).
 *
 * Main thread only (the cut's, the command client's).
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
