/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the segment reader (inspect/fc_seg) that flowcutd's
 * inspector and fc_tlscap share.  The input is an Ethernet frame, copied
 * to exactly its size; fc_seg_ether finds its IP header and fc_seg_ip
 * reads it, and fc_seg_ip reads the whole input as an IP packet too.
 *
 * Checks: no crash, no read past the input (ASan); an answer is one the
 * header names; what a segment says is given lies within the input, and
 * whole means all of the payload is given; the same input read twice
 * gives the same answer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_frame.h"
#include "fc_seg.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_seg: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static void
check(const uint8_t *ip, uint32_t len, size_t given)
{
	struct fc_seg g, again;
	enum fc_seg_result r = fc_seg_ip(ip, len, &g);

	if (r != FC_SEG_OK && r != FC_SEG_FRAGMENT && r != FC_SEG_OTHER)
		die("an answer the header does not name");
	if (fc_seg_ip(ip, len, &again) != r || memcmp(&g, &again, sizeof(g)) != 0)
		die("the same packet read twice, two answers");
	if (r != FC_SEG_OK)
		return;
	if ((g.family != 4 && g.family != 6) || (g.proto != 6 && g.proto != 17))
		die("a segment of another family or protocol");
	if (g.pcap > g.plen || (g.whole && g.pcap != g.plen))
		die("more given than the payload, or whole without all of it");
	if (g.pcap > 0 && (size_t)g.poff + g.pcap > given)
		die("the payload given lies past the input");
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	uint8_t *f = malloc(size ? size : 1);	/* exactly size: a read past it is caught */
	int off;

	if (f == NULL)
		die("out of memory");
	memcpy(f, data, size);
	off = fc_seg_ether(f, (uint32_t)size);
	if (off >= 0) {
		if ((size_t)off > size)
			die("an IP header past the frame");
		check(f + off, (uint32_t)(size - (size_t)off), size - (size_t)off);
	}
	check(f, (uint32_t)size, size);
	free(f);
	return 0;
}

/* Frames fc_frame builds: TCP and UDP over IPv4 and IPv6, tagged and not. */
int
fuzz_seeds(const char *dir)
{
	static const struct {
		int family;
		uint8_t proto;
		uint16_t vlan;
		uint16_t payload;
	} rows[] = {
		{ 4, 6, 0, 300 }, { 4, 17, 0, 2 }, { 6, 6, 42, 100 }, { 6, 17, 0, 200 },
		{ 4, 6, 7, 0 },
	};
	uint8_t f[2048];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_frame_spec s = { .payload = rows[i].payload, .vlan = rows[i].vlan,
					   .seq = 1000, .tcp_flags = 0x18 };
		size_t len;

		if (rows[i].family == 4)
			fc_key4(&s.key, rows[i].proto, "198.18.0.10", 40000, "198.19.0.10", 443);
		else
			fc_key6(&s.key, rows[i].proto, "2001:2::10", 40000, "2001:2:0:1::10", 443);
		len = fc_frame_build(&s, f, sizeof(f));
		if (len == 0 || fuzz_seed_put(dir, i, f, len) != 0)
			return -1;
	}
	return 0;
}
