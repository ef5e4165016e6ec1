/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_frag: IPv4 and IPv6 fragments put back together as Linux puts them
 * back, so that flowcutd's inspector (driver/ips/fd_inspect) reads the
 * ClientHello a fragmenting client sends as the server's stack will take
 * it, not as the client would have the inspector read it.
 *
 * Linux's rules, each named in fc_frag.c where it is followed: a duplicate
 * inside a run of held fragments is dropped, the datagram kept; any other
 * overlap, disagreeing ends or a datagram past 65535 bytes discards it;
 * an IPv6 first fragment without its upper-layer header, a non-last one
 * not a multiple of 8 bytes, or one ending past 65535 is dropped alone;
 * an atomic fragment is whole at once.  Over a bound, fragments are
 * refused, nothing evicted.  Not followed: Linux's VRF and interface keys,
 * its options checks, its 30 s or 60 s wait (this waits timeout_ms).  So the
 * frames of a datagram that expires here, and REFUSED frames, should be
 * dropped, not passed on: passed on, a sender that spaces its fragments
 * past timeout_ms has its datagram taken by the server and never read
 * here.
 *
 * Pure: no I/O, no threads, the caller's clock.  One struct fc_frag is one
 * thread's: calls on it must not overlap.  Memory: the frames held (a copy
 * each, with FC_FRAG_FRAME_COST bytes of records counted beside each) up
 * to max_bytes, max_datagrams small slots, and one packet buffer of
 * FC_FRAG_PACKET_MAX bytes; fc_frag_close frees it all.  What fc_frag_add
 * gives out is valid until the next call on it.  fc_frag_open returns NULL
 * with errno; fc_frag_add a result, fc_frag_expire a count.  Every read is
 * bounded by the bytes given.
 *
 * Design notes (each rule, its sources, why by hand): inspect/README.md.
 */
#ifndef FLOWCUT_FC_FRAG_H
#define FLOWCUT_FC_FRAG_H

#include <stdint.h>

#define FC_FRAG_DATAGRAMS_DEFAULT 64u
#define FC_FRAG_DATAGRAMS_MAX 4096u		/* a frame looks at every datagram held */
#define FC_FRAG_BYTES_DEFAULT (1u << 20)
#define FC_FRAG_BYTES_MAX (256u << 20)
#define FC_FRAG_TIMEOUT_DEFAULT_MS 1000u
#define FC_FRAG_FRAME_COST 64u			/* a held frame's records, counted beside its bytes */
#define FC_FRAG_PACKET_MAX (40u + 65535u)	/* the largest whole packet: IPv6's header and payload */

struct fc_frag_params {
	unsigned int max_datagrams;	/* datagrams held at once; 0: 64 */
	uint32_t max_bytes;		/* frames held in all, with their records; 0: 1 MiB */
	uint32_t timeout_ms;		/* from a datagram's first fragment; 0: 1000 */
};

/* A frame as it was given, copied in. */
struct fc_frag_piece {
	const uint8_t *frame;
	uint32_t len;
	uint32_t tag;			/* the caller's, as given */
};

/* A datagram given back: whole, or the frames of one discarded or expired. */
struct fc_frag_datagram {
	const uint8_t *ip;		/* the whole packet from its IP header, or NULL */
	uint32_t len;			/* its length (0 without it) */
	const struct fc_frag_piece *pieces;	/* its fragments' frames, in arrival order */
	unsigned int n;
};

enum fc_frag_result {
	FC_FRAG_NOT_FRAGMENT,	/* not an IP fragment: the caller's (*out empty) */
	FC_FRAG_HELD,		/* kept; the datagram is not whole yet (*out empty) */
	FC_FRAG_WHOLE,		/* the datagram is whole: *out has it and its frames */
	FC_FRAG_DISCARDED,	/* the datagram was discarded as Linux discards it: *out lists
				   its frames, this one among them, for the caller to drop */
	FC_FRAG_RESTARTED,	/* IPv4: the datagram started again from this frame, held
				   (ip_frag_reinit): *out lists the frames it let go, to drop */
	FC_FRAG_DUPLICATE,	/* inside what the datagram holds: not kept (Linux drops it),
				   the datagram kept (*out empty) */
	FC_FRAG_REFUSED,	/* over a bound, or one Linux drops alone (the counter says
				   which): not kept, the caller's (*out empty) */
};

/*
 * What happened, since fc_frag_open (held and bytes: now).  A datagram
 * stops being held as one of whole, discarded_* or expired; a REFUSED
 * frame counts in one refused_*.
 */
struct fc_frag_stats {
	uint64_t held;			/* datagrams held now */
	uint64_t bytes;			/* their frames and records, as counted against max_bytes */
	uint64_t whole;			/* datagrams made whole (atomic IPv6 fragments among them) */
	uint64_t discarded_overlap;	/* a fragment overlapping another, not inside it */
	uint64_t discarded_oversize;	/* past 65535 bytes once whole */
	uint64_t discarded_headers;	/* IPv6: a second Fragment header once whole */
	uint64_t discarded_other;	/* last fragments that disagree, a fragment past the end
					   or empty, ECN-capable fragments mixed with not */
	uint64_t restarted;		/* IPv4: 64 fragments of its source came between two of its own */
	uint64_t expired;		/* timeout_ms after its first fragment, not whole */
	uint64_t duplicate;		/* frames inside what their datagram holds */
	uint64_t refused_full;		/* frames over max_datagrams or max_bytes (or no memory) */
	uint64_t refused_malformed;	/* headers Linux drops before reassembly: an IPv4 header
					   checksum, lengths past the frame, an IPv6 payload length
					   of 0; an atomic IPv6 fragment with a second Fragment header */
	uint64_t refused_headers;	/* IPv6: a first fragment without the upper-layer header */
	uint64_t refused_unaligned;	/* IPv6: a non-last fragment not a multiple of 8 bytes */
	uint64_t refused_too_long;	/* IPv6: a fragment ending past 65535 */
};

struct fc_frag;

/*
 * fc_frag_open - an empty reassembler with the bounds of *p (NULL: all
 * defaults).  NULL with errno EINVAL (max_datagrams over
 * FC_FRAG_DATAGRAMS_MAX, max_bytes over FC_FRAG_BYTES_MAX) or ENOMEM.
 */
struct fc_frag *fc_frag_open(const struct fc_frag_params *p);

/* fc_frag_close - free fr and every frame it holds; NULL: nothing. */
void fc_frag_close(struct fc_frag *fr);

/*
 * fc_frag_add - an Ethernet frame of len bytes whose IPv4 or IPv6 header
 * starts at ip_off (fc_seg_ether), at now_ms.  A fragment is kept as a
 * copy: the frame stays the caller's.  *out is filled in for every result
 * (empty where the result says so) and, with the frames and packet it
 * points to, is valid until the next call on fr; a datagram given out is
 * then forgotten.  The whole packet has IPv4's header of the first
 * fragment with MF and the offset cleared (DF kept when the largest
 * fragment had it, as Linux does), the total length, ECN and header
 * checksum set; or IPv6's headers before the Fragment header of the first
 * fragment, the Fragment header removed, the next header and payload
 * length set.  It does not expire datagrams: call fc_frag_expire first, so
 * that a fragment past a datagram's timeout starts a new one as in Linux.
 */
enum fc_frag_result fc_frag_add(struct fc_frag *fr, const uint8_t *frame, uint32_t len,
				uint32_t ip_off, uint32_t tag, uint64_t now_ms,
				struct fc_frag_datagram *out);

/*
 * fc_frag_expire - every datagram not whole timeout_ms after its first
 * fragment (its restart, for IPv4) at now_ms: given to fn (d->ip NULL,
 * valid during the call), then forgotten.  Returns how many.
 */
unsigned int fc_frag_expire(struct fc_frag *fr, uint64_t now_ms,
			    void (*fn)(void *arg, const struct fc_frag_datagram *d), void *arg);

/* fc_frag_stats - the counters into *st. */
void fc_frag_stats(const struct fc_frag *fr, struct fc_frag_stats *st);

#endif
