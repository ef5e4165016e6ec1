/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: conntrack's event datagrams as flowcutd reads them
 * (driver/ct/fd_ct: fd_ct_parse, driver/ct/fd_ctparse under it) and the
 * offload policy on whatever state they make (driver/ct/fd_policy).
 * Checks: no crash or overread (ASan); a result in range; a state that
 * qualifies yields keys of its own family, both ways, and an action the
 * fast path knows; each message fd_ctparse takes, where
 * libnetfilter_conntrack's nfct_nlmsg_parse takes it too, parsed alike
 * (tests/lib/fc_nfct_same.h: the library is the oracle).
 *
 * The library's exit on a message it refuses is caught (fuzz_nfct.h).
 * Seeds: the kernel's NEW (IPv4, IPv6) and DELETE, and a NEW of our own
 * (skipped unparsed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_nfct_same.h"
#include "fd_ct.h"
#include "fd_ctparse.h"
#include "fd_nl.h"
#include "fd_policy.h"
#include "fuzz.h"
#include "fuzz_nfct.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_ct: %s\n", what);
	abort();
}

static void
on_event(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct, bool own)
{
	unsigned int *n = arg;

	(void)own;
	(*n)++;
	if (type != FD_CT_UPDATE && type != FD_CT_DESTROY)
		die("an event of no type");
	if (fd_policy_qualifies(ct, 0x40000000u)) {
		int fam = fd_policy_family(ct);
		uint8_t dst[16];

		if (fam != 4 && fam != 6)
			die("a qualifying state of no family");
		for (int d = 0; d < 2; d++) {
			struct fc_key k;

			fd_policy_key(ct, (enum fd_dir)d, 1, &k);
			if (k.family != fam)
				die("a key of the other family");
			fd_policy_route_dst(ct, (enum fd_dir)d, dst);
		}
		if (fd_policy_action(ct, true) >= FC_ACTION_MAX ||
		    fd_policy_action(ct, false) >= FC_ACTION_MAX)
			die("an action the fast path does not know");
	}
}

/* The library's parse of one message: 0, or 1 when it exited (refused). */
static int
library_parse(const struct nlmsghdr *h, struct nf_conntrack *ct, int *rc)
{
	FUZZ_NFCT_PARSE(*rc, nfct_nlmsg_parse(h, ct), return 1);
	return 0;
}

/* One message: where fd_ctparse and the library both take it, alike (the walk's, fd_nl_walk). */
static int
parsed_alike(const struct nlmsghdr *h, void *arg)
{
	struct nf_conntrack *a, *b;
	const char *diff = NULL;
	int rc = -1;

	(void)arg;
	if (NFNL_SUBSYS_ID(h->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
		return 0;
	a = nfct_new();
	b = nfct_new();
	if (a == NULL || b == NULL || fd_ctparse_msg(h, a) != 0) {
		if (a != NULL)
			nfct_destroy(a);
		if (b != NULL)
			nfct_destroy(b);
		return 0;
	}
	if (library_parse(h, b, &rc) != 0) {
		nfct_destroy(a);	/* b left as the library's exit left it */
		return 0;
	}
	if (rc >= 0)
		diff = fc_nfct_differ(a, b);
	nfct_destroy(a);
	nfct_destroy(b);
	if (diff != NULL) {
		fprintf(stderr, "fuzz_ct: fd_ctparse and the library differ on %s\n", diff);
		abort();
	}
	return 0;
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static const uint32_t own[2] = { 1234, 5678 };
	unsigned int n = 0;
	/* aligned, as a datagram received into flowcutd's buffer is */
	void *buf = malloc(size ? size : 1);
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	rc = fd_ct_parse(buf, size, own, on_event, &n);
	(void)fd_nl_walk(buf, size, parsed_alike, NULL);
	free(buf);
	if (rc >= 0 && (unsigned int)rc != n)
		die("the count is not what was handed on");
	if (rc < 0 && rc != -EBADMSG && rc != -ENOMEM)
		die("an unexpected error");
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	uint8_t buf[4096] __attribute__((aligned(4)));
	const struct { int family; uint8_t type; uint32_t pid; } seeds[] = {
		{ 4, IPCTNL_MSG_CT_NEW, 0 }, { 6, IPCTNL_MSG_CT_NEW, 0 },
		{ 4, IPCTNL_MSG_CT_DELETE, 1234 }, { 4, IPCTNL_MSG_CT_NEW, 5678 },
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		memset(buf, 0, sizeof(buf));
		if (fuzz_seed_put(dir, i, buf, fuzz_nfct_state_msg(buf, seeds[i].family,
								   seeds[i].type, seeds[i].pid,
								   0)) != 0)
			return -1;
	}
	return 0;
}
