/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-web - the operator's page and /metrics (issue 18): an HTTP
 * server of its own, run as its own unprivileged user, that asks
 * flowcutd everything over its control socket (t18-proto.md) and never
 * touches the link, nftables or conntrack (web/README.md).
 *
 *   flowcut-web [--listen ADDR:PORT]... [--control PATH]
 *
 * Default 127.0.0.1:9842 and [::1]:9842, the control socket FC_CTL_PATH.
 * Runs until SIGINT or SIGTERM; exit 0, or 1 with what failed.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include <flowcut/fc_ctl.h>
#include "fw_http.h"
#include "fw_sample.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: flowcut-web [--listen ADDR:PORT]... [--control PATH]\n"
		   "  --listen ADDR:PORT  where to listen (repeatable; default 127.0.0.1:9842 and [::1]:9842)\n"
		   "  --control PATH      flowcutd's control socket (default %s)\n", FC_CTL_PATH);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"control", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *listen[FW_HTTP_LISTEN_MAX] = {0};
	const char *ctl = FC_CTL_PATH;
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
	if (fw_http_start(&http, listen, nl, ctl, &sample, err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-web: %s\n", err);
		fw_sample_stop(&sample);
		fw_sample_fini(&sample);
		return 1;
	}
	fprintf(stderr, "flowcut-web: listening on");
	for (unsigned int i = 0; i < nl; i++)
		fprintf(stderr, " %s", listen[i]);
	fprintf(stderr, ", asking %s\n", ctl);
	sigwait(&set, &sig);
	fw_http_stop(&http);
	fw_sample_stop(&sample);
	fw_sample_fini(&sample);
	return 0;
}
