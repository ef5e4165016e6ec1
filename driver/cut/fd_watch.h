/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_watch: what triggers a cut from outside flowcutd - the watched
 * nftables sets (trigger "set") and the watched list files (trigger
 * "list") of the settings - and the release of cuts whose cause is gone.
 *
 * Watched sets (`watched_set = FAMILY TABLE SET`, or `FAMILY TABLE *`, or
 * a shell pattern on the set's name) are looked at and followed: what
 * another process adds is cut, and each is read whole and cut at every
 * coprocessor boot, ruleset change and lost event.  FD_WATCH_PATTERN_SETS
 * sets under patterns at most; the rest are said and counted.  Watched
 * lists (`watched_list = PATH`) are read, their union put into flowcutd's
 * list sets (fd_nft) and their folders watched (fd_watch_fd); a change is
 * applied as a difference, FD_WATCH_CHUNK ranges a transaction
 * (fd_watch_work), and what was added is cut.  No cut runs before
 * fd_watch_boot.
 *
 * Released: when something that cut may be gone (an element removed or
 * run out, a list's line removed, a ruleset change, lost events), every
 * cut in force is read whole and each connection cut by an address none
 * of them holds any more is released (fd_cut_release).  One cut by a
 * fingerprint or by connection stays cut.  A set that cannot be read
 * releases nothing.
 * Expiries: the kernel notifies none.  Each watched set keeps one due
 * time (its soonest element's); once one is due, everything in force is
 * read again, at most every 100 ms.
 *
 * Main thread only (the cut's).  The nft and the cut given to
 * fd_watch_open outlive it; fd_watch_close(NULL) does nothing.
 *
 * Design notes: driver/cut/README.md.
 */
#ifndef FLOWCUT_FD_WATCH_H
#define FLOWCUT_FD_WATCH_H

#include "fc_settings.h"
#include "fd_cut.h"
#include "fd_nft.h"
#include "fd_setio.h"
#include "fd_stats.h"

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
/* The watch's counters, each published under its name (fd_stats.h) */
#define FD_WATCH_STATS(X) \
	X(watch, watched_sets_followed)	/* sets followed, named or under patterns */ \
	X(watch, watched_sets_beyond)	/* address sets under patterns beyond FD_WATCH_PATTERN_SETS */

struct fd_watch_stats {
	FD_WATCH_STATS(FD_STAT_FIELD)
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
