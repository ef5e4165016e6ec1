/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_ctl: see fd_ctl.h. */
#include "fd_ctl.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define FD_CTL_RECV_MS 200	/* a client's request must come this soon */

struct fd_ctl {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	fd_ctl_handler_fn *h;
	void *arg;
};

int
fd_ctl_parse(const char *buf, size_t len, struct fd_ctl_req *out, char *err, size_t errlen)
{
	static const char op[] = "cut-conn ";
	char num[24];
	size_t n;
	uint64_t id = 0;

	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len < sizeof(op) - 1 || memcmp(buf, op, sizeof(op) - 1) != 0) {
		snprintf(err, errlen, "not a request (cut-conn ID)");
		return -EINVAL;
	}
	n = len - (sizeof(op) - 1);
	if (n == 0 || n >= sizeof(num)) {
		snprintf(err, errlen, "cut-conn: the id is missing or too long");
		return -EINVAL;
	}
	memcpy(num, buf + sizeof(op) - 1, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		unsigned int d = (unsigned char)num[i] - '0';

		if (d > 9 || id > (UINT64_MAX - d) / 10) {
			snprintf(err, errlen, "cut-conn: '%s' is not a connection id", num);
			return -EINVAL;
		}
		id = id * 10 + d;
	}
	out->op = FD_CTL_CUT_CONN;
	out->id = id;
	return 0;
}

static int
addr_of(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

struct fd_ctl *
fd_ctl_open(const char *path, fd_ctl_handler_fn *h, void *arg)
{
	struct fd_ctl *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa;
	char dir[sizeof(sa.sun_path)];
	int rc, err;

	if (c == NULL)
		return NULL;
	c->fd = -1;
	c->h = h;
	c->arg = arg;
	rc = addr_of(path, &sa);
	if (rc != 0) {
		free(c);
		errno = -rc;
		return NULL;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	if (mkdir(dirname(dir), 0755) != 0 && errno != EEXIST)
		goto fail;
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		goto fail;
	unlink(path);	/* a predecessor's, stale: one flowcutd per path */
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || chmod(path, 0600) != 0 ||
	    listen(c->fd, 8) != 0)
		goto fail;
	return c;
fail:
	err = errno;
	fprintf(stderr, "flowcutd: control socket %s: %s\n", path, strerror(err));
	if (c->fd >= 0)
		close(c->fd);
	free(c);
	errno = err;
	return NULL;
}

void
fd_ctl_close(struct fd_ctl *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	unlink(c->path);
	free(c);
}

int
fd_ctl_fd(const struct fd_ctl *c)
{
	return c->fd;
}

void
fd_ctl_serve(struct fd_ctl *c)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = FD_CTL_RECV_MS * 1000 };
	char req[FC_CTL_MAX + 1], ans[FC_CTL_MAX], err[128];
	struct fd_ctl_req r;
	ssize_t n;
	int s = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);

	if (s < 0)
		return;		/* gone meanwhile, or none: nothing to serve */
	if (setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
		close(s);
		return;
	}
	n = recv(s, req, sizeof(req), 0);
	if (n < 0) {
		fprintf(stderr, "flowcutd: control socket: no request: %s\n", strerror(errno));
		close(s);
		return;
	}
	if ((size_t)n > FC_CTL_MAX)
		snprintf(ans, sizeof(ans), "error request longer than %d bytes\n", FC_CTL_MAX);
	else if (fd_ctl_parse(req, (size_t)n, &r, err, sizeof(err)) != 0)
		snprintf(ans, sizeof(ans), "error %s\n", err);
	else
		c->h(c->arg, &r, ans, sizeof(ans));
	if (send(s, ans, strlen(ans), MSG_NOSIGNAL) < 0)
		fprintf(stderr, "flowcutd: control socket: answer not sent: %s\n", strerror(errno));
	close(s);
}
