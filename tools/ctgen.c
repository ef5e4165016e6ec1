/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctgen: the command line, tuples, messages and acks of flowcut-ctgen
 * (ctgen.h says what it makes and why).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>

#include "ctgen.h"
#include "fd_nl.h"

#define TCP_WSCALE 7
#define TCP_FLAGS (IP_CT_TCP_FLAG_WINDOW_SCALE | IP_CT_TCP_FLAG_SACK_PERM)

static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* s as a number 0 to max (decimal, 0x hex): 0 or -EINVAL. */
static int
number(const char *what, const char *s, unsigned long max, unsigned long *v, char *err,
       size_t len)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 0);
	if (errno || *end || end == s || *s == '-' || *v > max)
		return fail(err, len, "%s: '%s' is not a number from 0 to %lu", what, s, max);
	return 0;
}

int
ctg_prefix(const char *s, uint8_t family, uint8_t addr[16], unsigned int *len, char *err,
	   size_t errlen)
{
	unsigned int bits = family == AF_INET ? 32 : 128;
	const char *slash = strchr(s, '/');
	char text[INET6_ADDRSTRLEN];
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);

	if (alen >= sizeof(text) ||
	    (memcpy(text, s, alen), text[alen] = '\0', inet_pton(family, text, addr) != 1)) {
		if (slash)
			return fail(err, errlen, "'%s': '%.*s' is not an IPv%c address", s,
				    (int)alen, s, family == AF_INET ? '4' : '6');
		return fail(err, errlen, "'%s' is not an IPv%c address", s,
			    family == AF_INET ? '4' : '6');
	}
	*len = bits;
	if (slash) {
		unsigned long v;
		char *end;

		errno = 0;
		v = strtoul(slash + 1, &end, 10);
		if (errno || *end || end == slash + 1 || slash[1] == '-' || slash[1] == '+' ||
		    v > bits)
			return fail(err, errlen, "'%s': the length '%s' is not 0 to %u", s,
				    slash + 1, bits);
		*len = (unsigned int)v;
	}
	return 0;
}

/* ctg_prefix for option opt, its name and the family in front of the error */
static int
address(const char *opt, const char *s, uint8_t family, uint8_t addr[16], unsigned int *len,
	char *err, size_t errlen)
{
	int n = snprintf(err, errlen, "%s (--family %c): ", opt, family == AF_INET ? '4' : '6');

	if (n < 0 || (size_t)n >= errlen)
		n = 0;
	return ctg_prefix(s, family, addr, len, err + n, errlen - (size_t)n);
}

uint64_t
ctg_hosts(const struct ctg_opts *o)
{
	unsigned int host_bits = (o->family == AF_INET ? 32 : 128) - o->src_len;

	return host_bits >= 32 ? UINT64_C(1) << 32 : UINT64_C(1) << host_bits;
}

/* the states o's sources and ports hold, at most CTG_N_MAX + 1 */
static uint64_t
room(const struct ctg_opts *o)
{
	uint64_t r = ctg_hosts(o) * (65536u - o->sport);

	if (r > CTG_N_MAX)
		return CTG_N_MAX + 1;
	return r * (65536u - o->dport);
}

int
ctg_parse(struct ctg_opts *o, int argc, char *const *argv, char *err, size_t errlen)
{
	const char *src = NULL, *dst = NULL;
	unsigned int dst_len;
	unsigned long v;
	int rc;

	*o = (struct ctg_opts){ .timeout = 600, .family = AF_INET, .proto = IPPROTO_UDP,
				.sport = 1024, .dport = 10000, .batch = 64 };
	if (argc < 2)
		return fail(err, errlen, "no N (the states to make) given");
	rc = number("N", argv[1], CTG_N_MAX, &o->n, err, errlen);
	for (int i = 2; rc == 0 && i < argc; i += 2) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "--delete") == 0) {
			o->del = true;
			i--;	/* no value */
			continue;
		}
		if (strncmp(opt, "--", 2) != 0 || val == NULL) {
			rc = fail(err, errlen, strncmp(opt, "--", 2) == 0 ? "%s: no value given"
					       : "'%s' is no option (N comes first)", opt);
		} else if (strcmp(opt, "--mark") == 0) {
			rc = number(opt, val, UINT32_MAX, &v, err, errlen);
			o->mark = (uint32_t)v;
		} else if (strcmp(opt, "--timeout") == 0) {
			rc = number(opt, val, 86400, &v, err, errlen);
			o->timeout = (uint32_t)v;
		} else if (strcmp(opt, "--sport") == 0 || strcmp(opt, "--dport") == 0) {
			rc = number(opt, val, 65535, &v, err, errlen);
			if (rc == 0 && v == 0)
				rc = fail(err, errlen, "%s: port 0 is no port", opt);
			*(opt[2] == 's' ? &o->sport : &o->dport) = (uint16_t)v;
		} else if (strcmp(opt, "--rate") == 0) {
			rc = number(opt, val, 100000000, &o->rate, err, errlen);
		} else if (strcmp(opt, "--batch") == 0) {
			rc = number(opt, val, CTG_BATCH_MAX, &v, err, errlen);
			if (rc == 0 && v == 0)
				rc = fail(err, errlen, "--batch: '%s' is not 1 to %u", val,
					  CTG_BATCH_MAX);
			o->batch = (unsigned int)v;
		} else if (strcmp(opt, "--proto") == 0) {
			if (strcmp(val, "udp") == 0 || strcmp(val, "tcp") == 0)
				o->proto = val[0] == 'u' ? IPPROTO_UDP : IPPROTO_TCP;
			else
				rc = fail(err, errlen, "--proto: '%s' is not udp or tcp", val);
		} else if (strcmp(opt, "--family") == 0) {
			if (strcmp(val, "4") == 0 || strcmp(val, "6") == 0)
				o->family = val[0] == '4' ? AF_INET : AF_INET6;
			else
				rc = fail(err, errlen, "--family: '%s' is not 4 or 6", val);
		} else if (strcmp(opt, "--src") == 0) {
			src = val;
		} else if (strcmp(opt, "--dst") == 0) {
			dst = val;
		} else {
			rc = fail(err, errlen, "'%s' is no option", opt);
		}
	}
	if (rc != 0)
		return rc;
	/* the addresses last: --family may come after them */
	if (src == NULL)
		src = o->family == AF_INET ? "198.18.0.2" : "2001:2::2";
	if (dst == NULL)
		dst = o->family == AF_INET ? "198.18.1.2" : "2001:2:0:1::2";
	if ((rc = address("--src", src, o->family, o->src, &o->src_len, err, errlen)) != 0 ||
	    (rc = address("--dst", dst, o->family, o->dst, &dst_len, err, errlen)) != 0)
		return rc;
	if (dst_len != (o->family == AF_INET ? 32u : 128u))
		return fail(err, errlen, "--dst: '%s' is one address, not a prefix", dst);
	err[0] = '\0';
	if (room(o) < o->n)
		return fail(err, errlen, "N: %lu states do not fit %llu source(s) x %u source "
			    "port(s) from %u x %u destination port(s) from %u", o->n,
			    (unsigned long long)ctg_hosts(o), 65536u - o->sport, o->sport,
			    65536u - o->dport, o->dport);
	return 0;
}

void
ctg_tuple(const struct ctg_opts *o, unsigned long i, struct fd_tuple *t)
{
	uint64_t hosts = ctg_hosts(o), nsports = 65536u - o->sport, r = i / hosts;
	uint32_t mask = (uint32_t)(hosts - 1), low;
	size_t at = o->family == AF_INET ? 0 : 12;	/* the address's low 32 bits */

	memset(t, 0, sizeof(*t));
	t->family = o->family == AF_INET ? 4 : 6;
	t->proto = o->proto;
	memcpy(t->src, o->src, sizeof(t->src));
	memcpy(t->dst, o->dst, sizeof(t->dst));
	/* the source: A + i % H, inside A's prefix */
	memcpy(&low, t->src + at, 4);
	low = ntohl(low);
	low = htonl((low & ~mask) | ((low + (uint32_t)(i % hosts)) & mask));
	memcpy(t->src + at, &low, 4);
	t->sport = htons((uint16_t)(o->sport + r % nsports));
	t->dport = htons((uint16_t)(o->dport + r / nsports));
}

/* ct's tuples (original, and the reply as its reverse) set to t's. */
static void
set_tuple(struct nf_conntrack *ct, const struct fd_tuple *t, bool reply)
{
	uint8_t af = t->family == 4 ? AF_INET : AF_INET6;

	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, af);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, t->proto);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, t->sport);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, t->dport);
	if (af == AF_INET) {
		nfct_set_attr(ct, ATTR_ORIG_IPV4_SRC, t->src);
		nfct_set_attr(ct, ATTR_ORIG_IPV4_DST, t->dst);
	} else {
		nfct_set_attr(ct, ATTR_ORIG_IPV6_SRC, t->src);
		nfct_set_attr(ct, ATTR_ORIG_IPV6_DST, t->dst);
	}
	if (!reply)
		return;
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, af);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, t->proto);
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, t->dport);
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, t->sport);
	if (af == AF_INET) {
		nfct_set_attr(ct, ATTR_REPL_IPV4_SRC, t->dst);
		nfct_set_attr(ct, ATTR_REPL_IPV4_DST, t->src);
	} else {
		nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, t->dst);
		nfct_set_attr(ct, ATTR_REPL_IPV6_DST, t->src);
	}
}

void
ctg_state(struct nf_conntrack *ct, const struct fd_tuple *t, uint32_t status, uint32_t timeout,
	  uint32_t mark)
{
	set_tuple(ct, t, true);
	nfct_set_attr_u32(ct, ATTR_STATUS, status);
	if (timeout != 0)
		nfct_set_attr_u32(ct, ATTR_TIMEOUT, timeout);
	nfct_set_attr_u32(ct, ATTR_MARK, mark);
}

struct nlmsghdr *
ctg_build(void *buf, size_t room_bytes, const struct ctg_opts *o, unsigned long i, uint32_t seq)
{
	struct nf_conntrack *ct;
	struct fd_tuple t;
	int rc;
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfh;

	if (room_bytes < CTG_MSG_MAX) {
		errno = ENOSPC;
		return NULL;
	}
	ct = nfct_new();
	if (ct == NULL)
		return NULL;
	ctg_tuple(o, i, &t);
	if (o->del)
		set_tuple(ct, &t, false);
	else
		ctg_state(ct, &t, IPS_ASSURED | IPS_SEEN_REPLY, o->timeout, o->mark);
	if (!o->del && o->proto == IPPROTO_TCP) {
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_ORIG, TCP_WSCALE);
		nfct_set_attr_u8(ct, ATTR_TCP_WSCALE_REPL, TCP_WSCALE);
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_ORIG, TCP_FLAGS);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_ORIG, TCP_FLAGS);
		nfct_set_attr_u8(ct, ATTR_TCP_FLAGS_REPL, TCP_FLAGS);
		nfct_set_attr_u8(ct, ATTR_TCP_MASK_REPL, TCP_FLAGS);
	}
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) |
			  (o->del ? IPCTNL_MSG_CT_DELETE : IPCTNL_MSG_CT_NEW);
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
			   (o->del ? 0 : NLM_F_CREATE | NLM_F_EXCL);
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = o->family;
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	rc = nfct_nlmsg_build(nlh, ct);
	nfct_destroy(ct);
	if (rc < 0)
		return NULL;
	if (nlh->nlmsg_len > CTG_MSG_MAX) {
		errno = EMSGSIZE;
		return NULL;
	}
	return nlh;
}

/* One message of an answer datagram. */
static int
ack(const struct nlmsghdr *nlh, void *arg)
{
	struct ctg_acks *a = arg;
	const struct nlmsgerr *e;
	uint32_t k = nlh->nlmsg_seq - a->first;

	if (nlh->nlmsg_type != NLMSG_ERROR || k >= a->n || a->got[k])
		return 0;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	a->rc[k] = e->error <= 0 ? e->error : -EPROTO;
	a->got[k] = true;
	return 1;
}

int
ctg_acks(struct ctg_acks *a, const void *buf, size_t len)
{
	return fd_nl_walk(buf, len, ack, a);
}
