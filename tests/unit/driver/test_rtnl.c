/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_route_parse: what flowcutd reads from rtnetlink's neighbour, route and
 * link messages, one row per kind of message, built with libmnl as the
 * kernel sends them; and what it refuses (a message cut short, an
 * attribute longer than its message).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fc_rtnl.h"
#include "fd_route.h"

static const uint8_t V4[4] = { 198, 18, 1, 2 };
static const uint8_t V6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2 };
static const uint8_t MAC[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };

struct got {
	struct fd_rt_change c[8];
	int n;
};

static void
collect(void *arg, const struct fd_rt_change *c)
{
	struct got *g = arg;

	if (g->n < 8)
		g->c[g->n] = *c;
	g->n++;
}

static size_t
neigh(char *buf, uint16_t type, int af, const void *dst, const void *mac, uint16_t state)
{
	return fc_rtnl_neigh(buf, type, af, 7, dst, mac, state);
}

static void
test_neighbours(void **state)
{
	static const struct {
		const char *name;
		uint16_t type;
		int af;
		const void *mac;
		uint16_t state;
		bool resolved;
	} rows[] = {
		{ "v4 reachable", RTM_NEWNEIGH, AF_INET, MAC, NUD_REACHABLE, true },
		{ "v6 stale (still usable)", RTM_NEWNEIGH, AF_INET6, MAC, NUD_STALE, true },
		{ "v4 probing", RTM_NEWNEIGH, AF_INET, MAC, NUD_PROBE, true },
		{ "v4 failed", RTM_NEWNEIGH, AF_INET, MAC, NUD_FAILED, false },
		{ "v4 incomplete, no MAC", RTM_NEWNEIGH, AF_INET, NULL, NUD_INCOMPLETE, false },
		{ "v6 deleted", RTM_DELNEIGH, AF_INET6, MAC, NUD_STALE, false },
	};
	static char buf[1024];

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const void *dst = rows[i].af == AF_INET ? (const void *)V4 : (const void *)V6;
		size_t len = neigh(buf, rows[i].type, rows[i].af, dst, rows[i].mac, rows[i].state);
		struct got g = { 0 };

		print_message("%s\n", rows[i].name);
		assert_int_equal(fd_route_parse(buf, len, collect, &g), 1);
		assert_int_equal(g.n, 1);
		assert_int_equal(g.c[0].what, FD_RT_NEIGH);
		assert_int_equal(g.c[0].ifindex, 7);
		assert_int_equal(g.c[0].family, rows[i].af == AF_INET ? 4 : 6);
		assert_memory_equal(g.c[0].addr, dst, rows[i].af == AF_INET ? 4 : 16);
		assert_int_equal(g.c[0].resolved, rows[i].resolved);
		if (rows[i].resolved)
			assert_memory_equal(g.c[0].mac, MAC, 6);
	}
}

static void
test_skipped(void **state)
{
	static char buf[1024];
	struct got g = { 0 };
	size_t len;

	(void)state;
	/* a bridge's FDB entry and a neighbour without an address: not ours */
	len = neigh(buf, RTM_NEWNEIGH, AF_BRIDGE, NULL, MAC, NUD_REACHABLE);
	len += neigh(buf + len, RTM_NEWNEIGH, AF_INET, NULL, MAC, NUD_REACHABLE);
	assert_int_equal(fd_route_parse(buf, len, collect, &g), 0);
	assert_int_equal(g.n, 0);
}

static void
test_routes_and_links_batched(void **state)
{
	static char buf[2048];
	struct got g = { 0 };
	size_t len;

	(void)state;
	len = fc_rtnl_route(buf, RTM_NEWROUTE, 9, 0);
	len += fc_rtnl_link(buf + len, 9, 1400);
	len += fc_rtnl_route(buf + len, RTM_DELROUTE, 9, 1400);
	len += fc_rtnl_link(buf + len, 9, 0);
	assert_int_equal(fd_route_parse(buf, len, collect, &g), 4);
	assert_int_equal(g.c[0].what, FD_RT_ROUTE);
	assert_int_equal(g.c[1].what, FD_RT_LINK);
	assert_int_equal(g.c[1].ifindex, 9);
	assert_int_equal(g.c[1].mtu, 1400);
	assert_int_equal(g.c[2].what, FD_RT_ROUTE);
	assert_int_equal(g.c[3].mtu, 0);	/* not said */
}

static void
test_malformed(void **state)
{
	static char buf[1024];
	struct got g = { 0 };
	struct nlmsghdr *nlh;
	size_t len, first;

	(void)state;
	/* cut short: the first message is reported, the second refused */
	first = neigh(buf, RTM_NEWNEIGH, AF_INET, V4, MAC, NUD_REACHABLE);
	len = first + neigh(buf + first, RTM_NEWNEIGH, AF_INET6, V6, MAC, NUD_REACHABLE);
	assert_int_equal(fd_route_parse(buf, len - 4, collect, &g), -EBADMSG);
	assert_int_equal(g.n, 1);
	/* a header shorter than its ndmsg */
	nlh = (struct nlmsghdr *)buf;
	nlh->nlmsg_len = sizeof(*nlh) + 2;
	g.n = 0;
	assert_int_equal(fd_route_parse(buf, nlh->nlmsg_len, collect, &g), -EBADMSG);
	/* an attribute that runs past its message */
	len = neigh(buf, RTM_NEWNEIGH, AF_INET, V4, MAC, NUD_REACHABLE);
	((struct nlattr *)(buf + sizeof(*nlh) + MNL_ALIGN(sizeof(struct ndmsg))))->nla_len = 200;
	g.n = 0;
	assert_int_equal(fd_route_parse(buf, len, collect, &g), -EBADMSG);
	assert_int_equal(g.n, 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_neighbours),
		cmocka_unit_test(test_skipped),
		cmocka_unit_test(test_routes_and_links_batched),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
