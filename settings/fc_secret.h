/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_secret: the operator's secret, the file that lets a peer other than
 * root change things over the control socket (its `auth SECRET` line:
 * include/flowcut/fc_ctl.h; flowcut-web runs unprivileged and carries the
 * secret the operator typed), and the page's read credential beside it.
 *
 * The file (FC_WEB_SECRET_PATH, /etc/flowcut/web.secret): one line of
 * FC_SECRET_HEX lowercase or uppercase hex digits (32 bytes from
 * getrandom), an optional '\n', nothing else; a regular file (not a
 * symlink: O_NOFOLLOW) owned by root, mode 0600 or narrower.  Anything
 * else is refused (fc_secret_read says what and with which path) and then
 * no secret is accepted at all: a file another user could read or write
 * is no secret.
 *
 * fc_secret_make writes one when none is there, never over one that is
 * there, whatever it holds.  The folder must exist (it is not made here)
 * and pass fc_file_folder.  A crash or ENOSPC leaves no file at the name,
 * at most a temporary (".NAME.PID.tmp") the next make removes.
 *
 * fc_secret_check reads the file each time it is asked (a fix of its mode,
 * or a new secret, takes effect at the next request) and compares in
 * constant time.  The secret never appears in a message; every buffer
 * that held it is wiped (explicit_bzero) before it is left.
 *
 * fc_secret_read and fc_secret_make return 0 (make: 1 made, 0 one there)
 * or a negative errno with `why`; the checks return a verdict.
 * No state; any thread.
 *
 * Design notes (link() not rename(), a read each request): settings/README.md.
 */
#ifndef FLOWCUT_FC_SECRET_H
#define FLOWCUT_FC_SECRET_H

#include <stddef.h>

#define FC_SECRET_HEX 64	/* the secret's hex digits: 32 bytes */

/* What fc_secret_check found: fd_ctl_allowed's input. */
enum fc_secret_verdict {
	FC_SECRET_NONE,		/* the request carried no secret */
	FC_SECRET_RIGHT,	/* it matches the file's */
	FC_SECRET_WRONG,	/* it does not */
	FC_SECRET_REFUSED,	/* the file is missing or refused: no secret is accepted */
};

/*
 * fc_secret_read - the file's secret into hex (FC_SECRET_HEX + 1 bytes,
 * NUL-terminated).  0; or -ENOENT (none), -EPERM (not a regular file, not
 * root's, group or others have a bit), -EINVAL (not FC_SECRET_HEX hex
 * digits and a newline), or open's or read's -errno; each said in `why`
 * ("PATH: mode 0644: readable or writable by group or others").
 */
int fc_secret_read(const char *path, char *hex, char *why, size_t len);

/*
 * fc_secret_make - a new secret written to `path` if none is there: 1
 * (made), 0 (one there: left as it is, checked or not), or -errno with
 * `why` (the folder missing: -ENOENT, or refused: fc_file_folder's -EPERM;
 * getrandom's, open's, write's, fsync's, link's; no file is left at
 * `path`).
 */
int fc_secret_make(const char *path, char *why, size_t len);

/*
 * fc_secret_check - `given` (n bytes, not NUL-terminated; NULL: none
 * given) against the file's: the verdict; FC_SECRET_REFUSED with `why`
 * (fc_secret_read's) when the file cannot be trusted.
 */
enum fc_secret_verdict fc_secret_check(const char *path, const char *given, size_t n,
				       char *why, size_t len);

/*
 * fc_secret_check_reader - as fc_secret_check, for a read credential
 * (FC_READ_SECRET_PATH, /etc/flowcut/read.secret: what opens the page's
 * reads and /metrics, and nothing else): the file may be read by its
 * group too (root:flowcut 0640, flowcut-web in the group: it judges it itself), and
 * be owned by the caller's euid as well as root's; group write and any
 * bit for others are refused all the same.
 */
enum fc_secret_verdict fc_secret_check_reader(const char *path, const char *given, size_t n,
					      char *why, size_t len);

#endif
