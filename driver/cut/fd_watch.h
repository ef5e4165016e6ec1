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
 * Watched by table or by pattern (`watched_set = FAMILY TABLE *`, or a
 * shell pattern on the set's name, fnmatch(3) without flags:
 * `addr-set-*`, `crowdsec-blacklists*`): at each look - the settings, the
 * coprocessor's boot, every ruleset change, lost events - the table's
 * sets are listed (fd_setio_sets, a GETSET dump of the table), and each
 * whose name matches is looked at, read whole and followed as a named set
 * is.  No notification of its own is needed: nftables' NEWSET, DELSET,
 * NEWTABLE and DELTABLE from another process are ruleset changes already
 * (fd_nft: any message but an element's), so a set made later (fail2ban's
 * jail started, CrowdSec's bouncer started) is found at that change, read
 * whole, what it holds cut, and followed; one deleted, or gone with its
 * table (fail2ban deletes `inet f2b-table` with its last jail, CrowdSec's
 * bouncer `ip crowdsec` at its stop), is no longer found, so the release
 * that follows every ruleset change finds what it held no longer in force
 * and releases the connections it alone cut, as an uncut does; made again,
 * it is found and followed again.  A table that is not there is said
 * once per change ("followed once it is made"), one that cannot be read
 * keeps the sets found in it before.  A set under a pattern that is not
 * an address set (a map, a set of ports...) is skipped, said once (not at
 * every look: what was said of each set is kept, as for named ones).
 * A set two lines find (a name and a pattern, or two patterns) is one set.
 * Sets found by a pattern only are bounded: FD_WATCH_PATTERN_SETS address
 * sets followed, in the order of the lines and then the kernel's (the
 * order they were made in); the next ones are said once each ("beyond the
 * 256 sets followed under patterns") and counted (fd_watch_stats: at the
 * last look), never silently dropped; they cut nothing and keep nothing
 * cut, until sets before them go.  Named sets are not under the bound
 * (16 lines at most).
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
 * How many sets patterns follow at most.  fail2ban makes two a jail
 * (`addr-set-JAIL`, `addr6-set-JAIL`): 128 jails; CrowdSec's bouncer one
 * per origin of its decisions and per subscribed list: tens.  Each
 * followed set is looked up and dumped at every look and every release
 * (a ruleset change, a removal, an expiry's read), so the bound is also
 * that work's: 256 sets, each a GETSET and a GETSETELEM round trip.
 */
#define FD_WATCH_PATTERN_SETS 256

/* What fd_watch counts, as of the last look at the watched sets. */
struct fd_watch_stats {
	uint64_t watched_sets_followed;	/* sets followed, named or under patterns */
	uint64_t watched_sets_beyond;	/* address sets under patterns beyond FD_WATCH_PATTERN_SETS */
};

/* fd_watch_stats - its counters into *st (zeros for NULL: a flowcutd that did not start). */
void fd_watch_stats(const struct fd_watch *w, struct fd_watch_stats *st);

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

struct fd_why;
/*
 * fd_watch_why - from now on each watched set and list file is a source of
 * `why` (fd_why.h; it outlives the watch): named by its line's text or its
 * path, told what it holds at each read (a set's elements moved there from
 * its whole read and its additions, a list's own contents pointed at),
 * before what is added is cut, so the cut finds each connection's source.
 * Call it before fd_watch_settings.
 */
void fd_watch_why(struct fd_watch *w, struct fd_why *why);

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
