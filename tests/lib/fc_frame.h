/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_frame: builds test frames and checks them from scratch.
 *
 * Used by the unit tests, the fuzz seeds, the benchmark and the demo to
 * make Ethernet (optionally 802.1Q) IPv4/IPv6 frames carrying TCP, UDP or
 * ICMP echo, with every checksum computed in full here - independently of
 * the fast path's incremental updates, which the tests hold against it.
 * No state; any thread.
 */
#ifndef FLOWCUT_FC_FRAME_H
#define FLOWCUT_FC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fp_parse.h"

struct fc_frame_spec {
	uint8_t dmac[6];
	uint8_t smac[6];
	uint16_t vlan;		/* 0: untagged */
	struct fc_key key;	/* family, proto, addresses, ports (ICMP: id, type) */
	uint8_t ttl;		/* or hop limit; 0 means 64 */
	uint8_t tcp_flags;	/* FP_TCP_* */
	uint32_t seq, ack;
	uint16_t win;
	uint16_t payload;	/* payload bytes (a counting pattern) */
	uint8_t tcp_opts[40];	/* TCP options, tcp_optlen bytes (a multiple of 4) */
	uint8_t tcp_optlen;
	bool udp_no_csum;	/* UDP sent with checksum 0 */
};

/*
 * fc_frame_build - write the frame into buf; returns its length, or 0 if
 * it does not fit in cap.  Frames shorter than 60 bytes are padded.
 */
size_t fc_frame_build(const struct fc_frame_spec *s, uint8_t *buf, size_t cap);

/*
 * fc_frame_check - recompute every checksum of an Ethernet frame from
 * scratch (IPv4 header, TCP, UDP, ICMP, ICMPv6) and compare with what it
 * carries.  Returns 0 when all match, else -1 with `why` naming the first
 * that does not (why may be NULL).
 */
int fc_frame_check(const uint8_t *f, size_t len, const char **why);

/*
 * fc_frame_fix_l4 - the TCP or UDP checksum of a frame written again over
 * what it carries now (a payload copied in after fc_frame_build): what a
 * sender's stack would have sent.  Untagged or one tag, IPv4 or IPv6
 * without extension headers.  0, or -1 when it is neither.
 */
int fc_frame_fix_l4(uint8_t *f, size_t len);

/* fc_key4 / fc_key6 - fill a key from text addresses, host-order ports. */
void fc_key4(struct fc_key *k, uint8_t proto, const char *src, uint16_t sport,
	     const char *dst, uint16_t dport);
void fc_key6(struct fc_key *k, uint8_t proto, const char *src, uint16_t sport,
	     const char *dst, uint16_t dport);

#endif
