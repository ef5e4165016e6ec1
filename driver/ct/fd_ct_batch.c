/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ct_batch: the requests posted in batches (kills, updates, GETs), each
 * flushed as one sendto and its answers read, and the synchronous calls made
 * of one post and a flush.
 */
#include "fd_ct.h"
#include "fd_ct_priv.h"
#include "fd_ctparse.h"
#include "fd_nl.h"

#include <errno.h>
#include <stdio.h>

#include <libmnl/libmnl.h>
#include <libnetfilter_conntrack/libnetfilter_conntrack.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>

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
		ssize_t len = fd_ct_kernel_recv(c, mnl_socket_get_fd(c->nl), buf, sizeof(buf),
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
		ssize_t len = fd_ct_kernel_recv(c, mnl_socket_get_fd(c->nl), buf, sizeof(buf), 0);
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
	struct nlmsghdr *nlh = fd_ct_tuple_request(batch_room(c, &c->kills), IPCTNL_MSG_CT_DELETE, 0,
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
	struct nlmsghdr *nlh = fd_ct_tuple_request(batch_room(c, &c->gets), IPCTNL_MSG_CT_GET, 0,
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
