/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctparse: see fd_ctparse.h (what it sets) and driver/ct/README.md (why
 * it is written here).
 *
 * Each nest is walked once (mnl_attr_for_each_nested), the last of an
 * attribute kept, as mnl_attr_parse's table keeps it; then what was kept
 * is set in the library's own order, so that where the library's storage
 * is shared (an IPv4 and an IPv6 address of one end, a port and an ICMP
 * id or type) the last set is the one it would have left.  A tuple's
 * fields are gathered in a `struct tup` first for that reason: the reply's
 * and the master's ICMP attributes, which the library writes into that
 * tuple's storage but marks as the original's (ATTR_ICMP_*), are set
 * here as the original's value, marked (icmp_mark).
 */
#include "fd_ctparse.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

/* The fixed sizes the library validates (mnl_attr_validate: exactly). */
static bool
sized(const struct nlattr *a, uint16_t len)
{
	return mnl_attr_get_payload_len(a) == len;
}

/* MNL_TYPE_NESTED: empty, or at least an attribute header. */
static bool
nest_ok(const struct nlattr *a)
{
	uint16_t len = mnl_attr_get_payload_len(a);

	return len == 0 || len >= MNL_ATTR_HDRLEN;
}

enum {
	T_V4SRC = 1 << 0, T_V4DST = 1 << 1, T_V6SRC = 1 << 2, T_V6DST = 1 << 3,
	T_PROTO = 1 << 4, T_SPORT = 1 << 5, T_DPORT = 1 << 6, T_ITYPE = 1 << 7,
	T_ICODE = 1 << 8, T_IID = 1 << 9, T_ZONE = 1 << 10,
};

/* One tuple as the library stores it: the unions of its addresses and ports kept as such. */
struct tup {
	unsigned int has;
	uint8_t src[16], dst[16];	/* an IPv4 address in the first 4 bytes */
	uint8_t proto;
	uint8_t l4src[2];		/* a port, or an ICMP id (network order) */
	uint8_t l4dst[2];		/* a port, or an ICMP type then code */
	uint16_t zone;			/* host order */
};

static int
tuple_ip(const struct nlattr *nest, struct tup *t)
{
	const struct nlattr *a, *v4s = NULL, *v4d = NULL, *v6s = NULL, *v6d = NULL;

	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case CTA_IP_V4_SRC: v4s = a; break;
		case CTA_IP_V4_DST: v4d = a; break;
		case CTA_IP_V6_SRC: v6s = a; break;
		case CTA_IP_V6_DST: v6d = a; break;
		default: continue;
		}
		if (!sized(a, mnl_attr_get_type(a) <= CTA_IP_V4_DST ? 4 : 16))
			return -1;
	}
	if (v4s != NULL)
		memcpy(t->src, mnl_attr_get_payload(v4s), 4), t->has |= T_V4SRC;
	if (v4d != NULL)
		memcpy(t->dst, mnl_attr_get_payload(v4d), 4), t->has |= T_V4DST;
	if (v6s != NULL)
		memcpy(t->src, mnl_attr_get_payload(v6s), 16), t->has |= T_V6SRC;
	if (v6d != NULL)
		memcpy(t->dst, mnl_attr_get_payload(v6d), 16), t->has |= T_V6DST;
	return 0;
}

static int
tuple_proto(const struct nlattr *nest, struct tup *t)
{
	const struct nlattr *a, *at[CTA_PROTO_MAX + 1] = { NULL };

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		switch (type) {
		case CTA_PROTO_SRC_PORT:
		case CTA_PROTO_DST_PORT:
		case CTA_PROTO_ICMP_ID:
		case CTA_PROTO_ICMPV6_ID:
			if (!sized(a, 2))
				return -1;
			break;
		case CTA_PROTO_NUM:
		case CTA_PROTO_ICMP_TYPE:
		case CTA_PROTO_ICMP_CODE:
		case CTA_PROTO_ICMPV6_TYPE:
		case CTA_PROTO_ICMPV6_CODE:
			if (!sized(a, 1))
				return -1;
			break;
		default:
			continue;
		}
		at[type] = a;
	}
	/* the library's order: what shares storage, the later wins */
	if (at[CTA_PROTO_NUM] != NULL)
		t->proto = mnl_attr_get_u8(at[CTA_PROTO_NUM]), t->has |= T_PROTO;
	if (at[CTA_PROTO_SRC_PORT] != NULL)
		memcpy(t->l4src, mnl_attr_get_payload(at[CTA_PROTO_SRC_PORT]), 2), t->has |= T_SPORT;
	if (at[CTA_PROTO_DST_PORT] != NULL)
		memcpy(t->l4dst, mnl_attr_get_payload(at[CTA_PROTO_DST_PORT]), 2), t->has |= T_DPORT;
	for (int v6 = 0; v6 < 2; v6++) {
		const struct nlattr *ty = at[v6 ? CTA_PROTO_ICMPV6_TYPE : CTA_PROTO_ICMP_TYPE];
		const struct nlattr *co = at[v6 ? CTA_PROTO_ICMPV6_CODE : CTA_PROTO_ICMP_CODE];
		const struct nlattr *id = at[v6 ? CTA_PROTO_ICMPV6_ID : CTA_PROTO_ICMP_ID];

		if (ty != NULL)
			t->l4dst[0] = mnl_attr_get_u8(ty), t->has |= T_ITYPE;
		if (co != NULL)
			t->l4dst[1] = mnl_attr_get_u8(co), t->has |= T_ICODE;
		if (id != NULL)
			memcpy(t->l4src, mnl_attr_get_payload(id), 2), t->has |= T_IID;
	}
	return 0;
}

static int
tuple(const struct nlattr *nest, struct tup *t)
{
	const struct nlattr *a, *ip = NULL, *proto = NULL, *zone = NULL;

	mnl_attr_for_each_nested(a, nest) {
		switch (mnl_attr_get_type(a)) {
		case CTA_TUPLE_IP:
			if (!nest_ok(a))
				return -1;
			ip = a;
			break;
		case CTA_TUPLE_PROTO:
			if (!nest_ok(a))
				return -1;
			proto = a;
			break;
		case CTA_TUPLE_ZONE:
			if (!sized(a, 2))
				return -1;
			zone = a;
			break;
		}
	}
	if ((ip != NULL && tuple_ip(ip, t) != 0) || (proto != NULL && tuple_proto(proto, t) != 0))
		return -1;
	if (zone != NULL)
		t->zone = ntohs(mnl_attr_get_u16(zone)), t->has |= T_ZONE;
	return 0;
}

/*
 * A tuple holds an ICMP type: the one the setter will be given (the
 * original's) is one it can invert.  The library's setter indexes its
 * table of request and reply types with it, unchecked in some versions.
 * The kernel keeps states of requests and replies only (ICMP 0-18,
 * ICMPv6 128-140); anything else is refused.
 */
static bool
icmp_ok(uint8_t family, const struct tup *orig)
{
	uint8_t type = orig->l4dst[0];

	if (family == AF_INET)
		return type <= 18;
	if (family == AF_INET6)
		return type >= 128 && type <= 140;
	return true;	/* the setter inverts nothing */
}

/* A direction's attributes, to set a gathered tuple with. */
static const struct dir_attrs {
	enum nf_conntrack_attr l3, v4src, v4dst, v6src, v6dst, l4, sport, dport, zone;
} dir_attrs[2] = {
	{ ATTR_ORIG_L3PROTO, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_SRC,
	  ATTR_ORIG_IPV6_DST, ATTR_ORIG_L4PROTO, ATTR_ORIG_PORT_SRC, ATTR_ORIG_PORT_DST,
	  ATTR_ORIG_ZONE },
	{ ATTR_REPL_L3PROTO, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_SRC,
	  ATTR_REPL_IPV6_DST, ATTR_REPL_L4PROTO, ATTR_REPL_PORT_SRC, ATTR_REPL_PORT_DST,
	  ATTR_REPL_ZONE },
};

static uint16_t
u16_at(const uint8_t b[2])
{
	uint16_t v;

	memcpy(&v, b, 2);
	return v;
}

static uint32_t
u32_at(const uint8_t b[4])
{
	uint32_t v;

	memcpy(&v, b, 4);
	return v;
}

/*
 * The ICMP attributes a tuple holds, marked set with the original's values
 * (the library marks a reply's or a master's ICMP attributes as the
 * original's, ATTR_ICMP_*, and writes them into that tuple's own storage,
 * which no attribute reads).  The setters write the reply's storage too
 * (its type inverted): the reply's ports are set after them.
 */
static void
icmp_mark(struct nf_conntrack *ct, const struct tup *t, const struct tup *orig)
{
	if (t->has & T_ITYPE)
		nfct_set_attr_u8(ct, ATTR_ICMP_TYPE, orig->l4dst[0]);
	if (t->has & T_ICODE)
		nfct_set_attr_u8(ct, ATTR_ICMP_CODE, orig->l4dst[1]);
	if (t->has & T_IID)
		nfct_set_attr_u16(ct, ATTR_ICMP_ID, u16_at(orig->l4src));
}

/*
 * A tuple's ports, set.  The reply's storage is put back whole (the ICMP
 * setters wrote the original's id and inverted type there: a NAT'd echo's
 * reply id is its own), through the reply's port attributes, which share
 * it; a port the reply does not hold is then marked unset again.
 */
static void
ports_set(struct nf_conntrack *ct, int dir, const struct tup *t)
{
	bool storage = dir == 1 && (t->has & (T_ITYPE | T_ICODE | T_IID));

	if ((t->has & T_SPORT) || storage)
		nfct_set_attr_u16(ct, dir_attrs[dir].sport, u16_at(t->l4src));
	if ((t->has & T_DPORT) || storage)
		nfct_set_attr_u16(ct, dir_attrs[dir].dport, u16_at(t->l4dst));
	if (storage && !(t->has & T_SPORT))
		nfct_attr_unset(ct, dir_attrs[dir].sport);
	if (storage && !(t->has & T_DPORT))
		nfct_attr_unset(ct, dir_attrs[dir].dport);
}

/*
 * CTA_TIMESTAMP (with nf_conntrack_timestamp on): when the state was
 * confirmed, and ended, in ns of the real clock.  The library keeps them
 * where only its own parse writes (its setters of ATTR_TIMESTAMP_* set
 * the bit and nothing else), so the nest alone, in a message of its own
 * with nlh's headers, is given to its parse.  -1: a nest too big, a time
 * of the wrong size (the library would exit), or one the library refuses.
 */
static int
timestamp(struct nf_conntrack *ct, const struct nlmsghdr *nlh, const struct nlattr *nest)
{
	char buf[128] __attribute__((aligned(NLMSG_ALIGNTO)));
	const struct nlattr *a;
	struct nlmsghdr *m;
	struct nfgenmsg *g;

	if ((size_t)MNL_ALIGN(nest->nla_len) > sizeof(buf) - MNL_NLMSG_HDRLEN - MNL_ALIGN(sizeof(*g)))
		return -1;
	/* the library exits the process on a time of the wrong size (__abi_breakage): refused here */
	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if ((type == CTA_TIMESTAMP_START || type == CTA_TIMESTAMP_STOP) && !sized(a, 8))
			return -1;
	}
	m = mnl_nlmsg_put_header(buf);
	m->nlmsg_type = nlh->nlmsg_type;
	g = mnl_nlmsg_put_extra_header(m, sizeof(*g));
	*g = *(const struct nfgenmsg *)mnl_nlmsg_get_payload(nlh);
	memcpy(mnl_nlmsg_get_payload_tail(m), nest, nest->nla_len);
	m->nlmsg_len += MNL_ALIGN(nest->nla_len);
	return nfct_nlmsg_parse(m, ct) < 0 ? -1 : 0;
}

/* A tuple into ct, as the library's parse leaves it; `orig`: the original's (icmp_mark). */
static void
tuple_set(struct nf_conntrack *ct, int dir, uint8_t family, const struct tup *t,
	  const struct tup *orig)
{
	const struct dir_attrs *d = &dir_attrs[dir];

	nfct_set_attr_u8(ct, d->l3, family);
	if (t->has & T_V4SRC)
		nfct_set_attr_u32(ct, d->v4src, u32_at(t->src));
	if (t->has & T_V4DST)
		nfct_set_attr_u32(ct, d->v4dst, u32_at(t->dst));
	if (t->has & T_V6SRC)
		nfct_set_attr(ct, d->v6src, t->src);
	if (t->has & T_V6DST)
		nfct_set_attr(ct, d->v6dst, t->dst);
	if (t->has & T_PROTO)
		nfct_set_attr_u8(ct, d->l4, t->proto);
	icmp_mark(ct, t, orig);
	ports_set(ct, dir, t);
	if (t->has & T_ZONE)
		nfct_set_attr_u16(ct, d->zone, t->zone);
}

static int
protoinfo(struct nf_conntrack *ct, const struct nlattr *nest)
{
	const struct nlattr *a, *tcp = NULL, *at[CTA_PROTOINFO_TCP_MAX + 1] = { NULL };
	bool other = false;

	mnl_attr_for_each_nested(a, nest) {
		uint16_t type = mnl_attr_get_type(a);

		if (type == CTA_PROTOINFO_TCP) {
			if (!nest_ok(a))
				return -1;
			tcp = a;
		}
		other |= type == CTA_PROTOINFO_SCTP || type == CTA_PROTOINFO_DCCP;
	}
	if (tcp == NULL)
		return 0;
	/*
	 * One protocol's, as the kernel sends: the library keeps TCP's, SCTP's
	 * and DCCP's in one union, so with another beside it TCP's would read
	 * as whatever that one wrote.
	 */
	if (other)
		return -1;
	mnl_attr_for_each_nested(a, tcp) {
		uint16_t type = mnl_attr_get_type(a);

		switch (type) {
		case CTA_PROTOINFO_TCP_STATE:
		case CTA_PROTOINFO_TCP_WSCALE_ORIGINAL:
		case CTA_PROTOINFO_TCP_WSCALE_REPLY:
			if (!sized(a, 1))
				return -1;
			break;
		case CTA_PROTOINFO_TCP_FLAGS_ORIGINAL:
		case CTA_PROTOINFO_TCP_FLAGS_REPLY:
			if (!sized(a, 2))	/* struct nf_ct_tcp_flags: flags, mask */
				return -1;
			break;
		default:
			continue;
		}
		at[type] = a;
	}
	if (at[CTA_PROTOINFO_TCP_STATE] != NULL)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, mnl_attr_get_u8(at[CTA_PROTOINFO_TCP_STATE]));
	if (at[CTA_PROTOINFO_TCP_WSCALE_ORIGINAL] != NULL)
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_ORIG,
				 mnl_attr_get_u8(at[CTA_PROTOINFO_TCP_WSCALE_ORIGINAL]));
	if (at[CTA_PROTOINFO_TCP_WSCALE_REPLY] != NULL)
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_REPL,
				 mnl_attr_get_u8(at[CTA_PROTOINFO_TCP_WSCALE_REPLY]));
	for (int r = 0; r < 2; r++) {
		const struct nlattr *f = at[r ? CTA_PROTOINFO_TCP_FLAGS_REPLY
					      : CTA_PROTOINFO_TCP_FLAGS_ORIGINAL];
		const uint8_t *fl;

		if (f == NULL)
			continue;
		fl = mnl_attr_get_payload(f);
		nfct_set_attr_u8(ct, r ? ATTR_TCP_FLAGS_REPL : ATTR_TCP_FLAGS_ORIG, fl[0]);
		nfct_set_attr_u8(ct, r ? ATTR_TCP_MASK_REPL : ATTR_TCP_MASK_ORIG, fl[1]);
	}
	return 0;
}

static int
helper(struct nf_conntrack *ct, const struct nlattr *nest)
{
	const struct nlattr *a, *name = NULL;
	char buf[NFCT_HELPER_NAME_MAX];
	uint16_t len;

	mnl_attr_for_each_nested(a, nest) {
		if (mnl_attr_get_type(a) != CTA_HELP_NAME)
			continue;
		if (mnl_attr_get_payload_len(a) == 0)
			return -1;	/* MNL_TYPE_STRING: each one, as the library checks */
		name = a;
	}
	if (name == NULL)
		return 0;
	len = mnl_attr_get_payload_len(name);
	/* the kernel's is NUL-terminated; one that is not would be read past (the library's) */
	if (len == 0 || memchr(mnl_attr_get_payload(name), '\0', len) == NULL)
		return -1;
	if (len > sizeof(buf))
		len = sizeof(buf);
	memcpy(buf, mnl_attr_get_payload(name), len);
	buf[sizeof(buf) - 1] = '\0';
	nfct_set_attr(ct, ATTR_HELPER_NAME, buf);
	return 0;
}

int
fd_ctparse_msg(const struct nlmsghdr *nlh, struct nf_conntrack *ct)
{
	const struct nlattr *attr, *at[CTA_MAX + 1] = { NULL };
	const struct nfgenmsg *g;
	const void *payload;
	size_t size;
	struct tup t[3];	/* the original, the reply, the master */

	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nfgenmsg)))
		return -1;
	g = mnl_nlmsg_get_payload(nlh);
	/* to nlmsg_len itself, as the library (not to its alignment, as mnl_attr_for_each) */
	payload = mnl_nlmsg_get_payload_offset(nlh, sizeof(struct nfgenmsg));
	size = nlh->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg));
	mnl_attr_for_each_payload(payload, size) {
		const struct nlattr *a = attr;
		uint16_t type = mnl_attr_get_type(a);

		switch (type) {
		case CTA_TUPLE_ORIG:
		case CTA_TUPLE_REPLY:
		case CTA_TUPLE_MASTER:
		case CTA_PROTOINFO:
		case CTA_HELP:
		case CTA_TIMESTAMP:
			if (!nest_ok(a))
				return -1;
			break;
		case CTA_STATUS:
		case CTA_TIMEOUT:
		case CTA_MARK:
		case CTA_ID:
			if (!sized(a, 4))
				return -1;
			break;
		case CTA_ZONE:
			if (!sized(a, 2))
				return -1;
			break;
		default:
			continue;
		}
		at[type] = a;
	}
	memset(t, 0, sizeof(t));
	for (int d = 0; d < 3; d++) {
		static const uint16_t nest[3] = { CTA_TUPLE_ORIG, CTA_TUPLE_REPLY, CTA_TUPLE_MASTER };
		const struct nlattr *n = at[nest[d]];

		if (n == NULL)
			continue;
		if (tuple(n, &t[d]) != 0 ||
		    ((t[d].has & T_ITYPE) && !icmp_ok(g->nfgen_family, &t[0])))
			return -1;
		if (d < 2) {
			tuple_set(ct, d, g->nfgen_family, &t[d], &t[0]);
		} else {	/* the master's: its ICMP attributes only (the library's marks) */
			icmp_mark(ct, &t[2], &t[0]);
			ports_set(ct, 1, &t[1]);
		}
	}
	if (at[CTA_STATUS] != NULL)
		nfct_set_attr_u32(ct, ATTR_STATUS, ntohl(mnl_attr_get_u32(at[CTA_STATUS])));
	if (at[CTA_PROTOINFO] != NULL && protoinfo(ct, at[CTA_PROTOINFO]) != 0)
		return -1;
	if (at[CTA_TIMEOUT] != NULL)
		nfct_set_attr_u32(ct, ATTR_TIMEOUT, ntohl(mnl_attr_get_u32(at[CTA_TIMEOUT])));
	if (at[CTA_MARK] != NULL)
		nfct_set_attr_u32(ct, ATTR_MARK, ntohl(mnl_attr_get_u32(at[CTA_MARK])));
	if (at[CTA_ID] != NULL)
		nfct_set_attr_u32(ct, ATTR_ID, ntohl(mnl_attr_get_u32(at[CTA_ID])));
	if (at[CTA_HELP] != NULL && helper(ct, at[CTA_HELP]) != 0)
		return -1;
	if (at[CTA_ZONE] != NULL)
		nfct_set_attr_u16(ct, ATTR_ZONE, ntohs(mnl_attr_get_u16(at[CTA_ZONE])));
	if (at[CTA_TIMESTAMP] != NULL && timestamp(ct, nlh, at[CTA_TIMESTAMP]) != 0)
		return -1;
	return 0;
}
