/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quic: see fc_quic.h.  The client's Initial keys (HKDF), header
 * protection removed (AES-128-ECB), the payload opened (AES-128-GCM),
 * the frames read, the CRYPTO stream put in order and handed to fc_tls.
 * A datagram is walked twice: its Initials counted from their headers
 * (over the cap: refused, nothing decrypted), then each one read.
 */
#include "fc_quic.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>

#define TAG_LEN 16
#define SAMPLE_LEN 16
#define RECORD_MAX 16384	/* the records made up for fc_tls: a TLSPlaintext's most (RFC 8446 5.1) */

/* RFC 9001 5.2 and RFC 9369 3.3.1: the versions' initial salts */
static const uint8_t salt_v1[20] = { 0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
				     0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a };
static const uint8_t salt_v2[20] = { 0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
				     0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9 };

/*
 * OpenSSL's algorithms, fetched once a process and kept: an implicit fetch
 * (EVP_aes_128_gcm() and the like, or EVP_KDF_fetch a call) costs
 * microseconds each time, most of what an Initial cost.  A
 * fetched algorithm may be used by any number of threads at once.
 */
static pthread_once_t algs_once = PTHREAD_ONCE_INIT;
static EVP_CIPHER *alg_ecb, *alg_gcm;
static EVP_KDF *alg_hkdf;

static void
algs_fetch(void)
{
	alg_ecb = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	alg_gcm = EVP_CIPHER_fetch(NULL, "AES-128-GCM", NULL);
	alg_hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
}

/* The algorithms: true when OpenSSL has all three. */
static bool
algs(void)
{
	pthread_once(&algs_once, algs_fetch);
	return alg_ecb != NULL && alg_gcm != NULL && alg_hkdf != NULL;
}

int
fc_quic_ready(void)
{
	return algs() ? 0 : -EIO;
}

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
	q->keys.version = 0;
	q->fed = 0;
	q->had_len = 0;		/* had[] is zeroed as the stream grows */
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

/* Are the 8 bytes at p all zero? */
static bool
zero8(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, sizeof(w));
	return w == 0;
}

/* ---- keys ---- */

/* One HKDF step with ctx (its digest set): the key, salt and info replace those of the last. */
static int
hkdf(EVP_KDF_CTX *ctx, int mode, const uint8_t *key, size_t klen, const uint8_t *salt,
     size_t slen, const uint8_t *info, size_t ilen, uint8_t *out, size_t olen)
{
	OSSL_PARAM p[5], *at = p;

	*at++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, klen);
	if (salt != NULL)
		*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, slen);
	if (info != NULL)
		*at++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, ilen);
	*at = OSSL_PARAM_construct_end();
	return EVP_KDF_derive(ctx, out, olen, p) > 0 ? 0 : -EIO;
}

/*
 * HKDF-Expand-Label (RFC 8446 7.1) with an empty context, of a secret
 * (EXPAND_ONLY), or of HKDF-Extract(salt, key) in the same step
 * (EXTRACT_AND_EXPAND, with the 20-byte salt).
 */
static int
expand_label(EVP_KDF_CTX *ctx, int mode, const uint8_t *key, size_t klen, const uint8_t *salt,
	     const char *label, uint8_t *out, size_t olen)
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
	return hkdf(ctx, mode, key, klen, salt, 20, info, i, out, olen);
}

int
fc_quic_client_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len, uint8_t key[16],
		    uint8_t iv[12], uint8_t hp[16])
{
	OSSL_PARAM sha256[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA256", 0),
		OSSL_PARAM_construct_end(),
	};
	bool v2 = version == FC_QUIC_V2;
	uint8_t client[32];
	EVP_KDF_CTX *ctx;
	int rc = -EIO;

	if (version != FC_QUIC_V1 && !v2)
		return -ENOMSG;
	/* one context for the four steps: its digest looked up once */
	ctx = algs() ? EVP_KDF_CTX_new(alg_hkdf) : NULL;
	if (ctx != NULL && EVP_KDF_CTX_set_params(ctx, sha256) > 0)
		rc = expand_label(ctx, EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, dcid, dcid_len,
				  v2 ? salt_v2 : salt_v1, "client in", client, 32);
	if (rc == 0)
		rc = expand_label(ctx, EVP_KDF_HKDF_MODE_EXPAND_ONLY, client, 32, NULL,
				  v2 ? "quicv2 key" : "quic key", key, 16);
	if (rc == 0)
		rc = expand_label(ctx, EVP_KDF_HKDF_MODE_EXPAND_ONLY, client, 32, NULL,
				  v2 ? "quicv2 iv" : "quic iv", iv, 12);
	if (rc == 0)
		rc = expand_label(ctx, EVP_KDF_HKDF_MODE_EXPAND_ONLY, client, 32, NULL,
				  v2 ? "quicv2 hp" : "quic hp", hp, 16);
	EVP_KDF_CTX_free(ctx);
	return rc;
}

/* ---- the CRYPTO stream ---- */

static bool
had(const struct fc_quic_hello *q, uint32_t i)
{
	return i / 8 < q->had_len && (q->had[i / 8] >> (i % 8) & 1);
}

/* Bytes [a, a + n) of the stream are held (a + n <= FC_TLS_HELLO_MAX). */
static void
had_set(struct fc_quic_hello *q, uint32_t a, uint32_t n)
{
	uint32_t need = (a + n + 7) / 8;

	if (need > q->had_len) {
		memset(q->had + q->had_len, 0, need - q->had_len);
		q->had_len = need;
	}
	for (uint32_t i = a; i < a + n; i++)
		q->had[i / 8] |= (uint8_t)(1u << (i % 8));
}

/* What is in order now goes to fc_tls, in records of RECORD_MAX bytes at most made up here. */
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
		if (q->crypto[0] != FC_TLS_HS_CLIENT_HELLO)
			return fail(q, -ENOMSG, "the CRYPTO stream starts with handshake type %u, "
				    "not a ClientHello", q->crypto[0]);
		if (msg_len - 4 > FC_TLS_HELLO_BODY_MAX)
			return fail(q, -EMSGSIZE, "the ClientHello announces a body of %u bytes, "
				    "over the cap of %u", msg_len - 4, FC_TLS_HELLO_BODY_MAX);
	}
	if (end > msg_len)
		end = msg_len;
	while (q->fed < end) {
		uint32_t in_rec = q->fed % RECORD_MAX, take = RECORD_MAX - in_rec;

		if (in_rec == 0) {
			uint32_t rlen = msg_len - q->fed < RECORD_MAX ? msg_len - q->fed : RECORD_MAX;
			uint8_t rec[5] = { 22, 3, 1, (uint8_t)(rlen >> 8), (uint8_t)rlen };

			rc = fc_tls_feed(&q->hello, rec, sizeof(rec), NULL);
			if (rc != -EAGAIN)
				return fail(q, rc, "%s", q->hello.err);
		}
		if (take > end - q->fed)
			take = end - q->fed;
		rc = fc_tls_feed(&q->hello, q->crypto + q->fed, take, NULL);
		q->fed += take;
		if (rc == 0) {
			q->rc = 0;
			return 0;
		}
		if (rc != -EAGAIN)
			return fail(q, rc, "%s", q->hello.err);
	}
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
		case 0x00:	/* PADDING: the run of them at once (a client pads to 1200 bytes) */
			while (len - pos >= 8 && zero8(p + pos))
				pos += 8;
			while (pos < len && p[pos] == 0x00)
				pos++;
			break;
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
				return fail(q, -EMSGSIZE, "CRYPTO bytes up to %llu, over the cap of %u",
					    (unsigned long long)(a + n), FC_TLS_HELLO_MAX);
			memcpy(q->crypto + a, p + pos, n);
			had_set(q, (uint32_t)a, (uint32_t)n);
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
hp_mask(EVP_CIPHER_CTX *c, const uint8_t hp[16], const uint8_t sample[16], uint8_t mask[16])
{
	int n = 0;

	if (EVP_EncryptInit_ex2(c, alg_ecb, hp, NULL, NULL) > 0 &&
	    EVP_CIPHER_CTX_set_padding(c, 0) > 0 &&
	    EVP_EncryptUpdate(c, mask, &n, sample, SAMPLE_LEN) > 0 && n == SAMPLE_LEN)
		return 0;
	return -EIO;
}

/* AES-128-GCM open: 1 opened, 0 the tag does not match, -EIO. */
static int
open_gcm(EVP_CIPHER_CTX *c, const uint8_t key[16], const uint8_t nonce[12], const uint8_t *aad,
	 size_t aad_len, const uint8_t *ct, size_t ct_len, const uint8_t tag[16], uint8_t *out)
{
	int n = 0;

	if (EVP_DecryptInit_ex2(c, alg_gcm, key, nonce, NULL) > 0 &&
	    EVP_DecryptUpdate(c, NULL, &n, aad, (int)aad_len) > 0 &&
	    EVP_DecryptUpdate(c, out, &n, ct, (int)ct_len) > 0 &&
	    EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LEN, (void *)tag) > 0)
		return EVP_DecryptFinal_ex(c, out + n, &n) > 0 ? 1 : 0;
	return -EIO;
}

/* One long-header packet of a datagram, as its header says. */
struct packet {
	uint32_t version;
	const uint8_t *dcid;
	size_t dcid_len;
	size_t pn_off;		/* an Initial's packet number, from the packet's first byte */
	size_t len;		/* the whole packet's */
};

enum packet_kind {
	PKT_END,	/* the walk ends here: a short header, another version, a Retry */
	PKT_INITIAL,	/* an Initial of version 1 or 2 */
	PKT_OTHER,	/* 0-RTT or Handshake: stepped over by its length */
	PKT_BAD,	/* a header that does not hold together: why says what */
};

/* The header of the packet at d[pos] (pos < len). */
static enum packet_kind
packet_at(const uint8_t *d, size_t len, size_t pos, struct packet *pk, char *why, size_t whylen)
{
	const uint8_t *p = d + pos;
	size_t at, n = len - pos;
	uint64_t tlen, plen;

	if (!(p[0] & 0x80))
		return PKT_END;
	if (n < 7) {
		snprintf(why, whylen, "a long header cut short at byte %zu", pos);
		return PKT_BAD;
	}
	pk->version = be32(p + 1);
	if (pk->version != FC_QUIC_V1 && pk->version != FC_QUIC_V2)
		return PKT_END;	/* another version coalesced: not read */
	pk->dcid_len = p[5];
	at = 6;
	if (pk->dcid_len > FC_QUIC_CID_MAX || at + pk->dcid_len + 1 > n) {
		snprintf(why, whylen, "a DCID of %zu bytes at byte %zu", pk->dcid_len, pos);
		return PKT_BAD;
	}
	pk->dcid = p + at;
	at += pk->dcid_len;
	if (p[at] > FC_QUIC_CID_MAX || at + 1 + p[at] > n) {
		snprintf(why, whylen, "a SCID of %u bytes at byte %zu", p[at], pos);
		return PKT_BAD;
	}
	at += 1 + (size_t)p[at];
	if (!fc_quic_is_initial(p, n)) {
		/* 0-RTT or Handshake: stepped over by its length; a Retry has none */
		if (((p[0] >> 4) & 3) == (pk->version == FC_QUIC_V1 ? 3 : 0))
			return PKT_END;
		if (varint(p, n, &at, &plen) != 0 || plen > n - at) {
			snprintf(why, whylen, "a packet's length runs past the datagram at byte %zu", pos);
			return PKT_BAD;
		}
		pk->len = at + (size_t)plen;
		return PKT_OTHER;
	}
	if (varint(p, n, &at, &tlen) != 0 || tlen > n - at) {
		snprintf(why, whylen, "an Initial's token runs past the datagram at byte %zu", pos);
		return PKT_BAD;
	}
	at += (size_t)tlen;
	if (varint(p, n, &at, &plen) != 0 || plen > n - at) {
		snprintf(why, whylen, "an Initial's length runs past the datagram at byte %zu", pos);
		return PKT_BAD;
	}
	pk->pn_off = at;
	pk->len = at + (size_t)plen;
	return PKT_INITIAL;
}

/*
 * The keys pk is opened with: the connection's, derived from the DCID of
 * its client's first Initial (RFC 9001 5.2: every Initial of the
 * connection, whatever DCID it carries later, as its server opens them);
 * before any Initial was read, pk's own, into *tmp (kept once the whole
 * datagram opened).  -EPROTO: pk is of another version than the first.
 */
static int
keys_for(struct fc_quic_hello *q, const struct packet *pk, struct fc_quic_keys *tmp,
	 const struct fc_quic_keys **out)
{
	int rc;

	if (q->keys.version != 0) {
		*out = &q->keys;
		return pk->version == q->keys.version ? 0 : -EPROTO;
	}
	if (tmp->version == pk->version && tmp->dcid_len == pk->dcid_len &&
	    memcmp(tmp->dcid, pk->dcid, pk->dcid_len) == 0) {
		*out = tmp;
		return 0;
	}
	rc = fc_quic_client_keys(pk->version, pk->dcid, pk->dcid_len, tmp->key, tmp->iv, tmp->hp);
	if (rc != 0)
		return -EIO;
	tmp->version = pk->version;
	tmp->dcid_len = (uint8_t)pk->dcid_len;
	memcpy(tmp->dcid, pk->dcid, pk->dcid_len);
	*out = tmp;
	return 0;
}

/*
 * One Initial packet at p, as pk says, opened with c into *plain (the
 * caller frees it) of *plen bytes.  0; -EPROTO (it does not open: too
 * short for its sample or tag, another version, the keys fail its tag -
 * its server drops it); -EIO (OpenSSL, memory), with q->err.
 */
static int
initial_open(struct fc_quic_hello *q, EVP_CIPHER_CTX *c, const uint8_t *p,
	     const struct packet *pk, struct fc_quic_keys *tmp, uint8_t **plain, size_t *plen)
{
	uint8_t iv[12], mask[16], hdr[1 + 4 + 1 + FC_QUIC_CID_MAX + 1 + FC_QUIC_CID_MAX + 8 + 8 + 4];
	const struct fc_quic_keys *k;
	uint8_t *aad = NULL;
	size_t pn_off = pk->pn_off, len = pk->len, pn_len, ct_len;
	int rc;

	*plain = NULL;
	if (len < pn_off + 4 + SAMPLE_LEN) {
		snprintf(q->err, sizeof(q->err), "an Initial of %zu bytes: too short for its sample", len);
		return -EPROTO;
	}
	rc = keys_for(q, pk, tmp, &k);
	if (rc == -EPROTO) {
		snprintf(q->err, sizeof(q->err), "an Initial of version 0x%08x after one of 0x%08x",
			 pk->version, q->keys.version);
		return -EPROTO;
	}
	if (rc == 0)
		rc = hp_mask(c, k->hp, p + pn_off + 4, mask);
	if (rc != 0) {
		snprintf(q->err, sizeof(q->err), "OpenSSL could not derive the Initial keys or their mask");
		return -EIO;
	}
	pn_len = (size_t)((p[0] ^ mask[0]) & 3) + 1;
	if (len < pn_off + pn_len + TAG_LEN) {
		snprintf(q->err, sizeof(q->err), "an Initial of %zu bytes: too short for its tag", len);
		return -EPROTO;
	}
	/* the header as sent, unprotected: the AEAD's associated data */
	aad = pn_off + pn_len <= sizeof(hdr) ? hdr : malloc(pn_off + pn_len);
	if (aad == NULL) {
		snprintf(q->err, sizeof(q->err), "out of memory for an Initial's header of %zu bytes",
			 pn_off + pn_len);
		return -EIO;
	}
	memcpy(aad, p, pn_off + pn_len);
	memcpy(iv, k->iv, sizeof(iv));
	aad[0] ^= mask[0] & 0x0f;
	for (size_t i = 0; i < pn_len; i++) {
		aad[pn_off + i] ^= mask[1 + i];
		iv[12 - pn_len + i] ^= aad[pn_off + i];	/* the nonce: iv XOR the packet number */
	}
	ct_len = len - pn_off - pn_len - TAG_LEN;
	*plain = malloc(ct_len + 1);
	rc = *plain == NULL ? -EIO
			    : open_gcm(c, k->key, iv, aad, pn_off + pn_len, p + pn_off + pn_len,
				       ct_len, p + len - TAG_LEN, *plain);
	if (aad != hdr)
		free(aad);
	if (rc == 1) {
		*plen = ct_len;
		return 0;
	}
	free(*plain);
	*plain = NULL;
	if (rc == 0) {
		snprintf(q->err, sizeof(q->err), "an Initial (version 0x%08x) does not open with the "
			 "connection's keys", pk->version);
		return -EPROTO;
	}
	snprintf(q->err, sizeof(q->err), "OpenSSL could not open an Initial (or no memory for its "
		 "%zu bytes)", ct_len);
	return -EIO;
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
	uint8_t *plain[FC_QUIC_INITIALS_MAX] = { NULL };
	size_t plen[FC_QUIC_INITIALS_MAX];
	struct fc_quic_keys tmp = { 0 };
	EVP_CIPHER_CTX *c;
	struct packet pk;
	unsigned int n = 0;
	char why[96];
	size_t pos;
	int rc = 0;

	if (q->rc != -EAGAIN)
		return q->rc;
	if (!fc_quic_is_initial(d, len)) {
		if (q->keys.version != 0) {	/* a later datagram: its server drops it */
			snprintf(q->err, sizeof(q->err), "a datagram that starts with no Initial");
			return -EPROTO;
		}
		return fail(q, -ENOMSG, "not a QUIC Initial of version 1 or 2");
	}
	/*
	 * The Initials counted first, from their headers, up to one that does
	 * not hold together: a datagram with more than a client sends is not
	 * read, nothing of it opened.
	 */
	for (pos = 0; pos < len; pos += pk.len) {
		enum packet_kind k = packet_at(d, len, pos, &pk, why, sizeof(why));

		if (k == PKT_END || k == PKT_BAD)
			break;
		if (k == PKT_INITIAL && ++n > FC_QUIC_INITIALS_MAX) {
			snprintf(q->err, sizeof(q->err), "a datagram of %zu bytes with an Initial at "
				 "byte %zu past the first %u: more Initials than a client sends in "
				 "one", len, pos, FC_QUIC_INITIALS_MAX);
			return -E2BIG;
		}
	}
	if (!algs())
		return fail(q, -EIO, "OpenSSL has no AES-128-ECB, AES-128-GCM or HKDF");
	c = EVP_CIPHER_CTX_new();
	if (c == NULL)
		return fail(q, -EIO, "OpenSSL could not make a cipher context");
	/*
	 * Every Initial opened before any is read: one that does not open (or
	 * a packet that does not hold together) and its server drops it - so
	 * is the datagram, unread, and the connection reads on.
	 */
	n = 0;
	for (pos = 0; pos < len && rc == 0; pos += pk.len) {
		enum packet_kind k = packet_at(d, len, pos, &pk, why, sizeof(why));

		if (k == PKT_END)
			break;
		if (k == PKT_BAD) {
			snprintf(q->err, sizeof(q->err), "%s", why);
			rc = -EPROTO;
		} else if (k == PKT_INITIAL) {
			rc = initial_open(q, c, d + pos, &pk, &tmp, &plain[n], &plen[n]);
			n += rc == 0;
		}
	}
	EVP_CIPHER_CTX_free(c);
	if (rc == -EIO)
		q->rc = -EIO;	/* q->err says it */
	if (rc == 0) {
		if (q->keys.version == 0 && tmp.version != 0)
			q->keys = tmp;	/* the first Initial read: the connection's keys */
		if (q->version == 0)
			q->version = q->keys.version;
		rc = -EAGAIN;
		for (unsigned int i = 0; i < n && rc == -EAGAIN; i++) {
			q->packets++;
			rc = fc_quic_frames(q, plain[i], plen[i]);
		}
	}
	for (unsigned int i = 0; i < n; i++)
		free(plain[i]);
	return rc;
}
