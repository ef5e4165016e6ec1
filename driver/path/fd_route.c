/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_route: see fd_route.h.  Requests, replies and the messages of the
 * groups are libmnl's; only the choice of what to read from them is ours.
 */
#include "fd_route.h"
#include "fd_nl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>

struct fd_route {
	struct mnl_socket *nl;
	unsigned int portid;
	unsigned int seq;
};

struct fd_route *
fd_route_open(void)
{
	struct fd_route *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->nl = mnl_socket_open(NETLINK_ROUTE);
	if (r->nl == NULL || mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno;

		if (r->nl)
			mnl_socket_close(r->nl);
		free(r);
		errno = err;
		return NULL;
	}
	r->portid = mnl_socket_get_portid(r->nl);
	{	/* the kernel answers at once; never wait for it for long */
		struct timeval tv = { .tv_sec = 1 };

		setsockopt(mnl_socket_get_fd(r->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	r->seq = (unsigned int)time(NULL);
	return r;
}

static int
io_get(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	return fd_route_get(ctx, family, dst, out);
}

static int
io_path(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	return fd_route_path(ctx, family, dst, out);
}

static int
io_link_mtu(void *ctx, unsigned int ifindex, uint32_t *mtu)
{
	return fd_route_link_mtu(ctx, ifindex, mtu);
}

static int
io_neigh_get(void *ctx, unsigned int ifindex, int family, const uint8_t *addr, uint8_t mac[6],
	     bool *resolved)
{
	return fd_route_neigh_get(ctx, ifindex, family, addr, mac, resolved);
}

static int
io_neigh_dump(void *ctx, fd_rt_change_fn *fn, void *arg)
{
	return fd_route_neigh_dump(ctx, fn, arg);
}

static int
io_neigh_resolve(void *ctx, unsigned int ifindex, int family, const uint8_t *addr)
{
	return fd_route_neigh_resolve(ctx, ifindex, family, addr);
}

struct fd_route_io
fd_route_io_of(struct fd_route *r)
{
	return (struct fd_route_io){ .get = io_get, .path = io_path, .link_mtu = io_link_mtu,
				     .neigh_get = io_neigh_get, .neigh_dump = io_neigh_dump,
				     .neigh_resolve = io_neigh_resolve, .ctx = r };
}

void
fd_route_close(struct fd_route *r)
{
	if (r == NULL)
		return;
	mnl_socket_close(r->nl);
	free(r);
}

/* Sends one request and runs cb over its answer. */
static int
ask(struct fd_route *r, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	ssize_t n;
	int rc;

	/* a reply that came after an earlier request timed out is not ours */
	while (recv(mnl_socket_get_fd(r->nl), buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
	nlh->nlmsg_seq = ++r->seq;
	if (mnl_socket_sendto(r->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	do {
		n = mnl_socket_recvfrom(r->nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)n, r->seq, r->portid, cb, data);
	} while (rc > 0);
	return rc < 0 ? -errno : 0;
}

struct route_reply {
	int family;
	unsigned char type;
	unsigned int oif;
	uint8_t gw[16];
	bool has_gw;
	uint32_t mtu;		/* RTAX_MTU, 0 when the route has none */
};

static int
metric_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == RTAX_MTU && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		*(uint32_t *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

static int
route_attr(const struct nlattr *a, void *data)
{
	struct route_reply *rr = data;
	size_t alen = rr->family == 4 ? 4 : 16;

	switch (mnl_attr_get_type(a)) {
	case RTA_OIF:
		if (mnl_attr_validate(a, MNL_TYPE_U32) == 0)
			rr->oif = mnl_attr_get_u32(a);
		break;
	case RTA_GATEWAY:
		if (mnl_attr_get_payload_len(a) == alen) {
			memcpy(rr->gw, mnl_attr_get_payload(a), alen);
			rr->has_gw = true;
		}
		break;
	case RTA_METRICS:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) == 0)
			mnl_attr_parse_nested(a, metric_attr, &rr->mtu);
		break;
	}
	return MNL_CB_OK;
}

static int
route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct route_reply *rr = data;
	const struct rtmsg *rtm = mnl_nlmsg_get_payload(nlh);

	rr->type = rtm->rtm_type;
	mnl_attr_parse(nlh, sizeof(*rtm), route_attr, rr);
	return MNL_CB_OK;
}

static int
link_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == IFLA_MTU && mnl_attr_validate(a, MNL_TYPE_U32) == 0)
		*(uint32_t *)data = mnl_attr_get_u32(a);
	return MNL_CB_OK;
}

/*
 * A reply (RTM_NEWNEIGH, RTM_NEWLINK) is read as the groups' messages are,
 * by parse_one(): the change it describes is the answer.
 */
static int parse_one(const struct nlmsghdr *nlh, fd_rt_change_fn *fn, void *arg);

static void
keep_change(void *arg, const struct fd_rt_change *c)
{
	*(struct fd_rt_change *)arg = *c;
}

static int
reply_cb(const struct nlmsghdr *nlh, void *data)
{
	if (parse_one(nlh, keep_change, data) < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

int
fd_route_link_mtu(struct fd_route *r, unsigned int ifindex, uint32_t *mtu)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fd_rt_change c = { 0 };
	struct ifinfomsg *ifi;
	int rc;

	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = (int)ifindex;
	rc = ask(r, nlh, reply_cb, &c);
	*mtu = c.mtu;
	return rc;
}

/* A neighbour entry in one of these states has a MAC frames may go to. */
static bool
neigh_usable(uint16_t state)
{
	return state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT |
			NUD_NOARP);
}

int
fd_route_neigh_get(struct fd_route *r, unsigned int ifindex, int family, const uint8_t *addr,
		   uint8_t mac[6], bool *resolved)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct fd_rt_change c = { 0 };
	struct ndmsg *ndm;
	int rc;

	*resolved = false;
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (unsigned char)(family == 4 ? AF_INET : AF_INET6);
	ndm->ndm_ifindex = (int)ifindex;
	mnl_attr_put(nlh, NDA_DST, family == 4 ? 4 : 16, addr);
	rc = ask(r, nlh, reply_cb, &c);
	if (rc == -ENOENT)
		return 0;		/* no neighbour entry yet: unresolved */
	if (rc != 0)
		return rc;
	if (c.resolved) {
		memcpy(mac, c.mac, 6);
		*resolved = true;
	}
	return 0;
}

int
fd_route_neigh_resolve(struct fd_route *r, unsigned int ifindex, int family, const uint8_t *addr)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = RTM_NEWNEIGH;
	/* made if missing; one there already is used as it is (no EXCL, no REPLACE) */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (unsigned char)(family == 4 ? AF_INET : AF_INET6);
	ndm->ndm_ifindex = (int)ifindex;
	ndm->ndm_state = NUD_NONE;	/* not PERMANENT: made so, the collector would spare it */
	ndm->ndm_flags = NTF_USE;	/* resolve it, change nothing else */
	mnl_attr_put(nlh, NDA_DST, family == 4 ? 4 : 16, addr);
	return ask(r, nlh, reply_cb, &(struct fd_rt_change){ 0 });
}

struct dump_ctx {
	fd_rt_change_fn *fn;
	void *arg;
	int n;
};

static int
dump_cb(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *d = data;
	int rc = parse_one(nlh, d->fn, d->arg);

	if (rc < 0) {
		errno = EBADMSG;
		return MNL_CB_ERROR;
	}
	d->n += rc;
	return MNL_CB_OK;
}

int
fd_route_neigh_dump(struct fd_route *r, fd_rt_change_fn *fn, void *arg)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct dump_ctx d = { .fn = fn, .arg = arg };
	struct ndmsg *ndm;
	int rc;

	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;	/* NLMSG_DONE ends the answer */
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = AF_UNSPEC;	/* both; a bridge's FDB entries are skipped by the parser */
	rc = ask(r, nlh, dump_cb, &d);
	return rc < 0 ? rc : d.n;
}

int
fd_route_path(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct route_reply rr = { .family = family };
	size_t alen = family == 4 ? 4 : 16;
	int af = family == 4 ? AF_INET : AF_INET6, rc;

	memset(out, 0, sizeof(*out));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;	/* the ack ends the answer */
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (unsigned char)af;
	rtm->rtm_dst_len = (unsigned char)(alen * 8);
	mnl_attr_put(nlh, RTA_DST, alen, dst);
	rc = ask(r, nlh, route_cb, &rr);
	if (rc == -ENETUNREACH || rc == -EHOSTUNREACH)
		return -ENETUNREACH;
	if (rc != 0)
		return rc;
	if (rr.type != RTN_UNICAST || rr.oif == 0)
		return -ENETUNREACH;
	out->ifindex = rr.oif;
	out->family = (uint8_t)family;
	memcpy(out->nbr, rr.has_gw ? rr.gw : dst, alen);
	/* 0: the route says none, the interface's holds; IPv4's floor is 68 */
	if (rr.mtu != 0 && rr.mtu < 68)
		return -EINVAL;
	out->mtu = rr.mtu > UINT16_MAX ? UINT16_MAX : (uint16_t)rr.mtu;
	return 0;
}

int
fd_route_get(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out)
{
	int rc = fd_route_path(r, family, dst, out);

	if (rc != 0)
		return rc;
	return fd_route_neigh_get(r, out->ifindex, family, out->nbr, out->mac, &out->resolved);
}

/* ---- changes ---- */

struct neigh_msg {
	struct fd_rt_change *c;
	bool has_dst;
	bool has_mac;
};

static int
neigh_msg_attr(const struct nlattr *a, void *data)
{
	struct neigh_msg *m = data;
	size_t alen = m->c->family == 4 ? 4 : 16;

	switch (mnl_attr_get_type(a)) {
	case NDA_DST:
		if (mnl_attr_get_payload_len(a) == alen) {
			memcpy(m->c->addr, mnl_attr_get_payload(a), alen);
			m->has_dst = true;
		}
		break;
	case NDA_LLADDR:
		if (mnl_attr_get_payload_len(a) == 6) {
			memcpy(m->c->mac, mnl_attr_get_payload(a), 6);
			m->has_mac = true;
		}
		break;
	}
	return MNL_CB_OK;
}

/*
 * Do the attributes after `off` fill the message exactly?  libmnl's walk
 * stops quietly at one that runs past the end; such a message is refused.
 */
static bool
attrs_whole(const struct nlmsghdr *nlh, size_t off)
{
	const struct nlattr *a;
	const char *tail = mnl_nlmsg_get_payload_tail(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) < off)
		return false;
	mnl_attr_for_each(a, nlh, off)
		;
	return (const char *)a >= tail;
}

/* One message: 1 when it made a change, 0 when skipped, -EBADMSG. */
static int
parse_one(const struct nlmsghdr *nlh, fd_rt_change_fn *fn, void *arg)
{
	struct fd_rt_change c = { 0 };
	size_t plen = mnl_nlmsg_get_payload_len(nlh);

	switch (nlh->nlmsg_type) {
	case RTM_NEWNEIGH:
	case RTM_DELNEIGH: {
		const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);
		struct neigh_msg m = { .c = &c };

		if (plen < sizeof(*ndm) || !attrs_whole(nlh, sizeof(*ndm)))
			return -EBADMSG;
		if (ndm->ndm_family != AF_INET && ndm->ndm_family != AF_INET6)
			return 0;	/* a bridge's FDB: not ours */
		if (ndm->ndm_flags & NTF_PROXY)
			return 0;	/* a proxy entry answers for others: no MAC to send to */
		c.what = FD_RT_NEIGH;
		c.family = ndm->ndm_family == AF_INET ? 4 : 6;
		c.ifindex = (unsigned int)ndm->ndm_ifindex;
		if (mnl_attr_parse(nlh, sizeof(*ndm), neigh_msg_attr, &m) != MNL_CB_OK)
			return -EBADMSG;
		if (!m.has_dst)
			return 0;
		c.resolved = nlh->nlmsg_type == RTM_NEWNEIGH && m.has_mac &&
			     neigh_usable(ndm->ndm_state);
		break;
	}
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		if (plen < sizeof(struct rtmsg))
			return -EBADMSG;
		c.what = FD_RT_ROUTE;
		break;
	case RTM_NEWLINK:
	case RTM_DELLINK: {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

		if (plen < sizeof(*ifi) || !attrs_whole(nlh, sizeof(*ifi)))
			return -EBADMSG;
		c.what = FD_RT_LINK;
		c.ifindex = (unsigned int)ifi->ifi_index;
		if (mnl_attr_parse(nlh, sizeof(*ifi), link_attr, &c.mtu) != MNL_CB_OK)
			return -EBADMSG;
		break;
	}
	default:
		return 0;
	}
	fn(arg, &c);
	return 1;
}

struct parse_ctx {
	fd_rt_change_fn *fn;
	void *arg;
};

static int
parse_msg(const struct nlmsghdr *nlh, void *arg)
{
	struct parse_ctx *p = arg;

	return parse_one(nlh, p->fn, p->arg);
}

int
fd_route_parse(const void *buf, size_t len, fd_rt_change_fn *fn, void *arg)
{
	struct parse_ctx p = { .fn = fn, .arg = arg };

	return fd_nl_walk(buf, len, parse_msg, &p);
}

struct fd_route_watch {
	struct mnl_socket *nl;
};

struct fd_route_watch *
fd_route_watch_open(void)
{
	struct fd_route_watch *w = calloc(1, sizeof(*w));
	int err;

	if (w == NULL)
		return NULL;
	w->nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (w->nl != NULL &&
	    mnl_socket_bind(w->nl, RTMGRP_NEIGH | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE | RTMGRP_LINK,
			    MNL_SOCKET_AUTOPID) == 0)
		return w;
	err = errno;
	if (w->nl)
		mnl_socket_close(w->nl);
	free(w);
	errno = err;
	return NULL;
}

void
fd_route_watch_close(struct fd_route_watch *w)
{
	if (w == NULL)
		return;
	mnl_socket_close(w->nl);
	free(w);
}

int
fd_route_watch_fd(const struct fd_route_watch *w)
{
	return mnl_socket_get_fd(w->nl);
}

int
fd_route_watch_read(struct fd_route_watch *w, unsigned int max_msgs, fd_rt_change_fn *fn,
		    void *arg, uint64_t *bad)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int n = 0;

	bool lost = false;

	for (unsigned int i = 0; i < max_msgs; i++) {
		/* MSG_TRUNC: the datagram's real length, to see one cut short */
		ssize_t got = recv(mnl_socket_get_fd(w->nl), buf, sizeof(buf), MSG_TRUNC);
		int rc;

		if (got < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			return -errno;
		}
		if ((size_t)got > sizeof(buf)) {
			(*bad)++;
			lost = true;	/* what it said is lost: read everything again */
			continue;
		}
		rc = fd_route_parse(buf, (size_t)got, fn, arg);
		if (rc < 0) {
			(*bad)++;
			continue;
		}
		n += rc;
	}
	return lost ? -ENOBUFS : n;
}
