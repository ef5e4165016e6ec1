/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct's pure parts, no sockets (the rest runs against the kernel in
 * tests/integration/test_ct.c):
 * - the update message (fd_ct_update_msg) byte for byte against one built
 *   here with libmnl from the row alone: loosen, timeout, mark, their
 *   combinations, IPv4 and IPv6, TCP and UDP, and the refusals;
 * - the dump's request (fd_ct_dump_msg), filtered and not;
 * - a dump's datagrams (fd_ct_dump_parse): states, the end, the kernel's
 *   errors, an interrupted dump, a message cut short;
 * - the event datagrams' own messages (fd_ct_parse): our UPDATEs skipped,
 *   our DESTROYs handed on flagged own; and the same datagrams through
 *   the event socket's filter (fd_ct_own_filter), run here by libpcap's
 *   bpf_filter, classic BPF as the kernel runs it (big-endian loads);
 * - fd_ctparse against libnetfilter_conntrack's parse (the oracle,
 *   tests/lib/fc_nfct_same.h) on messages the library builds: every
 *   attribute fd_ctparse sets, in each kind of state; a state's times.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <pcap/bpf.h>

#include "fc_nfct_same.h"
#include "fd_ct.h"
#include "fd_ctparse.h"

#define BIT 0x40000000u
#define CT_TYPE(m) ((NFNL_SUBSYS_CTNETLINK << 8) | (m))

static const uint8_t SRC6[16] = { 0x20, 0x01, 0, 2, [15] = 0x10 };
static const uint8_t DST6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 0x10 };

/* A whole state as conntrack holds it: both tuples, status, mark, an id. */
static struct nf_conntrack *
state(int family, uint8_t proto, uint16_t sport, uint32_t mark)
{
	struct nf_conntrack *ct = nfct_new();

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_L3PROTO, family == 4 ? AF_INET : AF_INET6);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, family == 4 ? AF_INET : AF_INET6);
	if (family == 4) {
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr("198.18.0.10"));
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr("198.18.0.10"));
	} else {
		nfct_set_attr(ct, ATTR_IPV6_SRC, SRC6);
		nfct_set_attr(ct, ATTR_IPV6_DST, DST6);
		nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, DST6);
		nfct_set_attr(ct, ATTR_REPL_IPV6_DST, SRC6);
	}
	nfct_set_attr_u8(ct, ATTR_L4PROTO, proto);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, proto);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(sport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(sport));
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED);
	nfct_set_attr_u32(ct, ATTR_MARK, mark);
	nfct_set_attr_u32(ct, ATTR_ID, sport);
	nfct_set_attr_u16(ct, ATTR_ZONE, 0);
	return ct;
}

/* ---- the update message ---- */

static const struct {
	const char *name;
	int family;
	uint8_t proto;
	struct fd_ct_update u;
	int rc;			/* 0: the message */
} updates[] = {
	{ "loosen, IPv4 TCP", 4, IPPROTO_TCP, { .what = FD_CT_UP_LOOSEN }, 0 },
	{ "timeout, IPv4 TCP", 4, IPPROTO_TCP, { .what = FD_CT_UP_TIMEOUT, .timeout = 518400 }, 0 },
	{ "mark, IPv4 TCP", 4, IPPROTO_TCP, { .what = FD_CT_UP_MARK, .mark = BIT, .mask = BIT }, 0 },
	{ "all three, IPv4 TCP", 4, IPPROTO_TCP,
	  { .what = FD_CT_UP_LOOSEN | FD_CT_UP_TIMEOUT | FD_CT_UP_MARK, .timeout = 518400,
	    .mark = 0, .mask = BIT }, 0 },
	{ "timeout, IPv4 UDP", 4, IPPROTO_UDP, { .what = FD_CT_UP_TIMEOUT, .timeout = 120 }, 0 },
	{ "mark, IPv4 UDP", 4, IPPROTO_UDP,
	  { .what = FD_CT_UP_MARK, .mark = 0x00000a00, .mask = 0x00000f0f }, 0 },
	{ "loosen, IPv6 TCP", 6, IPPROTO_TCP, { .what = FD_CT_UP_LOOSEN }, 0 },
	{ "timeout, IPv6 UDP", 6, IPPROTO_UDP, { .what = FD_CT_UP_TIMEOUT, .timeout = 86520 }, 0 },
	{ "mark, IPv6 UDP", 6, IPPROTO_UDP, { .what = FD_CT_UP_MARK, .mark = 0, .mask = BIT }, 0 },
	{ "all three, IPv6 TCP", 6, IPPROTO_TCP,
	  { .what = FD_CT_UP_LOOSEN | FD_CT_UP_TIMEOUT | FD_CT_UP_MARK, .timeout = 7,
	    .mark = BIT, .mask = BIT }, 0 },
	{ "timeout and mark, IPv6 UDP", 6, IPPROTO_UDP,
	  { .what = FD_CT_UP_TIMEOUT | FD_CT_UP_MARK, .timeout = 0, .mark = 0, .mask = BIT }, 0 },
	{ "loosen of UDP: refused", 4, IPPROTO_UDP, { .what = FD_CT_UP_LOOSEN }, -EINVAL },
	{ "loosen of IPv6 UDP with a timeout: refused", 6, IPPROTO_UDP,
	  { .what = FD_CT_UP_LOOSEN | FD_CT_UP_TIMEOUT, .timeout = 5 }, -EINVAL },
	{ "nothing asked: refused", 4, IPPROTO_TCP, { .what = 0 }, -EINVAL },
};

/* The row's message, built here from the row alone, in ctnetlink's attributes. */
static size_t
want_update(char *buf, uint32_t seq, int family, uint8_t proto, uint16_t sport,
	    const struct fd_ct_update *u)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;
	struct nlattr *tuple, *nest, *tcp;

	nlh->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_NEW);
	nlh->nlmsg_flags = NLM_F_REQUEST;	/* no ack: errors only (fd_ct.h) */
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = family == 4 ? AF_INET : AF_INET6;
	nfh->version = NFNETLINK_V0;
	tuple = mnl_attr_nest_start(nlh, CTA_TUPLE_ORIG);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_IP);
	if (family == 4) {
		mnl_attr_put_u32(nlh, CTA_IP_V4_SRC, inet_addr("198.18.0.10"));
		mnl_attr_put_u32(nlh, CTA_IP_V4_DST, inet_addr("198.19.0.10"));
	} else {
		mnl_attr_put(nlh, CTA_IP_V6_SRC, 16, SRC6);
		mnl_attr_put(nlh, CTA_IP_V6_DST, 16, DST6);
	}
	mnl_attr_nest_end(nlh, nest);
	nest = mnl_attr_nest_start(nlh, CTA_TUPLE_PROTO);
	mnl_attr_put_u8(nlh, CTA_PROTO_NUM, proto);
	mnl_attr_put_u16(nlh, CTA_PROTO_SRC_PORT, htons(sport));
	mnl_attr_put_u16(nlh, CTA_PROTO_DST_PORT, htons(443));
	mnl_attr_nest_end(nlh, nest);
	mnl_attr_nest_end(nlh, tuple);
	if (u->what & FD_CT_UP_TIMEOUT)
		mnl_attr_put_u32(nlh, CTA_TIMEOUT, htonl(u->timeout));
	if (u->what & FD_CT_UP_LOOSEN) {
		/* struct nf_ct_tcp_flags: BE_LIBERAL (0x08), mask BE_LIBERAL|MAXACK_SET (0x28) */
		const uint8_t flags[2] = { 0x08, 0x28 };

		nest = mnl_attr_nest_start(nlh, CTA_PROTOINFO);
		tcp = mnl_attr_nest_start(nlh, CTA_PROTOINFO_TCP);
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_ORIGINAL, sizeof(flags), flags);
		mnl_attr_put(nlh, CTA_PROTOINFO_TCP_FLAGS_REPLY, sizeof(flags), flags);
		mnl_attr_nest_end(nlh, tcp);
		mnl_attr_nest_end(nlh, nest);
	}
	mnl_attr_put_u16(nlh, CTA_ZONE, htons(0));
	if (u->what & FD_CT_UP_MARK) {
		mnl_attr_put_u32(nlh, CTA_MARK, htonl(u->mark));
		mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(u->mask));
	}
	return nlh->nlmsg_len;
}

static void
hexdump(const char *what, const uint8_t *b, size_t n)
{
	print_message("%s:", what);
	for (size_t i = 0; i < n; i++)
		print_message("%s%02x", i % 16 ? " " : "\n  ", b[i]);
	print_message("\n");
}

static void
test_update_msg(void **st)
{
	(void)st;
	for (size_t i = 0; i < sizeof(updates) / sizeof(updates[0]); i++) {
		char got[FD_CT_MSG_MAX] __attribute__((aligned(4))) = { 0 };
		char want[FD_CT_MSG_MAX] __attribute__((aligned(4))) = { 0 };
		struct nf_conntrack *ct = state(updates[i].family, updates[i].proto, 40000 + i,
						0x1234);
		int n = fd_ct_update_msg(got, 77 + i, ct, &updates[i].u);
		size_t w;

		nfct_destroy(ct);
		if (updates[i].rc != 0) {
			if (n != updates[i].rc)
				fail_msg("%s: %d, not %d", updates[i].name, n, updates[i].rc);
			continue;
		}
		w = want_update(want, 77 + i, updates[i].family, updates[i].proto, 40000 + i,
				&updates[i].u);
		if (n < 0 || (size_t)n != w || memcmp(got, want, w) != 0) {
			hexdump("got", (const uint8_t *)got, n < 0 ? 0 : (size_t)n);
			hexdump("want", (const uint8_t *)want, w);
			fail_msg("%s: the message is not the one wanted (%d bytes, want %zu)",
				 updates[i].name, n, w);
		}
	}
}

/* ---- the dump's request ---- */

static void
test_dump_msg(void **st)
{
	static const struct { uint32_t mark, mask; bool filtered; } rows[] = {
		{ BIT, BIT, true }, { 0x5, 0xff, true }, { 0, BIT, true }, { 0, 0, false },
	};

	(void)st;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char got[FD_CT_MSG_MAX] __attribute__((aligned(4))) = { 0 };
		char want[FD_CT_MSG_MAX] __attribute__((aligned(4))) = { 0 };
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(want);
		struct nfgenmsg *nfh;
		int n = fd_ct_dump_msg(got, 9, rows[i].mark, rows[i].mask);

		nlh->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_GET);
		nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		nlh->nlmsg_seq = 9;
		nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
		nfh->nfgen_family = AF_UNSPEC;
		nfh->version = NFNETLINK_V0;
		if (rows[i].filtered) {
			mnl_attr_put_u32(nlh, CTA_MARK, htonl(rows[i].mark));
			mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(rows[i].mask));
		}
		if (n < 0 || (uint32_t)n != nlh->nlmsg_len || memcmp(got, want, nlh->nlmsg_len) != 0) {
			hexdump("got", (const uint8_t *)got, n < 0 ? 0 : (size_t)n);
			hexdump("want", (const uint8_t *)want, nlh->nlmsg_len);
			fail_msg("row %zu (%#x/%#x): the request is not the one wanted", i,
				 rows[i].mark, rows[i].mask);
		}
	}
}

/* ---- a dump's datagrams ---- */

enum part { END, S4, S6, DONE, DONE_ERR, ERR, ACK, INTR, OTHER, CUT };

/* The datagram of `parts` at buf: its length. */
static size_t
datagram(char *buf, size_t cap, const enum part *parts)
{
	size_t len = 0;

	memset(buf, 0, cap);
	for (; *parts != END; parts++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + len);

		switch (*parts) {
		case S4:
		case S6:
		case INTR:
		case CUT: {
			struct nf_conntrack *ct = state(*parts == S6 ? 6 : 4, IPPROTO_TCP,
							(uint16_t)(1000 + len), BIT);
			struct nfgenmsg *nfh;

			nlh->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_NEW);
			nlh->nlmsg_flags = NLM_F_MULTI | (*parts == INTR ? NLM_F_DUMP_INTR : 0);
			nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
			nfh->nfgen_family = *parts == S6 ? AF_INET6 : AF_INET;
			assert_true(nfct_nlmsg_build(nlh, ct) >= 0);
			nfct_destroy(ct);
			break;
		}
		case DONE:
		case DONE_ERR:
			nlh->nlmsg_type = NLMSG_DONE;
			nlh->nlmsg_flags = NLM_F_MULTI;
			*(int *)mnl_nlmsg_put_extra_header(nlh, sizeof(int)) =
				*parts == DONE ? 0 : -ENOBUFS;
			break;
		case ERR:
		case ACK: {
			struct nlmsgerr *e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));

			nlh->nlmsg_type = NLMSG_ERROR;
			e->error = *parts == ERR ? -EPERM : 0;
			break;
		}
		case OTHER:
			nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK_EXP << 8) | 0;
			mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
			break;
		case END:
			break;
		}
		len += *parts == CUT ? nlh->nlmsg_len - 6 : MNL_ALIGN(nlh->nlmsg_len);
		assert_true(len < cap - 512);
	}
	return len;
}

static void
count_state(void *arg, const struct nf_conntrack *ct, int rc)
{
	unsigned int *n = arg;

	assert_non_null(ct);
	assert_int_equal(rc, 0);
	assert_int_equal(nfct_get_attr_u32(ct, ATTR_MARK), BIT);
	(*n)++;
}

static void
test_dump_parse(void **st)
{
	static const struct {
		const char *name;
		enum part parts[8];
		int rc;
		bool done;
		unsigned int handed;
	} rows[] = {
		{ "states, IPv4 and IPv6", { S4, S6, S4 }, 3, false, 3 },
		{ "states then the end", { S4, S6, DONE }, 2, true, 2 },
		{ "the end alone", { DONE }, 0, true, 0 },
		{ "what follows the end is ignored", { DONE, S4 }, 0, true, 0 },
		{ "the end with the dump's error", { S4, DONE_ERR }, -ENOBUFS, true, 1 },
		{ "the kernel's error", { ERR }, -EPERM, false, 0 },
		{ "an ack skipped", { ACK, S6 }, 1, false, 1 },
		{ "another subsystem's message skipped", { OTHER, S4 }, 1, false, 1 },
		{ "interrupted: -EINTR, those before handed on", { S4, INTR, S4 }, -EINTR, false, 1 },
		{ "a message cut short", { S4, CUT }, -EBADMSG, false, 1 },
	};

	(void)st;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[8192] __attribute__((aligned(4)));
		size_t len = datagram(buf, sizeof(buf), rows[i].parts);
		unsigned int handed = 0;
		bool done = false;
		int rc = fd_ct_dump_parse(buf, len, count_state, &handed, &done);

		if (rc != rows[i].rc || done != rows[i].done || handed != rows[i].handed)
			fail_msg("%s: %d, done %d, %u handed on; want %d, %d, %u", rows[i].name, rc,
				 done, handed, rows[i].rc, rows[i].done, rows[i].handed);
	}
}

/* ---- own events ---- */

struct seen {
	unsigned int n, own;
	enum fd_ct_event type[4];
};

static void
on_event(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct, bool own)
{
	struct seen *s = arg;

	(void)ct;
	if (s->n < 4)
		s->type[s->n] = type;
	s->n++;
	s->own += own;
}

/*
 * Each row one event datagram, from a sender (nlmsg_pid), of our two port
 * ids `own` (the filter's; fd_ct_parse's own is { 1234, 5678 } but for a
 * 0 in the row's): what fd_ct_parse hands on, and whether the event
 * socket's filter keeps it.  The port ids have four distinct bytes each,
 * so a load in the wrong byte order matches none.
 */
_Static_assert(sizeof(struct bpf_insn) == 8, "struct sock_filter's layout");

static void
test_own_events(void **st)
{
	enum { Q = 0x01020304, NL = 0x0a0b0c0d };
	static const struct {
		const char *name;
		uint16_t type;
		uint32_t pid;
		uint32_t own[2];
		unsigned int handed, own_handed;
		bool kept;		/* by the socket filter */
	} rows[] = {
		{ "the kernel's UPDATE", CT_TYPE(IPCTNL_MSG_CT_NEW), 0, { Q, NL }, 1, 0, true },
		{ "an UPDATE another program caused", CT_TYPE(IPCTNL_MSG_CT_NEW), 999, { Q, NL },
		  1, 0, true },
		{ "our query socket's UPDATE: skipped", CT_TYPE(IPCTNL_MSG_CT_NEW), Q, { Q, NL },
		  0, 0, false },
		{ "our update socket's UPDATE: skipped", CT_TYPE(IPCTNL_MSG_CT_NEW), NL, { Q, NL },
		  0, 0, false },
		{ "our DESTROY: handed on, own", CT_TYPE(IPCTNL_MSG_CT_DELETE), NL, { Q, NL }, 1, 1,
		  true },
		{ "another's DESTROY", CT_TYPE(IPCTNL_MSG_CT_DELETE), 999, { Q, NL }, 1, 0, true },
		{ "our pid byte-swapped: another's", CT_TYPE(IPCTNL_MSG_CT_NEW), 0x0d0c0b0a,
		  { Q, NL }, 1, 0, true },
		{ "an expectation's NEW from our socket", (NFNL_SUBSYS_CTNETLINK_EXP << 8) | 0, NL,
		  { Q, NL }, 0, 0, true },
		{ "one own id 0: the other stands for it", CT_TYPE(IPCTNL_MSG_CT_NEW), NL, { 0, NL },
		  0, 0, false },
		{ "one own id 0: the kernel's kept", CT_TYPE(IPCTNL_MSG_CT_NEW), 0, { 0, NL }, 1, 0,
		  true },
	};
	struct bpf_insn prog[FD_CT_FILTER_LEN];

	(void)st;
	assert_int_equal(fd_ct_own_filter((struct sock_filter *)prog, (const uint32_t[2]){ 0, 0 }),
			 -EINVAL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[4096] __attribute__((aligned(4))) = { 0 };
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct nf_conntrack *ct = state(4, IPPROTO_UDP, 5000, 0);
		struct nfgenmsg *nfh;
		struct seen s = { 0 };
		unsigned int kept;
		int rc;

		nlh->nlmsg_type = rows[i].type;
		nlh->nlmsg_pid = rows[i].pid;
		nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
		nfh->nfgen_family = AF_INET;
		assert_true(nfct_nlmsg_build(nlh, ct) >= 0);
		nfct_destroy(ct);
		rc = fd_ct_parse(buf, nlh->nlmsg_len, rows[i].own, on_event, &s);
		if (rc != (int)rows[i].handed || s.n != rows[i].handed ||
		    s.own != rows[i].own_handed)
			fail_msg("%s: %d handed on (%u seen, %u own); want %u, %u own", rows[i].name,
				 rc, s.n, s.own, rows[i].handed, rows[i].own_handed);
		if (s.n == 1)
			assert_int_equal(s.type[0], NFNL_MSG_TYPE(rows[i].type) ==
							    IPCTNL_MSG_CT_DELETE ?
							    FD_CT_DESTROY : FD_CT_UPDATE);
		assert_int_equal(fd_ct_own_filter((struct sock_filter *)prog, rows[i].own),
				 FD_CT_FILTER_LEN);
		kept = bpf_filter(prog, (const u_char *)buf, nlh->nlmsg_len, nlh->nlmsg_len);
		if ((kept != 0) != rows[i].kept || (kept != 0 && kept < nlh->nlmsg_len))
			fail_msg("%s: the socket filter returned %u for %u bytes; want %s",
				 rows[i].name, kept, nlh->nlmsg_len,
				 rows[i].kept ? "it kept whole" : "0 (refused)");
	}
}

/*
 * A conntrack message shorter than its nfgenmsg (ct_parse's check): each
 * in a heap buffer of exactly its bytes, so a read past it is asan's
 * heap-buffer-overflow (the fuzzer's 16-byte CT_NEW: a SEGV in
 * nfct_nlmsg_parse before the check); never handed on, as an event or a
 * dumped state.  Rows: the message's type and length.
 */
static void
test_short_msg(void **st)
{
	static const struct {
		const char *name;
		uint16_t type;
		uint32_t len;
		int rc;		/* what both parses return */
	} rows[] = {
		{ "a CT_NEW of its header alone", CT_TYPE(IPCTNL_MSG_CT_NEW), 16, 0 },
		{ "a CT_DELETE of its header alone", CT_TYPE(IPCTNL_MSG_CT_DELETE), 16, 0 },
		/* not a whole netlink message (its length not aligned): libmnl refuses it */
		{ "a CT_NEW with half its nfgenmsg", CT_TYPE(IPCTNL_MSG_CT_NEW), 18, -EBADMSG },
	};

	(void)st;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct nlmsghdr *nlh = calloc(1, rows[i].len);
		struct seen s = { 0 };
		unsigned int handed = 0;
		bool done = false;
		int ev, dump;

		assert_non_null(nlh);
		nlh->nlmsg_len = rows[i].len;
		nlh->nlmsg_type = rows[i].type;
		nlh->nlmsg_flags = NLM_F_MULTI;
		ev = fd_ct_parse(nlh, rows[i].len, (const uint32_t[2]){ 1234, 5678 }, on_event,
				 &s);
		dump = fd_ct_dump_parse(nlh, rows[i].len, count_state, &handed, &done);
		if (ev != rows[i].rc || s.n != 0 || dump != rows[i].rc || handed != 0 || done)
			fail_msg("%s (%u bytes): the event parse %d (%u handed), the dump's %d (%u "
				 "handed, done %d); want %d, none, not done", rows[i].name,
				 rows[i].len, ev, s.n, dump, handed, done, rows[i].rc);
		free(nlh);
	}
}

/* A state of kind k, with every attribute fd_ctparse sets that the kind has. */
static struct nf_conntrack *
kind(int k)
{
	struct nf_conntrack *ct = nfct_new();
	bool v6 = k == 1 || k == 3;
	uint8_t l4 = k == 2 ? IPPROTO_ICMP : k == 3 ? IPPROTO_ICMPV6 : k == 1 ? IPPROTO_UDP
								       : IPPROTO_TCP;

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_L3PROTO, v6 ? AF_INET6 : AF_INET);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, v6 ? AF_INET6 : AF_INET);
	if (v6) {
		nfct_set_attr(ct, ATTR_IPV6_SRC, SRC6);
		nfct_set_attr(ct, ATTR_IPV6_DST, DST6);
		nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, DST6);
		nfct_set_attr(ct, ATTR_REPL_IPV6_DST, SRC6);
	} else {
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr("198.18.0.10"));
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr("198.18.0.10"));
	}
	nfct_set_attr_u8(ct, ATTR_L4PROTO, l4);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, l4);
	if (k >= 2) {
		nfct_set_attr_u8(ct, ATTR_ICMP_TYPE, k == 2 ? 8 : 128);
		nfct_set_attr_u8(ct, ATTR_ICMP_CODE, 0);
		nfct_set_attr_u16(ct, ATTR_ICMP_ID, htons(4242));
	} else {
		nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(40000));
		nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(21));
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(21));
		nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(40000));
	}
	if (k == 0) {	/* TCP: its protoinfo, a helper, zones each way, a master */
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_ORIG, 7);
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_REPL, 9);
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, 0x08);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG, 0x08);
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, 0x20);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL, 0x28);
		nfct_set_attr(ct, ATTR_HELPER_NAME, "ftp");
		nfct_set_attr_u16(ct, ATTR_ZONE, 7);
		nfct_set_attr_u16(ct, ATTR_ORIG_ZONE, 8);
		nfct_set_attr_u16(ct, ATTR_REPL_ZONE, 9);
		nfct_set_attr_u8(ct, ATTR_MASTER_L3PROTO, AF_INET);
		nfct_set_attr_u32(ct, ATTR_MASTER_IPV4_SRC, inet_addr("198.18.0.10"));
		nfct_set_attr_u32(ct, ATTR_MASTER_IPV4_DST, inet_addr("198.19.0.10"));
		nfct_set_attr_u8(ct, ATTR_MASTER_L4PROTO, IPPROTO_TCP);
		nfct_set_attr_u16(ct, ATTR_MASTER_PORT_SRC, htons(39999));
		nfct_set_attr_u16(ct, ATTR_MASTER_PORT_DST, htons(21));
	}
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 300);
	nfct_set_attr_u32(ct, ATTR_MARK, BIT | (uint32_t)k);
	nfct_set_attr_u32(ct, ATTR_ID, 1000u + (uint32_t)k);
	return ct;
}

/* The reply tuple's ICMP id in a built message, changed to `id` (a NAT'd echo's): found or not. */
static bool
reply_icmp_id(struct nlmsghdr *nlh, uint16_t id)
{
	struct nlattr *a, *b, *c;

	mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg)) {
		if (mnl_attr_get_type(a) != CTA_TUPLE_REPLY)
			continue;
		mnl_attr_for_each_nested(b, a) {
			if (mnl_attr_get_type(b) != CTA_TUPLE_PROTO)
				continue;
			mnl_attr_for_each_nested(c, b) {
				if (mnl_attr_get_type(c) == CTA_PROTO_ICMP_ID ||
				    mnl_attr_get_type(c) == CTA_PROTO_ICMPV6_ID) {
					memcpy(mnl_attr_get_payload(c), &id, 2);
					return true;
				}
			}
		}
	}
	return false;
}

/* ct as nfct_nlmsg_build writes it, into buf (4 KiB): its length. */
static size_t
rebuilt(const struct nf_conntrack *ct, char *buf)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *g;

	memset(buf, 0, 4096);	/* this libmnl leaves an attribute's padding as it was */
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_NEW);
	g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->nfgen_family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	g->version = NFNETLINK_V0;
	assert_int_equal(nfct_nlmsg_build(nlh, ct), 0);
	return nlh->nlmsg_len;
}

/*
 * fd_ctparse and the library's parse of the same message, on each kind of
 * state (IPv4 TCP with everything, IPv6 UDP, ICMP and ICMPv6 echo, the
 * echoes with a reply id of their own, as NAT gives them): the same, and
 * every attribute the state had is set (so the comparison saw it: a
 * message the library took nothing from would compare equal too).  Then
 * both objects built into messages again by the library (nfct_nlmsg_build,
 * as fd_ct builds its requests): byte for byte the same, but for kind 0's
 * master tuple, which fd_ctparse does not keep.
 */
static void
test_parse_as_the_library(void **st)
{
	(void)st;
	for (int k = 0; k < 6; k++) {
		static char buf[4096] __attribute__((aligned(4)));
		static char ba[4096] __attribute__((aligned(4))), bb[4096] __attribute__((aligned(4)));
		struct nf_conntrack *ct = kind(k < 4 ? k : k - 2), *a = nfct_new(), *b = nfct_new();
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
		struct nfgenmsg *g;
		const char *diff;
		size_t la, lb;

		nlh->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_NEW);
		g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
		g->nfgen_family = nfct_get_attr_u8(ct, ATTR_L3PROTO);
		g->version = NFNETLINK_V0;
		assert_int_equal(nfct_nlmsg_build(nlh, ct), 0);
		if (k >= 4)
			assert_true(reply_icmp_id(nlh, htons(9999)));
		assert_int_equal(fd_ctparse_msg(nlh, a), 0);
		assert_true(nfct_nlmsg_parse(nlh, b) >= 0);
		diff = fc_nfct_differ(a, b);
		if (diff != NULL)
			fail_msg("kind %d: fd_ctparse and the library differ on %s", k, diff);
		for (size_t i = 0; i < sizeof(fc_nfct_attrs) / sizeof(fc_nfct_attrs[0]); i++) {
			enum nf_conntrack_attr x = fc_nfct_attrs[i].attr;

			/* the builder sends no CTA_ID in a CT_NEW */
			if (nfct_attr_is_set(ct, x) > 0 && nfct_attr_is_set(a, x) <= 0 && x != ATTR_ID)
				fail_msg("kind %d: %s built, not parsed", k, fc_nfct_attrs[i].name);
		}
		la = rebuilt(a, ba);
		lb = rebuilt(b, bb);
		if (k != 0 && (la != lb || memcmp(ba, bb, la) != 0))
			fail_msg("kind %d: built again, %zu bytes from fd_ctparse's, %zu from the "
				 "library's, not the same", k, la, lb);
		nfct_destroy(ct);
		nfct_destroy(a);
		nfct_destroy(b);
	}
}

/* ct's state in a CT_NEW message at buf, a CTA_TIMESTAMP nest begun at its end: the nest. */
static struct nlattr *
with_times(char *buf, struct nf_conntrack *ct, struct nlmsghdr **nlh)
{
	struct nfgenmsg *g;

	*nlh = mnl_nlmsg_put_header(buf);
	(*nlh)->nlmsg_type = CT_TYPE(IPCTNL_MSG_CT_NEW);
	g = mnl_nlmsg_put_extra_header(*nlh, sizeof(*g));
	g->nfgen_family = nfct_get_attr_u8(ct, ATTR_L3PROTO);
	g->version = NFNETLINK_V0;
	assert_int_equal(nfct_nlmsg_build(*nlh, ct), 0);
	return mnl_attr_nest_start(*nlh, CTA_TIMESTAMP);
}

/*
 * A state's times (CTA_TIMESTAMP, with nf_conntrack_timestamp on): read as
 * the library reads them - whose own setters cannot write them, so
 * fd_ctparse hands it the nest - start and stop, the rest unchanged; a
 * nest too big for a state's times, or a time of the wrong size (on which
 * the library would exit), is refused.
 */
static void
test_timestamp(void **st)
{
	static char buf[4096] __attribute__((aligned(4)));
	struct nf_conntrack *ct = kind(1), *a = nfct_new(), *b = nfct_new();
	struct nlmsghdr *nlh;
	struct nlattr *nest;
	const char *diff;

	(void)st;
	nest = with_times(buf, ct, &nlh);
	mnl_attr_put_u64(nlh, CTA_TIMESTAMP_START, htobe64(1796646004008109625ull));
	mnl_attr_put_u64(nlh, CTA_TIMESTAMP_STOP, htobe64(1796646005008109625ull));
	mnl_attr_nest_end(nlh, nest);
	assert_int_equal(fd_ctparse_msg(nlh, a), 0);
	assert_true(nfct_nlmsg_parse(nlh, b) >= 0);
	assert_true(nfct_attr_is_set(a, ATTR_TIMESTAMP_START) > 0);
	assert_true(nfct_get_attr_u64(a, ATTR_TIMESTAMP_START) == 1796646004008109625ull);
	assert_true(nfct_get_attr_u64(a, ATTR_TIMESTAMP_STOP) == 1796646005008109625ull);
	assert_true(nfct_get_attr_u64(b, ATTR_TIMESTAMP_START) == 1796646004008109625ull);
	diff = fc_nfct_differ(a, b);
	if (diff != NULL)
		fail_msg("fd_ctparse and the library differ on %s", diff);
	nfct_destroy(a);
	/* a nest past any state's times: refused */
	nest = with_times(buf, ct, &nlh);
	for (int i = 0; i < 12; i++)
		mnl_attr_put_u64(nlh, CTA_TIMESTAMP_START, 0);
	mnl_attr_nest_end(nlh, nest);
	a = nfct_new();
	assert_int_equal(fd_ctparse_msg(nlh, a), -1);
	nfct_destroy(a);
	/* a start of 4 bytes: refused here (the library would exit the process) */
	nest = with_times(buf, ct, &nlh);
	mnl_attr_put_u32(nlh, CTA_TIMESTAMP_START, 1);
	mnl_attr_nest_end(nlh, nest);
	a = nfct_new();
	assert_int_equal(fd_ctparse_msg(nlh, a), -1);
	nfct_destroy(a);
	nfct_destroy(b);
	nfct_destroy(ct);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_update_msg),
		cmocka_unit_test(test_dump_msg),
		cmocka_unit_test(test_dump_parse),
		cmocka_unit_test(test_own_events),
		cmocka_unit_test(test_short_msg),
		cmocka_unit_test(test_parse_as_the_library),
		cmocka_unit_test(test_timestamp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
