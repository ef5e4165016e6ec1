/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_netns: see fc_netns.h. */
#include "fc_netns.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
fc_netns_sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc != 0)
		fprintf(stderr, "fc_netns: `%s` failed (%d)\n", cmd, rc);
	return rc;
}

const char *
fc_netns_front_ports(void)
{
	if (geteuid() != 0)
		return "not root";
	if (unshare(CLONE_NEWNET) != 0)
		return "no network namespace (unshare)";
	if (fc_netns_sh("modprobe nf_conntrack 2>/dev/null; modprobe nf_conntrack_netlink 2>/dev/null; "
	       "test -e /proc/sys/net/netfilter/nf_conntrack_max") != 0)
		return "no conntrack in this kernel";
	if (fc_netns_sh("ip link set lo up && "
	       "ip link add fp0 type veth peer name c0 && ip link add fp1 type veth peer name s1 && "
	       "for l in fp0 c0 fp1 s1; do ip link set $l up || exit 1; done && "
	       "ip addr add 198.18.0.1/24 dev fp0 && ip addr add 198.19.0.1/24 dev fp1 && "
	       "ip -6 addr add 2001:2::1/64 dev fp0 nodad && "
	       "ip -6 addr add 2001:2:0:1::1/64 dev fp1 nodad && "
	       "ip neigh replace 198.18.0.10 lladdr 02:00:00:00:00:0a dev fp0 nud permanent && "
	       "ip neigh replace 198.19.0.10 lladdr 02:00:00:00:00:0b dev fp1 nud permanent && "
	       "ip neigh replace 2001:2::10 lladdr 02:00:00:00:00:0a dev fp0 nud permanent && "
	       "ip neigh replace 2001:2:0:1::10 lladdr 02:00:00:00:00:0b dev fp1 nud permanent && "
	       "ip neigh replace 198.19.0.11 lladdr 02:00:00:00:00:0c dev fp1 nud permanent && "
	       "ip neigh replace 2001:2:0:1::11 lladdr 02:00:00:00:00:0c dev fp1 nud permanent")
	    != 0)
		return "the namespace's links could not be made (ip)";
	return NULL;
}
