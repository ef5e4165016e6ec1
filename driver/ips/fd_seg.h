/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_seg: a frame the coprocessor handed up, as the inspector needs it -
 * a TCP segment (its connection as the frame carries it, sequence number,
 * flags, where its payload sits) or a UDP datagram (the same, no sequence).
 *
 * Ethernet with at most two VLAN tags (802.1Q or 802.1ad), then what
 * inspect/fc_seg reads (IPv4 or IPv6, TCP or UDP; the IP length bounds the
 * payload, fragments are not read), the whole frame given.  Here only the
 * frame's flow put as the inspector keys it (ports in network order).
 * Fuzzed with the inspector by tests/fuzz/fuzz_inspect.c, and fc_seg by
 * tests/fuzz/fuzz_seg.c.
 *
 * Pure: no state, any thread.
 */
#ifndef FLOWCUT_FD_SEG_H
#define FLOWCUT_FD_SEG_H

#include <stdbool.h>
#include <stdint.h>

#include "fc_seg.h"
#include "fd_inspect.h"

struct fd_seg {
	struct fd_tuple key;	/* as the frame carries it: src is its sender */
	uint32_t seq;			/* TCP */
	uint32_t ack;			/* TCP (when ACK is set) */
	uint16_t urp;			/* TCP's urgent pointer (when URG is set) */
	uint8_t flags;			/* TCP */
	uint8_t ttl;			/* IPv4's TTL, IPv6's hop limit */
	uint32_t plen;			/* payload bytes (from the IP length, not the frame's) */
	uint32_t poff;			/* where they start in the frame */
	uint32_t ipoff;			/* where the IP header starts in the frame */
	struct fc_seg g;		/* as fc_seg read it (fd_seg_csum_ok) */
};

/*
 * fd_seg_parse - the frame f[0, len) as a TCP segment or UDP datagram:
 * 0, or -1 when it is neither (not IP, another protocol, a fragment,
 * headers that do not hold).  *s is zeroed first.
 */
int fd_seg_parse(const uint8_t *f, uint32_t len, struct fd_seg *s);

/*
 * fd_seg_parse_ip - the same for an IP packet at ip (ipoff bytes into its
 * frame; a reassembled one has no frame: 0), of len bytes.
 */
int fd_seg_parse_ip(const uint8_t *ip, uint32_t len, uint32_t ipoff, struct fd_seg *s);

/* fd_seg_csum_ok - its transport checksum is right (fc_seg_csum_ok); ip as parsed. */
bool fd_seg_csum_ok(const uint8_t *ip, const struct fd_seg *s);

#endif
