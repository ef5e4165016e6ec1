/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_watch: what triggers a cut from outside flowcutd - the watched
 * nftables sets and the watched list files of the settings (issue 9,
 * triggers 1 and 2).
 *
 * Watched sets (`watched_set = FAMILY TABLE SET`): each is looked at
 * (fd_setio_get: it must exist and hold ipv4_addr or ipv6_addr; one
 * that does not is said once, naming it, and looked at again after every
 * ruleset change) and followed (fd_nft_follow).  What another process adds
 * to one - `nft add element`, fail2ban, a bouncer - is cut (trigger
 * "set"): the connections with a far end in an added element.  At the
 * first boot of the coprocessor and every one after, after a ruleset
 * change and after lost nftables events, each is read whole and what it
 * holds is cut.
 *
 * Watched lists (`watched_list = PATH`): each file is read (fc_list: bad
 * lines said with their numbers, the good ones kept; a file that cannot
 * be read keeps its last good contents), and the union of all of them is
 * put into flowcutd's list sets (fd_nft: `list4`/`list6` the single
 * addresses, `listnet4`/`listnet6` the prefixes and ranges), whose members
 * the host drops both ways.  The files' folders are watched (inotify, as
 * the settings file is: a save that renames into the folder is seen); a
 * change is applied as a difference (fc_list_diff: the ranges added and
 * removed, never a flush and reload), then what was added is cut (trigger
 * "list").  The sets are filled whole only when they are new: at the
 * start, and after a ruleset change took them.  A change is one nftables
 * transaction up to FD_WATCH_CHUNK ranges; a bigger one (a million-line
 * list loaded) is made a transaction per turn of flowcutd's loop
 * (fd_watch_work), the removals first, so the loop keeps serving conntrack
 * and the coprocessor, and the kernel's notifications of each fit in
 * flowcutd's event socket; what it added is cut once all of it is in.
 *
 * No cut runs before the coprocessor was programmed once (fd_watch_boot):
 * that boot cuts what the sets and the lists hold.
 *
 * Released: when something that cut may be gone - an element removed from
 * a watched set or a cut set (`nft delete element`, `flowcutctl uncut`,
 * FD_NFT_UNCUT), a cut set's or a watched set's element whose timeout ran
 * out (fd_watch_expiry), a list's line removed, a ruleset change, lost events
 * - every cut in force is read whole (the cut sets, the watched sets, the
 * lists) and each connection cut by an address that none of them holds
 * any more is taken out of the fast path (fd_cut_release): its next frames
 * go to the host, whose rules judge it as a new connection.  One cut by a
 * fingerprint or by connection id stays cut; one a flowcutd before cut
 * (its trigger unknown) is released as one cut by an address, at the first
 * such change that finds neither of its ends cut (not at the start).  A
 * set that cannot be read releases nothing.  Nothing is read while no
 * connection cut by an address is left.
 *
 * Expiries: the kernel notifies none.  Each watched set keeps one due
 * time, when its first element runs out (the least expiry of its last
 * whole read, or sooner from an addition's notification: fd_setio_read,
 * fd_nft_followed_due; nothing per element).  Once one is due, everything
 * in force is read again as for a removal, at most every 100 ms, and that
 * read gives each set its next due time (a later one when the element was
 * refreshed: `update @set` from the packet path; it is still there and
 * releases nothing).
 *
 * Main thread only (the cut's).  fd_watch_close(NULL) does nothing.
 */
#ifndef FLOWCUT_FD_WATCH_H
#define FLOWCUT_FD_WATCH_H

#include "fc_settings.h"
#include "fd_cut.h"
#include "fd_nft.h"
#include "fd_setio.h"

struct fd_watch;

/* fd_watch_open - over nftables `nft` and the cut `cut` (both outlive it).  NULL, errno. */
struct fd_watch *fd_watch_open(struct fd_nft *nft, struct fd_cut *cut);
void fd_watch_close(struct fd_watch *w);

/* fd_watch_fd - the list files' inotify descriptor, to poll. */
int fd_watch_fd(const struct fd_watch *w);

/*
 * fd_watch_settings - the watched sets and lists as `s` names them (at
 * the start and whenever the settings change): sets looked at and
 * followed, lists read, watched and applied; what is new is cut.
 */
void fd_watch_settings(struct fd_watch *w, const struct fc_settings *s);

/* fd_watch_files - fd_watch_fd is readable: the lists written since are applied. */
void fd_watch_files(struct fd_watch *w);

/*
 * fd_watch_nft - fd_nft_events' result: FD_NFT_WATCHED cuts what was
 * added; FD_NFT_RULESET or an error reads every watched set whole (and
 * cuts what it holds) and puts the lists back if their sets were lost.
 */
void fd_watch_nft(struct fd_watch *w, int nft_rc);

/*
 * fd_watch_expiry - call every turn of the loop: when an element of the
 * cut sets ran out (fd_nft_cut_expired), or a watched set is due (see
 * "Expiries" above), the cut connections nothing in force holds any more
 * are released (see "Released" above).  Cheap while none is due.
 */
void fd_watch_expiry(struct fd_watch *w);

/* fd_watch_boot - the coprocessor was programmed: what the sets and lists hold is cut. */
void fd_watch_boot(struct fd_watch *w);

/* ranges a transaction on the list sets carries at most (about 100,000 elements) */
#define FD_WATCH_CHUNK 50000

/*
 * fd_watch_work - the next transaction of a change of the list sets
 * larger than FD_WATCH_CHUNK ranges (call it every turn of the loop).
 * Returns 1 while more is left, 0 when there is none.
 */
int fd_watch_work(struct fd_watch *w);

#endif
