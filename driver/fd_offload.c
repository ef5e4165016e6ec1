/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_offload: see fd_offload.h.
 *
 * Libraries: libnetfilter_conntrack (events, dumps, updates), fd_route
 * (libmnl rtnetlink), the link.  Offloaded connections are kept in two
 * binary trees of libc's tsearch(), by conntrack id and by fast-path id.
 */
#include "fd_offload.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>

#include <flowcut/fc_cmd.h>

#include "fd_route.h"

/*
 * The per-direction TCP tracking flags of <linux/netfilter/nf_conntrack_tcp.h>
 * (uapi), which cannot be included beside libnetfilter_conntrack_tcp.h:
 * both declare enum tcp_conntrack.
 */
#define CT_TCP_FLAG_BE_LIBERAL 0x08
#define CT_TCP_FLAG_MAXACK_SET 0x20

#define CALL_MS 2000
#define RCVBUF (8u << 20)
#define MAX_NHOPS 4096

/* One offloaded connection. */
struct off_entry {
	uint32_t ct_id;
	uint64_t fp_id;
	uint64_t last_seen;		/* the newest the coprocessor reported */
	struct nf_conntrack *tuple;	/* the original tuple, for updates */
	uint8_t l4proto;
};

struct nhop {
	uint16_t port;
	uint8_t dmac[6];
};

struct fd_offload {
	struct lk *lk;
	struct fd_offload_cfg cfg;
	struct nfct_handle *ev;		/* events */
	struct nfct_handle *q;		/* queries */
	struct fd_route *route;
	void *by_ct;			/* tsearch root: struct off_entry by ct_id */
	void *by_fp;			/* tsearch root: struct off_entry by fp_id */
	unsigned int nentries;
	struct nhop nhops[MAX_NHOPS];
	unsigned int nnhops;
	bool need_resync;		/* the fast path may hold what we do not know of */
	bool draining;			/* events being thrown away before a dump */
	uint32_t timeout[256];		/* conntrack's timeout per L4 protocol, s */
	struct fd_offload_stats st;
	/* a dump's connections, gathered before they are looked at */
	struct nf_conntrack **dumped;
	size_t ndumped, capdumped;
};

static int
cmp_ct(const void *a, const void *b)
{
	uint32_t x = ((const struct off_entry *)a)->ct_id, y = ((const struct off_entry *)b)->ct_id;

	return x < y ? -1 : x > y;
}

static int
cmp_fp(const void *a, const void *b)
{
	uint64_t x = ((const struct off_entry *)a)->fp_id, y = ((const struct off_entry *)b)->fp_id;

	return x < y ? -1 : x > y;
}

static uint32_t
sysctl_u32(const char *name, uint32_t dflt)
{
	char path[256];
	unsigned int v;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	f = fopen(path, "r");
	if (f == NULL)
		return dflt;
	if (fscanf(f, "%u", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

static int
call(struct fd_offload *o, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	return lk_call(o->lk, op, p, len, ans, cap, NULL, CALL_MS);
}

/* ---- the table of offloaded connections ---- */

static struct off_entry *
find_ct(struct fd_offload *o, uint32_t ct_id)
{
	struct off_entry k = { .ct_id = ct_id }, **e = tfind(&k, &o->by_ct, cmp_ct);

	return e ? *e : NULL;
}

static struct off_entry *
find_fp(struct fd_offload *o, uint64_t fp_id)
{
	struct off_entry k = { .fp_id = fp_id }, **e = tfind(&k, &o->by_fp, cmp_fp);

	return e ? *e : NULL;
}

static void
forget(struct fd_offload *o, struct off_entry *e)
{
	tdelete(e, &o->by_ct, cmp_ct);
	tdelete(e, &o->by_fp, cmp_fp);
	nfct_destroy(e->tuple);
	free(e);
	o->nentries--;
}

static void
free_entry(void *p)
{
	struct off_entry *e = p;

	nfct_destroy(e->tuple);
	free(e);
}

static void
noop_free(void *p)
{
	(void)p;
}

/* Forgets every entry (the fast path is being emptied or was). */
static void
forget_all(struct fd_offload *o)
{
	tdestroy(o->by_fp, noop_free);
	tdestroy(o->by_ct, free_entry);
	o->by_fp = o->by_ct = NULL;
	o->nentries = 0;
}

/* ---- conntrack ---- */

/* A conntrack object holding only the original tuple (and zone): for updates. */
static struct nf_conntrack *
tuple_of(const struct nf_conntrack *ct)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return NULL;
	nfct_copy(t, ct, NFCT_CP_ORIG);
	if (nfct_attr_is_set(ct, ATTR_ZONE))
		nfct_set_attr_u16(t, ATTR_ZONE, nfct_get_attr_u16(ct, ATTR_ZONE));
	return t;
}

/* Sets (or clears) mark bits of a state in conntrack. */
static void
ct_set_mark(struct fd_offload *o, const struct nf_conntrack *tuple, uint32_t mark)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return;
	nfct_copy(t, tuple, NFCT_CP_ORIG);
	nfct_set_attr_u32(t, ATTR_MARK, mark);
	nfct_query(o->q, NFCT_Q_UPDATE, t);	/* gone already: nothing to mark */
	nfct_destroy(t);
}

/* The state's current mark, or 0 when it is gone. */
static int
ct_mark_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	(void)type;
	*(uint32_t *)data = nfct_get_attr_u32(ct, ATTR_MARK);
	return NFCT_CB_CONTINUE;
}

/* Takes our bit off a state's mark: it must pass the rules again to come back. */
static void
ct_unmark(struct fd_offload *o, const struct nf_conntrack *tuple)
{
	uint32_t mark = 0;
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return;
	nfct_copy(t, tuple, NFCT_CP_ORIG);
	nfct_callback_register(o->q, NFCT_T_ALL, ct_mark_cb, &mark);
	if (nfct_query(o->q, NFCT_Q_GET, t) == 0 && (mark & o->cfg.mark_bit))
		ct_set_mark(o, tuple, mark & ~o->cfg.mark_bit);
	nfct_callback_unregister(o->q);
	nfct_destroy(t);
}

/*
 * A TCP state whose segments the host stops seeing: conntrack's window
 * tracking (td_end, td_maxend, td_maxack per direction) falls behind the
 * moment the fast path takes the connection, and when the connection comes
 * back to the host (a FIN, a give-back, a new firewall revision, an idle
 * timeout, a restart) its segments would be called INVALID and dropped by
 * any ruleset's `ct state invalid drop`.  So, as the kernel's own flowtable
 * does for the states it offloads (nft_flow_offload.c sets
 * IP_CT_TCP_FLAG_BE_LIBERAL on both directions; flow_offload_fixup_tcp()
 * clears IP_CT_TCP_FLAG_MAXACK_SET when a flow leaves), the state is made
 * liberal in both directions - out-of-window segments are accepted, the
 * rest of the tracking (states, closes) goes on - and its stale "highest
 * ACK seen" is forgotten, or a valid RST would be taken for an old one.
 * Only the offloaded states: the sysctl nf_conntrack_tcp_be_liberal would
 * loosen every state of the host.  Called before the connection is
 * offloaded (no moment where the state is behind and strict) and again
 * when it leaves (the ACK seen last is stale by then).  Returns 0 or a
 * negative errno (-ENOENT: the state is gone).
 */
static int
ct_tcp_loosen(struct fd_offload *o, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = nfct_new();
	int rc;

	if (t == NULL)
		return -ENOMEM;
	nfct_copy(t, tuple, NFCT_CP_ORIG);
	nfct_set_attr_u8(t, ATTR_TCP_FLAGS_ORIG, CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(t, ATTR_TCP_MASK_ORIG,
			 CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET);
	nfct_set_attr_u8(t, ATTR_TCP_FLAGS_REPL, CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(t, ATTR_TCP_MASK_REPL,
			 CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET);
	rc = nfct_query(o->q, NFCT_Q_UPDATE, t) == 0 ? 0 : -errno;
	nfct_destroy(t);
	return rc;
}

/* ---- offloading one state ---- */

static int
port_of(const struct fd_offload *o, unsigned int ifindex)
{
	for (unsigned int p = 0; p < o->cfg.nports; p++)
		if (o->cfg.ifindex[p] == ifindex)
			return (int)p;
	return -1;
}

/* The next hop id for (port, MAC), programmed once. */
static int
nhop_for(struct fd_offload *o, unsigned int port, const uint8_t mac[6], uint32_t *id)
{
	struct fc_cmd_nhop n = { .port = (uint16_t)port, .mtu = 1500, .flags = FC_NHOP_RESOLVED };
	int rc;

	for (unsigned int i = 0; i < o->nnhops; i++)
		if (o->nhops[i].port == port && memcmp(o->nhops[i].dmac, mac, 6) == 0) {
			*id = i;
			return 0;
		}
	if (o->nnhops == MAX_NHOPS)
		return -ENOSPC;
	n.id = o->nnhops;
	memcpy(n.dmac, mac, 6);
	memcpy(n.smac, o->cfg.mac[port], 6);
	rc = call(o, FC_CMD_NHOP_PROGRAM, &n, sizeof(n), NULL, 0);
	if (rc != 0)
		return rc;
	o->nhops[o->nnhops].port = (uint16_t)port;
	memcpy(o->nhops[o->nnhops].dmac, mac, 6);
	*id = o->nnhops++;
	return 0;
}

/* Fills a wire key from one of conntrack's tuples. */
static void
key_of(const struct nf_conntrack *ct, bool reply, uint16_t port, struct fc_key *k)
{
	uint8_t l3 = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO);
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	memset(k, 0, sizeof(*k));
	k->family = l3 == AF_INET ? 4 : 6;
	k->proto = l4;
	k->port = port;
	if (l3 == AF_INET) {
		uint32_t s = nfct_get_attr_u32(ct, reply ? ATTR_REPL_IPV4_SRC : ATTR_ORIG_IPV4_SRC);
		uint32_t d = nfct_get_attr_u32(ct, reply ? ATTR_REPL_IPV4_DST : ATTR_ORIG_IPV4_DST);

		memcpy(k->src, &s, 4);
		memcpy(k->dst, &d, 4);
	} else {
		memcpy(k->src, nfct_get_attr(ct, reply ? ATTR_REPL_IPV6_SRC : ATTR_ORIG_IPV6_SRC), 16);
		memcpy(k->dst, nfct_get_attr(ct, reply ? ATTR_REPL_IPV6_DST : ATTR_ORIG_IPV6_DST), 16);
	}
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

/* Does conntrack say the host accepted this and saw it work? */
static bool
qualifies(const struct fd_offload *o, const struct nf_conntrack *ct)
{
	uint32_t status = nfct_get_attr_u32(ct, ATTR_STATUS);
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);

	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit))
		return false;		/* not (or not again) through the rules */
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

/* The address a direction's frames are sent to, for its route. */
static const uint8_t *
addr(const struct nf_conntrack *ct, enum nf_conntrack_attr v4, enum nf_conntrack_attr v6,
     uint32_t *tmp)
{
	if (nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO) == AF_INET) {
		*tmp = nfct_get_attr_u32(ct, v4);
		return (const uint8_t *)tmp;
	}
	return nfct_get_attr(ct, v6);
}

static void
offload(struct fd_offload *o, const struct nf_conntrack *ct)
{
	uint32_t ct_id = nfct_get_attr_u32(ct, ATTR_ID), a4, b4;
	int family = nfct_get_attr_u8(ct, ATTR_ORIG_L3PROTO) == AF_INET ? 4 : 6;
	uint8_t l4 = nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO);
	struct fc_cmd_flow_create c = { .verdict = FC_VERDICT_CUT_THRU };
	struct fc_ans_conn_id ans;
	struct fd_hop to_orig_src, to_reply_src;
	int pa, pb, rc;
	struct off_entry *e;
	uint8_t action;

	if (find_ct(o, ct_id) != NULL || !qualifies(o, ct))
		return;
	/* orig frames come in facing orig.src and leave towards reply.src */
	if (fd_route_get(o->route, family,
			 addr(ct, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, &a4), &to_orig_src) != 0 ||
	    fd_route_get(o->route, family,
			 addr(ct, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, &b4), &to_reply_src) != 0)
		return;
	pa = port_of(o, to_orig_src.ifindex);
	pb = port_of(o, to_reply_src.ifindex);
	if (pa < 0 || pb < 0 || !to_orig_src.resolved || !to_reply_src.resolved)
		return;
	key_of(ct, false, (uint16_t)pa, &c.mf[0].key);
	key_of(ct, true, (uint16_t)pb, &c.mf[1].key);
	if (nhop_for(o, (unsigned int)pb, to_reply_src.mac, &c.mf[0].nhop) != 0 ||
	    nhop_for(o, (unsigned int)pa, to_orig_src.mac, &c.mf[1].nhop) != 0)
		return;
	/* a tunnel's connection stays FWD: its encryption under IPS is untried */
	action = o->cfg.cut_in_hardware ? FC_ACTION_IPS : FC_ACTION_FWD;
	if (l4 == IPPROTO_ESP ||
	    (l4 == IPPROTO_UDP && (ntohs(c.mf[0].key.dport) == 4500 ||
				   ntohs(c.mf[0].key.sport) == 4500)))
		action = FC_ACTION_FWD;
	for (int d = 0; d < 2; d++) {
		c.mf[d].action = action;
		c.mf[d].timeout_s = o->cfg.timeout_s;
	}
	if (l4 == IPPROTO_TCP) {
		int err = ct_tcp_loosen(o, ct);

		if (err != 0) {
			/* strict and offloaded, it would be dropped when it comes back */
			fprintf(stderr, "flowcutd: conntrack state %u not made liberal (%s): "
				"left to the host\n", ct_id, strerror(-err));
			return;
		}
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_ORIG))
			c.mf[0].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_ORIG);
		if (nfct_attr_is_set(ct, ATTR_TCP_WSCALE_REPL))
			c.mf[1].wscale = nfct_get_attr_u8(ct, ATTR_TCP_WSCALE_REPL);
	}
	rc = call(o, FC_CMD_FLOW_CREATE_FP, &c, sizeof(c), &ans, sizeof(ans));
	if (rc != 0) {
		o->st.refused++;
		/* no answer is not "no": it may still be made - take stock again */
		if (rc == -ETIMEDOUT || rc == -ECONNRESET || rc == -ENOBUFS)
			o->need_resync = true;
		return;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL || (e->tuple = tuple_of(ct)) == NULL) {
		struct fc_cmd_conn_id id = { .id = ans.id };

		free(e);
		call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), NULL, 0);
		return;
	}
	e->ct_id = ct_id;
	e->fp_id = ans.id;
	e->l4proto = l4;
	if (tsearch(e, &o->by_ct, cmp_ct) == NULL || tsearch(e, &o->by_fp, cmp_fp) == NULL) {
		struct fc_cmd_conn_id id = { .id = ans.id };

		/* untracked it must not live: out again, and take stock */
		tdelete(e, &o->by_ct, cmp_ct);
		nfct_destroy(e->tuple);
		free(e);
		if (call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), NULL, 0) != 0)
			o->need_resync = true;
		return;
	}
	o->nentries++;
	o->st.offloaded++;
}

/* The state is gone: out of the fast path at once. */
static void
state_gone(struct fd_offload *o, uint32_t ct_id)
{
	struct off_entry *e = find_ct(o, ct_id);
	struct fc_cmd_conn_id id;

	int rc;

	if (e == NULL)
		return;
	id.id = e->fp_id;
	rc = call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), NULL, 0);
	if (rc != 0 && rc != -ENOENT)
		o->need_resync = true;	/* it may still forward: take everything out */
	forget(o, e);
	o->st.removed++;
}

static int
ct_get_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	(void)type;
	*(struct nf_conntrack **)data = nfct_clone(ct);
	return NFCT_CB_STOP;
}

/* The whole state as conntrack holds it now, or NULL (gone, or no memory). */
static struct nf_conntrack *
ct_get(struct fd_offload *o, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = nfct_new(), *got = NULL;

	if (t == NULL)
		return NULL;
	nfct_copy(t, tuple, NFCT_CP_ORIG);
	nfct_callback_register(o->q, NFCT_T_ALL, ct_get_cb, &got);
	if (nfct_query(o->q, NFCT_Q_GET, t) != 0 && got != NULL) {
		nfct_destroy(got);
		got = NULL;
	}
	nfct_callback_unregister(o->q);
	nfct_destroy(t);
	return got;
}

/*
 * An event carries what changed: one that only sets the mark (the rules
 * passed a connection again, after a ruleset change or once it came back
 * to the host) has no TCP state in it.  Such a state is read whole before
 * it is judged.
 */
static void
event_update(struct fd_offload *o, const struct nf_conntrack *ct)
{
	struct nf_conntrack *whole;

	if (nfct_get_attr_u8(ct, ATTR_ORIG_L4PROTO) != IPPROTO_TCP ||
	    nfct_attr_is_set(ct, ATTR_TCP_STATE)) {
		offload(o, ct);
		return;
	}
	if (!(nfct_get_attr_u32(ct, ATTR_MARK) & o->cfg.mark_bit) ||
	    find_ct(o, nfct_get_attr_u32(ct, ATTR_ID)) != NULL)
		return;			/* it would not qualify, or is in already */
	whole = ct_get(o, ct);
	if (whole == NULL)
		return;			/* gone: its DESTROY follows */
	offload(o, whole);
	nfct_destroy(whole);
}

static int
event_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct fd_offload *o = data;

	if (o->draining)
		return NFCT_CB_CONTINUE;	/* older than the dump that follows */
	if (type == NFCT_T_DESTROY)
		state_gone(o, nfct_get_attr_u32(ct, ATTR_ID));
	else
		event_update(o, ct);
	return NFCT_CB_CONTINUE;
}

static int
dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct fd_offload *o = data;

	(void)type;
	if (o->ndumped == o->capdumped) {
		size_t cap = o->capdumped ? o->capdumped * 2 : 256;
		struct nf_conntrack **p = realloc(o->dumped, cap * sizeof(*p));

		if (p == NULL)
			return NFCT_CB_CONTINUE;	/* it will be offloaded on its next event */
		o->dumped = p;
		o->capdumped = cap;
	}
	o->dumped[o->ndumped] = nfct_clone(ct);
	if (o->dumped[o->ndumped] != NULL)
		o->ndumped++;
	return NFCT_CB_CONTINUE;
}

/* ---- the interface ---- */

struct fd_offload *
fd_offload_open(struct lk *lk, const struct fd_offload_cfg *cfg)
{
	struct fd_offload *o = calloc(1, sizeof(*o));

	if (o == NULL)
		return NULL;
	o->lk = lk;
	o->cfg = *cfg;
	o->ev = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE |
				     NF_NETLINK_CONNTRACK_DESTROY);
	o->q = nfct_open(CONNTRACK, 0);
	o->route = fd_route_open();
	if (o->ev == NULL || o->q == NULL || o->route == NULL) {
		int err = errno;

		fd_offload_close(o);
		errno = err;
		return NULL;
	}
	/* a burst of events must fit; if it does not, ENOBUFS says so */
	nfnl_rcvbufsiz(nfct_nfnlh(o->ev), RCVBUF);
	fcntl(nfct_fd(o->ev), F_SETFL, fcntl(nfct_fd(o->ev), F_GETFL) | O_NONBLOCK);
	nfct_callback_register(o->ev, NFCT_T_ALL, event_cb, o);
	o->timeout[IPPROTO_TCP] = sysctl_u32("nf_conntrack_tcp_timeout_established", 432000);
	o->timeout[IPPROTO_UDP] = sysctl_u32("nf_conntrack_udp_timeout_stream", 120);
	o->timeout[IPPROTO_ICMP] = sysctl_u32("nf_conntrack_icmp_timeout", 30);
	o->timeout[IPPROTO_ICMPV6] = sysctl_u32("nf_conntrack_icmpv6_timeout", 30);
	return o;
}

void
fd_offload_close(struct fd_offload *o)
{
	if (o == NULL)
		return;
	forget_all(o);
	if (o->ev)
		nfct_close(o->ev);
	if (o->q)
		nfct_close(o->q);
	fd_route_close(o->route);
	free(o->dumped);
	free(o);
}

int
fd_offload_fd(const struct fd_offload *o)
{
	return nfct_fd(o->ev);
}

void
fd_offload_events(struct fd_offload *o)
{
	if (nfct_catch(o->ev) < 0 && errno == ENOBUFS) {
		/* events were lost: the two tables may disagree, so reconcile */
		fprintf(stderr, "flowcutd: conntrack events lost; reconciling with a dump\n");
		fd_offload_resync(o);
	}
	if (o->need_resync)
		fd_offload_resync(o);
}

/*
 * Throws away the events queued now: the kernel reports ENOBUFS before
 * the older events it still holds, and those, replayed after a dump, would
 * offload states the dump knows are gone.
 */
static void
events_drain(struct fd_offload *o)
{
	int rc, rounds = 0;

	o->draining = true;
	do	/* each round reads until the socket is empty or overflowed again */
		rc = nfct_catch(o->ev);
	while (rc < 0 && errno == ENOBUFS && ++rounds < 64);
	o->draining = false;
}

/* Dumps conntrack into o->dumped (the caller destroys them). */
static void
dump_all(struct fd_offload *o)
{
	int family = AF_UNSPEC;

	nfct_callback_register(o->q, NFCT_T_ALL, dump_cb, o);
	o->ndumped = 0;
	nfct_query(o->q, NFCT_Q_DUMP, &family);
	nfct_callback_unregister(o->q);
}

void
fd_offload_resync(struct fd_offload *o)
{
	struct fc_cmd_range r = { .first = 0, .max = FC_RANGE_MAX };

	o->st.resyncs++;
	o->need_resync = true;	/* until it got through */
	o->nnhops = 0;		/* programmed again as connections need them */
	events_drain(o);
	/* nothing in the fast path may outlive its state: take everything out */
	for (;;) {
		struct fc_ans_range a;
		int rc = call(o, FC_CMD_CONN_READ_RANGE, &r, sizeof(r), &a, sizeof(a));

		if (rc != 0 || a.count > FC_RANGE_MAX)
			return;		/* try again later; forget nothing yet */
		if (a.count == 0)
			break;
		for (uint32_t i = 0; i < a.count; i++) {
			struct fc_cmd_conn_id id = { .id = a.conn[i].id };

			rc = call(o, FC_CMD_CONN_RECLAIM_FP, &id, sizeof(id), NULL, 0);
			if (rc != 0 && rc != -ENOENT)
				return;
		}
		if (a.next <= r.first)
			break;
		r.first = a.next;
	}
	forget_all(o);
	o->need_resync = false;
	/* then what conntrack holds */
	dump_all(o);
	for (size_t i = 0; i < o->ndumped; i++) {
		offload(o, o->dumped[i]);
		nfct_destroy(o->dumped[i]);
	}
	o->ndumped = 0;
}

void
fd_offload_fp_event(struct fd_offload *o, const struct lk_event *ev)
{
	struct off_entry *e = find_fp(o, ev->id);

	if (e == NULL)
		return;
	if (ev->type == FC_EV_GIVEN_BACK && ev->reason == FC_REASON_TCP_MAX_RETRANS) {
		/* a stalled sender, a lost segment: the host has seen it; go on */
		struct fc_cmd_conn_id id = { .id = e->fp_id };

		if (call(o, FC_CMD_CONN_REVIVE_FP, &id, sizeof(id), NULL, 0) == 0) {
			o->st.revived++;
			return;
		}
	}
	/* a close, aged out or removed: let go; back only through the rules again */
	if (e->l4proto == IPPROTO_TCP)
		ct_tcp_loosen(o, e->tuple);	/* gone already (-ENOENT): nothing to fix */
	ct_unmark(o, e->tuple);
	forget(o, e);
}

static void
refresh_one(const void *node, VISIT which, void *data)
{
	struct fd_offload *o = data;
	struct off_entry *e = *(struct off_entry *const *)node;
	struct fc_cmd_conn_id id = { .id = e->fp_id };
	struct fc_conn_info ci;
	uint64_t seen;

	if (which != postorder && which != leaf)
		return;
	if (call(o, FC_CMD_CONN_READ_BY_ID, &id, sizeof(id), &ci, sizeof(ci)) != 0)
		return;
	seen = ci.mf[0].stats.last_seen > ci.mf[1].stats.last_seen ? ci.mf[0].stats.last_seen
								    : ci.mf[1].stats.last_seen;
	if (seen > e->last_seen) {
		struct nf_conntrack *t = nfct_new();

		e->last_seen = seen;
		if (t == NULL)
			return;
		nfct_copy(t, e->tuple, NFCT_CP_ORIG);
		nfct_set_attr_u32(t, ATTR_TIMEOUT, o->timeout[e->l4proto] ? o->timeout[e->l4proto]
									  : 120);
		if (nfct_query(o->q, NFCT_Q_UPDATE, t) == 0)
			o->st.refreshed++;
		nfct_destroy(t);
	}
}

void
fd_offload_refresh(struct fd_offload *o)
{
	if (o->need_resync)
		fd_offload_resync(o);	/* an earlier one did not get through */
	twalk_r(o->by_ct, refresh_one, o);
}

void
fd_offload_ruleset_changed(struct fd_offload *o)
{
	struct fc_ans_cfg cfg;
	struct fc_cmd_rev rev;

	/*
	 * First every state's bit (offloaded or not: a state the old rules let
	 * through must pass the new ones before it counts), so only the new
	 * rules can set it again; then a revision the coprocessor has not had.
	 */
	dump_all(o);
	for (size_t i = 0; i < o->ndumped; i++) {
		uint32_t mark = nfct_get_attr_u32(o->dumped[i], ATTR_MARK);

		if (mark & o->cfg.mark_bit)
			ct_set_mark(o, o->dumped[i], mark & ~o->cfg.mark_bit);
		nfct_destroy(o->dumped[i]);
	}
	o->ndumped = 0;
	if (call(o, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &cfg, sizeof(cfg)) != 0) {
		o->need_resync = true;	/* no revision: take everything out instead */
		return;
	}
	rev.rev = cfg.fw_rev + 1;
	if (call(o, FC_CMD_FW_STATE_REV_SET, &rev, sizeof(rev), NULL, 0) != 0) {
		o->need_resync = true;
		return;
	}
	forget_all(o);
	o->st.rev_bumps++;
}

void
fd_offload_settings(struct fd_offload *o, bool cut_in_hardware, uint16_t timeout_s)
{
	o->cfg.cut_in_hardware = cut_in_hardware;
	o->cfg.timeout_s = timeout_s;
}

void
fd_offload_stats(const struct fd_offload *o, struct fd_offload_stats *out)
{
	*out = o->st;
}
