/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_seg: an IP packet's TCP segment or UDP datagram, as a reader of
 * ClientHellos needs it - its flow (addresses, ports), a segment's
 * sequence number and flags, and where its payload sits - for the two
 * that read them: flowcutd's inspector (driver/ips/fd_seg, frames the
 * coprocessor hands up) and fc_tlscap (frames of a capture file, which
 * may be cut short by the snapshot length).
 *
 * IPv4 (options skipped) or IPv6 (hop-by-hop, routing and destination
 * options headers skipped); fragments are not read.  The IP length (and
 * UDP's) bounds the payload: an Ethernet frame's padding is not payload.
 * Every read is bounded by the bytes given.  Hand-written: no Debian
 * library parses a bare packet without a capture or a socket around it.
 * The fast path has its own parser (fastpath/fp_parse): a microflow key
 * with the port and VLAN, TCP's window and SACK, tuned for the packet
 * path and kept apart from this one.  Fuzzed by tests/fuzz/fuzz_seg.c.
 *
 * Pure: no state, any thread.
 */
#ifndef FLOWCUT_FC_SEG_H
#define FLOWCUT_FC_SEG_H

#include <stdbool.h>
#include <stdint.h>

struct fc_seg {
	uint8_t src[16];	/* the sender; IPv4 in the first 4 bytes, the rest 0 */
	uint8_t dst[16];
	uint16_t sport;		/* host order */
	uint16_t dport;
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;		/* 6 TCP, 17 UDP */
	uint8_t flags;		/* TCP's flags byte */
	uint8_t ttl;		/* IPv4's TTL, IPv6's hop limit */
	uint16_t urp;		/* TCP's urgent pointer (host order; read when URG is set) */
	uint32_t seq;		/* TCP, host order */
	uint32_t ack;		/* TCP, host order (read when ACK is set) */
	uint32_t l4off;		/* the transport header, from the IP header's first byte */
	uint32_t l4len;		/* it and its payload, by the IP (and UDP) lengths */
	uint32_t poff;		/* the payload, from the IP header's first byte */
	uint32_t plen;		/* its length, by the IP (and UDP) lengths */
	uint32_t pcap;		/* of it, the bytes given (at most plen) */
	bool whole;		/* the transport header and payload all given */
};

enum fc_seg_result {
	FC_SEG_OK,		/* TCP or UDP: *s filled in */
	FC_SEG_FRAGMENT,	/* an IP fragment: not read */
	FC_SEG_OTHER,		/* not IPv4 or IPv6, another protocol, headers that do not hold */
};

/*
 * fc_seg_ip - the packet whose IP header is at ip, of which caplen bytes
 * are given (a capture's may be fewer than its IP length says).  *s is
 * zeroed first.  The transport header's first 20 (TCP) or 8 (UDP) bytes
 * must be given; what is cut short after them is told by s->whole and
 * s->pcap.
 */
enum fc_seg_result fc_seg_ip(const uint8_t *ip, uint32_t caplen, struct fc_seg *s);

/*
 * fc_seg_csum_ok - whether the segment's or datagram's checksum (over the
 * pseudo-header, RFC 793 / RFC 768 / RFC 8200 8.1) is right; s as
 * fc_seg_ip filled it from the same ip, whole (s->whole).  A UDP datagram
 * over IPv4 with checksum 0 carries none: true.  A receiver's stack drops
 * what fails it, so a reader of what the receiver reads must too.
 */
bool fc_seg_csum_ok(const uint8_t *ip, const struct fc_seg *s);

/*
 * fc_seg_ether - where the IPv4 or IPv6 header of an Ethernet frame of
 * caplen bytes starts (after at most two VLAN tags, 802.1Q or 802.1ad),
 * or -1 when it carries neither.
 */
int fc_seg_ether(const uint8_t *f, uint32_t caplen);

#endif
