/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_tls, fc_ja, fc_tlscap: the JA4 specification's own example; every
 * split of a hello (at every byte, in records of every size); every
 * prefix; a table of malformed hellos, each refused with its reason; the
 * size cap at its boundary (OpenSSL's: the largest hello its fields can
 * make, read whole and fingerprinted, one byte more refused; and one of 20
 * KiB); GREASE, no SNI, ALPN edge cases; and hellos
 * found in a capture written here (a post-quantum hello over two
 * segments, out of order, retransmitted, IPv6, cut short); and the hellos
 * of FoxIO's published test captures (tests/tls/foxio-ja4.txt: TLS over
 * TCP and QUIC), each with the JA4 FoxIO's implementation gives it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "fc_hello.h"
#include "fc_hex.h"
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_tls.h"
#include "fc_tlscap.h"

/* The JA4 specification's example (FoxIO, JA4 technical details). */
#define SPEC_JA4   "t13d1516h2_8daaf6152771_e5627efa2ab1"
#define SPEC_JA4_R "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f," \
		   "c030,cca8,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d," \
		   "0033,4469,ff01_0403,0804,0401,0503,0805,0501,0806,0601"
/* Its JA3, written out from the hello by hand; the MD5 from md5sum(1). */
#define SPEC_JA3 "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-49172-156-" \
		 "157-47-53,0-23-65281-10-11-35-16-5-13-18-51-45-43-27-21-17513,29-23-24,0"
#define SPEC_JA3_MD5 "50a0e1f8c13ee9e5521e3f374a63a021"

static struct fc_tls_hello hello, other;
static uint8_t buf[FC_TLS_HELLO_MAX + 1024];

static size_t
chrome(unsigned int record_max)
{
	struct fc_hello_spec s;
	size_t n;

	fc_hello_chrome(&s, 0x001d, 32);
	s.record_max = record_max;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_true(n > 0);
	return n;
}

static int
feed_all(struct fc_tls_hello *h, const uint8_t *p, size_t n)
{
	fc_tls_init(h);
	return fc_tls_feed(h, p, n, NULL);
}

/* Everything the parser read, compared field by field (the buffers' bytes under each view). */
static void
assert_same_hello(const struct fc_tls_hello *a, const struct fc_tls_hello *b)
{
	assert_int_equal(a->legacy_version, b->legacy_version);
	assert_int_equal(a->next, b->next);
	assert_memory_equal(a->ext, b->ext, a->next * sizeof(a->ext[0]));
	assert_int_equal(a->msg_len, b->msg_len);
	assert_memory_equal(a->msg, b->msg, a->msg_len);
	assert_memory_equal(&a->ciphers, &b->ciphers, sizeof(a->ciphers));
	assert_memory_equal(&a->sni, &b->sni, sizeof(a->sni));
	assert_memory_equal(&a->alpn, &b->alpn, sizeof(a->alpn));
	assert_memory_equal(&a->sigalgs, &b->sigalgs, sizeof(a->sigalgs));
	assert_memory_equal(&a->groups, &b->groups, sizeof(a->groups));
	assert_memory_equal(&a->versions, &b->versions, sizeof(a->versions));
	assert_memory_equal(&a->point_formats, &b->point_formats, sizeof(a->point_formats));
}

static void
assert_ja4(const struct fc_tls_hello *h, const char *want, const char *want_raw)
{
	static char raw[FC_JA_STR_MAX];
	char ja4[FC_JA4_LEN + 1];

	assert_int_equal(fc_ja4(h, 't', ja4, raw, sizeof(raw)), 0);
	assert_string_equal(ja4, want);
	if (want_raw != NULL)
		assert_string_equal(raw, want_raw);
}

static void
test_spec_example(void **state)
{
	static char str[FC_JA_STR_MAX];
	char md5[FC_JA3_MD5_LEN + 1], ja4[FC_JA4_LEN + 1];
	size_t n = chrome(0);

	(void)state;
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_ja4(&hello, SPEC_JA4, SPEC_JA4_R);
	assert_int_equal(fc_ja3(&hello, str, sizeof(str), md5), (int)strlen(SPEC_JA3));
	assert_string_equal(str, SPEC_JA3);
	assert_string_equal(md5, SPEC_JA3_MD5);
	/* the parser keeps GREASE: 16 ciphers and 18 extensions as sent */
	assert_int_equal(hello.ciphers.n, 16);
	assert_int_equal(hello.next, 18);
	assert_int_equal(fc_tls_u16_at(&hello, hello.ciphers, 0), 0x4a4a);
	assert_int_equal(hello.sni.len, 15);
	assert_memory_equal(fc_tls_bytes_ptr(&hello, hello.sni), "www.example.com", 15);
	assert_int_equal(fc_tls_version(&hello), 0x0304);
	assert_int_equal(hello.legacy_version, 0x0303);
	assert_int_equal(hello.record_version, 0x0301);
	/* refusals of the fingerprints' own arguments */
	assert_int_equal(fc_ja4(&hello, 'x', ja4, NULL, 0), -EINVAL);
	assert_int_equal(fc_ja4(&hello, 'q', ja4, str, 20), -ENOSPC);
	assert_int_equal(ja4[0], 'q');
	assert_string_equal(ja4 + 1, SPEC_JA4 + 1);
	assert_int_equal(fc_ja3(&hello, str, 20, md5), -ENOSPC);
}

/* Split once at every byte, byte by byte, and in records of many sizes: the same hello. */
static void
test_splits(void **state)
{
	static const unsigned int record_sizes[] = { 1, 2, 3, 7, 64, 255, 256, 1000 };
	size_t n = chrome(0), used;

	(void)state;
	assert_int_equal(feed_all(&other, buf, n), 0);
	for (size_t k = 0; k <= n; k++) {
		fc_tls_init(&hello);
		assert_int_equal(fc_tls_feed(&hello, buf, k, &used), k == n ? 0 : -EAGAIN);
		assert_int_equal(used, k);
		if (k < n)
			assert_int_equal(fc_tls_feed(&hello, buf + k, n - k, &used), 0);
		assert_same_hello(&hello, &other);
	}
	fc_tls_init(&hello);
	for (size_t k = 0; k < n; k++)
		assert_int_equal(fc_tls_feed(&hello, buf + k, 1, NULL), k + 1 == n ? 0 : -EAGAIN);
	assert_same_hello(&hello, &other);
	for (size_t r = 0; r < sizeof(record_sizes) / sizeof(record_sizes[0]); r++) {
		size_t m = chrome(record_sizes[r]);

		for (size_t k = 0; k <= m; k += 1 + m / 97) {
			fc_tls_init(&hello);
			int rc = fc_tls_feed(&hello, buf, k, NULL);

			if (k < m)
				rc = fc_tls_feed(&hello, buf + k, m - k, NULL);
			assert_int_equal(rc, 0);
			assert_same_hello(&hello, &other);
			assert_ja4(&hello, SPEC_JA4, SPEC_JA4_R);
		}
	}
	/* bytes after the hello are not its: *used stops at its end, and a later call changes nothing */
	n = chrome(0);
	memcpy(buf + n, "\x17\x03\x03\x00\x01X", 6);
	fc_tls_init(&hello);
	assert_int_equal(fc_tls_feed(&hello, buf, n + 6, &used), 0);
	assert_int_equal(used, n);
	assert_int_equal(fc_tls_feed(&hello, buf, 10, &used), 0);
	assert_int_equal(used, 0);
}

/* Every proper prefix asks for more, and never more than that. */
static void
test_truncated(void **state)
{
	size_t n = chrome(100);

	(void)state;
	for (size_t k = 0; k < n; k++)
		assert_int_equal(feed_all(&hello, buf, k), -EAGAIN);
}

/* ---- malformed hellos, one per row ---- */

/* Offsets in the single-record chrome() hello. */
enum {
	REC_TYPE = 0, REC_VERSION = 1, REC_LEN = 3, MSG = 5, MSG_TYPE = 5, MSG_LEN = 6,
	SID_LEN = 5 + 4 + 2 + 32, CIPHERS_LEN = SID_LEN + 33, EXTS_LEN = CIPHERS_LEN + 2 + 32 + 2,
	EXTS = EXTS_LEN + 2,
};

static void
put16(size_t at, unsigned int v)
{
	buf[at] = (uint8_t)(v >> 8);
	buf[at + 1] = (uint8_t)v;
}

static unsigned int
get16(size_t at)
{
	return (unsigned int)(buf[at] << 8 | buf[at + 1]);
}

/* The offset in buf of extension type's 4-byte header. */
static size_t
ext_at(uint16_t type)
{
	for (size_t at = EXTS; at < EXTS + get16(EXTS_LEN); at += 4 + get16(at + 2))
		if (get16(at) == type)
			return at;
	fail_msg("extension 0x%04x not in the hello", type);
	return 0;
}

/* Grow (or shrink) every length that holds the byte at `at` by d. */
static void
resize_around(size_t at, int d)
{
	unsigned int hs = (unsigned int)(buf[MSG_LEN] << 16 | buf[MSG_LEN + 1] << 8 | buf[MSG_LEN + 2]);

	put16(REC_LEN, get16(REC_LEN) + (unsigned int)d);
	hs += (unsigned int)d;
	buf[MSG_LEN] = (uint8_t)(hs >> 16);
	buf[MSG_LEN + 1] = (uint8_t)(hs >> 8);
	buf[MSG_LEN + 2] = (uint8_t)hs;
	if (at >= EXTS)
		put16(EXTS_LEN, get16(EXTS_LEN) + (unsigned int)d);
}

static size_t p_content_alert(size_t n) { buf[REC_TYPE] = 21; return n; }
static size_t p_sslv2(size_t n) { buf[0] = 0x80; buf[1] = 0x2e; return n; }
static size_t p_record_version(size_t n) { put16(REC_VERSION, 0x0200); return n; }
static size_t p_server_hello(size_t n) { buf[MSG_TYPE] = 2; return n; }
static size_t p_record_empty(size_t n) { put16(REC_LEN, 0); return n; }
static size_t p_record_long(size_t n) { put16(REC_LEN, 16385); return n; }
/* a body of 131397 bytes, one over the cap */
static size_t p_hs_huge(size_t n) { buf[MSG_LEN] = 0x02; put16(MSG_LEN + 1, 0x0145); return n; }
static size_t p_hs_empty(size_t n) { (void)n; put16(REC_LEN, 4); buf[MSG_LEN + 2] = 0; put16(MSG_LEN, 0); return 9; }
static size_t p_sid_long(size_t n) { buf[SID_LEN] = 33; return n; }
static size_t p_ciphers_odd(size_t n) { put16(CIPHERS_LEN, 31); return n; }
static size_t p_ciphers_none(size_t n) { put16(CIPHERS_LEN, 0); return n; }
static size_t p_ciphers_past(size_t n) { put16(CIPHERS_LEN, 0xfff0); return n; }
static size_t p_compression_none(size_t n) { buf[CIPHERS_LEN + 34] = 0; return n; }
static size_t p_exts_past(size_t n) { put16(EXTS_LEN, get16(EXTS_LEN) + 1); return n; }
static size_t p_ext_past(size_t n) { size_t a = ext_at(0x0017); put16(a + 2, 0x0400); return n; }
static size_t p_sni_list(size_t n) { size_t a = ext_at(0x0000); put16(a + 4, get16(a + 4) + 1); return n; }
static size_t p_sni_entry(size_t n) { size_t a = ext_at(0x0000); put16(a + 7, get16(a + 7) + 1); return n; }
static size_t p_alpn_empty_name(size_t n) { size_t a = ext_at(0x0010); buf[a + 6] = 0; return n; }
static size_t p_alpn_name_past(size_t n) { size_t a = ext_at(0x0010); buf[a + 6] = 40; return n; }
static size_t p_groups_odd(size_t n) { size_t a = ext_at(0x000a); put16(a + 4, 7); return n; }
static size_t p_versions_past(size_t n) { size_t a = ext_at(0x002b); buf[a + 4] = 8; return n; }
static size_t p_point_formats_none(size_t n) { size_t a = ext_at(0x000b); buf[a + 4] = 0; return n; }
static size_t p_sigalgs_none(size_t n) { size_t a = ext_at(0x000d); put16(a + 4, 0); return n; }
static size_t p_duplicate(size_t n) { size_t a = ext_at(0x0023); put16(a, 0x0017); return n; }

/* A byte more inside an extension than its contents use. */
static size_t
p_ext_spare(size_t n)
{
	size_t a = ext_at(0x000a), end = a + 4 + get16(a + 2);

	memmove(buf + end + 1, buf + end, n - end);
	buf[end] = 0;
	put16(a + 2, get16(a + 2) + 1);
	resize_around(end, 1);
	return n + 1;
}

/* A byte after the extensions block, inside the message. */
static size_t
p_after_exts(size_t n)
{
	buf[n] = 0;
	resize_around(0, 1);
	return n + 1;
}

static void
test_malformed(void **state)
{
	static const struct {
		const char *what;
		size_t (*patch)(size_t n);
		int rc;
		const char *err;
	} rows[] = {
		{ "an alert record", p_content_alert, -ENOMSG, "content type 21 (at byte 0" },
		{ "an SSL 2.0 hello", p_sslv2, -ENOMSG, "content type 128" },
		{ "record version 2.0", p_record_version, -ENOMSG, "not TLS: record version 0x0200" },
		{ "a ServerHello", p_server_hello, -ENOMSG, "handshake message type 2" },
		{ "an empty record", p_record_empty, -EBADMSG, "record length 0 is not 1 to 16384" },
		{ "a record over 2^14", p_record_long, -EBADMSG, "record length 16385" },
		{ "a hello over the cap", p_hs_huge, -EMSGSIZE, "ClientHello body of 131397 bytes is over the cap of 131396" },
		{ "an empty hello", p_hs_empty, -EBADMSG, "legacy_version: message ends" },
		{ "session_id of 33", p_sid_long, -EBADMSG, "session_id: bad length (at byte 38 " },
		{ "odd cipher_suites", p_ciphers_odd, -EBADMSG, "cipher_suites" },
		{ "no cipher_suites", p_ciphers_none, -EBADMSG, "cipher_suites" },
		{ "cipher_suites past the end", p_ciphers_past, -EBADMSG, "cipher_suites" },
		{ "no compression_methods", p_compression_none, -EBADMSG, "compression_methods" },
		{ "extensions past the end", p_exts_past, -EBADMSG, "extensions: length runs past" },
		{ "an extension past the block", p_ext_past, -EBADMSG, "extension runs past the block" },
		{ "server_name list length", p_sni_list, -EBADMSG, "server_name: bad list length" },
		{ "server_name entry length", p_sni_entry, -EBADMSG, "server_name: entry runs past" },
		{ "alpn: an empty name", p_alpn_empty_name, -EBADMSG, "alpn: empty protocol name" },
		{ "alpn: a name past the list", p_alpn_name_past, -EBADMSG, "alpn: protocol name runs past" },
		{ "supported_groups odd", p_groups_odd, -EBADMSG, "supported_groups: length 7" },
		{ "supported_versions past", p_versions_past, -EBADMSG, "supported_versions: length runs past" },
		{ "no ec_point_formats", p_point_formats_none, -EBADMSG, "ec_point_formats: bad length" },
		{ "no signature_algorithms", p_sigalgs_none, -EBADMSG, "signature_algorithms: length 0" },
		{ "an extension twice", p_duplicate, -EBADMSG, "extension 0x0017 appears twice" },
		{ "a spare byte in an extension", p_ext_spare, -EBADMSG, "extension 0x000a: 1 bytes after" },
		{ "a byte after the extensions", p_after_exts, -EBADMSG, "1 bytes after the extensions" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t n = rows[i].patch(chrome(0));
		int rc = feed_all(&hello, buf, n);

		print_message("row %zu: %s: %d %s\n", i, rows[i].what, rc, hello.err);
		if (rc != rows[i].rc || strstr(hello.err, rows[i].err) == NULL)
			fail_msg("row %zu (%s): %d '%s', want %d '%s'", i, rows[i].what, rc, hello.err,
				 rows[i].rc, rows[i].err);
		/* final: asked again, the same answer without reading */
		assert_int_equal(fc_tls_feed(&hello, buf, n, NULL), rc);
	}
	/* a record of another type between two records of the hello */
	{
		size_t n = chrome(200);

		buf[205] = 21;
		assert_int_equal(feed_all(&hello, buf, n), -EBADMSG);
		assert_string_equal(hello.err,
				    "record of content type 21 inside the ClientHello (at byte 205 of the stream)");
		n = chrome(200);
		buf[206] = 2;
		assert_int_equal(feed_all(&hello, buf, n), -EBADMSG);
		assert_string_equal(hello.err, "record version 0x0203 (at byte 205 of the stream)");
	}
}

/* The JA4 specification's fingerprints of h (JA4, JA4_r, JA3 and its MD5): those of the example. */
static void
assert_spec_fingerprints(const struct fc_tls_hello *h)
{
	static char str[FC_JA_STR_MAX];
	char md5[FC_JA3_MD5_LEN + 1];

	assert_ja4(h, SPEC_JA4, SPEC_JA4_R);
	assert_int_equal(fc_ja3(h, str, sizeof(str), md5), (int)strlen(SPEC_JA3));
	assert_string_equal(str, SPEC_JA3);
	assert_string_equal(md5, SPEC_JA3_MD5);
}

/* A handshake message m[0, len) as records of at most 16384 bytes, into buf: their length. */
static size_t
records(const uint8_t *m, size_t len)
{
	size_t n = 0;

	for (size_t off = 0; off < len; off += 16384) {
		size_t k = len - off < 16384 ? len - off : 16384;

		assert_true(n + 5 + k <= sizeof(buf));
		buf[n] = 22;
		buf[n + 1] = 3;
		buf[n + 2] = off == 0 ? 1 : 3;
		buf[n + 3] = (uint8_t)(k >> 8);
		buf[n + 4] = (uint8_t)k;
		memcpy(buf + n + 5, m + off, k);
		n += 5 + k;
	}
	return n;
}

/* k bytes of m (len of them) at off, big-endian. */
static uint32_t
get_be(const uint8_t *m, size_t off, unsigned int k)
{
	uint32_t v = 0;

	for (unsigned int i = 0; i < k; i++)
		v = v << 8 | m[off + i];
	return v;
}

static void
put_be(uint8_t *m, size_t off, unsigned int k, uint32_t v)
{
	for (unsigned int i = 0; i < k; i++)
		m[off + i] = (uint8_t)(v >> (8 * (k - 1 - i)));
}

/* n bytes made room for at m[at] (the message *len long grows), each from fill(i). */
static void
grow(uint8_t *m, size_t *len, size_t at, size_t n, uint8_t (*fill)(size_t i))
{
	memmove(m + at + n, m + at, *len - at);
	for (size_t i = 0; i < n; i++)
		m[at + i] = fill(i);
	*len += n;
}

static uint8_t fill_grease(size_t i) { return (uint8_t)((i / 2) % 16 << 4 | 0x0a); }	/* 0x0a0a, 0x1a1a, ... */
static uint8_t fill_methods(size_t i) { return (uint8_t)(i + 1); }
static uint8_t fill_zero(size_t i) { (void)i; return 0; }

/*
 * The largest ClientHello OpenSSL's server accepts, into m: the example's,
 * grown to 32767 cipher suites (GREASE added: the fingerprints do not
 * change), 255 compression methods, and a padding extension that fills
 * the extensions block to 65535 bytes.  Its length (FC_TLS_HELLO_MAX).
 */
static size_t
largest_hello(uint8_t *m)
{
	struct fc_hello_spec s;
	size_t len, n, at, ciphers = 4 + 2 + 32 + 1 + 32, comp, exts, pad = 0;

	fc_hello_chrome(&s, 0x001d, 32);
	n = fc_hello_build(&s, buf, sizeof(buf), &len);
	assert_true(n == 5 + len);
	memcpy(m, buf + 5, len);
	n = 65534 - get_be(m, ciphers, 2);
	grow(m, &len, ciphers + 2, n, fill_grease);
	put_be(m, ciphers, 2, 65534);
	comp = ciphers + 2 + 65534;
	n = 255 - m[comp];
	grow(m, &len, comp + 1 + m[comp], n, fill_methods);
	m[comp] = 255;
	exts = comp + 1 + 255;
	for (at = exts + 2; at < len; at += 4 + get_be(m, at + 2, 2))
		if (get_be(m, at, 2) == 0x0015)
			pad = at;
	assert_true(pad != 0);
	n = 65535 - get_be(m, exts, 2);
	grow(m, &len, pad + 4, n, fill_zero);
	put_be(m, pad + 2, 2, get_be(m, pad + 2, 2) + (uint32_t)n);
	put_be(m, exts, 2, 65535);
	put_be(m, 1, 3, (uint32_t)len - 4);
	return len;
}

/*
 * The cap is OpenSSL's: the largest hello its server accepts (a body of
 * 131396 bytes, every field at its longest) is read whole, in one piece or
 * in segments of 1448 bytes, and fingerprinted as the example it grew
 * from; one byte more is refused before it is buffered.  A hello of 20 KiB
 * (over the old cap of 16 KiB, in two records) is read whole too.
 */
static void
test_cap(void **state)
{
	static uint8_t m[FC_TLS_HELLO_MAX + 16];
	struct fc_hello_spec s;
	size_t len, n, used;
	int rc = -EAGAIN;

	(void)state;
	/* 20 KiB: the example padded, as fc_hello splits it (records of 16384) */
	fc_hello_chrome(&s, 0x001d, 32);
	fc_hello_build(&s, buf, sizeof(buf), &len);
	s.pad_len += 20480 - (unsigned int)len;
	n = fc_hello_build(&s, buf, sizeof(buf), &len);
	assert_int_equal(len, 20480);
	assert_int_equal(n, 20480 + 2 * 5);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(hello.msg_len, 20480);
	assert_spec_fingerprints(&hello);

	/* the largest: whole, then in segments */
	len = largest_hello(m);
	assert_int_equal(len, FC_TLS_HELLO_MAX);
	assert_int_equal(FC_TLS_HELLO_BODY_MAX, 131396);	/* CLIENT_HELLO_MAX_LENGTH */
	n = records(m, len);
	assert_int_equal(feed_all(&other, buf, n), 0);
	assert_int_equal(other.msg_len, FC_TLS_HELLO_MAX);
	assert_int_equal(other.ciphers.n, 32767);
	assert_int_equal(other.compression.len, 255);
	assert_int_equal(other.sni.len, 15);
	assert_memory_equal(fc_tls_bytes_ptr(&other, other.sni), "www.example.com", 15);
	assert_spec_fingerprints(&other);
	fc_tls_init(&hello);
	for (size_t off = 0; off < n && rc == -EAGAIN; off += used) {
		rc = fc_tls_feed(&hello, buf + off, n - off < 1448 ? n - off : 1448, &used);
		assert_true(used > 0);
	}
	assert_int_equal(rc, 0);
	assert_same_hello(&hello, &other);

	/* a body of one byte more: refused at its header, whatever follows */
	put_be(m, 1, 3, FC_TLS_HELLO_BODY_MAX + 1);
	n = records(m, len);
	fc_tls_init(&hello);
	assert_int_equal(fc_tls_feed(&hello, buf, 9, &used), -EMSGSIZE);
	assert_int_equal(used, 9);
	assert_string_equal(hello.err, "ClientHello body of 131397 bytes is over the cap of 131396 "
				       "(what OpenSSL's server accepts)");
	assert_int_equal(feed_all(&hello, buf, n), -EMSGSIZE);
}

/* Variations on the example, each with its JA4 (and JA3 where it says something new). */
static void
test_variants(void **state)
{
	static const uint16_t no_sigalg_exts[] = { 0x0000, 0x000a, 0x000b, 0x0010 };
	static const uint16_t grease_only[] = { 0x0a0a, 0xfafa };
	static const uint16_t versions12[] = { 0x0303 };
	static const char *const alpn_hex[] = { "\xab\x01\xcd", NULL };
	static const char *const alpn_one[] = { "h", NULL };
	static const char *const alpn_dash[] = { "-x", NULL };
	static uint16_t many[120];
	static char str[FC_JA_STR_MAX];
	char md5[FC_JA3_MD5_LEN + 1], ja4[FC_JA4_LEN + 1];
	struct fc_hello_spec s;
	size_t n;

	(void)state;
	/* no SNI: 'i', and the extension count one less */
	fc_hello_chrome(&s, 0x001d, 32);
	s.sni = NULL;
	s.exts = (const uint16_t[]){ 0x2a2a, 0x0017, 0xff01, 0x000a, 0x000b, 0x0023, 0x0010,
				     0x0005, 0x000d, 0x0012, 0x0033, 0x002d, 0x002b, 0x001b,
				     0x0015, 0x4469, 0x3a3a };
	s.nexts = 17;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_false(hello.has_sni);
	assert_int_equal(hello.sni.len, 0);
	assert_ja4(&hello, "t13i1515h2_8daaf6152771_e5627efa2ab1", NULL);

	/* no ALPN, no signature algorithms: "00" and no '_' in part c */
	fc_hello_chrome(&s, 0x001d, 32);
	s.exts = no_sigalg_exts;
	s.nexts = 3;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(fc_ja4(&hello, 't', ja4, str, sizeof(str)), 0);
	assert_string_equal(str, "t12d150300_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,"
				 "c02c,c02f,c030,cca8,cca9_000a,000b");

	/* ALPN values: non-alphanumeric ends in hex, one character twice, a dash */
	s.exts = no_sigalg_exts;
	s.nexts = 4;
	s.alpn = alpn_hex;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(fc_ja4(&hello, 't', ja4, NULL, 0), 0);
	assert_memory_equal(ja4, "t12d1504ad_", 11);
	s.alpn = alpn_one;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(fc_ja4(&hello, 't', ja4, NULL, 0), 0);
	assert_memory_equal(ja4, "t12d1504hh_", 11);
	s.alpn = alpn_dash;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(fc_ja4(&hello, 't', ja4, NULL, 0), 0);
	assert_memory_equal(ja4, "t12d150428_", 11);

	/* no extensions at all (an old TLS 1.2 hello): JA3 with three empty lists */
	fc_hello_chrome(&s, 0x001d, 32);
	s.nexts = 0;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	/* drop the empty extensions block: the field is optional */
	put16(REC_LEN, get16(REC_LEN) - 2);
	buf[MSG_LEN + 2] -= 2;
	n -= 2;
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_false(hello.has_ext_block);
	assert_true(fc_ja3(&hello, str, sizeof(str), md5) > 0);
	assert_string_equal(str, "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-"
				 "49172-156-157-47-53,,,");
	assert_ja4(&hello, "t12i150000_8daaf6152771_000000000000", NULL);

	/* only GREASE: the lists are empty, their hashes zeros; supported_versions
	 * of GREASE alone falls back on legacy_version */
	fc_hello_chrome(&s, 0x001d, 32);
	s.ciphers = grease_only;
	s.nciphers = 2;
	s.exts = grease_only;
	s.nexts = 2;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_ja4(&hello, "t12i000000_000000000000_000000000000", "t12i000000__");
	assert_true(fc_ja3(&hello, str, sizeof(str), md5) > 0);
	assert_string_equal(str, "771,,,,");

	/* supported_versions decides the version, GREASE in it skipped */
	fc_hello_chrome(&s, 0x001d, 32);
	s.versions = versions12;
	s.nversions = 1;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_ja4(&hello, "t12d1516h2_8daaf6152771_e5627efa2ab1", NULL);

	/* more than 99 ciphers counts as 99 */
	for (unsigned int i = 0; i < 120; i++)
		many[i] = (uint16_t)(0x1000 + i);
	fc_hello_chrome(&s, 0x001d, 32);
	s.ciphers = many;
	s.nciphers = 120;
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_int_equal(feed_all(&hello, buf, n), 0);
	assert_int_equal(fc_ja4(&hello, 't', ja4, NULL, 0), 0);
	assert_memory_equal(ja4, "t13d9916h2_", 11);
}

/* ---- hellos in a capture ---- */

struct seen {
	int n;
	int rc[8];
	char ja4[8][FC_JA4_LEN + 1];
	uint16_t sport[8];
	int family[8];
	uint64_t frame[8];
};

static int
collect(void *arg, const struct fc_tlscap_hello *ch)
{
	struct seen *s = arg;

	if (s->n < 8) {
		s->rc[s->n] = ch->rc;
		s->sport[s->n] = ch->sport;
		s->family[s->n] = ch->family;
		s->frame[s->n] = ch->frame;
		if (ch->rc == 0)
			assert_int_equal(fc_ja4(ch->hello, 't', s->ja4[s->n], NULL, 0), 0);
	}
	s->n++;
	return 0;
}

/* One Ethernet + IP + TCP frame with payload; checksums left zero (as on loopback). */
static void
frame(pcap_dumper_t *d, int v6, uint16_t sport, uint32_t seq, uint8_t flags,
      const uint8_t *data, size_t len)
{
	static uint8_t f[2048];
	struct pcap_pkthdr ph = { { 1, 0 }, 0, 0 };
	size_t ip = 14, l3 = v6 ? 40 : 20, tcp = ip + l3;

	memset(f, 0, tcp + 20);
	f[12] = v6 ? 0x86 : 0x08;
	f[13] = v6 ? 0xdd : 0x00;
	if (v6) {
		f[ip] = 0x60;
		f[ip + 4] = (uint8_t)((20 + len) >> 8);
		f[ip + 5] = (uint8_t)(20 + len);
		f[ip + 6] = 6;
		f[ip + 7] = 64;
		f[ip + 8] = 0x20; f[ip + 9] = 0x01; f[ip + 11] = 0x02; f[ip + 23] = 1;
		f[ip + 24] = 0x20; f[ip + 25] = 0x01; f[ip + 27] = 0x02; f[ip + 39] = 2;
	} else {
		f[ip] = 0x45;
		f[ip + 2] = (uint8_t)((40 + len) >> 8);
		f[ip + 3] = (uint8_t)(40 + len);
		f[ip + 8] = 64;
		f[ip + 9] = 6;
		memcpy(f + ip + 12, (const uint8_t[]){ 198, 18, 0, 1, 198, 18, 1, 2 }, 8);
	}
	f[tcp] = (uint8_t)(sport >> 8);
	f[tcp + 1] = (uint8_t)sport;
	f[tcp + 2] = 443 >> 8;
	f[tcp + 3] = 443 & 0xff;
	f[tcp + 4] = (uint8_t)(seq >> 24);
	f[tcp + 5] = (uint8_t)(seq >> 16);
	f[tcp + 6] = (uint8_t)(seq >> 8);
	f[tcp + 7] = (uint8_t)seq;
	f[tcp + 12] = 5 << 4;
	f[tcp + 13] = flags;
	if (len > 0)
		memcpy(f + tcp + 20, data, len);
	ph.caplen = ph.len = (bpf_u_int32)(tcp + 20 + len);
	pcap_dump((u_char *)d, &ph, f);
}

/*
 * FoxIO's captures (tests/tls/foxio-ja4.txt): each hello read whole (TCP:
 * its records at once; QUIC: its datagrams until the hello is whole) and
 * its JA4 the one FoxIO's implementation gives it.
 */
static void
test_foxio(void **state)
{
	static struct fc_tls_hello h;
	static struct fc_quic_hello q;
	static uint8_t b[1 << 16];
	static char line[1 << 18];
	unsigned int n = 0, quic = 0;
	FILE *f = fopen("tests/tls/foxio-ja4.txt", "r");

	(void)state;
	assert_non_null(f);	/* run from the tree's top, as tests/run.sh does */
	while (fgets(line, sizeof(line), f) != NULL) {
		char name[128], port[16], kind[8], want[FC_JA4_LEN + 2], ja4[FC_JA4_LEN + 1];
		int at = 0, rc = -EAGAIN;
		const char *hex;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		assert_int_equal(sscanf(line, "%127s %15s %7s %37s %n", name, port, kind, want, &at), 4);
		hex = line + at;
		if (strcmp(kind, "tcp") == 0) {
			size_t len = fc_hex(hex, strcspn(hex, "\n"), b, sizeof(b));

			assert_true(len > 0);
			fc_tls_init(&h);
			rc = fc_tls_feed(&h, b, len, NULL);
			if (rc == 0)
				assert_int_equal(fc_ja4(&h, 't', ja4, NULL, 0), 0);
		} else {
			fc_quic_init(&q);
			while (rc != 0 && *hex != '\0' && *hex != '\n') {
				size_t w = strcspn(hex, ":\n"), len = fc_hex(hex, w, b, sizeof(b));

				assert_true(len > 0);
				rc = fc_quic_feed(&q, b, len);
				hex += w + (hex[w] == ':');
			}
			if (rc == 0)
				assert_int_equal(fc_ja4(&q.hello, 'q', ja4, NULL, 0), 0);
			quic++;
		}
		if (rc != 0 || strcmp(ja4, want) != 0) {
			print_error("%s port %s (%s): %s, not %s\n", name, port, kind,
				    rc != 0 ? "no whole hello" : ja4, want);
			fail();
		}
		n++;
	}
	fclose(f);
	assert_true(n >= 30);
	assert_true(quic >= 3);
}

static void
test_capture(void **state)
{
	char path[] = "/tmp/test_tls-XXXXXX", err[256];
	struct fc_tlscap_stats st;
	struct fc_hello_spec s;
	struct seen seen = { 0 };
	pcap_t *dead;
	pcap_dumper_t *d;
	size_t n;
	int fd, rc;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	dead = pcap_open_dead(DLT_EN10MB, 65535);
	d = pcap_dump_open(dead, path);
	assert_non_null(d);

	/* 1: the post-quantum hello (X25519MLKEM768, a 1216-byte share) over two segments, after a SYN */
	fc_hello_chrome(&s, 0x11ec, 1216);
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	assert_true(n > 1460);
	frame(d, 0, 40001, 1000, 0x02, NULL, 0);
	frame(d, 0, 40001, 1001, 0x10, buf, 1448);
	frame(d, 0, 40001, 1001 + 1448, 0x18, buf + 1448, n - 1448);
	/* 2: the same in three segments out of order, the first retransmitted */
	frame(d, 0, 40002, 4999, 0x02, NULL, 0);
	frame(d, 0, 40002, 5000 + 1000, 0x18, buf + 1000, n - 1000);
	frame(d, 0, 40002, 5000 + 500, 0x10, buf + 500, 500);
	frame(d, 0, 40002, 5000, 0x10, buf, 600);
	frame(d, 0, 40002, 5000, 0x10, buf, 600);
	/* 3: not TLS, and a server's answer: neither reported */
	frame(d, 0, 40003, 1, 0x18, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18);
	frame(d, 0, 40004, 1, 0x18, (const uint8_t *)"\x16\x03\x03\x00\x04\x02\x00\x00\x00", 9);
	/* 4: IPv6, the example hello in one segment, no SYN in the capture */
	fc_hello_chrome(&s, 0x001d, 32);
	n = fc_hello_build(&s, buf, sizeof(buf), NULL);
	frame(d, 1, 40005, 77, 0x18, buf, n);
	/* 5: a hello cut short by a FIN, and one the capture ends in */
	frame(d, 0, 40006, 1, 0x19, buf, 100);
	frame(d, 0, 40007, 1, 0x18, buf, 100);
	pcap_dump_close(d);
	pcap_close(dead);

	rc = fc_tlscap_read(path, collect, &seen, &st, err, sizeof(err));
	for (int i = 0; i < seen.n && i < 8; i++)
		print_message("hello %d: port %u rc %d frame %lu %s\n", i, seen.sport[i], seen.rc[i],
			      (unsigned long)seen.frame[i], seen.ja4[i]);
	unlink(path);
	assert_int_equal(rc, 5);
	assert_int_equal(seen.n, 5);
	assert_int_equal(seen.rc[0], 0);
	assert_int_equal(seen.sport[0], 40001);
	assert_int_equal(seen.frame[0], 3);
	assert_string_equal(seen.ja4[0], SPEC_JA4);
	assert_int_equal(seen.rc[1], 0);
	assert_int_equal(seen.sport[1], 40002);
	assert_int_equal(seen.frame[1], 7);
	assert_string_equal(seen.ja4[1], SPEC_JA4);
	assert_int_equal(seen.rc[2], 0);
	assert_int_equal(seen.family[2], AF_INET6);
	assert_string_equal(seen.ja4[2], SPEC_JA4);
	assert_int_equal(seen.rc[3], -EAGAIN);
	assert_int_equal(seen.sport[3], 40006);
	assert_int_equal(seen.rc[4], -EAGAIN);
	assert_int_equal(seen.sport[4], 40007);
	assert_int_equal(st.frames, 13);
	assert_int_equal(st.segments, 11);

	/* a file that is not a capture */
	rc = fc_tlscap_read("/etc/hostname", collect, &seen, NULL, err, sizeof(err));
	assert_int_equal(rc, -EIO);
	assert_non_null(strstr(err, "/etc/hostname: "));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spec_example),
		cmocka_unit_test(test_splits),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_variants),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_foxio),
	};

	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}
