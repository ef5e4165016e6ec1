/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_route: see fd_route.h.  Requests and replies are libmnl's. */
#include "fd_route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
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
};

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

struct neigh_reply {
	uint8_t mac[6];
	bool has_mac;
	uint16_t state;
};

static int
neigh_attr(const struct nlattr *a, void *data)
{
	struct neigh_reply *nr = data;

	if (mnl_attr_get_type(a) == NDA_LLADDR && mnl_attr_get_payload_len(a) == 6) {
		memcpy(nr->mac, mnl_attr_get_payload(a), 6);
		nr->has_mac = true;
	}
	return MNL_CB_OK;
}

static int
neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_reply *nr = data;
	const struct ndmsg *ndm = mnl_nlmsg_get_payload(nlh);

	nr->state = ndm->ndm_state;
	mnl_attr_parse(nlh, sizeof(*ndm), neigh_attr, nr);
	return MNL_CB_OK;
}

int
fd_route_get(struct fd_route *r, int family, const uint8_t *dst, struct fd_hop *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct ndmsg *ndm;
	struct route_reply rr = { .family = family };
	struct neigh_reply nr = { 0 };
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

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (unsigned char)af;
	ndm->ndm_ifindex = (int)rr.oif;
	mnl_attr_put(nlh, NDA_DST, alen, rr.has_gw ? rr.gw : dst);
	rc = ask(r, nlh, neigh_cb, &nr);
	if (rc == -ENOENT)
		return 0;		/* no neighbour entry yet: unresolved */
	if (rc != 0)
		return rc;
	if (nr.has_mac && (nr.state & (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE |
				       NUD_PERMANENT | NUD_NOARP))) {
		memcpy(out->mac, nr.mac, 6);
		out->resolved = true;
	}
	return 0;
}
