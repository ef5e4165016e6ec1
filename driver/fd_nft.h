/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nft: flowcutd and the host's nftables.
 *
 * Two things: (1) a table of flowcutd's own, `inet flowcut`, with one base
 * chain on the forward hook at priority 100 - after the host's filter -
 * that sets a bit in the connection's mark on every packet the host's rules
 * let through: a connection with the bit was judged and accepted by the
 * ruleset in force.  (2) The ruleset's changes, followed over netlink
 * (NFT_MSG_NEWGEN on NFNLGRP_NFTABLES): a new generation committed by
 * anyone else means the rules changed.  The table is put back after every
 * change (a `flush ruleset` takes it away, and the cut sets' elements with
 * it).
 *
 * (3) The cut sets: `inet flowcut` cut4 (ipv4_addr) and cut6 (ipv6_addr),
 * interval sets with timeouts and auto-merge, whose members the chain
 * drops both ways before it marks.  `flowcutctl cut` adds to them; an
 * element added (NFT_MSG_NEWSETELEM on the same group) is reported, and
 * the sets read back whole (fd_nft_cut_read) for the cut.  A transaction
 * that only adds or removes elements of the cut sets is not a ruleset
 * change.
 *
 * (4) Watched sets of the host's own ruleset (`watched_set`): a set is
 * looked at (fd_nft_set_get: it must hold ipv4_addr or ipv6_addr), read
 * whole (fd_nft_set_read: a GETSETELEM dump), and followed
 * (fd_nft_follow): the elements another process adds to it are read from
 * their notifications (fd_setelem) and paired into ranges once their
 * transaction is committed; fd_nft_followed_take hands them over.  Their
 * element changes are no ruleset change either: a watched set is one the
 * ruleset blocks with, and the cut follows its additions precisely.
 *
 * (5) The list sets, filled from the watched list files (fd_watch), whose
 * members the chain drops both ways: `list4`/`list6` hold single
 * addresses (hash sets: any size), `listnet4`/`listnet6` prefixes and
 * ranges (interval sets).  Apart because nft 1.0.6 reads every interval
 * set's elements whole before it adds to any interval set, and the
 * kernel's rbtree dumps in quadratic time: with a million addresses in an
 * interval set, one `nft add element` anywhere on the host took 2 min 53 s
 * here; in a hash set they cost it nothing.  They are written through
 * libmnl (fd_nft_lists_apply: one transaction of the elements added and
 * removed, no nft cache).  A ruleset change that took the sets away (a
 * `flush ruleset`) is told by fd_nft_lists_lost, for the lists to be put
 * back whole.  flowcutd's own writes are notified to it too: one
 * transaction of more than about 100,000 elements would overflow its event
 * socket (lost events: a resync), and the kernel takes one of a million
 * in 21 s where twenty of 50,000 take 5 s, so fd_watch makes big changes
 * in transactions of FD_WATCH_CHUNK ranges.
 *
 * Main thread only.  fd_nft_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_NFT_H
#define FLOWCUT_FD_NFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fd_nft;
struct fc_list;

#define FD_NFT_CUT4 "cut4"
#define FD_NFT_CUT6 "cut6"
#define FD_NFT_LIST4 "list4"		/* the lists' addresses (hash) */
#define FD_NFT_LIST6 "list6"
#define FD_NFT_LISTNET4 "listnet4"	/* the lists' prefixes and ranges (interval) */
#define FD_NFT_LISTNET6 "listnet6"

/* fd_nft_events' result bits */
#define FD_NFT_RULESET 0x1	/* another process changed the ruleset (the table is back) */
#define FD_NFT_CUT 0x2		/* another process added elements to cut4 or cut6 */
#define FD_NFT_WATCHED 0x4	/* elements were added to a followed set: fd_nft_followed_take */

#define FD_NFT_NAME_MAX 64	/* a followed set's table and set names, NUL included */

/* A set of the host's own ruleset. */
struct fd_nft_set {
	uint8_t nfproto;		/* NFPROTO_INET, NFPROTO_IPV4, ... (fd_nft_family) */
	char table[FD_NFT_NAME_MAX];
	char name[FD_NFT_NAME_MAX];
	/* filled by fd_nft_set_get */
	uint8_t family;			/* 4 or 6: its type is ipv4_addr or ipv6_addr */
	bool interval;			/* flags interval */
};

/* fd_nft_open - install the table (marking `mark_bit`), follow changes.  NULL, errno. */
struct fd_nft *fd_nft_open(uint32_t mark_bit);
void fd_nft_close(struct fd_nft *n);
/* fd_nft_fd - the event socket, to poll. */
int fd_nft_fd(const struct fd_nft *n);
/* datagrams fd_nft_events() reads in one call; the rest in the next */
#define FD_NFT_EVENTS_PER_TURN 64

/*
 * fd_nft_events - reads at most FD_NFT_EVENTS_PER_TURN datagrams.  Returns
 * FD_NFT_* bits (0: nothing for us), or a negative errno: -ENOBUFS means
 * events were lost, -EIO that the table could not be put back (said on
 * stderr); treat every error as a ruleset change and a cut set change.
 */
int fd_nft_events(struct fd_nft *n);

/*
 * fd_nft_cut_read - what cut4 and cut6 hold now (libnftables' JSON
 * output), appended to `out` and made canonical.  0, -EIO (a set could not
 * be listed: said), -EINVAL (not JSON), or -ENOMEM; what was read is in
 * `out` either way.  An element it cannot read is said and skipped.
 */
int fd_nft_cut_read(struct fd_nft *n, struct fc_list *out);

/*
 * fd_nft_set_parse - the elements of a set in libnftables' JSON output
 * (`nft -j list set ...`: addresses, {"prefix": ...}, {"range": [...]},
 * each possibly inside {"elem": {"val": ...}} with a timeout) appended to
 * `out` (pure: fd_nft_cut_read's, and the fuzz target's).  Returns how
 * many elements it could not read (skipped), -EINVAL (not JSON), or
 * -ENOMEM.
 */
int fd_nft_set_parse(const char *text, struct fc_list *out);

/* fd_nft_family - an nftables family's name ("inet", "ip", ...) as NFPROTO_*; -EINVAL. */
int fd_nft_family(const char *name);

/*
 * fd_nft_set_get - looks the set up, fills its family and interval flag.
 * 0; -ENOENT (no such table or set); -EMEDIUMTYPE (not an address set: a
 * map, or a type other than ipv4_addr and ipv6_addr; `why` says which);
 * or another -errno from netlink.  `why` (len bytes) always says what was
 * found, for a message naming the set.
 */
int fd_nft_set_get(struct fd_nft *n, struct fd_nft_set *s, char *why, size_t len);

/*
 * fd_nft_set_read - what the set (fd_nft_set_get'ed) holds, appended to
 * `out` as ranges and made canonical.  Returns how many elements could not
 * be read (said by the caller), or -errno (what was read is in `out`).
 */
long fd_nft_set_read(struct fd_nft *n, const struct fd_nft_set *s, struct fc_list *out);

/*
 * fd_nft_follow - the sets whose added elements fd_nft_events gathers
 * (replacing the ones before; what was gathered for them is dropped).
 * 0 or -ENOMEM (none followed).
 */
int fd_nft_follow(struct fd_nft *n, const struct fd_nft_set *s, unsigned int count);

/*
 * fd_nft_followed_take - the ranges added to followed sets since the last
 * call (canonical, appended to `added`).  Returns 0, 1 when some element
 * could not be read or paired (read the followed sets whole), or -ENOMEM.
 */
int fd_nft_followed_take(struct fd_nft *n, struct fc_list *added);

/*
 * fd_nft_lists_apply - one transaction on the list sets: `del` removed,
 * then `add` added (each canonical; NULL: none).  With `fill` the sets
 * are emptied first and `del` is not used.  0, or -errno with what was
 * refused said on stderr (the transaction then changed nothing).
 */
int fd_nft_lists_apply(struct fd_nft *n, const struct fc_list *del, const struct fc_list *add,
		       bool fill);

/*
 * fd_nft_lists_lost - whether the list sets were made anew (empty) since
 * the last call: at the first call, and after a ruleset change took them.
 */
bool fd_nft_lists_lost(struct fd_nft *n);

#endif
