/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_policy: see fd_policy.h. */
#include "fd_policy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>

/* Both tuples' addresses, of IPv4 or IPv6, are there (the kernel's always are). */
static bool
addressed(const struct nf_conntrack *ct)
{
	static const enum nf_conntrack_attr v4[] = { ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV4_DST,
						     ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV4_DST };
	static const enum nf_conntrack_attr v6[] = { ATTR_ORIG_IPV6_SRC, ATTR_ORIG_IPV6_DST,
						     ATTR_REPL_IPV6_SRC, ATTR_REPL_IPV6_DST };
	uint8_t l3 = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	const enum nf_conntrack_attr *a = l3 == AF_INET ? v4 : l3 == AF_INET6 ? v6 : NULL;

	if (a == NULL)
		return false;
	for (int i = 0; i < 4; i++)
		if (nfct_attr_is_set(ct, a[i]) <= 0)
			return false;
	return true;
}

bool
fd_policy_qualifies(const struct nf_conntrack *ct, uint32_t mark_bit)
{
	uint32_t status = nfct_get_attr_u32(ct, ATTR_STATUS);
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & mark_bit))
		return false;		/* not (or not again) through the rules */
	if (!addressed(ct))
		return false;		/* not a state the kernel sends: nothing to key it by */
	if (nfct_attr_is_set(ct, ATTR_HELPER_NAME) &&
	    ((const char *)nfct_get_attr(ct, ATTR_HELPER_NAME))[0] != '\0')
		return false;
	if (nfct_attr_is_set(ct, ATTR_ZONE) && nfct_get_attr_u16(ct, ATTR_ZONE) != 0)
		return false;
	if (status & IPS_DYING)
		return false;
	switch (l4) {
	case IPPROTO_TCP:
		return (status & IPS_ASSURED) &&
		       nfct_get_attr_u8(ct, ATTR_TCP_STATE) == TCP_CONNTRACK_ESTABLISHED;
	case IPPROTO_UDP:
		return status & IPS_ASSURED;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		return (status & IPS_SEEN_REPLY) &&
		       (nfct_get_attr_u8(ct, ATTR_ICMP_TYPE) == 8 ||
			nfct_get_attr_u8(ct, ATTR_ICMP_TYPE) == 128);
	default:
		return false;
	}
}

int
fd_policy_family(const struct nf_conntrack *ct)
{
	return nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO) == AF_INET ? 4 : 6;
}

void
fd_policy_addr(const struct nf_conntrack *ct, enum nf_conntrack_attr v4,
	       enum nf_conntrack_attr v6, uint8_t out[16])
{
	if (fd_policy_family(ct) == 4) {
		uint32_t a = nfct_get_attr_u32(ct, v4);

		memcpy(out, &a, 4);
	} else {
		const void *a = nfct_get_attr(ct, v6);

		if (a != NULL)
			memcpy(out, a, 16);
		else
			memset(out, 0, 16);	/* not there: a state that does not qualify */
	}
}

void
fd_policy_key(const struct nf_conntrack *ct, enum fd_dir dir, uint16_t port, struct fc_key *k)
{
	bool reply = dir == FD_DIR_REPLY;
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	memset(k, 0, sizeof(*k));
	k->family = (uint8_t)fd_policy_family(ct);
	k->proto = l4;
	k->port = port;
	fd_policy_addr(ct, reply ? ATTR_REPL_IPV4_SRC : ATTR_ORIG_IPV4_SRC,
		       reply ? ATTR_REPL_IPV6_SRC : ATTR_ORIG_IPV6_SRC, k->src);
	fd_policy_addr(ct, reply ? ATTR_REPL_IPV4_DST : ATTR_ORIG_IPV4_DST,
		       reply ? ATTR_REPL_IPV6_DST : ATTR_ORIG_IPV6_DST, k->dst);
	switch (l4) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		k->sport = nfct_get_attr_u16(ct, reply ? ATTR_REPL_PORT_SRC : ATTR_ORIG_PORT_SRC);
		k->dport = nfct_get_attr_u16(ct, reply ? ATTR_REPL_PORT_DST : ATTR_ORIG_PORT_DST);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		k->sport = nfct_get_attr_u16(ct, ATTR_ICMP_ID);
		k->dport = l4 == IPPROTO_ICMP ? (reply ? 0 : 8) : (reply ? 129 : 128);
		break;
	}
}

void
fd_policy_route_dst(const struct nf_conntrack *ct, enum fd_dir dir, uint8_t dst[16])
{
	if (dir == FD_DIR_ORIG)
		fd_policy_addr(ct, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, dst);
	else
		fd_policy_addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, dst);
}

uint8_t
fd_policy_action(const struct nf_conntrack *ct, bool cut_in_hardware)
{
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	/* a tunnel's connection stays FWD: its encryption under IPS is untried */
	if (l4 == IPPROTO_ESP)
		return FC_ACTION_FWD;
	if (l4 == IPPROTO_UDP && (ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST)) == 4500 ||
				  ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC)) == 4500))
		return FC_ACTION_FWD;
	return cut_in_hardware ? FC_ACTION_IPS : FC_ACTION_FWD;
}

bool
fd_policy_inspected(const struct nf_conntrack *ct, const uint16_t *tls_ports, unsigned int ntls)
{
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	uint16_t dport;

	if (l4 != IPPROTO_TCP && l4 != IPPROTO_UDP)	/* TLS, and QUIC */
		return false;
	dport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_DST));
	for (unsigned int i = 0; i < ntls; i++)
		if (tls_ports[i] == dport)
			return true;
	return false;
}

uint8_t
fd_policy_verdict(const struct nf_conntrack *ct, uint8_t action, const uint16_t *tls_ports,
		  unsigned int ntls)
{
	return action == FC_ACTION_IPS && fd_policy_inspected(ct, tls_ports, ntls)
		? FC_VERDICT_SEND_TO_IPS : FC_VERDICT_CUT_THRU;
}
