/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcut-inspect's side of its socket (inspector/fi_wire,
 * fi_parse) - what any question does to the process that parses without
 * root, and flowcutd's check of what comes back.  The input is a run of
 * questions, each a 2-byte length (little-endian) and its bytes, asked of
 * one fi_parse of 16 parsers (so they are let go for room).  Checks: no
 * crash; a question is answered (1), forgotten (0) or refused (-EBADMSG,
 * with why); every answer passes flowcutd's check (fi_wire_ans_check) and
 * names its question (id, seq, kind); the raw bytes as an answer are
 * refused or pass, never crash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_hello.h"
#include "fc_hex.h"
#include "fc_quicvec.h"
#include "fi_parse.h"
#include "fi_wire.h"
#include "fuzz.h"

static struct fi_parse *p;

static void
broken(const char *what)
{
	fprintf(stderr, "fuzz_fiwire: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	p = fi_parse_open(16);
	return p != NULL ? 0 : -1;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static uint8_t msg[FI_REQ_MAX] __attribute__((aligned(8)));
	size_t at = 0;

	while (at + 2 <= size) {
		size_t n = (size_t)data[at] | (size_t)data[at + 1] << 8;
		const char *why = NULL;
		struct fi_ans a;
		struct fi_req r;
		int rc;

		at += 2;
		if (n > size - at)
			n = size - at;
		memcpy(msg, data + at, n);
		at += n;
		(void)fi_wire_ans_check(msg, n, &why);
		why = NULL;
		rc = fi_parse_ask(p, msg, n, &a, &why);
		if (rc == -EBADMSG) {
			if (why == NULL || why[0] == '\0')
				broken("a question refused without why");
			continue;
		}
		if (rc != 0 && rc != 1)
			broken("an answer that is none of 1, 0, -EBADMSG");
		memcpy(&r, msg, sizeof(r));
		if (rc == 0 && r.kind != FI_FORGET)
			broken("a question not answered");
		if (rc == 1 && (fi_wire_ans_check(&a, sizeof(a), &why) != 0 || a.id != r.id ||
				a.seq != r.seq || a.kind != r.kind))
			broken("an answer flowcutd refuses, or one naming another question");
	}
	fi_parse_reset(p);
	return 0;
}

/* One question into buf (length-prefixed): its bytes after the header. */
static size_t
put(uint8_t *buf, uint8_t kind, uint8_t flags, uint64_t id, uint32_t seq, const void *d, size_t n)
{
	struct fi_req r = { .version = FI_WIRE_VERSION, .kind = kind, .flags = flags,
			    .len = (uint16_t)n, .seq = seq, .id = id };
	size_t len = sizeof(r) + n;

	buf[0] = (uint8_t)len;
	buf[1] = (uint8_t)(len >> 8);
	memcpy(buf + 2, &r, sizeof(r));
	memcpy(buf + 2 + sizeof(r), d, n);
	return 2 + len;
}

int
fuzz_seeds(const char *dir)
{
	static uint8_t hello[1 << 14], buf[1 << 15];
	struct fc_hello_spec s;
	size_t hn, n = 0;

	fc_hello_chrome(&s, 0x001d, 32);
	hn = fc_hello_build(&s, hello, sizeof(hello), NULL);
	if (hn < 200)
		return -1;
	/* a hello in two questions, then forgotten */
	n += put(buf + n, FI_TLS, FI_FIRST, 1, 0, hello, 100);
	n += put(buf + n, FI_TLS, 0, 1, 1, hello + 100, hn - 100);
	n += put(buf + n, FI_FORGET, 0, 1, 0, NULL, 0);
	if (fuzz_seed_put(dir, 0, buf, n) != 0)
		return -1;
	/* RFC 9001's client Initial, then a question for an id never begun */
	hn = fc_hex(fc_rfc9001_client_initial, strlen(fc_rfc9001_client_initial), hello, sizeof(hello));
	if (hn == 0)
		return -1;
	n = put(buf, FI_QUIC, FI_FIRST, 2, 0, hello, hn);
	n += put(buf + n, FI_TLS, 0, 3, 0, "\x16\x03\x01", 3);
	return fuzz_seed_put(dir, 1, buf, n);
}
