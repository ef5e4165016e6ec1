/* SPDX-License-Identifier: BSD-3-Clause */
/* fi_jail: see fi_jail.h. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include "fi_jail.h"

/*
 * What the loop and its libraries do once locked: take and answer
 * (accept4, recvmmsg/recvmsg/recvfrom/read, sendmmsg/sendmsg/sendto/write:
 * the socket and stderr), memory (malloc's brk, mmap, munmap, mremap, madvise; mprotect
 * for a new arena), OpenSSL's and pthread_once's futex, the clock, a
 * signal's return, fstat (stdio's first line), exit.
 */
const char *const fi_jail_allowed[] = {
	"accept", "accept4", "recvmsg", "recvmmsg", "recvfrom", "read", "sendmsg", "sendmmsg",
	"sendto", "write",
	"close", "brk", "mmap", "munmap", "mremap", "madvise", "mprotect", "futex",
	"clock_gettime", "gettimeofday", "rt_sigreturn", "rt_sigprocmask", "fstat",
	"newfstatat", "getpid", "exit", "exit_group", NULL,
};

static int
fail(char *err, size_t cap, const char *what, int e)
{
	snprintf(err, cap, "%s: %s", what, strerror(e));
	return -1;
}

/* The bounding set emptied: nothing gained back by an exec (root still may: CAP_SETPCAP). */
static int
bounding_drop(char *err, size_t cap)
{
	for (int c = 0; c <= CAP_LAST_CAP; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
			return fail(err, cap, "PR_CAPBSET_DROP", errno);
	return 0;
}

/* No capability in any set of this thread's (a user's are none already). */
static int
caps_drop(char *err, size_t cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capset, &h, d) != 0)
		return fail(err, cap, "capset", errno);
	return 0;
}

int
fi_jail_user(const char *user, char *err, size_t cap)
{
	struct passwd *pw;

	if (user == NULL)
		return 0;
	if (geteuid() != 0)
		return fail(err, cap, "--user needs root to take it", EPERM);
	errno = 0;
	pw = getpwnam(user);
	if (pw == NULL)
		return fail(err, cap, user, errno ? errno : ENOENT);
	if (pw->pw_uid == 0)
		return fail(err, cap, "--user is root: the bytes it reads are the network's", EPERM);
	if (bounding_drop(err, cap) != 0)	/* while root may */
		return -1;
	if (setgroups(0, NULL) != 0)
		return fail(err, cap, "setgroups", errno);
	if (setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) != 0)
		return fail(err, cap, "setresgid", errno);
	if (setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) != 0)
		return fail(err, cap, "setresuid", errno);
	return 0;
}

int
fi_jail_lock(char *err, size_t cap)
{
	scmp_filter_ctx f;
	int rc = 0;

	if (geteuid() == 0 || getuid() == 0)
		return fail(err, cap, "still root (--user NAME)", EPERM);
	if (caps_drop(err, cap) != 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return fail(err, cap, "PR_SET_NO_NEW_PRIVS", errno);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		return fail(err, cap, "PR_SET_DUMPABLE", errno);
	f = seccomp_init(SCMP_ACT_KILL_PROCESS);
	if (f == NULL)
		return fail(err, cap, "seccomp_init", ENOMEM);
	for (int i = 0; fi_jail_allowed[i] != NULL && rc == 0; i++) {
		int nr = seccomp_syscall_resolve_name(fi_jail_allowed[i]);

		if (nr == __NR_SCMP_ERROR)
			continue;	/* not on this architecture (fstat on arm64, ...) */
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, nr, 0);
		if (rc != 0)
			snprintf(err, cap, "seccomp_rule_add %s: %s", fi_jail_allowed[i],
				 strerror(-rc));
	}
	if (rc == 0) {
		rc = seccomp_load(f);
		if (rc != 0)
			snprintf(err, cap, "seccomp_load: %s", strerror(-rc));
	}
	seccomp_release(f);
	return rc == 0 ? 0 : -1;
}
