/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fp_parse: reads a frame's headers into a microflow key.
 *
 * Ethernet with at most one 802.1Q tag, IPv4 (options allowed), IPv6 with
 * the extension headers a forwarder must step over (hop-by-hop, routing,
 * destination options, AH, an atomic fragment header), then TCP, UDP,
 * ICMP/ICMPv6 echo, or any other protocol keyed by addresses alone.
 *
 * Pure functions over a byte buffer: no allocation, no state, callable from
 * any thread.  Every read is bounded by the lengths given; a frame whose
 * headers do not fit, or whose lengths contradict each other, is an error,
 * never a read past its end.  Hand-written because no DPDK library parses
 * to a 5-tuple with these rules (rte_net_get_ptype stops at types and does
 * not check lengths against each other).
 */
#ifndef FLOWCUT_FP_PARSE_H
#define FLOWCUT_FP_PARSE_H

#include <stdint.h>

#include <flowcut/fc_cmd.h>

/*
 * The microflow key: ingress port + VLAN + 5-tuple.  It is hashed and
 * compared as raw bytes, so it has no implicit padding (checked below) and
 * every unused byte must be zero: IPv4 addresses fill the first 4 bytes of
 * src/dst and the other 12 stay 0; pad stays 0.  48 bytes, so rte_hash
 * compares it with its 48-byte vector compare.
 *
 * Ports are in network order, as on the wire.  ICMP/ICMPv6 echo: sport is
 * the identifier (network order), dport the message type in host order
 * (8 or 0, 128 or 129), so a request never matches a reply's key.  Other
 * protocols: both ports 0.
 *
 * Change with it: fp_parse_frame(), fp_key_reverse(), fp_conn_create()'s
 * validation (fp_conn.c), and the payload of FLOW_CREATE_FP.
 */
/* The key is the wire's (include/flowcut/fc_cmd.h): one struct both sides share. */
_Static_assert(sizeof(struct fc_key) == 48, "a key is 48 bytes, unpadded");
_Static_assert(_Alignof(struct fc_key) == 8, "a key is 8-aligned: rte_hash_crc reads 8 bytes at a time");

/* What fp_parse_frame() found. */
enum fp_parse_result {
	FP_PARSE_FLOW = 0,	/* key and offsets filled in */
	FP_PARSE_NO_FLOW,	/* IP, but not a microflow (ICMP error, no next header) */
	FP_PARSE_NON_IP,	/* ARP, LLDP, ...: not IPv4 or IPv6 */
	FP_PARSE_FRAG,		/* a non-atomic IP fragment */
	FP_PARSE_ERROR,		/* truncated or self-contradicting headers */
};

/* TCP flag bits as in the header's 13th byte. */
#define FP_TCP_FIN 0x01
#define FP_TCP_SYN 0x02
#define FP_TCP_RST 0x04
#define FP_TCP_ACK 0x10

/* A parsed frame: the key and where its headers are. */
struct fp_parsed {
	struct fc_key key;	/* key.port is set by the caller */
	uint16_t l3_off;	/* IP header, from the frame's start */
	uint16_t l4_off;	/* transport header */
	uint16_t l3_len;	/* IP datagram length (v4 total length, v6 40 + payload) */
	uint8_t tagged;		/* the frame carried an 802.1Q tag */
	uint8_t tcp_flags;
	uint32_t tcp_seq;	/* host order, TCP only */
	uint32_t tcp_ack;
	uint16_t tcp_win;	/* unscaled */
	uint16_t tcp_payload;	/* TCP payload length */
	uint32_t tcp_sack;	/* a digest of the SACK blocks, 0 when none */
};

/*
 * fp_parse_frame - parse the headers of one frame.
 *
 * frame/seg_len: the contiguous bytes holding the headers (an mbuf's first
 * segment); frame_len: the whole frame's length (>= seg_len).  Returns an
 * enum fp_parse_result; out->key.port is left 0 for the caller to set.
 * On FP_PARSE_FLOW every field of out is set; otherwise its contents are
 * unspecified.
 */
enum fp_parse_result fp_parse_frame(const uint8_t *frame, uint32_t seg_len,
				    uint32_t frame_len, struct fp_parsed *out);

/*
 * fp_key_reverse - the key a reply would carry if nothing rewrote it:
 * addresses swapped, ports swapped (ICMP echo: identifier kept, request
 * type turned into its reply type).  port and vlan are copied unchanged.
 * out may be k.
 */
void fp_key_reverse(const struct fc_key *k, struct fc_key *out);

/*
 * fp_key_format - "4 tcp 198.18.0.1:1000 > 198.18.1.1:80 port 0 vlan 0"
 * into buf (always NUL-terminated when len > 0).  Returns buf.
 */
char *fp_key_format(const struct fc_key *k, char *buf, unsigned len);

#endif /* FLOWCUT_FP_PARSE_H */
