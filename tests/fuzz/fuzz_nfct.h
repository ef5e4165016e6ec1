/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the fuzz targets of conntrack's datagrams share (fuzz_ct: events,
 * fuzz_ctdump: a dump's datagrams; one program each, so this header is
 * included once per program):
 *
 * - libnetfilter_conntrack exits the process on a message whose
 *   attributes break ctnetlink's ABI (its __abi_breakage(): it trusts the
 *   kernel, and so does flowcutd, which reads only the kernel's datagrams -
 *   driver/ct).  Here that exit is caught while FUZZ_NFCT_PARSE runs its
 *   call (exit() interposed, a longjmp out) and counts as a refused
 *   input, so the fuzzer goes on to what flowcut's own code does with the
 *   messages the library takes.  The state it was filling is left behind:
 *   run with leak detection off (tests/run.sh does).
 * - fuzz_nfct_state_msg: a TCP state's message as the kernel sends it, for
 *   the seeds.
 */
#ifndef FLOWCUT_FUZZ_NFCT_H
#define FLOWCUT_FUZZ_NFCT_H

#include <arpa/inet.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "ctgen.h"

static sigjmp_buf fuzz_nfct_in_parse;
static volatile int fuzz_nfct_parsing;

/* The library's exit while parsing: back to the parse's caller.  Any other: the real one. */
void
exit(int status)
{
	static void (*real_exit)(int);

	if (fuzz_nfct_parsing)
		siglongjmp(fuzz_nfct_in_parse, 1);
	if (real_exit == NULL)
		real_exit = (void (*)(int))dlsym(RTLD_NEXT, "exit");
	real_exit(status);
	__builtin_unreachable();
}

/*
 * FUZZ_NFCT_PARSE(rc, call, refused): rc = call, or the statement
 * `refused` when the library exits inside it.
 */
#define FUZZ_NFCT_PARSE(rc, call, refused)			\
	do {							\
		if (sigsetjmp(fuzz_nfct_in_parse, 0) != 0) {	\
			fuzz_nfct_parsing = 0;			\
			refused;				\
		}						\
		fuzz_nfct_parsing = 1;				\
		(rc) = (call);					\
		fuzz_nfct_parsing = 0;				\
	} while (0)

/*
 * One ctnetlink message of type `type` at nlh (zeroed room for 1 KiB),
 * sender `pid`, flags `flags`, about an ESTABLISHED TCP state of `family`
 * (4 or 6) with flowcutd's bit in its mark.  Its length.
 */
static inline size_t
fuzz_nfct_state_msg(void *buf, int family, uint8_t type, uint32_t pid, uint16_t flags)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;
	struct nf_conntrack *ct = nfct_new();

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | type;
	nlh->nlmsg_pid = pid;
	nlh->nlmsg_flags = flags;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = (uint8_t)(family == 4 ? AF_INET : AF_INET6);
	nfh->version = NFNETLINK_V0;
	struct fd_tuple t = { .sport = htons(40000), .dport = htons(80), .family = (uint8_t)family,
			      .proto = IPPROTO_TCP };

	if (family == 4) {
		memcpy(t.src, (const uint8_t[]){ 198, 18, 0, 2 }, 4);
		memcpy(t.dst, (const uint8_t[]){ 198, 18, 1, 2 }, 4);
	} else {
		memcpy(t.src, (const uint8_t[16]){ 0x20, 0x01, 0, 2, [15] = 2 }, 16);
		memcpy(t.dst, (const uint8_t[16]){ 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 2 }, 16);
	}
	ctg_state(ct, &t, IPS_ASSURED | IPS_CONFIRMED | IPS_SEEN_REPLY, 0, 0x40000000u);
	nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	nfct_set_attr_u32(ct, ATTR_ID, 77);
	nfct_nlmsg_build(nlh, ct);
	nfct_destroy(ct);
	return nlh->nlmsg_len;
}

#endif
