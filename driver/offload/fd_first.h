/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_first: the time from a state qualifying to the first frame the fast
 * path forwards for it, from flowcutd's own clock - the binding's sampler
 * of offloads read back once (first_frame_us_p50/p99).
 *
 * The binding offers every offload whose FLOW_CREATE_FP answered 0 (its
 * conn id, and t0: when it qualified); a sample is kept while one of
 * FD_FIRST_MAX places is free, else the offer is let go (`skipped`).  A
 * sample is read FD_FIRST_TRIES times at most, FD_FIRST_AFTER_MS after
 * its offer, then twice as long each time while its connection has
 * forwarded nothing yet; nothing once offloads stop.  One that forwarded
 * adds first - t0 to the histogram (fd_hist: within 1/16 above); one gone
 * (-ENOENT) or still silent after its last read is `unseen`.
 *
 * The first frame's stamp is the coprocessor's; its clock and flowcutd's
 * are CLOCK_MONOTONIC, one clock on one machine, so no offset is learnt
 * and none is applied.  A stamp before t0 is counted `unseen`, not
 * measured.
 *
 * Pure: no I/O, no allocation; the caller (fd_offload) posts the reads and
 * hands the answers back.  Main thread; one owner.  Nothing to close.
 *
 * Design notes (the sampling, the clocks' error): driver/offload/README.md.
 */
#ifndef FLOWCUT_FD_FIRST_H
#define FLOWCUT_FD_FIRST_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>

#include "fd_hist.h"

#define FD_FIRST_MAX 256		/* samples waiting at most */
#define FD_FIRST_AFTER_MS 100		/* the first read, after the offer */
#define FD_FIRST_TRIES 5		/* reads of one sample: 100, 200, 400, 800, 1,600 ms on */

struct fd_first_sample {
	uint64_t id;			/* the fast path's conn id */
	uint64_t t0_ns;			/* qualified, the binding's clock */
	uint64_t due_ns;		/* the next read */
	uint8_t tries;			/* reads answered so far */
	bool used;
	bool posted;			/* a read in flight */
};

struct fd_first {
	struct fd_first_sample s[FD_FIRST_MAX];
	unsigned int n;			/* used */
	uint64_t next_due_ns;		/* the earliest due_ns of the unposted, UINT64_MAX none */
	struct fd_hist us;		/* qualify -> first frame, us */
	uint64_t skipped;		/* offers let go: no place free */
	uint64_t unseen;		/* samples that never showed a frame forwarded */
};

/* fd_first_init - no sample, nothing measured. */
void fd_first_init(struct fd_first *f);
/*
 * fd_first_offer - offload `id`, qualified at t0_ns, answered at now_ns:
 * kept as a sample (true) while a place is free, its first read due
 * FD_FIRST_AFTER_MS on; else counted skipped (false).
 */
bool fd_first_offer(struct fd_first *f, uint64_t id, uint64_t t0_ns, uint64_t now_ns);
/*
 * fd_first_due - a sample whose read is due at now_ns and not posted,
 * marked posted: the caller posts CONN_READ_BY_ID for its id and hands
 * the answer to fd_first_answer (or, the post refused, its rc).  NULL:
 * none due.  Cheap when none is (one compare).
 */
struct fd_first_sample *fd_first_due(struct fd_first *f, uint64_t now_ns);
/*
 * fd_first_answer - the read of `s` ended: rc 0 with the connection read
 * (`ci`): its first forwarded frame measured, or, none yet, read again
 * later (twice the last wait) or, after FD_FIRST_TRIES, unseen.  rc
 * -ENOENT (gone): unseen.  Another rc (no answer, or the post refused):
 * tried again as if none had forwarded.  `s` is free afterwards, or
 * waits for its next read.
 */
void fd_first_answer(struct fd_first *f, struct fd_first_sample *s, int rc,
		     const struct fc_conn_info *ci, uint64_t now_ns);

#endif
