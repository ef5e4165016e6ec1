/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-inspect - the inspector's parsing, in a process of its own
 * without root: TLS ClientHellos and QUIC Initials, handed
 * over by flowcutd on a SOCK_SEQPACKET socket (inspector/fi_wire.h),
 * answered with the parser's answer and a whole hello's JA4, JA3 and
 * server name.  flowcutd holds the frames, looks the fingerprints up and
 * cuts; this reads hostile bytes and nothing else (docs/fingerprints.md,
 * "The inspector's own process").
 *
 *   flowcut-inspect [--listen PATH] [--user NAME] [--states N]
 *
 * Its socket: systemd's (socket activation, LISTEN_FDS: deploy/
 * flowcut-inspect.socket), or --listen PATH made here (0600: flowcutd,
 * root, connects).  As root it becomes --user NAME; then no capability,
 * no new privileges and a system call filter (fi_jail) before the first
 * byte.  One asker at a time; its parsers go with it.  Runs until killed;
 * exit 1 with what failed.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fc_ja.h"
#include "fc_quic.h"
#include "fi_jail.h"
#include "fi_parse.h"
#include "fi_wire.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: flowcut-inspect [--listen PATH] [--user NAME] [--states N]\n"
		   "  --listen PATH  make the socket flowcutd connects to (else systemd's, LISTEN_FDS)\n"
		   "  --user NAME    started as root: become NAME before reading a byte\n"
		   "  --states N     parsers kept at once, the oldest let go (default 4096)\n");
}

/* systemd's listening socket (fd 3), or -1 when none was handed over. */
static int
inherited(void)
{
	const char *pid = getenv("LISTEN_PID"), *n = getenv("LISTEN_FDS");

	if (pid == NULL || n == NULL || strtol(pid, NULL, 10) != (long)getpid() ||
	    strcmp(n, "1") != 0)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	return 3;
}

static int
listen_at(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	mode_t old;
	int fd;

	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "flowcut-inspect: --listen %s: longer than a socket's path\n", path);
		return -1;
	}
	strcpy(a.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		perror("flowcut-inspect: socket");
		return -1;
	}
	(void)unlink(path);
	old = umask(0077);	/* 0600 from its first moment: no one else connects */
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4) != 0) {
		fprintf(stderr, "flowcut-inspect: --listen %s: %s\n", path, strerror(errno));
		umask(old);
		close(fd);
		return -1;
	}
	umask(old);
	return fd;
}

/*
 * One asker's questions, answered in order until it goes: as many as
 * wait taken at once (recvmmsg), their answers sent at once (sendmmsg) -
 * under a flood, one wake-up for a batch, not for each.
 */
#define BATCH 64

static void
serve(struct fi_parse *p, int c)
{
	static uint8_t buf[BATCH][FI_REQ_MAX + 1] __attribute__((aligned(8)));
	static struct fi_ans ans[BATCH];
	static time_t said;
	struct mmsghdr in[BATCH], out[BATCH];
	struct iovec iv[BATCH], ov[BATCH];

	for (int i = 0; i < BATCH; i++) {
		iv[i] = (struct iovec){ .iov_base = buf[i], .iov_len = sizeof(buf[i]) };
		in[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iv[i], .msg_iovlen = 1 } };
	}
	for (;;) {
		int n = recvmmsg(c, in, BATCH, MSG_WAITFORONE, NULL), k = 0, sent = 0;

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return;
		}
		for (int i = 0; i < n; i++) {
			const char *why = NULL;
			int rc;

			if (in[i].msg_len == 0)
				return;	/* its end */
			rc = fi_parse_ask(p, buf[i], in[i].msg_len, &ans[k], &why);
			if (rc == -EBADMSG) {
				/* flowcutd's own build sends these: a bad one is a bug, said once a second */
				if (time(NULL) != said) {
					said = time(NULL);
					fprintf(stderr, "flowcut-inspect: a question refused: %s\n", why);
				}
				return;
			}
			if (rc == 1) {
				ov[k] = (struct iovec){ .iov_base = &ans[k], .iov_len = sizeof(ans[k]) };
				out[k] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &ov[k], .msg_iovlen = 1 } };
				k++;
			}
		}
		while (sent < k) {
			int m = sendmmsg(c, out + sent, (unsigned int)(k - sent), MSG_NOSIGNAL);

			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				return;
			sent += m;
		}
	}
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "user", required_argument, NULL, 'u' },
		{ "states", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *user = NULL;
	unsigned long states = 0;
	struct fi_parse *p;
	char err[256];
	unsigned int uid;
	int o, lfd;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;

		switch (o) {
		case 'l': path = optarg; break;
		case 'u': user = optarg; break;
		case 's':
			states = strtoul(optarg, &end, 10);
			if (*end || states < 16 || states > 1u << 20) {
				fprintf(stderr, "flowcut-inspect: --states: '%s' is not 16 to %u\n",
					optarg, 1u << 20);
				return 1;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 1;
	}
	lfd = path != NULL ? listen_at(path) : inherited();
	if (lfd < 0) {
		if (path == NULL)
			fprintf(stderr, "flowcut-inspect: no socket: --listen PATH, or systemd's (LISTEN_FDS)\n");
		return 1;
	}
	if (geteuid() == 0 && user == NULL) {
		fprintf(stderr, "flowcut-inspect: will not read the network's bytes as root: --user NAME\n");
		return 1;
	}
	p = fi_parse_open((unsigned int)states);
	if (p == NULL || fc_ja_ready() != 0 || fc_quic_ready() != 0) {
		fprintf(stderr, "flowcut-inspect: %s\n",
			p == NULL ? "no memory" : "OpenSSL has not MD5, SHA-256, AES-128 and HKDF");
		return 1;
	}
	if (fi_jail_user(user, err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-inspect: %s\n", err);
		return 1;
	}
	uid = (unsigned int)getuid();
	if (fi_jail_lock(err, sizeof(err)) != 0) {
		fprintf(stderr, "flowcut-inspect: %s\n", err);
		return 1;
	}
	fprintf(stderr, "flowcut-inspect: ready (uid %u, no capability, filtered)\n", uid);
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			fprintf(stderr, "flowcut-inspect: accept: %s\n", strerror(errno));
			return 1;
		}
		serve(p, c);
		close(c);
		fi_parse_reset(p);	/* its asker gone: so are its parsers */
	}
}
