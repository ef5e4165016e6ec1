/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctl: flowcutd's control socket - requests that need flowcutd itself:
 * cut a fast-path connection by its id (`cut-conn ID`, `flowcutctl cut
 * --conn ID`), flowcutd's own state (`status`, `flowcutctl daemon`), and
 * a resync started by hand (`resync`, `flowcutctl resync`: root only).
 *
 * A unix socket (include/flowcut/fc_ctl.h: the protocol; default
 * FC_CTL_PATH).  Who may ask what is decided by the peer's credentials
 * (SO_PEERCRED, SO_PEERGROUPS, read when the request comes), not by the
 * path alone: root (uid 0) may ask everything; the members of the read
 * group (settings: control_read_group), by their primary or a
 * supplementary group, may ask what only reads (status).  Anyone else is
 * answered "error refused: uid U is not root ..." and nothing changes;
 * each refused uid is logged once (the first FD_CTL_LOGGED_UIDS uids, then
 * one line saying no more are), so a loop of connects floods no log.
 *
 * The socket file and its folder, so a read group can reach it and no one
 * else can swap it:
 *   - the folder (the path's dirname) must be a directory (not a symlink)
 *     owned by root and writable by neither group nor others, or
 *     fd_ctl_open() refuses it; a missing folder is made, 0700 root:root,
 *     or 0750 root:GROUP with a read group, and flowcutd keeps that mode
 *     and group on it (fd_ctl_access) and removes it at close.  A folder
 *     0700 or 0750 holding nothing but a socket by the path's name (a
 *     flowcutd before's, left by a crash) is taken as made.  Any other
 *     folder (the lab's, /run) is left as it is; with a read group that
 *     cannot search it, fd_ctl_open says so.
 *   - the socket: 0600 root:root, or 0660 root:GROUP with a read group;
 *     what is at the path is replaced only if it is a socket (a stale
 *     one: one flowcutd per path).
 *
 * Why a socket and not a command file or an nftables set: the request has
 * an answer (no such connection, cut already, in hardware or not) that
 * the operator must see, and a message boundary (SEQPACKET) makes the
 * request whole or absent, with no partial file to read.  An nftables set
 * of connection ids cannot be: the ids are the coprocessor's, not a
 * packet's.
 *
 * The main loop polls fd_ctl_fd() (an epoll of the listening socket,
 * the clients accepted and a timer); fd_ctl_serve() never waits on a
 * peer: it accepts who connects (non-blocking; at most 64 waiting for
 * their request, the oldest let go past that), and for each client whose
 * request came, reads its credentials and its request, parses it,
 * decides whether the peer may ask it, hands it to the handler and sends
 * its answer whole at once (its send buffer holds the largest); a client
 * silent 200 ms after it connected is let go.  Main thread only.
 *
 * `why ADDR` (an IPv4 or IPv6 address, inet_pton's forms only: no
 * prefix, no name), `why-conn ID` and `triggers` only read (root or the
 * read group): which trigger cuts an address or a connection, and each
 * watched set's and list's figures (driver/cut/fd_why.h); flowcutd.c
 * answers them.  Their answers may be long (a source a line, 320 at
 * most): FC_CTL_ANS_MAX.
 *
 * `resync` (fd_offload_resync, what lost events start; for issue 16's
 * measurement of a resync at a million, lab/scale.sh) is a change: it
 * takes connections out of the fast path and offloads them again, so it
 * is root's.  The resync is a job spread over the loop's turns
 * (fd_offload_sync.c), so its handler starts it and answers at once with
 * the run's number (flowcutd.c); `status` says `resyncs`, `resyncing` and
 * the last run's `resync_last_ms`, and `flowcutctl resync --wait` asks it
 * until that run is through.  Chosen over a deferred answer (the loop
 * never holds a client) and over polling flowcutd.json (written once a
 * second, and it says nothing of which run is through).
 * fd_ctl_close(NULL) does nothing; it removes
 * the socket's path (and the folder, if fd_ctl made it).
 *
 * Issue 18, the page's requests (the lead's protocol, fc_ctl.h):
 * `counters`, `conns FROM N [addr=A] [port=P] [state=S] [action=A]`,
 * `cuts [N]` and `settings` read (root or the read group); `settings-set
 * KEY VALUE` (or `settings-set KEY` and one line per value, a repeatable
 * key set whole) is a change.  The page's two changes, `settings-set` and
 * `cut-conn`, are root's, or any peer's whose message starts with the
 * line `auth SECRET` where SECRET is the secret file's (fc_secret.h; the
 * access's secret_path); every other change (`resync`: the page never
 * sends it) is root's alone, whatever secret comes.  A read that
 * carries an `auth` line (the page asks for an operator who gave it the
 * secret) is refused unless the secret is right, whatever the peer's
 * group: the page serves a read on it.  fd_ctl_allowed stays
 * pure: the secret's verdict (fc_secret_check's, made by fd_ctl_serve
 * only when an `auth` line came) is its input.  A peer that may not read
 * is still refused unparsed unless its message starts with `auth `: the
 * parser is pure and fuzzed, the secret's read is 65 bytes.  A change
 * refused for its secret (missing, wrong, or no secret accepted) is
 * counted (fd_ctl_auth_refused: flowcutd.json's ctl_auth_refused) and
 * logged once per uid as every refusal is; a secret file refused is said
 * on stderr once for each different reason.
 *
 * settings-set's form is told by the line: `KEY VALUE` (one line) or
 * `KEY` alone then lines; the parser does not know which keys repeat
 * (driver/control uses no settings/), so it hands both forms on (lines
 * true or false) and flowcutd.c's handler refuses the list form for a
 * key that takes one value.  Chosen so the room keeps its arrow (nothing
 * but include/flowcut/).
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
