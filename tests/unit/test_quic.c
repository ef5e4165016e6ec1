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
 * the frames an Initial may and may not carry.
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

static struct fc_quic_hello q;
static uint8_t pkt[1300], frame[300];

static size_t
unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = strlen(h) / 2;

	assert_true(n <= cap);
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		assert_int_equal(sscanf(h + 2 * i, "%2x", &b), 1);
		out[i] = (uint8_t)b;
	}
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

/* A bit flipped in the payload, in the DCID, or in the protected first byte: refused. */
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
		assert_int_equal(rc, -EBADMSG);
		assert_true(q.err[0] != '\0');
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
		if (rc != -EBADMSG && rc != -ENOMSG)
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
	/* a STREAM frame in an Initial; CRYPTO past 16 KiB; not a ClientHello; cut short */
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x08\x00\x01x", 4), -EBADMSG);
	assert_string_equal(q.err, "frame type 0x8 at byte 0 is not allowed in an Initial");
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x7f\xff\x02" "ab", 6), -EMSGSIZE);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x04\x02\x00\x00\x00", 7),
			 -ENOMSG);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x10\x01", 4), -EBADMSG);
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x02\x05\x00\xff", 4), -EBADMSG);
	/* a hello announcing more than 16 KiB */
	fc_quic_init(&q);
	assert_int_equal(fc_quic_frames(&q, (const uint8_t *)"\x06\x00\x04\x01\x00\x40\x01", 7),
			 -EMSGSIZE);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
