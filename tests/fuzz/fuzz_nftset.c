/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: a set's elements, as flowcutd reads them from netlink: the
 * input's first byte the set's kind (bit 0: IPv6, bit 1: interval, bit 2:
 * a whole set, not one transaction) and the rest a datagram of NEWSETELEM
 * messages (driver/nft/fd_setelem: the notifications and dumps of the
 * watched sets and of flowcutd's own cut sets, each range also read with
 * its own expiry).
 *
 * Checks: no crash; every range read has the set's family and its first
 * address at or below its last; read with their expiries, the same ranges;
 * and the ranges, written back as elements (fd_setelem_put) and read
 * again, are the same ranges.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>

#include "fc_list.h"
#include "fd_setelem.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_nftset: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static void
check_ranges(const struct fc_list *l, uint8_t family)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->r[i].family != family || memcmp(l->r[i].lo, l->r[i].hi, 16) > 0)
			die("a range read of another family or upside down");
}

/*
 * Every element message of a datagram gathered into acc.  The walk checks
 * every length against what is left, unsigned: libmnl 1.0.4's
 * mnl_nlmsg_ok takes a length above 2 GiB for a negative one (and
 * NLMSG_NEXT steps past the end on a last message of unaligned length),
 * which no socket delivers but a fuzzer does.
 */
static void
gather_all(const void *buf, size_t len, struct fd_setelem_acc *acc)
{
	const char *p = buf;
	size_t left = len;

	while (left >= sizeof(struct nlmsghdr)) {
		const struct nlmsghdr *nlh = (const struct nlmsghdr *)p;
		size_t step = NLMSG_ALIGN(nlh->nlmsg_len);

		if (nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > left)
			break;
		if (fd_setelem_gather(nlh, acc) == -ENOMEM)
			die("out of memory");
		if (step >= left)
			break;
		p += step;
		left -= step;
	}
}

/* The netlink reader; what it reads written back reads back the same. */
static void
netlink_one(const uint8_t *data, size_t size)
{
	struct fd_setelem_acc acc = { .family = data[0] & 1 ? 6 : 4, .interval = data[0] & 2 };
	struct fc_list l = { 0 }, back = { 0 }, plain = { 0 };
	struct fd_setelem_timed_list timed = { 0 };
	struct fd_setelem_batch b = { 0 };
	void *buf = malloc(size);	/* aligned, as a datagram is */
	size_t singles = 0;

	if (buf == NULL)
		die("out of memory");
	memcpy(buf, data + 1, size - 1);
	gather_all(buf, size - 1, &acc);
	if (fd_setelem_ranges_timed(&acc, data[0] & 4, &timed) < 0)
		die("out of memory");
	for (size_t i = 0; i < timed.n; i++)
		if (timed.t[i].expires_ms < -1 || fc_list_add(&l, &timed.t[i].r) != 0)
			die("an expiry below -1, or out of memory");
	gather_all(buf, size - 1, &acc);
	if (fd_setelem_ranges(&acc, data[0] & 4, &plain) < 0)
		die("out of memory");
	fc_list_canon(&l);
	fc_list_canon(&plain);
	if (plain.n != l.n || (l.n && memcmp(plain.r, l.r, l.n * sizeof(l.r[0])) != 0))
		die("the ranges read with their expiries are other ranges");
	check_ranges(&l, acc.family);
	for (size_t i = 0; i < l.n; i++)
		singles += memcmp(l.r[i].lo, l.r[i].hi, 16) == 0;
	/* written as an interval set (a plain one takes single addresses only) */
	acc.interval = acc.interval || singles != l.n;
	if (fd_setelem_batch_begin(&b, 1) != 0 ||
	    (l.n && fd_setelem_put(&b, NFT_MSG_NEWSETELEM, NFPROTO_INET, "t", "s", acc.interval,
				   l.r, l.n) != 0) ||
	    fd_setelem_batch_end(&b) != 0)
		die("the ranges read could not be written");
	gather_all(b.buf, b.len, &acc);
	if (fd_setelem_ranges(&acc, false, &back) != 0)
		die("what was written does not read back whole");
	fc_list_canon(&back);
	if (back.n != l.n || (l.n && memcmp(back.r, l.r, l.n * sizeof(l.r[0])) != 0))
		die("what was written reads back as other ranges");
	fc_list_free(&l);
	fc_list_free(&back);
	fc_list_free(&plain);
	fd_setelem_timed_free(&timed);
	fd_setelem_acc_free(&acc);
	fd_setelem_batch_free(&b);
	free(buf);
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	if (size > 0)
		netlink_one(data, size);
	return 0;
}

/* A netlink seed: its kind byte, then a batch of the ranges in `text`. */
static int
netlink_seed(const char *dir, size_t i, uint8_t kind, const char *text)
{
	struct fc_list l = { 0 };
	struct fd_setelem_batch b = { 0 };
	uint8_t *seed;
	int rc = -1;

	if (fc_list_parse(text, strlen(text), &l, NULL, NULL) != 0)
		return -1;
	fc_list_canon(&l);
	if (fd_setelem_batch_begin(&b, 7) == 0 &&
	    fd_setelem_put(&b, NFT_MSG_NEWSETELEM, NFPROTO_INET, "filter", "blocked", kind & 2,
			   l.r, l.n) == 0 &&
	    fd_setelem_batch_end(&b) == 0 && (seed = malloc(b.len + 1)) != NULL) {
		seed[0] = kind;
		memcpy(seed + 1, b.buf, b.len);
		rc = fuzz_seed_put(dir, i, seed, b.len + 1);
		free(seed);
	}
	fd_setelem_batch_free(&b);
	fc_list_free(&l);
	return rc;
}

/*
 * A netlink seed of a set with timeouts, as the kernel notifies one
 * (kind: plain IPv4, one transaction): an element with its timeout and
 * expiration, one whose expiration is 4 bytes (not read), one without.
 */
static int
expiry_seed(const char *dir, size_t i)
{
	static const uint8_t keys[3][4] = { { 198, 18, 0, 1 }, { 198, 18, 0, 2 }, { 198, 18, 0, 3 } };
	uint8_t seed[1 + 512] __attribute__((aligned(4))) = { 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(seed + 4);	/* aligned: the kind byte before */
	struct nfgenmsg *nfg;
	struct nlattr *list;

	nlh->nlmsg_type = (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWSETELEM;
	nfg = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfg));
	nfg->nfgen_family = NFPROTO_INET;
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "filter");
	mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "bans");
	list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (int k = 0; k < 3; k++) {
		struct nlattr *le = mnl_attr_nest_start(nlh, NFTA_LIST_ELEM);
		struct nlattr *key = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_KEY);

		mnl_attr_put(nlh, NFTA_DATA_VALUE, 4, keys[k]);
		mnl_attr_nest_end(nlh, key);
		if (k == 0) {
			mnl_attr_put_u64(nlh, NFTA_SET_ELEM_TIMEOUT, htobe64(14400000));
			mnl_attr_put_u64(nlh, NFTA_SET_ELEM_EXPIRATION, htobe64(14399996));
		} else if (k == 1) {
			mnl_attr_put_u32(nlh, NFTA_SET_ELEM_EXPIRATION, htonl(5000));
		}
		mnl_attr_nest_end(nlh, le);
	}
	mnl_attr_nest_end(nlh, list);
	seed[3] = 0;	/* the kind: IPv4, plain, one transaction */
	return fuzz_seed_put(dir, i, seed + 3, 1 + nlh->nlmsg_len);
}

int
fuzz_seeds(const char *dir)
{
	if (netlink_seed(dir, 0, 2, "198.18.0.0/24\n198.19.0.5-198.19.0.9\n255.255.255.0/24\n") != 0 ||
	    netlink_seed(dir, 1, 0, "198.18.0.1\n198.18.0.3\n") != 0 ||
	    netlink_seed(dir, 2, 3, "2001:2::/64\n2001:2:0:1::5\nffff::/16\n") != 0 ||
	    netlink_seed(dir, 3, 6, "0.0.0.0/0\n") != 0 || expiry_seed(dir, 4) != 0)
		return -1;
	return 0;
}
