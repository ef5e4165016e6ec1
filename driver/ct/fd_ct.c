/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct: the handle - its sockets opened and closed, the host's conntrack
 * settings read, its figures - and the events read on it; see fd_ct.h.
 */
#include "fd_ct.h"
#include "fd_ct_priv.h"
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
			if (!fd_ct_from_kernel(c, &from[i], m[i].msg_hdr.msg_namelen))
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
