/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npu_ev: the coprocessor's events onto the link - what the workers gave
 * back, and the sweep's aging and removals, posted on the event ring.
 *
 * While the host holds its lease (FC_LEASE_HELD) the sweep is given no
 * more events to write than the ring has room for (lk_event_room): it
 * stops at the first connection it could not report and comes back to it
 * when the host has read, so no AGED_OUT or REMOVED is lost however many
 * leave at once (a revision bump at a million connections makes a million
 * REMOVED against 4,096 slots).  The host reads every turn while it holds
 * the lease; if it stops, the lease lapses within its length.  Without a
 * lease (none since boot, lapsed, released) nobody may be reading: aging
 * must not stop then, or connections nobody judges would stay in the fast
 * path, so the sweep runs as far as its budget goes and what the ring
 * cannot take is lost and counted (and the host hears of it,
 * lk_event_take's -EOVERFLOW).
 *
 * Given-back reports are posted at once and not held back by the ring's
 * room: a worker's give-back ring that the control thread did not empty
 * would keep it awake (fp_given_back_pending); one lost is found by the
 * host's reconciliation as any lost event.
 *
 * Control thread only (it calls fp's control functions and is the event
 * ring's one producer).  No state of its own.
 */
#ifndef FLOWCUT_NPU_EV_H
#define FLOWCUT_NPU_EV_H

#include <stdint.h>

#include "fp.h"
#include "lk.h"

/*
 * npu_ev_post - the given-back reports, then, when `budget` is not 0, a
 * sweep of up to `budget` slots at a time at `now` (repeated while the
 * events fill a batch), onto `lk`'s event ring, rung once a batch.
 * Returns the events lost for want of room (0 while the lease is held).
 */
uint64_t npu_ev_post(struct fp *fp, struct lk *lk, uint64_t now, uint32_t budget);

#endif
