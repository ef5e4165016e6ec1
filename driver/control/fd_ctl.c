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
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define FD_CTL_RECV_MS 200	/* a client's request must come this soon, or it is let go */
#define FD_CTL_PENDING 64	/* clients accepted, their request not come yet; more: the oldest let go */
#define FD_CTL_EVENTS 16	/* events taken in one fd_ctl_serve */
#define TAG_LISTEN UINT64_MAX	/* the inner epoll's tags: the listening socket, the timer; else a slot */
#define TAG_TIMER (UINT64_MAX - 1)
#define FD_CTL_GROUPS 64	/* a peer's supplementary groups read at once; more: malloc */

/* A client accepted, its request not read yet: its socket and its deadline (0: a free slot). */
struct pending {
	int fd;
	uint64_t deadline;	/* ms, CLOCK_MONOTONIC */
};

struct fd_ctl {
	int fd;
	int ep;				/* what the main loop polls: the listener, the clients, the timer */
	int tfd;			/* a timerfd: the next client's deadline */
	struct pending pend[FD_CTL_PENDING];
	unsigned int npend;
	uint64_t let_go;		/* clients let go: silent past their deadline, or over FD_CTL_PENDING */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	bool made_dir;			/* the folder is ours: its mode follows the access */
	struct fd_ctl_access acc;
	fd_ctl_handler_fn *h;
	void *arg;
	uint64_t refused;
	uint64_t auth_refused;		/* of them, changes refused for their secret */
	char secret_said[192];		/* the secret file's last refusal said on stderr */
	unsigned int nlogged;		/* refused uids logged, up to FD_CTL_LOGGED_UIDS */
	uid_t logged[FD_CTL_LOGGED_UIDS];
};

/* What follows a request's word. */
enum fd_ctl_args {
	ARGS_NONE,	/* nothing */
	ARGS_ID,	/* " ID" */
	ARGS_ADDR,	/* " ADDR" */
	ARGS_CONNS,	/* " FROM N [filters]" */
	ARGS_CUTS,	/* nothing, or " N" */
	ARGS_SET,	/* " KEY VALUE", or " KEY" and lines */
};

/*
 * The requests: their text, whether they only read, what follows, and for
 * a change whether the operator's secret opens it (the page's two:
 * settings-set and cut-conn; resync stays root's).
 */
static const struct {
	const char *word;
	bool reads;
	enum fd_ctl_args args;
	bool secret;
} ops[] = {
	[FD_CTL_CUT_CONN] = { "cut-conn", false, ARGS_ID, true },
	[FD_CTL_STATUS] = { "status", true, ARGS_NONE },
	[FD_CTL_RESYNC] = { "resync", false, ARGS_NONE },
	[FD_CTL_WHY] = { "why", true, ARGS_ADDR },
	[FD_CTL_WHY_CONN] = { "why-conn", true, ARGS_ID },
	[FD_CTL_TRIGGERS] = { "triggers", true, ARGS_NONE },
	[FD_CTL_COUNTERS] = { "counters", true, ARGS_NONE },
	[FD_CTL_CONNS] = { "conns", true, ARGS_CONNS },
	[FD_CTL_CUTS] = { "cuts", true, ARGS_CUTS },
	[FD_CTL_SETTINGS] = { "settings", true, ARGS_NONE },
	[FD_CTL_SETTINGS_SET] = { "settings-set", false, ARGS_SET, true },
};

#define NOPS (sizeof(ops) / sizeof(ops[0]))

bool
fd_ctl_op_reads(enum fd_ctl_op op)
{
	return ops[op].reads;
}

/*
 * An address (inet_pton's forms), or with prefix_ok an ADDR/LEN too, of
 * request `word`.  0, or -EINVAL said.
 */
static int
parse_addr(const char *word, const char *buf, size_t n, bool prefix_ok, struct fd_ctl_req *out,
	   char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN + 4], *slash;
	bool printable = true;
	unsigned long plen = 0;

	for (size_t i = 0; i < n; i++)
		printable &= buf[i] > ' ' && buf[i] < 0x7f;
	if (n == 0 || n >= sizeof(a) - (prefix_ok ? 0 : 4) || !printable) {
		snprintf(err, errlen, "%s: the address is missing, too long (%zu bytes) or not "
			 "printable", word, n);
		return -EINVAL;
	}
	memcpy(a, buf, n);
	a[n] = '\0';
	slash = prefix_ok ? strchr(a, '/') : NULL;
	if (slash != NULL) {
		char *end;

		*slash = '\0';
		errno = 0;
		plen = strtoul(slash + 1, &end, 10);
		if (slash[1] < '0' || slash[1] > '9' || *end != '\0' || plen > 128) {
			*slash = '/';
			snprintf(err, errlen, "%s: '%s' is not an address or ADDR/LEN", word, a);
			return -EINVAL;
		}
	}
	if (inet_pton(AF_INET, a, out->addr) == 1 && plen <= 32) {
		out->family = 4;
		out->plen = slash ? (uint8_t)plen : 32;
		return 0;
	}
	if (inet_pton(AF_INET6, a, out->addr) == 1) {
		out->family = 6;
		out->plen = slash ? (uint8_t)plen : 128;
		return 0;
	}
	memset(out->addr, 0, sizeof(out->addr));
	if (slash != NULL)
		*slash = '/';
	snprintf(err, errlen, prefix_ok ? "%s: '%s' is not an address or ADDR/LEN" :
		 "%s: '%s' is not an IPv4 or IPv6 address", word, a);
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

/* A count, 1 to FD_CTL_PAGE_MAX (a page's).  0, or -EINVAL said. */
static int
parse_count(const char *word, const char *buf, size_t n, unsigned int *out, char *err,
	    size_t errlen)
{
	unsigned int v = 0;
	bool ok = n > 0 && n <= 3;

	for (size_t i = 0; ok && i < n; i++) {
		ok = buf[i] >= '0' && buf[i] <= '9';
		v = v * 10 + (unsigned int)(buf[i] - '0');
	}
	if (!ok || v == 0 || v > FD_CTL_PAGE_MAX) {
		snprintf(err, errlen, "%s: N is not 1 to %d", word, FD_CTL_PAGE_MAX);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* A word of letters and '_' into out (cap bytes, NUL included).  Whether it fits. */
static bool
parse_word(const char *buf, size_t n, char *out, size_t cap)
{
	bool ok = n > 0 && n < cap;

	for (size_t i = 0; ok && i < n; i++)
		ok = (buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= 'A' && buf[i] <= 'Z') ||
		     (buf[i] >= '0' && buf[i] <= '9') || buf[i] == '_';
	if (ok) {
		memcpy(out, buf, n);
		out[n] = '\0';
	}
	return ok;
}

/* The length of the word at buf (up to a space or the end). */
static size_t
word_len(const char *buf, size_t n)
{
	const char *sp = memchr(buf, ' ', n);

	return sp ? (size_t)(sp - buf) : n;
}

/* conns' " FROM N [addr=ADDR] [port=P] [state=STATE] [action=A]".  0, or -EINVAL said. */
static int
parse_conns(const char *buf, size_t n, struct fd_ctl_req *out, char *err, size_t errlen)
{
	size_t w = word_len(buf, n);
	int rc = parse_id("conns", buf, w, &out->id, err, errlen);
	bool seen[4] = { false };

	if (rc != 0)
		return rc;
	if (w == n) {
		snprintf(err, errlen, "conns: N is missing (conns FROM N [filters])");
		return -EINVAL;
	}
	buf += w + 1, n -= w + 1;
	w = word_len(buf, n);
	rc = parse_count("conns", buf, w, &out->n, err, errlen);
	out->port = -1;
	while (rc == 0 && w < n) {
		static const char *const keys[] = { "addr=", "port=", "state=", "action=" };
		unsigned int k;

		buf += w + 1, n -= w + 1;
		w = word_len(buf, n);
		for (k = 0; k < 4; k++)
			if (w > strlen(keys[k]) && memcmp(buf, keys[k], strlen(keys[k])) == 0)
				break;
		if (k == 4 || seen[k]) {
			snprintf(err, errlen, "conns: filter %u is %s (addr=, port=, state=, "
				 "action=, each once)", (unsigned int)(seen[0] + seen[1] + seen[2] +
								      seen[3] + 1),
				 k == 4 ? "not one" : "given twice");
			return -EINVAL;
		}
		seen[k] = true;
		const char *v = buf + strlen(keys[k]);
		size_t vn = w - strlen(keys[k]);

		if (k == 0) {
			rc = parse_addr("conns: addr=", v, vn, true, out, err, errlen);
		} else if (k == 1) {
			uint64_t p;

			rc = parse_id("conns: port=", v, vn, &p, err, errlen);
			if (rc == 0 && p > 65535)
				rc = -EINVAL;
			if (rc != 0) {
				snprintf(err, errlen, "conns: port= is not 0 to 65535");
				return -EINVAL;
			}
			out->port = (int32_t)p;
		} else if (!parse_word(v, vn, k == 2 ? out->state : out->action,
				       FD_CTL_WORD_MAX)) {
			snprintf(err, errlen, "conns: %s is not a word of letters, digits and _ "
				 "(%d at most)", keys[k], FD_CTL_WORD_MAX - 1);
			return -EINVAL;
		}
	}
	return rc;
}

/*
 * settings-set's " KEY VALUE" (one line) or " KEY" then "\nLINE" each.
 * Every byte printable but the lines' '\n'; no empty line.  0, or -EINVAL said.
 */
static int
parse_set(const char *buf, size_t n, struct fd_ctl_req *out, char *err, size_t errlen)
{
	size_t k = 0;

	while (k < n && buf[k] != ' ' && buf[k] != '\n')
		k++;
	if (k == 0 || k >= FD_CTL_KEY_MAX) {
		snprintf(err, errlen, "settings-set: the key is missing or longer than %d bytes",
			 FD_CTL_KEY_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < k; i++)
		if (!((buf[i] >= 'a' && buf[i] <= 'z') || (buf[i] >= '0' && buf[i] <= '9') ||
		      buf[i] == '_')) {
			snprintf(err, errlen, "settings-set: the key is not lowercase letters, digits "
				 "and _");
			return -EINVAL;
		}
	memcpy(out->key, buf, k);
	out->key[k] = '\0';
	out->lines = k == n || buf[k] == '\n';
	buf += k, n -= k;
	if (!out->lines) {		/* " VALUE" */
		buf++, n--;
		if (n == 0) {
			snprintf(err, errlen, "settings-set %s: the value is missing", out->key);
			return -EINVAL;
		}
	} else if (n > 0) {		/* "\nLINE..." */
		buf++, n--;
		if (n == 0 || buf[n - 1] == '\n') {
			snprintf(err, errlen, "settings-set %s: an empty line", out->key);
			return -EINVAL;
		}
	}
	for (size_t i = 0, line = 1; i < n; i++) {
		bool sep = out->lines && buf[i] == '\n';

		if (sep && (i == 0 || buf[i - 1] == '\n')) {
			snprintf(err, errlen, "settings-set %s: line %zu is empty", out->key, line);
			return -EINVAL;
		}
		if (!sep && (buf[i] < ' ' || buf[i] >= 0x7f)) {
			snprintf(err, errlen, "settings-set %s: line %zu holds a byte that is not "
				 "printable (0x%02x)", out->key, line, (unsigned char)buf[i]);
			return -EINVAL;
		}
		line += sep;
	}
	memcpy(out->value, buf, n);	/* n < FC_CTL_MAX: the request's own bound */
	out->value[n] = '\0';
	return 0;
}

/* The `auth SECRET\n` line, if it comes first: *skip its bytes.  0, or -EINVAL said. */
static int
parse_auth(const char *buf, size_t len, struct fd_ctl_req *out, size_t *skip, char *err,
	   size_t errlen)
{
	const char *nl;
	size_t n;

	*skip = 0;
	if (len < 5 || memcmp(buf, "auth ", 5) != 0)
		return 0;
	nl = memchr(buf + 5, '\n', len - 5);
	n = nl ? (size_t)(nl - buf) - 5 : len - 5;
	if (nl == NULL || n == 0 || n > FD_CTL_SECRET_MAX) {
		snprintf(err, errlen, "auth: %s", nl == NULL ? "the request is missing after the "
			 "secret's line" : n == 0 ? "the secret is missing" :
			 "the secret is longer than 128 bytes");
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if (buf[5 + i] <= ' ' || buf[5 + i] >= 0x7f) {
			snprintf(err, errlen, "auth: the secret holds a byte that is not printable");
			return -EINVAL;
		}
	out->auth = true;
	out->secret_len = n;
	memcpy(out->secret, buf + 5, n);
	*skip = n + 6;
	return 0;
}

int
fd_ctl_parse(const char *buf, size_t len, struct fd_ctl_req *out, char *err, size_t errlen)
{
	struct fd_ctl_req r;
	size_t skip;
	int rc;

	memset(&r, 0, sizeof(r));
	r.port = -1;
	if (len > FC_CTL_MAX) {
		snprintf(err, errlen, "request longer than %d bytes", FC_CTL_MAX);
		return -EINVAL;
	}
	rc = parse_auth(buf, len, &r, &skip, err, errlen);
	if (rc != 0) {
		explicit_bzero(&r, sizeof(r));
		return rc;
	}
	buf += skip, len -= skip;
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	for (size_t k = 0; k < NOPS; k++) {
		size_t w = strlen(ops[k].word);
		enum fd_ctl_args args = ops[k].args;
		bool more;

		if (len < w || memcmp(buf, ops[k].word, w) != 0 ||
		    (len > w && buf[w] != ' ' && !(args == ARGS_SET && buf[w] == '\n')))
			continue;
		more = len > w && buf[w] == ' ';
		r.op = (enum fd_ctl_op)k;
		if (args == ARGS_CUTS && !more)
			r.n = FD_CTL_CUTS_DEFAULT;
		if (!more && (args == ARGS_NONE || args == ARGS_CUTS))
			rc = 0;
		else if (!more)
			break;		/* its arguments missing: not a request */
		else if (args == ARGS_ID)
			rc = parse_id(ops[k].word, buf + w + 1, len - w - 1, &r.id, err, errlen);
		else if (args == ARGS_ADDR)
			rc = parse_addr(ops[k].word, buf + w + 1, len - w - 1, false, &r, err,
					errlen);
		else if (args == ARGS_CONNS)
			rc = parse_conns(buf + w + 1, len - w - 1, &r, err, errlen);
		else if (args == ARGS_CUTS)
			rc = parse_count("cuts", buf + w + 1, len - w - 1, &r.n, err, errlen);
		else if (args == ARGS_SET)
			rc = parse_set(buf + w + 1, len - w - 1, &r, err, errlen);
		else
			break;		/* ARGS_NONE with more: not a request */
		if (rc == 0)
			*out = r;
		explicit_bzero(&r, sizeof(r));	/* its secret's copy */
		return rc;
	}
	explicit_bzero(&r, sizeof(r));
	snprintf(err, errlen, "not a request (cut-conn ID, status, resync, why ADDR, why-conn ID, "
		 "triggers, counters, conns FROM N, cuts [N], settings, settings-set KEY VALUE)");
	return -EINVAL;
}

int
fd_ctl_allowed(const struct fd_ctl_access *a, const struct fd_ctl_peer *p, enum fd_ctl_op op,
	       enum fc_secret_verdict v, char *why, size_t len)
{
	bool member = false;

	if (ops[op].reads && (v == FC_SECRET_WRONG || v == FC_SECRET_REFUSED)) {
		/* a read on a secret, root's too: served for someone who gave it (the page's operator) */
		snprintf(why, len, v == FC_SECRET_WRONG ? "uid %u: the secret is wrong (a read "
			 "that carries one is served only when it is right)" : "uid %u: no secret "
			 "is accepted now: the secret file is missing or refused (flowcutd's log "
			 "says why)", (unsigned int)p->uid);
		return -EACCES;
	}
	if (p->uid == 0 && v != FC_SECRET_WRONG)
		return 0;
	if (p->uid == 0) {
		/* a change on a wrong secret, root's too: the page's, for whoever typed it */
		snprintf(why, len, "uid 0: the secret is wrong (%s changes flowcutd's state: root, "
			 "or the operator's secret; a request that carries one is served only when "
			 "it is right)", ops[op].word);
		return -EACCES;
	}
	if (!ops[op].reads && !ops[op].secret) {
		snprintf(why, len, "uid %u is not root (%s is root's: the operator's secret does "
			 "not open it)", (unsigned int)p->uid, ops[op].word);
		return -EACCES;
	}
	if (!ops[op].reads) {
		if (v == FC_SECRET_RIGHT)
			return 0;
		snprintf(why, len, v == FC_SECRET_WRONG ? "uid %u: the secret is wrong (%s "
			 "changes flowcutd's state: root, or the operator's secret)" :
			 v == FC_SECRET_REFUSED ? "uid %u is not root and no secret is accepted "
			 "now: the secret file is missing or refused (%s changes flowcutd's state; "
			 "flowcutd's log says why)" : "uid %u is not root and sent no secret (%s "
			 "changes flowcutd's state: root, or the operator's secret)",
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

/*
 * The clients' own loop: an epoll of the listening socket, each client
 * whose request has not come, and a timer for the earliest deadline -
 * what the main loop polls (an epoll is readable when one of its own is).
 */
static int
loop_make(struct fd_ctl *c)
{
	struct epoll_event l = { .events = EPOLLIN, .data.u64 = TAG_LISTEN };
	struct epoll_event t = { .events = EPOLLIN, .data.u64 = TAG_TIMER };

	c->ep = epoll_create1(EPOLL_CLOEXEC);
	c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->ep < 0 || c->tfd < 0 || epoll_ctl(c->ep, EPOLL_CTL_ADD, c->fd, &l) != 0 ||
	    epoll_ctl(c->ep, EPOLL_CTL_ADD, c->tfd, &t) != 0)
		return -1;
	return 0;
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
	c->fd = c->ep = c->tfd = -1;
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
	if (modes_apply(c) != 0 || listen(c->fd, 64) != 0 || loop_make(c) != 0) {
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
	if (c->ep >= 0)
		close(c->ep);
	if (c->tfd >= 0)
		close(c->tfd);
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
	for (unsigned int i = 0; i < FD_CTL_PENDING; i++)
		if (c->pend[i].deadline != 0)
			close(c->pend[i].fd);
	close(c->ep);
	close(c->tfd);
	close(c->fd);
	unlink(c->path);
	if (c->made_dir)
		rmdir(c->dir);	/* ours; left if someone put something in it */
	free(c);
}

int
fd_ctl_fd(const struct fd_ctl *c)
{
	return c->ep;
}

uint64_t
fd_ctl_let_go(const struct fd_ctl *c)
{
	return c->let_go;
}

uint64_t
fd_ctl_refused(const struct fd_ctl *c)
{
	return c->refused;
}

uint64_t
fd_ctl_auth_refused(const struct fd_ctl *c)
{
	return c->auth_refused;
}

/* The verdict on a request's secret; a secret file refused said once for each reason. */
static enum fc_secret_verdict
secret_of(struct fd_ctl *c, const struct fd_ctl_req *r)
{
	char why[sizeof(c->secret_said)] = "no secret file is set";
	enum fc_secret_verdict v = FC_SECRET_REFUSED;

	if (!r->auth)
		return FC_SECRET_NONE;
	if (c->acc.secret_path != NULL)
		v = fc_secret_check(c->acc.secret_path, r->secret, r->secret_len, why, sizeof(why));
	if (v == FC_SECRET_REFUSED && strcmp(why, c->secret_said) != 0) {
		snprintf(c->secret_said, sizeof(c->secret_said), "%s", why);
		fprintf(stderr, "flowcutd: control socket: the operator's secret: %s: no secret is "
			"accepted until it is fixed\n", why);
	}
	return v;
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

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A client let go (answered, silent past its deadline, or pushed out): its slot freed. */
static void
pend_drop(struct fd_ctl *c, unsigned int i)
{
	epoll_ctl(c->ep, EPOLL_CTL_DEL, c->pend[i].fd, NULL);
	close(c->pend[i].fd);
	c->pend[i].deadline = 0;
	c->npend--;
}

/* The timer set for the earliest deadline (none: disarmed). */
static void
timer_arm(struct fd_ctl *c, uint64_t now)
{
	struct itimerspec it = { 0 };
	uint64_t first = 0;

	for (unsigned int i = 0; i < FD_CTL_PENDING; i++)
		if (c->pend[i].deadline != 0 && (first == 0 || c->pend[i].deadline < first))
			first = c->pend[i].deadline;
	if (first != 0) {
		uint64_t in = first > now ? first - now : 1;

		it.it_value.tv_sec = (time_t)(in / 1000);
		it.it_value.tv_nsec = (long)(in % 1000) * 1000000;
	}
	(void)timerfd_settime(c->tfd, 0, &it, NULL);
}

/*
 * New clients accepted, each non-blocking, with room to send its largest
 * answer whole at once; past FD_CTL_PENDING waiting, the oldest is let go.
 */
static void
accept_all(struct fd_ctl *c, uint64_t now)
{
	int sz = 2 * FC_CTL_ANS_MAX;

	for (int k = 0; k < FD_CTL_PENDING; k++) {
		int s = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN };
		unsigned int i, old = 0;

		if (s < 0)
			return;		/* none waits (or gone meanwhile) */
		if (setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) != 0) {
			close(s);
			continue;
		}
		if (c->npend == FD_CTL_PENDING) {
			for (i = 1; i < FD_CTL_PENDING; i++)
				if (c->pend[i].deadline < c->pend[old].deadline)
					old = i;
			pend_drop(c, old);
			c->let_go++;
		}
		for (i = 0; c->pend[i].deadline != 0; i++)
			;
		ev.data.u64 = i;
		if (epoll_ctl(c->ep, EPOLL_CTL_ADD, s, &ev) != 0) {
			close(s);
			continue;
		}
		c->pend[i] = (struct pending){ .fd = s, .deadline = now + FD_CTL_RECV_MS };
		c->npend++;
	}
}

/*
 * A change asked (a cut, a resync, a setting), said in the log before it
 * is made, with who asked it: the peer's pid and uid, and whether it came
 * as root or with the operator's secret (the page's changes: flowcut-web's
 * uid with the secret).  Never the secret; a value shown printable, cut
 * short.
 */
static void
said_change(const struct ucred *cr, const struct fd_ctl_req *r)
{
	char what[FD_CTL_KEY_MAX + 180];
	size_t o;

	if (r->op == FD_CTL_CUT_CONN) {
		snprintf(what, sizeof(what), "%s %" PRIu64, ops[r->op].word, r->id);
	} else if (r->op == FD_CTL_SETTINGS_SET) {
		o = (size_t)snprintf(what, sizeof(what), "%s %s = ", ops[r->op].word, r->key);
		for (size_t i = 0; r->value[i] != '\0' && o + 4 < sizeof(what); i++)
			what[o++] = r->value[i] >= 0x20 && r->value[i] < 0x7f ? r->value[i] : ' ';
		what[o] = '\0';
	} else {
		snprintf(what, sizeof(what), "%s", ops[r->op].word);
	}
	fprintf(stderr, "flowcutd: control socket: pid %d uid %u (%s) asks: %s\n", (int)cr->pid,
		(unsigned int)cr->uid,
		cr->uid == 0 ? "root" : r->auth ? "with the operator's secret" : "no secret", what);
}

/*
 * A client's request, come whole (a SOCK_SEQPACKET message): answered,
 * never waiting on the peer.  false: nothing to read after all (an event
 * of a slot taken since by another client), the client kept.
 */
static bool
serve_one(struct fd_ctl *c, int s)
{
	char req[FC_CTL_MAX + 1], ans[FC_CTL_ANS_MAX], err[256];
	gid_t groups[FD_CTL_GROUPS], *more = NULL;
	struct fd_ctl_peer peer;
	struct fd_ctl_req r;
	enum fc_secret_verdict v;
	struct ucred cr;
	ssize_t n;
	int rc;

	n = recv(s, req, sizeof(req), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0) {
		if (n < 0)
			fprintf(stderr, "flowcutd: control socket: no request: %s\n", strerror(errno));
		return true;
	}
	rc = peer_of(s, &cr, groups, &peer, &more);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: control socket: the peer's credentials: %s\n",
			strerror(-rc));
		snprintf(ans, sizeof(ans), "error refused: your credentials could not be read (%s)\n",
			 strerror(-rc));
	} else if ((size_t)n > FC_CTL_MAX) {
		snprintf(ans, sizeof(ans), "error request longer than %d bytes\n", FC_CTL_MAX);
	} else if ((n < 5 || memcmp(req, "auth ", 5) != 0) &&
		   fd_ctl_allowed(&c->acc, &peer, FD_CTL_STATUS, FC_SECRET_NONE, err,
				  sizeof(err)) != 0) {
		/* may ask nothing, and sent no secret: its request is not even parsed */
		refused(c, &cr, err);
		snprintf(ans, sizeof(ans), "error refused: %s\n", err);
	} else if (fd_ctl_parse(req, (size_t)n, &r, err, sizeof(err)) != 0) {
		snprintf(ans, sizeof(ans), "error %s\n", err);
	} else if (fd_ctl_allowed(&c->acc, &peer, r.op, (v = secret_of(c, &r)), err,
				  sizeof(err)) != 0) {
		/* refused for its secret: a change's, or a read's that came with a wrong one */
		c->auth_refused += ops[r.op].secret || v == FC_SECRET_WRONG || v == FC_SECRET_REFUSED;
		refused(c, &cr, err);
		snprintf(ans, sizeof(ans), "error refused: %s\n", err);
	} else {
		explicit_bzero(r.secret, sizeof(r.secret));	/* checked: the handler needs none */
		if (!ops[r.op].reads)
			said_change(&cr, &r);
		c->h(c->arg, &r, ans, sizeof(ans));
	}
	explicit_bzero(&r, sizeof(r));
	explicit_bzero(req, sizeof(req));
	free(more);
	/* its send buffer holds the largest answer: whole at once, or the peer is gone */
	if (send(s, ans, strlen(ans), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fprintf(stderr, "flowcutd: control socket: answer not sent: %s\n", strerror(errno));
	return true;
}

void
fd_ctl_serve(struct fd_ctl *c)
{
	struct epoll_event ev[FD_CTL_EVENTS];
	uint64_t now = now_ms(), ticks;
	int n = epoll_wait(c->ep, ev, FD_CTL_EVENTS, 0);

	for (int k = 0; k < n; k++) {
		uint64_t tag = ev[k].data.u64;

		if (tag == TAG_LISTEN) {
			accept_all(c, now);
		} else if (tag == TAG_TIMER) {
			if (read(c->tfd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
				fprintf(stderr, "flowcutd: control socket: its timer: %s\n", strerror(errno));
		} else if (tag < FD_CTL_PENDING && c->pend[tag].deadline != 0 &&
			   serve_one(c, c->pend[tag].fd)) {
			pend_drop(c, (unsigned int)tag);
		}
	}
	/* silent past its deadline: let go, the loop never waits on it */
	for (unsigned int i = 0; i < FD_CTL_PENDING; i++)
		if (c->pend[i].deadline != 0 && c->pend[i].deadline <= now) {
			pend_drop(c, i);
			c->let_go++;
		}
	timer_arm(c, now);
}
