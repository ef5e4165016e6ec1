/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_tls: a TLS ClientHello read from the client's bytes of a connection,
 * as TCP delivers them (TLS records, RFC 8446 section 5.1), given whole or
 * in pieces of any size.
 *
 * The record layer may split the ClientHello across records, and the caller
 * may split the records anywhere: feed what arrived, and the answer says
 * whether more is needed, the stream is not a ClientHello, the hello is
 * malformed (with what was wrong, and where), or it is complete.  The hello
 * is read whole up to the size OpenSSL's server accepts (a body of
 * FC_TLS_HELLO_BODY_MAX bytes); one announcing more is refused before it
 * is buffered.  fc_tls_feed's answers are 0 or a negative errno, listed
 * beside it; every answer but -EAGAIN is final.
 *
 * The parser reports what is on the wire: every value, GREASE (RFC 8701)
 * included, in the order sent.  What to skip is the fingerprints' business
 * (fc_ja.h); fc_tls_is_grease() tells a GREASE value.  Lists are views
 * into the retained message, read with the accessors below: nothing is
 * copied and no list can overflow a fixed array.
 *
 * Threads: a struct fc_tls_hello belongs to one thread at a time; there is
 * no global state.  No allocation: the caller owns the struct and may reuse
 * it after fc_tls_init().  Nothing to shut down.  The struct is about
 * 161 KiB, room for the largest hello; callers malloc one per connection
 * being read, and a page never written costs no memory.
 *
 * Design notes (what a hello touches of the struct): inspect/README.md.
 */
#ifndef FLOWCUT_FC_TLS_H
#define FLOWCUT_FC_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The largest ClientHello body read: OpenSSL's server accepts no more
 * (CLIENT_HELLO_MAX_LENGTH, ssl/statem/statem_srvr.c, the length in the
 * handshake header), and its fields can make no more: legacy_version 2,
 * random 32, session_id 1 + 32, cipher_suites 2 + 65534, compression 1 +
 * 255, extensions 2 + 65535.
 */
#define FC_TLS_HELLO_BODY_MAX 131396
/* The largest message: type (1), length (3) and that body. */
#define FC_TLS_HELLO_MAX (4 + FC_TLS_HELLO_BODY_MAX)
/* Every extension takes at least 4 bytes of the extensions block (at most 65535). */
#define FC_TLS_EXT_MAX (65535 / 4)

#define FC_TLS_CONTENT_HANDSHAKE 22
#define FC_TLS_HS_CLIENT_HELLO   1

/* Extension types fc_tls reads the contents of (IANA TLS ExtensionType). */
#define FC_TLS_EXT_SERVER_NAME          0x0000
#define FC_TLS_EXT_SUPPORTED_GROUPS     0x000a
#define FC_TLS_EXT_EC_POINT_FORMATS     0x000b
#define FC_TLS_EXT_SIGNATURE_ALGORITHMS 0x000d
#define FC_TLS_EXT_ALPN                 0x0010
#define FC_TLS_EXT_SUPPORTED_VERSIONS   0x002b

/* n big-endian 16-bit values at msg + off. */
struct fc_tls_u16s {
	uint32_t off;
	uint32_t n;
};

/* len bytes at msg + off. */
struct fc_tls_bytes {
	uint32_t off;
	uint32_t len;
};

/* Where the reading of the records stands (internal to fc_tls.c). */
enum fc_tls_phase {
	FC_TLS_RECORD_HEADER,	/* reading a 5-byte record header */
	FC_TLS_RECORD_BODY,	/* copying a handshake record's payload */
	FC_TLS_FINISHED,	/* an answer other than -EAGAIN was given */
};

struct fc_tls_hello {
	/* ---- the hello, valid once fc_tls_feed() returned 0 ---- */
	uint16_t record_version;	/* of the first record */
	uint16_t legacy_version;	/* ClientHello.legacy_version */
	struct fc_tls_bytes random;	/* 32 bytes */
	struct fc_tls_bytes session_id;
	struct fc_tls_u16s ciphers;	/* cipher_suites, as sent */
	struct fc_tls_bytes compression;
	uint16_t next;			/* number of extensions; their types in ext[] */
	bool has_ext_block;		/* the extensions field is present */
	bool has_sni;			/* a server_name extension is present */
	bool has_alpn;			/* an ALPN extension is present */
	bool has_versions;		/* a supported_versions extension is present */
	struct fc_tls_bytes sni;	/* the first host_name; len 0 if none */
	struct fc_tls_bytes alpn;	/* the names of ProtocolNameList, each after its length byte */
	struct fc_tls_u16s versions;	/* supported_versions */
	struct fc_tls_u16s groups;	/* supported_groups */
	struct fc_tls_bytes point_formats; /* ec_point_formats */
	struct fc_tls_u16s sigalgs;	/* signature_algorithms */

	/* ---- why the answer was an error: "what: detail (at byte N)" ---- */
	char err[160];

	/* ---- the reader's state ---- */
	enum fc_tls_phase phase;
	int rc;				/* the final answer, in FC_TLS_FINISHED */
	uint8_t hdr[5];			/* the record header being read */
	uint8_t hdr_have;
	uint16_t rec_left;		/* payload bytes left in this record */
	uint32_t stream_off;		/* bytes of the stream consumed */
	uint32_t msg_have;		/* bytes of the message held */
	uint32_t msg_len;		/* 4 + the handshake length, once known */
	uint8_t msg[FC_TLS_HELLO_MAX];	/* the handshake message */

	/* ---- last: written before read, so fc_tls_init() leaves it untouched ---- */
	uint16_t ext[FC_TLS_EXT_MAX];	/* the extensions' types, as sent (next of them) */
};

/* fc_tls_init - make h ready for the first byte of a stream. */
void fc_tls_init(struct fc_tls_hello *h);

/*
 * fc_tls_feed - give the parser the next len bytes of the client's stream.
 *
 * Returns:
 *   0          the ClientHello is complete and valid: read it from h.  Bytes
 *              after it (in this call or later ones) are not looked at;
 *              *used (if not NULL) says how many of these len were its.
 *   -EAGAIN    every byte was taken; the hello needs more.
 *   -ENOMSG    the stream is not a TLS ClientHello: its first record is not
 *              a TLS handshake record (SSL 2.0's hello included), or the
 *              handshake message is of another type.
 *   -EMSGSIZE  the hello announces a body of more than FC_TLS_HELLO_BODY_MAX
 *              bytes (more than OpenSSL's server accepts).
 *   -EBADMSG   the records or the hello are malformed.
 * Every answer but -EAGAIN is final: later calls return it again without
 * reading.  On -ENOMSG, -EMSGSIZE and -EBADMSG, h->err says what was wrong
 * and at which byte of the stream (or of the message).
 */
int fc_tls_feed(struct fc_tls_hello *h, const uint8_t *data, size_t len, size_t *used);

/* fc_tls_is_grease - true for the sixteen GREASE values 0x0a0a..0xfafa (RFC 8701). */
static inline bool
fc_tls_is_grease(uint16_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* fc_tls_u16_at - the i-th value (i < l.n) of a list of h. */
static inline uint16_t
fc_tls_u16_at(const struct fc_tls_hello *h, struct fc_tls_u16s l, unsigned int i)
{
	const uint8_t *p = h->msg + l.off + 2 * i;

	return (uint16_t)(p[0] << 8 | p[1]);
}

/* fc_tls_bytes_ptr - the first byte of b within h. */
static inline const uint8_t *
fc_tls_bytes_ptr(const struct fc_tls_hello *h, struct fc_tls_bytes b)
{
	return h->msg + b.off;
}

/*
 * fc_tls_alpn_next - walk the ALPN protocol names: *pos starts at 0; each
 * call sets *name to the next one and returns true, false after the last.
 * The names were checked when the hello was read.
 */
bool fc_tls_alpn_next(const struct fc_tls_hello *h, unsigned int *pos, struct fc_tls_bytes *name);

/*
 * fc_tls_version - the version the client offers at most: the highest
 * non-GREASE value of supported_versions if there is one, legacy_version
 * otherwise (the rule JA4 follows).
 */
uint16_t fc_tls_version(const struct fc_tls_hello *h);

#endif
