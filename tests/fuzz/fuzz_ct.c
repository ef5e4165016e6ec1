/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: conntrack's event datagrams as flowcutd reads them
 * (driver/ct/fd_ct: fd_ct_parse, libnetfilter_conntrack's nfct_nlmsg_parse
 * under it) and the offload policy on whatever state they make
 * (driver/ct/fd_policy).  Checks: no crash or overread (ASan); a result in
 * range; a state that qualifies yields keys of its own family, both ways,
 * and an action the fast path knows.
 *
 * libnetfilter_conntrack exits the process on a message whose attributes
 * break ctnetlink's ABI (its __abi_breakage(): it trusts the kernel, and
 * so does flowcutd, which reads only the kernel's datagrams - fd_ct.c).
 * Here that exit is caught while a message is parsed (exit() interposed,
 * a longjmp out) and counts as a refused message, so the fuzzer goes on
 * to what flowcut's own code does with the messages the library takes.
 * The state it was filling is left behind: run with leak detection off
 * (tests/run.sh does).
 */
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "fd_ct.h"
#include "fd_policy.h"
#include "fuzz.h"

static sigjmp_buf in_parse;
static volatile int parsing;

/* The library's exit while parsing: back to fuzz_one.  Any other: the real one. */
void
exit(int status)
{
	static void (*real_exit)(int);

	if (parsing)
		siglongjmp(in_parse, 1);
	if (real_exit == NULL)
		real_exit = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	real_exit(status);
	__builtin_unreachable();
}

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
	if (sigsetjmp(in_parse, 0) != 0) {	/* refused by the library (see above) */
		parsing = 0;
		free(buf);
		return 0;
	}
	parsing = 1;
	rc = fd_ct_parse(buf, size, own, on_event, &n);
	parsing = 0;
	free(buf);
	if (rc >= 0 && (unsigned int)rc != n)
		die("the count is not what was handed on");
	if (rc < 0 && rc != -EBADMSG && rc != -ENOMEM)
		die("an unexpected error");
	return 0;
}

/* A NEW event for a TCP state, as the kernel sends it (built with libnetfilter_conntrack). */
static size_t
seed_event(uint8_t *buf, size_t cap, int family, uint8_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;
	struct nf_conntrack *ct = nfct_new();

	(void)cap;
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_pid = 1234;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = (uint8_t)(family == 4 ? AF_INET : AF_INET6);
	nfh->version = NFNETLINK_V0;
	nfct_set_attr_u8(ct, ATTR_L3PROTO, nfh->nfgen_family);
	if (family == 4) {
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, htonl(0xc6120002));
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, htonl(0xc6120102));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, htonl(0xc6120102));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, htonl(0xc6120002));
	} else {
		uint8_t a[16] = { 0x20, 0x01, 0, 2, [15] = 2 }, b[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1,
									  [15] = 2 };

		nfct_set_attr(ct, ATTR_IPV6_SRC, a);
		nfct_set_attr(ct, ATTR_IPV6_DST, b);
		nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, b);
		nfct_set_attr(ct, ATTR_REPL_IPV6_DST, a);
	}
	nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, IPPROTO_TCP);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(40000));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(80));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(80));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(40000));
	nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_CONFIRMED | IPS_SEEN_REPLY);
	nfct_set_attr_u32(ct, ATTR_MARK, 0x40000000u);
	nfct_set_attr_u32(ct, ATTR_ID, 77);
	nfct_nlmsg_build(nlh, ct);
	nfct_destroy(ct);
	return nlh->nlmsg_len;
}

int
fuzz_seeds(const char *dir)
{
	uint8_t buf[4096] __attribute__((aligned(4)));
	const struct { int family; uint8_t type; } seeds[] = {
		{ 4, IPCTNL_MSG_CT_NEW }, { 6, IPCTNL_MSG_CT_NEW }, { 4, IPCTNL_MSG_CT_DELETE },
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		memset(buf, 0, sizeof(buf));
		if (fuzz_seed_put(dir, i, buf, seed_event(buf, sizeof(buf), seeds[i].family,
							  seeds[i].type)) != 0)
			return -1;
	}
	return 0;
}
