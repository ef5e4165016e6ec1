/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_tuple: see fd_tuple.h. */
#include "fd_tuple.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>

char *
fd_tuple_format(const struct fd_tuple *t, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = t->family == 4 ? AF_INET : AF_INET6;
	const char *o = t->family == 4 ? "" : "[", *e = t->family == 4 ? "" : "]";
	const char *p = t->proto == IPPROTO_TCP ? "tcp" : t->proto == IPPROTO_UDP ? "udp" :
			t->proto == IPPROTO_ICMP ? "icmp" : t->proto == IPPROTO_ICMPV6 ? "icmpv6" :
			"proto";
	bool ports = t->proto == IPPROTO_TCP || t->proto == IPPROTO_UDP;

	inet_ntop(af, t->src, s, sizeof(s));
	inet_ntop(af, t->dst, d, sizeof(d));
	if (ports)
		snprintf(buf, len, "%s %s%s%s:%u -> %s%s%s:%u", p, o, s, e, ntohs(t->sport),
			 o, d, e, ntohs(t->dport));
	else
		snprintf(buf, len, "%s %s -> %s", p, s, d);
	return buf;
}
