/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_file: see fc_file.h. */
#include "fc_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int
refuse(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}

enum kind { FILE_ITSELF, ITS_FOLDER, FOLDER_ABOVE };

/* Who may have written it: NULL when only root or the euid, else why not. */
static const char *
untrusted(const struct stat *st, enum kind k, char *why, size_t len)
{
	mode_t w = st->st_mode & (S_IWGRP | S_IWOTH);

	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len, "owned by uid %u", (unsigned int)st->st_uid);
		return why;
	}
	if (w == 0)
		return NULL;
	if (k == FOLDER_ABOVE && (st->st_mode & S_ISVTX) && st->st_uid == 0)
		return NULL;	/* /tmp: others add entries, but cannot move ours */
	snprintf(why, len, "%s", (w & S_IWOTH) ? "writable by others" : "writable by group");
	return why;
}

/*
 * The folder `dir` (absolute, resolved) walked from / without following a
 * link, each folder checked on its descriptor: the last one's descriptor,
 * or a negative errno with err.
 */
static int
folder_open(const char *dir, const char *path, char *err, size_t errlen)
{
	char at[PATH_MAX] = "/", why[64];
	const char *p = dir + strspn(dir, "/");
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return refuse(err, errlen, -errno, "/: %s (on the path of %s)", strerror(errno),
			      path);
	for (;;) {
		char comp[NAME_MAX + 1];
		size_t n = strcspn(p, "/"), o;
		struct stat st;
		int nfd;

		if (fstat(fd, &st) != 0) {
			int e = errno;

			close(fd);
			return refuse(err, errlen, -e, "%s: %s (on the path of %s)", at, strerror(e),
				      path);
		}
		if (untrusted(&st, n == 0 ? ITS_FOLDER : FOLDER_ABOVE, why, sizeof(why))) {
			close(fd);
			return refuse(err, errlen, -EPERM, "%s: %s (on the path of %s)", at, why,
				      path);
		}
		if (n == 0)
			return fd;
		if (n > NAME_MAX) {
			close(fd);
			return refuse(err, errlen, -ENAMETOOLONG, "%s: a folder's name is too long",
				      path);
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		o = at[1] ? strlen(at) : 0;	/* "/" then "/a", "/a/b" */
		snprintf(at + o, sizeof(at) - o, "/%s", comp);
		nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)	/* a link here was not one when realpath passed */
			return refuse(err, errlen, -errno, "%s: %s (on the path of %s)", at,
				      errno == ELOOP || errno == ENOTDIR ? "swapped while checked"
									 : strerror(errno), path);
		fd = nfd;
		p += n;
		p += strspn(p, "/");
	}
}

int
fc_file_folder(const char *path, const char **name, char *err, size_t errlen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *base = strrchr(path, '/');

	if (base == NULL) {
		snprintf(dir, sizeof(dir), ".");
		base = path;
	} else {
		snprintf(dir, sizeof(dir), "%.*s", base == path ? 1 : (int)(base - path), path);
		base++;
	}
	if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return refuse(err, errlen, -EISDIR, "%s: names a folder, not a file", path);
	if (realpath(dir, real) == NULL)
		return refuse(err, errlen, -errno, "%s: %s", path, strerror(errno));
	*name = base;
	return folder_open(real, path, err, errlen);
}

/* The file opened from its folder and checked: its descriptor and *st, or -errno. */
static int
file_open(const char *path, struct stat *st, char *err, size_t errlen)
{
	char why[64];
	const char *base;
	int dfd = fc_file_folder(path, &base, err, errlen), fd, e;

	if (dfd < 0)
		return dfd;
	/* O_NONBLOCK: a FIFO does not block; O_NOCTTY: a terminal is not taken */
	fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	e = errno;
	close(dfd);
	if (fd < 0)
		return refuse(err, errlen, -e, "%s: %s", path,
			      e == ELOOP ? "a symbolic link (not followed)" : strerror(e));
	if (fstat(fd, st) != 0) {
		e = errno;
		close(fd);
		return refuse(err, errlen, -e, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		if (S_ISDIR(st->st_mode))
			return refuse(err, errlen, -EISDIR, "%s: a folder, not a file", path);
		return refuse(err, errlen, -EINVAL, "%s: not a regular file", path);
	}
	if (untrusted(st, FILE_ITSELF, why, sizeof(why))) {
		close(fd);
		return refuse(err, errlen, -EPERM, "%s: %s", path, why);
	}
	return fd;
}

static bool
same_file(const struct stat *a, const struct stat *b)
{
	return a->st_size == b->st_size && a->st_ino == b->st_ino &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

int
fc_file_read(const char *path, size_t cap, const char *cap_key, char **text, size_t *len,
	     char *err, size_t errlen)
{
	struct stat st, after;
	size_t size, got = 0;
	char *buf;
	int fd;

	*text = NULL;
	*len = 0;
	fd = file_open(path, &st, err, errlen);
	if (fd < 0)
		return fd;
	if ((unsigned long long)st.st_size > cap) {
		close(fd);
		return refuse(err, errlen, -EFBIG, "%s: %lld bytes, more than %s%s%zu", path,
			      (long long)st.st_size, cap_key ? cap_key : "", cap_key ? " = " : "",
			      cap);
	}
	size = (size_t)st.st_size;
	buf = malloc(size + 1);
	if (buf == NULL) {
		close(fd);
		return refuse(err, errlen, -ENOMEM, "%s: no memory for its %zu bytes", path, size);
	}
	while (got < size + 1) {	/* one byte more: a file that grew is seen */
		ssize_t n = read(fd, buf + got, size + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			free(buf);
			close(fd);
			return refuse(err, errlen, -e, "%s: reading: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != size || fstat(fd, &after) != 0 || !same_file(&st, &after)) {
		free(buf);
		close(fd);
		return refuse(err, errlen, -EAGAIN, "%s: changed while it was read; read again at "
			      "its next change", path);
	}
	close(fd);
	buf[size] = '\0';
	*text = buf;
	*len = size;
	return 0;
}
