/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_tcp: TCP tracking for one connection's two directions - step 6 of
 * coprocessor-model.md after the FIN/SYN/RST test: conntrack's window
 * check (net/netfilter/nf_conntrack_proto_tcp.c, tcp_in_window) for a
 * connection picked up mid-stream, and the repeated-ACK count that gives
 * a stalled or cut sender back to the host.
 *
 * Plain structs in, a yes or no out: no tables, no DPDK, no I/O.  Used by
 * the packet path (fp_burst.c) and tested alone (tests/unit/test_fp_tcp.c).
 *
 * Threads.  A direction's struct fp_tcp_dir is written only by the worker
 * that sees that direction; the other direction's worker reads it (the
 * `rcv` argument) with relaxed loads, after `seen` with acquire.  The
 * control thread writes it only while no worker may (at create, and at
 * revive while the connection is given back: fp.h).
 */
#ifndef FLOWCUT_FP_TCP_H
#define FLOWCUT_FP_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "fp_parse.h"

#define FP_TCP_MAX_ACKWIN 66000	/* conntrack's MAXACKWINCONST */
#define FP_TCP_MAX_RETRANS 10	/* identical ACKs in a row that give back (fp.h: FP_MAX_RETRANS) */

/* One direction's tracking. */
struct fp_tcp_dir {
	uint32_t end;		/* highest seq + len sent */
	uint32_t maxwin;	/* largest window advertised, scaled */
	uint32_t rmaxend;	/* highest ack + window advertised: the peer's limit */
	uint32_t dup_ack;	/* the last ACK, to count repeats */
	uint32_t dup_end;
	uint16_t dup_win;
	uint16_t dup_sack;	/* its SACK blocks (digest) */
	uint8_t dup_cnt;
	uint8_t seen;		/* 1 once a segment set the fields above */
	uint8_t wscale;		/* this sender's window scale (control, at create) */
	uint8_t pad;
};
_Static_assert(sizeof(struct fp_tcp_dir) == 28, "fp_tcp_dir fits a microflow's line (fp_priv.h)");

/* Sequence-space comparisons (RFC 1982), as the kernel's before()/after(). */
static inline bool
fp_seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool
fp_seq_after(uint32_t a, uint32_t b)
{
	return fp_seq_before(b, a);
}

/*
 * fp_tcp_reset - forget what was learnt, keep the window scale (the
 * host's, from the handshake): the next segment starts tracking again.
 */
static inline void
fp_tcp_reset(struct fp_tcp_dir *t)
{
	uint8_t wscale = t->wscale;

	*t = (struct fp_tcp_dir){ .wscale = wscale };
}

/*
 * fp_tcp_track - one segment of direction `snd`; `rcv` is the other
 * direction (read only: another worker may own it).  The first segment of
 * a direction only learns.  After that, with `seq_chk` (fw_cfg
 * TCP_SEQ_CHK) and once the other direction has been seen, a segment
 * beyond the receiver's window, wholly before what it could still
 * accept, or acknowledging data the receiver never sent or long
 * acknowledged, is out of the window: returns false and learns nothing.
 * Otherwise updates `snd` and returns true.
 */
static inline bool
fp_tcp_track(struct fp_tcp_dir *snd, const struct fp_tcp_dir *rcv,
	     const struct fp_parsed *pp, bool seq_chk)
{
	uint32_t seq = pp->tcp_seq, ack = pp->tcp_ack;
	uint32_t end = seq + pp->tcp_payload;
	uint32_t win = (uint32_t)pp->tcp_win << snd->wscale;
	bool has_ack = pp->tcp_flags & FP_TCP_ACK;

	if (!snd->seen) {
		__atomic_store_n(&snd->end, end, __ATOMIC_RELAXED);
		__atomic_store_n(&snd->maxwin, win ? win : 1, __ATOMIC_RELAXED);
		__atomic_store_n(&snd->rmaxend, has_ack ? ack + win : 0, __ATOMIC_RELAXED);
		/* the other direction's worker reads the fields only after this */
		__atomic_store_n(&snd->seen, 1, __ATOMIC_RELEASE);
		return true;
	}
	if (seq_chk && __atomic_load_n(&rcv->seen, __ATOMIC_ACQUIRE)) {
		uint32_t rcv_end = __atomic_load_n(&rcv->end, __ATOMIC_RELAXED);
		uint32_t rcv_maxwin = __atomic_load_n(&rcv->maxwin, __ATOMIC_RELAXED);
		uint32_t rcv_rmaxend = __atomic_load_n(&rcv->rmaxend, __ATOMIC_RELAXED);
		uint32_t ackwin = snd->maxwin > FP_TCP_MAX_ACKWIN ? snd->maxwin
								 : FP_TCP_MAX_ACKWIN;

		if (fp_seq_after(seq, rcv_rmaxend) ||			/* beyond the window */
		    fp_seq_before(end, snd->end - rcv_maxwin) ||	/* before it */
		    (has_ack && (fp_seq_after(ack, rcv_end) ||		/* acks the future */
				 fp_seq_before(ack, rcv_end - ackwin))))	/* acks the past */
			return false;
	}
	if (fp_seq_after(end, snd->end))
		__atomic_store_n(&snd->end, end, __ATOMIC_RELAXED);
	if (win > snd->maxwin)
		__atomic_store_n(&snd->maxwin, win, __ATOMIC_RELAXED);
	if (has_ack && (snd->rmaxend == 0 || fp_seq_after(ack + win, snd->rmaxend)))
		__atomic_store_n(&snd->rmaxend, ack + win, __ATOMIC_RELAXED);
	return true;
}

/*
 * fp_tcp_dup_ack - counts a repeat of the last ACK; true at the
 * FP_TCP_MAX_RETRANS-th in a row (and the count starts again).  "The same
 * ACK" is the same ack, end (seq + length), window and SACK blocks: a
 * receiver in loss recovery repeats its ACK while its SACK blocks grow
 * (data still arrives, the connection works), which is not a stalled
 * sender; a stalled or cut one repeats itself exactly.
 */
static inline bool
fp_tcp_dup_ack(struct fp_tcp_dir *t, const struct fp_parsed *pp)
{
	uint32_t end = pp->tcp_seq + pp->tcp_payload;
	uint16_t sack = (uint16_t)(pp->tcp_sack ^ pp->tcp_sack >> 16);

	if (t->dup_cnt && t->dup_ack == pp->tcp_ack && t->dup_end == end &&
	    t->dup_win == pp->tcp_win && t->dup_sack == sack) {
		if (++t->dup_cnt >= FP_TCP_MAX_RETRANS) {
			t->dup_cnt = 0;
			return true;
		}
		return false;
	}
	t->dup_ack = pp->tcp_ack;
	t->dup_end = end;
	t->dup_win = pp->tcp_win;
	t->dup_sack = sack;
	t->dup_cnt = 1;
	return false;
}

#endif /* FLOWCUT_FP_TCP_H */
