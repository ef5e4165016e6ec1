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
 * in order from 0 are the handshake message, fed to fc_tls in records
 * made up here (type 22, version 0x0301, 16 KiB at most each: QUIC has no
 * record layer; a hello's record_version is therefore 0x0301, and the
 * fingerprints do not read it).  The CRYPTO stream is read up to the
 * largest hello fc_tls reads (FC_TLS_HELLO_MAX bytes).
 *
 * Versions: 1 (0x00000001) and 2 (0x6b3343cf).  Keys come from each
 * packet's own DCID (a Retry changes it; the stream starts again from 0
 * with the same bytes); they are derived once a connection and kept in
 * struct fc_quic_hello with the version and DCID they are for, derived
 * again only for another.  Everything but the cryptography (OpenSSL's
 * EVP: HKDF, AES-128-ECB, AES-128-GCM) is hand-written: no Debian library
 * reads a QUIC Initial without being a QUIC stack.
 *
 * Initials a datagram: at most FC_QUIC_INITIALS_MAX.  RFC 9000 12.2 lets a
 * sender coalesce packets, and clients coalesce across encryption levels
 * (an Initial, then 0-RTT or Handshake packets): Chrome's QUIC (quiche's
 * QuicCoalescedPacket) refuses to coalesce two packets of one encryption
 * level, quic-go packs at most one Initial, one Handshake and one 0-RTT or
 * 1-RTT packet a datagram, and a client's Initial is padded to fill its
 * datagram (RFC 9000 14.1), which leaves no room for a second.  One is
 * what clients send; the cap allows one more, for a stack not read here,
 * at the cost of one more AES-GCM open.  The Initials of a datagram are
 * counted from their headers before any is decrypted: a datagram with
 * more costs a walk of its headers, not 37 decryptions (issue 29).
 *
 * Threads: a struct fc_quic_hello belongs to one thread at a time; any
 * number of threads may each read their own.  The ciphers and the KDF are
 * fetched from OpenSSL's default library context once a process, at the
 * first call (pthread_once), and kept to its end.  Nothing to shut down.
 *
 * Memory: the struct is about 305 KiB (its fc_tls_hello, and the CRYPTO
 * stream with its bitmap: room for the largest hello), the caller's; one is
 * malloc'd per connection being read.  As for fc_tls_hello, pages never
 * written cost nothing: fc_quic_init() writes a few hundred bytes, and a
 * hello of 2 KiB touches a few pages of the stream and of the hello.
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
