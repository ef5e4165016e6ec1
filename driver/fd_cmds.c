/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_cmds: see fd_cmds.h. */
#include "fd_cmds.h"

#include "lk.h"

#define FD_CMDS_CALL_MS 2000

static int
lk_cmds_call(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t cap)
{
	return lk_call(ctx, op, payload, len, ans, cap, NULL, FD_CMDS_CALL_MS);
}

struct fd_cmds
fd_cmds_lk(struct lk *lk)
{
	return (struct fd_cmds){ .call = lk_cmds_call, .ctx = lk };
}
