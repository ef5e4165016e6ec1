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

#include <stdint.h>

#include "fd_inspect.h"

struct fd_seg {
	struct fd_tuple key;	/* as the frame carries it: src is its sender */
	uint32_t seq;			/* TCP */
	uint8_t flags;			/* TCP */
	uint32_t plen;			/* payload bytes (from the IP length, not the frame's) */
	uint32_t poff;			/* where they start in the frame */
};

/*
 * fd_seg_parse - the frame f[0, len) as a TCP segment or UDP datagram:
 * 0, or -1 when it is neither (not IP, another protocol, a fragment,
 * headers that do not hold).  *s is zeroed first.
 */
int fd_seg_parse(const uint8_t *f, uint32_t len, struct fd_seg *s);

#endif
