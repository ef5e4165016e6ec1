/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_tls: the ClientHello, read in two steps.  fc_tls_feed() walks the
 * record layer and gathers the handshake message into h->msg; once it is
 * whole, hello_parse() reads its fields with a bounds-checked cursor.
 *
 *   record:   type(1)=22 | version(2) | length(2) <1..2^14> | fragment
 *   message:  type(1)=1 | length(3) | body
 *   body:     legacy_version(2) | random(32) | session_id<0..32>
 *             | cipher_suites<2..2^16-2> | compression_methods<1..2^8-1>
 *             | [ extensions<0..2^16-1> ]
 *   extension: type(2) | length(2) | data
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fc_tls.h"

#define RECORD_MAX 16384	/* a TLSPlaintext fragment, RFC 8446 5.1 */

static int
finish(struct fc_tls_hello *h, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(h->err, sizeof(h->err), fmt, ap);
	va_end(ap);
	h->phase = FC_TLS_FINISHED;
	h->rc = rc;
	return rc;
}

/* ---- the message body: a cursor that never reads past its end ---- */

struct cur {
	const uint8_t *msg;
	uint32_t off;	/* next byte, from the start of the message */
	uint32_t end;	/* one past the last byte this cursor may read */
};

static bool
cur_u8(struct cur *c, uint8_t *v)
{
	if (c->end - c->off < 1)
		return false;
	*v = c->msg[c->off++];
	return true;
}

static bool
cur_u16(struct cur *c, uint16_t *v)
{
	if (c->end - c->off < 2)
		return false;
	*v = (uint16_t)(c->msg[c->off] << 8 | c->msg[c->off + 1]);
	c->off += 2;
	return true;
}

/* A vector with a 1- or 2-byte length: its bytes as *b, and a cursor over them. */
static bool
cur_vec(struct cur *c, unsigned int lenbytes, struct fc_tls_bytes *b, struct cur *in)
{
	uint16_t n;
	uint8_t n8;

	if (lenbytes == 1) {
		if (!cur_u8(c, &n8))
			return false;
		n = n8;
	} else if (!cur_u16(c, &n)) {
		return false;
	}
	if (c->end - c->off < n)
		return false;
	b->off = c->off;
	b->len = n;
	if (in != NULL)
		*in = (struct cur){ c->msg, c->off, c->off + n };
	c->off += n;
	return true;
}

/* A list of 16-bit values with a 1- or 2-byte length in bytes; not empty. */
static int
u16_list(struct fc_tls_hello *h, struct cur *c, unsigned int lenbytes, struct fc_tls_u16s *l,
	 const char *what)
{
	struct fc_tls_bytes b;
	uint32_t at = c->off;

	if (!cur_vec(c, lenbytes, &b, NULL))
		return finish(h, -EBADMSG, "%s: length runs past its end (at byte %u of the hello)", what, at);
	if (b.len == 0 || b.len % 2 != 0)
		return finish(h, -EBADMSG, "%s: length %u is not a positive even number (at byte %u of the hello)",
			      what, b.len, at);
	l->off = b.off;
	l->n = b.len / 2;
	return 0;
}

/* The data of an extension must be used up exactly by what it holds. */
static int
ext_end(struct fc_tls_hello *h, const struct cur *in, uint16_t type)
{
	if (in->off != in->end)
		return finish(h, -EBADMSG,
			      "extension 0x%04x: %u bytes after its contents (at byte %u of the hello)", type,
			      in->end - in->off, in->off);
	return 0;
}

static int
ext_sni(struct fc_tls_hello *h, struct cur *in)
{
	struct fc_tls_bytes list;
	struct cur names;
	uint32_t at = in->off;

	if (!cur_vec(in, 2, &list, &names) || list.len == 0)
		return finish(h, -EBADMSG, "server_name: bad list length (at byte %u of the hello)", at);
	while (names.off < names.end) {
		struct fc_tls_bytes name;
		uint8_t type;

		at = names.off;
		if (!cur_u8(&names, &type) || !cur_vec(&names, 2, &name, NULL))
			return finish(h, -EBADMSG, "server_name: entry runs past the list (at byte %u of the hello)",
				      at);
		if (type != 0)
			continue;	/* not host_name: RFC 6066 lets later types pass */
		if (name.len == 0)
			return finish(h, -EBADMSG, "server_name: empty host_name (at byte %u of the hello)", at);
		if (h->sni.len == 0)
			h->sni = name;
	}
	h->has_sni = true;
	return ext_end(h, in, FC_TLS_EXT_SERVER_NAME);
}

static int
ext_alpn(struct fc_tls_hello *h, struct cur *in)
{
	struct cur names;
	uint32_t at = in->off;

	if (!cur_vec(in, 2, &h->alpn, &names) || h->alpn.len == 0)
		return finish(h, -EBADMSG, "alpn: bad list length (at byte %u of the hello)", at);
	while (names.off < names.end) {
		struct fc_tls_bytes name;

		at = names.off;
		if (!cur_vec(&names, 1, &name, NULL))
			return finish(h, -EBADMSG, "alpn: protocol name runs past the list (at byte %u of the hello)",
				      at);
		if (name.len == 0)
			return finish(h, -EBADMSG, "alpn: empty protocol name (at byte %u of the hello)", at);
	}
	h->has_alpn = true;
	return ext_end(h, in, FC_TLS_EXT_ALPN);
}

/* One extension's contents, for the types fc_tls reads; others are kept by type only. */
static int
ext_parse(struct fc_tls_hello *h, uint16_t type, struct cur *in)
{
	int rc;

	switch (type) {
	case FC_TLS_EXT_SERVER_NAME:
		return ext_sni(h, in);
	case FC_TLS_EXT_ALPN:
		return ext_alpn(h, in);
	case FC_TLS_EXT_SUPPORTED_GROUPS:
		rc = u16_list(h, in, 2, &h->groups, "supported_groups");
		break;
	case FC_TLS_EXT_SIGNATURE_ALGORITHMS:
		rc = u16_list(h, in, 2, &h->sigalgs, "signature_algorithms");
		break;
	case FC_TLS_EXT_SUPPORTED_VERSIONS:
		rc = u16_list(h, in, 1, &h->versions, "supported_versions");
		h->has_versions = rc == 0;
		break;
	case FC_TLS_EXT_EC_POINT_FORMATS: {
		uint32_t at = in->off;

		if (!cur_vec(in, 1, &h->point_formats, NULL) || h->point_formats.len == 0)
			return finish(h, -EBADMSG, "ec_point_formats: bad length (at byte %u of the hello)", at);
		rc = 0;
		break;
	}
	default:
		return 0;
	}
	return rc != 0 ? rc : ext_end(h, in, type);
}

static int
extensions_parse(struct fc_tls_hello *h, struct cur *c)
{
	uint8_t seen[65536 / 8];
	struct fc_tls_bytes block;
	struct cur exts;
	uint32_t at = c->off;

	if (!cur_vec(c, 2, &block, &exts))
		return finish(h, -EBADMSG, "extensions: length runs past the message (at byte %u of the hello)", at);
	memset(seen, 0, sizeof(seen));
	h->has_ext_block = true;
	while (exts.off < exts.end) {
		struct fc_tls_bytes data;
		struct cur in;
		uint16_t type;
		int rc;

		at = exts.off;
		if (!cur_u16(&exts, &type) || !cur_vec(&exts, 2, &data, &in))
			return finish(h, -EBADMSG,
				      "extensions: extension runs past the block (at byte %u of the hello)", at);
		if (seen[type / 8] & (1u << (type % 8)))
			return finish(h, -EBADMSG, "extension 0x%04x appears twice (at byte %u of the hello)", type,
				      at);
		seen[type / 8] |= (uint8_t)(1u << (type % 8));
		h->ext[h->next++] = type;
		rc = ext_parse(h, type, &in);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int
hello_parse(struct fc_tls_hello *h)
{
	struct fc_tls_bytes ciphers;
	struct cur c = { h->msg, 4, h->msg_len };
	uint32_t at;

	if (!cur_u16(&c, &h->legacy_version))
		return finish(h, -EBADMSG, "legacy_version: message ends (at byte %u of the hello)", c.off);
	at = c.off;
	if (c.end - c.off < 32)
		return finish(h, -EBADMSG, "random: message ends (at byte %u of the hello)", at);
	h->random = (struct fc_tls_bytes){ c.off, 32 };
	c.off += 32;
	at = c.off;
	if (!cur_vec(&c, 1, &h->session_id, NULL) || h->session_id.len > 32)
		return finish(h, -EBADMSG, "session_id: bad length (at byte %u of the hello)", at);
	at = c.off;
	if (!cur_vec(&c, 2, &ciphers, NULL) || ciphers.len == 0 || ciphers.len % 2 != 0)
		return finish(h, -EBADMSG,
			      "cipher_suites: length not a positive even number within the message (at byte %u of the hello)",
			      at);
	h->ciphers = (struct fc_tls_u16s){ ciphers.off, ciphers.len / 2 };
	at = c.off;
	if (!cur_vec(&c, 1, &h->compression, NULL) || h->compression.len == 0)
		return finish(h, -EBADMSG, "compression_methods: bad length (at byte %u of the hello)", at);
	if (c.off < c.end) {
		int rc = extensions_parse(h, &c);

		if (rc != 0)
			return rc;
		if (c.off != c.end)
			return finish(h, -EBADMSG, "%u bytes after the extensions (at byte %u of the hello)",
				      c.end - c.off, c.off);
	}
	h->phase = FC_TLS_FINISHED;
	h->rc = 0;
	return 0;
}

/* ---- the record layer ---- */

/* A record header is whole in h->hdr: check it and start its payload. */
static int
record_start(struct fc_tls_hello *h)
{
	uint16_t version = (uint16_t)(h->hdr[1] << 8 | h->hdr[2]);
	uint16_t len = (uint16_t)(h->hdr[3] << 8 | h->hdr[4]);
	uint32_t at = h->stream_off - 5;

	if (at == 0) {
		if (h->hdr[1] != 3)
			return finish(h, -ENOMSG, "not TLS: record version 0x%04x (at byte 0 of the stream)", version);
		h->record_version = version;
	} else if (h->hdr[1] != 3) {
		return finish(h, -EBADMSG, "record version 0x%04x (at byte %u of the stream)", version, at);
	}
	if (len == 0 || len > RECORD_MAX)
		return finish(h, -EBADMSG, "record length %u is not 1 to %u (at byte %u of the stream)", len,
			      RECORD_MAX, at);
	h->rec_left = len;
	h->phase = FC_TLS_RECORD_BODY;
	h->hdr_have = 0;
	return 0;
}

/* Bytes of the message arrived: decide what can be decided at once. */
static int
message_check(struct fc_tls_hello *h)
{
	if (h->msg[0] != FC_TLS_HS_CLIENT_HELLO)
		return finish(h, -ENOMSG, "handshake message type %u, not ClientHello (1)",
			      h->msg[0]);
	if (h->msg_len == 0 && h->msg_have >= 4) {
		uint32_t len = (uint32_t)h->msg[1] << 16 | (uint32_t)h->msg[2] << 8 | h->msg[3];

		if (len > FC_TLS_HELLO_BODY_MAX)
			return finish(h, -EMSGSIZE, "ClientHello body of %u bytes is over the cap of %u "
				      "(what OpenSSL's server accepts)", len, FC_TLS_HELLO_BODY_MAX);
		h->msg_len = len + 4;
	}
	return 0;
}

int
fc_tls_feed(struct fc_tls_hello *h, const uint8_t *data, size_t len, size_t *used)
{
	size_t i = 0;
	int rc = 0;

	while (h->phase != FC_TLS_FINISHED && i < len) {
		size_t take;

		if (h->phase == FC_TLS_RECORD_HEADER) {
			if (h->hdr_have == 0 && data[i] != FC_TLS_CONTENT_HANDSHAKE) {
				if (h->stream_off == 0)
					rc = finish(h, -ENOMSG,
						    "not a TLS handshake record: content type %u (at byte 0 of the stream)",
						    data[i]);
				else
					rc = finish(h, -EBADMSG,
						    "record of content type %u inside the ClientHello (at byte %u of the stream)",
						    data[i], h->stream_off);
				break;
			}
			take = 5u - h->hdr_have < len - i ? 5u - h->hdr_have : len - i;
			memcpy(h->hdr + h->hdr_have, data + i, take);
			h->hdr_have = (uint8_t)(h->hdr_have + take);
			h->stream_off += (uint32_t)take;
			i += take;
			if (h->hdr_have == 5)
				rc = record_start(h);
			continue;
		}
		/* FC_TLS_RECORD_BODY: up to the message's end (or its header's, while unknown) */
		take = (h->msg_len != 0 ? h->msg_len : 4) - h->msg_have;
		if (take > h->rec_left)
			take = h->rec_left;
		if (take > len - i)
			take = len - i;
		memcpy(h->msg + h->msg_have, data + i, take);
		h->msg_have += (uint32_t)take;
		h->rec_left = (uint16_t)(h->rec_left - take);
		h->stream_off += (uint32_t)take;
		i += take;
		rc = message_check(h);
		if (rc == 0 && h->msg_len != 0 && h->msg_have == h->msg_len)
			rc = hello_parse(h);
		else if (rc == 0 && h->rec_left == 0)
			h->phase = FC_TLS_RECORD_HEADER;
	}
	if (used != NULL)
		*used = i;
	if (h->phase == FC_TLS_FINISHED)
		return h->rc;
	return -EAGAIN;
}

bool
fc_tls_alpn_next(const struct fc_tls_hello *h, unsigned int *pos, struct fc_tls_bytes *name)
{
	unsigned int off = h->alpn.off + *pos;

	if (!h->has_alpn || off >= h->alpn.off + h->alpn.len)
		return false;
	name->off = off + 1;
	name->len = h->msg[off];
	*pos += 1u + name->len;
	return true;
}

uint16_t
fc_tls_version(const struct fc_tls_hello *h)
{
	uint16_t best = 0;

	for (unsigned int i = 0; h->has_versions && i < h->versions.n; i++) {
		uint16_t v = fc_tls_u16_at(h, h->versions, i);

		if (!fc_tls_is_grease(v) && v > best)
			best = v;
	}
	return best != 0 ? best : h->legacy_version;
}

void
fc_tls_init(struct fc_tls_hello *h)
{
	/* everything before the message buffer; it and ext[] are written before they are read */
	memset(h, 0, offsetof(struct fc_tls_hello, msg));
	h->phase = FC_TLS_RECORD_HEADER;
}
