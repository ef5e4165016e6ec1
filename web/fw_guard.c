/* SPDX-License-Identifier: BSD-3-Clause */
#include "fw_guard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

uint64_t
fw_guard_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void let_go(struct fw_guard *g, struct fw_guard_conn *e, uint64_t *why);

/* Those that waited past the deadline let go; under mu */
static void
expire(struct fw_guard *g, uint64_t now)
{
	for (unsigned int i = 0; i < FW_GUARD_MAX; i++) {
		struct fw_guard_conn *x = &g->conns[i];

		/* (since_ms may be a little past now: set by another thread after our clock read) */
		if (x->fd >= 0 && !x->going && !x->answering && now > x->since_ms &&
		    now - x->since_ms > FW_GUARD_REQUEST_MS)
			let_go(g, x, &g->st.let_go_deadline);
	}
}

/* The deadline kept without a new connection to look: every FW_GUARD_SWEEP_MS */
static void *
sweep(void *arg)
{
	struct fw_guard *g = arg;
	struct timespec until;

	pthread_mutex_lock(&g->mu);
	while (!g->stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += FW_GUARD_SWEEP_MS * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		if (pthread_cond_timedwait(&g->stop_cv, &g->mu, &until) == ETIMEDOUT)
			expire(g, fw_guard_now_ms());
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

int
fw_guard_init(struct fw_guard *g, unsigned int costly_per_s)
{
	pthread_condattr_t ca;

	memset(g, 0, sizeof(*g));
	g->costly_per_s = costly_per_s;
	pthread_mutex_init(&g->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->stop_cv, &ca);
	pthread_condattr_destroy(&ca);
	for (unsigned int i = 0; i < FW_GUARD_MAX; i++)
		g->conns[i].fd = -1;
	g->sweeping = pthread_create(&g->sweeper, NULL, sweep, g) == 0;
	if (!g->sweeping)
		fprintf(stderr, "flowcut-web: the guard's sweep thread: not made: deadlines kept as "
			"connections open\n");
	g->nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (g->nl == NULL || mnl_socket_bind(g->nl, 0, MNL_SOCKET_AUTOPID) != 0 ||
	    setsockopt(mnl_socket_get_fd(g->nl), SOL_SOCKET, SO_RCVTIMEO,
		       &(struct timeval){ .tv_usec = 200000 }, sizeof(struct timeval)) != 0) {
		int e = errno;

		fprintf(stderr, "flowcut-web: sock_diag: %s: clients told by address alone (every "
			"local one is the loopback)\n", strerror(e));
		if (g->nl != NULL)
			mnl_socket_close(g->nl);
		g->nl = NULL;
		return -e;
	}
	return 0;
}

void
fw_guard_fini(struct fw_guard *g)
{
	if (g->sweeping) {
		pthread_mutex_lock(&g->mu);
		g->stop = true;
		pthread_cond_signal(&g->stop_cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->sweeper, NULL);
	}
	pthread_cond_destroy(&g->stop_cv);
	for (unsigned int i = 0; i < FW_GUARD_MAX; i++)
		if (g->conns[i].fd >= 0)
			close(g->conns[i].fd);
	if (g->nl != NULL)
		mnl_socket_close(g->nl);
	pthread_mutex_destroy(&g->mu);
}

/* the kernel's tcp_states.h: not in a uapi header */
#define TCP_TIME_WAIT_STATE 6
#define TCP_LISTEN_STATE 10

struct uid_ans {
	uint16_t sport, dport;	/* the peer socket's, network order: the answer must be it */
	uid_t uid;
	bool found;
};

/*
 * The answer: the peer's own socket, or nothing.  The kernel's exact
 * lookup falls back to a listener on the port, and a TIME_WAIT or
 * orphaned socket says uid 0: neither is the peer (a remote peer's
 * source port on a root listener's would be counted as root).
 */
static int
uid_cb(const struct nlmsghdr *nlh, void *data)
{
	struct uid_ans *a = data;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);

	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*m))
		return MNL_CB_ERROR;
	if (m->idiag_state == TCP_LISTEN_STATE || m->idiag_state == TCP_TIME_WAIT_STATE ||
	    m->idiag_inode == 0 || m->id.idiag_sport != a->sport || m->id.idiag_dport != a->dport)
		return MNL_CB_STOP;
	a->uid = m->idiag_uid;
	a->found = true;
	return MNL_CB_STOP;
}

/*
 * The uid owning the peer end of fd, when the peer is a socket of this
 * machine (its netns): the kernel's own socket, looked up by its four
 * numbers.  0, or -errno (-ENOENT: not ours to see, a peer elsewhere).
 */
static int
peer_uid(struct fw_guard *g, const struct sockaddr_storage *local,
	 const struct sockaddr_storage *peer, uid_t *uid)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh;
	struct inet_diag_req_v2 *r;
	struct uid_ans a = { 0 };
	uint32_t seq = ++g->seq, port = mnl_socket_get_portid(g->nl);
	ssize_t n;
	int rc;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
	r->sdiag_family = (uint8_t)peer->ss_family;
	r->sdiag_protocol = IPPROTO_TCP;
	r->idiag_states = ~0u;
	r->id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	/* the peer's socket: its source is the peer, its destination us */
	if (peer->ss_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)local;

		r->id.idiag_sport = p->sin_port;
		r->id.idiag_dport = l->sin_port;
		memcpy(r->id.idiag_src, &p->sin_addr, 4);
		memcpy(r->id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)local;

		r->id.idiag_sport = p->sin6_port;
		r->id.idiag_dport = l->sin6_port;
		memcpy(r->id.idiag_src, &p->sin6_addr, 16);
		memcpy(r->id.idiag_dst, &l->sin6_addr, 16);
	}
	a.sport = r->id.idiag_sport;
	a.dport = r->id.idiag_dport;
	if (mnl_socket_sendto(g->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	/* bounded (SO_RCVTIMEO); a late answer to an earlier question is read past */
	do {
		n = mnl_socket_recvfrom(g->nl, buf, sizeof(buf));
		if (n < 0)
			return -errno;
		errno = 0;
		rc = mnl_cb_run(buf, (size_t)n, seq, port, uid_cb, &a);
	} while (rc < 0 && errno == EPROTO);
	if (rc < 0)
		return errno ? -errno : -ENOENT;
	if (!a.found)
		return -ENOENT;
	*uid = a.uid;
	return 0;
}

/* The client of a connection: its index, made (or the least recently seen idle one's) */
static int
client_of(struct fw_guard *g, int fd, uint64_t now)
{
	struct sockaddr_storage local, peer;
	socklen_t ll = sizeof(local), pl = sizeof(peer);
	struct fw_guard_client k = { 0 };
	int idle = -1;

	if (getsockname(fd, (struct sockaddr *)&local, &ll) != 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 ||
	    (peer.ss_family != AF_INET && peer.ss_family != AF_INET6)) {
		k.kind = 4;	/* not an IP peer: one client, all of them */
	} else if (g->nl != NULL && peer_uid(g, &local, &peer, &k.uid) == 0) {
		k.kind = 0;
	} else {
		g->st.uid_unknown++;
		k.kind = peer.ss_family == AF_INET ? 4 : 6;
		if (k.kind == 4)
			memcpy(k.addr, &((struct sockaddr_in *)&peer)->sin_addr, 4);
		else	/* a /64: one host's addresses are many */
			memcpy(k.addr, &((struct sockaddr_in6 *)&peer)->sin6_addr, 8);
	}
	for (unsigned int i = 0; i < g->nclients; i++) {
		struct fw_guard_client *c = &g->clients[i];

		if (c->kind == k.kind && (k.kind == 0 ? c->uid == k.uid :
					  memcmp(c->addr, k.addr, sizeof(k.addr)) == 0)) {
			c->seen_ms = now;
			return (int)i;
		}
		if (c->open == 0 && (idle < 0 || c->seen_ms < g->clients[idle].seen_ms))
			idle = (int)i;
	}
	if (g->nclients < FW_GUARD_CLIENTS)
		idle = (int)g->nclients++;
	else if (idle < 0)
		return -1;	/* FW_GUARD_CLIENTS clients each holding a connection */
	k.tokens = 2.0 * g->costly_per_s;
	k.refill_ms = k.seen_ms = now;
	g->clients[idle] = k;
	return idle;
}

/* e goes: shut (MHD sees the peer's close and closes it), no longer counted */
static void
let_go(struct fw_guard *g, struct fw_guard_conn *e, uint64_t *why)
{
	shutdown(e->fd, SHUT_RDWR);
	e->going = true;
	g->open--;
	if (e->client >= 0)
		g->clients[e->client].open--;
	(*why)++;
}

/* The oldest waiting entry (of client, or of any when client < 0) but self, or NULL */
static struct fw_guard_conn *
oldest_waiting(struct fw_guard *g, int client, const struct fw_guard_conn *self)
{
	struct fw_guard_conn *best = NULL;

	for (unsigned int i = 0; i < FW_GUARD_MAX; i++) {
		struct fw_guard_conn *e = &g->conns[i];

		if (e == self || e->fd < 0 || e->going || e->answering ||
		    (client >= 0 && e->client != client))
			continue;
		if (best == NULL || e->since_ms < best->since_ms)
			best = e;
	}
	return best;
}

struct fw_guard_conn *
fw_guard_open(struct fw_guard *g, int fd, uint64_t now)
{
	struct fw_guard_conn *e = NULL, *old;
	int hog = -1;

	pthread_mutex_lock(&g->mu);
	g->st.opened++;
	expire(g, now);
	for (unsigned int i = 0; i < FW_GUARD_MAX && e == NULL; i++)
		if (g->conns[i].fd < 0)
			e = &g->conns[i];
	if (e == NULL || (e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
		if (e != NULL)
			e->fd = -1;
		pthread_mutex_unlock(&g->mu);
		return NULL;
	}
	e->client = client_of(g, fd, now);
	e->since_ms = now;
	e->answering = e->going = false;
	e->over = e->client < 0;	/* FW_GUARD_CLIENTS clients each holding one: no bound to count it in */
	if (e->client >= 0 && g->clients[e->client].open >= FW_GUARD_PER_CLIENT) {
		if ((old = oldest_waiting(g, e->client, e)) != NULL)
			let_go(g, old, &g->st.let_go_client);
		else
			e->over = true;
	}
	if (!e->over && g->open >= FW_GUARD_OPEN) {
		for (unsigned int i = 0; i < g->nclients; i++)
			if (hog < 0 || g->clients[i].open > g->clients[hog].open)
				hog = (int)i;
		if ((old = oldest_waiting(g, hog, e)) == NULL)
			old = oldest_waiting(g, -1, e);
		if (old != NULL)
			let_go(g, old, &g->st.let_go_open);
		else
			e->over = true;
	}
	g->st.over += e->over;
	g->open++;
	if (e->client >= 0)
		g->clients[e->client].open++;
	pthread_mutex_unlock(&g->mu);
	return e;
}

void
fw_guard_answering(struct fw_guard *g, struct fw_guard_conn *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	e->answering = true;
	pthread_mutex_unlock(&g->mu);
}

void
fw_guard_answered(struct fw_guard *g, struct fw_guard_conn *e, uint64_t now)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	e->answering = false;
	e->since_ms = now;
	pthread_mutex_unlock(&g->mu);
}

void
fw_guard_close(struct fw_guard *g, struct fw_guard_conn *e)
{
	if (e == NULL)
		return;
	pthread_mutex_lock(&g->mu);
	if (!e->going) {
		g->open--;
		if (e->client >= 0)
			g->clients[e->client].open--;
	}
	close(e->fd);
	e->fd = -1;
	pthread_mutex_unlock(&g->mu);
}

bool
fw_guard_costly(struct fw_guard *g, struct fw_guard_conn *e, uint64_t now)
{
	struct fw_guard_client *c;
	bool ok;

	if (e == NULL || e->client < 0)
		return true;
	pthread_mutex_lock(&g->mu);
	c = &g->clients[e->client];
	if (now > c->refill_ms)	/* (another thread's later clock may have refilled it) */
		c->tokens += (double)(now - c->refill_ms) * g->costly_per_s / 1000.0;
	else
		now = c->refill_ms;
	if (c->tokens > 2.0 * g->costly_per_s)
		c->tokens = 2.0 * g->costly_per_s;
	c->refill_ms = now;
	ok = c->tokens >= 1.0;
	if (ok)
		c->tokens -= 1.0;
	else
		g->st.costly_refused++;
	pthread_mutex_unlock(&g->mu);
	return ok;
}

void
fw_guard_stats(struct fw_guard *g, struct fw_guard_stats *st)
{
	pthread_mutex_lock(&g->mu);
	*st = g->st;
	pthread_mutex_unlock(&g->mu);
}
