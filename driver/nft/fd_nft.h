/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nft: flowcutd and the host's nftables - flowcutd's own table `inet
 * flowcut`, and the ruleset's changes followed over netlink.
 *
 * (1) The table's base chain (forward hook, priority 100: after the
 *     host's filter) sets mark_bit on every packet the rules let through.
 * (2) A generation another process commits is a ruleset change
 *     (FD_NFT_RULESET); the table is put back after each.
 * (3) The cut sets cut4/cut6, dropped both ways: what another process
 *     adds comes from fd_nft_cut_take, a whole read from fd_nft_cut_read.
 * (4) Watched sets of the host's ruleset, followed (fd_nft_follow,
 *     fd_nft_followed_take).  Element changes of (3) and (4) are no
 *     ruleset change, nor are flowcutd's own transactions.
 * (5) The list sets (fd_setio.h), dropped both ways; fd_nft_lists_lost
 *     says when they were made anew, to be filled whole.
 * (6) conn4/conn6: the connections cut on the host (fd_nft_block),
 *     dropped for FD_NFT_CONN_TIMEOUT_S.
 * (7) The table outlives flowcutd: fd_nft_close leaves it, still
 *     dropping; fd_nft_open takes it as it finds it.
 * (8) The cut sets outlive a `flush ruleset`: kept with their expiries,
 *     put back when the table is made anew.
 * (9) The never-cut sets (fd_nft_never): accepted before any drop.
 *
 * Main thread only.  fd_nft_close(NULL) does nothing.  The calls return
 * 0 or a negative errno unless told beside them; an error of
 * fd_nft_events is to be taken as a ruleset change and a cut set change.
 *
 * Design notes: driver/nft/README.md.
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
