/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_wire: what crosses between flowcutd and flowcut-inspect, the
 * process that parses TLS ClientHellos and QUIC Initials without root.
 *
 * One message a SOCK_SEQPACKET record, each way.  flowcutd asks: a
 * connection's next stream bytes in order (TLS over TCP), one client
 * datagram (QUIC), or "forget" (the connection is flowcutd's no more).
 * flowcut-inspect answers every TLS and QUIC question, in order: the
 * parser's answer on the bytes so far and, for a whole hello, its JA4,
 * JA3 and server name.  The lookup in the watched list and the cut stay
 * flowcutd's.  Both ends are built from one tree and run on one machine:
 * the records are in host order, and a version field refuses another
 * build's.  Why the boundary lies here: docs/fingerprints.md ("The
 * inspector's own process").
 *
 * Decoding is checked (fi_wire_req_check, fi_wire_ans_check): lengths,
 * kinds, flags, the strings' ends.  Hand-written: a fixed record of our
 * own between two programs of one build; no library is needed to read it.
 */
#ifndef FLOWCUT_FI_WIRE_H
#define FLOWCUT_FI_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define FI_WIRE_VERSION 0x66690001u	/* "fi", 1 */
#define FI_DATA_MAX 65507u		/* stream bytes, or a datagram (UDP's largest), a question */
#define FI_CTX_LEN 40			/* the asker's, echoed (flowcutd's tuple) */

enum fi_kind {
	FI_TLS = 1,	/* the stream's next bytes (FI_FIRST: its first) */
	FI_QUIC = 2,	/* one datagram (FI_FIRST: the flow's first) */
	FI_FORGET = 3,	/* no bytes, no answer: the id's state let go */
};

#define FI_FIRST 0x01	/* the first bytes of this id: a new parser */

struct fi_req {
	uint32_t version;		/* FI_WIRE_VERSION */
	uint8_t kind;			/* enum fi_kind */
	uint8_t flags;			/* FI_FIRST */
	uint16_t len;			/* bytes of data[] (0 for FI_FORGET; <= FI_DATA_MAX) */
	uint32_t seq;			/* the asker's, echoed */
	uint32_t pad;
	uint64_t id;			/* the connection's, as the asker numbers them (never 0) */
	uint8_t ctx[FI_CTX_LEN];	/* the asker's, echoed */
	uint8_t data[];
};

struct fi_ans {
	uint32_t version;
	int32_t rc;			/* fc_tls_feed's or fc_quic_feed's answer; -ESTALE: id not known */
	uint32_t seq;			/* the question's */
	uint8_t kind;			/* the question's */
	uint8_t pad[3];
	uint64_t id;
	uint8_t ctx[FI_CTX_LEN];
	char ja4[37];			/* rc 0: the hello's; else "" */
	char ja3[33];			/* rc 0 and OpenSSL had MD5: the hello's; else "" */
	char sni[64];			/* rc 0: the first host name, printable, cut short; else "" */
	char pad2[2];
};

#define FI_REQ_MAX (sizeof(struct fi_req) + FI_DATA_MAX)

/*
 * fi_wire_req_check - a question of n bytes: 0, or -EBADMSG with why
 * (a static string) in *why.
 */
int fi_wire_req_check(const void *msg, size_t n, const char **why);
/* fi_wire_ans_check - an answer of n bytes, as fi_wire_req_check. */
int fi_wire_ans_check(const void *msg, size_t n, const char **why);

#endif
