/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_tcp: TCP tracking for one connection's two directions - step 6 of
 * coprocessor-model.md: whether a FIN, SYN or RST is inside the tracked
 * window and so may give the connection back, conntrack's window check
 * (net/netfilter/nf_conntrack_proto_tcp.c, tcp_in_window) for a
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
	/*
	 * Not TCP's: fp_burst's mark, 1 once this direction's worker stamped
	 * (or found stamped) fp_conn.first_fwd[dir] - the microflow line's one
	 * free byte, so the stamp costs a frame one branch on a line it holds.
	 * fp_tcp_reset clears it with the rest: after a revive the next
	 * forwarded frame finds the stamp kept and sets it again.
	 */
	uint8_t fwd;
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
 * fp_tcp_in_window - conntrack's four checks (tcp_in_window I to IV) of
 * a segment of direction `snd` against what both directions have shown;
 * both must have been seen (the caller checks `rcv->seen` with acquire).
 * The segment is out of the window when it starts beyond the receiver's
 * window (after its ack + window), ends wholly before what the receiver
 * could still accept (snd's end less the receiver's largest window), or,
 * with ACK, acknowledges data the receiver never sent or acknowledged
 * longer ago than max(snd's largest window, MAXACKWINCONST).  An RST with
 * ACK and ack 0 is a broken stack's: its ack is not checked, as
 * conntrack does.  Learns nothing.
 */
static inline bool
fp_tcp_in_window(const struct fp_tcp_dir *snd, const struct fp_tcp_dir *rcv,
		 const struct fp_parsed *pp)
{
	uint32_t seq = pp->tcp_seq, ack = pp->tcp_ack;
	uint32_t end = seq + pp->tcp_payload;
	bool has_ack = (pp->tcp_flags & FP_TCP_ACK) && !((pp->tcp_flags & FP_TCP_RST) && ack == 0);
	uint32_t rcv_end = __atomic_load_n(&rcv->end, __ATOMIC_RELAXED);
	uint32_t rcv_maxwin = __atomic_load_n(&rcv->maxwin, __ATOMIC_RELAXED);
	uint32_t rcv_rmaxend = __atomic_load_n(&rcv->rmaxend, __ATOMIC_RELAXED);
	uint32_t ackwin = snd->maxwin > FP_TCP_MAX_ACKWIN ? snd->maxwin : FP_TCP_MAX_ACKWIN;

	return !(fp_seq_after(seq, rcv_rmaxend) ||			/* beyond the window */
		 fp_seq_before(end, snd->end - rcv_maxwin) ||		/* before it */
		 (has_ack && (fp_seq_after(ack, rcv_end) ||		/* acks the future */
			      fp_seq_before(ack, rcv_end - ackwin))));	/* acks the past */
}

/*
 * fp_tcp_track - one segment of direction `snd`; `rcv` is the other
 * direction (read only: another worker may own it).  The first segment of
 * a direction only learns.  After that, with `seq_chk` (fw_cfg
 * TCP_SEQ_CHK) and once the other direction has been seen, a segment out
 * of the window (fp_tcp_in_window) returns false and learns nothing.
 * Otherwise updates `snd` and returns true.
 */
static inline bool
fp_tcp_track(struct fp_tcp_dir *snd, const struct fp_tcp_dir *rcv,
	     const struct fp_parsed *pp, bool seq_chk)
{
	uint32_t ack = pp->tcp_ack;
	uint32_t end = pp->tcp_seq + pp->tcp_payload;
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
	if (seq_chk && __atomic_load_n(&rcv->seen, __ATOMIC_ACQUIRE) &&
	    !fp_tcp_in_window(snd, rcv, pp))
		return false;
	if (fp_seq_after(end, snd->end))
		__atomic_store_n(&snd->end, end, __ATOMIC_RELAXED);
	if (win > snd->maxwin)
		__atomic_store_n(&snd->maxwin, win, __ATOMIC_RELAXED);
	if (has_ack && (snd->rmaxend == 0 || fp_seq_after(ack + win, snd->rmaxend)))
		__atomic_store_n(&snd->rmaxend, ack + win, __ATOMIC_RELAXED);
	return true;
}

/*
 * fp_tcp_may_give_back - whether a FIN, SYN or RST of direction `snd`
 * may give the connection back (coprocessor-model.md step 6), whatever
 * TCP_SEQ_CHK says; false: it goes to the host alone and the connection
 * stays (an off-path sender's guess must not push it out).  Learns
 * nothing.
 *
 * - Not judged, true: while either direction has not been seen since the
 *   connection was made or revived there is no window to judge by (just
 *   offloaded, or idle since).  conntrack in that place (td_maxwin 0, a
 *   connection picked up) takes the segment as in the window and learns
 *   from it; here the safe side is the host's: a give-back only costs
 *   speed, a real close kept in the fast path would leave the host's
 *   firewall a step behind the connection.
 * - FIN and SYN: inside the window is fp_tcp_in_window.
 * - RST: that, and its seq not beyond what its sender has sent
 *   (snd->end).  A receiver resets only at exactly the next byte it
 *   expects (RFC 5961 3.2: any other RST in its window is answered with a
 *   challenge ACK), and conntrack closes only at the receiver's highest
 *   ACK (td_maxack) or at the end of the sender's last segment; both lie
 *   between snd->end less the receiver's window (fp_tcp_in_window's lower
 *   edge) and snd->end.  The receiver's highest ACK itself is not kept
 *   (the microflow's line is full), so an RST in that range gives back
 *   and the host's conntrack judges it.
 */
static inline bool
fp_tcp_may_give_back(const struct fp_tcp_dir *snd, const struct fp_tcp_dir *rcv,
		     const struct fp_parsed *pp)
{
	if (!snd->seen || !__atomic_load_n(&rcv->seen, __ATOMIC_ACQUIRE))
		return true;
	if (!fp_tcp_in_window(snd, rcv, pp))
		return false;
	return !(pp->tcp_flags & FP_TCP_RST) || !fp_seq_after(pp->tcp_seq, snd->end);
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
