/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_nfct_differ: the oracle for driver/ct/fd_ctparse - two conntrack
 * objects compared on every attribute fd_ctparse sets (fd_ctparse.h's
 * list): set in both or in neither, and the same value where set.  One
 * parsed by fd_ctparse_msg, the other by libnetfilter_conntrack's
 * nfct_nlmsg_parse, from the same message (tests/integration/test_ct.c
 * on the kernel's own, tests/unit/driver/test_ct_msg.c on built ones,
 * tests/fuzz/fuzz_ct.c on any).  Header only: a fuzz program and a test
 * include it once each.
 */
#ifndef FLOWCUT_FC_NFCT_SAME_H
#define FLOWCUT_FC_NFCT_SAME_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>

/* The attributes compared, with their sizes (0: a string). */
static const struct fc_nfct_attr {
	enum nf_conntrack_attr attr;
	unsigned char size;
	const char *name;
} fc_nfct_attrs[] = {
#define FC_NFCT_A(a, n) { a, n, #a }
	FC_NFCT_A(ATTR_ORIG_L3PROTO, 1), FC_NFCT_A(ATTR_REPL_L3PROTO, 1),
	FC_NFCT_A(ATTR_ORIG_IPV4_SRC, 4), FC_NFCT_A(ATTR_ORIG_IPV4_DST, 4),
	FC_NFCT_A(ATTR_REPL_IPV4_SRC, 4), FC_NFCT_A(ATTR_REPL_IPV4_DST, 4),
	FC_NFCT_A(ATTR_ORIG_IPV6_SRC, 16), FC_NFCT_A(ATTR_ORIG_IPV6_DST, 16),
	FC_NFCT_A(ATTR_REPL_IPV6_SRC, 16), FC_NFCT_A(ATTR_REPL_IPV6_DST, 16),
	FC_NFCT_A(ATTR_ORIG_L4PROTO, 1), FC_NFCT_A(ATTR_REPL_L4PROTO, 1),
	FC_NFCT_A(ATTR_ORIG_PORT_SRC, 2), FC_NFCT_A(ATTR_ORIG_PORT_DST, 2),
	FC_NFCT_A(ATTR_REPL_PORT_SRC, 2), FC_NFCT_A(ATTR_REPL_PORT_DST, 2),
	FC_NFCT_A(ATTR_ICMP_TYPE, 1), FC_NFCT_A(ATTR_ICMP_CODE, 1), FC_NFCT_A(ATTR_ICMP_ID, 2),
	FC_NFCT_A(ATTR_ORIG_ZONE, 2), FC_NFCT_A(ATTR_REPL_ZONE, 2), FC_NFCT_A(ATTR_ZONE, 2),
	FC_NFCT_A(ATTR_STATUS, 4), FC_NFCT_A(ATTR_TIMEOUT, 4), FC_NFCT_A(ATTR_MARK, 4),
	FC_NFCT_A(ATTR_ID, 4),
	FC_NFCT_A(ATTR_TCP_STATE, 1), FC_NFCT_A(ATTR_TCP_WSCALE_ORIG, 1),
	FC_NFCT_A(ATTR_TCP_WSCALE_REPL, 1), FC_NFCT_A(ATTR_TCP_FLAGS_ORIG, 1),
	FC_NFCT_A(ATTR_TCP_MASK_ORIG, 1), FC_NFCT_A(ATTR_TCP_FLAGS_REPL, 1),
	FC_NFCT_A(ATTR_TCP_MASK_REPL, 1),
	FC_NFCT_A(ATTR_HELPER_NAME, 0),
#undef FC_NFCT_A
};

/* The first attribute on which a and b differ (its name), or NULL: the same. */
static inline const char *
fc_nfct_differ(const struct nf_conntrack *a, const struct nf_conntrack *b)
{
	for (size_t i = 0; i < sizeof(fc_nfct_attrs) / sizeof(fc_nfct_attrs[0]); i++) {
		const struct fc_nfct_attr *x = &fc_nfct_attrs[i];
		bool sa = nfct_attr_is_set(a, x->attr) > 0, sb = nfct_attr_is_set(b, x->attr) > 0;
		const void *va, *vb;

		if (sa != sb)
			return x->name;
		if (!sa)
			continue;
		va = nfct_get_attr(a, x->attr);
		vb = nfct_get_attr(b, x->attr);
		if (va == NULL || vb == NULL)
			return x->name;
		if (x->size == 0 ? strcmp(va, vb) != 0 : memcmp(va, vb, x->size) != 0)
			return x->name;
	}
	return NULL;
}

#endif
