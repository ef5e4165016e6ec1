/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_frames: the frames the coprocessor dropped for each cut connection,
 * read in the background and handed to fd_why (fd_why_frames): what
 * `flowcutctl why` and `triggers` say, and flowcutd.json's `triggers`.
 *
 * A bounded job, once a second at most (fd_frames_turn asked each turn of
 * the loop, it acts when FD_FRAMES_PERIOD_MS passed since its last read
 * and nothing of that read is still in flight): it posts CONN_READ_BY_ID
 * for at most FD_FRAMES_PER_TURN cut connections (answered in the loop's
 * poll, no wait), going round the cut connections by fd_why's records
 * (fd_why_next: it holds one a slot that was cut, so a round is work per
 * cut record - stale ones, released or aged out, included, each looked at
 * in its slot alone, fd_offload_find_cut_slot - never per offloaded
 * connection), and a round starts FD_FRAMES_ROUND_MS (5 s) after the
 * last one started at the soonest.  The round once walked the binding's
 * whole table, and was then held to once a minute (test_scale: flowcutd
 * at 1.20 % of a core idle with 60,000 offloaded and none cut, 0.50 %
 * before the reader); over the cut records alone a round of none is no
 * work, and a minute left a fresh cut's count at 0 for its first minute
 * (the page and `why` during a cut flood: tests/lab/test_web.sh).  A
 * record the table's growth moves mid-round may be read twice or wait
 * for the next round.  So a connection's count is at most max(5,
 * ceil(cut / 256)) + 1 seconds old: 6 s up to 1,280 cut connections, 391
 * s at 100,000.  The cost, bounded: 256 commands a second at most (24 B
 * each way plus a 200 B answer), a walk of the cut records (stale ones
 * too) every 5 s at most, 256 x 24 B in flight.  Why BY_ID and not CONN_READ_RANGE: RANGE walks the
 * coprocessor's whole table, 5 connections an answer, cut or not
 * (1,000,000 offloaded, 100 cut: 200,000 commands for 100 counts); BY_ID
 * reads only the cut ones, one an answer, and the bound is on commands.
 *
 * The count is both microflows' packets (the coprocessor counts a frame
 * of a cut connection before it drops it: fp_burst.c step 4).  A
 * connection made again under a new id (a ruleset change) counts from 0
 * again: fd_why reads it as none dropped since, until it passes the base.
 *
 * Main thread only (the binding's, the cut's).  fd_frames_close(NULL) does
 * nothing; a read in flight at close must have finished (the command
 * client destroyed, or flushed, first: its done() touches the reader).
 */
#ifndef FLOWCUT_FD_FRAMES_H
#define FLOWCUT_FD_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "fd_cmds.h"

#define FD_FRAMES_PER_TURN 256
#define FD_FRAMES_PERIOD_MS 1000
#define FD_FRAMES_ROUND_MS 5000	/* a round's walk of the cut records, at most this often */

struct fd_offload;
struct fd_why;
struct fd_frames;

/*
 * fd_frames_open - a reader of the binding's cut connections into `why`
 * (each the caller's; cmds copied).  NULL, errno.
 */
struct fd_frames *fd_frames_open(struct fd_offload *off, const struct fd_cmds *cmds,
				 struct fd_why *why);
void fd_frames_close(struct fd_frames *f);

/*
 * fd_frames_turn - at `now_ms` (a monotonic clock): a read posted if one
 * is due.  The reads posted (0: none due, or no cut connection), or the
 * post's -errno (what was posted before it stays in flight), -ENOMEM.
 */
int fd_frames_turn(struct fd_frames *f, uint64_t now_ms);

/* fd_frames_read - how many counts were read and handed to fd_why so far. */
uint64_t fd_frames_read(const struct fd_frames *f);
/* fd_frames_looked - how many of fd_why's records the rounds looked at so far. */
uint64_t fd_frames_looked(const struct fd_frames *f);

#endif
