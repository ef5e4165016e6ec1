/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the inspector (driver/ips/fd_inspect) - its frame parser, its
 * reassembly and holding, its decisions - over a sequence of steps read
 * from the input:
 *
 *   op & 3 == 0   a raw frame: len (2 bytes), the bytes (the parser's input)
 *   op & 3 == 1   a client segment of connection op >> 6: TCP flags (1),
 *                 its sequence number past the ISN (2; the SYN's is 0),
 *                 payload length (2),
 *                 the payload (what the input has left of it); it
 *                 acks the server's ISN + 1 (the server's SYN-ACK is
 *                 its segment at 0)
 *   op & 3 == 2   the same from the server (it comes up port 1)
 *   op & 3 == 3   the clock moves on: ms (2), then a tick
 *
 * bit 2 of op: flagged INSPECT; bit 3: its checksum spoiled; bit 4: a TTL
 * of 1.  UDP to 443 (QUIC) comes as raw frames.
 * The watched list holds the JA4 and the
 * JA3 of the JA4 specification's example hello (the seeds carry it).
 * Checks: no crash, no read past a frame (ASan); every frame handed on is
 * byte for byte one the inspector took and had not handed on yet (never
 * one it left to the caller); the connections being read stay within the
 * cap, and the entries within theirs; every decision names a TLS port;
 * what it released is never more than it held.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_fplist.h"
#include "fc_frame.h"
#include "fc_hello.h"
#include "fd_inspect.h"
#include "fuzz.h"

#define MAX_CONNS 4
#define MAX_ENTRIES 16
#define MAX_FRAMES 1024

struct taken {
	uint8_t *b;
	uint32_t len;
	uint16_t port;
	int sent;
};
static struct taken taken[MAX_FRAMES];
static unsigned int ntaken;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_inspect: %s\n", what);
	abort();
}

static void
out(void *octx, uint16_t port, const uint8_t *frame, uint32_t len)
{
	(void)octx;
	for (unsigned int i = 0; i <= ntaken && i < MAX_FRAMES; i++)	/* and the one being given */
		if (taken[i].b != NULL && !taken[i].sent && taken[i].len == len &&
		    memcmp(taken[i].b, frame, len) == 0) {
			if (port != taken[i].port)
				die("a frame handed on to a port it did not come from");
			taken[i].sent = 1;
			return;
		}
	die("a frame handed on that was not taken, or twice");
}

int
fuzz_init(void)
{
	return 0;
}

static uint16_t
rd16(const uint8_t **p, const uint8_t *end)
{
	uint16_t v = 0;

	if (end - *p >= 2) {
		v = (uint16_t)((*p)[0] << 8 | (*p)[1]);
		*p += 2;
	} else {
		*p = end;
	}
	return v;
}

/* A segment of connection c (client's, or the server's when reply) into f; its length. */
static size_t
segment(uint8_t *f, size_t cap, unsigned int c, int reply, uint8_t flags, uint32_t seq,
	const uint8_t *pl, uint16_t n, uint8_t ttl)
{
	struct fc_frame_spec s = { .dmac = { 2, 0xfc, 0, 0, 0, 1 }, .smac = { 2, 0, 0, 0, 0, 2 },
				   .tcp_flags = flags, .seq = seq, .ack = 1000, .ttl = ttl,
				   .payload = n };
	size_t len;

	if (reply)
		fc_key4(&s.key, IPPROTO_TCP, "198.18.1.2", 443, "198.18.0.2", (uint16_t)(40000 + c));
	else
		fc_key4(&s.key, IPPROTO_TCP, "198.18.0.2", (uint16_t)(40000 + c), "198.18.1.2", 443);
	len = fc_frame_build(&s, f, cap);
	if (len > 0 && n > 0)
		memcpy(f + 54, pl, n);
	if (len > 0)
		(void)fc_frame_fix_l4(f, len);
	return len;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static const uint16_t ports[] = { 443, 8443 };
	static const char watched[] = "t13d1516h2_8daaf6152771_e5627efa2ab1\n"
				      "50a0e1f8c13ee9e5521e3f374a63a021\n";
	struct fd_inspect_params p = { .max_conns = MAX_CONNS, .per_source = 2,
				       .max_entries = MAX_ENTRIES, .queue = 8 };
	struct fd_inspect *in = fd_inspect_open(&p);
	const uint8_t *at = data, *end = data + size;
	struct fc_fplist l = { 0 };
	uint64_t now = 0;
	static uint8_t f[2048];

	if (in == NULL || fc_fplist_parse(watched, sizeof(watched) - 1, &l, NULL, NULL) != 0)
		die("no inspector");
	fd_inspect_watch(in, &l);
	fd_inspect_ports(in, ports, 2);
	ntaken = 0;
	taken[0].b = NULL;
	while (at < end && ntaken < MAX_FRAMES) {
		uint8_t op = *at++;
		struct fd_inspect_decision d;
		struct fd_inspect_stats st;
		size_t len = 0;

		if ((op & 3) == 3) {
			now += rd16(&at, end);
			fd_inspect_tick(in, now, out, NULL);
		} else if ((op & 3) == 0) {
			len = rd16(&at, end);
			if (len > (size_t)(end - at))
				len = (size_t)(end - at);
			if (len > sizeof(f))
				len = sizeof(f);
			memcpy(f, at, len);
			at += len;
		} else {
			uint8_t flags = at < end ? *at++ : 0;
			uint32_t seq = 999u + rd16(&at, end);
			uint16_t n = rd16(&at, end);

			if (n > end - at)
				n = (uint16_t)(end - at);
			if (n > 1400)
				n = 1400;
			len = segment(f, sizeof(f), op >> 6, (op & 3) == 2, flags, seq, at, n,
				      op & 0x10 ? 1 : 0);
			at += n;
			if ((op & 8) && len > 54)
				f[50] ^= 0x5a;	/* the checksum */
		}
		if (len > 0 && (op & 3) != 3) {
			uint8_t *copy = malloc(len);

			if (copy == NULL)
				die("out of memory");
			memcpy(copy, f, len);	/* the inspector may not keep the caller's buffer */
			/* listed first: a frame may be handed on in the call that takes it */
			taken[ntaken].b = copy;
			taken[ntaken].len = (uint32_t)len;
			taken[ntaken].port = (op & 3) == 2;
			taken[ntaken].sent = 0;
			if (fd_inspect_frame(in, taken[ntaken].port, op & 4, copy, (uint32_t)len, now,
					     out, NULL)) {
				ntaken++;
			} else {
				if (taken[ntaken].sent)
					die("a frame left to the caller was handed on too");
				free(copy);
				taken[ntaken].b = NULL;
			}
		}
		fd_inspect_stats(in, &st);
		if (st.reading > MAX_CONNS || st.entries > MAX_ENTRIES)
			die("over the cap");
		if (st.frames[FD_INSPECT_F_RELEASED] > st.frames[FD_INSPECT_F_HELD])
			die("released more than held");
		while (fd_inspect_take(in, &d) == 1)
			if (ntohs(d.key.dport) != 443 && ntohs(d.key.dport) != 8443)
				die("a decision on a connection to no TLS port");
	}
	fd_inspect_close(in);
	for (unsigned int i = 0; i < ntaken; i++)
		free(taken[i].b);
	return 0;
}

/* One step: a segment with n bytes of payload at seq past the ISN (stream byte 0 is at 1). */
static size_t
step(uint8_t *b, uint8_t op, uint8_t flags, uint16_t seq, const uint8_t *pl, uint16_t n)
{
	b[0] = op;
	b[1] = flags;
	b[2] = (uint8_t)(seq >> 8);
	b[3] = (uint8_t)seq;
	b[4] = (uint8_t)(n >> 8);
	b[5] = (uint8_t)n;
	memcpy(b + 6, pl, n);
	return 6u + n;
}

int
fuzz_seeds(const char *dir)
{
	static uint8_t hello[4096], seed[8192];
	struct fc_hello_spec s;
	size_t hn, n;
	int rc = 0;

	/* the spec's hello (listed) in one segment, host path: SYN, SYN-ACK, ACK, hello */
	fc_hello_chrome(&s, 0x001d, 32);
	hn = fc_hello_build(&s, hello, sizeof(hello), NULL);
	n = step(seed, 0x01, 0x02, 0, NULL, 0);	/* the SYN */
	n += step(seed + n, 0x02, 0x12, 0, NULL, 0);	/* the SYN-ACK */
	n += step(seed + n, 0x01, 0x10, 1, NULL, 0);
	n += step(seed + n, 0x01, 0x18, 1, hello, (uint16_t)hn);
	n += step(seed + n, 0x05, 0x18, 1, hello, (uint16_t)hn);	/* again, flagged */
	n += step(seed + n, 0x02, 0x10, 0, NULL, 0);			/* the server's */
	rc |= fuzz_seed_put(dir, 0, seed, n);
	/* the post-quantum hello over two segments, out of order, on connection 1 */
	fc_hello_chrome(&s, 0x11ec, 1216);
	hn = fc_hello_build(&s, hello, sizeof(hello), NULL);
	n = step(seed, 0x41, 0x02, 0, NULL, 0);
	n += step(seed + n, 0x42, 0x12, 0, NULL, 0);
	n += step(seed + n, 0x45, 0x10, 1001, hello + 1000, (uint16_t)(hn - 1000));
	n += step(seed + n, 0x45, 0x10, 1, hello, 1000);
	rc |= fuzz_seed_put(dir, 1, seed, n);
	/* half a hello, then 2.5 s: its held frames let go at the hold deadline, read on */
	n = step(seed, 0x81, 0x02, 0, NULL, 0);
	n += step(seed + n, 0x82, 0x12, 0, NULL, 0);
	n += step(seed + n, 0x81, 0x10, 1, hello, 300);
	seed[n++] = 0x03;
	seed[n++] = 0x09;
	seed[n++] = 0xc4;
	rc |= fuzz_seed_put(dir, 2, seed, n);
	/* not a hello, a FIN; a raw runt frame */
	n = step(seed, 0xc1, 0x02, 0, NULL, 0);
	n += step(seed + n, 0xc2, 0x12, 0, NULL, 0);
	n += step(seed + n, 0xc1, 0x19, 1, (const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18);
	seed[n++] = 0x00;
	seed[n++] = 0x00;
	seed[n++] = 0x10;
	memset(seed + n, 0x08, 16);
	n += 16;
	rc |= fuzz_seed_put(dir, 3, seed, n);
	/* a raw frame: UDP to 443 holding the start of RFC 9001 A.2's client Initial */
	{
		static const uint8_t initial[] = {
			0xc0, 0x00, 0x00, 0x00, 0x01, 0x08, 0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51,
			0x57, 0x08, 0x00, 0x00, 0x44, 0x9e, 0x7b, 0x9a, 0xec, 0x34, 0xd1, 0xb1,
			0xc9, 0x8d, 0xd7, 0x68, 0x9f, 0xb8, 0xec, 0x11, 0xd2, 0x42, 0xb1, 0x23,
			0xdc, 0x9b, 0xd8, 0xba, 0xb9, 0x36, 0xb4, 0x7d, 0x92, 0xec, 0x35, 0x6c,
		};
		struct fc_frame_spec u = { .dmac = { 2, 0xfc, 0, 0, 0, 1 }, .smac = { 2, 0, 0, 0, 0, 2 },
					   .payload = sizeof(initial) };
		size_t fl;

		fc_key4(&u.key, IPPROTO_UDP, "198.18.0.2", 50000, "198.18.1.2", 443);
		fl = fc_frame_build(&u, seed + 3, sizeof(seed) - 3);
		memcpy(seed + 3 + 14 + 20 + 8, initial, sizeof(initial));
		(void)fc_frame_fix_l4(seed + 3, fl);
		seed[0] = 0x04;		/* raw, flagged */
		seed[1] = (uint8_t)(fl >> 8);
		seed[2] = (uint8_t)fl;
		rc |= fuzz_seed_put(dir, 4, seed, 3 + fl);
	}
	return rc ? -1 : 0;
}
