/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-ctleave: how long a connection stays in the fast path after its
 * conntrack state is deleted ("from conntrack -D of one state to its
 * connection leaving the fast path"), for lab/scale.sh --leave:
 *
 *   flowcut-ctleave --link PATH [--samples K] [--port P] N [flowcut-ctgen's options]
 *
 * The states are flowcut-ctgen's (the same N and options: tools/ctgen.h
 * says which state i is).  K samples (100), state i = k * (N / K) for
 * k = 0 .. K-1, one after the other: the connection read by its original
 * key (CONN_READ_BY_KEY on a tool slot of the link at PATH, front port P:
 * 0, the client's side in the lab); one CT_DELETE of the state (what
 * `conntrack -D` sends, built by ctg_build), the clock taken as it is
 * sent; then the key read again every FCL_POLL_US until the coprocessor
 * answers ENOENT, the clock taken at that answer.  Prints the median, the
 * p99 and the largest in ms, the samples whose connection was not in the
 * fast path before (skipped: no delete sent) and those still there after
 * FCL_DEADLINE_MS (counted as that long, said).
 *
 * Why a tool and not flowcutctl polled: flowcutctl has no read by key
 * (`conns` reads the whole table: seconds at a million), and one process
 * for delete and poll puts both clocks in it; the poll costs one command
 * slot, as flowcutctl's does.  The resolution is the poll's, FCL_POLL_US.
 *
 * Run in flowcutd's network namespace (the lab's host: lab/lab.sh exec
 * NAME host).  Exit 0 with every sample taken and every connection gone,
 * 1 otherwise (said), 2 on bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <flowcut/fc_cmd.h>

#include "ctgen.h"
#include "lk.h"

#define FCL_POLL_US 100		/* a read by key this often while waiting */
#define FCL_DEADLINE_MS 2000	/* a connection still there by then: said */
#define FCL_SAMPLES_MAX 10000
#define FCL_CALL_MS 1000	/* one command's answer */

static const char usage[] =
	"usage: flowcut-ctleave --link PATH [--samples K] [--port P] N [flowcut-ctgen's options]\n";

static double
now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* state i's original key, as flowcutd makes it (fd_policy_key) at front port `port` */
static void
key_of(const struct ctg_opts *o, unsigned long i, uint16_t port, struct fc_key *k)
{
	struct fd_tuple t;

	ctg_tuple(o, i, &t);
	memset(k, 0, sizeof(*k));
	memcpy(k->src, t.src, sizeof(k->src));
	memcpy(k->dst, t.dst, sizeof(k->dst));
	k->sport = t.sport;
	k->dport = t.dport;
	k->proto = t.proto;
	k->family = t.family;
	k->port = port;
}

/* 0: in the fast path; -ENOENT: not; another: the link's or the coprocessor's error */
static int
in_fp(struct lk *lk, const struct fc_key *k)
{
	struct fc_conn_info ci;
	uint16_t got = 0;

	return lk_call(lk, FC_CMD_CONN_READ_BY_KEY, k, sizeof(*k), &ci, sizeof(ci), &got,
		       FCL_CALL_MS);
}

/* One CT_DELETE of state i, its ack read: 0, or -errno (said). */
static int
delete_state(struct mnl_socket *nl, const struct ctg_opts *o, unsigned long i, uint32_t seq)
{
	static char buf[CTG_MSG_MAX], answer[1 << 12];
	static struct ctg_acks a;
	struct nlmsghdr *nlh = ctg_build(buf, sizeof(buf), o, i, seq);
	char text[128];
	struct fd_tuple t;
	ssize_t n;

	ctg_tuple(o, i, &t);
	fd_tuple_format(&t, text, sizeof(text));
	if (nlh == NULL || mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		fprintf(stderr, "flowcut-ctleave: state %lu %s: delete not sent: %s\n", i, text,
			strerror(errno));
		return -errno;
	}
	a.first = seq;
	a.n = 1;
	a.got[0] = false;
	while (!a.got[0]) {
		n = mnl_socket_recvfrom(nl, answer, sizeof(answer));
		if (n < 0 || ctg_acks(&a, answer, (size_t)n) < 0) {
			fprintf(stderr, "flowcut-ctleave: state %lu %s: the delete's ack: %s\n", i,
				text, n < 0 ? strerror(errno) : "does not parse");
			return n < 0 ? -errno : -EBADMSG;
		}
	}
	if (a.rc[0] != 0)
		fprintf(stderr, "flowcut-ctleave: state %lu %s: conntrack refused the delete: %s\n",
			i, text, strerror(-a.rc[0]));
	return a.rc[0];
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* samples[0 .. n) sorted, the q-th quantile (nearest rank) */
static double
quantile(const double *s, size_t n, double q)
{
	size_t r = (size_t)(q * (double)n + 0.999999);

	return s[r == 0 ? 0 : r > n ? n - 1 : r - 1];
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "samples", required_argument, NULL, 'k' },
		{ "port", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	unsigned long k = 100, port = 0, absent = 0, stayed = 0, taken = 0;
	char err[256], *end;
	struct ctg_opts o;
	struct mnl_socket *nl;
	struct lk *lk;
	double *ms;
	int c;

	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case 'l': path = optarg; break;
		case 'k':
			k = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || k == 0 || k > FCL_SAMPLES_MAX) {
				fprintf(stderr, "flowcut-ctleave: --samples '%s' is not 1 to %d\n%s",
					optarg, FCL_SAMPLES_MAX, usage);
				return 2;
			}
			break;
		case 'p':
			port = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || port > UINT16_MAX) {
				fprintf(stderr, "flowcut-ctleave: --port '%s' is not a front port\n%s",
					optarg, usage);
				return 2;
			}
			break;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (path == NULL || optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	/* N and ctgen's options, as ctgen reads them (its argv[0] is ours) */
	if (ctg_parse(&o, argc - optind + 1, argv + optind - 1, err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-ctleave: %s\n%s", err, usage);
		return 2;
	}
	if (o.n < k) {
		fprintf(stderr, "flowcut-ctleave: %lu states, fewer than the %lu samples\n", o.n, k);
		return 2;
	}
	o.del = true;
	lk = lk_attach(path, -1);
	if (lk == NULL) {
		fprintf(stderr, "flowcut-ctleave: link %s: %s\n", path, lk_error());
		return 1;
	}
	nl = mnl_socket_open(NETLINK_NETFILTER);
	if (nl == NULL || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		fprintf(stderr, "flowcut-ctleave: the netfilter netlink socket: %s\n",
			strerror(errno));
		lk_close(lk);
		return 1;
	}
	ms = calloc(k, sizeof(*ms));
	for (unsigned long s = 0; ms != NULL && s < k; s++) {
		unsigned long i = s * (o.n / k);
		struct fc_key key;
		double t0, t1;
		int rc;

		key_of(&o, i, (uint16_t)port, &key);
		rc = in_fp(lk, &key);
		if (rc != 0) {
			absent++;
			if (rc != -ENOENT)
				fprintf(stderr, "flowcut-ctleave: state %lu: read by key: %s\n", i,
					strerror(-rc));
			continue;
		}
		t0 = now_ms();
		if (delete_state(nl, &o, i, (uint32_t)s + 1) != 0) {
			absent++;
			continue;
		}
		while ((rc = in_fp(lk, &key)) == 0 && now_ms() - t0 < FCL_DEADLINE_MS)
			usleep(FCL_POLL_US);
		t1 = now_ms();
		if (rc == 0) {
			stayed++;
			fprintf(stderr, "flowcut-ctleave: state %lu: its connection still in the fast "
				"path %d ms after the delete\n", i, FCL_DEADLINE_MS);
		} else if (rc != -ENOENT) {
			fprintf(stderr, "flowcut-ctleave: state %lu: read by key: %s\n", i,
				strerror(-rc));
		}
		ms[taken++] = t1 - t0;
	}
	if (taken > 0) {
		qsort(ms, taken, sizeof(*ms), cmp_double);
		printf("flowcut-ctleave: %lu samples: median %.3f ms, p99 %.3f ms, max %.3f ms; %lu "
		       "not in the fast path before, %lu still there after %d ms\n", taken,
		       quantile(ms, taken, 0.5), quantile(ms, taken, 0.99), ms[taken - 1], absent,
		       stayed, FCL_DEADLINE_MS);
	} else {
		printf("flowcut-ctleave: no sample: %lu of %lu connections not in the fast path "
		       "(front port %lu) or not deleted\n", absent, k, port);
	}
	free(ms);
	mnl_socket_close(nl);
	lk_close(lk);
	return taken == k && stayed == 0 ? 0 : 1;
}
