/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-ctfill: puts N assured UDP states into the kernel's conntrack of
 * the network namespace it runs in, for the lab's measurements at scale
 * (lab/reload.sh):
 *
 *   flowcut-ctfill N [--mark M] [--timeout S]
 *
 * IPv4, 198.18.200.1:P > 198.19.200.1:Q (the benchmarking range, on no
 * route of the lab: flowcutd reads them and offloads none), P and Q
 * counted from 1024 and 10000, status ASSURED|SEEN_REPLY, mark M (0 by
 * default), timeout S (600 by default).  Prints how many it made and how
 * long it took.  Exits 1 at the first state conntrack refuses, saying which
 * and why.  libnetfilter_conntrack's one-request-a-state, as conntrack -I
 * does, but in one process (conntrack -I is a process a state: 200,000 of
 * them take minutes).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

static unsigned long
number(const char *what, const char *s, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s || v > max) {
		fprintf(stderr, "flowcut-ctfill: %s: '%s' is not 0 to %lu\n", what, s, max);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	unsigned long n, mark = 0, timeout = 600;
	struct nfct_handle *h;
	struct nf_conntrack *ct;
	struct timespec t0, t1;

	if (argc < 2 || argc % 2 != 0) {
		fprintf(stderr, "usage: flowcut-ctfill N [--mark M] [--timeout S]\n");
		return 2;
	}
	n = number("N", argv[1], 4000000);
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--mark") == 0)
			mark = number("--mark", argv[i + 1], UINT32_MAX);
		else if (strcmp(argv[i], "--timeout") == 0)
			timeout = number("--timeout", argv[i + 1], 86400);
		else {
			fprintf(stderr, "flowcut-ctfill: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	h = nfct_open(CONNTRACK, 0);
	ct = nfct_new();
	if (h == NULL || ct == NULL) {
		fprintf(stderr, "flowcut-ctfill: conntrack: %s\n", strerror(errno));
		return 1;
	}
	nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, AF_INET);
	nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr("198.18.200.1"));
	nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr("198.19.200.1"));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr("198.19.200.1"));
	nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr("198.18.200.1"));
	nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_UDP);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, IPPROTO_UDP);
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_SEEN_REPLY);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, (uint32_t)timeout);
	nfct_set_attr_u32(ct, ATTR_MARK, (uint32_t)mark);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long i = 0; i < n; i++) {
		uint16_t sport = htons((uint16_t)(1024 + i % 64000));
		uint16_t dport = htons((uint16_t)(10000 + i / 64000));

		nfct_set_attr_u16(ct, ATTR_PORT_SRC, sport);
		nfct_set_attr_u16(ct, ATTR_PORT_DST, dport);
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, dport);
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, sport);
		if (nfct_query(h, NFCT_Q_CREATE, ct) != 0) {
			fprintf(stderr, "flowcut-ctfill: state %lu (ports %u > %u): %s\n", i,
				ntohs(sport), ntohs(dport), strerror(errno));
			return 1;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("flowcut-ctfill: %lu states in %.2f s\n", n,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	nfct_destroy(ct);
	nfct_close(h);
	return 0;
}
