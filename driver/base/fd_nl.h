/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_nl: walking the netlink messages of one datagram, for every reader in
 * the driver (rtnetlink's in fd_route, conntrack's events in fd_ct).
 *
 * Written here, not mnl_cb_run(): libmnl's mnl_nlmsg_ok() compares
 * nlmsg_len as an int, so a length of 2^31 or more passes and
 * mnl_nlmsg_next() jumps out of the buffer (found by fuzz_rtnl; the input
 * is kept in tests/fuzz/regress/rtnl/).  Each message is checked whole,
 * to its aligned end, before its callback sees it.
 */
#ifndef FLOWCUT_FD_NL_H
#define FLOWCUT_FD_NL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/* One message: >= 0 to go on (added to the count), < 0 to stop with it. */
typedef int fd_nl_msg_fn(const struct nlmsghdr *nlh, void *arg);

/*
 * fd_nl_walk - calls fn for each message of buf[0..len): the sum of what
 * fn returned, fn's first negative return, or -EBADMSG at the first
 * message that does not lie whole in the buffer (those before it were
 * seen).
 */
static inline int
fd_nl_walk(const void *buf, size_t len, fd_nl_msg_fn *fn, void *arg)
{
	const struct nlmsghdr *nlh = buf;
	int left = len > INT32_MAX ? INT32_MAX : (int)len, n = 0;

	while (left > 0) {
		int rc;

		if ((size_t)left < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) ||
		    nlh->nlmsg_len > (uint32_t)left || MNL_ALIGN(nlh->nlmsg_len) > (uint32_t)left ||
		    !mnl_nlmsg_ok(nlh, left))
			return -EBADMSG;
		rc = fn(nlh, arg);
		if (rc < 0)
			return rc;
		n += rc;
		nlh = mnl_nlmsg_next(nlh, &left);
	}
	return n;
}

#endif
