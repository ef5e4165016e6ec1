/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut: a key as text, for both sides (the coprocessor's logs and
 * tests, the host's tools).  struct fc_key is in fc_cmd.h.
 */
#ifndef FLOWCUT_FC_KEY_H
#define FLOWCUT_FC_KEY_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>

#include <flowcut/fc_cmd.h>

/*
 * fc_key_format - "4 tcp 198.18.0.1:1000 > 198.18.1.1:80 port 0 vlan 0",
 * "6 udp [2001:2::1]:53 > [2001:2::2]:5353 ...", "4 icmp A > B id 7 type 8
 * ...", "4 proto 47 A > B ...".  Always NUL-terminates when len > 0.
 */
static inline char *
fc_key_format(const struct fc_key *k, char *buf, unsigned int len)
{
	char s[INET6_ADDRSTRLEN] = "?", d[INET6_ADDRSTRLEN] = "?";
	int af = k->family == 6 ? AF_INET6 : AF_INET;
	const char *o = af == AF_INET6 ? "[" : "", *c = af == AF_INET6 ? "]" : "";
	const char *proto = NULL;

	if (len == 0)
		return buf;
	inet_ntop(af, k->src, s, sizeof(s));
	inet_ntop(af, k->dst, d, sizeof(d));
	switch (k->proto) {
	case IPPROTO_TCP: proto = "tcp"; break;
	case IPPROTO_UDP: proto = "udp"; break;
	case IPPROTO_ICMP: proto = "icmp"; break;
	case IPPROTO_ICMPV6: proto = "icmpv6"; break;
	}
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6)
		snprintf(buf, len, "%u %s %s > %s id %u type %u port %u vlan %u", k->family,
			 proto, s, d, ntohs(k->sport), k->dport, k->port, k->vlan);
	else if (proto)
		snprintf(buf, len, "%u %s %s%s%s:%u > %s%s%s:%u port %u vlan %u", k->family,
			 proto, o, s, c, ntohs(k->sport), o, d, c, ntohs(k->dport), k->port,
			 k->vlan);
	else
		snprintf(buf, len, "%u proto %u %s > %s port %u vlan %u", k->family, k->proto,
			 s, d, k->port, k->vlan);
	return buf;
}

#endif
