/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_secret: the operator's secret, the file that lets a peer other than
 * root change things over the control socket (issue 18: the page,
 * flowcut-web, runs unprivileged and carries the secret the operator
 * typed; fd_ctl.h's `auth SECRET` line).
 *
 * The file (FC_WEB_SECRET_PATH, /etc/flowcut/web.secret): one line of
 * FC_SECRET_HEX lowercase or uppercase hex digits (32 bytes from
 * getrandom), an optional '\n', nothing else; a regular file (not a
 * symlink: O_NOFOLLOW) owned by root, mode 0600 or narrower (no bit for
 * group or others).  Anything else is refused (fc_secret_read says what
 * and with which path) and then no secret is accepted at all: a file
 * another user could read or write is no secret.
 *
 * fc_secret_make writes one when none is there (flowcutd's first start,
 * `flowcutctl web-secret`): never over one that is there, whatever it
 * holds.  The folder must exist (the installer's /etc/flowcut; it is not
 * made here) and pass fc_file's folder check (fc_file_folder: root's, no
 * group or other write).  The secret goes to a temporary beside it
 * (".NAME.PID.tmp", O_EXCL, 0600), is synced, then link()ed to the name
 * (linkat: never over a file, EEXIST leaves the one there) and the
 * temporary unlinked: a crash or ENOSPC leaves no empty file at the name
 * (which fc_secret_read would refuse forever, and make never replace),
 * at most a temporary the next make removes.  Chosen over rename(), which
 * replaces a file that came meanwhile.  Every buffer that held the secret
 * is wiped (explicit_bzero) before it is left.
 *
 * fc_secret_check reads the file each time it is asked (a 65-byte read,
 * asked once per `auth` request: an operator's fix of the file's mode, or
 * a new secret, takes effect at the next request without a restart) and
 * compares in constant time (every byte of the FC_SECRET_HEX, no early
 * exit; a given secret of another length compared all the same, and
 * refused).  The secret never appears in a message.
 *
 * No state; any thread.
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
