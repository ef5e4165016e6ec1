/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-ctgen's parts without a socket (tools/ctgen), as rows: the
 * command line (defaults, every option, IPv4 and IPv6 addresses and
 * prefixes, and bad input, each refused naming what was wrong), the i-th
 * state's tuple (ports varied so N fits, a source prefix wrapping inside
 * itself), its message read back by libnetfilter_conntrack (UDP, TCP
 * ESTABLISHED with its protoinfo, IPv6, a delete holding the tuple
 * alone), and the acks of a batch (in order, out of order, an error, one
 * not of the batch, a message cut short).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "ctgen.h"

#define ROWS(r) (sizeof(r) / sizeof((r)[0]))

/* "N --opt v ..." split on spaces into argv (argv[0] "flowcut-ctgen"): argc */
static int
split(const char *line, char *buf, size_t len, char **argv, int max)
{
	int argc = 0;

	snprintf(buf, len, "%s", line);
	argv[argc++] = "flowcut-ctgen";
	for (char *save, *w = strtok_r(buf, " ", &save); w && argc < max - 1;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return argc;
}

static int
parse(const char *line, struct ctg_opts *o, char *err, size_t errlen)
{
	char buf[512], *argv[32];
	int argc = split(line, buf, sizeof(buf), argv, 32);

	return ctg_parse(o, argc, argv, err, errlen);
}

static void
test_parse_rows(void **state)
{
	static const struct {
		const char *line;
		unsigned long n, rate;
		uint32_t mark, timeout;
		int family, proto;
		const char *src;
		unsigned int src_len;
		const char *dst;
		uint16_t sport, dport;
		unsigned int batch;
		bool del;
	} rows[] = {
		/* ctfill's command line, and its defaults */
		{ "1000", 1000, 0, 0, 600, AF_INET, IPPROTO_UDP, "198.18.0.2", 32, "198.18.1.2",
		  1024, 10000, 64, false },
		{ "200000 --mark 0x40000000", 200000, 0, 0x40000000, 600, AF_INET, IPPROTO_UDP,
		  "198.18.0.2", 32, "198.18.1.2", 1024, 10000, 64, false },
		{ "5 --timeout 30 --mark 7", 5, 0, 7, 30, AF_INET, IPPROTO_UDP, "198.18.0.2", 32,
		  "198.18.1.2", 1024, 10000, 64, false },
		{ "0", 0, 0, 0, 600, AF_INET, IPPROTO_UDP, "198.18.0.2", 32, "198.18.1.2", 1024,
		  10000, 64, false },
		/* every option */
		{ "2000000 --src 198.18.0.0/24 --dst 198.18.1.9 --sport 2000 --dport 80 --proto tcp "
		  "--rate 5000 --batch 1024 --delete --timeout 86400 --mark 4294967295", 2000000, 5000,
		  UINT32_MAX, 86400, AF_INET, IPPROTO_TCP, "198.18.0.0", 24, "198.18.1.9", 2000, 80,
		  1024, true },
		/* IPv6: its own defaults, --family before or after the addresses */
		{ "10 --family 6", 10, 0, 0, 600, AF_INET6, IPPROTO_UDP, "2001:2::2", 128,
		  "2001:2:0:1::2", 1024, 10000, 64, false },
		{ "10 --src 2001:db8::/64 --dst 2001:db8:1::1 --family 6 --batch 1", 10, 0, 0, 600,
		  AF_INET6, IPPROTO_UDP, "2001:db8::", 64, "2001:db8:1::1", 1024, 10000, 1, false },
		{ "4000000 --src 10.0.0.1/0", 4000000, 0, 0, 600, AF_INET, IPPROTO_UDP, "10.0.0.1", 0,
		  "198.18.1.2", 1024, 10000, 64, false },
		/* N just fitting the ports: one source, 1 x 1 port */
		{ "1 --sport 65535 --dport 65535", 1, 0, 0, 600, AF_INET, IPPROTO_UDP, "198.18.0.2",
		  32, "198.18.1.2", 65535, 65535, 64, false },
	};

	(void)state;
	for (size_t i = 0; i < ROWS(rows); i++) {
		struct ctg_opts o;
		char err[256] = "";
		uint8_t a[16] = { 0 };

		print_message("row %zu: %s\n", i, rows[i].line);
		assert_int_equal(parse(rows[i].line, &o, err, sizeof(err)), 0);
		assert_string_equal(err, "");
		assert_int_equal(o.n, rows[i].n);
		assert_int_equal(o.rate, rows[i].rate);
		assert_int_equal(o.mark, rows[i].mark);
		assert_int_equal(o.timeout, rows[i].timeout);
		assert_int_equal(o.family, rows[i].family);
		assert_int_equal(o.proto, rows[i].proto);
		assert_int_equal(inet_pton(rows[i].family, rows[i].src, a), 1);
		assert_memory_equal(o.src, a, rows[i].family == AF_INET ? 4 : 16);
		assert_int_equal(o.src_len, rows[i].src_len);
		assert_int_equal(inet_pton(rows[i].family, rows[i].dst, a), 1);
		assert_memory_equal(o.dst, a, rows[i].family == AF_INET ? 4 : 16);
		assert_int_equal(o.sport, rows[i].sport);
		assert_int_equal(o.dport, rows[i].dport);
		assert_int_equal(o.batch, rows[i].batch);
		assert_int_equal(o.del, rows[i].del);
	}
}

static void
test_parse_bad_rows(void **state)
{
	static const struct {
		const char *line;
		const char *err;	/* the message, whole */
	} rows[] = {
		{ "", "no N (the states to make) given" },
		{ "many", "N: 'many' is not a number from 0 to 4000000" },
		{ "4000001", "N: '4000001' is not a number from 0 to 4000000" },
		{ "-1", "N: '-1' is not a number from 0 to 4000000" },
		{ "--mark 1", "N: '--mark' is not a number from 0 to 4000000" },
		{ "10 --mark", "--mark: no value given" },
		{ "10 --mark 4294967296", "--mark: '4294967296' is not a number from 0 to 4294967295" },
		{ "10 --timeout 86401", "--timeout: '86401' is not a number from 0 to 86400" },
		{ "10 --timeout 1s", "--timeout: '1s' is not a number from 0 to 86400" },
		{ "10 --sport 0", "--sport: port 0 is no port" },
		{ "10 --dport 65536", "--dport: '65536' is not a number from 0 to 65535" },
		{ "10 --batch 0", "--batch: '0' is not 1 to 1024" },
		{ "10 --batch 1025", "--batch: '1025' is not a number from 0 to 1024" },
		{ "10 --rate fast", "--rate: 'fast' is not a number from 0 to 100000000" },
		{ "10 --proto icmp", "--proto: 'icmp' is not udp or tcp" },
		{ "10 --family 5", "--family: '5' is not 4 or 6" },
		{ "10 --colour red", "'--colour' is no option" },
		{ "10 20", "'20' is no option (N comes first)" },
		{ "10 --src 198.18.0.256", "--src (--family 4): '198.18.0.256' is not an IPv4 address" },
		{ "10 --src 2001:2::2", "--src (--family 4): '2001:2::2' is not an IPv4 address" },
		{ "10 --family 6 --dst 198.18.1.2",
		  "--dst (--family 6): '198.18.1.2' is not an IPv6 address" },
		{ "10 --src 198.18.0.2/33", "--src (--family 4): '198.18.0.2/33': the length '33' is "
					    "not 0 to 32" },
		{ "10 --src 198.18.0.2/", "--src (--family 4): '198.18.0.2/': the length '' is not "
					  "0 to 32" },
		{ "10 --src 198.18.0.2/-1", "--src (--family 4): '198.18.0.2/-1': the length '-1' is "
					    "not 0 to 32" },
		{ "10 --src /24", "--src (--family 4): '/24': '' is not an IPv4 address" },
		{ "10 --src 198.18.0.x/24", "--src (--family 4): '198.18.0.x/24': '198.18.0.x' is not "
					    "an IPv4 address" },
		{ "10 --family 6 --src 2001:2::/129",
		  "--src (--family 6): '2001:2::/129': the length '129' is not 0 to 128" },
		{ "10 --dst 198.18.1.0/24", "--dst: '198.18.1.0/24' is one address, not a prefix" },
		/* N past the ports: 64,512 x 55,536 = 3,582,738,432 states of one source fit */
		{ "2 --sport 65535 --dport 65535", "N: 2 states do not fit 1 source(s) x 1 source "
						   "port(s) from 65535 x 1 destination port(s) from 65535" },
		{ "70000 --sport 65535 --src 10.0.0.0/24 --dport 65535",
		  "N: 70000 states do not fit 256 source(s) x 1 source port(s) from 65535 x 1 "
		  "destination port(s) from 65535" },
	};

	(void)state;
	for (size_t i = 0; i < ROWS(rows); i++) {
		struct ctg_opts o;
		char err[256] = "";

		print_message("row %zu: '%s'\n", i, rows[i].line);
		assert_int_equal(parse(rows[i].line, &o, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, rows[i].err);
	}
}

static void
test_tuple_rows(void **state)
{
	static const struct {
		const char *line;
		unsigned long i;
		const char *text;
	} rows[] = {
		{ "2000000", 0, "udp 198.18.0.2:1024 -> 198.18.1.2:10000" },
		{ "2000000", 64511, "udp 198.18.0.2:65535 -> 198.18.1.2:10000" },
		{ "2000000", 64512, "udp 198.18.0.2:1024 -> 198.18.1.2:10001" },
		{ "2000000", 1999999, "udp 198.18.0.2:1151 -> 198.18.1.2:10031" },
		{ "10 --proto tcp --family 6", 3, "tcp [2001:2::2]:1027 -> [2001:2:0:1::2]:10000" },
		/* a source prefix: the source first, from A on, wrapping inside A/n */
		{ "1000 --src 198.18.0.254/24", 0, "udp 198.18.0.254:1024 -> 198.18.1.2:10000" },
		{ "1000 --src 198.18.0.254/24", 2, "udp 198.18.0.0:1024 -> 198.18.1.2:10000" },
		{ "1000 --src 198.18.0.254/24", 257, "udp 198.18.0.255:1025 -> 198.18.1.2:10000" },
		{ "10 --src 198.18.0.2/31", 1, "udp 198.18.0.3:1024 -> 198.18.1.2:10000" },
		{ "10 --src 198.18.0.2/31", 2, "udp 198.18.0.2:1025 -> 198.18.1.2:10000" },
		{ "10 --src 10.1.2.3/0", 9, "udp 10.1.2.12:1024 -> 198.18.1.2:10000" },
		{ "10 --family 6 --src 2001:db8::ffff:ffff/64", 1,
		  "udp [2001:db8::]:1024 -> [2001:2:0:1::2]:10000" },
		{ "70000 --family 6 --src 2001:db8::1/112 --sport 65000 --dport 7", 65536,
		  "udp [2001:db8::1]:65001 -> [2001:2:0:1::2]:7" },
	};

	(void)state;
	for (size_t i = 0; i < ROWS(rows); i++) {
		struct ctg_opts o;
		struct fd_tuple t;
		char err[256], text[128];

		print_message("row %zu: %s, state %lu\n", i, rows[i].line, rows[i].i);
		assert_int_equal(parse(rows[i].line, &o, err, sizeof(err)), 0);
		ctg_tuple(&o, rows[i].i, &t);
		assert_string_equal(fd_tuple_format(&t, text, sizeof(text)), rows[i].text);
	}
}

/* the message read back: its type, flags, and the state it carries */
static void
test_build_rows(void **state)
{
	static const struct {
		const char *line;
		unsigned long i;
		uint16_t type;
		uint16_t flags;
		const char *src, *dst;
		uint16_t sport, dport;
	} rows[] = {
		{ "10 --mark 0x40000000 --timeout 30", 1, IPCTNL_MSG_CT_NEW,
		  NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, "198.18.0.2", "198.18.1.2",
		  1025, 10000 },
		{ "10 --proto tcp --mark 5", 0, IPCTNL_MSG_CT_NEW,
		  NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, "198.18.0.2", "198.18.1.2",
		  1024, 10000 },
		{ "10 --proto tcp --family 6", 9, IPCTNL_MSG_CT_NEW,
		  NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, "2001:2::2",
		  "2001:2:0:1::2", 1033, 10000 },
		{ "10 --delete --mark 3", 2, IPCTNL_MSG_CT_DELETE, NLM_F_REQUEST | NLM_F_ACK,
		  "198.18.0.2", "198.18.1.2", 1026, 10000 },
		{ "10 --delete --proto tcp --family 6", 2, IPCTNL_MSG_CT_DELETE,
		  NLM_F_REQUEST | NLM_F_ACK, "2001:2::2", "2001:2:0:1::2", 1026, 10000 },
	};

	(void)state;
	for (size_t i = 0; i < ROWS(rows); i++) {
		_Alignas(struct nlmsghdr) char buf[CTG_MSG_MAX];
		struct nf_conntrack *ct = nfct_new();
		struct ctg_opts o;
		struct nlmsghdr *nlh;
		char err[256];
		uint8_t a[16], b[16];
		int af;

		print_message("row %zu: %s, state %lu\n", i, rows[i].line, rows[i].i);
		assert_int_equal(parse(rows[i].line, &o, err, sizeof(err)), 0);
		af = o.family;
		assert_null(ctg_build(buf, CTG_MSG_MAX - 1, &o, rows[i].i, 77));
		nlh = ctg_build(buf, sizeof(buf), &o, rows[i].i, 77);
		assert_non_null(nlh);
		assert_int_equal(nlh->nlmsg_type, (NFNL_SUBSYS_CTNETLINK << 8) | rows[i].type);
		assert_int_equal(nlh->nlmsg_flags, rows[i].flags);
		assert_int_equal(nlh->nlmsg_seq, 77);
		assert_non_null(ct);
		assert_true(nfct_nlmsg_parse(nlh, ct) >= 0);
		assert_int_equal(nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO), af);
		assert_int_equal(nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO), o.proto);
		assert_int_equal(inet_pton(af, rows[i].src, a), 1);
		assert_int_equal(inet_pton(af, rows[i].dst, b), 1);
		assert_memory_equal(nfct_get_attr(ct, af == AF_INET ? ATTR_ORIG_IPV4_SRC :
						  ATTR_ORIG_IPV6_SRC), a, af == AF_INET ? 4 : 16);
		assert_memory_equal(nfct_get_attr(ct, af == AF_INET ? ATTR_ORIG_IPV4_DST :
						  ATTR_ORIG_IPV6_DST), b, af == AF_INET ? 4 : 16);
		assert_int_equal(ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC)), rows[i].sport);
		assert_int_equal(ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST)), rows[i].dport);
		if (o.del) {
			/* the tuple alone: no reply, status, timeout, mark */
			assert_false(nfct_attr_is_set(ct, ATTR_REPL_L3PROTO));
			assert_false(nfct_attr_is_set(ct, ATTR_STATUS));
			assert_false(nfct_attr_is_set(ct, ATTR_MARK));
			assert_false(nfct_attr_is_set(ct, ATTR_TCP_STATE));
			nfct_destroy(ct);
			continue;
		}
		assert_memory_equal(nfct_get_attr(ct, af == AF_INET ? ATTR_REPL_IPV4_SRC :
						  ATTR_REPL_IPV6_SRC), b, af == AF_INET ? 4 : 16);
		assert_memory_equal(nfct_get_attr(ct, af == AF_INET ? ATTR_REPL_IPV4_DST :
						  ATTR_REPL_IPV6_DST), a, af == AF_INET ? 4 : 16);
		assert_int_equal(ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_SRC)), rows[i].dport);
		assert_int_equal(ntohs(nfct_get_attr_u16(ct, ATTR_REPL_PORT_DST)), rows[i].sport);
		/* libnetfilter_conntrack adds CONFIRMED to what it is given */
		assert_int_equal(nfct_get_attr_u32(ct, ATTR_STATUS),
				 IPS_CONFIRMED | IPS_ASSURED | IPS_SEEN_REPLY);
		assert_int_equal(nfct_get_attr_u32(ct, ATTR_TIMEOUT), o.timeout);
		assert_int_equal(nfct_get_attr_u32(ct, ATTR_MARK), o.mark);
		if (o.proto == IPPROTO_TCP) {
			assert_int_equal(nfct_get_attr_u8(ct, ATTR_TCP_STATE),
					 TCP_CONNTRACK_ESTABLISHED);
			assert_int_equal(nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_ORIG), 7);
			assert_int_equal(nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_REPL), 7);
			assert_int_equal(nfct_get_attr_u8(ct, ATTR_TCP_FLAGS_ORIG),
					 IP_CT_TCP_FLAG_WINDOW_SCALE | IP_CT_TCP_FLAG_SACK_PERM);
			assert_int_equal(nfct_get_attr_u8(ct, ATTR_TCP_FLAGS_REPL),
					 IP_CT_TCP_FLAG_WINDOW_SCALE | IP_CT_TCP_FLAG_SACK_PERM);
		} else {
			assert_false(nfct_attr_is_set(ct, ATTR_TCP_STATE));
		}
		nfct_destroy(ct);
	}
}

/* an ack (error 0) or an error of the message with seq, at buf + *len */
static void
put_ack(char *buf, size_t *len, uint32_t seq, int error, uint16_t type)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + *len);
	struct nlmsgerr *e;

	nlh->nlmsg_type = type;
	nlh->nlmsg_seq = seq;
	e = mnl_nlmsg_put_extra_header(nlh, sizeof(*e));
	e->error = error;
	*len += MNL_ALIGN(nlh->nlmsg_len);
}

static void
test_acks_rows(void **state)
{
	static const struct {
		const char *what;
		unsigned int n;			/* the batch, from seq 100 */
		struct { uint32_t seq; int error; uint16_t type; } msg[6];
		unsigned int nmsg;
		int cut;			/* bytes taken off the datagram's end */
		int rc;
		const char *got;		/* per message of the batch: 'y' 0, 'e' an error, '-' none */
	} rows[] = {
		{ "every ack, in order", 3, { { 100, 0, NLMSG_ERROR }, { 101, 0, NLMSG_ERROR },
		  { 102, 0, NLMSG_ERROR } }, 3, 0, 3, "yyy" },
		{ "out of order, one missing", 3, { { 102, 0, NLMSG_ERROR }, { 100, 0, NLMSG_ERROR } },
		  2, 0, 2, "y-y" },
		{ "an error (EEXIST)", 2, { { 100, -EEXIST, NLMSG_ERROR }, { 101, 0, NLMSG_ERROR } },
		  2, 0, 2, "ey" },
		{ "not of the batch: before, after, another type, seen twice", 2,
		  { { 99, 0, NLMSG_ERROR }, { 102, 0, NLMSG_ERROR }, { 100, 0, NLMSG_DONE },
		    { 101, 0, NLMSG_ERROR }, { 101, -EEXIST, NLMSG_ERROR } }, 5, 0, 1, "-y" },
		{ "the last message cut short", 2, { { 100, 0, NLMSG_ERROR }, { 101, 0, NLMSG_ERROR } },
		  2, 4, -EBADMSG, "y-" },
		{ "a positive error is a protocol error", 1, { { 100, 5, NLMSG_ERROR } }, 1, 0, 1,
		  "e" },
	};

	(void)state;
	for (size_t i = 0; i < ROWS(rows); i++) {
		static struct ctg_acks a;
		_Alignas(struct nlmsghdr) char buf[1024];
		size_t len = 0;

		print_message("row %zu: %s\n", i, rows[i].what);
		memset(&a, 0, sizeof(a));
		a.first = 100;
		a.n = rows[i].n;
		for (unsigned int m = 0; m < rows[i].nmsg; m++)
			put_ack(buf, &len, rows[i].msg[m].seq, rows[i].msg[m].error,
				rows[i].msg[m].type);
		assert_int_equal(ctg_acks(&a, buf, len - (size_t)rows[i].cut), rows[i].rc);
		for (unsigned int k = 0; k < rows[i].n; k++) {
			assert_int_equal(a.got[k], rows[i].got[k] != '-');
			if (rows[i].got[k] == 'y')
				assert_int_equal(a.rc[k], 0);
			if (rows[i].got[k] == 'e')
				assert_true(a.rc[k] < 0);
		}
	}
	/* the error's value, kept */
	{
		static struct ctg_acks a = { .first = 7, .n = 1 };
		_Alignas(struct nlmsghdr) char buf[128];
		size_t len = 0;

		put_ack(buf, &len, 7, -ENOMEM, NLMSG_ERROR);
		assert_int_equal(ctg_acks(&a, buf, len), 1);
		assert_int_equal(a.rc[0], -ENOMEM);
		put_ack(buf, &len, 8, 3, NLMSG_ERROR);
		a = (struct ctg_acks){ .first = 8, .n = 1 };
		assert_int_equal(ctg_acks(&a, buf, len), 1);
		assert_int_equal(a.rc[0], -EPROTO);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rows),
		cmocka_unit_test(test_parse_bad_rows),
		cmocka_unit_test(test_tuple_rows),
		cmocka_unit_test(test_build_rows),
		cmocka_unit_test(test_acks_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
