/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_nhop: the next-hop table (driver/path/fd_nhop) over stand-in
 * commands that record every NHOP_PROGRAM.  A next hop is found again by
 * (port, neighbour, MTU) and by nothing less, at every fill of the table up
 * to FD_NHOP_MAX; a full table refuses the next; a reset gives the indexes
 * out anew, each marked reused; a neighbour's change programs exactly its
 * own next hops again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <flowcut/fc_cmd.h>

#include "fd_nhop.h"

static struct fc_cmd_nhop said[2 * FD_NHOP_MAX];
static unsigned int nsaid;

static int
record(void *ctx, uint16_t op, const void *payload, uint16_t len, void *ans, uint16_t cap)
{
	(void)ctx;
	(void)ans;
	(void)cap;
	assert_int_equal(op, FC_CMD_NHOP_PROGRAM);
	assert_int_equal(len, sizeof(struct fc_cmd_nhop));
	assert_true(nsaid < sizeof(said) / sizeof(said[0]));
	memcpy(&said[nsaid++], payload, len);
	return 0;
}

static const struct fd_cmds cmds = { .call = record };
static const uint8_t macs[4][6] = { {2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2},
				    {2, 0, 0, 0, 0, 3}, {2, 0, 0, 0, 0, 4} };

/* the i-th next hop of a LAN: 198.18.x.y or 2001:2::x:y, a port and MTU from i */
static struct fd_hop
hop_of(unsigned int i, int family)
{
	struct fd_hop h = { .family = (uint8_t)family, .mtu = (uint16_t)(1500 - (i % 3) * 100),
			    .resolved = true, .mac = {2, 1, 0, 0, (uint8_t)(i >> 8), (uint8_t)i} };

	if (family == 4) {
		h.nbr[0] = 198, h.nbr[1] = 18, h.nbr[2] = (uint8_t)(i >> 8), h.nbr[3] = (uint8_t)i;
	} else {
		h.nbr[0] = 0x20, h.nbr[1] = 0x01, h.nbr[3] = 0x02;
		h.nbr[14] = (uint8_t)(i >> 8), h.nbr[15] = (uint8_t)i;
	}
	return h;
}

static void
test_found_again(void **state)
{
	struct fd_nhop *t = fd_nhop_open(&cmds, 4, macs);
	uint32_t id;

	(void)state;
	assert_non_null(t);
	nsaid = 0;
	for (unsigned int i = 0; i < FD_NHOP_MAX; i++) {
		struct fd_hop h = hop_of(i / 2, i % 2 ? 6 : 4);

		assert_int_equal(fd_nhop_find(t, i % 4, &h, &id), -ENOENT);
		assert_int_equal(fd_nhop_get(t, i % 4, &h, &id), 0);
		assert_int_equal(id, i);
		assert_int_equal(said[i].id, i);
		assert_int_equal(said[i].port, i % 4);
		assert_int_equal(said[i].mtu, h.mtu);
		assert_true(said[i].flags & FC_NHOP_REUSED);
		assert_memory_equal(said[i].smac, macs[i % 4], 6);
	}
	assert_int_equal(nsaid, FD_NHOP_MAX);
	/* each found at its own index, with no command; nothing less finds it */
	for (unsigned int i = 0; i < FD_NHOP_MAX; i++) {
		struct fd_hop h = hop_of(i / 2, i % 2 ? 6 : 4), other;

		assert_int_equal(fd_nhop_find(t, i % 4, &h, &id), 0);
		assert_int_equal(id, i);
		assert_int_equal(fd_nhop_get(t, i % 4, &h, &id), 0);
		assert_int_equal(id, i);
		other = h;
		other.mtu = 9000;
		assert_int_equal(fd_nhop_find(t, i % 4, &other, &id), -ENOENT);
		assert_int_equal(fd_nhop_find(t, (i + 1) % 4, &h, &id), -ENOENT);
	}
	assert_int_equal(nsaid, FD_NHOP_MAX);
	{
		struct fd_hop h = hop_of(FD_NHOP_MAX, 4);

		assert_int_equal(fd_nhop_get(t, 0, &h, &id), -ENOSPC);
		assert_int_equal(fd_nhop_get(t, 4, &h, &id), -EINVAL);
	}
	fd_nhop_close(t);
}

static void
test_reset(void **state)
{
	struct fd_nhop *t = fd_nhop_open(&cmds, 2, macs);
	struct fd_hop a = hop_of(1, 4), b = hop_of(2, 6);
	uint32_t id;

	(void)state;
	assert_int_equal(fd_nhop_get(t, 0, &a, &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(fd_nhop_get(t, 1, &b, &id), 0);
	assert_int_equal(id, 1);
	fd_nhop_reset(t);
	assert_int_equal(fd_nhop_find(t, 0, &a, &id), -ENOENT);
	assert_int_equal(fd_nhop_find(t, 1, &b, &id), -ENOENT);
	nsaid = 0;
	/* the indexes given again from 0, each programmed as reused */
	assert_int_equal(fd_nhop_get(t, 1, &b, &id), 0);
	assert_int_equal(id, 0);
	assert_int_equal(nsaid, 1);
	assert_true(said[0].flags & FC_NHOP_REUSED);
	assert_int_equal(fd_nhop_find(t, 0, &a, &id), -ENOENT);
	fd_nhop_close(t);
}

static void
test_neigh(void **state)
{
	struct fd_nhop *t = fd_nhop_open(&cmds, 2, macs);
	struct fd_hop a = hop_of(7, 4), a9000 = a, c = hop_of(8, 4);
	const uint8_t mac[6] = {2, 9, 9, 9, 9, 9};
	uint32_t id;

	(void)state;
	a9000.mtu = 9000;
	assert_int_equal(fd_nhop_get(t, 0, &a, &id), 0);
	assert_int_equal(fd_nhop_get(t, 0, &a9000, &id), 0);
	assert_int_equal(fd_nhop_get(t, 1, &a, &id), 0);
	assert_int_equal(fd_nhop_get(t, 0, &c, &id), 0);
	nsaid = 0;
	/* a's MAC changes out of port 0: its two next hops there, not port 1's, not c's */
	assert_int_equal(fd_nhop_neigh(t, 0, 4, a.nbr, mac, true), 2);
	assert_int_equal(nsaid, 2);
	assert_int_equal(said[0].id, 0);
	assert_int_equal(said[1].id, 1);
	assert_memory_equal(said[0].dmac, mac, 6);
	assert_false(said[0].flags & FC_NHOP_REUSED);
	/* the same again changes nothing; still found */
	assert_int_equal(fd_nhop_neigh(t, 0, 4, a.nbr, mac, true), 0);
	assert_int_equal(fd_nhop_find(t, 0, &a9000, &id), 0);
	assert_int_equal(id, 1);
	fd_nhop_close(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_found_again),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_neigh),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
