/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_lease: flowcutd's lease on the coprocessor (HOST_LEASE; what a lapse
 * does is in fastpath/fp.h).  While flowcutd's main loop turns, it renews
 * the lease every ms/6; when the loop stops turning (flowcutd stopped,
 * killed, stuck), the lease lapses after `ms` and the coprocessor fails
 * closed on its own: cut connections keep dropping, every other frame goes
 * to the host's rules.  That `ms` is the bound on the window in which the
 * fast path forwards what nobody is checking.
 *
 * A lapse is answered by the caller: fd_lease_renew() says the coprocessor
 * is failing closed; the caller has every connection judged again (a new
 * firewall revision: fd_offload_ruleset_changed), then fd_lease_reopen()
 * acknowledges the lapse and the fast path forwards again.  So nothing
 * forwards again on a judgement made before the lapse.
 *
 * Main thread only; no resources (fd_lease_release at a clean stop).
 */
#ifndef FLOWCUT_FD_LEASE_H
#define FLOWCUT_FD_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include <flowcut/fc_cmd.h>

#include "fd_cmds.h"

#define FD_LEASE_MS 3000u	/* the default: see docs/settings.md */
#define FD_LEASE_MIN_MS 300u
#define FD_LEASE_MAX_MS 60000u
#define FD_LEASE_RETRY_MS 100u	/* a renewal that failed is tried again this soon */

struct fd_lease {
	uint32_t ms;			/* the lease's length */
	uint64_t next_ms;		/* the next renewal is due (monotonic ms) */
	struct fc_ans_lease last;	/* the coprocessor's last answer */
	uint64_t lapses_found;		/* lapses this flowcutd answered */
	uint32_t acked;			/* the lapses acknowledged: only after a re-judging */
	bool failing;			/* the last renewal failed (said once) */
};

/* fd_lease_init - a lease of `ms` (FD_LEASE_MIN_MS..FD_LEASE_MAX_MS), not yet taken. */
void fd_lease_init(struct fd_lease *l, uint32_t ms);

/*
 * fd_lease_renew - renew when due (or now, with `force`), at `now_ms`.
 * 0: held (or not due); 1: the coprocessor is failing closed (its lease
 * lapsed, or a predecessor released it): judge every connection again,
 * then fd_lease_reopen(); a negative errno: the command failed (no answer,
 * or the coprocessor refused: -EPERM off client slot 0), said once a
 * streak and tried again FD_LEASE_RETRY_MS later.
 */
int fd_lease_renew(struct fd_lease *l, const struct fd_cmds *c, uint64_t now_ms, bool force);

/*
 * fd_lease_reopen - after a lapse, once everything is judged again:
 * acknowledge it and take the lease.  0, or a negative errno (-EAGAIN: the
 * coprocessor still failing closed, e.g. another lapse in between).
 */
int fd_lease_reopen(struct fd_lease *l, const struct fd_cmds *c, uint64_t now_ms);

/* fd_lease_release - a clean stop: the coprocessor fails closed at once. */
int fd_lease_release(struct fd_lease *l, const struct fd_cmds *c);

/* fd_lease_state_name - "none", "held", "lapsed" or "?" (struct fc_ans_lease's state). */
const char *fd_lease_state_name(unsigned int state);

#endif /* FLOWCUT_FD_LEASE_H */
