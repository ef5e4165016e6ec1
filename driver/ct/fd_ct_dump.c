/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct_dump: the incremental dump, filtered by mark - its request built,
 * sent on a socket of its own, and read a few datagrams a turn.
 */
#include "fd_ct.h"
#include "fd_ct_priv.h"
#include "fd_ctparse.h"
#include "fd_nl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

/*
 * The incremental dump is built by nfct_nlmsg_build_filter on a libmnl
 * socket, not NFCT_Q_DUMP_FILTER: that query reads the whole dump inside
 * one nfct_query(), and the point is to read it a few datagrams a turn.
 */

/* ---- the incremental dump, filtered by mark ---- */

int
fd_ct_dump_msg(void *buf, uint32_t seq, uint32_t mark, uint32_t mask)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = AF_UNSPEC;
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	if (mask != 0) {
		struct nfct_filter_dump *f = nfct_filter_dump_create();
		int rc;

		if (f == NULL)
			return -ENOMEM;
		nfct_filter_dump_set_attr(f, NFCT_FILTER_DUMP_MARK,
					  &(struct nfct_filter_dump_mark){ .val = mark,
									   .mask = mask });
		rc = nfct_nlmsg_build_filter(nlh, f);
		nfct_filter_dump_destroy(f);
		if (rc < 0)
			return -ENOMEM;
	}
	return (int)nlh->nlmsg_len;
}

struct dump_ctx {
	fd_ct_state_fn *cb;
	void *arg;
	bool done;
};

/* One message of a dump's datagram: a state handed on (1), skipped (0), or an error. */
static int
dump_msg(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *d = data;
	struct nf_conntrack *ct;

	if (d->done)
		return 0;	/* nothing follows NLMSG_DONE */
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		return -EINTR;
	if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
		int err = 0;

		/* DONE: an int, the dump's own error (optional); ERROR: struct nlmsgerr */
		if (nlh->nlmsg_type == NLMSG_ERROR &&
		    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
			return -EBADMSG;
		if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
			memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
		if (nlh->nlmsg_type == NLMSG_DONE)
			d->done = true;
		else if (err == 0)
			return 0;	/* an ack: nothing to say */
		return err < 0 && err >= -4095 ? err : (err != 0 ? -EPROTO : 0);
	}
	if (nlh->nlmsg_type != ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW))
		return 0;
	ct = nfct_new();
	if (ct == NULL)
		return -ENOMEM;
	if (fd_ctparse_msg(nlh, ct) < 0) {
		fprintf(stderr, "flowcutd: a dumped conntrack state (%u bytes) did not parse; "
			"skipped\n", nlh->nlmsg_len);
		nfct_destroy(ct);
		return 0;
	}
	d->cb(d->arg, ct, 0);
	nfct_destroy(ct);
	return 1;
}

int
fd_ct_dump_parse(const void *buf, size_t len, fd_ct_state_fn *cb, void *arg, bool *done)
{
	struct dump_ctx d = { .cb = cb, .arg = arg };
	int rc = fd_nl_walk(buf, len, dump_msg, &d);

	*done = d.done;
	return rc;
}

static void
dump_end(struct fd_ct *c)
{
	if (c->dump != NULL)
		mnl_socket_close(c->dump);
	c->dump = NULL;
}

int
fd_ct_dump_start(struct fd_ct *c, uint32_t mark, uint32_t mask)
{
	int len;

	dump_end(c);	/* a dump still being read: its answers go with its socket */
	c->dump = mnl_socket_open(NETLINK_NETFILTER);
	if (c->dump == NULL || mnl_socket_bind(c->dump, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno ? errno : EIO;

		fprintf(stderr, "flowcutd: conntrack dump socket (mark %#x/%#x): %s\n", mark, mask,
			strerror(err));
		dump_end(c);
		return -err;
	}
	len = fd_ct_dump_msg(c->dump_buf, ++c->seq, mark, mask);
	if (len < 0 || mnl_socket_sendto(c->dump, c->dump_buf, (size_t)len) < 0) {
		int err = len < 0 ? -len : errno;

		fprintf(stderr, "flowcutd: conntrack dump request (mark %#x/%#x): %s\n", mark, mask,
			strerror(err));
		dump_end(c);
		return -err;
	}
	return 0;
}

int
fd_ct_dump_next(struct fd_ct *c, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg)
{
	int handed = 0;

	for (unsigned int n = 0; c->dump != NULL && (n < max_datagrams || handed == 0); n++) {
		ssize_t len = fd_ct_kernel_recv(c, mnl_socket_get_fd(c->dump), c->dump_buf,
					  FD_CT_DUMP_BUF, 0);
		bool done = false;
		int rc = len < 0 ? (int)len : fd_ct_dump_parse(c->dump_buf, (size_t)len, cb, arg,
							      &done);

		if (rc < 0) {
			fprintf(stderr, "flowcutd: conntrack dump: %s; the dump is over, not whole\n",
				strerror(-rc));
			dump_end(c);
			return rc;
		}
		handed += rc;
		if (done)
			dump_end(c);
	}
	return handed;
}
