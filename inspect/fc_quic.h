/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quic: the TLS ClientHello of a QUIC connection, read from its
 * client's Initial packets (QUIC versions 1 and 2).
 *
 * Each client datagram is fed in.  Every Initial packet it holds (packets
 * may be coalesced) has its header protection removed, is decrypted and
 * checked with keys anyone can derive (the version's public salt and a
 * Destination Connection ID, RFC 9001 5.2), and its frames read: PADDING,
 * PING, ACK skipped, CRYPTO gathered by offset (a hello may span Initials,
 * out of order), anything else refused.  The CRYPTO bytes in order from 0
 * are the handshake message, fed to fc_tls in records made up here (QUIC
 * has none: a hello's record_version is 0x0301), up to FC_TLS_HELLO_MAX
 * bytes.  The keys are the connection's, from its client's first
 * Initial's DCID, derived once and kept in struct fc_quic_hello.  A
 * datagram with more than FC_QUIC_INITIALS_MAX Initials is refused,
 * counted from their headers before any is decrypted.
 *
 * Threads: a struct fc_quic_hello belongs to one thread at a time; any
 * number of threads may each read their own.  OpenSSL's ciphers and KDF
 * are fetched once a process, at the first call (pthread_once) or by
 * fc_quic_ready, and kept to its end.  Nothing to shut down.
 * Memory: the struct, about 305 KiB (room for the largest hello), is the
 * caller's, malloc'd one per connection being read; pages never written
 * cost nothing (fc_quic_init writes a few hundred bytes).
 *
 * fc_quic_feed answers 0 (whole), -EAGAIN (more) or a negative errno,
 * each listed beside it, with q->err saying what and where.
 *
 * Design notes (the keys, Initials a datagram, memory): inspect/README.md.
 */
#ifndef FLOWCUT_FC_QUIC_H
#define FLOWCUT_FC_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_tls.h"

#define FC_QUIC_V1 0x00000001u
#define FC_QUIC_V2 0x6b3343cfu

/* The most Initial packets one client datagram is read with (see above). */
#define FC_QUIC_INITIALS_MAX 2

#define FC_QUIC_CID_MAX 20	/* a connection ID's bytes at most (RFC 9000 17.2) */

/* The client's Initial keys of one version and DCID (RFC 9001 5.2). */
struct fc_quic_keys {
	uint32_t version;		/* 0: none derived yet */
	uint8_t dcid_len;
	uint8_t dcid[FC_QUIC_CID_MAX];
	uint8_t key[16];		/* AEAD_AES_128_GCM */
	uint8_t iv[12];
	uint8_t hp[16];			/* header protection, AES-128-ECB */
};

struct fc_quic_hello {
	struct fc_tls_hello hello;	/* valid once fc_quic_feed() returned 0 */
	uint32_t version;		/* of the first Initial read */
	uint32_t packets;		/* Initial packets decrypted */
	struct fc_quic_keys keys;	/* the connection's: its first Initial's DCID (0: none yet) */
	uint32_t fed;			/* bytes of the CRYPTO stream given to fc_tls */
	uint32_t had_len;		/* bytes of had[] zeroed so far; past them none is had */
	int rc;				/* the final answer, once not -EAGAIN */
	char err[160];			/* why, for every error */
	/* the CRYPTO stream: bytes [0, FC_TLS_HELLO_MAX), a bit in had[] for each one held */
	uint8_t had[(FC_TLS_HELLO_MAX + 7) / 8];
	uint8_t crypto[FC_TLS_HELLO_MAX];
};

/* fc_quic_init - ready for a connection's first datagram (no key kept). */
void fc_quic_init(struct fc_quic_hello *q);

/*
 * fc_quic_ready - OpenSSL's algorithms fetched now (else on the first
 * Initial), as fc_ja_ready.  0, or -EIO.
 */
int fc_quic_ready(void);

/*
 * fc_quic_is_initial - does a UDP payload start with a QUIC Initial packet
 * of a version this reads (long header, v1 or v2, Initial type)?  Looks at
 * 5 bytes; nothing is decrypted.
 */
bool fc_quic_is_initial(const uint8_t *dgram, size_t len);

/*
 * fc_quic_feed - one UDP datagram from the client.  Returns:
 *   0          the ClientHello is whole: read it from q->hello.
 *   -EAGAIN    every Initial in it was read; the hello needs more.
 *   -ENOMSG    not a QUIC Initial of version 1 or 2, or its CRYPTO stream
 *              is not a ClientHello.
 *   -EBADMSG   an opened Initial whose frames do not hold together (a frame
 *              an Initial may not carry, lengths), or a malformed hello.
 *   -EMSGSIZE  CRYPTO bytes past FC_TLS_HELLO_MAX, or a hello announcing
 *              a body of more than FC_TLS_HELLO_BODY_MAX bytes.
 *   -E2BIG     more Initials in one datagram than a client sends (over
 *              FC_QUIC_INITIALS_MAX): counted from their headers, none of
 *              that datagram opened or read.  Not final: the datagram is
 *              not the connection's (a reader in the path drops it), the
 *              next is read.
 *   -EPROTO    a datagram its server drops: an Initial in it does not open
 *              with the connection's keys (those of its client's first
 *              Initial's DCID, RFC 9001 5.2) or is of another version, a
 *              packet in it does not hold together, or (after the first)
 *              it starts with no Initial.  Nothing of it is read; not
 *              final.
 *   -EIO       OpenSSL failed (or has no AES-128-ECB, AES-128-GCM or HKDF).
 * Every answer but -EAGAIN, -E2BIG and -EPROTO is final: later calls
 * return it again.  On an error q->err says what and where.
 */
int fc_quic_feed(struct fc_quic_hello *q, const uint8_t *dgram, size_t len);

/*
 * fc_quic_frames - the frames of one decrypted Initial payload (what
 * fc_quic_feed does after decrypting; for the fuzz target and the tests).
 * Returns as fc_quic_feed.
 */
int fc_quic_frames(struct fc_quic_hello *q, const uint8_t *p, size_t len);

/*
 * fc_quic_client_keys - the client's Initial keys of a version for a DCID
 * (RFC 9001 5.2, RFC 9369 3.3), derived anew (fc_quic_feed keeps them for
 * a connection).  0, -ENOMSG (another version), -EIO.
 */
int fc_quic_client_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, uint8_t key[16],
			uint8_t iv[12], uint8_t hp[16]);

#endif
