/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_rtnl: see fc_rtnl.h. */
#include "fc_rtnl.h"

#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

size_t
fc_rtnl_neigh(char *buf, uint16_t type, int af, int ifindex, const void *dst, const void *mac,
	      uint16_t state)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ndmsg *ndm;

	nlh->nlmsg_type = type;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = (uint8_t)af;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = state;
	if (dst)
		mnl_attr_put(nlh, NDA_DST, af == AF_INET ? 4 : 16, dst);
	if (mac)
		mnl_attr_put(nlh, NDA_LLADDR, 6, mac);
	return nlh->nlmsg_len;
}

size_t
fc_rtnl_route(char *buf, uint16_t type, uint32_t oif, uint32_t mtu)
{
	static const uint8_t dst[4] = { 198, 18, 1, 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = type;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = AF_INET;
	rtm->rtm_dst_len = 24;
	rtm->rtm_type = RTN_UNICAST;
	mnl_attr_put(nlh, RTA_DST, 4, dst);
	mnl_attr_put_u32(nlh, RTA_OIF, oif);
	if (mtu) {
		struct nlattr *m = mnl_attr_nest_start(nlh, RTA_METRICS);

		mnl_attr_put_u32(nlh, RTAX_MTU, mtu);
		mnl_attr_nest_end(nlh, m);
	}
	return nlh->nlmsg_len;
}

size_t
fc_rtnl_link(char *buf, int ifindex, uint32_t mtu)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct ifinfomsg *ifi;

	nlh->nlmsg_type = RTM_NEWLINK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_index = ifindex;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, "fp1");
	if (mtu)
		mnl_attr_put_u32(nlh, IFLA_MTU, mtu);
	return nlh->nlmsg_len;
}
