/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-ctgen: puts N assured states into the kernel's conntrack of the
 * network namespace it runs in (or deletes them), as fast as netlink takes
 * them, for the lab's measurements at scale (lab/reload.sh, lab/scale.sh,
 * tests/lab/test_scale.sh):
 *
 *   flowcut-ctgen N [--mark M] [--timeout S] [--src A[/n]] [--dst B] [--sport P]
 *                 [--dport Q] [--proto udp|tcp] [--family 4|6] [--rate R]
 *                 [--batch K] [--delete]
 *
 * By default UDP 198.18.0.2:P > 198.18.1.2:Q (the lab's client and server,
 * routed out of its front ports), or 2001:2::2 > 2001:2:0:1::2 with
 * --family 6; mark M (0), timeout S (600 s).  Which states, with which
 * status and TCP state, is said in ctgen.h.  K messages a datagram (64 by
 * default), built with nfct_nlmsg_build and sent over libmnl, their acks
 * read together before the next datagram; R states a second at most (0,
 * the default: no bound).  Each state conntrack refuses is said on stderr
 * with its tuple and the error, and counted; the run goes on.  Prints a
 * CLOCK_MONOTONIC stamp every 100,000 states (to set beside another
 * program's samples of the same run), then the total, the time and the
 * rate.  Exit 0 when every state was made (deleted), 1 when any was not or
 * netlink failed, 2 on bad usage.
 *
 * It replaces flowcut-ctfill (one synchronous NFCT_Q_CREATE a state): its
 * command line (N [--mark M] [--timeout S]) is a subset of this one, but
 * its addresses were 198.18.200.1 > 198.19.200.1, on no route of the lab;
 * give them with --src and --dst for states flowcutd offloads none of.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "ctgen.h"

#define STAMP_EVERY 100000UL
#define RCVBUF (8 << 20)	/* acks of the largest batch, many times over */
#define ANSWER_WAIT_S 10	/* an answer not there by then is lost */

static const char usage[] =
	"usage: flowcut-ctgen N [--mark M] [--timeout S] [--src A[/n]] [--dst B] [--sport P]\n"
	"                     [--dport Q] [--proto udp|tcp] [--family 4|6] [--rate R]\n"
	"                     [--batch K] [--delete]\n";

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* waits until CLOCK_MONOTONIC reads at (seconds) */
static void
sleep_until(double at)
{
	struct timespec t = { .tv_sec = (time_t)at,
			      .tv_nsec = (long)((at - (double)(time_t)at) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static struct mnl_socket *
open_socket(size_t sndbuf)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	struct timeval wait = { .tv_sec = ANSWER_WAIT_S };
	int one = 1, rcv = RCVBUF, snd = (int)sndbuf, fd;

	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "flowcut-ctgen: the netfilter netlink socket: %s\n",
			strerror(errno));
		return NULL;
	}
	fd = mnl_socket_get_fd(nl);
	/* an error's ack without the message it answers: the acks stay small */
	(void)mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	/* root's FORCE past rmem_max/wmem_max, else what the limits allow */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd, sizeof(snd));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
	return nl;
}

/*
 * States first .. first + k - 1 in one datagram, their acks read: the
 * states refused or not answered (each said), or -1 when netlink itself
 * failed (said).
 */
static long
batch(struct mnl_socket *nl, const struct ctg_opts *o, unsigned long first, unsigned int k,
      char *buf, struct ctg_acks *a)
{
	static char answers[1 << 16];
	size_t len = 0;
	unsigned int answered = 0;
	int lost = 0;
	long failed = 0;

	a->first = (uint32_t)first;
	a->n = k;
	for (unsigned int j = 0; j < k; j++) {
		struct nlmsghdr *nlh = ctg_build(buf + len, CTG_MSG_MAX, o, first + j,
						 a->first + j);

		if (nlh == NULL) {
			fprintf(stderr, "flowcut-ctgen: state %lu: its message: %s\n", first + j,
				strerror(errno));
			return -1;
		}
		len += MNL_ALIGN(nlh->nlmsg_len);
		a->got[j] = false;
	}
	if (mnl_socket_sendto(nl, buf, len) < 0) {
		fprintf(stderr, "flowcut-ctgen: states %lu to %lu: sending %zu bytes: %s\n", first,
			first + k - 1, len, strerror(errno));
		return -1;
	}
	/* the kernel answers each message as it takes it */
	while (answered < k) {
		ssize_t n = mnl_socket_recvfrom(nl, answers, sizeof(answers));
		int rc;

		if (n < 0) {
			lost = errno;	/* ENOBUFS: acks dropped; EAGAIN: none in time */
			break;
		}
		rc = ctg_acks(a, answers, (size_t)n);
		if (rc < 0) {
			fprintf(stderr, "flowcut-ctgen: states %lu to %lu: an answer of %zd bytes "
				"does not parse\n", first, first + k - 1, n);
			return -1;
		}
		answered += (unsigned int)rc;
	}
	for (unsigned int j = 0; j < k; j++) {
		char text[128];
		struct fd_tuple t;

		if (a->got[j] && a->rc[j] == 0)
			continue;
		ctg_tuple(o, first + j, &t);
		fprintf(stderr, "flowcut-ctgen: state %lu %s: %s\n", first + j,
			fd_tuple_format(&t, text, sizeof(text)),
			a->got[j] ? strerror(-a->rc[j]) : lost == EAGAIN ? "no answer" :
			strerror(lost));
		failed++;
	}
	return failed;
}

int
main(int argc, char **argv)
{
	static struct ctg_acks acks;
	struct ctg_opts o;
	char err[256], *buf;
	struct mnl_socket *nl;
	unsigned long done = 0, failed = 0, stamp = STAMP_EVERY;
	double t0, t1;

	if (ctg_parse(&o, argc, argv, err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-ctgen: %s\n%s", err, usage);
		return 2;
	}
	buf = malloc((size_t)o.batch * CTG_MSG_MAX);
	nl = buf ? open_socket((size_t)o.batch * CTG_MSG_MAX * 2) : NULL;
	if (nl == NULL)
		return 1;
	t0 = now();
	while (done < o.n) {
		unsigned int k = o.n - done < o.batch ? (unsigned int)(o.n - done) : o.batch;
		long rc;

		if (o.rate)
			sleep_until(t0 + (double)done / (double)o.rate);
		rc = batch(nl, &o, done, k, buf, &acks);
		if (rc < 0)
			return 1;
		failed += (unsigned long)rc;
		done += k;
		if (done >= stamp) {
			t1 = now();
			printf("flowcut-ctgen: %lu at %.6f (CLOCK_MONOTONIC), %.3f s in\n", done, t1,
			       t1 - t0);
			fflush(stdout);
			stamp = (done / STAMP_EVERY + 1) * STAMP_EVERY;
		}
	}
	t1 = now();
	printf("flowcut-ctgen: %lu states %s in %.2f s, %.0f a second, %lu failed "
	       "(from %.6f to %.6f, CLOCK_MONOTONIC)\n", o.n - failed,
	       o.del ? "deleted" : "made", t1 - t0, t1 > t0 ? (double)o.n / (t1 - t0) : 0.0,
	       failed, t0, t1);
	mnl_socket_close(nl);
	free(buf);
	return failed ? 1 : 0;
}
