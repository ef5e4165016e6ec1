/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_frames: the frames the coprocessor dropped for each cut connection,
 * read in the background and handed to fd_why (fd_why_frames): what
 * `flowcutctl why` and `triggers` say, and flowcutd.json's `triggers`.
 *
 * A bounded job: fd_frames_turn, asked each turn of the loop, acts when
 * FD_FRAMES_PERIOD_MS passed since its last read and nothing of that read
 * is still in flight.  It posts CONN_READ_BY_ID for at most
 * FD_FRAMES_PER_TURN cut connections (answered in the loop's poll, no
 * wait), going round fd_why's records; a round starts FD_FRAMES_ROUND_MS
 * after the last one started at the soonest.  So a count is at most
 * max(5, ceil(cut / 256)) + 1 seconds old.  The count is both
 * microflows' packets; a connection made again under a new id (a ruleset
 * change) counts from 0 again.
 *
 * Main thread only (the binding's, the cut's).  The binding and `why`
 * given to fd_frames_open are the caller's.  fd_frames_close(NULL) does
 * nothing; a read in flight at close must have finished (the command
 * client destroyed, or flushed, first: its done() touches the reader).
 *
 * Design notes (the cost, why BY_ID): driver/cut/README.md.
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
