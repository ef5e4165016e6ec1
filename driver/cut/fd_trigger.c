/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_trigger: see fd_trigger.h. */
#include "fd_trigger.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "fc_list.h"

void
fd_trigger_hand_all(struct fd_nft *nft, struct fd_cut *cut)
{
	struct fc_list l = { 0 };
	int rc = fd_nft_cut_read(nft, &l);

	if (rc != 0)
		fprintf(stderr, "flowcutd: cut sets read in part (%s): cutting what was read\n",
			strerror(-rc));
	if (l.n > 0)
		(void)fd_cut_ranges(cut, &l, FD_CUT_HAND);	/* counted and said */
	fc_list_free(&l);
}

void
fd_trigger_hand(struct fd_nft *nft, struct fd_cut *cut, int nft_rc)
{
	struct fc_list added = { 0 };
	int rc;

	if (nft_rc >= 0 && !(nft_rc & FD_NFT_CUT))
		return;
	rc = fd_nft_cut_take(nft, &added);	/* taken either way: a whole read covers it */
	if (nft_rc < 0 || rc != 0)
		fd_trigger_hand_all(nft, cut);
	else if (added.n > 0)
		(void)fd_cut_ranges(cut, &added, FD_CUT_HAND);	/* counted and said */
	fc_list_free(&added);
}

void
fd_trigger_conn(struct fd_cut *cut, uint64_t id, char *ans, size_t cap)
{
	struct fd_cut_stats before, after;
	int rc;

	fd_cut_stats(cut, &before);
	rc = fd_cut_conn(cut, id, FD_CUT_CONN);
	fd_cut_stats(cut, &after);
	if (rc == 0)
		snprintf(ans, cap, "ok connection %" PRIu64 " cut %s\n", id,
			 after.in_hardware[FD_CUT_CONN] > before.in_hardware[FD_CUT_CONN]
				 ? "in hardware" : "on the host (taken out of the fast path)");
	else if (rc == -ENOENT)
		snprintf(ans, cap, "error connection %" PRIu64 ": not an offloaded connection of "
			 "this flowcutd\n", id);
	else if (rc == -EALREADY)
		snprintf(ans, cap, "error connection %" PRIu64 ": cut already\n", id);
	else if (rc == -EPERM)
		snprintf(ans, cap, "error connection %" PRIu64 ": an end is never cut "
			 "(never_cut)\n", id);
	else
		snprintf(ans, cap, "error connection %" PRIu64 ": %s\n", id, strerror(-rc));
}
