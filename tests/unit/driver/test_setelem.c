/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_setelem: nftables set elements on the wire.  Ranges written as a
 * batch read back as themselves (interval and plain sets, IPv4 and IPv6,
 * a range to the last address, a flush); the kernel's notifications, one
 * element a message as it sends them, paired row by row; what cannot be
 * read or placed is counted, never guessed.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "fc_list.h"
#include "fd_setelem.h"

/* A list from text ("198.18.0.0/24\n2001:2::1\n"), canonical. */
static struct fc_list
list_of(const char *text)
{
	struct fc_list l = { 0 };

	assert_int_equal(fc_list_parse(text, strlen(text), &l, NULL, NULL), 0);
	fc_list_canon(&l);
	return l;
}

/* The list as text, one range a line. */
static void
list_text(const struct fc_list *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < l->n && used < len; i++) {
		char r[128];

		used += (size_t)snprintf(buf + used, len - used, "%s ",
					 fc_range_format(&l->r[i], r, sizeof(r)));
	}
}

/* Every element message of a batch gathered into acc; counts them. */
static unsigned int
gather_batch(const struct fd_setelem_batch *b, struct fd_setelem_acc *acc, uint8_t want_op)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->buf;
	int left = (int)b->len;
	unsigned int msgs = 0;

	while (mnl_nlmsg_ok(nlh, left)) {
		uint8_t nfproto;
		const char *table, *set;

		if (fd_setelem_head(nlh, &nfproto, &table, &set) == 0) {
			assert_int_equal(NFNL_MSG_TYPE(nlh->nlmsg_type), want_op);
			assert_int_equal(nfproto, NFPROTO_INET);
			assert_string_equal(table, "flowcut");
			assert_string_equal(set, "s");
			if (fd_setelem_gather(nlh, acc) == 0)
				msgs++;
		}
		nlh = mnl_nlmsg_next(nlh, &left);
	}
	assert_int_equal(left, 0);
	return msgs;
}

static void
test_round_trip(void **state)
{
	static const struct {
		const char *text;
		bool interval;
		uint8_t family;
	} rows[] = {
		{ "198.18.0.5\n198.18.0.9\n198.19.1.1\n", false, 4 },
		{ "198.18.0.0/24\n198.18.2.5-198.18.2.9\n198.19.0.1\n", true, 4 },
		{ "255.255.255.0/24\n0.0.0.0/8\n", true, 4 },
		{ "0.0.0.0/0\n", true, 4 },
		{ "2001:2::/64\n2001:2:0:1::5-2001:2:0:1::9\n2001:2::ffff:1\n", true, 6 },
		{ "ffff::/16\n::/16\n", true, 6 },
		{ "2001:2::1\n2001:2::3\n", false, 6 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_list in = list_of(rows[i].text), out = { 0 };
		struct fd_setelem_acc acc = { .family = rows[i].family, .interval = rows[i].interval };
		struct fd_setelem_batch b = { 0 };
		char want[1024], got[1024];

		print_message("row %zu\n", i);
		assert_int_equal(fd_setelem_batch_begin(&b, 100), 0);
		assert_int_equal(fd_setelem_put(&b, NFT_MSG_NEWSETELEM, NFPROTO_INET, "flowcut", "s",
						rows[i].interval, in.r, in.n), 0);
		assert_int_equal(fd_setelem_batch_end(&b), 0);
		assert_int_equal(b.msgs, 1);
		assert_int_equal(b.begin_seq, 100);
		assert_int_equal(b.last_seq, 101);
		assert_int_equal(gather_batch(&b, &acc, NFT_MSG_NEWSETELEM), 1);
		assert_int_equal(fd_setelem_ranges(&acc, true, &out), 0);
		fc_list_canon(&out);
		list_text(&in, want, sizeof(want));
		list_text(&out, got, sizeof(got));
		assert_string_equal(got, want);
		/* one transaction's notifications say the same */
		fc_list_free(&out);
		assert_int_equal(gather_batch(&b, &acc, NFT_MSG_NEWSETELEM), 1);
		assert_int_equal(fd_setelem_ranges(&acc, false, &out), 0);
		fc_list_canon(&out);
		list_text(&out, got, sizeof(got));
		assert_string_equal(got, want);
		fc_list_free(&out);
		fc_list_free(&in);
		fd_setelem_acc_free(&acc);
		fd_setelem_batch_free(&b);
	}
}

/* Many ranges: several messages, each acknowledged only at the end. */
static void
test_many_split(void **state)
{
	struct fc_list in = { 0 }, out = { 0 };
	struct fd_setelem_acc acc = { .family = 4, .interval = true };
	struct fd_setelem_batch b = { 0 };
	unsigned int acked = 0;
	const struct nlmsghdr *nlh;
	int left;

	(void)state;
	for (uint32_t a = 0; a < 5000; a++) {
		struct fc_range r = { .family = 4 };
		uint32_t lo = htonl(0xc6120000u + a * 4), hi = htonl(0xc6120000u + a * 4 + 1);

		memcpy(r.lo, &lo, 4);
		memcpy(r.hi, &hi, 4);
		assert_int_equal(fc_list_add(&in, &r), 0);
	}
	assert_int_equal(fd_setelem_batch_begin(&b, 1), 0);
	assert_int_equal(fd_setelem_put(&b, NFT_MSG_DELSETELEM, NFPROTO_INET, "flowcut", "s", true,
					NULL, 0), 0);	/* a flush first */
	assert_int_equal(fd_setelem_put(&b, NFT_MSG_NEWSETELEM, NFPROTO_INET, "flowcut", "s", true,
					in.r, in.n), 0);
	assert_int_equal(fd_setelem_batch_end(&b), 0);
	assert_true(b.msgs >= 1 + 10000 / 1024);
	for (nlh = (const struct nlmsghdr *)b.buf, left = (int)b.len; mnl_nlmsg_ok(nlh, left);
	     nlh = mnl_nlmsg_next(nlh, &left)) {
		acked += (nlh->nlmsg_flags & NLM_F_ACK) != 0;
		if (nlh->nlmsg_flags & NLM_F_ACK)
			assert_int_equal(nlh->nlmsg_seq, b.last_seq);
		if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWSETELEM)
			assert_int_equal(fd_setelem_gather(nlh, &acc), 0);
	}
	assert_int_equal(acked, 1);
	assert_int_equal(fd_setelem_ranges(&acc, false, &out), 0);
	fc_list_canon(&out);
	assert_int_equal(out.n, 5000);
	assert_memory_equal(out.r, in.r, 5000 * sizeof(in.r[0]));
	/* a range in a set without intervals is refused, the batch left as it was */
	{
		size_t len = b.len;

		assert_int_equal(fd_setelem_put(&b, NFT_MSG_NEWSETELEM, NFPROTO_INET, "flowcut", "s",
						false, in.r, in.n), -EINVAL);
		assert_int_equal(b.len, len);
	}
	fc_list_free(&in);
	fc_list_free(&out);
	fd_setelem_acc_free(&acc);
	fd_setelem_batch_free(&b);
}

/* One element in a message, as the kernel notifies: key, flags, user data. */
struct el {
	const char *addr;
	uint32_t flags;		/* NFTA_SET_ELEM_FLAGS; ~0: none */
	bool open;		/* nft's open mark */
	const char *key_end;	/* NFTA_SET_ELEM_KEY_END, or NULL */
	int key_len;		/* 0: the address's own */
	long long expiration;	/* NFTA_SET_ELEM_EXPIRATION, ms; 0: none; -1: 4 bytes, not a u64 */
};

static void
put_key(struct nlmsghdr *nlh, uint16_t type, const char *addr, int key_len)
{
	uint8_t a[16] = { 0 };
	int n = strchr(addr, ':') ? 16 : 4;
	struct nlattr *k = mnl_attr_nest_start(nlh, type);

	assert_int_equal(inet_pton(n == 4 ? AF_INET : AF_INET6, addr, a), 1);
	mnl_attr_put(nlh, NFTA_DATA_VALUE, key_len ? (size_t)key_len : (size_t)n, a);
	mnl_attr_nest_end(nlh, k);
}

static struct nlmsghdr *
notification(char *buf, const struct el *e)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfg;
	struct nlattr *list, *le;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_INET;
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "filter");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "blocked4");
	list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	le = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
	if (e->addr)
		put_key(nlh, NFTA_SET_ELEM_KEY, e->addr, e->key_len);
	if (e->key_end)
		put_key(nlh, NFTA_SET_ELEM_KEY_END, e->key_end, 0);
	if (e->flags != ~0u)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_FLAGS, htonl(e->flags));
	if (e->open)
		mnl_attr_put(nlh, NFTA_SET_ELEM_USERDATA, 6, "\x01\x04\x01\x00\x00\x00");
	if (e->expiration > 0)	/* as the kernel puts it: be64, after its timeout */
		mnl_attr_put_u64(nlh, NFTA_SET_ELEM_EXPIRATION, htobe64((uint64_t)e->expiration));
	else if (e->expiration < 0)
		mnl_attr_put_u32(nlh, NFTA_SET_ELEM_EXPIRATION, 0);
	mnl_attr_nest_end(nlh, le);
	mnl_attr_nest_end(nlh, list);
	return nlh;
}

#define END NFT_SET_ELEM_INTERVAL_END
#define NOFLAGS (~0u)

/*
 * The kernel's notifications of one transaction, element by element, in
 * the order it sent them (nft 1.0.6 on Linux 6.18, seen with a netlink
 * listener), and what they add.
 */
static void
test_notifications(void **state)
{
	static const struct {
		const char *what;
		bool interval, whole;
		struct el e[6];
		const char *want;	/* ranges, one space after each */
		long bad;
		long long expires;	/* the soonest expiration gathered, ms; 0: none */
	} rows[] = {
		{ "an address into an empty interval set (nft's end at 0 first)", true, false,
		  { { "0.0.0.0", END, false, NULL, 0, 0 }, { "198.18.1.2", NOFLAGS, false, NULL, 0, 0 },
		    { "198.18.1.3", END, false, NULL, 0, 0 } }, "198.18.1.2 ", 0, 0 },
		{ "a prefix and a range, their ends after", true, false,
		  { { "10.0.0.5", NOFLAGS, false, NULL, 0, 0 }, { "10.0.0.10", END, false, NULL, 0, 0 },
		    { "198.19.0.0", NOFLAGS, false, NULL, 0, 0 }, { "198.19.1.0", END, false, NULL, 0, 0 } },
		  "10.0.0.5-10.0.0.9 198.19.0.0/24 ", 0, 0 },
		{ "ends before their starts", true, false,
		  { { "198.19.1.0", END, false, NULL, 0, 0 }, { "10.0.0.10", END, false, NULL, 0, 0 },
		    { "198.19.0.0", 0, false, NULL, 0, 0 }, { "10.0.0.5", 0, false, NULL, 0, 0 } },
		  "10.0.0.5-10.0.0.9 198.19.0.0/24 ", 0, 0 },
		{ "adjacent ranges: an end and a start at one address", true, false,
		  { { "10.0.0.0", 0, false, NULL, 0, 0 }, { "10.0.0.4", 0, false, NULL, 0, 0 },
		    { "10.0.0.4", END, false, NULL, 0, 0 }, { "10.0.0.8", END, false, NULL, 0, 0 } },
		  "10.0.0.0/29 ", 0, 0 },
		{ "a range to the last address: open, no end", true, false,
		  { { "255.255.255.0", NOFLAGS, true, NULL, 0, 0 } }, "255.255.255.0/24 ", 0, 0 },
		{ "a start with no end and no open mark cannot be placed", true, false,
		  { { "198.18.1.2", NOFLAGS, false, NULL, 0, 0 } }, "", 1, 0 },
		{ "... in a whole set it runs to the last address", true, true,
		  { { "255.255.0.0", NOFLAGS, false, NULL, 0, 0 } }, "255.255.0.0/16 ", 0, 0 },
		{ "an end whose start is not there cannot be placed", true, false,
		  { { "198.18.1.9", END, false, NULL, 0, 0 } }, "", 1, 0 },
		{ "two starts, then one end: the first cannot be placed", true, false,
		  { { "10.0.0.1", 0, false, NULL, 0, 0 }, { "10.0.0.3", 0, false, NULL, 0, 0 },
		    { "10.0.0.5", END, false, NULL, 0, 0 } }, "10.0.0.3-10.0.0.4 ", 1, 0 },
		{ "a range with its last address (pipapo's KEY_END)", true, false,
		  { { "198.18.0.10", NOFLAGS, false, "198.18.0.20", 0, 0 } }, "198.18.0.10-198.18.0.20 ", 0, 0 },
		{ "KEY_END below the key", true, false,
		  { { "198.18.0.10", NOFLAGS, false, "198.18.0.2", 0, 0 } }, "", 1, 0 },
		{ "a plain set: each element an address", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 0, 0 }, { "198.18.0.9", 0, false, NULL, 0, 0 } },
		  "198.18.0.2 198.18.0.9 ", 0, 0 },
		{ "an end in a plain set", false, false,
		  { { "198.18.0.2", END, false, NULL, 0, 0 } }, "", 1, 0 },
		{ "a catch-all element", false, false,
		  { { "198.18.0.2", NFT_SET_ELEM_CATCHALL, false, NULL, 0, 0 } }, "", 1, 0 },
		{ "a key of 16 bytes in an IPv4 set", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 16, 0 } }, "", 1, 0 },
		{ "a key of 2 bytes", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 2, 0 } }, "", 1, 0 },
		{ "no key", false, false, { { NULL, NOFLAGS, false, NULL, 0, 0 } }, "", 1, 0 },
		/* sets with timeouts: the soonest expiration of all, for the set (none kept per element) */
		{ "a plain set with timeouts (a bouncer's bans): the soonest kept", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 0, 14400000 },
		    { "198.18.0.9", NOFLAGS, false, NULL, 0, 1500 },
		    { "198.18.0.5", NOFLAGS, false, NULL, 0, 0 } },
		  "198.18.0.2 198.18.0.5 198.18.0.9 ", 0, 1500 },
		{ "an interval set with timeouts: a start and its end, each with one", true, false,
		  { { "0.0.0.0", END, false, NULL, 0, 0 }, { "198.18.1.2", NOFLAGS, false, NULL, 0, 2000 },
		    { "198.18.1.3", END, false, NULL, 0, 1999 } }, "198.18.1.2 ", 0, 1999 },
		{ "an expiration of 4 bytes: the element not read", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 0, -1 },
		    { "198.18.0.3", NOFLAGS, false, NULL, 0, 3000 } }, "198.18.0.3 ", 1, 3000 },
		{ "... the only one: no expiry", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 0, -1 } }, "", 1, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_setelem_acc acc = { .family = 4, .interval = rows[i].interval };
		struct fc_list out = { 0 };
		char buf[1024], got[1024];

		print_message("row %zu: %s\n", i, rows[i].what);
		for (size_t j = 0; j < 6 && (rows[i].e[j].addr || rows[i].e[j].flags); j++) {
			const struct nlmsghdr *nlh = notification(buf, &rows[i].e[j]);
			uint8_t nfproto;
			const char *table, *set;

			assert_int_equal(fd_setelem_head(nlh, &nfproto, &table, &set), 0);
			assert_string_equal(set, "blocked4");
			assert_int_equal(fd_setelem_gather(nlh, &acc), 0);
		}
		assert_int_equal(acc.expiring, rows[i].expires != 0);
		if (rows[i].expires)
			assert_int_equal(acc.expires_ms, rows[i].expires);
		assert_int_equal(fd_setelem_ranges(&acc, rows[i].whole, &out), rows[i].bad);
		fc_list_canon(&out);
		list_text(&out, got, sizeof(got));
		assert_string_equal(got, rows[i].want);
		assert_int_equal(acc.n, 0);
		assert_false(acc.expiring);	/* emptied with the rest */
		fc_list_free(&out);
		fd_setelem_acc_free(&acc);
	}
}

/*
 * Each range with its own expiry (fd_setelem_ranges_timed, flowcutd's cut
 * sets): an interval's from its start (its end's when the start has
 * none), a plain set's element its own, none as -1; the pairing as
 * fd_setelem_ranges'.
 */
static void
test_timed(void **state)
{
	static const struct {
		const char *what;
		bool interval, whole;
		struct el e[6];
		const char *want;	/* "range:expiry " each, in address order */
		long bad;
	} rows[] = {
		{ "an interval set: each range its start's", true, false,
		  { { "0.0.0.0", END, false, NULL, 0, 0 }, { "198.18.1.2", NOFLAGS, false, NULL, 0, 2000 },
		    { "198.18.1.3", END, false, NULL, 0, 1999 }, { "198.19.0.0", 0, false, NULL, 0, 0 },
		    { "198.19.1.0", END, false, NULL, 0, 0 } },
		  "198.18.1.2:2000 198.19.0.0/24:-1 ", 0 },
		{ "a start without one, its end with one: the end's", true, false,
		  { { "10.0.0.5", NOFLAGS, false, NULL, 0, 0 }, { "10.0.0.10", END, false, NULL, 0, 700 } },
		  "10.0.0.5-10.0.0.9:700 ", 0 },
		{ "a plain set: each element its own", false, false,
		  { { "198.18.0.9", NOFLAGS, false, NULL, 0, 1500 },
		    { "198.18.0.2", NOFLAGS, false, NULL, 0, 14400000 },
		    { "198.18.0.5", NOFLAGS, false, NULL, 0, 0 } },
		  "198.18.0.2:14400000 198.18.0.5:-1 198.18.0.9:1500 ", 0 },
		{ "KEY_END and open ranges", true, false,
		  { { "198.18.0.10", NOFLAGS, false, "198.18.0.20", 0, 30000 },
		    { "255.255.255.0", NOFLAGS, true, NULL, 0, 40000 } },
		  "198.18.0.10-198.18.0.20:30000 255.255.255.0/24:40000 ", 0 },
		{ "a whole set: a start with no end runs to the last address, its expiry kept", true,
		  true, { { "255.255.0.0", NOFLAGS, false, NULL, 0, 5000 } }, "255.255.0.0/16:5000 ", 0 },
		{ "an expiration of 4 bytes: the element not read", false, false,
		  { { "198.18.0.2", NOFLAGS, false, NULL, 0, -1 },
		    { "198.18.0.3", NOFLAGS, false, NULL, 0, 3000 } }, "198.18.0.3:3000 ", 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_setelem_acc acc = { .family = 4, .interval = rows[i].interval };
		struct fd_setelem_timed_list out = { 0 };
		char buf[1024], got[1024] = "";
		size_t used = 0;

		print_message("row %zu: %s\n", i, rows[i].what);
		for (size_t j = 0; j < 6 && (rows[i].e[j].addr || rows[i].e[j].flags); j++)
			assert_int_equal(fd_setelem_gather(notification(buf, &rows[i].e[j]), &acc), 0);
		assert_int_equal(fd_setelem_ranges_timed(&acc, rows[i].whole, &out), rows[i].bad);
		for (size_t k = 0; k < out.n; k++) {
			char r[128];

			used += (size_t)snprintf(got + used, sizeof(got) - used, "%s:%lld ",
						 fc_range_format(&out.t[k].r, r, sizeof(r)),
						 (long long)out.t[k].expires_ms);
		}
		assert_string_equal(got, rows[i].want);
		assert_int_equal(acc.n, 0);
		fd_setelem_timed_free(&out);
		fd_setelem_acc_free(&acc);
	}
}

/* Not an element message: refused whole. */
static void
test_not_elements(void **state)
{
	char buf[256];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fd_setelem_acc acc = { .family = 4 };
	uint8_t nfproto;
	const char *table, *set;

	(void)state;
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSET;
	mnl_nlmsg_put_extra_header(nlh, sizeof(struct nfgenmsg));
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "filter");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "blocked4");
	assert_int_equal(fd_setelem_head(nlh, &nfproto, &table, &set), -EINVAL);
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM;
	assert_int_equal(fd_setelem_head(nlh, &nfproto, &table, &set), 0);
	assert_int_equal(fd_setelem_gather(nlh, &acc), -EINVAL);	/* no element list */
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | NFT_MSG_NEWSETELEM;
	assert_int_equal(fd_setelem_head(nlh, &nfproto, &table, &set), -EINVAL);
	nlh->nlmsg_len = sizeof(*nlh) + 2;	/* shorter than its nfgenmsg */
	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM;
	assert_int_equal(fd_setelem_head(nlh, &nfproto, &table, &set), -EINVAL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_many_split),
		cmocka_unit_test(test_notifications),
		cmocka_unit_test(test_timed),
		cmocka_unit_test(test_not_elements),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
