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
 * it: (8) puts those back).
 *
 * (3) The cut sets: `inet flowcut` cut4 (ipv4_addr) and cut6 (ipv6_addr),
 * interval sets with timeouts and auto-merge, whose members the chain
 * drops both ways before it marks.  `flowcutctl cut` adds to them; they
 * are followed as the watched sets (4) are: the elements another process
 * adds are read from their notifications (NFT_MSG_NEWSETELEM on the same
 * group, fd_setelem) and paired into ranges once their transaction is
 * committed, reported (FD_NFT_CUT) and handed over by fd_nft_cut_take;
 * where a whole read is needed (the start, lost events, an addition not
 * read whole, a release) fd_nft_cut_read dumps them (fd_setio, GETSETELEM).
 * A transaction that only adds or removes elements of the cut sets is not
 * a ruleset change.
 *
 * (4) Watched sets of the host's own ruleset (`watched_set`, looked up
 * and read through fd_setio) are followed (fd_nft_follow): the elements
 * another process adds to one are read from their notifications
 * (fd_setelem) and paired into ranges once their transaction is
 * committed; fd_nft_followed_take hands them over (and
 * fd_nft_followed_due when the first of them runs out).  Their element changes
 * are no ruleset change either: a watched set is one the ruleset blocks
 * with, and the cut follows its additions precisely.
 *
 * (5) The list sets (fd_setio.h: `list4`/`list6`, `listnet4`/`listnet6`),
 * filled from the watched list files (fd_watch, through fd_setio), whose
 * members the chain drops both ways.  A ruleset change that took them away
 * (a `flush ruleset`) is told by fd_nft_lists_lost - the table or a set
 * got a new handle - for the lists to be put back whole.  flowcutd's own
 * writes are notified to it too: one transaction of more than about
 * 100,000 elements would overflow its event socket (lost events: a
 * resync), and the kernel takes one of a million in 21 s where twenty of
 * 50,000 take 5 s, so fd_watch makes big changes in transactions of
 * FD_WATCH_CHUNK ranges.
 *
 * (6) The connections cut on the host: `inet flowcut` conn4 and conn6,
 * five-tuple sets (address . protocol . port . address . port, as the
 * forward hook sees each direction) with a timeout of
 * FD_NFT_CONN_TIMEOUT_S, whose members the chain drops.  A cut that kills
 * a state on the host puts its two directions there first, so the
 * sender's next segment does not open a new state mid-stream (conntrack
 * picks up established TCP by default) where no address rule stops it (a
 * fingerprint cut, a cut by connection).  flowcutd's own transactions are
 * no ruleset change (NEWGEN carries its pid).
 *
 * (7) The table outlives flowcutd: fd_nft_close() leaves it, so what it
 * drops (the cut sets, the connections cut on the host, the lists) stays
 * dropped while flowcutd is down and after it starts again, as a firewall
 * fails closed.  fd_nft_open() takes the table as it finds it: the sets
 * are added only if missing (their elements kept, their timeouts running
 * on), the chain's rules are put in anew, the list sets are filled whole
 * (fd_nft_lists_lost says so at the first look).  `nft delete table inet
 * flowcut` takes it away.
 *
 * (8) The cut sets outlive a `flush ruleset` too (a ruleset file loaded
 * with `nft -f` begins with one, as Debian's /etc/nftables.conf does):
 * what they hold is read whole (a GETSETELEM dump) at start and after
 * every change of their elements by anyone (an uncut included), each
 * range with when it expires (its NFTA_SET_ELEM_EXPIRATION, in ms); when the table has to be made anew, they are put back as they
 * were, each timeout with what is left of it, in one transaction of
 * flowcutd's own.
 *
 * (9) The never-cut sets: `inet flowcut` never_cut4 and never_cut6
 * (interval), the settings' never_cut (fd_nft_never), whose members the
 * chain accepts - marked as every packet the host's rules let through is,
 * so they are offloaded as any - in its first rules, before any drop:
 * flowcut's own cuts (cut sets, lists, connections cut on the host) never
 * drop them on the host.  Written whole (flushed and filled in one
 * transaction) at each change and each time the table is put in.
 *
 * Main thread only.  fd_nft_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_NFT_H
#define FLOWCUT_FD_NFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flowcut/fc_nft.h>

struct fd_nft;
struct fc_list;
struct fd_setio;
struct fd_setio_set;
struct fd_tuple;

/* the table's and the sets' names: <flowcut/fc_nft.h> */
/* how long a connection cut on the host stays in conn4/conn6 */
#define FD_NFT_CONN_TIMEOUT_S 120

/* fd_nft_events' result bits */
#define FD_NFT_RULESET 0x1	/* another process changed the ruleset (the table is back) */
#define FD_NFT_CUT 0x2		/* another process added elements to cut4 or cut6: fd_nft_cut_take */
#define FD_NFT_WATCHED 0x4	/* elements were added to a followed set: fd_nft_followed_take */
#define FD_NFT_UNCUT 0x8	/* elements were removed from cut4/cut6 or a followed set */

/*
 * fd_nft_open - install the table (marking `mark_bit`), or take the one a
 * flowcutd before left (7); follow changes.  NULL, errno.
 */
struct fd_nft *fd_nft_open(uint32_t mark_bit);
/* fd_nft_close - stop following; the table stays in force (7). */
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
 * fd_nft_cut_read - what cut4 and cut6 hold now (read whole: fd_setio's
 * GETSETELEM dumps), appended to `out` and made canonical.  0, -ENOMEM, or
 * the -errno of a set that could not be read (said); what was read is in
 * `out` either way.  An element it cannot read or pair is said and
 * skipped.
 */
int fd_nft_cut_read(struct fd_nft *n, struct fc_list *out);

/*
 * fd_nft_cut_take - the ranges another process added to cut4/cut6 since
 * the last call, from their notifications (canonical, appended to
 * `added`).  Returns 0, 1 when some element could not be read or paired
 * (read the cut sets whole: fd_nft_cut_read), or -ENOMEM.
 */
int fd_nft_cut_take(struct fd_nft *n, struct fc_list *added);

/*
 * fd_nft_cut_expired - whether an element of cut4 or cut6 ran out (its
 * timeout: `flowcutctl cut --for S`, nft's `timeout`) since the last call.
 * The kernel does not notify an expiry: the kept copy (8) knows when each
 * element's time is up, as the kernel said it when they were read (ms);
 * from then on the sets are read again, every 100 ms until it is gone.  1 when one
 * ran out (or there was no memory to tell), else 0.  Cheap while none is
 * due: call it every turn of the loop.
 */
int fd_nft_cut_expired(struct fd_nft *n);


/*
 * fd_nft_block - both directions of the TCP or UDP connection `c`, its
 * ends as the forward hook sees its frames (src the client, dst the
 * server), queued for conn4/conn6; sent by
 * fd_nft_block_flush() in one transaction.  0, -EINVAL (not TCP or UDP,
 * or a family not 4 or 6), or -ENOMEM.
 */
int fd_nft_block(struct fd_nft *n, const struct fd_tuple *c);
/* fd_nft_block_flush - what is queued, sent: 0, or -EIO (said on stderr). */
int fd_nft_block_flush(struct fd_nft *n);
/*
 * fd_nft_follow - the sets whose added elements fd_nft_events gathers
 * (replacing the ones before; what was gathered for them is dropped).
 * 0 or -ENOMEM (none followed).
 */
int fd_nft_follow(struct fd_nft *n, const struct fd_setio_set *s, unsigned int count);

/*
 * fd_nft_followed_take - the ranges added to followed sets since the last
 * call (canonical, appended to `added`).  Returns 0, 1 when some element
 * could not be read or paired (read the followed sets whole), or -ENOMEM.
 */
int fd_nft_followed_take(struct fd_nft *n, struct fc_list *added);

/*
 * fd_nft_followed_due - when the first of the elements added to followed
 * set `s` since the last call runs out, as their notifications said
 * (NFTA_SET_ELEM_EXPIRATION, in CLOCK_MONOTONIC ms; the kernel notifies no
 * expiry: fd_watch reads the set again then).  0: none added had a
 * timeout, or `s` is not followed.
 */
uint64_t fd_nft_followed_due(struct fd_nft *n, const struct fd_setio_set *s);
/*
 * fd_nft_followed_added - what was added to followed set `s` alone since
 * the last call (the same ranges fd_nft_followed_take hands, by set: for
 * fd_why's per-set figures), moved into *added (the caller frees it).
 * 0, or -ENOENT (not followed: *added empty).
 */
int fd_nft_followed_added(struct fd_nft *n, const struct fd_setio_set *s, struct fc_list *added);

/*
 * fd_nft_never - the never-cut sets made to hold `l` (canonical; kept, to
 * put back whenever the table is put in again).  0, -ENOMEM, or -EIO
 * (said on stderr; the sets keep what they held).
 */
int fd_nft_never(struct fd_nft *n, const struct fc_list *l);

/* fd_nft_io - its request channel, for the watched sets and the list sets (main thread). */
struct fd_setio *fd_nft_io(struct fd_nft *n);

/*
 * fd_nft_lists_lost - whether the list sets were made anew (empty) since
 * the last call: at the first call, and after a ruleset change took them.
 */
bool fd_nft_lists_lost(struct fd_nft *n);

#endif
