/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quic: the TLS ClientHello of a QUIC connection, read from its
 * client's Initial packets.
 *
 * A QUIC client sends its ClientHello in CRYPTO frames of Initial packets
 * (RFC 9000 17.2.2), protected with keys anyone can derive: HKDF-Extract
 * of the version's public salt and the packet's Destination Connection ID,
 * then "client in", "quic key", "quic iv", "quic hp" (RFC 9001 5.2; QUIC
 * version 2, RFC 9369: its own salt, "quicv2 key", "quicv2 iv", "quicv2 hp",
 * and Initial packet type 1).  For each client datagram fed in, every
 * Initial packet it holds (packets may be coalesced) has its header
 * protection removed (AES-128-ECB of a sample), is decrypted and checked
 * (AES-128-GCM), and its frames read: PADDING, PING, ACK skipped, CRYPTO
 * gathered by offset (a hello may span Initials, and a client may send its
 * CRYPTO frames out of order), anything else refused.  The CRYPTO bytes
 * in order from 0 are the handshake message, fed to fc_tls inside one
 * record header made up here (type 22, version 0x0301: QUIC has no record
 * layer; a hello's record_version is therefore 0x0301, and the
 * fingerprints do not read it).
 *
 * Versions: 1 (0x00000001) and 2 (0x6b3343cf).  Keys come from each
 * packet's own DCID (a Retry changes it; the stream starts again from 0
 * with the same bytes).  Everything but the cryptography (OpenSSL's EVP:
 * HKDF, AES-128-ECB, AES-128-GCM) is hand-written: no Debian library reads
 * a QUIC Initial without being a QUIC stack.
 *
 * Threads: a struct fc_quic_hello belongs to one thread at a time (about
 * 42 KiB: the caller's); no global state.
 */
#ifndef FLOWCUT_FC_QUIC_H
#define FLOWCUT_FC_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fc_tls.h"

#define FC_QUIC_V1 0x00000001u
#define FC_QUIC_V2 0x6b3343cfu

struct fc_quic_hello {
	struct fc_tls_hello hello;	/* valid once fc_quic_feed() returned 0 */
	uint32_t version;		/* of the first Initial read */
	uint32_t packets;		/* Initial packets decrypted */
	/* the CRYPTO stream: bytes [0, FC_TLS_HELLO_MAX), which are had */
	uint8_t crypto[FC_TLS_HELLO_MAX];
	uint8_t had[FC_TLS_HELLO_MAX / 8];
	uint32_t fed;			/* bytes of it given to fc_tls */
	int rc;				/* the final answer, once not -EAGAIN */
	char err[160];			/* why, for -ENOMSG, -EBADMSG, -EMSGSIZE */
};

/* fc_quic_init - ready for a connection's first datagram. */
void fc_quic_init(struct fc_quic_hello *q);

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
 *   -EBADMSG   an Initial that does not hold together (lengths, a frame
 *              an Initial may not carry) or does not decrypt, or a
 *              malformed hello.
 *   -EMSGSIZE  CRYPTO bytes past 16 KiB, or a hello announcing more.
 *   -EIO       OpenSSL failed.
 * Every answer but -EAGAIN is final: later calls return it again.  On an
 * error q->err says what and where.
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
 * (RFC 9001 5.2, RFC 9369 3.3).  0, -ENOMSG (another version), -EIO.
 */
int fc_quic_client_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, uint8_t key[16],
			uint8_t iv[12], uint8_t hp[16]);

#endif
