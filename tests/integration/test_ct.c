/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct's posted I/O against the kernel's conntrack, in a network
 * namespace of the test's own (fc_netns): the dump filtered by mark, a
 * batch of updates read back, update batches' errors without an ack each
 * (and lost to a full buffer), a batch of GETs (one of a state gone), the
 * event socket's buffer growing on ENOBUFS, our own updates' events
 * refused by the event socket's filter; fd_ctparse against the library on
 * the kernel's own messages.  Root only: without it, or
 * without conntrack, every case reports SKIP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>
#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack_tcp.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

#include "fc_netns.h"
#include "fc_nfct_same.h"
#include "fd_ct.h"
#include "fd_ctparse.h"

#define BIT 0x40000000u
#define N_UPDATES 100

static const char *skip_why;
static struct nfct_handle *nfct;	/* the test's own, to make and read states */
static struct fd_ct *c;

#define SKIP_UNLESS_READY()						\
	do {								\
		if (skip_why) {						\
			print_message("skipped: %s\n", skip_why);	\
			skip();						\
		}							\
	} while (0)

/* A state's two tuples' addresses: the client 198.18.0.10 (2001:2::10), the server 198.19.0.10 (2001:2:1::10). */
static struct nf_conntrack *
addressed(bool v6)
{
	struct nf_conntrack *ct = nfct_new();

	assert_non_null(ct);
	if (v6) {
		uint8_t a[16] = { 0x20, 0x01, 0, 2, [15] = 0x10 };
		uint8_t b[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, [15] = 0x10 };

		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET6);
		nfct_set_attr(ct, ATTR_IPV6_SRC, a);
		nfct_set_attr(ct, ATTR_IPV6_DST, b);
		nfct_set_attr(ct, ATTR_REPL_IPV6_SRC, b);
		nfct_set_attr(ct, ATTR_REPL_IPV6_DST, a);
	} else {
		nfct_set_attr_u8(ct, ATTR_L3PROTO, AF_INET);
		nfct_set_attr_u32(ct, ATTR_IPV4_SRC, inet_addr("198.18.0.10"));
		nfct_set_attr_u32(ct, ATTR_IPV4_DST, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_SRC, inet_addr("198.19.0.10"));
		nfct_set_attr_u32(ct, ATTR_REPL_IPV4_DST, inet_addr("198.18.0.10"));
	}
	nfct_set_attr_u8(ct, ATTR_REPL_L3PROTO, v6 ? AF_INET6 : AF_INET);
	return ct;
}

/* An assured state, i-th of its kind: IPv4 UDP for even i, IPv6 TCP ESTABLISHED for odd. */
static struct nf_conntrack *
st(unsigned int i, uint32_t mark)
{
	uint16_t sport = (uint16_t)(10000 + i);
	bool v6 = i % 2;
	struct nf_conntrack *ct = addressed(v6);

	if (v6) {
		nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_TCP);
		nfct_set_attr_u8(ct, ATTR_TCP_STATE, TCP_CONNTRACK_ESTABLISHED);
	} else {
		nfct_set_attr_u8(ct, ATTR_L4PROTO, IPPROTO_UDP);
	}
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, v6 ? IPPROTO_TCP : IPPROTO_UDP);
	nfct_set_attr_u16(ct, ATTR_PORT_SRC, htons(sport));
	nfct_set_attr_u16(ct, ATTR_PORT_DST, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_SRC, htons(443));
	nfct_set_attr_u16(ct, ATTR_REPL_PORT_DST, htons(sport));
	nfct_set_attr_u32(ct, ATTR_STATUS, IPS_ASSURED | IPS_SEEN_REPLY);
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 300);
	nfct_set_attr_u32(ct, ATTR_MARK, mark);
	return ct;
}

static void
create(const struct nf_conntrack *ct)
{
	if (nfct_query(nfct, NFCT_Q_CREATE, ct) != 0)
		fail_msg("NFCT_Q_CREATE: %s", strerror(errno));
}

static int
setup(void **state)
{
	(void)state;
	skip_why = fc_netns_front_ports();
	if (skip_why)
		return 0;
	nfct = nfct_open(CONNTRACK, 0);
	c = fd_ct_open();
	assert_non_null(nfct);
	assert_non_null(c);
	print_message("the event socket's receive buffer at open: %u bytes (asked %u)\n",
		      fd_ct_event_buf(c), FD_CT_EVBUF_ASK);
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	if (skip_why)
		return 0;
	fd_ct_close(c);
	nfct_close(nfct);
	return 0;
}

/* Each case: no state in conntrack, no event queued. */
static int
fresh(void **state)
{
	uint8_t family = AF_INET;

	(void)state;
	if (skip_why)
		return 0;
	nfct_query(nfct, NFCT_Q_FLUSH, &family);
	family = AF_INET6;
	nfct_query(nfct, NFCT_Q_FLUSH, &family);
	fd_ct_drain(c);
	return 0;
}

struct dumped {
	unsigned int n, marked;
	uint32_t ports;		/* bit i: state i seen */
};

static void
on_dumped(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct dumped *d = arg;

	assert_int_equal(rc, 0);
	d->n++;
	d->marked += (nfct_get_attr_u32(ct, ATTR_MARK) & BIT) != 0;
	d->ports |= 1u << (ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC)) - 10000);
}

/* A whole dump, `per` datagrams a call, into d; the calls it took. */
static unsigned int
dump_all(uint32_t mark, uint32_t mask, unsigned int per, struct dumped *d)
{
	unsigned int calls = 0;
	int rc;

	memset(d, 0, sizeof(*d));
	assert_int_equal(fd_ct_dump_start(c, mark, mask), 0);
	while ((rc = fd_ct_dump_next(c, per, on_dumped, d)) > 0)
		calls++;
	assert_int_equal(rc, 0);
	assert_int_equal(fd_ct_dump_next(c, per, on_dumped, d), 0);	/* over, and stays so */
	return calls;
}

/* Twelve states, IPv4 and IPv6; seven with the bit (and other bits of their own). */
static void
test_dump_filtered_by_mark(void **state)
{
	struct dumped d;
	uint32_t want = 0;

	(void)state;
	SKIP_UNLESS_READY();
	for (unsigned int i = 0; i < 12; i++) {
		bool marked = i % 3 != 0 || i == 3;
		struct nf_conntrack *ct = st(i, (marked ? BIT : 0) | (i * 0x11));

		create(ct);
		nfct_destroy(ct);
		want |= marked ? 1u << i : 0;
	}
	assert_int_equal(__builtin_popcount(want), 9);
	dump_all(BIT, BIT, 1, &d);
	assert_int_equal(d.n, 9);
	assert_int_equal(d.marked, 9);
	assert_int_equal(d.ports, want);
	/* a mark compared whole under its mask: BIT|0x11 (state 1) alone */
	dump_all(BIT | 0x11, BIT | 0xff, 4, &d);
	assert_int_equal(d.n, 1);
	assert_int_equal(d.ports, 1u << 1);
	/* no mask: every state */
	dump_all(0, 0, 64, &d);
	assert_int_equal(d.n, 12);
	assert_int_equal(d.ports, 0xfff);
	/* a dump started again before its end: the new one whole */
	assert_int_equal(fd_ct_dump_start(c, 0, 0), 0);
	dump_all(BIT, BIT, 2, &d);
	assert_int_equal(d.n, 9);
}

static void
rc_rec(void *arg, int rc)
{
	int *r = arg;

	assert_int_equal(*r, 1);	/* once */
	*r = rc;
}

/*
 * 100 states updated in batches (two flushed from inside the posts): each
 * a timeout of its own; the UDP ones their mark's bit set, the TCP ones
 * loosened too.  Read back: every timeout and mark as asked.  One more,
 * of a state not there: -ENOENT.
 */
static void
test_updates_posted(void **state)
{
	struct nf_conntrack *ct[N_UPDATES + 1];
	int rc[N_UPDATES + 1];

	(void)state;
	SKIP_UNLESS_READY();
	for (unsigned int i = 0; i <= N_UPDATES; i++) {
		ct[i] = st(i, 0x5);
		if (i < N_UPDATES)
			create(ct[i]);
		rc[i] = 1;
	}
	for (unsigned int i = 0; i <= N_UPDATES; i++) {
		struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT, .timeout = 1000 + 10 * i };

		u.what |= i % 2 ? FD_CT_UP_LOOSEN : FD_CT_UP_MARK;
		u.mark = u.mask = BIT;
		assert_int_equal(fd_ct_update_post(c, ct[i], &u, rc_rec, &rc[i]), 0);
	}
	assert_int_equal(rc[FD_CT_BATCH - 1], 0);	/* the first batch went from a post */
	assert_int_equal(rc[N_UPDATES], 1);		/* queued, not sent */
	assert_int_equal(fd_ct_update_flush(c), N_UPDATES + 1 - FD_CT_BATCH);
	assert_int_equal(fd_ct_update_flush(c), 0);	/* nothing queued */
	for (unsigned int i = 0; i < N_UPDATES; i++) {
		struct nf_conntrack *now = fd_ct_get(c, ct[i]);
		uint32_t t;

		assert_int_equal(rc[i], 0);
		assert_non_null(now);
		t = nfct_get_attr_u32(now, ATTR_TIMEOUT);
		if (t > 1000 + 10 * i || t + 3 < 1000 + 10 * i)
			fail_msg("state %u: timeout %u, asked %u", i, t, 1000 + 10 * i);
		assert_int_equal(nfct_get_attr_u32(now, ATTR_MARK), i % 2 ? 0x5 : 0x5 | BIT);
		nfct_destroy(now);
	}
	assert_int_equal(rc[N_UPDATES], -ENOENT);
	for (unsigned int i = 0; i <= N_UPDATES; i++)
		nfct_destroy(ct[i]);
}

/*
 * An update batch's answers without an ack each (fd_ct.h: errors only,
 * the last message acked): a batch of FD_CT_BATCH, some of its states
 * not there.  Each update's done gets 0 or -ENOENT as its state is there
 * or not, whether the one gone is in the middle or last (its error is the
 * batch's ack); with the request socket's buffer shrunk so the errors
 * overflow it (ENOBUFS), the batch is sent again one by one, and the
 * answers are right still.  The states there have the asked timeout.
 */
static void
test_update_errors_without_acks(void **state)
{
	static const struct {
		const char *name;
		int rcvbuf;		/* 0: the socket's own */
		unsigned int gone_every, gone_first;	/* i % every == first: gone (every 0: none) */
		uint64_t replays;
	} rows[] = {
		{ "every state there: each 0", 0, 0, 0, 0 },
		{ "one gone, the middle: -ENOENT for it alone", 0, FD_CT_BATCH, 30, 0 },
		{ "one gone, the last: its error is the batch's ack", 0, FD_CT_BATCH, FD_CT_BATCH - 1, 0 },
		{ "every other gone: each its own answer", 0, 2, 1, 0 },
		{ "errors lost (ENOBUFS): sent again one by one, each answer right", 2048, 2, 0, 1 },
	};
	int own = 0;
	socklen_t olen = sizeof(own);

	(void)state;
	SKIP_UNLESS_READY();
	assert_int_equal(getsockopt(fd_ct_request_fd(c), SOL_SOCKET, SO_RCVBUF, &own, &olen), 0);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct nf_conntrack *ct[FD_CT_BATCH];
		int rc[FD_CT_BATCH], buf = rows[r].rcvbuf ? rows[r].rcvbuf : own / 2;
		uint64_t replays = fd_ct_replays(c);

		fresh(NULL);
		assert_int_equal(setsockopt(fd_ct_request_fd(c), SOL_SOCKET, SO_RCVBUFFORCE, &buf,
					    sizeof(buf)), 0);
		for (unsigned int i = 0; i < FD_CT_BATCH; i++) {
			bool gone = rows[r].gone_every && i % rows[r].gone_every == rows[r].gone_first;
			struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT, .timeout = 2000 + i };

			ct[i] = st(i, 0);
			if (!gone)
				create(ct[i]);
			rc[i] = 1;
			if (i % 2)
				u.what |= FD_CT_UP_LOOSEN;
			assert_int_equal(fd_ct_update_post(c, ct[i], &u, rc_rec, &rc[i]), 0);
		}
		assert_int_equal(fd_ct_update_flush(c), FD_CT_BATCH);
		buf = own / 2;
		assert_int_equal(setsockopt(fd_ct_request_fd(c), SOL_SOCKET, SO_RCVBUFFORCE, &buf,
					    sizeof(buf)), 0);
		for (unsigned int i = 0; i < FD_CT_BATCH; i++) {
			bool gone = rows[r].gone_every && i % rows[r].gone_every == rows[r].gone_first;
			struct nf_conntrack *now = gone ? NULL : fd_ct_get(c, ct[i]);

			if (rc[i] != (gone ? -ENOENT : 0))
				fail_msg("%s: update %u: %d, not %d", rows[r].name, i, rc[i],
					 gone ? -ENOENT : 0);
			if (now != NULL && nfct_get_attr_u32(now, ATTR_TIMEOUT) + 3 < 2000 + i)
				fail_msg("%s: state %u: timeout %u, asked %u", rows[r].name, i,
					 nfct_get_attr_u32(now, ATTR_TIMEOUT), 2000 + i);
			assert_true(gone || now != NULL);
			if (now != NULL)
				nfct_destroy(now);
			nfct_destroy(ct[i]);
		}
		if (fd_ct_replays(c) - replays != rows[r].replays)
			fail_msg("%s: %llu batches sent again, not %llu", rows[r].name,
				 (unsigned long long)(fd_ct_replays(c) - replays),
				 (unsigned long long)rows[r].replays);
	}
}

struct got {
	int rc;			/* 1: not answered yet */
	uint16_t sport;
	uint32_t mark;
};

static void
got_rec(void *arg, const struct nf_conntrack *ct, int rc)
{
	struct got *g = arg;

	assert_int_equal(g->rc, 1);
	g->rc = rc;
	assert_true((ct != NULL) == (rc == 0));
	if (ct != NULL) {
		g->sport = ntohs(nfct_get_attr_u16(ct, ATTR_ORIG_PORT_SRC));
		g->mark = nfct_get_attr_u32(ct, ATTR_MARK);
	}
}

/*
 * GETs in batches: 70 states, one killed before the flush, two batches
 * (one from inside a post): each answered with its own state whole, the
 * killed one -ENOENT.
 */
static void
test_gets_posted(void **state)
{
	enum { N = 70, GONE = 68 };
	struct nf_conntrack *ct[N];
	struct got g[N];

	(void)state;
	SKIP_UNLESS_READY();
	for (unsigned int i = 0; i < N; i++) {
		ct[i] = st(i, i);
		create(ct[i]);
		g[i].rc = 1;
	}
	for (unsigned int i = 0; i < N; i++)
		assert_int_equal(fd_ct_get_post(c, ct[i], got_rec, &g[i]), 0);
	assert_int_equal(fd_ct_kill(c, ct[GONE]), 0);
	assert_int_equal(fd_ct_get_flush(c), N - FD_CT_BATCH);
	for (unsigned int i = 0; i < N; i++) {
		if (i == GONE) {
			assert_int_equal(g[i].rc, -ENOENT);
			continue;
		}
		assert_int_equal(g[i].rc, 0);
		assert_int_equal(g[i].sport, 10000 + i);
		assert_int_equal(g[i].mark, i);
	}
	for (unsigned int i = 0; i < N; i++)
		nfct_destroy(ct[i]);
}

static void
ignore(void *arg, enum fd_ct_event type, const struct nf_conntrack *ct, bool own)
{
	(void)arg, (void)type, (void)ct, (void)own;
}

/* What the kernel makes of a receive buffer asked with SO_RCVBUFFORCE: twice, at most INT_MAX - 1. */
static unsigned int
got_for(unsigned long ask)
{
	return 2 * (unsigned int)(ask < INT32_MAX / 2 ? ask : INT32_MAX / 2);
}

/*
 * ENOBUFS: the event socket shrunk to the kernel's least (a buffer of
 * FD_CT_EVBUF_ASK takes some 800,000 events to fill), 300 states made
 * unread; then read: -ENOBUFS, counted, and the buffer doubled from what
 * fd_ct asked, up to FD_CT_EVBUF_MAX; three times: once at the most, it
 * is not asked again (the shrunk buffer stays).
 */
static void
test_event_buffer_grows(void **state)
{
	unsigned int before = fd_ct_event_buf(c), sizes[3];
	uint64_t lost = fd_ct_events_lost(c);
	unsigned long ask = FD_CT_EVBUF_ASK;

	(void)state;
	SKIP_UNLESS_READY();
	for (unsigned int round = 0; round < 3; round++) {
		int small = 4096, rc = 0;

		assert_int_equal(setsockopt(fd_ct_fd(c), SOL_SOCKET, SO_RCVBUFFORCE, &small,
					    sizeof(small)), 0);
		for (unsigned int i = 0; i < 300; i++) {
			struct nf_conntrack *ct = st(1000 * round + i, 0);

			create(ct);
			nfct_destroy(ct);
		}
		for (int tries = 0; tries < 100 && rc >= 0; tries++)
			rc = fd_ct_events(c, 64, ignore, NULL);
		assert_int_equal(rc, -ENOBUFS);
		assert_int_equal(fd_ct_events_lost(c), lost + round + 1);
		sizes[round] = fd_ct_event_buf(c);
		print_message("after ENOBUFS %u: %u bytes\n", round + 1, sizes[round]);
		fd_ct_drain(c);
	}
	for (unsigned int round = 0; round < 3; round++) {
		bool asked = ask < FD_CT_EVBUF_MAX;

		ask = asked ? (2 * ask < FD_CT_EVBUF_MAX ? 2 * ask : FD_CT_EVBUF_MAX) : ask;
		/* with CAP_NET_ADMIN (SO_RCVBUFFORCE) the size is the asked one's */
		if (asked && before >= got_for(FD_CT_EVBUF_ASK))
			assert_int_equal(sizes[round], got_for(ask));
		if (asked)
			assert_true(sizes[round] > 4096 * 2);
		else	/* at the most: not asked again */
			assert_int_equal(sizes[round], 4096 * 2);
	}
}

/* The event datagrams queued on fd_ct's event socket now, read and counted. */
static unsigned int
queued(void)
{
	static char buf[16384];
	unsigned int n = 0;

	while (recv(fd_ct_fd(c), buf, sizeof(buf), MSG_DONTWAIT) >= 0)
		n++;
	assert_int_equal(errno, EAGAIN);
	return n;
}

enum act { OUR_UPDATE, OUR_LOOSEN, OUR_KILL, THEIR_UPDATE, THEIR_CREATE };

/*
 * The event socket's filter (fd_ct_own_filter) in the kernel: each row
 * does one thing to N states (IPv4 UDP and IPv6 TCP), made beforehand by
 * the test's own socket; the datagrams queued on the event socket after
 * it.  Our updates raise none (refused before they are queued); our kills'
 * DESTROYs, another's updates and creates come, one datagram an event.
 */
static void
test_own_updates_filtered(void **state)
{
	enum { N = 10 };
	static const struct {
		const char *name;
		enum act act;
		unsigned int per_state;
	} rows[] = {
		{ "our update (timeout and mark, posted)", OUR_UPDATE, 0 },
		{ "our loosen (synchronous)", OUR_LOOSEN, 0 },
		{ "another's update", THEIR_UPDATE, 1 },
		{ "our kill: its DESTROY", OUR_KILL, 1 },
		{ "another's create", THEIR_CREATE, 1 },
	};

	(void)state;
	SKIP_UNLESS_READY();
	/* room for every row's events (test_event_buffer_grows may have left it small) */
	assert_int_equal(setsockopt(fd_ct_fd(c), SOL_SOCKET, SO_RCVBUFFORCE, &(int){ 1 << 20 },
				    sizeof(int)), 0);
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct nf_conntrack *ct[N];
		unsigned int got;
		int rc[N];

		for (unsigned int i = 0; i < N; i++) {
			ct[i] = st(100 * (unsigned int)r + 2 * i + (rows[r].act == OUR_LOOSEN), 0);
			if (rows[r].act != THEIR_CREATE)
				create(ct[i]);
			rc[i] = 1;
		}
		(void)queued();
		for (unsigned int i = 0; i < N; i++) {
			struct fd_ct_update u = { .what = FD_CT_UP_TIMEOUT | FD_CT_UP_MARK,
						  .timeout = 777, .mark = BIT, .mask = BIT };

			switch (rows[r].act) {
			case OUR_UPDATE:
				assert_int_equal(fd_ct_update_post(c, ct[i], &u, rc_rec, &rc[i]), 0);
				break;
			case OUR_LOOSEN:
				assert_int_equal(fd_ct_tcp_loosen(c, ct[i]), 0);
				break;
			case OUR_KILL:
				assert_int_equal(fd_ct_kill(c, ct[i]), 0);
				break;
			case THEIR_UPDATE:
				nfct_set_attr_u32(ct[i], ATTR_TIMEOUT, 777);
				assert_int_equal(nfct_query(nfct, NFCT_Q_UPDATE, ct[i]), 0);
				break;
			case THEIR_CREATE:
				create(ct[i]);
				break;
			}
		}
		if (rows[r].act == OUR_UPDATE) {
			assert_int_equal(fd_ct_update_flush(c), N);
			for (unsigned int i = 0; i < N; i++)
				assert_int_equal(rc[i], 0);
		}
		got = queued();
		if (got != N * rows[r].per_state)
			fail_msg("%s: %u datagrams queued on the event socket, want %u", rows[r].name,
				 got, N * rows[r].per_state);
		for (unsigned int i = 0; i < N; i++)
			nfct_destroy(ct[i]);
	}
}

/* Each ctnetlink message of a datagram parsed by fd_ctparse and by the library: the same. */
static unsigned int
parsed_alike(const char *what, const void *buf, int len)
{
	unsigned int n = 0;

	for (const struct nlmsghdr *h = buf; mnl_nlmsg_ok(h, len); h = mnl_nlmsg_next(h, &len)) {
		struct nf_conntrack *a, *b;
		const char *diff;

		if (NFNL_SUBSYS_ID(h->nlmsg_type) != NFNL_SUBSYS_CTNETLINK)
			continue;
		a = nfct_new();
		b = nfct_new();
		assert_non_null(a);
		assert_non_null(b);
		if (fd_ctparse_msg(h, a) != 0)
			fail_msg("%s: fd_ctparse refused the kernel's message (%u bytes)", what,
				 h->nlmsg_len);
		assert_true(nfct_nlmsg_parse(h, b) >= 0);
		diff = fc_nfct_differ(a, b);
		if (diff != NULL)
			fail_msg("%s: fd_ctparse and the library differ on %s", what, diff);
		n++;
		nfct_destroy(a);
		nfct_destroy(b);
	}
	return n;
}

/* The i-th echo state: ICMP for even i, ICMPv6 for odd. */
static struct nf_conntrack *
echo(unsigned int i)
{
	bool v6 = i % 2;
	struct nf_conntrack *ct = addressed(v6);

	nfct_set_attr_u8(ct, ATTR_L4PROTO, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	nfct_set_attr_u8(ct, ATTR_ICMP_TYPE, v6 ? 128 : 8);
	nfct_set_attr_u8(ct, ATTR_REPL_L4PROTO, v6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	nfct_set_attr_u8(ct, ATTR_ICMP_CODE, 0);
	nfct_set_attr_u16(ct, ATTR_ICMP_ID, htons((uint16_t)(700 + i)));
	nfct_set_attr_u32(ct, ATTR_TIMEOUT, 30);
	nfct_set_attr_u32(ct, ATTR_MARK, BIT);
	return ct;
}

/*
 * fd_ctparse against libnetfilter_conntrack (the oracle) on the kernel's
 * own messages: states of each kind flowcutd reads - IPv4 UDP, IPv6 TCP
 * with window scales and flags, ICMP and ICMPv6 echo, one in a zone -
 * their NEW, UPDATE and DESTROY events and a dump of them, every message
 * parsed both ways and compared (fc_nfct_differ).
 */
static void
test_parse_as_the_library(void **state)
{
	enum { K = 6 };
	static char buf[1 << 16] __attribute__((aligned(4)));
	struct nf_conntrack *ct[K];
	struct mnl_socket *ev, *q;
	unsigned int events = 0, dumped = 0;
	int len;

	(void)state;
	SKIP_UNLESS_READY();
	ev = mnl_socket_open(NETLINK_NETFILTER);
	q = mnl_socket_open(NETLINK_NETFILTER);
	assert_non_null(ev);
	assert_non_null(q);
	assert_int_equal(mnl_socket_bind(ev, NF_NETLINK_CONNTRACK_NEW | NF_NETLINK_CONNTRACK_UPDATE |
					 NF_NETLINK_CONNTRACK_DESTROY, MNL_SOCKET_AUTOPID), 0);
	assert_int_equal(mnl_socket_bind(q, 0, MNL_SOCKET_AUTOPID), 0);
	ct[0] = st(0, BIT | 5);		/* IPv4 UDP */
	ct[1] = st(1, BIT);		/* IPv6 TCP, ESTABLISHED */
	nfct_set_attr_u8(ct[1], ATTR_TCP_WSCALE_ORIG, 7);
	nfct_set_attr_u8(ct[1], ATTR_TCP_WSCALE_REPL, 9);
	nfct_set_attr_u8(ct[1], ATTR_TCP_FLAGS_ORIG, 0x08);
	nfct_set_attr_u8(ct[1], ATTR_TCP_MASK_ORIG, 0x08);
	ct[2] = echo(0);
	ct[3] = echo(1);
	ct[4] = st(2, 0);		/* IPv4 UDP in zone 7 */
	nfct_set_attr_u16(ct[4], ATTR_ZONE, 7);
	ct[5] = st(3, 0);		/* IPv6 TCP, nothing more */
	for (unsigned int i = 0; i < K; i++)
		create(ct[i]);
	for (unsigned int i = 0; i < K; i++) {
		nfct_set_attr_u32(ct[i], ATTR_TIMEOUT, 444);
		assert_int_equal(nfct_query(nfct, NFCT_Q_UPDATE, ct[i]), 0);
	}
	/* the dump */
	len = fd_ct_dump_msg(buf, 0, 0, 0);	/* unfiltered */
	assert_true(len > 0);
	assert_true(mnl_socket_sendto(q, buf, (size_t)len) > 0);
	for (bool done = false; !done;) {
		int got = (int)mnl_socket_recvfrom(q, buf, sizeof(buf));

		assert_true(got > 0);
		len = got;
		for (const struct nlmsghdr *h = (void *)buf; mnl_nlmsg_ok(h, len);
		     h = mnl_nlmsg_next(h, &len))
			done |= h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR;
		dumped += parsed_alike("a dump", buf, got);
	}
	for (unsigned int i = 0; i < K; i++)
		assert_int_equal(nfct_query(nfct, NFCT_Q_DESTROY, ct[i]), 0);
	while ((len = (int)recv(mnl_socket_get_fd(ev), buf, sizeof(buf), MSG_DONTWAIT)) > 0)
		events += parsed_alike("an event", buf, len);
	print_message("%u events and %u dumped states parsed alike\n", events, dumped);
	assert_int_equal(dumped, K);
	assert_true(events >= 3 * K);
	for (unsigned int i = 0; i < K; i++)
		nfct_destroy(ct[i]);
	mnl_socket_close(ev);
	mnl_socket_close(q);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_dump_filtered_by_mark, fresh),
		cmocka_unit_test_setup(test_updates_posted, fresh),
		cmocka_unit_test_setup(test_update_errors_without_acks, fresh),
		cmocka_unit_test_setup(test_gets_posted, fresh),
		cmocka_unit_test_setup(test_event_buffer_grows, fresh),
		cmocka_unit_test_setup(test_own_updates_filtered, fresh),
		cmocka_unit_test_setup(test_parse_as_the_library, fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
