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

#include <jansson.h>
#include <netinet/in.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

#include "fc_list.h"

struct fd_nft {
	struct nft_ctx *nft;
	struct mnl_socket *nl;
	uint32_t mark_bit;
	bool installed;		/* the table was put in at least once */
	/* the transaction being read, until its NEWGEN */
	bool other;		/* a message not about the cut sets' elements */
	bool cut_added;		/* NEWSETELEM on cut4 or cut6 */
	/* conn4/conn6 elements queued (fd_nft_block), as nft commands */
	char *block;
	size_t block_len, block_cap;
	unsigned int nblock;
};

static int
table_install(struct fd_nft *n)
{
	char cmd[1024];
	int rc;

	/* the cut sets' members dropped both ways, before the mark is set */
	snprintf(cmd, sizeof(cmd),
		 "add table inet flowcut\n"
		 "add set inet flowcut " FD_NFT_CUT4 " { type ipv4_addr; flags interval, timeout; "
		 "auto-merge; }\n"
		 "add set inet flowcut " FD_NFT_CUT6 " { type ipv6_addr; flags interval, timeout; "
		 "auto-merge; }\n"
		 "add set inet flowcut " FD_NFT_CONN4 " { type ipv4_addr . inet_proto . inet_service . "
		 "ipv4_addr . inet_service; flags timeout; }\n"
		 "add set inet flowcut " FD_NFT_CONN6 " { type ipv6_addr . inet_proto . inet_service . "
		 "ipv6_addr . inet_service; flags timeout; }\n"
		 "add chain inet flowcut seen { type filter hook forward priority 100; policy accept; }\n"
		 "flush chain inet flowcut seen\n"
		 "add rule inet flowcut seen ip saddr @" FD_NFT_CUT4 " drop\n"
		 "add rule inet flowcut seen ip daddr @" FD_NFT_CUT4 " drop\n"
		 "add rule inet flowcut seen ip6 saddr @" FD_NFT_CUT6 " drop\n"
		 "add rule inet flowcut seen ip6 daddr @" FD_NFT_CUT6 " drop\n"
		 "add rule inet flowcut seen ip saddr . meta l4proto . th sport . ip daddr . "
		 "th dport @" FD_NFT_CONN4 " drop\n"
		 "add rule inet flowcut seen ip6 saddr . meta l4proto . th sport . ip6 daddr . "
		 "th dport @" FD_NFT_CONN6 " drop\n"
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
	free(n->block);
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
	struct fd_nft *n;
	int result;	/* FD_NFT_* of the transactions ended */
	bool others;	/* this NEWGEN: committed by another process */
};

static int
gen_attr(const struct nlattr *a, void *data)
{
	struct gen *g = data;

	if (mnl_attr_get_type(a) == NFTA_GEN_PROC_PID &&
	    mnl_attr_validate(a, MNL_TYPE_U32) == 0 &&
	    ntohl(mnl_attr_get_u32(a)) != (uint32_t)getpid())
		g->others = true;
	return MNL_CB_OK;
}

struct elems {
	const char *table, *set;
};

static int
elems_attr(const struct nlattr *a, void *data)
{
	struct elems *e = data;
	uint16_t type = mnl_attr_get_type(a);

	if ((type == NFTA_SET_ELEM_LIST_TABLE || type == NFTA_SET_ELEM_LIST_SET) &&
	    mnl_attr_validate(a, MNL_TYPE_NUL_STRING) == 0)
		*(type == NFTA_SET_ELEM_LIST_TABLE ? &e->table : &e->set) = mnl_attr_get_str(a);
	return MNL_CB_OK;
}

/* An element message about the cut sets of table inet flowcut? */
static bool
cut_set_elems(const struct nlmsghdr *nlh)
{
	const struct nfgenmsg *nfg = mnl_nlmsg_get_payload(nlh);
	struct elems e = { NULL, NULL };

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*nfg) || nfg->nfgen_family != NFPROTO_INET ||
	    mnl_attr_parse(nlh, sizeof(*nfg), elems_attr, &e) < 0)
		return false;
	return e.table && e.set && strcmp(e.table, "flowcut") == 0 &&
	       (strcmp(e.set, FD_NFT_CUT4) == 0 || strcmp(e.set, FD_NFT_CUT6) == 0);
}

/*
 * A transaction's messages, then its NEWGEN.  One that only added or
 * removed elements of the cut sets is no ruleset change (the cut follows
 * it precisely; judging every connection again would take the cut ones
 * out of the fast path with the rest); any other message from another
 * process is.
 */
static int
gen_cb(const struct nlmsghdr *nlh, void *data)
{
	struct gen *g = data;
	uint8_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_NFTABLES)
		return MNL_CB_OK;
	if (type == NFT_MSG_NEWGEN) {
		g->others = false;
		mnl_attr_parse(nlh, sizeof(struct nfgenmsg), gen_attr, data);
		if (g->others && g->n->other)
			g->result |= FD_NFT_RULESET;
		if (g->others && g->n->cut_added)
			g->result |= FD_NFT_CUT;
		g->n->other = g->n->cut_added = false;
	} else if ((type == NFT_MSG_NEWSETELEM || type == NFT_MSG_DELSETELEM) &&
		   cut_set_elems(nlh)) {
		if (type == NFT_MSG_NEWSETELEM)
			g->n->cut_added = true;
	} else {
		g->n->other = true;
	}
	return MNL_CB_OK;
}

int
fd_nft_events(struct fd_nft *n)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct gen g = { .n = n };
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
	if (lost) {
		n->other = n->cut_added = false;	/* the transaction's start may be lost */
		return table_install(n) != 0 ? -EIO : -ENOBUFS;
	}
	if ((g.result & FD_NFT_RULESET) && table_install(n) != 0)
		return -EIO;	/* said why; a change all the same */
	return g.result;
}

/* One element of libnftables' JSON as a line of list text: "A", "A/L" or "A-B". */
static int
elem_line(const json_t *e, char *line, size_t len)
{
	const json_t *v;

	if (json_is_object(e) && (v = json_object_get(e, "elem")) != NULL)
		e = json_object_get(v, "val");		/* with a timeout */
	if (json_is_string(e))
		return snprintf(line, len, "%s\n", json_string_value(e)) < (int)len ? 0 : -EINVAL;
	if (json_is_object(e) && (v = json_object_get(e, "prefix")) != NULL &&
	    json_is_string(json_object_get(v, "addr")) && json_is_integer(json_object_get(v, "len")))
		return snprintf(line, len, "%s/%lld\n", json_string_value(json_object_get(v, "addr")),
				(long long)json_integer_value(json_object_get(v, "len"))) < (int)len
			       ? 0 : -EINVAL;
	if (json_is_object(e) && (v = json_object_get(e, "range")) != NULL &&
	    json_array_size(v) == 2 && json_is_string(json_array_get(v, 0)) &&
	    json_is_string(json_array_get(v, 1)))
		return snprintf(line, len, "%s-%s\n", json_string_value(json_array_get(v, 0)),
				json_string_value(json_array_get(v, 1))) < (int)len ? 0 : -EINVAL;
	return -EINVAL;
}

int
fd_nft_set_parse(const char *text, struct fc_list *out)
{
	const json_t *item, *elem;
	char line[256];
	json_error_t jerr;
	json_t *doc = json_loads(text, 0, &jerr);
	size_t i, j;
	int rc = 0, skipped = 0;

	if (doc == NULL)
		return -EINVAL;
	json_array_foreach(json_object_get(doc, "nftables"), i, item) {
		json_array_foreach(json_object_get(json_object_get(item, "set"), "elem"), j, elem) {
			long bad;

			if (elem_line(elem, line, sizeof(line)) != 0) {
				skipped++;
				continue;
			}
			bad = fc_list_parse(line, strlen(line), out, NULL, NULL);
			if (bad < 0) {
				rc = (int)bad;
				break;
			}
			skipped += bad > 0;
		}
	}
	json_decref(doc);
	return rc < 0 ? rc : skipped;
}

/* One cut set's elements appended to `out`: 0, -EIO (not read), -EINVAL, -ENOMEM. */
static int
cut_set_read(struct fd_nft *n, const char *set, struct fc_list *out)
{
	char cmd[128];
	int rc = 0;

	snprintf(cmd, sizeof(cmd), "list set inet flowcut %s\n", set);
	nft_ctx_output_set_flags(n->nft, nft_ctx_output_get_flags(n->nft) | NFT_CTX_OUTPUT_JSON);
	if (nft_run_cmd_from_buffer(n->nft, cmd) != 0) {
		fprintf(stderr, "flowcutd: nftables: %s", nft_ctx_get_error_buffer(n->nft));
		rc = -EIO;
	}
	nft_ctx_output_set_flags(n->nft, nft_ctx_output_get_flags(n->nft) & ~NFT_CTX_OUTPUT_JSON);
	if (rc != 0)
		return rc;
	rc = fd_nft_set_parse(nft_ctx_get_output_buffer(n->nft), out);
	if (rc == -EINVAL)
		fprintf(stderr, "flowcutd: nftables: set %s read back is not JSON\n", set);
	else if (rc > 0)
		fprintf(stderr, "flowcutd: nftables: set %s: %d elements not an address, prefix "
			"or range: skipped\n", set, rc);
	return rc < 0 ? rc : 0;
}

int
fd_nft_cut_read(struct fd_nft *n, struct fc_list *out)
{
	int rc = cut_set_read(n, FD_NFT_CUT4, out);

	if (rc == 0)
		rc = cut_set_read(n, FD_NFT_CUT6, out);
	fc_list_canon(out);
	return rc;
}

/* the elements of one transaction: its text stays small enough to parse at once */
#define FD_NFT_BLOCK_BATCH 512

/* One direction's element: "add element inet flowcut conn4 { A . 17 . P . B . Q timeout 120s }". */
static int
block_put(struct fd_nft *n, int family, uint8_t proto, const uint8_t *a, uint16_t ap,
	  const uint8_t *b, uint16_t bp)
{
	char as[INET6_ADDRSTRLEN], bs[INET6_ADDRSTRLEN], line[256];
	int af = family == 4 ? AF_INET : AF_INET6, len;

	if (inet_ntop(af, a, as, sizeof(as)) == NULL || inet_ntop(af, b, bs, sizeof(bs)) == NULL)
		return -EINVAL;
	len = snprintf(line, sizeof(line), "add element inet flowcut %s { %s . %u . %u . %s . %u "
		       "timeout %us }\n", family == 4 ? FD_NFT_CONN4 : FD_NFT_CONN6, as, proto, ap,
		       bs, bp, FD_NFT_CONN_TIMEOUT_S);
	if (len < 0 || (size_t)len >= sizeof(line))
		return -EINVAL;
	if (n->block_len + (size_t)len + 1 > n->block_cap) {
		size_t cap = n->block_cap ? n->block_cap * 2 : 16384;
		char *p = realloc(n->block, cap);

		if (p == NULL)
			return -ENOMEM;
		n->block = p;
		n->block_cap = cap;
	}
	memcpy(n->block + n->block_len, line, (size_t)len + 1);
	n->block_len += (size_t)len;
	return 0;
}

int
fd_nft_block(struct fd_nft *n, const struct fd_nft_conn *c)
{
	size_t len = n->block_len;
	int rc;

	if ((c->proto != IPPROTO_TCP && c->proto != IPPROTO_UDP) ||
	    (c->family != 4 && c->family != 6))
		return -EINVAL;
	if (n->nblock >= FD_NFT_BLOCK_BATCH)
		(void)fd_nft_block_flush(n);	/* said if it failed */
	rc = block_put(n, c->family, c->proto, c->client, c->cport, c->server, c->sport);
	if (rc == 0)
		rc = block_put(n, c->family, c->proto, c->server, c->sport, c->client, c->cport);
	if (rc != 0) {
		n->block_len = len;	/* both directions or neither */
		return rc;
	}
	n->nblock++;
	return 0;
}

int
fd_nft_block_flush(struct fd_nft *n)
{
	int rc = 0;

	if (n->block_len == 0)
		return 0;
	if (nft_run_cmd_from_buffer(n->nft, n->block) != 0) {
		fprintf(stderr, "flowcutd: nftables: %u connections cut on the host not put in "
			"%s/%s: %s", n->nblock, FD_NFT_CONN4, FD_NFT_CONN6,
			nft_ctx_get_error_buffer(n->nft));
		rc = -EIO;
	}
	n->block_len = 0;
	n->nblock = 0;
	return rc;
}
