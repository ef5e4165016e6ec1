/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctgen: what flowcut-ctgen (tools/flowcut-ctgen.c) makes, without its
 * socket - the command line, the addresses and prefixes, the i-th state's
 * tuple, its ctnetlink message, and the acks of a batch - so each is tested
 * alone (tests/unit/test_ctgen.c, tests/fuzz/fuzz_ctgen.c).  No globals, no
 * I/O: any thread may call it.
 *
 * The states, i = 0 .. N-1 (the choices the plan left open):
 * - Ports: the source varies fastest, then the source port, then the
 *   destination port: with H sources (A/n: 2^(32-n) for IPv4, 2^(128-n)
 *   for IPv6, at most 2^32), state i is source (A + i % H, wrapping inside
 *   A/n), source port P + (i / H) % (65536 - P), destination port
 *   Q + i / (H * (65536 - P)).  With the defaults (one source, P 1024,
 *   Q 10000: ctfill's) that is 64,512 states a destination port, so
 *   2,000,000 states use 198.18.0.2:1024-65535 > 198.18.1.2:10000-10031.
 *   N that does not fit before port 65535 is refused, the sizes said.
 * - UDP: status ASSURED|SEEN_REPLY (nfct_nlmsg_build adds CONFIRMED).
 * - TCP: status ASSURED|SEEN_REPLY, state ESTABLISHED, window scale 7 each
 *   way, the flags WINDOW_SCALE|SACK_PERM each way (what the kernel's
 *   tcp_new and the SYN-ACK leave for a Linux peer).  MAXACK_SET is left
 *   for the kernel to set at the first ACK it sees: td_maxack cannot be
 *   given over netlink, and the bit with a td_maxack of 0 would judge the
 *   first ACKs against 0.
 * - --delete: the message holds the original tuple and nothing else (a
 *   CT_DELETE without a tuple is a flush of the whole table).
 */
#ifndef FLOWCUT_CTGEN_H
#define FLOWCUT_CTGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

#include "fd_tuple.h"

#define CTG_N_MAX 4000000UL	/* states a run: ctfill's bound */
#define CTG_BATCH_MAX 1024u	/* messages a datagram (about 190 KB of TCP/IPv6) */
#define CTG_MSG_MAX 512u	/* room for one message (a TCP/IPv6 create is about 180 B) */

/* What the command line asked for (ctg_parse); addresses in network order. */
struct ctg_opts {
	unsigned long n;	/* states */
	uint32_t mark;		/* --mark, 0 */
	uint32_t timeout;	/* --timeout, seconds, 600 */
	uint8_t family;		/* AF_INET (--family 4, the default) or AF_INET6 */
	uint8_t proto;		/* IPPROTO_UDP (the default) or IPPROTO_TCP */
	uint8_t src[16];	/* --src A: 198.18.0.2 or 2001:2::2 */
	unsigned int src_len;	/* its /n: the whole address by default */
	uint8_t dst[16];	/* --dst B: 198.18.1.2 or 2001:2:0:1::2 */
	uint16_t sport;		/* --sport P, the first source port: 1024 */
	uint16_t dport;		/* --dport Q, the first destination port: 10000 */
	unsigned long rate;	/* --rate R a second, 0: as fast as netlink takes them */
	unsigned int batch;	/* --batch K messages a datagram, 1 to CTG_BATCH_MAX: 64 */
	bool del;		/* --delete: the same N deleted */
};

/*
 * ctg_parse - argv[1..argc) into *o: 0, or -EINVAL with what was wrong
 * and with which input in err (for the user, "flowcut-ctgen: " not in it):
 * an unknown option, one without its value, a number out of range, an
 * address of the other family or none, a prefix too long, N that does not
 * fit the ports.  *o is whole only on 0.
 */
int ctg_parse(struct ctg_opts *o, int argc, char *const *argv, char *err, size_t errlen);

/*
 * ctg_prefix - "ADDR" or "ADDR/LEN" of family (AF_INET, AF_INET6) into
 * addr (network order, 4 or 16 bytes written) and *len (32 or 128 without
 * /LEN): 0, or -EINVAL, err saying what of s was wrong.
 */
int ctg_prefix(const char *s, uint8_t family, uint8_t addr[16], unsigned int *len, char *err,
	       size_t errlen);

/* ctg_hosts - the sources o's prefix holds (1 to 2^32). */
uint64_t ctg_hosts(const struct ctg_opts *o);

/*
 * ctg_tuple - state i's original tuple (the reply is it reversed), as the
 * driver's (fd_tuple_format writes it: "udp 198.18.0.2:1024 ->
 * 198.18.1.2:10000"); i < o->n: ctg_parse checked that they fit.
 */
void ctg_tuple(const struct ctg_opts *o, unsigned long i, struct fd_tuple *t);

/*
 * ctg_state - ct made the state of tuple t: its original tuple and the
 * reply as its reverse (no NAT), status, mark, and the timeout when not 0.
 * The house's one conntrack state builder: flowcut-ctgen's messages, the
 * bench's states (flowcut-bench cut, ctdump) and the fuzz targets' seeds
 * (tests/fuzz/fuzz_nfct.h) are made by it.
 */
void ctg_state(struct nf_conntrack *ct, const struct fd_tuple *t, uint32_t status,
	       uint32_t timeout, uint32_t mark);

/*
 * ctg_build - state i's message at buf (room bytes, at least CTG_MSG_MAX),
 * built with nfct_nlmsg_build, asking for an ack, with sequence number seq:
 *
 *   | nlmsghdr (CT_NEW, CREATE|EXCL|ACK; or CT_DELETE, ACK) | nfgenmsg (family) |
 *   | CTA_TUPLE_ORIG | CTA_TUPLE_REPLY | CTA_STATUS | CTA_TIMEOUT | CTA_MARK | [CTA_PROTOINFO] |
 *
 * (CT_DELETE: CTA_TUPLE_ORIG alone).  The message, or NULL if
 * nfct_new or nfct_nlmsg_build failed or it did not fit (errno set).
 */
struct nlmsghdr *ctg_build(void *buf, size_t room, const struct ctg_opts *o, unsigned long i,
			   uint32_t seq);

/*
 * The acks of one batch: n messages sent with sequence numbers first ..
 * first + n - 1.  ctg_acks takes one datagram of answers: for each ack or
 * error of the batch not seen yet, got[k] set and rc[k] 0 or -errno.  The
 * acks it took (>= 0), or -EBADMSG at a message that does not lie whole
 * in buf or an error message cut short (those before it were taken).
 * Messages that are not of the batch are skipped.
 */
struct ctg_acks {
	uint32_t first;
	unsigned int n;
	int rc[CTG_BATCH_MAX];
	bool got[CTG_BATCH_MAX];
};
int ctg_acks(struct ctg_acks *a, const void *buf, size_t len);

#endif
