/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quic: see fc_quic.h.  The client's Initial keys (HKDF), header
 * protection removed (AES-128-ECB), the payload opened (AES-128-GCM),
 * the frames read, the CRYPTO stream put in order and handed to fc_tls.
 */
#include "fc_quic.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#define CID_MAX 20
#define TAG_LEN 16
#define SAMPLE_LEN 16

/* RFC 9001 5.2 and RFC 9369 3.3.1: the versions' initial salts */
static const uint8_t salt_v1[20] = { 0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
				     0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a };
static const uint8_t salt_v2[20] = { 0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
				     0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9 };

static int
fail(struct fc_quic_hello *q, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(q->err, sizeof(q->err), fmt, ap);
	va_end(ap);
	q->rc = rc;
	return rc;
}

void
fc_quic_init(struct fc_quic_hello *q)
{
	fc_tls_init(&q->hello);
	q->version = 0;
	q->packets = 0;
	memset(q->had, 0, sizeof(q->had));
	q->fed = 0;
	q->rc = -EAGAIN;
	q->err[0] = '\0';
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A variable-length integer (RFC 9000 16) at p[*pos], below end: 0, or -1 (not whole). */
static int
varint(const uint8_t *p, size_t end, size_t *pos, uint64_t *v)
{
	size_t n;

	if (*pos >= end)
		return -1;
	n = (size_t)1 << (p[*pos] >> 6);
	if (end - *pos < n)
		return -1;
	*v = p[*pos] & 0x3f;
	for (size_t i = 1; i < n; i++)
		*v = *v << 8 | p[*pos + i];
	*pos += n;
	return 0;
}

/* ---- keys ---- */

static int
hkdf(int mode, const uint8_t *key, size_t klen, const uint8_t *salt, size_t slen,
     const uint8_t *info, size_t ilen, uint8_t *out, size_t olen)
{
	EVP_KDF *kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	EVP_KDF_CTX *ctx = kdf ? EVP_KDF_CTX_new(kdf) : NULL;
	OSSL_PARAM p[6], *at = p;
	int ok;

	*at++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0);
	*at++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	if (salt != NULL)
		*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, slen);
	if (info != NULL)
		*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, ilen);
	*at = OSSL_PARAM_construct_end();
	ok = ctx != NULL && EVP_KDF_derive(ctx, out, olen, p) > 0;
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	return ok ? 0 : -EIO;
}

/* HKDF-Expand-Label (RFC 8446 7.1) with an empty context. */
static int
expand_label(const uint8_t secret[32], const char *label, uint8_t *out, size_t olen)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t n = strlen(label), i = 0;

	info[i++] = (uint8_t)(olen >> 8);
	info[i++] = (uint8_t)olen;
	info[i++] = (uint8_t)(6 + n);
	memcpy(info + i, "tls13 ", 6);
	i += 6;
	memcpy(info + i, label, n);
	i += n;
	info[i++] = 0;
	return hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, secret, 32, NULL, 0, info, i, out, olen);
}

int
fc_quic_client_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, uint8_t key[16],
		    uint8_t iv[12], uint8_t hp[16])
{
	bool v2 = version == FC_QUIC_V2;
	uint8_t initial[32], client[32];
	int rc;

	if (version != FC_QUIC_V1 && !v2)
		return -ENOMSG;
	rc = hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, dcid, dcid_len, v2 ? salt_v2 : salt_v1, 20,
		  NULL, 0, initial, 32);
	if (rc == 0)
		rc = expand_label(initial, "client in", client, 32);
	if (rc == 0)
		rc = expand_label(client, v2 ? "quicv2 key" : "quic key", key, 16);
	if (rc == 0)
		rc = expand_label(client, v2 ? "quicv2 iv" : "quic iv", iv, 12);
	if (rc == 0)
		rc = expand_label(client, v2 ? "quicv2 hp" : "quic hp", hp, 16);
	return rc;
}

/* ---- the CRYPTO stream ---- */

static bool
had(const struct fc_quic_hello *q, uint32_t i)
{
	return q->had[i / 8] >> (i % 8) & 1;
}

/* What is in order now goes to fc_tls, in a record header of its own. */
static int
advance(struct fc_quic_hello *q)
{
	uint32_t end = q->fed, msg_len;
	int rc;

	while (end < FC_TLS_HELLO_MAX && had(q, end))
		end++;
	if (end < 4)
		return -EAGAIN;
	msg_len = 4 + ((uint32_t)q->crypto[1] << 16 | (uint32_t)q->crypto[2] << 8 | q->crypto[3]);
	if (q->fed == 0) {
		uint8_t rec[5] = { 22, 3, 1, (uint8_t)(msg_len >> 8), (uint8_t)msg_len };

		if (q->crypto[0] != FC_TLS_HS_CLIENT_HELLO)
			return fail(q, -ENOMSG, "the CRYPTO stream starts with handshake type %u, "
				    "not a ClientHello", q->crypto[0]);
		if (msg_len > FC_TLS_HELLO_MAX)
			return fail(q, -EMSGSIZE, "the ClientHello announces %u bytes, over %u",
				    msg_len, FC_TLS_HELLO_MAX);
		rc = fc_tls_feed(&q->hello, rec, sizeof(rec), NULL);
		if (rc != -EAGAIN)
			return fail(q, rc, "%s", q->hello.err);
	}
	if (end > msg_len)
		end = msg_len;
	if (end <= q->fed)
		return -EAGAIN;
	rc = fc_tls_feed(&q->hello, q->crypto + q->fed, end - q->fed, NULL);
	q->fed = end;
	if (rc == 0) {
		q->rc = 0;
		return 0;
	}
	if (rc != -EAGAIN)
		return fail(q, rc, "%s", q->hello.err);
	return -EAGAIN;
}

int
fc_quic_frames(struct fc_quic_hello *q, const uint8_t *p, size_t len)
{
	size_t pos = 0;

	if (q->rc != -EAGAIN)
		return q->rc;
	while (pos < len) {
		size_t at = pos;
		uint64_t type, a, b, n;

		if (varint(p, len, &pos, &type) != 0)
			return fail(q, -EBADMSG, "a frame type cut short at byte %zu", at);
		switch (type) {
		case 0x00:	/* PADDING */
		case 0x01:	/* PING */
			break;
		case 0x02:	/* ACK: largest, delay, range count, first range, ranges */
		case 0x03:	/* ... and three ECN counts */
			if (varint(p, len, &pos, &a) || varint(p, len, &pos, &a) ||
			    varint(p, len, &pos, &n) || varint(p, len, &pos, &a))
				return fail(q, -EBADMSG, "an ACK frame cut short at byte %zu", at);
			if (n > len)
				return fail(q, -EBADMSG, "an ACK frame of %llu ranges at byte %zu",
					    (unsigned long long)n, at);
			for (uint64_t i = 0; i < n; i++)	/* gap, range */
				if (varint(p, len, &pos, &a) || varint(p, len, &pos, &b))
					return fail(q, -EBADMSG, "an ACK frame cut short at byte %zu",
						    at);
			if (type == 0x03 && (varint(p, len, &pos, &a) || varint(p, len, &pos, &a) ||
					     varint(p, len, &pos, &a)))
				return fail(q, -EBADMSG, "an ACK frame's ECN counts cut short at "
					    "byte %zu", at);
			break;
		case 0x06:	/* CRYPTO: offset, length, data */
			if (varint(p, len, &pos, &a) || varint(p, len, &pos, &n) || n > len - pos)
				return fail(q, -EBADMSG, "a CRYPTO frame cut short at byte %zu", at);
			if (a > FC_TLS_HELLO_MAX || n > FC_TLS_HELLO_MAX - a)
				return fail(q, -EMSGSIZE, "CRYPTO bytes up to %llu, over %u",
					    (unsigned long long)(a + n), FC_TLS_HELLO_MAX);
			memcpy(q->crypto + a, p + pos, n);
			for (uint64_t i = a; i < a + n; i++)
				q->had[i / 8] |= (uint8_t)(1u << (i % 8));
			pos += n;
			break;
		case 0x1c:	/* CONNECTION_CLOSE: the client gives up; nothing more here */
			return fail(q, -ENOMSG, "the client closed the connection (CONNECTION_CLOSE)");
		default:
			return fail(q, -EBADMSG, "frame type 0x%llx at byte %zu is not allowed in an "
				    "Initial", (unsigned long long)type, at);
		}
	}
	return advance(q);
}

/* ---- packets ---- */

/* AES-128-ECB of one block: the header protection mask. */
static int
hp_mask(const uint8_t hp[16], const uint8_t sample[16], uint8_t mask[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, ok;

	ok = c != NULL && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL) > 0 &&
	     EVP_CIPHER_CTX_set_padding(c, 0) > 0 &&
	     EVP_EncryptUpdate(c, mask, &n, sample, SAMPLE_LEN) > 0 && n == SAMPLE_LEN;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -EIO;
}

/* AES-128-GCM open: 1 opened, 0 the tag does not match, -EIO. */
static int
open_gcm(const uint8_t key[16], const uint8_t nonce[12], const uint8_t *aad, size_t aad_len,
	 const uint8_t *ct, size_t ct_len, const uint8_t tag[16], uint8_t *out)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, rc = -EIO;

	if (c != NULL && EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, nonce) > 0 &&
	    EVP_DecryptUpdate(c, NULL, &n, aad, (int)aad_len) > 0 &&
	    EVP_DecryptUpdate(c, out, &n, ct, (int)ct_len) > 0 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)tag) > 0)
		rc = EVP_DecryptFinal_ex(c, out + n, &n) > 0 ? 1 : 0;
	EVP_CIPHER_CTX_free(c);
	return rc;
}

/* One Initial packet, p[0, len): its header (pn at pn_off), decrypted, its frames read. */
static int
initial(struct fc_quic_hello *q, const uint8_t *p, size_t pn_off, size_t len, uint32_t version,
	const uint8_t *dcid, size_t dcid_len)
{
	uint8_t key[16], iv[12], hp[16], mask[16], hdr[1 + 4 + 1 + CID_MAX + 1 + CID_MAX + 8 + 8 + 4];
	uint8_t *plain = NULL, *aad = NULL;
	size_t pn_len, ct_len;
	int rc;

	if (len < pn_off + 4 + SAMPLE_LEN)
		return fail(q, -EBADMSG, "an Initial of %zu bytes: too short for its sample", len);
	rc = fc_quic_client_keys(version, dcid, dcid_len, key, iv, hp);
	if (rc == 0)
		rc = hp_mask(hp, p + pn_off + 4, mask);
	if (rc != 0)
		return fail(q, -EIO, "OpenSSL could not derive the Initial keys");
	pn_len = (size_t)((p[0] ^ mask[0]) & 3) + 1;
	if (len < pn_off + pn_len + TAG_LEN)
		return fail(q, -EBADMSG, "an Initial of %zu bytes: too short for its tag", len);
	/* the header as sent, unprotected: the AEAD's associated data */
	aad = pn_off + pn_len <= sizeof(hdr) ? hdr : malloc(pn_off + pn_len);
	if (aad == NULL)
		return fail(q, -EIO, "out of memory");
	memcpy(aad, p, pn_off + pn_len);
	aad[0] ^= mask[0] & 0x0f;
	for (size_t i = 0; i < pn_len; i++) {
		aad[pn_off + i] ^= mask[1 + i];
		iv[12 - pn_len + i] ^= aad[pn_off + i];	/* the nonce: iv XOR the packet number */
	}
	ct_len = len - pn_off - pn_len - TAG_LEN;
	plain = malloc(ct_len + 1);
	rc = plain == NULL ? -EIO
			   : open_gcm(key, iv, aad, pn_off + pn_len, p + pn_off + pn_len, ct_len,
				      p + len - TAG_LEN, plain);
	if (aad != hdr)
		free(aad);
	if (rc == 1) {
		q->packets++;
		rc = fc_quic_frames(q, plain, ct_len);
	} else {
		rc = rc == 0 ? fail(q, -EBADMSG, "an Initial (version 0x%08x) does not decrypt with "
				    "the keys of its DCID", version)
			     : fail(q, -EIO, "OpenSSL could not open an Initial");
	}
	free(plain);
	return rc;
}

bool
fc_quic_is_initial(const uint8_t *d, size_t len)
{
	uint32_t v;

	if (len < 5 || !(d[0] & 0x80))
		return false;
	v = be32(d + 1);
	return (v == FC_QUIC_V1 && ((d[0] >> 4) & 3) == 0) ||
	       (v == FC_QUIC_V2 && ((d[0] >> 4) & 3) == 1);
}

int
fc_quic_feed(struct fc_quic_hello *q, const uint8_t *d, size_t len)
{
	size_t pos = 0;
	int rc = -EAGAIN;

	if (q->rc != -EAGAIN)
		return q->rc;
	if (!fc_quic_is_initial(d, len))
		return fail(q, -ENOMSG, "not a QUIC Initial of version 1 or 2");
	/* each packet of the datagram, up to one that is not a long header */
	while (pos < len && (d[pos] & 0x80) && rc == -EAGAIN) {
		const uint8_t *p = d + pos, *dcid;
		size_t at = 0, n = len - pos, dcid_len;
		uint64_t tlen, plen;
		uint32_t v;

		if (n < 7)
			return fail(q, -EBADMSG, "a long header cut short at byte %zu", pos);
		v = be32(p + 1);
		if (v != FC_QUIC_V1 && v != FC_QUIC_V2)
			break;	/* another version coalesced: not read */
		if (q->version == 0)
			q->version = v;
		dcid_len = p[5];
		at = 6;
		if (dcid_len > CID_MAX || at + dcid_len + 1 > n)
			return fail(q, -EBADMSG, "a DCID of %zu bytes at byte %zu", dcid_len, pos);
		dcid = p + at;
		at += dcid_len;
		if (p[at] > CID_MAX || at + 1 + p[at] > n)
			return fail(q, -EBADMSG, "a SCID of %u bytes at byte %zu", p[at], pos);
		at += 1 + (size_t)p[at];
		if (!fc_quic_is_initial(p, n)) {
			/* 0-RTT or Handshake: skipped by its length; a Retry has none */
			if (((p[0] >> 4) & 3) == (v == FC_QUIC_V1 ? 3 : 0))
				break;
			if (varint(p, n, &at, &plen) != 0 || plen > n - at)
				return fail(q, -EBADMSG, "a packet's length runs past the datagram "
					    "at byte %zu", pos);
			pos += at + (size_t)plen;
			continue;
		}
		if (varint(p, n, &at, &tlen) != 0 || tlen > n - at)
			return fail(q, -EBADMSG, "an Initial's token runs past the datagram at "
				    "byte %zu", pos);
		at += (size_t)tlen;
		if (varint(p, n, &at, &plen) != 0 || plen > n - at)
			return fail(q, -EBADMSG, "an Initial's length runs past the datagram at "
				    "byte %zu", pos);
		rc = initial(q, p, at, at + (size_t)plen, v, dcid, dcid_len);
		pos += at + (size_t)plen;
	}
	return rc;
}
