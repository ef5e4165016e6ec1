/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_tuple: a connection's 5-tuple as the driver holds it, and its one
 * text.  The inspector's key (fd_inspect, fd_seg: the client's frames as
 * they carry it), the connections a cut puts in flowcutd's drop sets
 * (fd_nft_block: client and server as the forward hook sees them), and
 * the log lines of a cut (fd_cut: a conntrack state's original tuple).
 * The coprocessor's key on the wire is include/flowcut/fc_cmd.h's fc_key;
 * inspect/fc_seg keeps its own (host order: inspect/ does not use the
 * driver).
 *
 * Pure: any thread.
 */
#ifndef FLOWCUT_FD_TUPLE_H
#define FLOWCUT_FD_TUPLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Hashed by fd_inspect (conn_hash over its 40 bytes, key_reverse), so no
 * padding and `zero` zero: a memset before it is filled.  What fills one
 * must change with it: fd_seg_parse, fd_ips's key_of_ct, fd_cut's
 * tuple_format and block, the tests' keys.
 */
struct fd_tuple {
	uint8_t src[16];	/* the sender (the client); IPv4 in the first 4 bytes, the rest 0 */
	uint8_t dst[16];	/* the receiver (the server) */
	uint16_t sport;		/* network order */
	uint16_t dport;		/* network order */
	uint8_t family;		/* 4 or 6 */
	uint8_t proto;		/* IPPROTO_*: 6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6 ... */
	uint8_t zero[2];
};
_Static_assert(sizeof(struct fd_tuple) == 40, "struct fd_tuple has no padding");

/*
 * fd_tuple_format - "tcp 198.18.0.2:40000 -> 198.18.1.2:443", "udp
 * [2001:db8::2]:40000 -> [2001:db8:1::2]:443" (TCP and UDP), "icmp
 * 198.18.0.2 -> 198.18.1.2" (ICMP, ICMPv6, or "proto" for another: no
 * ports) into buf[len], cut short to fit.  Returns buf.
 */
char *fd_tuple_format(const struct fd_tuple *t, char *buf, size_t len);

#endif
