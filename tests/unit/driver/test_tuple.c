/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_tuple_format as rows: TCP and UDP over IPv4 and IPv6 (ports, v6 in
 * brackets), ICMP, ICMPv6 and another protocol (no ports), and a buffer
 * too short (cut, terminated).  The text is what flowcutd's cut and
 * inspector lines carry, which the lab greps.
 */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include "fd_tuple.h"

static void
test_format_rows(void **state)
{
	static const struct {
		uint8_t family, proto;
		const char *src, *dst;
		uint16_t sport, dport;	/* host order here */
		size_t len;
		const char *text;
	} rows[] = {
		{ 4, IPPROTO_TCP, "198.18.0.2", "198.18.1.2", 40000, 443, 160,
		  "tcp 198.18.0.2:40000 -> 198.18.1.2:443" },
		{ 4, IPPROTO_UDP, "198.18.0.2", "198.18.1.2", 5353, 53, 160,
		  "udp 198.18.0.2:5353 -> 198.18.1.2:53" },
		{ 6, IPPROTO_TCP, "2001:db8::2", "2001:db8:1::2", 40000, 443, 160,
		  "tcp [2001:db8::2]:40000 -> [2001:db8:1::2]:443" },
		{ 6, IPPROTO_UDP, "fe80::1", "ff02::fb", 0, 65535, 160,
		  "udp [fe80::1]:0 -> [ff02::fb]:65535" },
		{ 4, IPPROTO_ICMP, "198.18.0.2", "198.18.1.2", 0, 0, 160,
		  "icmp 198.18.0.2 -> 198.18.1.2" },
		{ 6, IPPROTO_ICMPV6, "2001:db8::2", "2001:db8:1::2", 0, 0, 160,
		  "icmpv6 2001:db8::2 -> 2001:db8:1::2" },
		{ 4, IPPROTO_SCTP, "10.0.0.1", "10.0.0.2", 1, 2, 160,
		  "proto 10.0.0.1 -> 10.0.0.2" },
		{ 4, IPPROTO_TCP, "198.18.0.2", "198.18.1.2", 40000, 443, 12, "tcp 198.18." },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_tuple t = { .family = rows[i].family, .proto = rows[i].proto,
				      .sport = htons(rows[i].sport),
				      .dport = htons(rows[i].dport) };
		int af = rows[i].family == 4 ? AF_INET : AF_INET6;
		char buf[160];

		print_message("row %zu: %s\n", i, rows[i].text);
		assert_int_equal(inet_pton(af, rows[i].src, t.src), 1);
		assert_int_equal(inet_pton(af, rows[i].dst, t.dst), 1);
		memset(buf, 'x', sizeof(buf));
		assert_ptr_equal(fd_tuple_format(&t, buf, rows[i].len), buf);
		assert_string_equal(buf, rows[i].text);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
