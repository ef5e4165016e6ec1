/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctl: flowcutd's control socket - the requests that need flowcutd
 * itself (cut-conn, status, resync, why, why-conn, triggers, counters,
 * conns, cuts, settings, settings-set).  The protocol is
 * include/flowcut/fc_ctl.h and docs/commands.md; the caller's handler
 * (flowcutd.c) answers each allowed request.
 *
 * A unix SEQPACKET socket (default FC_CTL_PATH), one request and one
 * answer.  The peer's credentials decide (SO_PEERCRED, SO_PEERGROUPS):
 * root may ask everything; the read group (control_read_group) what only
 * reads; settings-set and cut-conn also any peer whose message starts
 * with `auth SECRET`, the secret file's (fc_secret.h); resync root alone.
 * A read that carries a wrong secret is refused.  A refusal is answered
 * "error refused: ...", counted, and logged once per uid (the first
 * FD_CTL_LOGGED_UIDS uids).
 *
 * The folder (the path's dirname) must be a directory, not a symlink,
 * owned by root and writable by neither group nor others, or fd_ctl_open
 * refuses it; a missing one is made 0700 root:root (0750 root:GROUP with
 * a read group) and removed at close.  The socket is 0600 root:root (0660
 * root:GROUP); what is at the path is replaced only if it is a socket.
 *
 * Main thread only.  The loop polls fd_ctl_fd(); fd_ctl_serve() never
 * waits on a peer: at most 64 clients wait, one silent 200 ms is let go,
 * each answer is sent whole (FC_CTL_ANS_MAX at most).  fd_ctl_close(NULL)
 * does nothing; it removes the socket's path (and the folder, if fd_ctl
 * made it).  fd_ctl_parse and fd_ctl_allowed are pure.
 *
 * Design notes: driver/control/README.md.
 */
#ifndef FLOWCUT_FD_CTL_H
#define FLOWCUT_FD_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <flowcut/fc_ctl.h>

#include "fc_secret.h"

#define FD_CTL_LOGGED_UIDS 32	/* refused uids logged, one line each */

enum fd_ctl_op {
	FD_CTL_CUT_CONN,	/* a change: root, or the operator's secret */
	FD_CTL_STATUS,		/* reads only: root or the read group */
	FD_CTL_RESYNC,		/* a change: root only (the secret does not open it) */
	FD_CTL_WHY,		/* `why ADDR`: reads only */
	FD_CTL_WHY_CONN,	/* `why-conn ID`: reads only */
	FD_CTL_TRIGGERS,	/* `triggers`, each source's figures: reads only */
	FD_CTL_COUNTERS,	/* `counters`: reads only */
	FD_CTL_CONNS,		/* `conns FROM N [filters]`: reads only */
	FD_CTL_CUTS,		/* `cuts [N]`: reads only */
	FD_CTL_SETTINGS,	/* `settings`: reads only */
	FD_CTL_SETTINGS_SET,	/* `settings-set KEY ...`: a change: root, or the secret */
};

#define FD_CTL_PAGE_MAX 100	/* conns' N, cuts' N: at most */
#define FD_CTL_CUTS_DEFAULT 50	/* cuts' N when not given */
#define FD_CTL_KEY_MAX 32	/* settings-set's KEY, its NUL included */
#define FD_CTL_SECRET_MAX 128	/* an auth line's SECRET, bytes (longer: refused unread) */
#define FD_CTL_WORD_MAX 16	/* conns' state= and action=, their NUL included */

struct fd_ctl_req {
	enum fd_ctl_op op;
	uint64_t id;		/* FD_CTL_CUT_CONN's, FD_CTL_WHY_CONN's, FD_CTL_CONNS' FROM */
	uint8_t family;		/* FD_CTL_WHY's address, FD_CTL_CONNS' addr=: 4 or 6 (else 0) */
	uint8_t addr[16];	/* ... network order, 4 or 16 bytes */
	uint8_t plen;		/* FD_CTL_CONNS' addr=: its prefix (32 or 128: an address) */
	int32_t port;		/* FD_CTL_CONNS' port=: 0-65535, -1 none */
	char state[FD_CTL_WORD_MAX];	/* FD_CTL_CONNS' state= ("" none) */
	char action[FD_CTL_WORD_MAX];	/* FD_CTL_CONNS' action= ("" none) */
	unsigned int n;		/* FD_CTL_CONNS' N, FD_CTL_CUTS' N: 1 to FD_CTL_PAGE_MAX */
	bool auth;		/* an `auth SECRET` line came first */
	size_t secret_len;
	char secret[FD_CTL_SECRET_MAX];	/* ... its SECRET (not NUL-terminated) */
	char key[FD_CTL_KEY_MAX];	/* FD_CTL_SETTINGS_SET's KEY */
	bool lines;		/* ... the list form: value holds 0 or more lines */
	char value[FC_CTL_MAX];	/* ... its VALUE, or its lines joined by '\n' (NUL-terminated) */
};

/*
 * fd_ctl_parse - one request message (pure: the fuzz target's).  0, or
 * -EINVAL with what was wrong in err.
 */
int fd_ctl_parse(const char *buf, size_t len, struct fd_ctl_req *out, char *err, size_t errlen);

/* Who may ask what only reads, besides root; what lets others change. */
struct fd_ctl_access {
	bool read_group;	/* false: root only */
	gid_t gid;
	char name[64];		/* the group's name, for the answers and the log */
	const char *secret_path;	/* the secret file (fc_secret.h); NULL: none accepted */
};

/* A peer as the kernel vouches for it (SO_PEERCRED, SO_PEERGROUPS). */
struct fd_ctl_peer {
	uid_t uid;
	gid_t gid;		/* its effective gid */
	size_t ngroups;
	const gid_t *groups;	/* its supplementary groups */
};

/*
 * fd_ctl_allowed - may this peer ask `op`, its request's secret found to
 * be `v`?  Pure.  Root: always; a read: the read group; settings-set
 * and cut-conn: the secret RIGHT; resync: nobody else.  0, or -EACCES with why in `why` ("uid 65534 is not root
 * and not in group NAME", "uid 65534: the secret is wrong (...)", ...).
 */
int fd_ctl_allowed(const struct fd_ctl_access *a, const struct fd_ctl_peer *p,
		   enum fd_ctl_op op, enum fc_secret_verdict v, char *why, size_t len);
/* fd_ctl_op_reads - whether `op` only reads (else: a change). */
bool fd_ctl_op_reads(enum fd_ctl_op op);

/* Answers an allowed request: writes "ok ..." or "error ..." into ans (cap bytes). */
typedef void fd_ctl_handler_fn(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap);

struct fd_ctl;

/*
 * fd_ctl_open - listen on `path`, access as `a` says (its folder checked
 * or made, a stale socket replaced; see above).  NULL and errno (EPERM: a
 * folder not root's or writable by others, or a path that is not a
 * socket), said on stderr with the path.
 */
struct fd_ctl *fd_ctl_open(const char *path, const struct fd_ctl_access *a,
			   fd_ctl_handler_fn *h, void *arg);
/*
 * fd_ctl_access - who may read from now on (the settings changed): the
 * socket's group and mode, and its folder's if fd_ctl made it, follow.
 * 0, or -errno (said) with the new access in force all the same.
 */
int fd_ctl_access(struct fd_ctl *c, const struct fd_ctl_access *a);
void fd_ctl_close(struct fd_ctl *c);
int fd_ctl_fd(const struct fd_ctl *c);
/* fd_ctl_serve - what is ready served: new clients accepted, requests answered, the silent let go. */
void fd_ctl_serve(struct fd_ctl *c);
/* fd_ctl_refused - requests refused for the peer's credentials, so far. */
uint64_t fd_ctl_refused(const struct fd_ctl *c);
/* fd_ctl_let_go - clients let go unanswered: silent past 200 ms, or over the 64 waiting. */
uint64_t fd_ctl_let_go(const struct fd_ctl *c);
/* fd_ctl_auth_refused - of them, changes refused for their secret (missing, wrong, none accepted). */
uint64_t fd_ctl_auth_refused(const struct fd_ctl *c);

#endif
