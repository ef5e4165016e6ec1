/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the QUIC Initial reader (inspect/fc_quic).  The first byte
 * chooses what the rest is:
 *
 *   even   datagrams, each a 2-byte length and its bytes, fed to
 *          fc_quic_feed (headers, lengths, tokens, coalesced packets: what
 *          comes before the AEAD, which fuzzed bytes never pass)
 *   odd    decrypted Initial payloads, each a 2-byte length and its bytes,
 *          fed to fc_quic_frames (frames, CRYPTO offsets, the hello)
 *
 * Checks: no crash, no read past an input (ASan); every answer is one the
 * header names, and an error says why; an answer other than -EAGAIN,
 * -E2BIG and -EPROTO is final (fed again, the same); a datagram refused
 * (-E2BIG: more Initials than the cap; -EPROTO: one that does not open)
 * has had none of its Initials read, and the next is read; a whole
 * hello has a JA4 starting with 'q' and a JA3.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_hex.h"
#include "fc_ja.h"
#include "fc_quic.h"
#include "fc_quicvec.h"
#include "fuzz.h"

static struct fc_quic_hello q;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_quic: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static char str[FC_JA_STR_MAX];
	bool frames = size > 0 && (data[0] & 1);
	uint32_t opened;
	size_t pos = 1;
	int rc = -EAGAIN;

	fc_quic_init(&q);
	while (pos + 2 <= size && (rc == -EAGAIN || rc == -E2BIG || rc == -EPROTO)) {
		size_t n = (size_t)data[pos] << 8 | data[pos + 1];
		uint8_t *copy;

		pos += 2;
		if (n > size - pos)
			n = size - pos;
		copy = malloc(n ? n : 1);	/* exactly n: a read past it is caught */
		if (copy == NULL)
			die("out of memory");
		memcpy(copy, data + pos, n);
		opened = q.packets;
		rc = frames ? fc_quic_frames(&q, copy, n) : fc_quic_feed(&q, copy, n);
		/* a datagram refused is refused whole: nothing of it opened, read on */
		if ((rc == -E2BIG || rc == -EPROTO) && (frames || q.packets != opened))
			die("a datagram refused after an Initial of it was opened");
		if (rc != -EAGAIN && rc != -E2BIG && rc != -EPROTO &&
		    (frames ? fc_quic_frames(&q, copy, n) : fc_quic_feed(&q, copy, n)) != rc)
			die("an answer that was not final");
		free(copy);
		pos += n;
	}
	if (rc != 0 && rc != -EAGAIN && rc != -ENOMSG && rc != -EBADMSG && rc != -EMSGSIZE &&
	    rc != -E2BIG && rc != -EPROTO && rc != -EIO)
		die("an answer the header does not name");
	if (rc != 0 && rc != -EAGAIN && q.err[0] == '\0')
		die("an error without its reason");
	if (rc == 0) {
		char ja4[FC_JA4_LEN + 1], md5[FC_JA3_MD5_LEN + 1];

		if (fc_ja4(&q.hello, 'q', ja4, NULL, 0) != 0 || ja4[0] != 'q')
			die("a whole hello without its JA4");
		if (fc_ja3(&q.hello, str, sizeof(str), md5) < 0)
			die("a whole hello without its JA3");
	}
	return 0;
}

/* The RFC 9001 A.2 client Initial (its first 64 bytes are enough to seed the header paths). */
static const char rfc_initial[] =
	"c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11"
	"d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399";

/* A seed: its mode, its length, its bytes from hex (out: SEED_MAX bytes). */
#define SEED_MAX 1024

static size_t
seed_of(uint8_t mode, const char *hex, uint8_t *out)
{
	size_t n = fc_hex(hex, strlen(hex), out + 3, SEED_MAX - 3);

	out[0] = mode;
	out[1] = (uint8_t)(n >> 8);
	out[2] = (uint8_t)n;
	return 3 + n;
}

int
fuzz_seeds(const char *dir)
{
	uint8_t s[SEED_MAX];
	size_t n;
	int rc = 0;

	n = seed_of(0, rfc_initial, s);
	rc |= fuzz_seed_put(dir, 0, s, n);
	n = seed_of(1, fc_rfc9001_crypto_frame, s);
	rc |= fuzz_seed_put(dir, 1, s, n);
	/* the CRYPTO frame in two payloads, the second part first, with an ACK and padding */
	{
		uint8_t t[1024];
		size_t k = 0, m = seed_of(1, fc_rfc9001_crypto_frame, s) - 3;	/* the frame alone in s + 3 */
		const uint8_t *hello = s + 3 + 4;

		t[k++] = 1;
		t[k++] = 0;
		t[k++] = (uint8_t)(5 + (m - 4 - 100) + 7 + 10);
		memcpy(t + k, "\x06\x40\x64\x40", 4);
		k += 4;
		t[k++] = (uint8_t)(m - 4 - 100);
		memcpy(t + k, hello + 100, m - 4 - 100);
		k += m - 4 - 100;
		memcpy(t + k, "\x02\x05\x00\x01\x00\x01\x01", 7);
		k += 7;
		memset(t + k, 0, 10);
		k += 10;
		t[k++] = 0;
		t[k++] = 104;
		memcpy(t + k, "\x06\x00\x40\x64", 4);
		k += 4;
		memcpy(t + k, hello, 100);
		k += 100;
		rc |= fuzz_seed_put(dir, 2, t, k);
	}
	/* a datagram of one Initial more than the cap (39 bytes each, opaque payloads): -E2BIG */
	{
		enum { N = FC_QUIC_INITIALS_MAX + 1 };
		uint8_t t[3 + N * 39];
		size_t k = 0;

		t[k++] = 0;
		t[k++] = (uint8_t)((N * 39) >> 8);
		t[k++] = (uint8_t)(N * 39);
		for (int i = 0; i < N; i++) {
			memcpy(t + k, "\xc0\x00\x00\x00\x01\x08\x83\x94\xc8\xf0\x3e\x51\x57\x08"
			       "\x00\x00\x40\x15", 18);	/* Length 21: pn and payload, opaque */
			k += 18;
			memset(t + k, 0x5a + i, 21);
			k += 21;
		}
		rc |= fuzz_seed_put(dir, 3, t, k);
	}
	return rc ? -1 : 0;
}
