/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_nft: see fd_nft.h.  The table through libnftables, events through libmnl. */
#include "fd_nft.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

struct fd_nft {
	struct nft_ctx *nft;
	struct mnl_socket *nl;
	uint32_t mark_bit;
	bool installed;		/* the table was put in at least once */
};

static int
table_install(struct fd_nft *n)
{
	char cmd[512];
	int rc;

	snprintf(cmd, sizeof(cmd),
		 "add table inet flowcut\n"
		 "add chain inet flowcut seen { type filter hook forward priority 100; policy accept; }\n"
		 "flush chain inet flowcut seen\n"
		 "add rule inet flowcut seen ct mark set ct mark or 0x%08x\n", n->mark_bit);
	rc = nft_run_cmd_from_buffer(n->nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutd: nftables: installing table inet flowcut failed: %s\n",
			nft_ctx_get_error_buffer(n->nft));
	if (rc == 0)
		n->installed = true;
	return rc == 0 ? 0 : -EIO;
}

struct fd_nft *
fd_nft_open(uint32_t mark_bit)
{
	struct fd_nft *n = calloc(1, sizeof(*n));
	int group = NFNLGRP_NFTABLES;

	if (n == NULL)
		return NULL;
	n->mark_bit = mark_bit;
	n->nft = nft_ctx_new(NFT_CTX_DEFAULT);
	if (n->nft == NULL)
		goto fail;
	nft_ctx_buffer_output(n->nft);
	nft_ctx_buffer_error(n->nft);
	n->nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (n->nl == NULL || mnl_socket_bind(n->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
	    mnl_socket_setsockopt(n->nl, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		goto fail;
	/* lost events must be known, not hidden: no NETLINK_NO_ENOBUFS */
	if (table_install(n) != 0) {
		errno = EIO;
		goto fail;
	}
	return n;
fail: {
	int err = errno;

	fd_nft_close(n);
	errno = err;
	return NULL;
}
}

void
fd_nft_close(struct fd_nft *n)
{
	if (n == NULL)
		return;
	if (n->installed &&
	    nft_run_cmd_from_buffer(n->nft, "delete table inet flowcut\n") != 0)
		fprintf(stderr, "flowcutd: nftables: deleting table inet flowcut: %s\n",
			nft_ctx_get_error_buffer(n->nft));
	if (n->nft)
		nft_ctx_free(n->nft);
	if (n->nl)
		mnl_socket_close(n->nl);
	free(n);
}

int
fd_nft_fd(const struct fd_nft *n)
{
	return mnl_socket_get_fd(n->nl);
}

struct gen {
	int others;	/* a generation committed by another process */
};

static int
gen_attr(const struct nlattr *a, void *data)
{
	struct gen *g = data;

	if (mnl_attr_get_type(a) == NFTA_GEN_PROC_PID &&
	    mnl_attr_validate(a, MNL_TYPE_U32) == 0 &&
	    ntohl(mnl_attr_get_u32(a)) != (uint32_t)getpid())
		g->others = 1;
	return MNL_CB_OK;
}

static int
gen_cb(const struct nlmsghdr *nlh, void *data)
{
	if (NFNL_MSG_TYPE(nlh->nlmsg_type) == NFT_MSG_NEWGEN &&
	    NFNL_SUBSYS_ID(nlh->nlmsg_type) == NFNL_SUBSYS_NFTABLES)
		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), gen_attr, data);
	return MNL_CB_OK;
}

int
fd_nft_events(struct fd_nft *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct gen g = { 0 };
	ssize_t len;
	int lost = 0;

	for (unsigned int k = 0; k < FD_NFT_EVENTS_PER_TURN; k++) {
		len = mnl_socket_recvfrom(n->nl, buf, sizeof(buf));
		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				lost = 1;
				continue;
			}
			return -errno;
		}
		/* gen_cb never fails; a malformed message ends this datagram only */
		(void)mnl_cb_run(buf, (size_t)len, 0, 0, gen_cb, &g);
	}
	if (g.others || lost) {
		if (table_install(n) != 0)
			return -EIO;	/* said why; a change all the same */
		return lost ? -ENOBUFS : 1;
	}
	return 0;
}
