/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_counters: the control thread's view of the counters.  Each worker
 * counts in its own struct fp_worker, publishing a burst's counts at once
 * under its seqcount (fp_burst.c); a read takes each worker's whole and
 * adds them up, less the base a clear left.  See fp.h.
 */
#include "fp_priv.h"

void
fp_counters_read(const struct fp *fp, uint64_t out[FC_CNT_MAX])
{
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		out[c] = 0;
	for (unsigned int i = 0; i < fp->max_workers; i++) {
		const struct fp_worker *w = __atomic_load_n(&fp->workers[i], __ATOMIC_ACQUIRE);
		uint64_t snap[FC_CNT_MAX];
		uint32_t sn;

		if (w == NULL)
			continue;
		do {
			sn = rte_seqcount_read_begin(&w->sc);
			for (unsigned int c = 0; c < FC_CNT_MAX; c++)
				snap[c] = ld64(&w->cnt[c]);
		} while (rte_seqcount_read_retry(&w->sc, sn));
		for (unsigned int c = 0; c < FC_CNT_MAX; c++)
			out[c] += snap[c];
	}
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		out[c] -= ld64(&fp->cnt_base[c]);
}

void
fp_counters_clear(struct fp *fp)
{
	uint64_t now[FC_CNT_MAX];

	/* read the totals (read subtracts the old base, so add it back) */
	fp_counters_read(fp, now);
	for (unsigned int c = 0; c < FC_CNT_MAX; c++)
		st64(&fp->cnt_base[c], fp->cnt_base[c] + now[c]);
}
