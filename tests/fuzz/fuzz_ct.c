/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: conntrack's event datagrams as flowcutd reads them
 * (driver/ct/fd_ct: fd_ct_parse, libnetfilter_conntrack's nfct_nlmsg_parse
 * under it) and the offload policy on whatever state they make
 * (driver/ct/fd_policy).  Checks: no crash or overread (ASan); a result in
 * range; a state that qualifies yields keys of its own family, both ways,
 * and an action the fast path knows.
 *
 * The library's exit on a message it refuses is caught (fuzz_nfct.h).
 * Seeds: the kernel's NEW (IPv4, IPv6) and DELETE, and a NEW of our own
 * (skipped unparsed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_ct.h"
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
	FUZZ_NFCT_PARSE(rc, fd_ct_parse(buf, size, own, on_event, &n), free(buf); return 0);
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
