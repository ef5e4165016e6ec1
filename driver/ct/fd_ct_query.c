/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct_query: the queries - tuples made, the whole dump read in one call,
 * and the request messages (a tuple's, an update's) built for fd_ct_batch.c.
 */
#include "fd_ct.h"
#include "fd_ct_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <flowcut/fc_cmd.h>

/*
 * The per-direction TCP tracking flags of <linux/netfilter/nf_conntrack_tcp.h>
 * (uapi), which cannot be included beside libnetfilter_conntrack_tcp.h:
 * both declare enum tcp_conntrack.
 */
#define CT_TCP_FLAG_BE_LIBERAL 0x08
#define CT_TCP_FLAG_MAXACK_SET 0x20

/* ---- queries ---- */

struct nf_conntrack *
fd_ct_tuple(const struct nf_conntrack *ct)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return NULL;
	nfct_copy(t, ct, NFCT_CP_ORIG);
	if (nfct_attr_is_set(ct, ATTR_ZONE))
		nfct_set_attr_u16(t, ATTR_ZONE, nfct_get_attr_u16(ct, ATTR_ZONE));
	return t;
}

struct nf_conntrack *
fd_ct_tuple_of_key(const struct fc_key *k)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return NULL;
	if (k->family == 4) {
		nfct_set_attr_u8(t, ATTR_ORIG_L3PROTO, AF_INET);
		nfct_set_attr(t, ATTR_ORIG_IPV4_SRC, k->src);
		nfct_set_attr(t, ATTR_ORIG_IPV4_DST, k->dst);
	} else {
		nfct_set_attr_u8(t, ATTR_ORIG_L3PROTO, AF_INET6);
		nfct_set_attr(t, ATTR_ORIG_IPV6_SRC, k->src);
		nfct_set_attr(t, ATTR_ORIG_IPV6_DST, k->dst);
	}
	nfct_set_attr_u8(t, ATTR_ORIG_L4PROTO, k->proto);
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		/* the key's sport is the identifier, its dport the type (host order) */
		nfct_set_attr_u16(t, ATTR_ICMP_ID, k->sport);
		nfct_set_attr_u8(t, ATTR_ICMP_TYPE, (uint8_t)k->dport);
		nfct_set_attr_u8(t, ATTR_ICMP_CODE, 0);
	} else {
		nfct_set_attr_u16(t, ATTR_ORIG_PORT_SRC, k->sport);
		nfct_set_attr_u16(t, ATTR_ORIG_PORT_DST, k->dport);
	}
	nfct_set_attr_u16(t, ATTR_ZONE, 0);
	return t;
}

static int
dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct fd_ct *c = data;

	(void)type;
	if (c->ndumped == c->capdumped) {
		size_t cap = c->capdumped ? c->capdumped * 2 : 256;
		struct nf_conntrack **p = realloc(c->dumped, cap * sizeof(*p));

		if (p == NULL) {
			c->dump_failed = true;
			return NFCT_CB_CONTINUE;
		}
		c->dumped = p;
		c->capdumped = cap;
	}
	c->dumped[c->ndumped] = nfct_clone(ct);
	if (c->dumped[c->ndumped] != NULL)
		c->ndumped++;
	else
		c->dump_failed = true;
	return NFCT_CB_CONTINUE;
}

int
fd_ct_dump(struct fd_ct *c, struct nf_conntrack ***out, size_t *n)
{
	int family = AF_UNSPEC, rc = -1;

	c->dumped = NULL;
	c->ndumped = c->capdumped = 0;
	c->dump_failed = false;
	if (nfct_callback_register(c->q, NFCT_T_ALL, dump_cb, c) == 0) {
		rc = nfct_query(c->q, NFCT_Q_DUMP, &family);
		nfct_callback_unregister(c->q);
	}
	*out = c->dumped;
	*n = c->ndumped;
	c->dumped = NULL;
	c->ndumped = c->capdumped = 0;
	return rc != 0 || c->dump_failed ? -EIO : 0;
}

void
fd_ct_dump_free(struct nf_conntrack **all, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nfct_destroy(all[i]);
	free(all);
}

/*
 * One ctnetlink request at buf about the state with `tuple`'s original
 * tuple (and zone), asking for an ack: | nlmsghdr | nfgenmsg | CTA_TUPLE_ORIG
 * {...} | [CTA_ZONE] | and what `t` carries besides, built with
 * nfct_nlmsg_build().  The message, or NULL (a tuple it cannot build).
 */
static struct nlmsghdr *
ct_request(char *buf, uint8_t msg, uint32_t seq, const struct nf_conntrack *t)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfh;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = nfct_get_attr_u8(t, ATTR_ORIG_L3PROTO);
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	if (nfct_nlmsg_build(nlh, t) < 0 || nlh->nlmsg_len > FD_CT_MSG_MAX)
		return NULL;
	return nlh;
}

/* ct_request() of only `tuple`'s original tuple and zone. */
struct nlmsghdr *
fd_ct_tuple_request(char *buf, uint8_t msg, uint32_t seq, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	struct nlmsghdr *nlh;

	if (t == NULL)
		return NULL;
	nlh = ct_request(buf, msg, seq, t);
	nfct_destroy(t);
	return nlh;
}

int
fd_ct_update_msg(void *buf, uint32_t seq, const struct nf_conntrack *tuple,
		 const struct fd_ct_update *u)
{
	const uint8_t liberal = CT_TCP_FLAG_BE_LIBERAL,
		      mask = CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET;
	struct nf_conntrack *t;
	struct nlmsghdr *nlh;

	if ((u->what & (FD_CT_UP_LOOSEN | FD_CT_UP_TIMEOUT | FD_CT_UP_MARK)) == 0 ||
	    ((u->what & FD_CT_UP_LOOSEN) &&
	     nfct_get_attr_u8(tuple, ATTR_ORIG_L4PROTO) != IPPROTO_TCP))
		return -EINVAL;
	t = fd_ct_tuple(tuple);
	if (t == NULL)
		return -EINVAL;
	if (u->what & FD_CT_UP_LOOSEN) {
		nfct_set_attr_u8(t, ATTR_TCP_FLAGS_ORIG, liberal);
		nfct_set_attr_u8(t, ATTR_TCP_MASK_ORIG, mask);
		nfct_set_attr_u8(t, ATTR_TCP_FLAGS_REPL, liberal);
		nfct_set_attr_u8(t, ATTR_TCP_MASK_REPL, mask);
	}
	if (u->what & FD_CT_UP_TIMEOUT)
		nfct_set_attr_u32(t, ATTR_TIMEOUT, u->timeout);
	nlh = ct_request(buf, IPCTNL_MSG_CT_NEW, seq, t);
	nfct_destroy(t);
	if (nlh == NULL)
		return -EINVAL;
	nlh->nlmsg_flags &= (uint16_t)~NLM_F_ACK;	/* a success sends nothing back */
	if (u->what & FD_CT_UP_MARK) {
		mnl_attr_put_u32(nlh, CTA_MARK, htonl(u->mark));
		mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(u->mask));
	}
	return (int)nlh->nlmsg_len;
}
