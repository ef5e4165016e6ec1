/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_quic against the RFCs' own examples: the client Initial of RFC 9001
 * Appendix A.2 (QUIC version 1) and of RFC 9369 Appendix A.2 (version 2),
 * the same ClientHello in both.  The keys each appendix lists (A.1); the
 * CRYPTO frame the RFC shows before protection, byte for byte; the hello
 * read from it, its JA4 ('q') against its raw form written out here from
 * the RFC's bytes (hashed here with OpenSSL's SHA-256); a bit flipped in
 * the payload or the header refused; every truncation refused without a
 * read past the end; CRYPTO frames out of order and over two Initials;
 * the frames an Initial may and may not carry; a hello of 20 KiB (more than
 * one record's worth) and the CRYPTO cap; and the Initials of one
 * datagram: as many as the cap read (each DCID's keys derived for it),
 * one more (or the 37) refused with -E2BIG before any is opened.
 * Initials other than the RFCs' are sealed here with OpenSSL's EVP.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

#include "fc_hello.h"
#include "fc_hex.h"
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_quicvec.h"
#include "fc_tls.h"


static const uint8_t DCID[8] = { 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08 };

/* JA4_r of the RFC's hello, written out from its bytes: 2 ciphers, 11 extensions, ALPN "alpn" */
#define RFC_JA4_A "q13d0211an"
#define RFC_CIPHERS "1301,1302"
#define RFC_EXTS "0005,000a,000d,001c,002b,002d,0033,0039,ff01"
#define RFC_SIGALGS "0403,0503,0603,0203,0804,0805,0806"

/* The JA4 specification's example (tests/lib/fc_hello's Chrome hello); its JA3 by hand. */
#define SPEC_JA4_Q "q13d1516h2_8daaf6152771_e5627efa2ab1"
#define SPEC_JA3 "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-49172-156-" \
		 "157-47-53,0-23-65281-10-11-35-16-5-13-18-51-45-43-27-21-17513,29-23-24,0"

static struct fc_quic_hello q;
static uint8_t pkt[1300], frame[300];

/* A vector's bytes: every character a hex digit, all of it fitting. */
static size_t
unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = fc_hex(h, strlen(h), out, cap);

	assert_true(n > 0);
	return n;
}

static void
assert_hex(const uint8_t *b, size_t n, const char *want)
{
	char got[2 * 32 + 1];

	for (size_t i = 0; i < n; i++)
		snprintf(got + 2 * i, 3, "%02x", b[i]);
	assert_string_equal(got, want);
}

/* The first 12 hex digits of SHA-256 of s (JA4's b and c). */
static void
sha12(const char *s, char out[13])
{
	unsigned char md[32];
	unsigned int n;

	assert_int_equal(EVP_Digest(s, strlen(s), md, &n, EVP_sha256(), NULL), 1);
	for (int i = 0; i < 6; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void
test_keys(void **state)
{
	uint8_t key[16], iv[12], hp[16];

	(void)state;
	assert_int_equal(fc_quic_client_keys(FC_QUIC_V1, DCID, 8, key, iv, hp), 0);
	assert_hex(key, 16, "1f369613dd76d5467730efcbe3b1a22d");
	assert_hex(iv, 12, "fa044b2f42a3fd3b46fb255c");
	assert_hex(hp, 16, "9f50449e04a0e810283a1e9933adedd2");
	assert_int_equal(fc_quic_client_keys(FC_QUIC_V2, DCID, 8, key, iv, hp), 0);
	assert_hex(key, 16, "8b1a0bc121284290a29e0971b5cd045d");
	assert_hex(iv, 12, "91f73e2351d8fa91660e909f");
	assert_hex(hp, 16, "45b95e15235d6f45a6b19cbcb0294ba9");
	assert_int_equal(fc_quic_client_keys(0xff00001d, DCID, 8, key, iv, hp), -ENOMSG);
}

/* Both versions' Initial: decrypted, the RFC's CRYPTO bytes, the hello, its JA4. */
static void
test_rfc_initials(void **state)
{
	static char raw[FC_JA_STR_MAX];
	const char *const vecs[] = { fc_rfc9001_client_initial, fc_rfc9369_client_initial };
	const uint32_t versions[] = { FC_QUIC_V1, FC_QUIC_V2 };
	char ja4[FC_JA4_LEN + 1], want[FC_JA4_LEN + 1], b[13], c[13];
	size_t n, fn = unhex(fc_rfc9001_crypto_frame, frame, sizeof(frame));

	(void)state;
	sha12(RFC_CIPHERS, b);
	sha12(RFC_EXTS "_" RFC_SIGALGS, c);
	snprintf(want, sizeof(want), "%s_%s_%s", RFC_JA4_A, b, c);
	for (int v = 0; v < 2; v++) {
		n = unhex(vecs[v], pkt, sizeof(pkt));
		assert_int_equal(n, 1200);
		assert_true(fc_quic_is_initial(pkt, n));
		fc_quic_init(&q);
		assert_int_equal(fc_quic_feed(&q, pkt, n), 0);
		assert_int_equal(q.version, versions[v]);
		assert_int_equal(q.packets, 1);
		/* the frame: type 06, offset 0, length 0x40f1 (241), then the hello */
		assert_int_equal(fn, 4 + 241);
		assert_memory_equal(q.crypto, frame + 4, 241);
		assert_int_equal(q.hello.legacy_version, 0x0303);
		assert_int_equal(fc_tls_version(&q.hello), 0x0304);
		assert_int_equal(q.hello.ciphers.n, 2);
		assert_int_equal(q.hello.next, 11);
		assert_memory_equal(fc_tls_bytes_ptr(&q.hello, q.hello.sni), "example.com", 11);
		assert_int_equal(fc_ja4(&q.hello, 'q', ja4, raw, sizeof(raw)), 0);
		assert_string_equal(raw, RFC_JA4_A "_" RFC_CIPHERS "_" RFC_EXTS "_" RFC_SIGALGS);
		assert_string_equal(ja4, want);
		/* final: fed again, the same answer */
		assert_int_equal(fc_quic_feed(&q, pkt, n), 0);
	}
}

/*
 * A bit flipped in the payload, in the DCID, or in the protected first
 * byte: the datagram does not open (its server drops it), not final - the
 * Initial as sent is read after it.
 */
static void
test_tampered(void **state)
{
	const size_t at[] = { 1000, 7, 0, 20 };

	(void)state;
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		size_t n = unhex(fc_rfc9001_client_initial, pkt, sizeof(pkt));
		int rc;

		pkt[at[i]] ^= 0x01;
		fc_quic_init(&q);
		rc = fc_quic_feed(&q, pkt, n);
		print_message("byte %zu flipped: %d %s\n", at[i], rc, q.err);
		assert_int_equal(rc, -EPROTO);
		assert_true(q.err[0] != '\0');
		assert_int_equal(q.packets, 0);
		pkt[at[i]] ^= 0x01;
		assert_int_equal(fc_quic_feed(&q, pkt, n), 0);
	}
}

/* Every truncation: refused (or waiting for nothing), never read past its end (ASan). */
static void
test_truncated(void **state)
{
	size_t n = unhex(fc_rfc9001_client_initial, pkt, sizeof(pkt));

	(void)state;
	for (size_t k = 0; k < n; k++) {
		uint8_t *cut = malloc(k ? k : 1);
		int rc;

		memcpy(cut, pkt, k);
		fc_quic_init(&q);
		rc = fc_quic_feed(&q, cut, k);
		if (rc != -EBADMSG && rc != -ENOMSG && rc != -EPROTO)
			fail_msg("a packet cut to %zu bytes: %d", k, rc);
		free(cut);
	}
	/* not QUIC: a DNS query, a short header */
	fc_quic_init(&q);
	assert_int_equal(fc_quic_feed(&q, (const uint8_t *)"\x12\x34\x01\x00\x00\x01", 6), -ENOMSG);
	fc_quic_init(&q);
	pkt[0] = 0x40;
	assert_int_equal(fc_quic_feed(&q, pkt, n), -ENOMSG);
}

#define CRYPTO_HDR 9	/* a CRYPTO frame's type, then its offset and length as 4-byte varints */

/* A CRYPTO frame's header into p. */
static void
crypto_at(uint8_t *p, uint32_t off, uint32_t len)
{
	p[0] = 0x06;
	p[1] = (uint8_t)(0x80 | off >> 24);
	p[2] = (uint8_t)(off >> 16);
	p[3] = (uint8_t)(off >> 8);
	p[4] = (uint8_t)off;
	p[5] = (uint8_t)(0x80 | len >> 24);
	p[6] = (uint8_t)(len >> 16);
	p[7] = (uint8_t)(len >> 8);
	p[8] = (uint8_t)len;
}

/* The hello in CRYPTO frames out of order, over two payloads, with ACK, PING and PADDING. */
static void
test_frames(void **state)
{
	uint8_t p[600];
	size_t fn = unhex(fc_rfc9001_crypto_frame, frame, sizeof(frame)), k = 0;
	const uint8_t *hello = frame + 4;

	(void)state;
	(void)fn;
	fc_quic_init(&q);
	/* the second part first: offset 100, length 141; an ACK (2 ranges) and an ACK with ECN */
	p[k++] = 0x06;
	p[k++] = 0x40;
	p[k++] = 100;
	p[k++] = 0x40;
	p[k++] = 141;
	memcpy(p + k, hello + 100, 141);
	k += 141;
	memcpy(p + k, "\x02\x05\x00\x01\x00\x01\x01", 7);	/* largest 5, delay 0, 1 range, first 0, gap 1 range 1 */
	k += 7;
	memcpy(p + k, "\x03\x05\x00\x00\x00\x01\x02\x03", 8);	/* ... no ranges, ECN 1 2 3 */
	k += 8;
	p[k++] = 0x01;
	memset(p + k, 0, 20);
	k += 20;
	assert_int_equal(fc_quic_frames(&q, p, k), -EAGAIN);
	/* then the first 100 bytes */
	k = 0;
	p[k++] = 0x06;
	p[k++] = 0x00;
	p[k++] = 0x40;
	p[k++] = 100;
	memcpy(p + k, hello, 100);
	k += 100;
	assert_int_equal(fc_quic_frames(&q, p, k), 0);
	assert_int_equal(q.hello.ciphers.n, 2);
	/* a STREAM frame in an Initial; CRYPTO past the cap (up to it: taken); not a hello; cut short */
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x08\x00\x01x", 4), -EBADMSG);
	assert_string_equal(q.err, "frame type 0x8 at byte 0 is not allowed in an Initial");
	crypto_at(p, FC_TLS_HELLO_MAX - 1, 1);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, p, CRYPTO_HDR + 1), -EAGAIN);
	crypto_at(p, FC_TLS_HELLO_MAX - 1, 2);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, p, CRYPTO_HDR + 2), -EMSGSIZE);
	assert_string_equal(q.err, "CRYPTO bytes up to 131401, over the cap of 131400");
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x04\x02\x00\x00\x00", 7),
			 -ENOMSG);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x10\x01", 4), -EBADMSG);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x02\x05\x00\xff", 4), -EBADMSG);
	/* a hello announcing a body of the cap waits for it; one byte more is refused */
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x04\x01\x02\x01\x44", 7),
			 -EAGAIN);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x04\x01\x02\x01\x45", 7),
			 -EMSGSIZE);
	assert_string_equal(q.err, "the ClientHello announces a body of 131397 bytes, over the cap "
				   "of 131396");
}

/* The handshake message of a hello built by fc_hello (whole, one record) into m: its length. */
static size_t
hello_message(const struct fc_hello_spec *s, uint8_t *m, size_t cap)
{
	static uint8_t rec[1 << 16];
	size_t len, n = fc_hello_build(s, rec, sizeof(rec), &len);

	assert_true(n > 0 && len <= cap);
	/* records of 16384: their headers left out */
	for (size_t off = 0, r = 0; off < len; off += 16384, r++)
		memcpy(m + off, rec + off + 5 * (r + 1), len - off < 16384 ? len - off : 16384);
	return len;
}

/*
 * A hello of 20 KiB in CRYPTO frames of 1100 bytes, the second half first:
 * read whole (fc_tls gets it in two records made up here), fingerprinted
 * as the JA4 specification's example it was padded from.
 */
static void
test_big_hello(void **state)
{
	static uint8_t m[20480], p[1200];
	static char str[FC_JA_STR_MAX];
	char ja4[FC_JA4_LEN + 1], md5[FC_JA3_MD5_LEN + 1];
	struct fc_hello_spec s;
	size_t len, half;
	int rc = -EAGAIN;

	(void)state;
	fc_hello_chrome(&s, 0x001d, 32);
	fc_hello_build(&s, m, sizeof(m), &len);
	s.pad_len += (unsigned int)(sizeof(m) - len);
	len = hello_message(&s, m, sizeof(m));
	assert_int_equal(len, sizeof(m));
	half = len / 2;
	fc_quic_init(&q);
	for (int pass = 0; pass < 2; pass++) {
		size_t from = pass == 0 ? half : 0, to = pass == 0 ? len : half;

		for (size_t off = from; off < to; off += 1100) {
			size_t n = to - off < 1100 ? to - off : 1100;

			crypto_at(p, (uint32_t)off, (uint32_t)n);
			memcpy(p + CRYPTO_HDR, m + off, n);
			rc = fc_quic_frames(&q, p, CRYPTO_HDR + n);
			if (!(pass == 1 && off + n == to))
				assert_int_equal(rc, -EAGAIN);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(q.hello.msg_len, sizeof(m));
	assert_int_equal(fc_ja4(&q.hello, 'q', ja4, NULL, 0), 0);
	assert_string_equal(ja4, SPEC_JA4_Q);
	assert_true(fc_ja3(&q.hello, str, sizeof(str), md5) > 0);
	assert_string_equal(str, SPEC_JA3);
}

/*
 * A client Initial (version 1) of the frames f[0, flen), packet number pn,
 * for dcid, sealed as RFC 9001 5 says (OpenSSL's EVP), appended to d at
 * *dlen.
 */
static void
seal_initial(const uint8_t *dcid, uint8_t dcid_len, uint8_t pn, const uint8_t *f, size_t flen,
	     uint8_t *d, size_t *dlen)
{
	uint8_t key[16], iv[12], hp[16], mask[16], *o = d + *dlen;
	size_t len = 0, pn_off, rest = 1 + flen + 16;
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0;

	assert_non_null(c);
	assert_true(rest < 16384);
	assert_int_equal(fc_quic_client_keys(FC_QUIC_V1, dcid, dcid_len, key, iv, hp), 0);
	o[len++] = 0xc0;		/* long header, fixed bit, Initial, a 1-byte packet number */
	memcpy(o + len, "\x00\x00\x00\x01", 4);
	len += 4;
	o[len++] = dcid_len;
	memcpy(o + len, dcid, dcid_len);
	len += dcid_len;
	o[len++] = 0;			/* no SCID */
	o[len++] = 0;			/* no token */
	o[len++] = (uint8_t)(0x40 | rest >> 8);
	o[len++] = (uint8_t)rest;
	pn_off = len;
	o[len++] = pn;
	iv[11] ^= pn;
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, key, iv), 1);
	assert_int_equal(EVP_EncryptUpdate(c, NULL, &n, o, (int)len), 1);
	assert_int_equal(EVP_EncryptUpdate(c, o + len, &n, f, (int)flen), 1);
	assert_int_equal(EVP_EncryptFinal_ex(c, o + len + n, &n), 1);
	assert_int_equal(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, o + len + flen), 1);
	len += flen + 16;
	assert_true(len >= pn_off + 4 + 16);
	assert_int_equal(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL), 1);
	assert_int_equal(EVP_CIPHER_CTX_set_padding(c, 0), 1);
	assert_int_equal(EVP_EncryptUpdate(c, mask, &n, o + pn_off + 4, 16), 1);
	EVP_CIPHER_CTX_free(c);
	o[0] ^= mask[0] & 0x0f;
	o[pn_off] ^= mask[1];
	*dlen += len;
}

/*
 * The Initials of one datagram.  As many as FC_QUIC_INITIALS_MAX, each
 * with part of the RFC's hello, and a Handshake packet after them (not an
 * Initial: not counted): read.  Another DCID in the connection's next
 * datagram: its own keys derived (the kept ones would not open it).  One
 * Initial more than the cap, the first holding the whole hello: -E2BIG,
 * nothing opened.  The datagram, 37 Initials (a PING each, every
 * one of which would open) in 1,406 bytes: -E2BIG, final.
 */
static void
test_coalesced(void **state)
{
	static const uint8_t ping[3] = { 0x01, 0x00, 0x00 };
	static const uint8_t other[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	static uint8_t d[4096];
	uint8_t f[300];
	size_t dlen = 0, fn = unhex(fc_rfc9001_crypto_frame, frame, sizeof(frame)), cut;
	const uint8_t *hello = frame + 4;
	size_t hlen = fn - 4;

	(void)state;
	_Static_assert(FC_QUIC_INITIALS_MAX >= 2, "the hello below is split over two Initials");
	/* the cap: the hello over two Initials (and PINGs in the others), then a Handshake packet */
	cut = hlen / 2;
	for (uint8_t i = 0; i < FC_QUIC_INITIALS_MAX; i++) {
		size_t off = i == 0 ? 0 : cut, n = i == 0 ? cut : i == 1 ? hlen - cut : 0;

		if (n == 0) {
			seal_initial(DCID, 8, i, ping, sizeof(ping), d, &dlen);
			continue;
		}
		crypto_at(f, (uint32_t)off, (uint32_t)n);
		memcpy(f + CRYPTO_HDR, hello + off, n);
		seal_initial(DCID, 8, i, f, CRYPTO_HDR + n, d, &dlen);
	}
	memcpy(d + dlen, "\xe0\x00\x00\x00\x01\x08\x83\x94\xc8\xf0\x3e\x51\x57\x08\x00\x40\x20", 17);
	memset(d + dlen + 17, 0x5a, 32);	/* a Handshake packet of 32 bytes, not opened */
	dlen += 17 + 32;
	fc_quic_init(&q);
	assert_int_equal(fc_quic_feed(&q, d, dlen), 0);
	assert_int_equal(q.packets, FC_QUIC_INITIALS_MAX);
	assert_int_equal(q.hello.ciphers.n, 2);
	assert_int_equal(q.keys.version, FC_QUIC_V1);
	assert_memory_equal(q.keys.dcid, DCID, 8);

	/*
	 * a datagram protected with another DCID's keys on the same
	 * connection: its server opens every Initial with the keys of the
	 * first one's DCID (RFC 9001 5.2), so it drops this one - so does the
	 * reader (-EPROTO, not final); the next, with the connection's keys, is read
	 */
	fc_quic_init(&q);
	dlen = 0;
	crypto_at(f, 0, (uint32_t)cut);
	memcpy(f + CRYPTO_HDR, hello, cut);
	seal_initial(DCID, 8, 0, f, CRYPTO_HDR + cut, d, &dlen);
	assert_int_equal(fc_quic_feed(&q, d, dlen), -EAGAIN);
	dlen = 0;
	crypto_at(f, (uint32_t)cut, (uint32_t)(hlen - cut));
	memcpy(f + CRYPTO_HDR, hello + cut, hlen - cut);
	seal_initial(other, 8, 1, f, CRYPTO_HDR + hlen - cut, d, &dlen);
	assert_int_equal(fc_quic_feed(&q, d, dlen), -EPROTO);
	assert_int_equal(q.packets, 1);
	assert_memory_equal(q.keys.dcid, DCID, 8);
	dlen = 0;
	seal_initial(DCID, 8, 1, f, CRYPTO_HDR + hlen - cut, d, &dlen);
	assert_int_equal(fc_quic_feed(&q, d, dlen), 0);
	assert_int_equal(q.packets, 2);

	/* one more than the cap, the first with the whole hello: refused, none opened */
	fc_quic_init(&q);
	dlen = 0;
	crypto_at(f, 0, (uint32_t)hlen);
	memcpy(f + CRYPTO_HDR, hello, hlen);
	seal_initial(DCID, 8, 0, f, CRYPTO_HDR + hlen, d, &dlen);
	for (uint8_t i = 1; i <= FC_QUIC_INITIALS_MAX; i++)
		seal_initial(DCID, 8, i, ping, sizeof(ping), d, &dlen);
	assert_int_equal(fc_quic_feed(&q, d, dlen), -E2BIG);
	assert_int_equal(q.packets, 0);
	print_message("%s\n", q.err);
	assert_non_null(strstr(q.err, "more Initials than a client sends in one"));

	/* the datagram: 37 Initials of 38 bytes */
	fc_quic_init(&q);
	dlen = 0;
	for (uint8_t i = 0; i < 37; i++)
		seal_initial(DCID, 8, i, ping, sizeof(ping), d, &dlen);
	assert_int_equal(dlen, 1406);
	assert_int_equal(fc_quic_feed(&q, d, dlen), -E2BIG);
	assert_int_equal(q.packets, 0);
	assert_int_equal(fc_quic_feed(&q, d, dlen), -E2BIG);	/* again: not read */
	/* each of them opens: fed one at a time (a datagram each), all are read */
	fc_quic_init(&q);
	for (size_t off = 0; off < dlen; off += 38)
		assert_int_equal(fc_quic_feed(&q, d + off, 38), -EAGAIN);
	assert_int_equal(q.packets, 37);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_rfc_initials),
		cmocka_unit_test(test_tampered),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_frames),
		cmocka_unit_test(test_big_hello),
		cmocka_unit_test(test_coalesced),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
