/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_report: what flowcutd answers and publishes, read from its rooms and
 * its own state: `status`, `settings`, `conns`, `cuts`, `counters` on the
 * control socket (fd_ctl), and the stats file written once a second
 * (--stats: FLOWCUTD_STATS, each room's counters from its own list).  The
 * answers' documents are fd_page's (conns, cuts), fd_explain's (why,
 * triggers) and fd_counters' (counters), in this room too.
 *
 * Main thread only (the rooms it reads are the main thread's).  It owns
 * nothing: struct fd_report lends it what flowcutd opened and keeps,
 * filled once every room is open, valid until flowcutd closes them.  An
 * answer is one line into ans (at most cap bytes): "ok JSON" or
 * "error WHY"; a document that cannot be built (no memory, too long) is
 * said in its error.  fd_report_stats_write says its own failures on
 * stderr and keeps the last whole file.
 */
#ifndef FLOWCUT_FD_REPORT_H
#define FLOWCUT_FD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_settings.h"
#include "fd_ctl.h"
#include "fd_cut.h"
#include "fd_explain.h"
#include "fd_ips.h"
#include "fd_lease.h"
#include "fd_offload.h"
#include "fd_page.h"
#include "fd_relay.h"
#include "fd_rtcache.h"
#include "fd_rulecheck.h"
#include "fd_stats.h"
#include "fd_watch.h"
#include "fd_why.h"
#include "lk.h"

/*
 * flowcutd's main loop's own counters, each published under its name
 * (fd_stats.h).  A
 * turn's work (flowcutd_turn, less its wait in epoll_wait), over the last
 * whole second (the window between two stats writes): the longest, and the
 * 99th percentile of fd_hist (a log-linear bucket's upper edge, within
 * 1/16 above, capped at the longest).  Only turns that ran whole: one that
 * ends early (the coprocessor booting, the lease not taken) sleeps, and is
 * not counted.
 */
#define FD_MAIN_STATS(X) \
	X(main, rtnl_bad)		/* rtnetlink datagrams that did not parse */ \
	X(main, events_lost)		/* times the coprocessor said it lost events */ \
	X(main, turn_max_us) \
	X(main, turn_p99_us) \
	X(main, ctl_auth_refused)	/* control changes refused for their secret (fd_ctl) */ \
	X(main, ctl_let_go)		/* control clients let go unanswered: silent, or too many (fd_ctl) */ \
	X(main, never_cut_wide)		/* never-cut ranges in force wider than a /16 or /48 (forced) */

struct fd_main_stats {
	FD_MAIN_STATS(FD_STAT_FIELD)
};

/* What the answers read: flowcutd's rooms and state, lent. */
struct fd_report {
	struct fd_cut *cut;
	struct fd_offload *off;
	struct lk *lk;
	struct fd_relay *relay;		/* the ports' frames, the relay's counters */
	struct fd_watch *wat;
	struct fd_ips *ips;
	struct fd_rulecheck *rck;
	struct fd_rtcache *rtc;
	struct fd_why *whys;
	struct fd_explain_parts why;	/* why ADDR, why-conn ID, triggers (fd_explain.h) */
	struct fd_page_parts page;	/* conns, cuts (fd_page.h) */
	unsigned int ports;
	const char *settings;		/* the settings file */
	/* flowcutd's own, as it changes them */
	const bool *programmed;
	const struct fc_settings *cur;	/* the settings in force */
	const char *settings_error;	/* why the file was last refused, or "" */
	const uint64_t *never_wide;	/* never-cut ranges in force wider than the bounds */
	/* the configuration word as the coprocessor last took it; not known: left out */
	const bool *fw_cfg_known;
	const uint32_t *fw_cfg_last;
	const struct fd_main_stats *mst;
	const struct fd_lease *lease;
};

/* fd_report_answer - a read of the control socket answered (FD_CTL_STATUS, _SETTINGS,
 * _CONNS, _CUTS, _COUNTERS, _WHY, _WHY_CONN, _TRIGGERS); false: not a read of this room's. */
bool fd_report_answer(const struct fd_report *r, const struct fd_ctl_req *req, char *ans,
		      size_t cap);

/* fd_report_stats_write - the stats document written to `path`, atomically (renamed). */
void fd_report_stats_write(const struct fd_report *r, const char *path);

#endif
