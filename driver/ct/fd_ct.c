/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct: see fd_ct.h.
 *
 * Libraries: libnetfilter_conntrack (sockets, GET, DUMP, UPDATE, and
 * nfct_nlmsg_build/parse for the messages read or built here), libmnl (the
 * event datagrams, one at a time; the masked mark update).
 */
#include "fd_ct.h"
#include "fd_nl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include <flowcut/fc_cmd.h>

/*
 * The per-direction TCP tracking flags of <linux/netfilter/nf_conntrack_tcp.h>
 * (uapi), which cannot be included beside libnetfilter_conntrack_tcp.h:
 * both declare enum tcp_conntrack.
 */
#define CT_TCP_FLAG_BE_LIBERAL 0x08
#define CT_TCP_FLAG_MAXACK_SET 0x20

#define FD_CT_RCVBUF (8u << 20)
#define FD_CT_DRAIN_ROUNDS 64
/* one event datagram: a state's attributes fit many times over */
#define FD_CT_EVBUF 16384
/* a DELETE's tuple and zone take under 200 bytes; each queued one gets this much */
#define FD_CT_KILL_MSG 512
#define FD_CT_KILL_BUF (FD_CT_KILL_BATCH * FD_CT_KILL_MSG)

struct fd_ct {
	struct nfct_handle *ev;		/* events */
	struct nfct_handle *q;		/* queries */
	struct mnl_socket *nl;		/* masked updates */
	uint64_t not_kernel;		/* event datagrams from another sender: dropped */
	uint32_t q_portid, nl_portid;	/* events they cause carry these */
	uint32_t seq;
	uint32_t timeout[256];		/* conntrack's timeout per L4 protocol, s */
	/* kills queued (fd_ct_kill_post), sent together by fd_ct_kill_flush */
	struct {
		uint32_t seq;
		fd_ct_done_fn *done;
		void *arg;
	} kill[FD_CT_KILL_BATCH];
	unsigned int nkill;
	size_t kill_len;
	char *kill_buf;			/* FD_CT_KILL_BUF bytes */
	/* a dump being gathered */
	bool dump_failed;
	struct nf_conntrack **dumped;
	size_t ndumped, capdumped;
};

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
	fclose(f);	/* read-only: nothing to lose */
	return v;
}

/*
 * Every state must have its DESTROY sent: with nf_conntrack_events at 2
 * (the kernel's default, "when someone listens"), a state made while no
 * listener was there - flowcutd restarting - never sends one, and an
 * offloaded connection would outlive it.  The refresh catches those a
 * second later (its update finds the state gone); this makes it rare.
 */
static void
events_for_every_state(void)
{
	const char *path = "/proc/sys/net/netfilter/nf_conntrack_events";
	FILE *f;

	if (sysctl_u32("nf_conntrack_events", 1) == 1)
		return;
	f = fopen(path, "w");
	if (f != NULL) {
		int bad = fputs("1\n", f) < 0;

		if (fclose(f) == 0 && !bad)
			return;
	}
	fprintf(stderr, "flowcutd: %s could not be set to 1 (%s): a state made while flowcutd "
		"is not running is noticed gone only by the refresh\n", path, strerror(errno));
}

struct fd_ct *
fd_ct_open(void)
{
	struct fd_ct *c = calloc(1, sizeof(*c));
	const char *what = "conntrack event socket";
	int fl, err;

	if (c == NULL)
		return NULL;
	c->kill_buf = malloc(FD_CT_KILL_BUF);
	if (c->kill_buf == NULL)
		goto fail;
	c->ev = nfct_open(CONNTRACK, NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE |
				     NF_NETLINK_CONNTRACK_DESTROY);
	if (c->ev == NULL)
		goto fail;
	what = "conntrack query socket";
	c->q = nfct_open(CONNTRACK, 0);
	if (c->q == NULL)
		goto fail;
	what = "conntrack update socket (libmnl)";
	c->nl = mnl_socket_open(NETLINK_NETFILTER);
	if (c->nl == NULL || mnl_socket_bind(c->nl, 0, MNL_SOCKET_AUTOPID) < 0)
		goto fail;
	/*
	 * A burst of events must fit; if it does not, ENOBUFS says so and the
	 * binding reconciles: a smaller buffer (no CAP_NET_ADMIN, a low
	 * rmem_max) costs more reconciliations, not correctness.
	 */
	if (nfnl_rcvbufsiz(nfct_nfnlh(c->ev), FD_CT_RCVBUF) < FD_CT_RCVBUF)
		fprintf(stderr, "flowcutd: conntrack event socket: receive buffer below %u "
			"bytes; a burst of events is more likely lost and reconciled\n",
			FD_CT_RCVBUF);
	what = "conntrack event socket made non-blocking";
	fl = fcntl(nfct_fd(c->ev), F_GETFL);
	if (fl < 0 || fcntl(nfct_fd(c->ev), F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	c->q_portid = nfnl_portid(nfct_nfnlh(c->q));
	c->nl_portid = mnl_socket_get_portid(c->nl);
	c->seq = (uint32_t)time(NULL);
	events_for_every_state();
	c->timeout[IPPROTO_TCP] = sysctl_u32("nf_conntrack_tcp_timeout_established", 432000);
	c->timeout[IPPROTO_UDP] = sysctl_u32("nf_conntrack_udp_timeout_stream", 120);
	c->timeout[IPPROTO_ICMP] = sysctl_u32("nf_conntrack_icmp_timeout", 30);
	c->timeout[IPPROTO_ICMPV6] = sysctl_u32("nf_conntrack_icmpv6_timeout", 30);
	return c;
fail:
	err = errno ? errno : EIO;
	fprintf(stderr, "flowcutd: %s: %s\n", what, strerror(err));
	fd_ct_close(c);
	errno = err;
	return NULL;
}

void
fd_ct_close(struct fd_ct *c)
{
	if (c == NULL)
		return;
	if (c->nkill)
		(void)fd_ct_kill_flush(c);
	if (c->ev)
		nfct_close(c->ev);
	if (c->q)
		nfct_close(c->q);
	if (c->nl)
		mnl_socket_close(c->nl);
	free(c->dumped);
	free(c->kill_buf);
	free(c);
}

int
fd_ct_fd(const struct fd_ct *c)
{
	return nfct_fd(c->ev);
}

uint32_t
fd_ct_established_timeout(const struct fd_ct *c, uint8_t l4proto)
{
	return c->timeout[l4proto] ? c->timeout[l4proto] : 120;
}

/* ---- events ---- */

struct parse_ctx {
	fd_ct_event_fn *cb;
	void *arg;
	uint32_t own[2];
};

/* One event message: parsed, handed on (1), skipped (0), or -ENOMEM. */
static int
event_msg(const struct nlmsghdr *nlh, void *data)
{
	const struct parse_ctx *p = data;
	uint8_t type = NFNL_MSG_TYPE(nlh->nlmsg_type);
	struct nf_conntrack *ct;
	bool own;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK ||
	    (type != IPCTNL_MSG_CT_NEW && type != IPCTNL_MSG_CT_DELETE))
		return 0;
	ct = nfct_new();
	if (ct == NULL)
		return -ENOMEM;	/* lost: the caller reconciles as for ENOBUFS */
	if (nfct_nlmsg_parse(nlh, ct) < 0) {
		fprintf(stderr, "flowcutd: a conntrack event (type %u, %u bytes) did not parse\n",
			type, nlh->nlmsg_len);
		nfct_destroy(ct);
		return 0;
	}
	own = nlh->nlmsg_pid != 0 && (nlh->nlmsg_pid == p->own[0] || nlh->nlmsg_pid == p->own[1]);
	p->cb(p->arg, type == IPCTNL_MSG_CT_DELETE ? FD_CT_DESTROY : FD_CT_UPDATE, ct, own);
	nfct_destroy(ct);
	return 1;
}

int
fd_ct_parse(const void *buf, size_t len, const uint32_t own[2], fd_ct_event_fn *cb, void *arg)
{
	struct parse_ctx p = { .cb = cb, .arg = arg, .own = { own[0], own[1] } };

	return fd_nl_walk(buf, len, event_msg, &p);
}

int
fd_ct_events(struct fd_ct *c, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	static char buf[FD_CT_EVBUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	unsigned int n;
	int rc;

	for (n = 0; n < max; n++) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(nfct_fd(c->ev), buf, sizeof(buf), MSG_DONTWAIT,
				       (struct sockaddr *)&from, &flen);

		if (len < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			return -errno;	/* ENOBUFS: events were dropped */
		}
		/*
		 * The kernel's only: libnetfilter_conntrack exits the process on a
		 * message that breaks ctnetlink's ABI, trusting its sender.
		 */
		if (flen < sizeof(from) || from.nl_pid != 0) {
			if (c->not_kernel++ < 10)	/* said, not flooded */
				fprintf(stderr, "flowcutd: a conntrack event datagram from netlink "
					"port %u, not the kernel: dropped\n", from.nl_pid);
			continue;
		}
		rc = fd_ct_parse(buf, (size_t)len, (const uint32_t[2]){ c->q_portid, c->nl_portid },
				 cb, arg);
		if (rc == -ENOMEM)
			return -ENOBUFS;	/* an event not kept: as good as lost */
		if (rc < 0)	/* the kernel's datagram did not hold together: said, skipped */
			fprintf(stderr, "flowcutd: a conntrack event datagram (%zd bytes) is "
				"malformed; skipped\n", len);
	}
	return (int)n;
}

void
fd_ct_drain(struct fd_ct *c)
{
	static char buf[FD_CT_EVBUF];
	int rounds = 0;

	/* each round reads until the socket is empty or overflowed again */
	for (;;) {
		ssize_t len = recv(nfct_fd(c->ev), buf, sizeof(buf), MSG_DONTWAIT);

		if (len >= 0)
			continue;
		if (errno != ENOBUFS || ++rounds >= FD_CT_DRAIN_ROUNDS)
			break;
	}
}

/* ---- queries ---- */

struct nf_conntrack *
fd_ct_tuple(const struct nf_conntrack *ct)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return NULL;
	nfct_copy(t, ct, NFCT_CP_ORIG);
	if (nfct_attr_is_set(ct, ATTR_ZONE))
		nfct_set_attr_u16(t, ATTR_ZONE, nfct_get_attr_u16(ct, ATTR_ZONE));
	return t;
}

struct nf_conntrack *
fd_ct_tuple_of_key(const struct fc_key *k)
{
	struct nf_conntrack *t = nfct_new();

	if (t == NULL)
		return NULL;
	if (k->family == 4) {
		nfct_set_attr_u8(t, ATTR_ORIG_L3PROTO, AF_INET);
		nfct_set_attr(t, ATTR_ORIG_IPV4_SRC, k->src);
		nfct_set_attr(t, ATTR_ORIG_IPV4_DST, k->dst);
	} else {
		nfct_set_attr_u8(t, ATTR_ORIG_L3PROTO, AF_INET6);
		nfct_set_attr(t, ATTR_ORIG_IPV6_SRC, k->src);
		nfct_set_attr(t, ATTR_ORIG_IPV6_DST, k->dst);
	}
	nfct_set_attr_u8(t, ATTR_ORIG_L4PROTO, k->proto);
	if (k->proto == IPPROTO_ICMP || k->proto == IPPROTO_ICMPV6) {
		/* the key's sport is the identifier, its dport the type (host order) */
		nfct_set_attr_u16(t, ATTR_ICMP_ID, k->sport);
		nfct_set_attr_u8(t, ATTR_ICMP_TYPE, (uint8_t)k->dport);
		nfct_set_attr_u8(t, ATTR_ICMP_CODE, 0);
	} else {
		nfct_set_attr_u16(t, ATTR_ORIG_PORT_SRC, k->sport);
		nfct_set_attr_u16(t, ATTR_ORIG_PORT_DST, k->dport);
	}
	nfct_set_attr_u16(t, ATTR_ZONE, 0);
	return t;
}

/* CONTINUE, not STOP: STOP leaves the request's ack unread on the socket. */
static int
get_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct nf_conntrack **got = data;

	(void)type;
	if (*got == NULL)
		*got = nfct_clone(ct);
	return NFCT_CB_CONTINUE;
}

struct nf_conntrack *
fd_ct_get(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple), *got = NULL;

	if (t == NULL)
		return NULL;
	if (nfct_callback_register(c->q, NFCT_T_ALL, get_cb, &got) != 0) {
		nfct_destroy(t);
		return NULL;
	}
	if (nfct_query(c->q, NFCT_Q_GET, t) != 0 && got != NULL) {
		nfct_destroy(got);
		got = NULL;
	}
	nfct_callback_unregister(c->q);
	nfct_destroy(t);
	return got;
}

static int
dump_cb(enum nf_conntrack_msg_type type, struct nf_conntrack *ct, void *data)
{
	struct fd_ct *c = data;

	(void)type;
	if (c->ndumped == c->capdumped) {
		size_t cap = c->capdumped ? c->capdumped * 2 : 256;
		struct nf_conntrack **p = realloc(c->dumped, cap * sizeof(*p));

		if (p == NULL) {
			c->dump_failed = true;
			return NFCT_CB_CONTINUE;
		}
		c->dumped = p;
		c->capdumped = cap;
	}
	c->dumped[c->ndumped] = nfct_clone(ct);
	if (c->dumped[c->ndumped] != NULL)
		c->ndumped++;
	else
		c->dump_failed = true;
	return NFCT_CB_CONTINUE;
}

int
fd_ct_dump(struct fd_ct *c, struct nf_conntrack ***out, size_t *n)
{
	int family = AF_UNSPEC, rc = -1;

	c->dumped = NULL;
	c->ndumped = c->capdumped = 0;
	c->dump_failed = false;
	if (nfct_callback_register(c->q, NFCT_T_ALL, dump_cb, c) == 0) {
		rc = nfct_query(c->q, NFCT_Q_DUMP, &family);
		nfct_callback_unregister(c->q);
	}
	*out = c->dumped;
	*n = c->ndumped;
	c->dumped = NULL;
	c->ndumped = c->capdumped = 0;
	return rc != 0 || c->dump_failed ? -EIO : 0;
}

void
fd_ct_dump_free(struct nf_conntrack **all, size_t n)
{
	for (size_t i = 0; i < n; i++)
		nfct_destroy(all[i]);
	free(all);
}

/* An UPDATE through libnetfilter_conntrack's query socket: 0 or -errno. */
static int
update(struct fd_ct *c, const struct nf_conntrack *t)
{
	return nfct_query(c->q, NFCT_Q_UPDATE, t) == 0 ? 0 : -errno;
}

/*
 * One ctnetlink request at buf about the state with `tuple`'s original
 * tuple (and zone), asking for an ack: | nlmsghdr | nfgenmsg | CTA_TUPLE_ORIG
 * {...} | [CTA_ZONE] |, built with nfct_nlmsg_build().  The message, or
 * NULL (no memory, or a tuple it cannot build).
 */
static struct nlmsghdr *
ct_request(char *buf, uint8_t msg, uint32_t seq, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfh;
	int rc;

	if (t == NULL)
		return NULL;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = nfct_get_attr_u8(t, ATTR_ORIG_L3PROTO);
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	rc = nfct_nlmsg_build(nlh, t);
	nfct_destroy(t);
	return rc < 0 ? NULL : nlh;
}

/*
 * IPCTNL_MSG_CT_NEW without NLM_F_CREATE (an update of an existing state),
 * built with libmnl:
 *
 *   | nlmsghdr | nfgenmsg (family) | CTA_TUPLE_ORIG {...} | [CTA_ZONE] |
 *   | CTA_MARK (be32) | CTA_MARK_MASK (be32) |
 *
 * nfct_nlmsg_build() writes the tuple and the zone; the mark and its mask
 * are put by hand (this libnetfilter_conntrack has no ATTR_MARK_MASK).
 */
int
fd_ct_mark(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	uint32_t seq = ++c->seq;
	struct nlmsghdr *nlh = ct_request(buf, IPCTNL_MSG_CT_NEW, seq, tuple);
	ssize_t len;
	int rc;

	if (nlh == NULL)
		return -EINVAL;
	mnl_attr_put_u32(nlh, CTA_MARK, htonl(mark));
	mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(mask));
	if (mnl_socket_sendto(c->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* the ack (or the error) is the answer; anything else on it is skipped */
	do {
		len = mnl_socket_recvfrom(c->nl, buf, sizeof(buf));
		if (len < 0)
			return -errno;
		rc = mnl_cb_run(buf, (size_t)len, seq, c->nl_portid, NULL, NULL);
	} while (rc == MNL_CB_OK);
	return rc == MNL_CB_STOP ? 0 : -errno;
}

int
fd_ct_tcp_loosen(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	int rc;

	if (t == NULL)
		return -ENOMEM;
	nfct_set_attr_u8(t, ATTR_TCP_FLAGS_ORIG, CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(t, ATTR_TCP_MASK_ORIG, CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET);
	nfct_set_attr_u8(t, ATTR_TCP_FLAGS_REPL, CT_TCP_FLAG_BE_LIBERAL);
	nfct_set_attr_u8(t, ATTR_TCP_MASK_REPL, CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET);
	rc = update(c, t);
	nfct_destroy(t);
	return rc;
}

int
fd_ct_timeout(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t secs)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	int rc;

	if (t == NULL)
		return -ENOMEM;
	nfct_set_attr_u32(t, ATTR_TIMEOUT, secs);
	rc = update(c, t);
	nfct_destroy(t);
	return rc;
}

int
fd_ct_kill(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	int rc;

	if (t == NULL)
		return -ENOMEM;
	rc = nfct_query(c->q, NFCT_Q_DESTROY, t) == 0 ? 0 : -errno;
	nfct_destroy(t);
	return rc;
}

/*
 * A queued kill, built with libmnl beside the others:
 *
 *   | nlmsghdr (CT_DELETE, ACK) | nfgenmsg (family) | CTA_TUPLE_ORIG {...} | [CTA_ZONE] |
 */
int
fd_ct_kill_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_done_fn *done,
		void *arg)
{
	struct nlmsghdr *nlh;

	if (c->nkill == FD_CT_KILL_BATCH || FD_CT_KILL_BUF - c->kill_len < FD_CT_KILL_MSG)
		(void)fd_ct_kill_flush(c);	/* each done has its answer, or the error */
	nlh = ct_request(c->kill_buf + c->kill_len, IPCTNL_MSG_CT_DELETE, ++c->seq, tuple);
	if (nlh == NULL || nlh->nlmsg_len > FD_CT_KILL_MSG)
		return -EINVAL;	/* not queued: kill_len unchanged */
	c->kill[c->nkill].seq = nlh->nlmsg_seq;
	c->kill[c->nkill].done = done;
	c->kill[c->nkill].arg = arg;
	c->nkill++;
	c->kill_len += MNL_ALIGN(nlh->nlmsg_len);
	return 0;
}

struct kill_answers {
	uint32_t first;		/* the batch's first sequence number */
	unsigned int n;
	int rc[FD_CT_KILL_BATCH];
	bool got[FD_CT_KILL_BATCH];
	unsigned int answered;
};

/* One message of an answer datagram: the ack (or error) of one queued kill. */
static int
kill_answer(const struct nlmsghdr *nlh, void *arg)
{
	struct kill_answers *a = arg;
	const struct nlmsgerr *e;
	uint32_t i = nlh->nlmsg_seq - a->first;

	if (nlh->nlmsg_type != NLMSG_ERROR || i >= a->n || a->got[i])
		return 0;	/* not one of ours (nothing else is sent on it) */
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	a->rc[i] = e->error <= 0 ? e->error : -EPROTO;
	a->got[i] = true;
	a->answered++;
	return 0;
}

int
fd_ct_kill_flush(struct fd_ct *c)
{
	struct kill_answers a = { .first = c->kill[0].seq, .n = c->nkill };
	fd_ct_done_fn *done[FD_CT_KILL_BATCH];
	void *arg[FD_CT_KILL_BATCH];
	char buf[MNL_SOCKET_BUFFER_SIZE];
	int err = 0;

	if (c->nkill == 0)
		return 0;
	for (unsigned int i = 0; i < a.n; i++) {
		done[i] = c->kill[i].done;
		arg[i] = c->kill[i].arg;
	}
	/* taken off the queue first: a done may queue the next kills */
	c->nkill = 0;
	if (mnl_socket_sendto(c->nl, c->kill_buf, c->kill_len) < 0)
		err = -errno;
	c->kill_len = 0;
	/* the kernel answers each message as it takes it: every ack is there now */
	while (err == 0 && a.answered < a.n) {
		ssize_t len = mnl_socket_recvfrom(c->nl, buf, sizeof(buf));
		int rc;

		if (len < 0) {
			err = -errno;
			break;
		}
		rc = fd_nl_walk(buf, (size_t)len, kill_answer, &a);
		if (rc < 0)
			err = rc;
	}
	for (unsigned int i = 0; i < a.n; i++)
		done[i](arg[i], a.got[i] ? a.rc[i] : err);
	return err ? err : (int)a.answered;
}

/* ---- the I/O as a function table (fd_ct_io_of) ---- */

static int
io_events(void *ctx, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	return fd_ct_events(ctx, max, cb, arg);
}

static void
io_drain(void *ctx)
{
	fd_ct_drain(ctx);
}

static struct nf_conntrack *
io_get(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_get(ctx, tuple);
}

static int
io_dump(void *ctx, struct nf_conntrack ***out, size_t *n)
{
	return fd_ct_dump(ctx, out, n);
}

static int
io_mark(void *ctx, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask)
{
	return fd_ct_mark(ctx, tuple, mark, mask);
}

static int
io_tcp_loosen(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_tcp_loosen(ctx, tuple);
}

static int
io_timeout(void *ctx, const struct nf_conntrack *tuple, uint32_t secs)
{
	return fd_ct_timeout(ctx, tuple, secs);
}

static int
io_kill(void *ctx, const struct nf_conntrack *tuple)
{
	return fd_ct_kill(ctx, tuple);
}

static int
io_kill_post(void *ctx, const struct nf_conntrack *tuple, fd_ct_done_fn *done, void *arg)
{
	return fd_ct_kill_post(ctx, tuple, done, arg);
}

static int
io_kill_flush(void *ctx)
{
	return fd_ct_kill_flush(ctx);
}

static uint32_t
io_established_timeout(void *ctx, uint8_t l4proto)
{
	return fd_ct_established_timeout(ctx, l4proto);
}

struct fd_ct_io
fd_ct_io_of(struct fd_ct *c)
{
	return (struct fd_ct_io){
		.events = io_events, .drain = io_drain, .get = io_get, .dump = io_dump,
		.mark = io_mark, .tcp_loosen = io_tcp_loosen, .timeout = io_timeout,
		.kill = io_kill, .kill_post = io_kill_post, .kill_flush = io_kill_flush,
		.established_timeout = io_established_timeout, .ctx = c,
	};
}
