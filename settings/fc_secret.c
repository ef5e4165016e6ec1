/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_secret: see fc_secret.h. */
#include "fc_secret.h"
#include "fc_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * The file's secret into hex; `reader` (a read credential): group may
 * read, and its owner may be the caller's euid too.
 */
static int
read_secret(const char *path, bool reader, char *hex, char *why, size_t len)
{
	char buf[FC_SECRET_HEX + 2];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK), err;
	bool ok;

	if (fd < 0) {
		err = errno;
		snprintf(why, len, "%s: %s", path, err == ELOOP ? "a symlink" : strerror(err));
		return err == ELOOP ? -EPERM : -err;
	}
	if (fstat(fd, &st) != 0) {
		err = errno;
		snprintf(why, len, "%s: %s", path, strerror(err));
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && !(reader && st.st_uid == geteuid())) ||
	    (st.st_mode & (reader ? 037 : 077)) != 0) {
		if (!S_ISREG(st.st_mode))
			snprintf(why, len, "%s: not a regular file", path);
		else if (st.st_uid != 0)
			snprintf(why, len, "%s: owned by uid %u, not root", path,
				 (unsigned int)st.st_uid);
		else
			snprintf(why, len, reader ? "%s: mode %04o: group may write, or others have "
				 "a bit (0640 at most)" : "%s: mode %04o: group or others have a bit "
				 "(0600 root only)", path, (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, sizeof(buf));
	err = errno;
	close(fd);
	if (n < 0) {
		explicit_bzero(buf, sizeof(buf));
		snprintf(why, len, "%s: %s", path, strerror(err));
		return -err;
	}
	ok = n == FC_SECRET_HEX || (n == FC_SECRET_HEX + 1 && buf[FC_SECRET_HEX] == '\n');
	for (ssize_t i = 0; ok && i < FC_SECRET_HEX; i++)
		ok = is_hex(buf[i]);
	if (ok)
		memcpy(hex, buf, FC_SECRET_HEX);
	explicit_bzero(buf, sizeof(buf));	/* no copy of the secret left on the stack */
	if (!ok) {
		snprintf(why, len, "%s: not one line of %d hex digits", path, FC_SECRET_HEX);
		return -EINVAL;
	}
	hex[FC_SECRET_HEX] = '\0';
	return 0;
}

int
fc_secret_read(const char *path, char *hex, char *why, size_t len)
{
	return read_secret(path, false, hex, why, len);
}

/* The new secret's line into fd, synced: 0 or -errno. */
static int
write_line(int fd, const char *line, size_t n)
{
	errno = 0;
	if (fchmod(fd, 0600) != 0 || write(fd, line, n) != (ssize_t)n || fsync(fd) != 0)
		return errno ? -errno : -EIO;	/* a short write (ENOSPC to come) sets none */
	return 0;
}

int
fc_secret_make(const char *path, char *why, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	uint8_t raw[FC_SECRET_HEX / 2];
	char line[FC_SECRET_HEX + 1], tmp[NAME_MAX + 1], dwhy[256];
	const char *name;
	struct stat st;
	int dfd, fd, rc;

	dfd = fc_file_folder(path, &name, dwhy, sizeof(dwhy));
	if (dfd == -ENOENT) {	/* the installer's folder: not made here */
		snprintf(why, len, "%s: its folder is missing (none made)", path);
		return -ENOENT;
	}
	if (dfd < 0) {
		snprintf(why, len, "%s: its folder is refused: %s", path, dwhy);
		return dfd;
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(dfd);
		return 0;	/* one there: left as it is */
	}
	if (strlen(name) + 24 > sizeof(tmp)) {
		close(dfd);
		snprintf(why, len, "%s: its name is too long for a temporary beside it", path);
		return -ENAMETOOLONG;
	}
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		rc = -errno;
		close(dfd);
		snprintf(why, len, "%s: getrandom: %s", path, strerror(-rc));
		return rc;
	}
	for (size_t i = 0; i < sizeof(raw); i++) {
		line[2 * i] = digits[raw[i] >> 4];
		line[2 * i + 1] = digits[raw[i] & 15];
	}
	line[FC_SECRET_HEX] = '\n';
	explicit_bzero(raw, sizeof(raw));
	/* a temporary beside it, written whole, then linked to the name: never a half file */
	snprintf(tmp, sizeof(tmp), ".%s.%ld.tmp", name, (long)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlinkat(dfd, tmp, 0) == 0)	/* a crash's, ours */
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	rc = fd < 0 ? -errno : write_line(fd, line, sizeof(line));
	explicit_bzero(line, sizeof(line));
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		snprintf(why, len, "%s: written (a temporary %s beside it): %s", path, tmp,
			 strerror(-rc));
		if (fd >= 0)
			unlinkat(dfd, tmp, 0);
		close(dfd);
		return rc;
	}
	rc = linkat(dfd, tmp, dfd, name, 0) == 0 ? 1 : errno == EEXIST ? 0 : -errno;
	if (rc < 0)
		snprintf(why, len, "%s: linked from %s: %s", path, tmp, strerror(-rc));
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {		/* the link survives a crash once its folder is synced */
		fsync(fd);
		close(fd);
	}
	close(dfd);
	return rc;	/* 0: one came meanwhile (EEXIST), left as it is */
}

static enum fc_secret_verdict
check(const char *path, bool reader, const char *given, size_t n, char *why, size_t len)
{
	char hex[FC_SECRET_HEX + 1];
	unsigned int diff = n != FC_SECRET_HEX;

	if (read_secret(path, reader, hex, why, len) != 0)
		return FC_SECRET_REFUSED;
	if (given == NULL)
		return FC_SECRET_NONE;
	/* every byte, no early exit: a short or long one compared against itself */
	for (size_t i = 0; i < FC_SECRET_HEX; i++)
		diff |= (unsigned char)hex[i] ^ (unsigned char)(n == FC_SECRET_HEX ? given[i] :
								 hex[i] ^ 1);
	explicit_bzero(hex, sizeof(hex));
	return diff == 0 ? FC_SECRET_RIGHT : FC_SECRET_WRONG;
}

enum fc_secret_verdict
fc_secret_check(const char *path, const char *given, size_t n, char *why, size_t len)
{
	return check(path, false, given, n, why, len);
}

enum fc_secret_verdict
fc_secret_check_reader(const char *path, const char *given, size_t n, char *why, size_t len)
{
	return check(path, true, given, n, why, len);
}
