/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_policy as tables: which conntrack states qualify for offload, the two
 * keys (NAT included) a state becomes, where each direction is routed, and
 * which action it gets.  The states are built with libnetfilter_conntrack's
 * own setters, as conntrack would hand them out.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include "fd_policy.h"

#define BIT 0x40000000u

/* One state: the original tuple and the reply tuple, as text. */
struct st {
	int family;		/* AF_INET, AF_INET6 */
	uint8_t l4;
	const char *osrc, *odst;
	uint16_t osport, odport;
	const char *rsrc, *rdst;
	uint16_t rsport, rdport;
	uint32_t status;
	uint8_t tcp_state;
	uint32_t mark;
	const char *helper;	/* NULL: none */
	uint16_t zone;
	uint8_t icmp_type;
};

static void
set_addr(struct nf_conntrack *ct, int family, enum nf_conntrack_attr v4,
	 enum nf_conntrack_attr v6, const char *text)
{
	uint8_t a[16];

	if (text == NULL)
		return;		/* not there, as no kernel sends it */
	assert_int_equal(inet_pton(family, text, a), 1);
	if (family == AF_INET)
		nfct_set_attr(ct, v4, a);
	else
		nfct_set_attr(ct, v6, a);
}

static struct nf_conntrack *
build(const struct st *s)
{
	struct nf_conntrack *ct = nfct_new();

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, s->l4);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, s->l4);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, s->osrc);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, s->odst);
	set_addr(ct, s->family, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, s->rsrc);
	set_addr(ct, s->family, ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST, s->rdst);
	if (s->l4 == IPPROTO_TCP || s->l4 == IPPROTO_UDP) {
		nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(s->osport));
		nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(s->odport));
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(s->rsport));
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(s->rdport));
	} else if (s->l4 == IPPROTO_ICMP || s->l4 == IPPROTO_ICMPV6) {
		nfct_set_attr_u16(ct, ATTR_ICMP_ID, htons(s->osport));
		nfct_set_attr_u8(ct, ATTR_ICMP_TYPE, s->icmp_type);
	}
	nfct_set_attr_u32(ct, ATTR_STATUS, s->status);
	if (s->l4 == IPPROTO_TCP)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, s->tcp_state);
	nfct_set_attr_u32(ct, ATTR_MARK, s->mark);
	if (s->helper)
		nfct_set_attr(ct, ATTR_HELPER_NAME, s->helper);
	if (s->zone)
		nfct_set_attr_u16(ct, ATTR_ZONE, s->zone);
	return ct;
}

#define A (IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED)
#define EST TCP_CONNTRACK_ESTABLISHED
/* a state: both tuples, status, TCP state, mark, then .helper, .zone, .icmp_type */
#define ST(f, p, os, od, osp, odp, rs, rd, rsp, rdp, st_, ts, mk, ...)			\
	{ .family = (f), .l4 = (p), .osrc = (os), .odst = (od), .osport = (osp),	\
	  .odport = (odp), .rsrc = (rs), .rdst = (rd), .rsport = (rsp), .rdport = (rdp), \
	  .status = (st_), .tcp_state = (ts), .mark = (mk), __VA_ARGS__ }
#define T4(...) ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 80, \
		   "198.19.0.10", "198.18.0.10", 80, 40000, __VA_ARGS__)
#define U4(...) ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 40000, 53, \
		   "198.19.0.10", "198.18.0.10", 53, 40000, __VA_ARGS__)
#define T6(...) ST(AF_INET6, IPPROTO_TCP, "2001:2::10", "2001:2:1::10", 40000, 443, \
		   "2001:2:1::10", "2001:2::10", 443, 40000, __VA_ARGS__)

static const struct {
	const char *what;
	struct st s;
	bool qualifies;
} qualify_rows[] = {
	{ "TCP established, assured, through the rules", T4(A, EST, BIT), true },
	{ "TCP v6 established, assured", T6(A, EST, BIT), true },
	{ "TCP established, not assured", T4(IPS_SEEN_REPLY, EST, BIT), false },
	{ "TCP assured, SYN_RECV", T4(A, TCP_CONNTRACK_SYN_RECV, BIT), false },
	{ "TCP assured, FIN_WAIT", T4(A, TCP_CONNTRACK_FIN_WAIT, BIT), false },
	{ "TCP assured, TIME_WAIT", T4(A, TCP_CONNTRACK_TIME_WAIT, BIT), false },
	{ "TCP without our bit (not through the rules)", T4(A, EST, 0), false },
	{ "TCP with other mark bits only", T4(A, EST, ~BIT), false },
	{ "TCP with our bit among others", T4(A, EST, BIT | 0x5), true },
	{ "TCP dying", T4(A | IPS_DYING, EST, BIT), false },
	{ "TCP with a helper (ftp)", T4(A, EST, BIT, .helper = "ftp"), false },
	{ "TCP with an empty helper name", T4(A, EST, BIT, .helper = ""), true },
	{ "TCP in zone 3", T4(A, EST, BIT, .zone = 3), false },
	{ "UDP seen both ways (assured)", U4(A, 0, BIT), true },
	{ "UDP seen both ways, not assured", U4(IPS_SEEN_REPLY, 0, BIT), false },
	{ "UDP one way", U4(IPS_CONFIRMED, 0, BIT), false },
	{ "ICMP echo answered", ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 7, 0,
				  "198.19.0.10", "198.18.0.10", 0, 0, IPS_SEEN_REPLY, 0, BIT, .icmp_type = 8), true },
	{ "ICMP echo not answered", ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 7, 0,
				      "198.19.0.10", "198.18.0.10", 0, 0, 0, 0, BIT, .icmp_type = 8), false },
	{ "ICMP timestamp answered", ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 7, 0,
				       "198.19.0.10", "198.18.0.10", 0, 0, IPS_SEEN_REPLY, 0,
				       BIT, .icmp_type = 13), false },
	{ "ICMPv6 echo answered", ST(AF_INET6, IPPROTO_ICMPV6, "2001:2::10", "2001:2:1::10", 7, 0,
				    "2001:2:1::10", "2001:2::10", 0, 0, IPS_SEEN_REPLY, 0, BIT, .icmp_type = 128), true },
	{ "TCP v6 whose reply has no source address (the fuzzer's: not keyed, not read)",
	  ST(AF_INET6, IPPROTO_TCP, "2001:2::10", "2001:2:1::10", 40000, 443, NULL, "2001:2::10",
	     443, 40000, A, EST, BIT), false },
	{ "TCP v4 whose original has no destination", ST(AF_INET, IPPROTO_TCP, "198.18.0.10", NULL,
	  40000, 80, "198.19.0.10", "198.18.0.10", 80, 40000, A, EST, BIT), false },
	{ "SCTP assured", ST(AF_INET, IPPROTO_SCTP, "198.18.0.10", "198.19.0.10", 0, 0,
			    "198.19.0.10", "198.18.0.10", 0, 0, A, 0, BIT), false },
	{ "GRE assured", ST(AF_INET, IPPROTO_GRE, "198.18.0.10", "198.19.0.10", 0, 0,
			   "198.19.0.10", "198.18.0.10", 0, 0, A, 0, BIT), false },
};

static void
test_qualifies(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(qualify_rows) / sizeof(qualify_rows[0]); i++) {
		struct nf_conntrack *ct = build(&qualify_rows[i].s);
		bool got = fd_policy_qualifies(ct, BIT);

		if (got != qualify_rows[i].qualifies)
			fail_msg("%s: qualifies %d, expected %d", qualify_rows[i].what, got,
				 qualify_rows[i].qualifies);
		nfct_destroy(ct);
	}
}

/*
 * Keys: what each direction's frames carry as they come in on a front
 * port.  k0: the original direction (in on port 0, from the client);
 * k1: the reply direction (in on port 1).  NAT shows as the reply tuple
 * not being the original reversed.
 */
struct k {
	const char *src, *dst;
	uint16_t sport, dport;
};

static const struct {
	const char *what;
	struct st s;
	struct k k0, k1;
	const char *to0, *to1;	/* route dst of each direction */
} key_rows[] = {
	{ "v4 TCP, no NAT", T4(A, EST, BIT),
	  { "198.18.0.10", "198.19.0.10", 40000, 80 }, { "198.19.0.10", "198.18.0.10", 80, 40000 },
	  "198.19.0.10", "198.18.0.10" },
	{ "v4 TCP, SNAT (masquerade to 198.19.0.1:61000)",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 80,
	    "198.19.0.10", "198.19.0.1", 80, 61000, A, EST, BIT),
	  { "198.18.0.10", "198.19.0.10", 40000, 80 }, { "198.19.0.10", "198.19.0.1", 80, 61000 },
	  "198.19.0.10", "198.18.0.10" },
	{ "v4 TCP, DNAT (198.19.0.99:8080 to 198.19.0.10:80)",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.99", 40000, 8080,
	    "198.19.0.10", "198.18.0.10", 80, 40000, A, EST, BIT),
	  { "198.18.0.10", "198.19.0.99", 40000, 8080 }, { "198.19.0.10", "198.18.0.10", 80, 40000 },
	  "198.19.0.10", "198.18.0.10" },
	{ "v4 UDP, SNAT and DNAT",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.99", 5000, 5353,
	    "198.19.0.10", "198.19.0.1", 53, 62000, A, 0, BIT),
	  { "198.18.0.10", "198.19.0.99", 5000, 5353 }, { "198.19.0.10", "198.19.0.1", 53, 62000 },
	  "198.19.0.10", "198.18.0.10" },
	{ "v6 TCP, no NAT", T6(A, EST, BIT),
	  { "2001:2::10", "2001:2:1::10", 40000, 443 }, { "2001:2:1::10", "2001:2::10", 443, 40000 },
	  "2001:2:1::10", "2001:2::10" },
	{ "v6 TCP, SNAT (NPTv6-like)",
	  ST(AF_INET6, IPPROTO_TCP, "2001:2::10", "2001:2:1::10", 40000, 443,
	    "2001:2:1::10", "2001:2:1::1", 443, 61000, A, EST, BIT),
	  { "2001:2::10", "2001:2:1::10", 40000, 443 }, { "2001:2:1::10", "2001:2:1::1", 443, 61000 },
	  "2001:2:1::10", "2001:2::10" },
	{ "v6 UDP, DNAT",
	  ST(AF_INET6, IPPROTO_UDP, "2001:2::10", "2001:2:1::99", 5000, 53,
	    "2001:2:1::10", "2001:2::10", 5353, 5000, A, 0, BIT),
	  { "2001:2::10", "2001:2:1::99", 5000, 53 }, { "2001:2:1::10", "2001:2::10", 5353, 5000 },
	  "2001:2:1::10", "2001:2::10" },
	{ "v4 ICMP echo (id 7)",
	  ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 7, 0,
	    "198.19.0.10", "198.18.0.10", 0, 0, IPS_SEEN_REPLY, 0, BIT, .icmp_type = 8),
	  { "198.18.0.10", "198.19.0.10", 7, 8 }, { "198.19.0.10", "198.18.0.10", 7, 0 },
	  "198.19.0.10", "198.18.0.10" },
	{ "v6 ICMPv6 echo (id 7)",
	  ST(AF_INET6, IPPROTO_ICMPV6, "2001:2::10", "2001:2:1::10", 7, 0,
	    "2001:2:1::10", "2001:2::10", 0, 0, IPS_SEEN_REPLY, 0, BIT, .icmp_type = 128),
	  { "2001:2::10", "2001:2:1::10", 7, 128 }, { "2001:2:1::10", "2001:2::10", 7, 129 },
	  "2001:2:1::10", "2001:2::10" },
};

static void
check_key(const char *what, const struct fc_key *got, int family, uint8_t l4, uint16_t port,
	  const struct k *want, bool icmp)
{
	int af = family == 4 ? AF_INET : AF_INET6;
	struct fc_key k = { .family = (uint8_t)family, .proto = l4, .port = port };

	assert_int_equal(inet_pton(af, want->src, k.src), 1);
	assert_int_equal(inet_pton(af, want->dst, k.dst), 1);
	k.sport = htons(want->sport);
	k.dport = icmp ? want->dport : htons(want->dport);
	if (memcmp(got, &k, sizeof(k)) != 0)
		fail_msg("%s: key for port %u differs (sport %u/%u dport %u/%u)", what, port,
			 ntohs(got->sport), ntohs(k.sport), got->dport, k.dport);
}

static void
test_keys(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(key_rows) / sizeof(key_rows[0]); i++) {
		const struct st *s = &key_rows[i].s;
		struct nf_conntrack *ct = build(s);
		int family = s->family == AF_INET ? 4 : 6;
		bool icmp = s->l4 == IPPROTO_ICMP || s->l4 == IPPROTO_ICMPV6;
		struct fc_key k0, k1;
		uint8_t to[16] = { 0 }, want[16] = { 0 };

		assert_int_equal(fd_policy_family(ct), family);
		fd_policy_key(ct, FD_DIR_ORIG, 0, &k0);
		fd_policy_key(ct, FD_DIR_REPLY, 1, &k1);
		check_key(key_rows[i].what, &k0, family, s->l4, 0, &key_rows[i].k0, icmp);
		check_key(key_rows[i].what, &k1, family, s->l4, 1, &key_rows[i].k1, icmp);
		fd_policy_route_dst(ct, FD_DIR_ORIG, to);
		assert_int_equal(inet_pton(s->family, key_rows[i].to0, want), 1);
		if (memcmp(to, want, family == 4 ? 4 : 16) != 0)
			fail_msg("%s: the original direction is not routed to %s", key_rows[i].what,
				 key_rows[i].to0);
		fd_policy_route_dst(ct, FD_DIR_REPLY, to);
		assert_int_equal(inet_pton(s->family, key_rows[i].to1, want), 1);
		if (memcmp(to, want, family == 4 ? 4 : 16) != 0)
			fail_msg("%s: the reply direction is not routed to %s", key_rows[i].what,
				 key_rows[i].to1);
		nfct_destroy(ct);
	}
}

static const struct {
	const char *what;
	struct st s;
	bool cut_in_hardware;
	uint8_t action;
} action_rows[] = {
	{ "TCP, cut in hardware on", T4(A, EST, BIT), true, FC_ACTION_IPS },
	{ "TCP, cut in hardware off", T4(A, EST, BIT), false, FC_ACTION_FWD },
	{ "v6 TCP, on", T6(A, EST, BIT), true, FC_ACTION_IPS },
	{ "UDP 53, on", U4(A, 0, BIT), true, FC_ACTION_IPS },
	{ "UDP to 4500 (IPsec NAT-T), on",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 40000, 4500,
	    "198.19.0.10", "198.18.0.10", 4500, 40000, A, 0, BIT), true, FC_ACTION_FWD },
	{ "UDP from 4500 (IPsec NAT-T), on",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 4500, 4500,
	    "198.19.0.10", "198.18.0.10", 4500, 4500, A, 0, BIT), true, FC_ACTION_FWD },
	{ "UDP from 4500, off",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 4500, 9,
	    "198.19.0.10", "198.18.0.10", 9, 4500, A, 0, BIT), false, FC_ACTION_FWD },
	{ "UDP to 4501, on",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 40000, 4501,
	    "198.19.0.10", "198.18.0.10", 4501, 40000, A, 0, BIT), true, FC_ACTION_IPS },
	{ "TCP to 4500 (not a tunnel), on",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 4500,
	    "198.19.0.10", "198.18.0.10", 4500, 40000, A, EST, BIT), true, FC_ACTION_IPS },
	{ "ESP, on", ST(AF_INET, IPPROTO_ESP, "198.18.0.10", "198.19.0.10", 0, 0,
		       "198.19.0.10", "198.18.0.10", 0, 0, A, 0, BIT), true, FC_ACTION_FWD },
	{ "ICMP echo, on", ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 7, 0,
			     "198.19.0.10", "198.18.0.10", 0, 0, IPS_SEEN_REPLY, 0, BIT, .icmp_type = 8), true, FC_ACTION_IPS },
};

static void
test_action(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(action_rows) / sizeof(action_rows[0]); i++) {
		struct nf_conntrack *ct = build(&action_rows[i].s);
		uint8_t got = fd_policy_action(ct, action_rows[i].cut_in_hardware);

		if (got != action_rows[i].action)
			fail_msg("%s: action %u, expected %u", action_rows[i].what, got,
				 action_rows[i].action);
		nfct_destroy(ct);
	}
}

/* The TLS ports as the settings have them by default, and a setting of one. */
static const uint16_t tls_default[] = { 443, 465, 853, 993, 995, 8443 };
static const uint16_t tls_one[] = { 8443 };
#define TLS_DEFAULT tls_default, 6
#define TLS_ONE tls_one, 1
#define TLS_NONE NULL, 0

static const struct {
	const char *what;
	struct st s;
	uint8_t action;
	const uint16_t *ports;
	unsigned int nports;
	uint8_t verdict;
} verdict_rows[] = {
	{ "v6 TCP to 443, IPS, no TLS ports (nothing inspected)", T6(A, EST, BIT), FC_ACTION_IPS,
	  TLS_NONE, FC_VERDICT_CUT_THRU },
	{ "TCP to 443, IPS, the default ports",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 443,
	    "198.19.0.10", "198.18.0.10", 443, 40000, A, EST, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_SEND_TO_IPS },
	{ "v6 TCP to 443, IPS, the default ports", T6(A, EST, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_SEND_TO_IPS },
	{ "TCP to 8443 (the last port), IPS",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 8443,
	    "198.19.0.10", "198.18.0.10", 8443, 40000, A, EST, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_SEND_TO_IPS },
	{ "TCP to 993, IPS, the ports set to 8443 alone",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 993,
	    "198.19.0.10", "198.18.0.10", 993, 40000, A, EST, BIT), FC_ACTION_IPS, TLS_ONE,
	  FC_VERDICT_CUT_THRU },
	{ "TCP to 443, FWD (cut in hardware off: the verdict is never consulted)",
	  T6(A, EST, BIT), FC_ACTION_FWD, TLS_DEFAULT, FC_VERDICT_CUT_THRU },
	{ "TCP to 80, IPS", T4(A, EST, BIT), FC_ACTION_IPS, TLS_DEFAULT, FC_VERDICT_CUT_THRU },
	{ "TCP from 443 to 40000 (a server's port is the source), IPS",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 443, 40000,
	    "198.19.0.10", "198.18.0.10", 40000, 443, A, EST, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_CUT_THRU },
	{ "TCP DNAT 8443 to 443: the port the client sent to counts",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.99", 40000, 8443,
	    "198.19.0.10", "198.18.0.10", 443, 40000, A, EST, BIT), FC_ACTION_IPS, TLS_ONE,
	  FC_VERDICT_SEND_TO_IPS },
	{ "TCP DNAT 443 to 8443, the ports set to 8443 alone",
	  ST(AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.99", 40000, 443,
	    "198.19.0.10", "198.18.0.10", 8443, 40000, A, EST, BIT), FC_ACTION_IPS, TLS_ONE,
	  FC_VERDICT_CUT_THRU },
	{ "UDP to 443 (QUIC), IPS",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 40000, 443,
	    "198.19.0.10", "198.18.0.10", 443, 40000, A, 0, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_SEND_TO_IPS },
	{ "UDP to 443 (QUIC), FWD",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 40000, 443,
	    "198.19.0.10", "198.18.0.10", 443, 40000, A, 0, BIT), FC_ACTION_FWD, TLS_DEFAULT,
	  FC_VERDICT_CUT_THRU },
	{ "UDP to 53, IPS", U4(A, 0, BIT), FC_ACTION_IPS, TLS_DEFAULT, FC_VERDICT_CUT_THRU },
	{ "UDP from 443 to 40000, IPS",
	  ST(AF_INET, IPPROTO_UDP, "198.18.0.10", "198.19.0.10", 443, 40000,
	    "198.19.0.10", "198.18.0.10", 40000, 443, A, 0, BIT), FC_ACTION_IPS, TLS_DEFAULT,
	  FC_VERDICT_CUT_THRU },
	{ "ICMP echo, IPS", ST(AF_INET, IPPROTO_ICMP, "198.18.0.10", "198.19.0.10", 443, 0,
			      "198.19.0.10", "198.18.0.10", 0, 0, IPS_SEEN_REPLY, 0, BIT,
			      .icmp_type = 8), FC_ACTION_IPS, TLS_DEFAULT, FC_VERDICT_CUT_THRU },
};

static void
test_verdict(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(verdict_rows) / sizeof(verdict_rows[0]); i++) {
		struct nf_conntrack *ct = build(&verdict_rows[i].s);
		uint8_t got = fd_policy_verdict(ct, verdict_rows[i].action, verdict_rows[i].ports,
						verdict_rows[i].nports);

		if (got != verdict_rows[i].verdict)
			fail_msg("%s: verdict %u, expected %u", verdict_rows[i].what, got,
				 verdict_rows[i].verdict);
		/* inspected whatever the action: what IPS would send to the inspector */
		if (fd_policy_inspected(ct, verdict_rows[i].ports, verdict_rows[i].nports) !=
		    (fd_policy_verdict(ct, FC_ACTION_IPS, verdict_rows[i].ports,
				       verdict_rows[i].nports) == FC_VERDICT_SEND_TO_IPS))
			fail_msg("%s: inspected and the IPS verdict disagree", verdict_rows[i].what);
		nfct_destroy(ct);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qualifies),
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_action),
		cmocka_unit_test(test_verdict),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
