/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the ClientHello parser (inspect/fc_tls) and the
 * fingerprints of what it accepts (inspect/fc_ja).  The input is the
 * client's byte stream.  Checks: no crash; the stream given whole and
 * given in two pieces (split where the sum of its bytes says) gets the same
 * answer and the same hello; every refusal says why; JA4 has its shape and
 * JA3 fits the room fc_ja.h promises.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_hello.h"
#include "fc_ja.h"
#include "fc_tls.h"
#include "fuzz.h"

static struct fc_tls_hello whole, pieces;
static char str[FC_JA_STR_MAX], raw[FC_JA_STR_MAX];

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_tls: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static void
check_fingerprints(const struct fc_tls_hello *h)
{
	char md5[FC_JA3_MD5_LEN + 1], ja4[FC_JA4_LEN + 1];
	int n = fc_ja3(h, str, sizeof(str), md5);

	if (n < 0 || strlen(str) != (size_t)n || strlen(md5) != FC_JA3_MD5_LEN)
		broken("JA3 does not fit FC_JA_STR_MAX");
	if (fc_ja4(h, 't', ja4, raw, sizeof(raw)) != 0)
		broken("JA4_r does not fit FC_JA_STR_MAX");
	if (strlen(ja4) != FC_JA4_LEN || ja4[10] != '_' || ja4[23] != '_' ||
	    strncmp(raw, ja4, 10) != 0)
		broken("JA4 is not of its shape");
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	size_t split = 0, used;
	int a, b;

	for (size_t i = 0; i < size; i++)
		split += data[i];
	split %= size + 1;
	fc_tls_init(&whole);
	a = fc_tls_feed(&whole, data, size, NULL);
	fc_tls_init(&pieces);
	b = fc_tls_feed(&pieces, data, split, &used);
	if (b == -EAGAIN)
		b = fc_tls_feed(&pieces, data + split, size - split, NULL);
	if (a != b)
		broken("whole and in pieces, the answers differ");
	if (a != 0 && a != -EAGAIN && (whole.err[0] == '\0' || strcmp(whole.err, pieces.err) != 0))
		broken("a refusal without its reason, or with another one in pieces");
	if (a != 0)
		return 0;
	if (whole.msg_len != pieces.msg_len || memcmp(whole.msg, pieces.msg, whole.msg_len) != 0 ||
	    whole.next != pieces.next ||
	    memcmp(whole.ext, pieces.ext, whole.next * sizeof(whole.ext[0])) != 0 ||
	    memcmp(&whole.sni, &pieces.sni, sizeof(whole.sni)) != 0 ||
	    memcmp(&whole.alpn, &pieces.alpn, sizeof(whole.alpn)) != 0)
		broken("whole and in pieces, the hellos differ");
	check_fingerprints(&whole);
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static uint8_t buf[1 << 16];
	static const struct {
		const char *name;
		uint16_t group;
		unsigned int share;
		unsigned int record_max;
		unsigned int pad;	/* the padding extension's bytes; 0: the example's */
	} seeds[] = {
		{ "ja4-spec-example", 0x001d, 32, 0, 0 },
		{ "ja4-spec-example-records-of-100", 0x001d, 32, 100, 0 },
		{ "post-quantum-x25519mlkem768", 0x11ec, 1216, 0, 0 },
		/* over the old 16 KiB cap: two records, read whole */
		{ "ja4-spec-example-padded-to-20k", 0x001d, 32, 0, 20000 },
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct fc_hello_spec s;
		char path[4096];
		size_t n;
		FILE *f;

		fc_hello_chrome(&s, seeds[i].group, seeds[i].share);
		s.record_max = seeds[i].record_max;
		if (seeds[i].pad != 0)
			s.pad_len = seeds[i].pad;
		n = fc_hello_build(&s, buf, sizeof(buf), NULL);
		snprintf(path, sizeof(path), "%s/%s", dir, seeds[i].name);
		f = fopen(path, "wb");
		if (f == NULL || n == 0 || fwrite(buf, 1, n, f) != n)
			return -1;
		fclose(f);
	}
	return 0;
}
