/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctl, flowcutd's control socket: its requests parsed (rows), who may
 * ask what (fd_ctl_allowed as rows: uid, gids, request -> allowed or
 * refused and why), and, as root, a real socket asked by `nobody` (a
 * child: setgroups, setresgid, setresuid) - refused for cut-conn, allowed
 * for status when its group is the read group, refused when it is not, the
 * refusal logged once however often it comes - and the socket's folder
 * and modes.  Everything made under one folder in /tmp, removed at the end
 * even when a case fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_ctl.h"

#define NOBODY 65534	/* nobody, and nogroup: Debian's */
#define OTHER_GID 4242	/* a group nobody is in unless a case puts it there */

#define NOT_A_REQUEST "not a request (cut-conn ID, status, resync, why ADDR, why-conn ID, triggers)"

static void
test_parse_rows(void **state)
{
	static const struct {
		const char *text;
		int op;		/* -1: refused with err */
		uint64_t id;
		const char *err;
		uint8_t family;	/* why's: 4, 6, or 0 */
		const char *addr;	/* ... its bytes, as a string of them */
	} rows[] = {
		{ "why 198.18.1.2\n", FD_CTL_WHY, 0, NULL, 4, "\xc6\x12\x01\x02" },
		{ "why 0.0.0.0", FD_CTL_WHY, 0, NULL, 4, "\0\0\0\0" },
		{ "why 2001:db8::1\n", FD_CTL_WHY, 0, NULL, 6,
		  "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01" },
		{ "why ::ffff:198.18.1.2\n", FD_CTL_WHY, 0, NULL, 6,
		  "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x01\x02" },
		{ "why 198.18.1.0/24\n", -1, 0, "why: '198.18.1.0/24' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why 198.18.1\n", -1, 0, "why: '198.18.1' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why example.org\n", -1, 0, "why: 'example.org' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why 2001:db8::1::2\n", -1, 0, "why: '2001:db8::1::2' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why \n", -1, 0, "why: the address is missing, too long (0 bytes) or not printable", 0, NULL },
		{ "why 1.2.3.4 5\n", -1, 0,
		  "why: the address is missing, too long (9 bytes) or not printable", 0, NULL },
		{ "why 1.2.3.4\x1b[2J\n", -1, 0,
		  "why: the address is missing, too long (11 bytes) or not printable", 0, NULL },
		{ "why 1111:2222:3333:4444:5555:6666:7777:8888:9999:0000\n", -1, 0,
		  "why: the address is missing, too long (49 bytes) or not printable", 0, NULL },
		{ "why\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "whyx 1.2.3.4\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "why-conn 7\n", FD_CTL_WHY_CONN, 7, NULL, 0, NULL },
		{ "why-conn 18446744073709551615", FD_CTL_WHY_CONN, UINT64_MAX, NULL, 0, NULL },
		{ "why-conn 1.2.3.4\n", -1, 0, "why-conn: '1.2.3.4' is not a connection id", 0, NULL },
		{ "why-conn \n", -1, 0, "why-conn: the id is missing or too long", 0, NULL },
		{ "why-conn\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "triggers\n", FD_CTL_TRIGGERS, 0, NULL, 0, NULL },
		{ "triggers", FD_CTL_TRIGGERS, 0, NULL, 0, NULL },
		{ "triggers --json\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn 0\n", FD_CTL_CUT_CONN, 0, NULL, 0, NULL },
		{ "cut-conn 42", FD_CTL_CUT_CONN, 42, NULL, 0, NULL },
		{ "cut-conn 18446744073709551615\n", FD_CTL_CUT_CONN, UINT64_MAX, NULL, 0, NULL },
		{ "status\n", FD_CTL_STATUS, 0, NULL, 0, NULL },
		{ "status", FD_CTL_STATUS, 0, NULL, 0, NULL },
		{ "resync\n", FD_CTL_RESYNC, 0, NULL, 0, NULL },
		{ "resync", FD_CTL_RESYNC, 0, NULL, 0, NULL },
		{ "resync 1\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "resyncs\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn 18446744073709551616\n", -1, 0,
		  "cut-conn: '18446744073709551616' is not a connection id", 0, NULL },
		{ "cut-conn 12a\n", -1, 0, "cut-conn: '12a' is not a connection id", 0, NULL },
		{ "cut-conn \n", -1, 0, "cut-conn: the id is missing or too long", 0, NULL },
		{ "cut-conn 000000000000000000000001\n", -1, 0,
		  "cut-conn: the id is missing or too long", 0, NULL },
		{ "cut-conn\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn5\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "status 1\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "statusx\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "status\n\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "STATUS\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "uncut 5\n", -1, 0, NOT_A_REQUEST, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_req r = { .op = FD_CTL_CUT_CONN, .id = 777 };
		char err[160] = "";
		int rc = fd_ctl_parse(rows[i].text, strlen(rows[i].text), &r, err, sizeof(err));

		print_message("row %zu\n", i);
		if (rows[i].op < 0) {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, rows[i].err);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(r.op, rows[i].op);
			assert_true(r.id == rows[i].id);
			assert_int_equal(r.family, rows[i].family);
			if (rows[i].family)
				assert_memory_equal(r.addr, rows[i].addr, rows[i].family == 4 ? 4 : 16);
		}
	}
}

static void
test_allowed_rows(void **state)
{
	static const gid_t adm_other[] = { 4, OTHER_GID }, adm[] = { 4 };
	static const struct {
		bool group;	/* the read group is OTHER_GID, "flowcut-read" */
		uid_t uid;
		gid_t gid;
		size_t ngroups;
		const gid_t *groups;
		enum fd_ctl_op op;
		const char *why;	/* NULL: allowed */
	} rows[] = {
		{ false, 0, 0, 0, NULL, FD_CTL_CUT_CONN, NULL },
		{ false, 0, 0, 0, NULL, FD_CTL_STATUS, NULL },
		{ true, 0, NOBODY, 0, NULL, FD_CTL_CUT_CONN, NULL },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_STATUS,
		  "uid 65534 is not root and no control_read_group is set" },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_CUT_CONN,
		  "uid 65534 is not root (cut-conn changes flowcutd's state: root only)" },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_STATUS, NULL },	/* its own group */
		{ true, 1000, 1000, 2, adm_other, FD_CTL_STATUS, NULL },	/* a supplementary one */
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_WHY, NULL },	/* why, triggers: read */
		{ true, 1000, 1000, 2, adm_other, FD_CTL_WHY_CONN, NULL },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_TRIGGERS, NULL },
		{ true, 1000, 1000, 1, adm, FD_CTL_TRIGGERS,
		  "uid 1000 is not root and not in group flowcut-read" },
		{ true, 1000, 1000, 2, adm_other, FD_CTL_CUT_CONN,
		  "uid 1000 is not root (cut-conn changes flowcutd's state: root only)" },
		{ true, NOBODY, NOBODY, 0, NULL, FD_CTL_STATUS,
		  "uid 65534 is not root and not in group flowcut-read" },
		{ true, 1000, 1000, 1, adm, FD_CTL_STATUS,
		  "uid 1000 is not root and not in group flowcut-read" },
		/* gid 0 is no root: only uid 0 is */
		{ true, NOBODY, 0, 0, NULL, FD_CTL_CUT_CONN,
		  "uid 65534 is not root (cut-conn changes flowcutd's state: root only)" },
		/* a resync is a change: root only, the read group or not */
		{ false, 0, 0, 0, NULL, FD_CTL_RESYNC, NULL },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_RESYNC,
		  "uid 65534 is not root (resync changes flowcutd's state: root only)" },
		{ false, 1000, 1000, 0, NULL, FD_CTL_RESYNC,
		  "uid 1000 is not root (resync changes flowcutd's state: root only)" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_access a = { .read_group = rows[i].group, .gid = OTHER_GID,
					   .name = "flowcut-read" };
		struct fd_ctl_peer p = { .uid = rows[i].uid, .gid = rows[i].gid,
					 .ngroups = rows[i].ngroups, .groups = rows[i].groups };
		char why[160] = "";
		int rc = fd_ctl_allowed(&a, &p, rows[i].op, why, sizeof(why));

		print_message("row %zu: uid %u op %d\n", i, (unsigned int)rows[i].uid, rows[i].op);
		if (rows[i].why == NULL) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -EACCES);
			assert_string_equal(why, rows[i].why);
		}
	}
}

/* ---- a real socket, asked by nobody (root only) ---- */

static char top[] = "/tmp/fc-ctl-XXXXXX";
static bool have_top;
static unsigned int handled;	/* requests the handler saw: a refused one changes nothing */

static void
handler(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	(void)arg;
	handled++;
	snprintf(ans, cap, req->op == FD_CTL_STATUS ? "ok {\"status\":true}\n" :
		 req->op == FD_CTL_RESYNC ? "ok {\"resyncs\":1}\n" : "ok cut\n");
}

static int
setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	if (mkdtemp(top) == NULL)
		return -1;
	have_top = true;
	return chmod(top, 0755);	/* nobody may walk to the folders below */
}

static int
teardown(void **state)
{
	char cmd[64];

	(void)state;
	if (!have_top)
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

#define SKIP_UNLESS_ROOT()						\
	do {								\
		if (geteuid() != 0) {					\
			print_message("skipped: needs root (setresuid to nobody)\n"); \
			skip();						\
		}							\
	} while (0)

/*
 * A child as uid `uid` (groups: gid and the `ngroups` of `groups`) sends
 * `req` to `path` while this process serves; its answer, or "connect:
 * ERRNO TEXT", in out.
 */
static void
ask_as(struct fd_ctl *c, const char *path, uid_t uid, gid_t gid, size_t ngroups,
       const gid_t *groups, const char *req, char *out, size_t cap)
{
	int p[2];
	pid_t pid;
	size_t got = 0;
	int status;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char ans[FC_CTL_ANS_MAX + 64];
		ssize_t n;
		int s;

		close(p[0]);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (setgroups(ngroups, groups) != 0 || setresgid(gid, gid, gid) != 0 ||
		    setresuid(uid, uid, uid) != 0)
			_exit(3);
		s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			n = snprintf(ans, sizeof(ans), "connect: %s", strerror(errno));
		} else if (send(s, req, strlen(req), 0) < 0) {
			n = snprintf(ans, sizeof(ans), "send: %s", strerror(errno));
		} else {
			n = recv(s, ans, sizeof(ans) - 1, 0);
			if (n < 0)
				n = snprintf(ans, sizeof(ans), "recv: %s", strerror(errno));
		}
		_exit(write(p[1], ans, (size_t)n) == n ? 0 : 4);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf[2] = { { .fd = fd_ctl_fd(c), .events = POLLIN },
					{ .fd = p[0], .events = POLLIN } };
		ssize_t n;

		assert_true(poll(pf, 2, 5000) > 0);
		if (pf[0].revents & POLLIN)
			fd_ctl_serve(c);
		if (!(pf[1].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(p[0], out + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	out[got] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* One asking and its answer, row by row. */
struct ask {
	const char *what;
	bool group;		/* the read group set: gid RG, name "flowcut-read" */
	gid_t rg;
	bool open_up;		/* folder 0755, socket 0666: the modes no longer keep anyone out */
	uid_t uid;
	gid_t gid;
	gid_t extra;		/* a supplementary group, 0 none */
	const char *req;
	const char *want;	/* the answer */
	bool handled;		/* the handler saw it */
};

static void
test_nobody_asks(void **state)
{
	static const struct ask rows[] = {
		/* nogroup is the read group: status answered, a cut refused */
		{ "in the read group, status", true, NOBODY, false, NOBODY, NOBODY, 0,
		  "status\n", "ok {\"status\":true}\n", true },
		{ "in the read group, cut-conn", true, NOBODY, false, NOBODY, NOBODY, 0,
		  "cut-conn 5\n",
		  "error refused: uid 65534 is not root (cut-conn changes flowcutd's state: root "
		  "only)\n", false },
		{ "in the read group by a supplementary group", true, OTHER_GID, false, NOBODY,
		  NOBODY, OTHER_GID, "status\n", "ok {\"status\":true}\n", true },
		/* not in it: the socket's mode keeps nobody out, and so does the check */
		{ "not in the read group", true, OTHER_GID, false, NOBODY, NOBODY, 0, "status\n",
		  "connect: Permission denied", false },
		{ "not in the read group, the socket opened up", true, OTHER_GID, true, NOBODY,
		  NOBODY, 0, "status\n",
		  "error refused: uid 65534 is not root and not in group flowcut-read\n", false },
		{ "not in the read group, the socket opened up, cut-conn", true, OTHER_GID, true,
		  NOBODY, NOBODY, 0, "cut-conn 5\n",
		  "error refused: uid 65534 is not root and not in group flowcut-read\n", false },
		{ "no read group", false, 0, false, NOBODY, NOBODY, 0, "status\n",
		  "connect: Permission denied", false },
		{ "no read group, the socket opened up, cut-conn", false, 0, true, NOBODY, NOBODY, 0,
		  "cut-conn 5\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "a stranger's junk is refused before it is parsed", false, 0, true, NOBODY,
		  NOBODY, 0, "junk\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "in the read group, junk", true, NOBODY, false, NOBODY, NOBODY, 0, "junk\n",
		  "error " NOT_A_REQUEST "\n", false },
		{ "root, cut-conn", true, NOBODY, false, 0, 0, 0, "cut-conn 5\n", "ok cut\n", true },
		{ "in the read group, resync", true, NOBODY, false, NOBODY, NOBODY, 0, "resync\n",
		  "error refused: uid 65534 is not root (resync changes flowcutd's state: root "
		  "only)\n", false },
		{ "root, resync", false, 0, false, 0, 0, 0, "resync\n", "ok {\"resyncs\":1}\n",
		  true },
		{ "root, no read group, status", false, 0, false, 0, 0, 0, "status\n",
		  "ok {\"status\":true}\n", true },
	};
	char dir[128], path[160], ans[FC_CTL_ANS_MAX + 64];

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct ask *r = &rows[i];
		struct fd_ctl_access a = { .read_group = r->group, .gid = r->rg,
					   .name = "flowcut-read" };
		struct fd_ctl *c = fd_ctl_open(path, &a, handler, NULL);
		unsigned int before = handled;

		print_message("row %zu: %s\n", i, r->what);
		assert_non_null(c);
		if (r->open_up) {
			assert_int_equal(chmod(dir, 0755), 0);
			assert_int_equal(chmod(path, 0666), 0);
		}
		ask_as(c, path, r->uid, r->gid, r->extra ? 1 : 0, &r->extra, r->req, ans,
		       sizeof(ans));
		fd_ctl_close(c);
		assert_string_equal(ans, r->want);
		assert_int_equal(handled - before, r->handled ? 1 : 0);
	}
}

/* A loop of refused connects: each refused, one log line for the uid. */
static void
test_refusals_logged_once(void **state)
{
	struct fd_ctl_access a = { .read_group = true, .gid = OTHER_GID, .name = "flowcut-read" };
	char dir[128], path[160], log[128], ans[FC_CTL_ANS_MAX + 64], text[4096];
	struct fd_ctl *c;
	int fd, saved;
	ssize_t n;
	unsigned int lines = 0;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	snprintf(log, sizeof(log), "%s/stderr", top);
	c = fd_ctl_open(path, &a, handler, NULL);
	assert_non_null(c);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(path, 0666), 0);
	fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stderr);
	saved = dup(2);
	dup2(fd, 2);
	for (int k = 0; k < 5; k++) {
		ask_as(c, path, NOBODY, NOBODY, 0, NULL, k % 2 ? "status\n" : "cut-conn 1\n", ans,
		       sizeof(ans));
		if (strncmp(ans, "error refused: ", 15) != 0)
			break;
	}
	ask_as(c, path, 1000, 1000, 0, NULL, "status\n", ans, sizeof(ans));	/* another uid */
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_string_equal(ans, "error refused: uid 1000 is not root and not in group "
			    "flowcut-read\n");
	assert_int_equal(fd_ctl_refused(c), 6);
	fd_ctl_close(c);
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	print_message("%s", text);
	for (char *p = text; (p = strstr(p, "control socket: refused")) != NULL; p++)
		lines++;
	assert_int_equal(lines, 2);
	assert_non_null(strstr(text, "uid 65534 is not root and not in group flowcut-read"));
	assert_non_null(strstr(text, "uid 1000 is not root and not in group flowcut-read"));
}

/* The folder and the socket: modes as the access says; a folder others could swap refused. */
static void
test_folder_and_modes(void **state)
{
	struct fd_ctl_access none = { 0 }, grp = { .read_group = true, .gid = OTHER_GID,
						   .name = "flowcut-read" };
	char dir[128], path[160], link[128], file[160];
	struct fd_ctl *c;
	struct stat st;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/own", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	/* made by fd_ctl: 0700 root:root, the socket 0600 */
	c = fd_ctl_open(path, &none, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* the settings name a read group: 0750 root:GROUP, the socket 0660 root:GROUP */
	assert_int_equal(fd_ctl_access(c, &grp), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(st.st_gid, OTHER_GID);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, OTHER_GID);
	/* and back */
	assert_int_equal(fd_ctl_access(c, &none), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_gid, 0);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), -1);	/* ours: removed with the socket */
	/* made with the group from the start; a stale socket at the path replaced */
	c = fd_ctl_open(path, &grp, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	fd_ctl_close(c);
	/* a crashed flowcutd's folder (0750 root:GROUP, its socket left): taken as ours */
	{
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0)	/* opens, and dies without closing */
			_exit(fd_ctl_open(path, &grp, handler, NULL) != NULL ? 0 : 1);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	c = fd_ctl_open(path, &none, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_gid, 0);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), -1);
	/* a folder others may write: refused, and nothing made in it */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(chmod(dir, 0770), 0);	/* group-writable: refused too */
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	/* a folder of nobody's: refused */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	/* a folder root made itself (0755, not ours): used, and left as it is */
	assert_int_equal(chown(dir, 0, 0), 0);
	c = fd_ctl_open(path, &grp, handler, NULL);
	assert_non_null(c);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* a symlink for the folder: refused */
	snprintf(link, sizeof(link), "%s/link", top);
	assert_int_equal(symlink(dir, link), 0);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", link);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	/* something not a socket at the path: refused, and left there */
	snprintf(file, sizeof(file), "%s/flowcutd.sock", dir);
	fd_ctl_close(NULL);
	{
		int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);

		assert_true(fd >= 0);
		close(fd);
	}
	errno = 0;
	assert_null(fd_ctl_open(file, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rows),
		cmocka_unit_test(test_allowed_rows),
		cmocka_unit_test(test_nobody_asks),
		cmocka_unit_test(test_refusals_logged_once),
		cmocka_unit_test(test_folder_and_modes),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
