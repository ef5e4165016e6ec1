/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_lease: see fd_lease.h. */
#include "fd_lease.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void
fd_lease_init(struct fd_lease *l, uint32_t ms)
{
	memset(l, 0, sizeof(*l));
	l->ms = ms;
}

static int
lease_send(struct fd_lease *l, const struct fd_cmds *c, uint32_t ms, uint32_t ack)
{
	struct fc_cmd_lease cmd = { .ms = ms, .ack = ack };
	struct fc_ans_lease ans;
	int rc = fd_cmds_call(c, FC_CMD_HOST_LEASE, &cmd, sizeof(cmd), &ans, sizeof(ans));

	if (rc == 0)
		l->last = ans;
	return rc;
}

int
fd_lease_renew(struct fd_lease *l, const struct fd_cmds *c, uint64_t now_ms, bool force)
{
	int rc;

	if (!force && now_ms < l->next_ms)
		return 0;
	rc = lease_send(l, c, l->ms, l->acked);
	if (rc != 0) {
		/* said once a streak; tried again soon, not every turn */
		if (!l->failing)
			fprintf(stderr, "flowcutd: HOST_LEASE %u ms: %s; trying again\n", l->ms,
				strerror(-rc));
		l->failing = true;
		l->next_ms = now_ms + FD_LEASE_RETRY_MS;
		return rc;
	}
	if (l->failing)
		fprintf(stderr, "flowcutd: HOST_LEASE %u ms: renewed again\n", l->ms);
	l->failing = false;
	l->next_ms = now_ms + l->ms / 6;
	if (l->last.state != FC_LEASE_LAPSED)
		return 0;
	l->lapses_found++;
	return 1;
}

int
fd_lease_reopen(struct fd_lease *l, const struct fd_cmds *c, uint64_t now_ms)
{
	int rc;

	/*
	 * The lapses the last answer told of, now judged again; a renewal
	 * acknowledges only these, so a lapse after them (one during the
	 * re-judging) is never reopened unjudged.
	 */
	l->acked = l->last.lapses;
	rc = lease_send(l, c, l->ms, l->acked);

	if (rc != 0) {
		fprintf(stderr, "flowcutd: HOST_LEASE %u ms, lapse %u acknowledged: %s\n", l->ms,
			l->last.lapses, strerror(-rc));
		return rc;
	}
	l->next_ms = now_ms + l->ms / 6;
	return l->last.state == FC_LEASE_HELD ? 0 : -EAGAIN;
}

int
fd_lease_release(struct fd_lease *l, const struct fd_cmds *c)
{
	int rc = lease_send(l, c, 0, l->acked);

	if (rc != 0)
		fprintf(stderr, "flowcutd: HOST_LEASE release: %s; the coprocessor fails closed "
			"when the lease lapses\n", strerror(-rc));
	return rc;
}

const char *
fd_lease_state_name(unsigned int state)
{
	switch (state) {
	case FC_LEASE_NONE: return "none";
	case FC_LEASE_HELD: return "held";
	case FC_LEASE_LAPSED: return "lapsed";
	default: return "?";
	}
}
