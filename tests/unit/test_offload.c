/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_offload: the binding's state machine (driver/offload) driven without
 * root.  Its conntrack I/O (struct fd_ct_io), its routes (struct
 * fd_route_io) and its commands (struct fd_cmds) are stand-ins that record
 * what the binding asks, and answer as conntrack, the host's routes and
 * the coprocessor would; the next hops are the real fd_nhop over the
 * stand-in commands, the states real libnetfilter_conntrack objects
 * (nfct_new, nfct_set_attr: no netlink).  Each row brings the binding to a
 * starting point (`given`), takes one step (`when`), and says the commands
 * that step must post (opcode and key fields, in order) and the conntrack
 * calls it must make.  The same against the real conntrack and fast path,
 * as root: tests/integration/test_driver.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>

#include <flowcut/fc_cmd.h>

#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_nhop.h"
#include "fd_offload.h"
#include "fd_offload_cut.h"
#include "fd_route.h"

#define BIT 0x40000000u		/* the mark bit the rules set */
#define LOG_MAX 2048

/* ---- what the binding did, in order: "OP field=value; ..." ---- */

static char cmd_log[LOG_MAX], ct_log[LOG_MAX];

static void
say(char *log, const char *fmt, ...)
{
	size_t len = strlen(log);
	va_list ap;

	if (len > 0)
		len += (size_t)snprintf(log + len, LOG_MAX - len, "; ");
	va_start(ap, fmt);
	vsnprintf(log + len, LOG_MAX - len, fmt, ap);
	va_end(ap);
}

/* ---- the coprocessor, as the commands see it: a table of slots ---- */

#define FP_SLOTS 8

static struct {
	bool used;
	struct fc_conn_info ci;
} fp_slot[FP_SLOTS];
static uint64_t fp_next_id;
static uint32_t fp_rev;

static int
fp_slot_of(uint64_t id)
{
	for (int i = 0; i < FP_SLOTS; i++)
		if (fp_slot[i].used && fp_slot[i].ci.id == id)
			return i;
	return -1;
}

static struct fc_conn_info *
fp_conn(uint64_t id)
{
	int i = fp_slot_of(id);

	return i < 0 ? NULL : &fp_slot[i].ci;
}

/* A connection in the coprocessor's table, as a flowcutd before may have left it. */
static uint64_t
fp_add(uint64_t id, const struct fc_mflow_spec mf[2], uint8_t verdict)
{
	for (unsigned int i = 0; i < FP_SLOTS; i++) {
		struct fc_conn_info *ci = &fp_slot[i].ci;

		if (fp_slot[i].used)
			continue;
		fp_slot[i].used = true;
		*ci = (struct fc_conn_info){ .id = id, .state = FC_CONN_VALID, .verdict = verdict,
					     .fw_rev = fp_rev };
		for (int d = 0; d < 2; d++) {
			ci->mf[d].key = mf[d].key;
			ci->mf[d].nhop = mf[d].nhop;
			ci->mf[d].action = mf[d].action;
			ci->mf[d].timeout_s = mf[d].timeout_s;
		}
		return id;
	}
	fail_msg("the stand-in coprocessor's table is full");
	return 0;
}

static uint64_t
id_of(const void *p)
{
	return ((const struct fc_cmd_conn_id *)p)->id;
}

/* One command answered: its rc, the answer in ans (*alen bytes of cap). */
static int
answer(uint16_t op, const void *p, void *ans, uint16_t cap, uint16_t *alen)
{
	const char *name = fc_cmd_name(op);
	uint8_t out[sizeof(struct fc_ans_range)];
	size_t n = 0;
	int rc = 0;

	memset(out, 0, sizeof(out));
	switch (op) {
	case FC_CMD_NHOP_PROGRAM:
		say(cmd_log, "%s port=%u", name, ((const struct fc_cmd_nhop *)p)->port);
		break;
	case FC_CMD_FLOW_CREATE_FP: {
		const struct fc_cmd_flow_create *c = p;
		struct fc_ans_conn_id a = { .id = fp_add(fp_next_id++, c->mf, c->verdict) };

		say(cmd_log, "%s sport=%u verdict=%s action=%s", name, ntohs(c->mf[0].key.sport),
		    fc_verdict_name(c->verdict), fc_action_name(c->mf[0].action));
		memcpy(out, &a, n = sizeof(a));
		break;
	}
	case FC_CMD_CONN_RECLAIM_FP:
	case FC_CMD_CONN_REVIVE_FP:
	case FC_CMD_CONN_READ_BY_ID: {
		int slot = fp_slot_of(id_of(p));

		say(cmd_log, "%s id=%" PRIu64, name, id_of(p));
		if (slot < 0)
			return -ENOENT;
		if (op == FC_CMD_CONN_READ_BY_ID) {
			memcpy(out, &fp_slot[slot].ci, n = sizeof(fp_slot[slot].ci));
		} else if (op == FC_CMD_CONN_RECLAIM_FP) {
			fp_slot[slot].used = false;
			n = sizeof(struct fc_ans_reclaim);	/* the final counts: zero here */
		}
		break;
	}
	case FC_CMD_CONN_READ_RANGE: {
		const struct fc_cmd_range *r = p;
		struct fc_ans_range *a = (struct fc_ans_range *)out;

		say(cmd_log, "%s first=%u", name, r->first);
		for (unsigned int i = r->first; i < FP_SLOTS; i++)
			if (fp_slot[i].used)
				a->conn[a->count++] = fp_slot[i].ci;
		a->next = FP_SLOTS;
		n = offsetof(struct fc_ans_range, conn) + a->count * sizeof(a->conn[0]);
		break;
	}
	case FC_CMD_FW_CFG_PARAMS_GET: {
		struct fc_ans_cfg a = { .fw_rev = fp_rev };

		say(cmd_log, "%s", name);
		memcpy(out, &a, n = sizeof(a));
		break;
	}
	case FC_CMD_FW_STATE_REV_SET:
		fp_rev = ((const struct fc_cmd_rev *)p)->rev;
		say(cmd_log, "%s rev=%u", name, fp_rev);
		break;
	default:
		say(cmd_log, "%s (not answered by the stand-in)", name);
		rc = -EOPNOTSUPP;
	}
	*alen = (uint16_t)(n < cap ? n : cap);
	if (ans != NULL)
		memcpy(ans, out, *alen);
	return rc;
}

static int
cmd_call(void *ctx, uint16_t op, const void *p, uint16_t len, void *ans, uint16_t cap)
{
	uint16_t alen;

	(void)ctx, (void)len;
	return answer(op, p, ans, cap, &alen);
}

/* Posted commands wait for the flush, as the command client's do. */
#define POSTED_MAX 64

static struct {
	uint16_t op;
	uint8_t p[sizeof(struct fc_cmd_flow_create)];
	fd_cmds_done_fn *done;
	void *dctx;
} posted[POSTED_MAX];
static unsigned int nposted;

static int
cmd_post(void *ctx, uint16_t op, const void *p, uint16_t len, fd_cmds_done_fn *done, void *dctx)
{
	(void)ctx;
	if (nposted == POSTED_MAX || len > sizeof(posted[0].p))
		return -ENOBUFS;
	posted[nposted].op = op;
	memcpy(posted[nposted].p, p, len);
	posted[nposted].done = done;
	posted[nposted++].dctx = dctx;
	return 0;
}

static int
cmd_flush(void *ctx, int ms)
{
	(void)ctx, (void)ms;
	for (unsigned int i = 0; i < nposted; i++) {
		static uint8_t ans[sizeof(struct fc_ans_range)];
		uint16_t alen;
		int rc = answer(posted[i].op, posted[i].p, ans, sizeof(ans), &alen);

		posted[i].done(posted[i].dctx, rc, ans, alen);
	}
	nposted = 0;
	return 0;
}

static const struct fd_cmds cmds = { .call = cmd_call, .post = cmd_post, .flush = cmd_flush };

/* ---- conntrack, as fd_ct_io sees it: the states it holds, events queued ---- */

#define HOST_MAX 8

static struct nf_conntrack *host[HOST_MAX];	/* the states conntrack holds */
static struct {
	enum fd_ct_event type;
	struct nf_conntrack *ct;
} evq[HOST_MAX];
static unsigned int nevq;

static unsigned int
sport(const struct nf_conntrack *t)
{
	return ntohs(nfct_get_attr_u16(t, ATTR_ORIG_PORT_SRC));
}

/* The state conntrack holds for a tuple (its original source port names it here). */
static struct nf_conntrack **
host_find(const struct nf_conntrack *t)
{
	for (unsigned int i = 0; i < HOST_MAX; i++)
		if (host[i] != NULL && sport(host[i]) == sport(t))
			return &host[i];
	return NULL;
}

static int
ct_events(void *ctx, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	unsigned int n = nevq;

	(void)ctx, (void)max;
	nevq = 0;
	for (unsigned int i = 0; i < n; i++) {
		cb(arg, evq[i].type, evq[i].ct, false);
		nfct_destroy(evq[i].ct);
	}
	return n > 0;
}

static void
ct_drain(void *ctx)
{
	(void)ctx;
	say(ct_log, "drain");
	for (unsigned int i = 0; i < nevq; i++)
		nfct_destroy(evq[i].ct);
	nevq = 0;
}

static struct nf_conntrack *
ct_get(void *ctx, const struct nf_conntrack *t)
{
	struct nf_conntrack **h = host_find(t);

	(void)ctx;
	say(ct_log, "get sport=%u", sport(t));
	return h ? nfct_clone(*h) : NULL;
}

static int
ct_dump(void *ctx, struct nf_conntrack ***out, size_t *n)
{
	(void)ctx;
	say(ct_log, "dump");
	*out = calloc(HOST_MAX, sizeof(**out));
	assert_non_null(*out);
	*n = 0;
	for (unsigned int i = 0; i < HOST_MAX; i++)
		if (host[i] != NULL)
			(*out)[(*n)++] = nfct_clone(host[i]);
	return 0;
}

static int
ct_mark(void *ctx, const struct nf_conntrack *t, uint32_t mark, uint32_t mask)
{
	struct nf_conntrack **h = host_find(t);

	(void)ctx;
	say(ct_log, "mark sport=%u mark=%#x mask=%#x", sport(t), mark, mask);
	if (h == NULL)
		return -ENOENT;
	nfct_set_attr_u32(*h, ATTR_MARK, (nfct_get_attr_u32(*h, ATTR_MARK) & ~mask) ^ mark);
	return 0;
}

static int
ct_tcp_loosen(void *ctx, const struct nf_conntrack *t)
{
	(void)ctx;
	say(ct_log, "tcp_loosen sport=%u", sport(t));
	return host_find(t) ? 0 : -ENOENT;
}

static int
ct_timeout(void *ctx, const struct nf_conntrack *t, uint32_t secs)
{
	(void)ctx;
	say(ct_log, "timeout sport=%u secs=%u", sport(t), secs);
	return host_find(t) ? 0 : -ENOENT;
}

static int
ct_kill(void *ctx, const struct nf_conntrack *t)
{
	struct nf_conntrack **h = host_find(t);

	(void)ctx;
	say(ct_log, "kill sport=%u", sport(t));
	if (h == NULL)
		return -ENOENT;
	nfct_destroy(*h);
	*h = NULL;
	return 0;
}

static int
ct_kill_post(void *ctx, const struct nf_conntrack *t, fd_ct_done_fn *done, void *arg)
{
	done(arg, ct_kill(ctx, t));	/* the binding posts none; the cut's are test_cut's */
	return 0;
}

static int
ct_kill_flush(void *ctx)
{
	(void)ctx;
	return 0;
}

static uint32_t
ct_established_timeout(void *ctx, uint8_t l4proto)
{
	(void)ctx;
	return l4proto == IPPROTO_TCP ? 432000 : 120;
}

static const struct fd_ct_io ctio = {
	.events = ct_events, .drain = ct_drain, .get = ct_get, .dump = ct_dump, .mark = ct_mark,
	.tcp_loosen = ct_tcp_loosen, .timeout = ct_timeout, .kill = ct_kill,
	.kill_post = ct_kill_post, .kill_flush = ct_kill_flush,
	.established_timeout = ct_established_timeout,
};

/* ---- the host's routes: 198.18/16 and 2001:2::/48 out of port 0, the rest port 1 ---- */

#define IFINDEX0 10

static int
rt_path(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	unsigned int port = family == 4 ? dst[1] != 18 : (dst[4] | dst[5]) != 0;

	(void)ctx;
	*out = (struct fd_hop){ .ifindex = IFINDEX0 + port, .family = (uint8_t)family,
				.mac = { 2, 0, 0, 0, 0, (uint8_t)(0x10 + port) } };
	memcpy(out->nbr, dst, family == 4 ? 4 : 16);
	return 0;
}

static int
rt_get(void *ctx, int family, const uint8_t *dst, struct fd_hop *out)
{
	int rc = rt_path(ctx, family, dst, out);

	out->resolved = true;
	return rc;
}

static int
rt_link_mtu(void *ctx, unsigned int ifindex, uint32_t *mtu)
{
	(void)ctx, (void)ifindex;
	*mtu = 1500;
	return 0;
}

static int
rt_neigh_get(void *ctx, unsigned int ifindex, int family, const uint8_t *addr, uint8_t mac[6],
	     bool *resolved)
{
	(void)ctx, (void)family, (void)addr;
	memcpy(mac, (uint8_t[6]){ 2, 0, 0, 0, 0, (uint8_t)(0x10 + ifindex - IFINDEX0) }, 6);
	*resolved = true;
	return 0;
}

static const struct fd_route_io rtio = { .get = rt_get, .path = rt_path,
					 .link_mtu = rt_link_mtu, .neigh_get = rt_neigh_get };

/* ---- states, built as conntrack would send them ---- */

struct st {
	int family;
	uint8_t l4;
	const char *client, *server;
	uint16_t cport, sport;
	uint32_t status;
	uint8_t tcp_state;
	uint32_t mark;
};

static void
set_addr(struct nf_conntrack *ct, int family, enum nf_conntrack_attr v4,
	 enum nf_conntrack_attr v6, const char *text)
{
	uint8_t a[16];

	assert_int_equal(inet_pton(family, text, a), 1);
	nfct_set_attr(ct, family == AF_INET ? v4 : v6, a);
}

static struct nf_conntrack *
build(const struct st *s, uint32_t id)
{
	struct nf_conntrack *ct = nfct_new();

	assert_non_null(ct);
	nfct_set_attr_u8(ct, ATTR_ORIG_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, (uint8_t)s->family);
	nfct_set_attr_u8(ct, ATTR_ORIG_L4PROTO, s->l4);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, s->l4);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_SRC, ATTR_ORIG_IPV6_SRC, s->client);
	set_addr(ct, s->family, ATTR_ORIG_IPV4_DST, ATTR_ORIG_IPV6_DST, s->server);
	set_addr(ct, s->family, ATTR_REPL_IPV4_SRC, ATTR_REPL_IPV6_SRC, s->server);
	set_addr(ct, s->family, ATTR_REPL_IPV4_DST, ATTR_REPL_IPV6_DST, s->client);
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_SRC, htons(s->cport));
	nfct_set_attr_u16(ct, ATTR_ORIG_PORT_DST, htons(s->sport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(s->sport));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(s->cport));
	nfct_set_attr_u32(ct, ATTR_STATUS, s->status);
	if (s->l4 == IPPROTO_TCP)
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, s->tcp_state);
	nfct_set_attr_u32(ct, ATTR_MARK, s->mark);
	nfct_set_attr_u32(ct, ATTR_ID, id);
	return ct;
}

#define A (IPS_ASSURED | IPS_SEEN_REPLY | IPS_CONFIRMED)
#define EST TCP_CONNTRACK_ESTABLISHED
/* a TCP state through the rules (IPv4), a UDP one (IPv6), one the rules passed while it was new */
static const struct st tcp4 = { AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40000, 80,
				A, EST, BIT | 0x5 };
static const struct st udp6 = { AF_INET6, IPPROTO_UDP, "2001:2::10", "2001:2:1::10", 40001, 53,
				A, 0, BIT };
static const struct st syn4 = { AF_INET, IPPROTO_TCP, "198.18.0.10", "198.19.0.10", 40002, 80,
				IPS_CONFIRMED, TCP_CONNTRACK_SYN_SENT, BIT | 0x700 };

static struct fd_nhop *nhops;
static struct fd_offload *off;

static void
host_add(const struct st *s, uint32_t id)
{
	for (unsigned int i = 0; i < HOST_MAX; i++)
		if (host[i] == NULL) {
			host[i] = build(s, id);
			return;
		}
	fail_msg("the stand-in conntrack is full");
}

static void
event(enum fd_ct_event type, const struct st *s, uint32_t id)
{
	assert_true(nevq < HOST_MAX);
	evq[nevq].type = type;
	evq[nevq++].ct = build(s, id);
}

/* A state conntrack holds, offloaded: its UPDATE event read (the fast path's id 1 for the first). */
static void
offloaded(const struct st *s, uint32_t id)
{
	host_add(s, id);
	event(FD_CT_UPDATE, s, id);
	fd_offload_events(off);
}

static void
fp_event(uint8_t type, uint8_t reason, uint64_t id)
{
	struct lk_event ev = { .type = type, .reason = reason, .id = id };

	fd_offload_fp_event(off, &ev);
}

static struct fd_offload_stats
stats(void)
{
	struct fd_offload_stats st;

	fd_offload_stats(off, &st);
	return st;
}

/* ---- the rows ---- */

static void
given_tcp4(void)
{
	offloaded(&tcp4, 101);
}

static void
given_udp6(void)
{
	offloaded(&udp6, 102);
}

static void
given_tcp4_and_syn4(void)
{
	offloaded(&tcp4, 101);
	host_add(&syn4, 103);	/* not offloaded: not established yet */
}

/* Cut in hardware: its drop answered, marked cut, its state killed. */
static void
given_tcp4_cut(void)
{
	offloaded(&tcp4, 101);
	fp_conn(1)->verdict = FC_VERDICT_DROP;
	assert_int_equal(fd_offload_mark_cut(off, 1, 0), 0);
	assert_int_equal(ct_kill(NULL, host[0]), 0);
	event(FD_CT_DESTROY, &tcp4, 101);
	fd_offload_events(off);
}

/* The fast path holds one connection this binding never made, forwarding; conntrack the TCP state. */
static void
given_stale_and_tcp4(void)
{
	struct fc_mflow_spec mf[2] = { { .action = FC_ACTION_FWD }, { .action = FC_ACTION_FWD } };

	fp_add(7, mf, FC_VERDICT_CUT_THRU);
	host_add(&tcp4, 101);
}

/* A flowcutd before this one cut a connection: dropping both ways, its state long killed. */
static void
given_dropping_from_before(void)
{
	struct fc_mflow_spec mf[2] = { { .action = FC_ACTION_DROP }, { .action = FC_ACTION_DROP } };

	mf[0].key = (struct fc_key){ .src = { 198, 18, 0, 10 }, .dst = { 198, 19, 0, 10 },
				     .sport = htons(40009), .dport = htons(80),
				     .proto = IPPROTO_TCP, .family = 4 };
	mf[1].key = (struct fc_key){ .src = { 198, 19, 0, 10 }, .dst = { 198, 18, 0, 10 },
				     .sport = htons(80), .dport = htons(40009), .port = 1,
				     .proto = IPPROTO_TCP, .family = 4 };
	fp_add(9, mf, FC_VERDICT_DROP);
}

static void
when_destroy(void)
{
	struct nf_conntrack **h = host_find(host[0]);

	nfct_destroy(*h);
	*h = NULL;
	event(FD_CT_DESTROY, &tcp4, 101);
	fd_offload_events(off);
}

static void
when_given_back_stalled(void)
{
	fp_event(FC_EV_GIVEN_BACK, FC_REASON_TCP_MAX_RETRANS, 1);
}

static void
when_given_back_close(void)
{
	fp_event(FC_EV_GIVEN_BACK, FC_REASON_TCP_FIN_SYN_RST, 1);
}

static void
when_aged_out(void)
{
	fp_event(FC_EV_AGED_OUT, FC_REASON_IDLE, 1);
}

static void
when_revision(void)
{
	assert_int_equal(fd_offload_ruleset_changed(off), 0);
}

static void
when_resync(void)
{
	fd_offload_resync(off);
}

static void
then_removed(void)
{
	assert_int_equal(stats().removed, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
}

static void
then_revived(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().revived, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), 0);
}

static void
then_let_go(void)
{
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	assert_int_equal(nfct_get_attr_u32(host[0], ATTR_MARK) & BIT, 0);	/* back through the rules */
}

static void
then_judged_again(void)
{
	assert_int_equal(stats().rev_bumps, 1);
	assert_int_equal(fp_rev, 1);
	assert_int_equal(fd_offload_find_fp(off, 1, &(struct fd_offload_conn){ 0 }, NULL), -ENOENT);
	for (unsigned int i = 0; i < 2; i++)
		assert_int_equal(nfct_get_attr_u32(host[i], ATTR_MARK) & ~BIT,
				 nfct_get_attr_u32(host[i], ATTR_MARK));
	assert_int_equal(nfct_get_attr_u32(host[1], ATTR_MARK), 0x700);	/* the rules' own bits kept */
}

static void
then_resynced(void)
{
	struct fd_offload_conn oc;

	assert_null(fp_conn(7));
	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), 0);
	assert_false(oc.cut);
	assert_int_equal(stats().resyncs, 1);
}

static void
then_kept(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(fd_offload_find_fp(off, 1, &oc, NULL), -ENOENT);	/* the stale one */
	assert_int_equal(fd_offload_find_fp(off, 2, &oc, NULL), 0);	/* made again */
	assert_true(oc.cut);
	assert_int_equal(oc.action, FC_ACTION_DROP);
	assert_int_equal(fp_conn(2)->fw_rev, 1);
}

static void
then_adopted(void)
{
	struct fd_offload_conn oc;

	assert_int_equal(stats().adopted, 1);
	assert_int_equal(fd_offload_find_fp(off, 9, &oc, NULL), 0);
	assert_true(oc.cut);
	assert_int_equal(oc.cut_by, FD_OFFLOAD_CUT_BY_UNKNOWN);
	assert_non_null(fp_conn(9));	/* dropping on */
}

static const struct row {
	const char *what;
	void (*given)(void);
	void (*when)(void);
	const char *cmds;	/* what `when` posts, in order */
	const char *ct;		/* and asks of conntrack (events read are not listed) */
	void (*then)(void);
} rows[] = {
	{ "a DESTROY: out of the fast path at once", given_tcp4, when_destroy,
	  "CONN_RECLAIM_FP id=1", "", then_removed },
	{ "a give-back for a stalled sender: revived", given_tcp4, when_given_back_stalled,
	  "CONN_REVIVE_FP id=1", "", then_revived },
	{ "a give-back on a close: let go, its bit cleared, its highest ACK forgotten", given_tcp4,
	  when_given_back_close, "",
	  "mark sport=40000 mark=0 mask=0x40000000; tcp_loosen sport=40000", then_let_go },
	{ "an idle timeout (aged out, IPv6 UDP): let go, its bit cleared", given_udp6, when_aged_out,
	  "", "mark sport=40001 mark=0 mask=0x40000000", then_let_go },
	{ "a revision: a new one first, the offloaded forgotten, every bit cleared",
	  given_tcp4_and_syn4, when_revision, "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1",
	  "tcp_loosen sport=40000; dump; mark sport=40000 mark=0 mask=0x40000000; "
	  "mark sport=40002 mark=0 mask=0x40000000", then_judged_again },
	{ "a resync: what the fast path holds taken out, what conntrack holds offloaded",
	  given_stale_and_tcp4, when_resync,
	  "CONN_READ_RANGE first=0; CONN_RECLAIM_FP id=7; CONN_READ_RANGE first=8; "
	  "NHOP_PROGRAM port=1; NHOP_PROGRAM port=0; "
	  "FLOW_CREATE_FP sport=40000 verdict=CUT_THRU action=IPS",
	  "drain; dump; tcp_loosen sport=40000", then_resynced },
	{ "a cut kept across a revision: read back, made again dropping at the new one",
	  given_tcp4_cut, when_revision,
	  "FW_CFG_PARAMS_GET; FW_STATE_REV_SET rev=1; CONN_READ_BY_ID id=1; "
	  "FLOW_CREATE_FP sport=40000 verdict=DROP action=DROP", "dump", then_kept },
	{ "a cut adopted after a restart: a dropping connection kept, not reclaimed",
	  given_dropping_from_before, when_resync,
	  "CONN_READ_RANGE first=0; CONN_READ_RANGE first=8", "drain; dump", then_adopted },
};

static int
bind_open(void **state)
{
	struct fd_offload_cfg cfg = { .nports = 2, .ifindex = { IFINDEX0, IFINDEX0 + 1 },
				      .mac = { { 2, 0, 0, 0, 0, 1 }, { 2, 0, 0, 0, 0, 2 } },
				      .mark_bit = BIT, .cut_in_hardware = true, .timeout_s = 30 };

	(void)state;
	memset(fp_slot, 0, sizeof(fp_slot));
	fp_next_id = 1;
	fp_rev = 0;
	nhops = fd_nhop_open(&cmds, cfg.nports, cfg.mac);
	assert_non_null(nhops);
	off = fd_offload_open(&cmds, &ctio, &rtio, nhops, &cfg);
	assert_non_null(off);
	return 0;
}

static int
bind_close(void **state)
{
	(void)state;
	fd_offload_close(off);
	fd_nhop_close(nhops);
	for (unsigned int i = 0; i < HOST_MAX; i++) {
		if (host[i] != NULL)
			nfct_destroy(host[i]);
		host[i] = NULL;
	}
	ct_drain(NULL);
	return 0;
}

/* One row: its starting point, its step, what the step must have asked, then what holds. */
static void
test_row(void **state)
{
	const struct row *r = *state;

	r->given();
	cmd_log[0] = ct_log[0] = '\0';
	r->when();
	if (strcmp(cmd_log, r->cmds) != 0 || strcmp(ct_log, r->ct) != 0)
		fail_msg("%s:\n  commands  %s\n    wanted  %s\n  conntrack %s\n     wanted %s",
			 r->what, cmd_log, r->cmds, ct_log, r->ct);
	r->then();
}

int
main(void)
{
	struct CMUnitTest tests[sizeof(rows) / sizeof(rows[0])];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		tests[i] = (struct CMUnitTest){ .name = rows[i].what, .test_func = test_row,
						.setup_func = bind_open, .teardown_func = bind_close,
						.initial_state = (void *)&rows[i] };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
