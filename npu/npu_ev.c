/* SPDX-License-Identifier: BSD-3-Clause */
/* npu_ev: see npu_ev.h. */
#include "npu_ev.h"

#include <flowcut/fc_cmd.h>

#include "npu_cmd.h"

#define NPU_EV_BATCH 64

/* Posts n events; returns how many the ring had no room for. */
static uint64_t
post(struct lk *lk, const struct fp_event *ev, unsigned int n)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct lk_event le;

		npu_cmd_event(&ev[i], &le);
		if (lk_event_put(lk, &le) != 0)
			lost++;
	}
	if (n)
		lk_event_kick(lk);
	return lost;
}

uint64_t
npu_ev_post(struct fp *fp, struct lk *lk, uint64_t now, uint32_t budget)
{
	struct fp_event ev[NPU_EV_BATCH];
	struct fp_lease l;
	uint64_t lost = 0;
	unsigned int n, max;

	do {
		n = fp_given_back(fp, ev, NPU_EV_BATCH);
		lost += post(lk, ev, n);
	} while (n == NPU_EV_BATCH);
	if (budget == 0)
		return lost;
	fp_lease_get(fp, now, &l);
	do {
		max = NPU_EV_BATCH;
		if (l.state == FC_LEASE_HELD && lk_event_room(lk) < max)
			max = lk_event_room(lk);	/* wait for room: lose nothing */
		n = fp_sweep(fp, now, budget, ev, max);
		lost += post(lk, ev, n);
	} while (max > 0 && n == max);
	return lost;
}
