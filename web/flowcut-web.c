/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-web - the operator's page and /metrics: an HTTP server of its
 * own, run as its own unprivileged user, that asks flowcutd everything
 * over its control socket (include/flowcut/fc_ctl.h) and never
 * touches the link, nftables or conntrack (web/README.md).
 *
 *   flowcut-web [--listen ADDR:PORT]... [--control PATH] [--read-secret PATH]
 *               [--reads-a-second N]
 *
 * Default 127.0.0.1:9842 and [::1]:9842, the control socket FC_CTL_PATH.
 * Its listening sockets are best made for it by root before any user can
 * take the port (systemd's flowcut-web.socket, the lab's keeper) and
 * handed in (LISTEN_FDS, LISTEN_PID: sd_listen_fds(3)'s protocol); then
 * --listen is not given, each socket's own address is the one served.
 * Runs until SIGINT or SIGTERM; exit 0, or 1 with what failed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <flowcut/fc_ctl.h>
#include "fw_http.h"
#include "fw_sample.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: flowcut-web [--listen ADDR:PORT]... [--control PATH] [--read-secret PATH]\n"
		   "                   [--reads-a-second N]\n"
		   "  --listen ADDR:PORT  where to listen (repeatable; default 127.0.0.1:9842 and [::1]:9842)\n"
		   "  --control PATH      flowcutd's control socket (default %s)\n"
		   "  --read-secret PATH  the read credential, which opens reads and /metrics (default %s)\n"
		   "  --reads-a-second N  a client's reads that ask flowcutd, a second (twice at once; default %d)\n",
		FC_CTL_PATH, FC_READ_SECRET_PATH, FW_GUARD_COSTLY_PER_S);
}

#define FIRST_FD 3	/* sd_listen_fds(3): the first socket handed in */

/*
 * The listening sockets handed in (LISTEN_FDS for this pid), each's
 * address into addr[i] (ADDR:PORT, [ADDR]:PORT): their number, 0 when
 * none was handed in, -1 with why said.
 */
static int
handed_in(int *fds, char addr[][64], unsigned int max)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");
	long k;

	if (pid == NULL || n == NULL)
		return 0;
	k = strtol(n, NULL, 10);
	if (strtol(pid, NULL, 10) != (long)getpid()) {
		fprintf(stderr, "flowcut-web: LISTEN_FDS is for pid %s, not this one (%ld)\n", pid,
			(long)getpid());
		return -1;
	}
	if (k < 1 || k > (long)max) {
		fprintf(stderr, "flowcut-web: LISTEN_FDS=%s: not 1 to %u sockets\n", n, max);
		return -1;
	}
	for (int i = 0; i < k; i++) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		char a[INET6_ADDRSTRLEN];
		int on = 0;
		socklen_t ol = sizeof(on);

		fds[i] = FIRST_FD + i;
		if (getsockname(fds[i], (struct sockaddr *)&ss, &len) != 0 ||
		    getsockopt(fds[i], SOL_SOCKET, SO_ACCEPTCONN, &on, &ol) != 0 || !on ||
		    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
			fprintf(stderr, "flowcut-web: handed-in socket %d: not a listening TCP socket\n",
				fds[i]);
			return -1;
		}
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
			snprintf(addr[i], 64, "%s:%u", a, ntohs(s4->sin_port));
		} else {
			struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
			snprintf(addr[i], 64, "[%s]:%u", a, ntohs(s6->sin6_port));
		}
	}
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return (int)k;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"control", required_argument, NULL, 'c'},
		{"read-secret", required_argument, NULL, 'r'},
		{"reads-a-second", required_argument, NULL, 'R'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen[FW_HTTP_LISTEN_MAX] = {0};
	char given[FW_HTTP_LISTEN_MAX][64];
	int fds[FW_HTTP_LISTEN_MAX], nfd;
	const char *ctl = FC_CTL_PATH, *read_secret = FC_READ_SECRET_PATH;
	unsigned int reads_per_s = FW_GUARD_COSTLY_PER_S;
	unsigned int nl = 0;
	struct fw_sample sample;
	struct fw_http http;
	char err[256];
	sigset_t set;
	int o, sig;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'l':
			if (nl == FW_HTTP_LISTEN_MAX) {
				fprintf(stderr, "flowcut-web: --listen %s: more than %d addresses\n", optarg,
					FW_HTTP_LISTEN_MAX);
				return 1;
			}
			listen[nl++] = optarg;
			break;
		case 'c':
			ctl = optarg;
			break;
		case 'r':
			read_secret = optarg;
			break;
		case 'R': {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg || optarg[0] == '-' || v == 0 ||
			    v > 1000000) {
				fprintf(stderr, "flowcut-web: --reads-a-second %s: not a count from 1 "
					"to 1000000\n", optarg);
				return 1;
			}
			reads_per_s = (unsigned int)v;
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "flowcut-web: %s: no such argument\n", argv[optind]);
		usage(stderr);
		return 1;
	}
	/* no core and no ptrace of a user's: a change's secret passes through this memory */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
		fprintf(stderr, "flowcut-web: prctl(PR_SET_DUMPABLE, 0): %s\n", strerror(errno));
		return 1;
	}
	{	/* a connection is two descriptors (MHD's, fw_guard's dup): room for the guard's bound */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 4 * FW_GUARD_OPEN + 64) {
			rl.rlim_cur = rl.rlim_max < 4 * FW_GUARD_OPEN + 64 ? rl.rlim_max : 4 * FW_GUARD_OPEN + 64;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
				fprintf(stderr, "flowcut-web: RLIMIT_NOFILE %lu: %s\n",
					(unsigned long)rl.rlim_cur, strerror(errno));
		}
	}
	nfd = handed_in(fds, given, FW_HTTP_LISTEN_MAX);
	if (nfd < 0)
		return 1;
	if (nfd > 0 && nl > 0) {
		fprintf(stderr, "flowcut-web: sockets handed in (LISTEN_FDS) and --listen: one or the other\n");
		return 1;
	}
	for (int i = 0; i < nfd; i++)
		listen[nl++] = given[i];
	if (nl == 0) {
		listen[nl++] = "127.0.0.1:9842";
		listen[nl++] = "[::1]:9842";
	}
	/* the signals waited for here, blocked in every thread made after */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	fw_sample_init(&sample);
	if ((o = fw_sample_start(&sample, ctl)) != 0) {
		fprintf(stderr, "flowcut-web: the sampler thread: %s\n", strerror(-o));
		return 1;
	}
	if (fw_http_start(&http, listen, nfd > 0 ? fds : NULL, nl, ctl, read_secret, reads_per_s,
			  &sample, err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-web: %s\n", err);
		fw_sample_stop(&sample);
		fw_sample_fini(&sample);
		return 1;
	}
	fprintf(stderr, "flowcut-web: %s", nfd > 0 ? "serving the sockets handed in on" : "listening on");
	for (unsigned int i = 0; i < nl; i++)
		fprintf(stderr, " %s", listen[i]);
	fprintf(stderr, ", asking %s\n", ctl);
	sigwait(&set, &sig);
	fw_http_stop(&http);
	fw_sample_stop(&sample);
	fw_sample_fini(&sample);
	return 0;
}
