/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_ctl: see fd_ctl.h. */
#include "fd_ctl.h"

#include <arpa/inet.h>
#include <dirent.h>
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
#define FD_CTL_GROUPS 64	/* a peer's supplementary groups read at once; more: malloc */

struct fd_ctl {
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool made_dir;			/* the folder is ours: its mode follows the access */
	struct fd_ctl_access acc;
	fd_ctl_handler_fn *h;
	void *arg;
	uint64_t refused;
	unsigned int nlogged;		/* refused uids logged, up to FD_CTL_LOGGED_UIDS */
	uid_t logged[FD_CTL_LOGGED_UIDS];
};

/* The requests: their text, whether they only read. */
static const struct {
	const char *word;
	bool with_id;		/* a connection id follows */
	bool reads;
	bool with_addr;		/* an address follows */
} ops[] = {
	[FD_CTL_CUT_CONN] = { "cut-conn", true, false, false },
	[FD_CTL_STATUS] = { "status", false, true, false },
	[FD_CTL_RESYNC] = { "resync", false, false, false },
	[FD_CTL_WHY] = { "why", false, true, true },
	[FD_CTL_WHY_CONN] = { "why-conn", true, true, false },
	[FD_CTL_TRIGGERS] = { "triggers", false, true, false },
};

/* "why ADDR"'s address: an IPv4 or IPv6 one, whole.  0, or -EINVAL said. */
static int
parse_addr(const char *buf, size_t n, struct fd_ctl_req *out, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN];
	bool printable = true;

	for (size_t i = 0; i < n; i++)
		printable &= buf[i] > ' ' && buf[i] < 0x7f;
	if (n == 0 || n >= sizeof(a) || !printable) {
		snprintf(err, errlen, "why: the address is missing, too long (%zu bytes) or not "
			 "printable", n);
		return -EINVAL;
	}
	memcpy(a, buf, n);
	a[n] = '\0';
	if (inet_pton(AF_INET, a, out->addr) == 1) {
		out->family = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, a, out->addr) == 1) {
		out->family = 6;
		return 0;
	}
	snprintf(err, errlen, "why: '%s' is not an IPv4 or IPv6 address", a);
	return -EINVAL;
}

static int
parse_id(const char *word, const char *buf, size_t n, uint64_t *out, char *err, size_t errlen)
{
	char num[24];
	uint64_t id = 0;

	if (n == 0 || n >= sizeof(num)) {
		snprintf(err, errlen, "%s: the id is missing or too long", word);
		return -EINVAL;
	}
	memcpy(num, buf, n);
	num[n] = '\0';
	for (size_t i = 0; i < n; i++) {
		unsigned int d = (unsigned char)num[i] - '0';

		if (d > 9 || id > (UINT64_MAX - d) / 10) {
			snprintf(err, errlen, "%s: '%s' is not a connection id", word, num);
			return -EINVAL;
		}
		id = id * 10 + d;
	}
	*out = id;
	return 0;
}

int
fd_ctl_parse(const char *buf, size_t len, struct fd_ctl_req *out, char *err, size_t errlen)
{
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t w = strlen(ops[k].word);

		if (len < w || memcmp(buf, ops[k].word, w) != 0)
			continue;
		memset(out, 0, sizeof(*out));
		if (!ops[k].with_id && !ops[k].with_addr && len == w) {
			out->op = (enum fd_ctl_op)k;
			return 0;
		}
		if (ops[k].with_addr && len > w && buf[w] == ' ') {
			int rc = parse_addr(buf + w + 1, len - w - 1, out, err, errlen);

			if (rc != 0)
				return rc;
			out->op = (enum fd_ctl_op)k;
			return 0;
		}
		if (ops[k].with_id && len > w && buf[w] == ' ') {
			uint64_t id;
			int rc = parse_id(ops[k].word, buf + w + 1, len - w - 1, &id, err, errlen);

			if (rc != 0)
				return rc;
			out->op = (enum fd_ctl_op)k;
			out->id = id;
			return 0;
		}
	}
	snprintf(err, errlen, "not a request (cut-conn ID, status, resync, why ADDR, why-conn ID, "
		 "triggers)");
	return -EINVAL;
}

int
fd_ctl_allowed(const struct fd_ctl_access *a, const struct fd_ctl_peer *p, enum fd_ctl_op op,
	       char *why, size_t len)
{
	bool member = false;

	if (p->uid == 0)
		return 0;
	if (!ops[op].reads) {
		snprintf(why, len, "uid %u is not root (%s changes flowcutd's state: root only)",
			 (unsigned int)p->uid, ops[op].word);
		return -EACCES;
	}
	if (!a->read_group) {
		snprintf(why, len, "uid %u is not root and no control_read_group is set",
			 (unsigned int)p->uid);
		return -EACCES;
	}
	member = p->gid == a->gid;
	for (size_t i = 0; i < p->ngroups && !member; i++)
		member = p->groups[i] == a->gid;
	if (member)
		return 0;
	snprintf(why, len, "uid %u is not root and not in group %s", (unsigned int)p->uid, a->name);
	return -EACCES;
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

/* Does the folder hold nothing but (maybe) a socket by our name? */
static bool
leftover(const struct fd_ctl *c)
{
	const char *name = strrchr(c->path, '/') ? strrchr(c->path, '/') + 1 : c->path;
	DIR *d = opendir(c->dir);
	struct dirent *e;
	bool only = d != NULL;

	while (only && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
		    (strcmp(e->d_name, name) != 0 || e->d_type != DT_SOCK))
			only = false;
	if (d != NULL)
		closedir(d);
	return only;
}

/*
 * The folder: made (ours), or checked - a directory, root's, writable by
 * neither group nor others.  0, or -errno said.
 */
static int
dir_check(struct fd_ctl *c)
{
	struct stat st;

	if (mkdir(c->dir, 0700) == 0) {
		c->made_dir = true;
		return 0;
	}
	if (errno != EEXIST || lstat(c->dir, &st) != 0) {
		int err = errno;

		fprintf(stderr, "flowcutd: control socket folder %s: %s\n", c->dir, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022) != 0) {
		fprintf(stderr, "flowcutd: control socket folder %s: %s (mode %04o, uid %u): "
			"refused (it must be a directory of root's that only root can write)\n",
			c->dir, !S_ISDIR(st.st_mode) ? "not a directory" : st.st_uid != 0 ?
			"not root's" : "writable by group or others",
			(unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
		return -EPERM;
	}
	if (((st.st_mode & 07777) == 0700 || (st.st_mode & 07777) == 0750) && leftover(c)) {
		c->made_dir = true;	/* a flowcutd before's, left by a crash: ours again */
		return 0;
	}
	if (c->acc.read_group && !(st.st_mode & 001) &&
	    !(st.st_gid == c->acc.gid && (st.st_mode & 010)))
		fprintf(stderr, "flowcutd: control socket folder %s (mode %04o, gid %u): group %s "
			"cannot reach the socket; give the folder to it (chgrp %s, chmod 0750) or "
			"remove it for flowcutd to make\n", c->dir, (unsigned int)(st.st_mode & 07777),
			(unsigned int)st.st_gid, c->acc.name, c->acc.name);
	return 0;
}

/* The socket's group and mode (and the folder's, if ours) as the access says. */
static int
modes_apply(struct fd_ctl *c)
{
	gid_t g = c->acc.read_group ? c->acc.gid : 0;
	mode_t sm = c->acc.read_group ? 0660 : 0600, dm = c->acc.read_group ? 0750 : 0700;
	const char *what = c->path;

	if (chown(c->path, 0, g) != 0 || chmod(c->path, sm) != 0)
		goto fail;
	what = c->dir;
	if (c->made_dir && (chown(c->dir, 0, g) != 0 || chmod(c->dir, dm) != 0))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "flowcutd: control socket: mode of %s: %s\n", what, strerror(errno));
	return -errno;
}

struct fd_ctl *
fd_ctl_open(const char *path, const struct fd_ctl_access *a, fd_ctl_handler_fn *h, void *arg)
{
	struct fd_ctl *c = calloc(1, sizeof(*c));
	struct sockaddr_un sa;
	struct stat st;
	int rc, err;

	if (c == NULL)
		return NULL;
	c->fd = -1;
	c->h = h;
	c->arg = arg;
	c->acc = *a;
	rc = addr_of(path, &sa);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: control socket %s: longer than %zu bytes\n", path,
			sizeof(sa.sun_path) - 1);
		free(c);
		errno = -rc;
		return NULL;
	}
	snprintf(c->path, sizeof(c->path), "%s", path);
	{
		char copy[sizeof(c->dir)];

		snprintf(copy, sizeof(copy), "%s", path);
		snprintf(c->dir, sizeof(c->dir), "%s", dirname(copy));
	}
	rc = dir_check(c);
	if (rc != 0) {
		free(c);
		errno = -rc;
		return NULL;
	}
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "flowcutd: control socket %s: something not a socket is there "
			"(mode %06o): refused\n", path, (unsigned int)st.st_mode);
		errno = EPERM;
		goto fail_quiet;
	}
	c->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	/* Linux makes the file with the socket's inode mode: none but root's, even for a moment */
	if (c->fd < 0 || fchmod(c->fd, 0600) != 0)
		goto fail;
	unlink(path);	/* a predecessor's, stale: one flowcutd per path */
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto fail;
	if (modes_apply(c) != 0 || listen(c->fd, 8) != 0) {
		err = errno;
		unlink(path);
		errno = err;
		goto fail;
	}
	return c;
fail:
	fprintf(stderr, "flowcutd: control socket %s: %s\n", path, strerror(errno));
fail_quiet:
	err = errno;
	if (c->fd >= 0)
		close(c->fd);
	if (c->made_dir)
		rmdir(c->dir);
	free(c);
	errno = err;
	return NULL;
}

int
fd_ctl_access(struct fd_ctl *c, const struct fd_ctl_access *a)
{
	c->acc = *a;
	return modes_apply(c);
}

void
fd_ctl_close(struct fd_ctl *c)
{
	if (c == NULL)
		return;
	close(c->fd);
	unlink(c->path);
	if (c->made_dir)
		rmdir(c->dir);	/* ours; left if someone put something in it */
	free(c);
}

int
fd_ctl_fd(const struct fd_ctl *c)
{
	return c->fd;
}

uint64_t
fd_ctl_refused(const struct fd_ctl *c)
{
	return c->refused;
}

/* A refusal counted, and logged the first time its uid is refused. */
static void
refused(struct fd_ctl *c, const struct ucred *cr, const char *why)
{
	c->refused++;
	for (unsigned int i = 0; i < c->nlogged; i++)
		if (c->logged[i] == cr->uid)
			return;
	if (c->nlogged == FD_CTL_LOGGED_UIDS)
		return;
	c->logged[c->nlogged++] = cr->uid;
	fprintf(stderr, "flowcutd: control socket: refused pid %d: %s (this uid's next refusals "
		"not logged)\n", (int)cr->pid, why);
	if (c->nlogged == FD_CTL_LOGGED_UIDS)
		fprintf(stderr, "flowcutd: control socket: %d uids refused; the refusals of others "
			"are not logged\n", FD_CTL_LOGGED_UIDS);
}

/*
 * The peer's credentials, as the kernel took them at connect.  0, or
 * -errno.  *more is malloc'd when its groups do not fit in `groups`.
 */
static int
peer_of(int s, struct ucred *cr, gid_t *groups, struct fd_ctl_peer *p, gid_t **more)
{
	socklen_t len = sizeof(*cr);

	*more = NULL;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, cr, &len) != 0)
		return -errno;
	p->uid = cr->uid;
	p->gid = cr->gid;
	p->groups = groups;
	len = FD_CTL_GROUPS * sizeof(gid_t);
	if (getsockopt(s, SOL_SOCKET, SO_PEERGROUPS, groups, &len) != 0) {
		if (errno != ERANGE)
			return -errno;
		*more = malloc(len);
		if (*more == NULL)
			return -ENOMEM;
		if (getsockopt(s, SOL_SOCKET, SO_PEERGROUPS, *more, &len) != 0)
			return -errno;
		p->groups = *more;
	}
	p->ngroups = len / sizeof(gid_t);
	return 0;
}

void
fd_ctl_serve(struct fd_ctl *c)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = FD_CTL_RECV_MS * 1000 };
	char req[FC_CTL_MAX + 1], ans[FC_CTL_ANS_MAX], err[160];
	gid_t groups[FD_CTL_GROUPS], *more = NULL;
	struct fd_ctl_peer peer;
	struct fd_ctl_req r;
	struct ucred cr;
	ssize_t n;
	int rc, s = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);

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
	rc = peer_of(s, &cr, groups, &peer, &more);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: control socket: the peer's credentials: %s\n",
			strerror(-rc));
		snprintf(ans, sizeof(ans), "error refused: your credentials could not be read (%s)\n",
			 strerror(-rc));
	} else if (fd_ctl_allowed(&c->acc, &peer, FD_CTL_STATUS, err, sizeof(err)) != 0) {
		/* may ask nothing: its request is not even parsed */
		refused(c, &cr, err);
		snprintf(ans, sizeof(ans), "error refused: %s\n", err);
	} else if ((size_t)n > FC_CTL_MAX) {
		snprintf(ans, sizeof(ans), "error request longer than %d bytes\n", FC_CTL_MAX);
	} else if (fd_ctl_parse(req, (size_t)n, &r, err, sizeof(err)) != 0) {
		snprintf(ans, sizeof(ans), "error %s\n", err);
	} else if (fd_ctl_allowed(&c->acc, &peer, r.op, err, sizeof(err)) != 0) {
		refused(c, &cr, err);
		snprintf(ans, sizeof(ans), "error refused: %s\n", err);
	} else {
		c->h(c->arg, &r, ans, sizeof(ans));
	}
	free(more);
	if (send(s, ans, strlen(ans), MSG_NOSIGNAL) < 0)
		fprintf(stderr, "flowcutd: control socket: answer not sent: %s\n", strerror(errno));
	close(s);
}
