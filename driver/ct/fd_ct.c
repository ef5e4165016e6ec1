/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct: see fd_ct.h.
 *
 * Libraries: libnetfilter_conntrack (the event and query sockets, the
 * whole DUMP, nfct_nlmsg_build/_build_filter for the messages built here,
 * and its objects, which fd_ctparse fills with the states read), libmnl
 * (the event datagrams, one at a time; the posted requests and the
 * synchronous calls over them; the incremental dump).
 *
 * The incremental dump is built by nfct_nlmsg_build_filter on a libmnl
 * socket, not NFCT_Q_DUMP_FILTER: that query reads the whole dump inside
 * one nfct_query(), and the point is to read it a few datagrams a turn.
 */
#include "fd_ct.h"
#include "fd_ctparse.h"
#include "fd_nl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libmnl/libmnl.h>
#include <linux/filter.h>
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

#define FD_CT_DRAIN_ROUNDS 64
/* one event datagram: a state's attributes fit many times over */
#define FD_CT_EVBUF 16384
/* event datagrams a recvmmsg() */
#define FD_CT_EV_VEC 32
/*
 * The posted requests' socket: a batch of GETs is answered by
 * FD_CT_BATCH states (each in an skb of about a page, ctnetlink's
 * NLMSG_DEFAULT_SIZE) and as many acks, all queued before the flush reads
 * one: the default 208 KiB would drop some.
 */
#define FD_CT_NL_RCVBUF (FD_CT_BATCH * 16384)

/*
 * A queue of posted requests (kills, updates, GETs): their messages side
 * by side in buf, each given FD_CT_MSG_MAX (a tuple, zone, protoinfo,
 * timeout and mark take under 300 bytes), numbered at the flush.
 */
struct ct_posted {
	fd_ct_done_fn *done;		/* kills, updates */
	fd_ct_state_fn *state_done;	/* GETs */
	void *arg;
	uint32_t off;			/* its message in buf */
};

struct ct_batch {
	struct ct_posted q[FD_CT_BATCH];
	unsigned int n;
	size_t len;
	bool noack;	/* errors only, the last message acked (updates, kills: see fd_ct.h) */
	char buf[FD_CT_BATCH * FD_CT_MSG_MAX] __attribute__((aligned(NLMSG_ALIGNTO)));
};

struct fd_ct {
	struct nfct_handle *ev;		/* events */
	struct nfct_handle *q;		/* queries */
	struct mnl_socket *nl;		/* posted requests */
	struct mnl_socket *dump;	/* the incremental dump being read, or NULL */
	char *dump_buf;			/* FD_CT_DUMP_BUF bytes */
	uint64_t not_kernel;		/* datagrams from another sender: dropped */
	uint64_t events_lost;		/* ENOBUFS, or an event not kept */
	unsigned int evbuf_ask;		/* the event socket's buffer, asked */
	uint32_t q_portid, nl_portid;	/* events they cause carry these */
	uint32_t seq;
	uint32_t timeout[256];		/* conntrack's timeout per L4 protocol, s */
	struct ct_batch kills, updates, gets;
	uint64_t replays;	/* update batches whose errors were lost, sent again (replay()) */
	/* a dump being gathered (fd_ct_dump) */
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
 * A conntrack setting of the host's turned on (to 1) when it is not, or
 * said: `without` is what goes wrong then.
 */
static void
sysctl_on(const char *name, const char *without)
{
	char path[256];
	FILE *f;

	if (sysctl_u32(name, 1) == 1)
		return;
	snprintf(path, sizeof(path), "/proc/sys/net/netfilter/%s", name);
	f = fopen(path, "w");
	if (f != NULL) {
		int bad = fputs("1\n", f) < 0;

		if (fclose(f) == 0 && !bad)
			return;
	}
	fprintf(stderr, "flowcutd: %s could not be set to 1 (%s): %s\n", path, strerror(errno),
		without);
}

int
fd_ct_own_filter(struct sock_filter *prog, const uint32_t own[2])
{
	uint32_t a = own[0] ? own[0] : own[1], b = own[1] ? own[1] : own[0];
	const struct sock_filter p[FD_CT_FILTER_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_pid)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(a), 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ntohl(b), 0, 3),
		BPF_STMT(BPF_LD | BPF_H | BPF_ABS, offsetof(struct nlmsghdr, nlmsg_type)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
			 ntohs((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW), 0, 1),
		BPF_STMT(BPF_RET | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, 0xffffffffu),
	};

	if (a == 0)
		return -EINVAL;
	memcpy(prog, p, sizeof(p));
	return FD_CT_FILTER_LEN;
}

/*
 * Our own updates' events refused in the kernel (fd_ct_own_filter).  Not
 * attached: said, and they are skipped at the parse as before, at the
 * cost of twice the buffer.
 */
static void
own_filter_attach(struct fd_ct *c)
{
	struct sock_filter prog[FD_CT_FILTER_LEN];
	struct sock_fprog fp = { .len = FD_CT_FILTER_LEN, .filter = prog };
	const uint32_t own[2] = { c->q_portid, c->nl_portid };
	int rc = fd_ct_own_filter(prog, own);

	if (rc > 0 && setsockopt(nfct_fd(c->ev), SOL_SOCKET, SO_ATTACH_FILTER, &fp,
				 sizeof(fp)) != 0)
		rc = -errno;
	if (rc < 0)
		fprintf(stderr, "flowcutd: conntrack event socket: the filter of our own updates "
			"(port ids %u, %u) not attached: %s; they are queued and skipped\n",
			own[0], own[1], strerror(-rc));
}

struct fd_ct *
fd_ct_open(void)
{
	struct fd_ct *c = calloc(1, sizeof(*c));
	const char *what = "conntrack event socket";
	unsigned int got;
	int fl, err;

	if (c == NULL)
		return NULL;
	c->dump_buf = malloc(FD_CT_DUMP_BUF);
	if (c->dump_buf == NULL)
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
	c->updates.noack = true;
	c->kills.noack = true;
	/*
	 * A burst of events must fit; if it does not, ENOBUFS says so, the
	 * buffer doubles (lost()) and the binding reconciles: a smaller buffer
	 * (no CAP_NET_ADMIN, a low rmem_max) costs more reconciliations, not
	 * correctness.
	 */
	c->evbuf_ask = FD_CT_EVBUF_ASK;
	got = nfnl_rcvbufsiz(nfct_nfnlh(c->ev), c->evbuf_ask);
	if (got < c->evbuf_ask)
		fprintf(stderr, "flowcutd: conntrack event socket: receive buffer %u bytes, "
			"asked %u; a burst of events is more likely lost and reconciled\n",
			got, c->evbuf_ask);
	what = "conntrack update socket's receive buffer";
	if (setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVBUFFORCE,
		       &(int){ FD_CT_NL_RCVBUF }, sizeof(int)) != 0 &&
	    setsockopt(mnl_socket_get_fd(c->nl), SOL_SOCKET, SO_RCVBUF,
		       &(int){ FD_CT_NL_RCVBUF }, sizeof(int)) != 0)
		goto fail;
	what = "conntrack event socket made non-blocking";
	fl = fcntl(nfct_fd(c->ev), F_GETFL);
	if (fl < 0 || fcntl(nfct_fd(c->ev), F_SETFL, fl | O_NONBLOCK) < 0)
		goto fail;
	c->q_portid = nfnl_portid(nfct_nfnlh(c->q));
	c->nl_portid = mnl_socket_get_portid(c->nl);
	own_filter_attach(c);
	c->seq = (uint32_t)time(NULL);
	/*
	 * Every state must have its DESTROY sent: with nf_conntrack_events at 2
	 * (the kernel's default, "when someone listens"), a state made while no
	 * listener was there - flowcutd restarting - never sends one, and an
	 * offloaded connection would outlive it.  The refresh catches those a
	 * second later (its update finds the state gone); this makes it rare.
	 */
	sysctl_on("nf_conntrack_events", "a state made while flowcutd is not running is "
		  "noticed gone only by the refresh");
	/*
	 * When each state began: the inspector's cut names the connection it
	 * read, not a tuple, and a state older than its SYN is another's.
	 */
	sysctl_on("nf_conntrack_timestamp", "the inspector's cuts cannot tell a connection from "
		  "an older one of the same tuple: they are made on the tuple's state");
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
	(void)fd_ct_kill_flush(c);
	(void)fd_ct_update_flush(c);
	(void)fd_ct_get_flush(c);
	if (c->ev)
		nfct_close(c->ev);
	if (c->q)
		nfct_close(c->q);
	if (c->nl)
		mnl_socket_close(c->nl);
	if (c->dump)
		mnl_socket_close(c->dump);
	free(c->dumped);
	free(c->dump_buf);
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

unsigned int
fd_ct_event_buf(const struct fd_ct *c)
{
	int v = 0;
	socklen_t len = sizeof(v);

	/* the socket's, now: nothing kept that could go stale */
	if (getsockopt(nfct_fd(c->ev), SOL_SOCKET, SO_RCVBUF, &v, &len) != 0)
		return 0;
	return (unsigned int)v;
}

uint64_t
fd_ct_events_lost(const struct fd_ct *c)
{
	return c->events_lost;
}

uint64_t
fd_ct_replays(const struct fd_ct *c)
{
	return c->replays;
}

int
fd_ct_request_fd(const struct fd_ct *c)
{
	return mnl_socket_get_fd(c->nl);
}

/*
 * One datagram from the kernel: its length, or -errno (-EAGAIN: none yet,
 * with MSG_DONTWAIT).  Only the kernel's: libnetfilter_conntrack exits the
 * process on a message that breaks ctnetlink's ABI, trusting its sender;
 * a datagram from any other port is dropped and said (the first ten).
 */
static bool
from_kernel(struct fd_ct *c, const struct sockaddr_nl *from, socklen_t flen)
{
	if (flen >= sizeof(*from) && from->nl_pid == 0)
		return true;
	if (c->not_kernel++ < 10)	/* said, not flooded */
		fprintf(stderr, "flowcutd: a conntrack datagram from netlink port %u, "
			"not the kernel: dropped\n", from->nl_pid);
	return false;
}

static ssize_t
kernel_recv(struct fd_ct *c, int fd, void *buf, size_t cap, int flags)
{
	for (;;) {
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t len = recvfrom(fd, buf, cap, flags, (struct sockaddr *)&from, &flen);

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (from_kernel(c, &from, flen))
			return len;
	}
}

/*
 * Events were lost: counted, and the buffer doubled up to FD_CT_EVBUF_MAX
 * (conntrack-tools' nl_resize_socket_buffer), so the next burst fits.
 */
static void
lost(struct fd_ct *c)
{
	c->events_lost++;
	if (c->evbuf_ask >= FD_CT_EVBUF_MAX)
		return;
	c->evbuf_ask *= 2;
	fprintf(stderr, "flowcutd: conntrack events lost; the event socket's receive buffer "
		"asked %u bytes, got %u\n", c->evbuf_ask,
		nfnl_rcvbufsiz(nfct_nfnlh(c->ev), c->evbuf_ask));
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
	bool own = nlh->nlmsg_pid != 0 &&
		   (nlh->nlmsg_pid == p->own[0] || nlh->nlmsg_pid == p->own[1]);
	struct nf_conntrack *ct;

	if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_CTNETLINK ||
	    (type != IPCTNL_MSG_CT_NEW && type != IPCTNL_MSG_CT_DELETE) ||
	    (own && type == IPCTNL_MSG_CT_NEW))
		return 0;
	ct = nfct_new();
	if (ct == NULL)
		return -ENOMEM;	/* lost: the caller reconciles as for ENOBUFS */
	if (fd_ctparse_msg(nlh, ct) < 0) {
		fprintf(stderr, "flowcutd: a conntrack event (type %u, %u bytes) did not parse\n",
			type, nlh->nlmsg_len);
		nfct_destroy(ct);
		return 0;
	}
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

/*
 * The datagrams are read FD_CT_EV_VEC a system call (recvmmsg): one event
 * a datagram, and at a burst's rate a recvfrom each was a tenth of
 * flowcutd's time (perf, lab/scale.sh 1000000).  An error after some
 * datagrams of a call: the kernel keeps it for the next call.
 */
int
fd_ct_events(struct fd_ct *c, unsigned int max, fd_ct_event_fn *cb, void *arg)
{
	static char buf[FD_CT_EV_VEC][FD_CT_EVBUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	const uint32_t own[2] = { c->q_portid, c->nl_portid };
	struct sockaddr_nl from[FD_CT_EV_VEC];
	struct mmsghdr m[FD_CT_EV_VEC];
	struct iovec iov[FD_CT_EV_VEC];
	unsigned int n = 0;

	while (n < max) {
		unsigned int want = max - n < FD_CT_EV_VEC ? max - n : FD_CT_EV_VEC;
		int got, err;

		for (unsigned int i = 0; i < want; i++) {
			iov[i] = (struct iovec){ .iov_base = buf[i], .iov_len = FD_CT_EVBUF };
			m[i] = (struct mmsghdr){ .msg_hdr = { .msg_name = &from[i],
							      .msg_namelen = sizeof(from[i]),
							      .msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		got = recvmmsg(nfct_fd(c->ev), m, want, MSG_DONTWAIT, NULL);
		if (got < 0) {
			err = errno;
			if (err == EINTR)
				continue;
			if (err == EAGAIN || err == EWOULDBLOCK)
				break;
			if (err == ENOBUFS)	/* events were dropped */
				lost(c);
			return -err;
		}
		for (int i = 0; i < got; i++) {
			int rc;

			n++;
			if (!from_kernel(c, &from[i], m[i].msg_hdr.msg_namelen))
				continue;
			rc = fd_ct_parse(buf[i], m[i].msg_len, own, cb, arg);
			if (rc == -ENOMEM) {	/* an event not kept: as good as lost */
				lost(c);
				return -ENOBUFS;
			}
			if (rc < 0)	/* the kernel's datagram did not hold together: said, skipped */
				fprintf(stderr, "flowcutd: a conntrack event datagram (%u bytes) is "
					"malformed; skipped\n", m[i].msg_len);
		}
		if ((unsigned int)got < want)
			break;	/* read empty */
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

/*
 * One ctnetlink request at buf about the state with `tuple`'s original
 * tuple (and zone), asking for an ack: | nlmsghdr | nfgenmsg | CTA_TUPLE_ORIG
 * {...} | [CTA_ZONE] | and what `t` carries besides, built with
 * nfct_nlmsg_build().  The message, or NULL (a tuple it cannot build).
 */
static struct nlmsghdr *
ct_request(char *buf, uint8_t msg, uint32_t seq, const struct nf_conntrack *t)
{
	struct nlmsghdr *nlh;
	struct nfgenmsg *nfh;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | msg;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = nfct_get_attr_u8(t, ATTR_ORIG_L3PROTO);
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	if (nfct_nlmsg_build(nlh, t) < 0 || nlh->nlmsg_len > FD_CT_MSG_MAX)
		return NULL;
	return nlh;
}

/* ct_request() of only `tuple`'s original tuple and zone. */
static struct nlmsghdr *
tuple_request(char *buf, uint8_t msg, uint32_t seq, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *t = fd_ct_tuple(tuple);
	struct nlmsghdr *nlh;

	if (t == NULL)
		return NULL;
	nlh = ct_request(buf, msg, seq, t);
	nfct_destroy(t);
	return nlh;
}

int
fd_ct_update_msg(void *buf, uint32_t seq, const struct nf_conntrack *tuple,
		 const struct fd_ct_update *u)
{
	const uint8_t liberal = CT_TCP_FLAG_BE_LIBERAL,
		      mask = CT_TCP_FLAG_BE_LIBERAL | CT_TCP_FLAG_MAXACK_SET;
	struct nf_conntrack *t;
	struct nlmsghdr *nlh;

	if ((u->what & (FD_CT_UP_LOOSEN | FD_CT_UP_TIMEOUT | FD_CT_UP_MARK)) == 0 ||
	    ((u->what & FD_CT_UP_LOOSEN) &&
	     nfct_get_attr_u8(tuple, ATTR_ORIG_L4PROTO) != IPPROTO_TCP))
		return -EINVAL;
	t = fd_ct_tuple(tuple);
	if (t == NULL)
		return -EINVAL;
	if (u->what & FD_CT_UP_LOOSEN) {
		nfct_set_attr_u8(t, ATTR_TCP_FLAGS_ORIG, liberal);
		nfct_set_attr_u8(t, ATTR_TCP_MASK_ORIG, mask);
		nfct_set_attr_u8(t, ATTR_TCP_FLAGS_REPL, liberal);
		nfct_set_attr_u8(t, ATTR_TCP_MASK_REPL, mask);
	}
	if (u->what & FD_CT_UP_TIMEOUT)
		nfct_set_attr_u32(t, ATTR_TIMEOUT, u->timeout);
	nlh = ct_request(buf, IPCTNL_MSG_CT_NEW, seq, t);
	nfct_destroy(t);
	if (nlh == NULL)
		return -EINVAL;
	nlh->nlmsg_flags &= (uint16_t)~NLM_F_ACK;	/* a success sends nothing back */
	if (u->what & FD_CT_UP_MARK) {
		mnl_attr_put_u32(nlh, CTA_MARK, htonl(u->mark));
		mnl_attr_put_u32(nlh, CTA_MARK_MASK, htonl(u->mask));
	}
	return (int)nlh->nlmsg_len;
}

/* ---- requests in batches: kills, updates, GETs ---- */

static int batch_flush(struct fd_ct *c, struct ct_batch *b);

/* Room for one more message in b: a full queue flushed first. */
static char *
batch_room(struct fd_ct *c, struct ct_batch *b)
{
	if (b->n == FD_CT_BATCH || sizeof(b->buf) - b->len < FD_CT_MSG_MAX)
		(void)batch_flush(c, b);	/* each done has its answer, or the error */
	return b->buf + b->len;
}

/* The message at b's end queued, with what runs at its answer. */
static void
batch_queue(struct ct_batch *b, const struct nlmsghdr *nlh, fd_ct_done_fn *done,
	    fd_ct_state_fn *state_done, void *arg)
{
	b->q[b->n] = (struct ct_posted){ .done = done, .state_done = state_done, .arg = arg,
					 .off = (uint32_t)b->len };
	b->n++;
	b->len += MNL_ALIGN(nlh->nlmsg_len);
}

struct batch_answers {
	uint32_t first;		/* the batch's first sequence number */
	unsigned int n;
	int rc[FD_CT_BATCH];
	bool got[FD_CT_BATCH];
	struct nf_conntrack *ct[FD_CT_BATCH];	/* a GET's state, until its ack */
	unsigned int answered;
};

/*
 * One message of an answer datagram: the ack (or error) of one queued
 * request, or the state a GET asked for (before its ack).
 */
static int
batch_answer(const struct nlmsghdr *nlh, void *arg)
{
	struct batch_answers *a = arg;
	const struct nlmsgerr *e;
	uint32_t i = nlh->nlmsg_seq - a->first;

	if (i >= a->n || a->got[i])
		return 0;	/* not one of ours (nothing else is sent on it) */
	if (nlh->nlmsg_type == ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW)) {
		if (a->ct[i] == NULL && (a->ct[i] = nfct_new()) != NULL &&
		    fd_ctparse_msg(nlh, a->ct[i]) < 0) {
			nfct_destroy(a->ct[i]);	/* done gets -EPROTO */
			a->ct[i] = NULL;
		}
		return 0;
	}
	if (nlh->nlmsg_type != NLMSG_ERROR)
		return 0;
	if (nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -EBADMSG;
	e = mnl_nlmsg_get_payload(nlh);
	a->rc[i] = e->error <= 0 ? e->error : -EPROTO;
	a->got[i] = true;
	a->answered++;
	return 0;
}

/* The request socket emptied, not waiting (what a lost answer left behind). */
static void
req_drain(struct fd_ct *c)
{
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));

	for (unsigned int i = 0; i < 4096; i++) {
		ssize_t len = kernel_recv(c, mnl_socket_get_fd(c->nl), buf, sizeof(buf),
					  MSG_DONTWAIT);

		if (len < 0 && len != -ENOBUFS)
			return;	/* -EAGAIN: empty */
	}
}

/*
 * Reads the answers of the batch `a` numbers until `last` of it has one
 * (an update batch: its last message, the only one acked), or each has
 * one (every request acked).  0, or the error that stopped the reading.
 */
static int
batch_read(struct fd_ct *c, struct batch_answers *a, bool last)
{
	char buf[MNL_SOCKET_BUFFER_SIZE] __attribute__((aligned(NLMSG_ALIGNTO)));

	/* the kernel answers each message as it takes it: every answer is there now */
	while (last ? !a->got[a->n - 1] : a->answered < a->n) {
		ssize_t len = kernel_recv(c, mnl_socket_get_fd(c->nl), buf, sizeof(buf), 0);
		int rc;

		if (len < 0)
			return (int)len;
		rc = fd_nl_walk(buf, (size_t)len, batch_answer, a);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * A batch's errors lost (ENOBUFS on the request socket: an error's skb
 * found its buffer full, so which request failed is unknown): each one
 * not answered yet sent again alone, acked, and its answer read - an
 * update is idempotent (a timeout, flags and a masked mark set to the
 * same values), a kill nearly so (a state it deleted answers -ENOENT
 * the second time, which every caller takes as killed), and one ack fits
 * in any buffer.  A resync
 * would take every connection out for one lost answer; a read-back would
 * judge each state's timeout and flags again.  0, or the error that
 * stopped it (the updates not answered get it).
 */
static int
replay(struct fd_ct *c, struct ct_batch *b, const struct ct_posted *q, struct batch_answers *a)
{
	unsigned int n = 0;

	c->replays++;
	req_drain(c);
	for (unsigned int i = 0; i < a->n; i++) {
		struct nlmsghdr *nlh = (struct nlmsghdr *)(b->buf + q[i].off);
		struct batch_answers one = { .first = ++c->seq, .n = 1 };
		int err;

		if (a->got[i])
			continue;
		nlh->nlmsg_seq = one.first;
		nlh->nlmsg_flags |= NLM_F_ACK;
		if (mnl_socket_sendto(c->nl, nlh, nlh->nlmsg_len) < 0)
			return -errno;
		err = batch_read(c, &one, false);
		if (err != 0)
			return err;
		a->rc[i] = one.rc[0];
		a->got[i] = true;
		a->answered++;
		n++;
	}
	fprintf(stderr, "flowcutd: conntrack's errors of a batch of %u %s lost (ENOBUFS on "
		"the request socket): %u sent again, each acked\n", a->n,
		b == &c->kills ? "kills" : "updates", n);
	return 0;
}

static int
batch_flush(struct fd_ct *c, struct ct_batch *b)
{
	struct batch_answers a = { .first = c->seq + 1, .n = b->n };
	struct ct_posted q[FD_CT_BATCH];
	int err = 0;

	if (b->n == 0)
		return 0;
	/* numbered now: the three queues fill side by side */
	for (unsigned int i = 0; i < a.n; i++) {
		((struct nlmsghdr *)(b->buf + b->q[i].off))->nlmsg_seq = a.first + i;
		q[i] = b->q[i];
	}
	if (b->noack)	/* its answer comes after every error before it */
		((struct nlmsghdr *)(b->buf + q[a.n - 1].off))->nlmsg_flags |= NLM_F_ACK;
	c->seq += a.n;
	/* taken off the queue first: a done may queue the next requests */
	b->n = 0;
	if (mnl_socket_sendto(c->nl, b->buf, b->len) < 0)
		err = -errno;
	if (err == 0)
		err = batch_read(c, &a, b->noack);
	if (err == -ENOBUFS && b->noack)
		err = replay(c, b, q, &a);	/* b->buf still holds the batch */
	else if (err == -ENOBUFS)
		req_drain(c);	/* else the next flush's answers drop too, and its read waits forever */
	else if (err == 0 && b->noack)
		a.answered = a.n;	/* the last one's answer came: no error for the others */
	b->len = 0;
	for (unsigned int i = 0; i < a.n; i++) {
		int rc = a.got[i] || (err == 0 && b->noack) ? a.rc[i] : err;

		if (q[i].state_done == NULL)
			q[i].done(q[i].arg, rc);
		else if (rc == 0 && a.ct[i] == NULL)
			q[i].state_done(q[i].arg, NULL, -EPROTO);
		else
			q[i].state_done(q[i].arg, rc == 0 ? a.ct[i] : NULL, rc);
		if (a.ct[i] != NULL)
			nfct_destroy(a.ct[i]);
	}
	return err ? err : (int)a.answered;
}

/*
 *   | nlmsghdr (CT_DELETE, ACK) | nfgenmsg (family) | CTA_TUPLE_ORIG {...} | [CTA_ZONE] |
 */
int
fd_ct_kill_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_done_fn *done,
		void *arg)
{
	struct nlmsghdr *nlh = tuple_request(batch_room(c, &c->kills), IPCTNL_MSG_CT_DELETE, 0,
					     tuple);

	if (nlh == NULL)
		return -EINVAL;	/* not queued: the queue unchanged */
	batch_queue(&c->kills, nlh, done, NULL, arg);
	return 0;
}

int
fd_ct_kill_flush(struct fd_ct *c)
{
	return batch_flush(c, &c->kills);
}

int
fd_ct_update_post(struct fd_ct *c, const struct nf_conntrack *tuple,
		  const struct fd_ct_update *u, fd_ct_done_fn *done, void *arg)
{
	char *at = batch_room(c, &c->updates);
	int len = fd_ct_update_msg(at, 0, tuple, u);

	if (len < 0)
		return len;
	batch_queue(&c->updates, (const struct nlmsghdr *)at, done, NULL, arg);
	return 0;
}

int
fd_ct_update_flush(struct fd_ct *c)
{
	return batch_flush(c, &c->updates);
}

/*
 *   | nlmsghdr (CT_GET, ACK) | nfgenmsg (family) | CTA_TUPLE_ORIG {...} | [CTA_ZONE] |
 */
int
fd_ct_get_post(struct fd_ct *c, const struct nf_conntrack *tuple, fd_ct_state_fn *done,
	       void *arg)
{
	struct nlmsghdr *nlh = tuple_request(batch_room(c, &c->gets), IPCTNL_MSG_CT_GET, 0,
					     tuple);

	if (nlh == NULL)
		return -EINVAL;
	batch_queue(&c->gets, nlh, NULL, done, arg);
	return 0;
}

int
fd_ct_get_flush(struct fd_ct *c)
{
	return batch_flush(c, &c->gets);
}

/* ---- the synchronous calls: one post and a flush ---- */

static void
rc_of(void *arg, int rc)
{
	*(int *)arg = rc;
}

static int
update_now(struct fd_ct *c, const struct nf_conntrack *tuple, const struct fd_ct_update *u)
{
	int rc = fd_ct_update_post(c, tuple, u, rc_of, &rc);

	if (rc == 0)
		(void)fd_ct_update_flush(c);	/* rc_of ran: the answer, or the flush's error */
	return rc;
}

int
fd_ct_mark(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t mark, uint32_t mask)
{
	return update_now(c, tuple,
			  &(struct fd_ct_update){ .what = FD_CT_UP_MARK, .mark = mark, .mask = mask });
}

int
fd_ct_tcp_loosen(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	return update_now(c, tuple, &(struct fd_ct_update){ .what = FD_CT_UP_LOOSEN });
}

int
fd_ct_timeout(struct fd_ct *c, const struct nf_conntrack *tuple, uint32_t secs)
{
	return update_now(c, tuple,
			  &(struct fd_ct_update){ .what = FD_CT_UP_TIMEOUT, .timeout = secs });
}

int
fd_ct_kill(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	int rc = fd_ct_kill_post(c, tuple, rc_of, &rc);

	if (rc == 0)
		(void)fd_ct_kill_flush(c);	/* rc_of ran */
	return rc;
}

static void
clone_of(void *arg, const struct nf_conntrack *ct, int rc)
{
	(void)rc;
	*(struct nf_conntrack **)arg = ct != NULL ? nfct_clone(ct) : NULL;
}

struct nf_conntrack *
fd_ct_get(struct fd_ct *c, const struct nf_conntrack *tuple)
{
	struct nf_conntrack *got = NULL;

	if (fd_ct_get_post(c, tuple, clone_of, &got) == 0)
		(void)fd_ct_get_flush(c);	/* clone_of ran */
	return got;
}

/* ---- the incremental dump, filtered by mark ---- */

int
fd_ct_dump_msg(void *buf, uint32_t seq, uint32_t mark, uint32_t mask)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct nfgenmsg *nfh;

	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = AF_UNSPEC;
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	if (mask != 0) {
		struct nfct_filter_dump *f = nfct_filter_dump_create();
		int rc;

		if (f == NULL)
			return -ENOMEM;
		nfct_filter_dump_set_attr(f, NFCT_FILTER_DUMP_MARK,
					  &(struct nfct_filter_dump_mark){ .val = mark,
									   .mask = mask });
		rc = nfct_nlmsg_build_filter(nlh, f);
		nfct_filter_dump_destroy(f);
		if (rc < 0)
			return -ENOMEM;
	}
	return (int)nlh->nlmsg_len;
}

struct dump_ctx {
	fd_ct_state_fn *cb;
	void *arg;
	bool done;
};

/* One message of a dump's datagram: a state handed on (1), skipped (0), or an error. */
static int
dump_msg(const struct nlmsghdr *nlh, void *data)
{
	struct dump_ctx *d = data;
	struct nf_conntrack *ct;

	if (d->done)
		return 0;	/* nothing follows NLMSG_DONE */
	if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
		return -EINTR;
	if (nlh->nlmsg_type == NLMSG_DONE || nlh->nlmsg_type == NLMSG_ERROR) {
		int err = 0;

		/* DONE: an int, the dump's own error (optional); ERROR: struct nlmsgerr */
		if (nlh->nlmsg_type == NLMSG_ERROR &&
		    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
			return -EBADMSG;
		if (nlh->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
			memcpy(&err, mnl_nlmsg_get_payload(nlh), sizeof(err));
		if (nlh->nlmsg_type == NLMSG_DONE)
			d->done = true;
		else if (err == 0)
			return 0;	/* an ack: nothing to say */
		return err < 0 && err >= -4095 ? err : (err != 0 ? -EPROTO : 0);
	}
	if (nlh->nlmsg_type != ((NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_NEW))
		return 0;
	ct = nfct_new();
	if (ct == NULL)
		return -ENOMEM;
	if (fd_ctparse_msg(nlh, ct) < 0) {
		fprintf(stderr, "flowcutd: a dumped conntrack state (%u bytes) did not parse; "
			"skipped\n", nlh->nlmsg_len);
		nfct_destroy(ct);
		return 0;
	}
	d->cb(d->arg, ct, 0);
	nfct_destroy(ct);
	return 1;
}

int
fd_ct_dump_parse(const void *buf, size_t len, fd_ct_state_fn *cb, void *arg, bool *done)
{
	struct dump_ctx d = { .cb = cb, .arg = arg };
	int rc = fd_nl_walk(buf, len, dump_msg, &d);

	*done = d.done;
	return rc;
}

static void
dump_end(struct fd_ct *c)
{
	if (c->dump != NULL)
		mnl_socket_close(c->dump);
	c->dump = NULL;
}

int
fd_ct_dump_start(struct fd_ct *c, uint32_t mark, uint32_t mask)
{
	int len;

	dump_end(c);	/* a dump still being read: its answers go with its socket */
	c->dump = mnl_socket_open(NETLINK_NETFILTER);
	if (c->dump == NULL || mnl_socket_bind(c->dump, 0, MNL_SOCKET_AUTOPID) < 0) {
		int err = errno ? errno : EIO;

		fprintf(stderr, "flowcutd: conntrack dump socket (mark %#x/%#x): %s\n", mark, mask,
			strerror(err));
		dump_end(c);
		return -err;
	}
	len = fd_ct_dump_msg(c->dump_buf, ++c->seq, mark, mask);
	if (len < 0 || mnl_socket_sendto(c->dump, c->dump_buf, (size_t)len) < 0) {
		int err = len < 0 ? -len : errno;

		fprintf(stderr, "flowcutd: conntrack dump request (mark %#x/%#x): %s\n", mark, mask,
			strerror(err));
		dump_end(c);
		return -err;
	}
	return 0;
}

int
fd_ct_dump_next(struct fd_ct *c, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg)
{
	int handed = 0;

	for (unsigned int n = 0; c->dump != NULL && (n < max_datagrams || handed == 0); n++) {
		ssize_t len = kernel_recv(c, mnl_socket_get_fd(c->dump), c->dump_buf,
					  FD_CT_DUMP_BUF, 0);
		bool done = false;
		int rc = len < 0 ? (int)len : fd_ct_dump_parse(c->dump_buf, (size_t)len, cb, arg,
							      &done);

		if (rc < 0) {
			fprintf(stderr, "flowcutd: conntrack dump: %s; the dump is over, not whole\n",
				strerror(-rc));
			dump_end(c);
			return rc;
		}
		handed += rc;
		if (done)
			dump_end(c);
	}
	return handed;
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

static int
io_update_post(void *ctx, const struct nf_conntrack *tuple, const struct fd_ct_update *u,
	       fd_ct_done_fn *done, void *arg)
{
	return fd_ct_update_post(ctx, tuple, u, done, arg);
}

static int
io_update_flush(void *ctx)
{
	return fd_ct_update_flush(ctx);
}

static int
io_get_post(void *ctx, const struct nf_conntrack *tuple, fd_ct_state_fn *done, void *arg)
{
	return fd_ct_get_post(ctx, tuple, done, arg);
}

static int
io_get_flush(void *ctx)
{
	return fd_ct_get_flush(ctx);
}

static int
io_dump_start(void *ctx, uint32_t mark, uint32_t mask)
{
	return fd_ct_dump_start(ctx, mark, mask);
}

static int
io_dump_next(void *ctx, unsigned int max_datagrams, fd_ct_state_fn *cb, void *arg)
{
	return fd_ct_dump_next(ctx, max_datagrams, cb, arg);
}

static uint64_t
io_events_lost(void *ctx)
{
	return fd_ct_events_lost(ctx);
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
		.update_post = io_update_post, .update_flush = io_update_flush,
		.get_post = io_get_post, .get_flush = io_get_flush, .dump_start = io_dump_start,
		.dump_next = io_dump_next, .events_lost = io_events_lost,
		.established_timeout = io_established_timeout, .ctx = c,
	};
}
