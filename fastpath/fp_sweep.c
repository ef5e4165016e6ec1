/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_sweep: time and events, on the control thread - connections idle
 * past both timeouts leave (AGED_OUT), given-back ones are reported
 * (GIVEN_BACK, once: at once from the workers' rings by fp_given_back, or
 * by the sweep for what a full ring could not hold) and leave after the
 * terminal time, connections of an older firewall revision leave
 * (REMOVED).  The sweep also frees the slots whose grace period is over.
 * See fp.h for the contract.
 */
#include <rte_rcu_qsbr.h>
#include <rte_ring_elem.h>

#include "fp_priv.h"

static bool
conn_idle(const struct fp_conn *c, uint64_t now)
{
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t seen = ld64(&c->mf[d].last_seen);
		uint64_t tmo = (uint64_t)c->mf[d].timeout_s * FP_NS_PER_S;

		if (now < seen || now - seen <= tmo)
			return false;
	}
	return true;
}

static void
event_fill(const struct fp *fp, uint32_t slot, uint8_t type, uint8_t reason,
	   struct fp_event *e)
{
	const struct fp_conn *c = &fp->conns[slot];

	e->type = type;
	e->reason = reason;
	e->id = fp_conn_id_of(fp, slot);
	fp_conn_key(fp, c->key_pos[0], &e->key[0]);
	fp_conn_key(fp, c->key_pos[1], &e->key[1]);
	fp_conn_stats(c, e->stats);
}

unsigned int
fp_sweep(struct fp *fp, uint64_t now, uint32_t budget, struct fp_event *ev,
	 unsigned int max_ev)
{
	uint32_t rev = fp_fw_rev_get(fp);
	unsigned int nev = 0;

	/* fails only for bad arguments; frees what is ready, maybe nothing */
	rte_rcu_qsbr_dq_reclaim(fp->dq, UINT32_MAX, NULL, NULL, NULL);
	if (budget == 0 || budget > fp->max_conns)
		budget = fp->max_conns;
	for (uint32_t n = 0; n < budget; n++) {
		uint32_t slot = fp->sweep_cursor, lim = fp->max_conns - slot, to;
		struct fp_conn *c;
		uint8_t st, gb_reason;
		bool report = false, remove = false;
		uint8_t type = 0, reason = 0;

		/* the budget counts slots, the empty ones a word at a time (fp->used) */
		if (lim > budget - n)
			lim = budget - n;
		to = fp_used_next(fp->used, slot, slot + lim);
		if (to != slot) {
			n += to - slot - 1;	/* and the loop's one */
			fp->sweep_cursor = to == fp->max_conns ? 0 : to;
			continue;
		}
		c = &fp->conns[slot];
		st = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
		gb_reason = __atomic_load_n(&c->reason, __ATOMIC_ACQUIRE);

		if (st == FP_CONN_INVALID && gb_reason == FC_REASON_NONE) {
			/* its worker is writing the time and reason: next round */
		} else if (st == FP_CONN_VALID || st == FP_CONN_INVALID) {
			if (st == FP_CONN_INVALID && !c->reported)
				report = true;
			if (c->fw_rev != rev) {
				remove = true;
				type = FC_EV_REMOVED;
				reason = FC_REASON_FW_REV;
			} else if (st == FP_CONN_INVALID) {
				uint64_t t = ld64(&c->given_back_at);

				if (now >= t && now - t >= fp->terminal_ns) {
					remove = true;
					type = FC_EV_REMOVED;
					reason = FC_REASON_TERMINAL;
				}
			} else if (conn_idle(c, now)) {
				remove = true;
				type = FC_EV_AGED_OUT;
				reason = FC_REASON_IDLE;
			}
		}
		if (nev + report + remove > max_ev)
			break;		/* come back to this slot with room */
		if (report) {
			event_fill(fp, slot, FC_EV_GIVEN_BACK, gb_reason, &ev[nev++]);
			c->reported = 1;
		}
		if (remove) {
			event_fill(fp, slot, type, reason, &ev[nev++]);
			fp_conn_unhook(fp, slot);
			fp->nconns--;
		}
		fp->sweep_cursor = slot + 1 == fp->max_conns ? 0 : slot + 1;
	}
	return nev;
}

bool
fp_given_back_pending(const struct fp *fp)
{
	for (uint32_t w = 0; w < fp->max_workers; w++) {
		struct fp_worker *wk = __atomic_load_n(&fp->workers[w], __ATOMIC_ACQUIRE);

		if (wk != NULL && !rte_ring_empty(wk->given_back))
			return true;
	}
	return false;
}

unsigned int
fp_given_back(struct fp *fp, struct fp_event *ev, unsigned int max_ev)
{
	unsigned int nev = 0;

	for (uint32_t w = 0; w < fp->max_workers && nev < max_ev; w++) {
		struct fp_worker *wk = __atomic_load_n(&fp->workers[w], __ATOMIC_ACQUIRE);
		uint64_t ent[64];
		unsigned int n;

		if (wk == NULL)
			continue;
		/* one event at most per entry: take no more than there is room for */
		n = rte_ring_sc_dequeue_burst_elem(wk->given_back, ent, sizeof(ent[0]),
						   RTE_MIN(max_ev - nev, RTE_DIM(ent)), NULL);
		for (unsigned int i = 0; i < n; i++) {
			uint32_t slot = (uint32_t)ent[i];
			struct fp_conn *c = &fp->conns[slot];
			uint8_t reason;

			if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != FP_CONN_INVALID ||
			    c->gen != (uint32_t)(ent[i] >> 32) || c->reported)
				continue;	/* revived, removed or reported since */
			reason = __atomic_load_n(&c->reason, __ATOMIC_ACQUIRE);
			if (reason == FC_REASON_NONE)
				continue;	/* revived and given back again: its own entry follows */
			event_fill(fp, slot, FC_EV_GIVEN_BACK, reason, &ev[nev++]);
			c->reported = 1;
		}
	}
	return nev;
}
