/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fi_jail: flowcut-inspect shut in before it reads a byte - its own user
 * (when started as root), no capability, no new privileges, not
 * dumpable, and a system call filter (libseccomp) that lets it take and
 * answer questions on the sockets it has and nothing else: no open, no
 * socket, no exec.  A call outside the list kills the process (its unit
 * starts it again); fi_jail_allowed names the list for the docs.
 */
#ifndef FLOWCUT_FI_JAIL_H
#define FLOWCUT_FI_JAIL_H

/*
 * fi_jail_user - as root: become `user` (its uid, its gid, no other
 * group); not root and user NULL: nothing.  0, or -1 with err written.
 */
int fi_jail_user(const char *user, char *err, size_t cap);

/*
 * fi_jail_lock - no capability left, no new privileges, not dumpable,
 * then the filter.  0, or -1 with err written.  Root still: refused.
 */
int fi_jail_lock(char *err, size_t cap);

/* The system calls the filter allows, for the docs and the test. */
extern const char *const fi_jail_allowed[];

#endif
