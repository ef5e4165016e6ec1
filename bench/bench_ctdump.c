/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_ctdump: `flowcut-bench ctdump`, what reading conntrack costs
 * flowcutd: the dump whole, incremental and filtered by the mark bit in
 * the kernel, and a state's parse (fd_ctparse beside the library's).
 *
 *   flowcut-bench ctdump [--conns N]
 *
 * ctdump: N assured UDP states (default 100,000) in a namespace of its
 * own, every other one with flowcutd's mark bit: conntrack's dump filtered
 * in the kernel by the bit (fd_ct_dump_start/_next) beside the whole dump
 * (fd_ct_dump) and the incremental one unfiltered, each timed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "bench.h"
#include "ctgen.h"
#include "fc_netns.h"
#include "fd_ct.h"
#include "fd_ctparse.h"

static void
ctdump_count(void *arg, const struct nf_conntrack *ct, int rc)
{
	(void)ct, (void)rc;
	(*(size_t *)arg)++;
}

/* fd_ct's incremental dump, filtered by (mark, mask), 64 datagrams a call: the states read. */
static size_t
ctdump_incremental(struct fd_ct *ct, uint32_t mark, uint32_t mask)
{
	size_t n = 0;

	if (fd_ct_dump_start(ct, mark, mask) != 0)
		return 0;
	while (fd_ct_dump_next(ct, 64, ctdump_count, &n) > 0)
		;
	return n;
}

/* The kernel's dump of every state, its datagrams back to back in *buf: their bytes, or 0. */
static size_t
raw_dump(char **buf)
{
	struct mnl_socket *q = mnl_socket_open(NETLINK_NETFILTER);
	char req[FD_CT_MSG_MAX] __attribute__((aligned(4)));
	int req_len = fd_ct_dump_msg(req, 0, 0, 0);	/* unfiltered */
	size_t used = 0, cap = 1 << 20;
	bool done = false;

	*buf = malloc(cap);
	if (q == NULL || *buf == NULL || mnl_socket_bind(q, 0, MNL_SOCKET_AUTOPID) != 0)
		goto fail;
	if (req_len < 0 || mnl_socket_sendto(q, req, (size_t)req_len) < 0)
		goto fail;
	while (!done) {
		ssize_t got;
		int left;

		if (cap - used < 65536) {
			char *b = realloc(*buf, cap * 2);

			if (b == NULL)
				goto fail;
			*buf = b;
			cap *= 2;
		}
		got = mnl_socket_recvfrom(q, *buf + used, 65536);
		if (got <= 0) {
			errno = got == 0 ? ECONNRESET : errno;
			goto fail;
		}
		left = (int)got;
		for (const struct nlmsghdr *h = (void *)(*buf + used); mnl_nlmsg_ok(h, left);
		     h = mnl_nlmsg_next(h, &left)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);

				errno = h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error < 0
					? -e->error : EPROTO;
				goto fail;
			}
			done |= h->nlmsg_type == NLMSG_DONE;
		}
		used += (size_t)got;
	}
	mnl_socket_close(q);
	return used;
fail:
	fprintf(stderr, "flowcut-bench ctdump: the raw dump: %s\n", strerror(errno));
	if (q != NULL)
		mnl_socket_close(q);
	free(*buf);
	*buf = NULL;
	return 0;
}

/* Every state of the dump's datagrams parsed into a fresh object, as flowcutd does: the ns a state. */
static double
parse_all(const char *buf, size_t len, bool lean, unsigned int *n)
{
	double t = mono_ns();

	*n = 0;
	for (size_t off = 0; off < len;) {
		const struct nlmsghdr *h = (const void *)(buf + off);
		int left = (int)(len - off);

		if (!mnl_nlmsg_ok(h, left))
			break;	/* what is left is no message (the kernel's never are) */
		for (; mnl_nlmsg_ok(h, left); h = mnl_nlmsg_next(h, &left)) {
			struct nf_conntrack *ct;

			if (NFNL_SUBSYS_ID(h->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
				continue;
			ct = nfct_new();
			if (ct == NULL || (lean ? fd_ctparse_msg(h, ct) : nfct_nlmsg_parse(h, ct)) < 0)
				fprintf(stderr, "flowcut-bench ctdump: a state did not parse\n");
			if (ct != NULL)
				nfct_destroy(ct);
			(*n)++;
		}
		off = len - (size_t)left;
	}
	return *n ? (mono_ns() - t) / *n : 0;
}

/*
 * ctdump: n assured UDP states in a namespace of its own, every other one
 * with the mark bit; the dump filtered in the kernel by the bit
 * (fd_ct_dump_start/_next) beside the whole dump fd_ct_dump reads (and
 * the incremental one unfiltered).
 */
int
bench_ctdump(unsigned int n)
{
	const char *why = fc_netns_front_ports();
	struct nfct_handle *h;
	struct nf_conntrack *st;
	struct nf_conntrack **all;
	struct fd_ct *ct;
	size_t got;
	double t;

	if (why != NULL) {
		printf("flowcut-bench ctdump: skipped: %s\n", why);
		return 0;
	}
	h = nfct_open(CONNTRACK, 0);
	st = nfct_new();
	ct = fd_ct_open();
	if (h == NULL || st == NULL || ct == NULL) {
		fprintf(stderr, "flowcut-bench ctdump: conntrack: %s\n", strerror(errno));
		return 1;
	}
	t = mono_ns();
	for (unsigned int i = 0; i < n; i++) {
		uint32_t src = htonl(0xc612c800u + i / 60000), dst = htonl(0xc613c801u);
		struct fd_tuple tu = { .sport = htons((uint16_t)(1024 + i % 60000)), .dport = htons(9),
				       .family = 4, .proto = IPPROTO_UDP };

		memcpy(tu.src, &src, 4);
		memcpy(tu.dst, &dst, 4);
		ctg_state(st, &tu, IPS_ASSURED | IPS_SEEN_REPLY, 600, i % 2 ? CUT_MARK : 0);
		if (nfct_query(h, NFCT_Q_CREATE, st) != 0) {
			fprintf(stderr, "flowcut-bench ctdump: state %u: %s\n", i, strerror(errno));
			return 1;
		}
	}
	printf("ctdump: %u states made in %.2f s, %u with the bit\n", n, (mono_ns() - t) / 1e9, n / 2);
	for (int rep = 0; rep < 3; rep++) {
		t = mono_ns();
		if (fd_ct_dump(ct, &all, &got) != 0)
			fprintf(stderr, "flowcut-bench ctdump: fd_ct_dump did not complete\n");
		fd_ct_dump_free(all, got);
		printf("  fd_ct_dump, whole, unfiltered:        %7zu states in %6.1f ms\n", got,
		       (mono_ns() - t) / 1e6);
		t = mono_ns();
		got = ctdump_incremental(ct, 0, 0);
		printf("  fd_ct_dump_next, unfiltered:          %7zu states in %6.1f ms\n", got,
		       (mono_ns() - t) / 1e6);
		t = mono_ns();
		got = ctdump_incremental(ct, CUT_MARK, CUT_MARK);
		printf("  fd_ct_dump_next, filtered by the bit: %7zu states in %6.1f ms\n", got,
		       (mono_ns() - t) / 1e6);
	}
	/* what flowcutd does with each state the kernel sends: the parse, beside the library's */
	char *raw;
	size_t raw_len = raw_dump(&raw);

	for (int rep = 0; raw_len > 0 && rep < 3; rep++) {
		unsigned int n_states;	/* the same messages both times */
		double lib_ns = parse_all(raw, raw_len, false, &n_states);
		double lean_ns = parse_all(raw, raw_len, true, &n_states);

		printf("  a state parsed (nfct_new, parse, nfct_destroy), %u states: "
		       "libnetfilter_conntrack %6.0f ns, fd_ctparse %6.0f ns (%.2fx)\n",
		       n_states, lib_ns, lean_ns, lean_ns > 0 ? lib_ns / lean_ns : 0);
	}
	free(raw);
	fd_ct_close(ct);
	nfct_destroy(st);
	nfct_close(h);
	return 0;
}
