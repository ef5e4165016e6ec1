/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_setelem: the elements of an nftables address set on the wire, both
 * ways - read from NFT_MSG_NEWSETELEM messages (a notification's, or a
 * dump's) into address ranges, and written from ranges into a batch of
 * NEWSETELEM/DELSETELEM messages.  Pure: no sockets, no globals.
 *
 * An interval set holds a range as two elements: its first address, and
 * the address after its last flagged INTERVAL_END; a range that runs to
 * the last address has no end element.  The kernel tells each element on
 * its own and in no set order, so elements are gathered
 * (fd_setelem_gather) and paired once all are in (fd_setelem_ranges):
 * each start with the nearest end above it.
 *
 * Any thread (no state of its own).  The accumulator and the batch are
 * the caller's; the free functions take a zeroed one too.  Errors are
 * negative errnos, beside each call.
 *
 * Design notes (an element message, why libmnl): driver/nft/README.md.
 */
#ifndef FLOWCUT_FD_SETELEM_H
#define FLOWCUT_FD_SETELEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>

#include "fc_list.h"

/* What one element says. */
enum fd_setelem_kind {
	FD_SETELEM_START,	/* an address; in an interval set, a range's first */
	FD_SETELEM_END,		/* the address after a range's last (INTERVAL_END) */
	FD_SETELEM_OPEN,	/* a range's first address; it runs to the last one */
	FD_SETELEM_RANGE,	/* key .. key_end, both in it (KEY_END given) */
};

struct fd_setelem_item {
	uint8_t key[16];	/* network order, 4 or 16 bytes used */
	uint8_t last[16];	/* FD_SETELEM_RANGE's last address */
	uint8_t kind;		/* enum fd_setelem_kind */
	int64_t expires_ms;	/* its NFTA_SET_ELEM_EXPIRATION (ms left); -1: none */
};

/* The elements of one set gathered so far. */
struct fd_setelem_acc {
	uint8_t family;		/* 4 or 6: keys of 4 or 16 bytes (the set's type) */
	bool interval;		/* NFT_SET_INTERVAL */
	struct fd_setelem_item *it;
	size_t n, cap;
	unsigned long bad;	/* elements that could not be read */
	/*
	 * The soonest an element gathered runs out: the least
	 * NFTA_SET_ELEM_EXPIRATION (ms left when its message was made), for
	 * the set as a whole, not per element (a million of them need no
	 * more to know when to read the set again).
	 */
	bool expiring;		/* some element gathered has one */
	uint64_t expires_ms;	/* ... the least of them */
};

/*
 * fd_setelem_head - which set an element message is about: its nftables
 * family (NFPROTO_*), table and set (pointers into the message).  0, or
 * -EINVAL: not a NEWSETELEM/DELSETELEM of nf_tables, or no table or set.
 */
int fd_setelem_head(const struct nlmsghdr *nlh, uint8_t *nfproto, const char **table,
		    const char **set);

/*
 * fd_setelem_gather - the message's elements appended to `acc` (keys of
 * acc->family's length), the soonest expiration among them kept in
 * acc->expiring and acc->expires_ms.  An element it cannot read (no key,
 * a key of another length, a catch-all, an end in a set without
 * intervals, an expiration that is not a u64) is counted in acc->bad and
 * skipped.  0, -EINVAL (no element list: nothing
 * gathered), or -ENOMEM.  `nlh`'s length must have been checked against
 * its datagram (mnl_cb_run does), as for fd_setelem_head.
 */
int fd_setelem_gather(const struct nlmsghdr *nlh, struct fd_setelem_acc *acc);

/*
 * fd_setelem_ranges - what acc holds as address ranges, appended to `out`
 * (not canonical); acc is emptied (its family and interval kept, its
 * expiry cleared: take it before).
 * `whole`: acc holds a whole set (a dump), so a start with no end above it
 * runs to the last address; otherwise (one transaction's notifications)
 * such a start, or an end whose start is not there, cannot be placed.
 * Returns the elements not read or not placed (acc->bad among them; 0:
 * every one), or -ENOMEM.
 */
long fd_setelem_ranges(struct fd_setelem_acc *acc, bool whole, struct fc_list *out);

void fd_setelem_acc_free(struct fd_setelem_acc *acc);

/* A range and when it runs out: what fd_setelem_ranges_timed gives. */
struct fd_setelem_timed {
	struct fc_range r;
	/*
	 * ms left before it runs out when its message was made: its first
	 * element's NFTA_SET_ELEM_EXPIRATION (an interval's start; its end's
	 * when the start has none); -1: no timeout.
	 */
	int64_t expires_ms;
};

struct fd_setelem_timed_list {
	struct fd_setelem_timed *t;
	size_t n, cap;
};

/*
 * fd_setelem_ranges_timed - fd_setelem_ranges, each range with its own
 * expiry (for a set whose every element's timeout is kept: flowcutd's cut
 * sets, put back after a `flush ruleset`), appended to `out`.  The same
 * returns, and acc emptied the same way.
 */
long fd_setelem_ranges_timed(struct fd_setelem_acc *acc, bool whole,
			     struct fd_setelem_timed_list *out);

void fd_setelem_timed_free(struct fd_setelem_timed_list *l);

/*
 * A batch of nf_tables messages being written: NFNL_MSG_BATCH_BEGIN, the
 * element messages, NFNL_MSG_BATCH_END - one transaction.  Every element
 * message asks for no answer but its errors, but the last one asks for
 * an acknowledgement (last_seq), so the writer knows when all were taken.
 */
struct fd_setelem_batch {
	char *buf;
	size_t len, cap;
	uint32_t seq;		/* the next message's */
	uint32_t begin_seq;	/* BATCH_BEGIN's: an error for it is the batch's */
	uint32_t last_seq;	/* the last element message's (acknowledged) */
	size_t last_off;	/* where it starts in buf */
	unsigned int msgs;	/* element messages */
};

/* fd_setelem_batch_begin - a new batch whose first message is `seq`.  0 or -ENOMEM. */
int fd_setelem_batch_begin(struct fd_setelem_batch *b, uint32_t seq);

/*
 * fd_setelem_put - the ranges `r` (n of them, one family) as elements of a
 * set, added (NFT_MSG_NEWSETELEM) or removed (NFT_MSG_DELSETELEM).  An
 * interval set gets a start and an end per range (no end, marked open,
 * for one that runs to the last address); a set without intervals takes
 * single addresses only.  n == 0 with DELSETELEM empties the set (a
 * flush).  0, -EINVAL (a range in a set without intervals, a bad
 * family), or -ENOMEM (the batch as it was before the call).
 */
int fd_setelem_put(struct fd_setelem_batch *b, uint16_t op, uint8_t nfproto, const char *table,
		   const char *set, bool interval, const struct fc_range *r, size_t n);

/* fd_setelem_batch_end - NFNL_MSG_BATCH_END, the last message acknowledged.  0 or -ENOMEM. */
int fd_setelem_batch_end(struct fd_setelem_batch *b);

void fd_setelem_batch_free(struct fd_setelem_batch *b);

#endif
