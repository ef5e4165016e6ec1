/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_frames: see fd_frames.h. */
#include "fd_frames.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flowcut/fc_cmd.h>

#include "fd_offload_cut.h"
#include "fd_why.h"

/* One read in flight: whose answer it is. */
struct rd {
	struct fd_frames *f;
	uint64_t id;
	uint32_t slot;
};

struct fd_frames {
	struct fd_offload *off;
	struct fd_cmds cmds;
	struct fd_why *why;
	uint32_t at;			/* this round's place in fd_why's records (fd_why_next) */
	bool in_round;			/* a round is going (else: the next waits its time) */
	unsigned int inflight;
	uint64_t last_ms, read, looked;
	uint64_t round_ms;		/* when the last round's walk was */
	bool started, rounded;
	struct rd rd[FD_FRAMES_PER_TURN];
};

struct fd_frames *
fd_frames_open(struct fd_offload *off, const struct fd_cmds *cmds, struct fd_why *why)
{
	struct fd_frames *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->off = off;
	f->cmds = *cmds;
	f->why = why;
	return f;
}

void
fd_frames_close(struct fd_frames *f)
{
	if (f == NULL)
		return;
	free(f);
}

static void
read_done(void *dctx, int rc, const void *ans, uint16_t len)
{
	struct rd *r = dctx;
	struct fc_conn_info ci;

	r->f->inflight--;
	if (rc != 0 || len < sizeof(ci))
		return;		/* gone meanwhile (aged out, released): nothing to count */
	memcpy(&ci, ans, sizeof(ci));
	if (ci.id != r->id)
		return;
	if (fd_why_frames(r->f->why, r->slot, ci.mf[0].stats.packets + ci.mf[1].stats.packets) == 0)
		r->f->read++;
}

int
fd_frames_turn(struct fd_frames *f, uint64_t now_ms)
{
	int posted = 0;

	if (f->inflight != 0 || (f->started && now_ms - f->last_ms < FD_FRAMES_PERIOD_MS))
		return 0;
	f->started = true;
	f->last_ms = now_ms;
	if (!f->in_round) {	/* a new round: every FD_FRAMES_ROUND_MS at most (fd_frames.h) */
		if (f->rounded && now_ms - f->round_ms < FD_FRAMES_ROUND_MS)
			return 0;
		f->rounded = f->in_round = true;
		f->round_ms = now_ms;
		f->at = 0;
	}
	while (posted < FD_FRAMES_PER_TURN) {
		const struct fd_why_rec *w = fd_why_next(f->why, &f->at);
		struct fd_offload_conn oc;
		struct fc_cmd_conn_id id;
		struct rd *r = &f->rd[posted];
		int rc;

		if (w == NULL) {
			f->in_round = false;
			break;
		}
		f->looked++;
		/* stale: released, aged out, or another's cut in the slot since */
		if (fd_offload_find(f->off, FD_OFFLOAD_BY_CUT_SLOT, w->slot, NULL, &oc, NULL) != 0 || oc.cut_by != w->trigger)
			continue;
		id = (struct fc_cmd_conn_id){ .id = oc.fp_id };
		*r = (struct rd){ .f = f, .id = oc.fp_id, .slot = oc.slot };
		f->inflight++;
		rc = fd_cmds_post(&f->cmds, FC_CMD_CONN_READ_BY_ID, &id, sizeof(id), read_done, r);
		if (rc != 0) {
			f->inflight--;
			return rc;
		}
		posted++;
	}
	return posted;
}

uint64_t
fd_frames_read(const struct fd_frames *f)
{
	return f->read;
}

uint64_t
fd_frames_looked(const struct fd_frames *f)
{
	return f->looked;
}
