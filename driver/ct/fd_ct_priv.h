/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct_priv: what driver/ct's pieces of fd_ct share (fd_ct.h stays the
 * contract): the handle, its queues of posted requests, a datagram read from
 * the kernel only.  Calls go one way, down: fd_ct_io.c -> fd_ct.c ->
 * fd_ct_batch.c -> fd_ct_query.c; fd_ct_io.c -> fd_ct_dump.c, fd_ct_query.c.
 */
#ifndef FLOWCUT_FD_CT_PRIV_H
#define FLOWCUT_FD_CT_PRIV_H

/*
 * Libraries: libnetfilter_conntrack (the event and query sockets, the
 * whole DUMP, nfct_nlmsg_build/_build_filter for the messages built here,
 * and its objects, which fd_ctparse fills with the states read), libmnl
 * (the event datagrams, one at a time; the posted requests and the
 * synchronous calls over them; the incremental dump).
 */
#include "fd_ct.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

/*
 * A queue of posted requests (kills, updates, GETs): their messages side
 * by side in buf, each given FD_CT_MSG_MAX (a tuple, zone, protoinfo,
 * timeout and mark take under 300 bytes), numbered at the flush.
 */
struct ct_posted {
	fd_ct_done_fn *done;		/* kills, updates */
	fd_ct_state_fn *state_done;	/* GETs */
	void *arg;
	uint32_t off;			/* its message in buf */
};

struct ct_batch {
	struct ct_posted q[FD_CT_BATCH];
	unsigned int n;
	size_t len;
	bool noack;	/* errors only, the last message acked (updates, kills: see fd_ct.h) */
	char buf[FD_CT_BATCH * FD_CT_MSG_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
};

struct fd_ct {
	struct nfct_handle *ev;		/* events */
	struct nfct_handle *q;		/* queries */
	struct mnl_socket *nl;		/* posted requests */
	struct mnl_socket *dump;	/* the incremental dump being read, or NULL */
	char *dump_buf;			/* FD_CT_DUMP_BUF bytes */
	uint64_t not_kernel;		/* datagrams from another sender: dropped */
	uint64_t events_lost;		/* ENOBUFS, or an event not kept */
	unsigned int evbuf_ask;		/* the event socket's buffer, asked */
	uint32_t q_portid, nl_portid;	/* events they cause carry these */
	uint32_t seq;
	uint32_t timeout[256];		/* conntrack's timeout per L4 protocol, s */
	struct ct_batch kills, updates, gets;
	uint64_t replays;	/* update batches whose errors were lost, sent again (replay()) */
	/* a dump being gathered (fd_ct_dump) */
	bool dump_failed;
	struct nf_conntrack **dumped;
	size_t ndumped, capdumped;
};

/*
 * One datagram from the kernel: its length, or -errno (-EAGAIN: none yet,
 * with MSG_DONTWAIT).  Only the kernel's: libnetfilter_conntrack exits the
 * process on a message that breaks ctnetlink's ABI, trusting its sender;
 * a datagram from any other port is dropped and said (the first ten).
 */
static inline bool
fd_ct_from_kernel(struct fd_ct *c, const struct sockaddr_nl *from, socklen_t flen)
{
	if (flen >= sizeof(*from) && from->nl_pid == 0)
		return true;
	if (c->not_kernel++ < 10)	/* said, not flooded */
		fprintf(stderr, "flowcutd: a conntrack datagram from netlink port %u, "
			"not the kernel: dropped\n", from->nl_pid);
	return false;
}

static inline ssize_t
fd_ct_kernel_recv(struct fd_ct *c, int fd, void *buf, size_t cap, int flags)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(fd, buf, cap, flags, (struct sockaddr *)&from, &flen);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (fd_ct_from_kernel(c, &from, flen))
			return len;
	}
}

/* ---- fd_ct_query.c: the request messages built for fd_ct_batch.c ---- */

struct nlmsghdr *fd_ct_tuple_request(char *buf, uint8_t msg, uint32_t seq,
				     const struct nf_conntrack *tuple);

#endif
