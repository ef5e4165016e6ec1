/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctl: flowcutd's control socket - requests that need flowcutd itself
 * (today one: cut a fast-path connection by its id, `flowcutctl cut
 * --conn ID`).
 *
 * A unix socket (include/flowcut/fc_ctl.h: the protocol; default
 * FC_CTL_PATH, mode 0600: root's only).
 *
 * Why a socket and not a command file or an nftables set: the request has
 * an answer (no such connection, cut already, in hardware or not) that
 * the operator must see, and a message boundary (SEQPACKET) makes the
 * request whole or absent, with no partial file to read.  An nftables set
 * of connection ids cannot be: the ids are the coprocessor's, not a
 * packet's.
 *
 * The main loop polls fd_ctl_fd(); fd_ctl_serve() accepts one client,
 * reads its request with a deadline (a client that sends nothing does not
 * stall flowcutd), parses it, hands it to the handler and sends its
 * answer.  Main thread only.  fd_ctl_close(NULL) does nothing; it removes
 * the socket's path.
 */
#ifndef FLOWCUT_FD_CTL_H
#define FLOWCUT_FD_CTL_H

#include <stddef.h>
#include <stdint.h>

#include <flowcut/fc_ctl.h>

enum fd_ctl_op {
	FD_CTL_CUT_CONN,
};

struct fd_ctl_req {
	enum fd_ctl_op op;
	uint64_t id;
};

/*
 * fd_ctl_parse - one request message (pure: the fuzz target's).  0, or
 * -EINVAL with what was wrong in err.
 */
int fd_ctl_parse(const char *buf, size_t len, struct fd_ctl_req *out, char *err, size_t errlen);

/* Answers a request: writes "ok ..." or "error ..." into ans (cap bytes). */
typedef void fd_ctl_handler_fn(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap);

struct fd_ctl;

/* fd_ctl_open - listen on `path` (its folder made, a stale socket replaced).  NULL, errno. */
struct fd_ctl *fd_ctl_open(const char *path, fd_ctl_handler_fn *h, void *arg);
void fd_ctl_close(struct fd_ctl *c);
int fd_ctl_fd(const struct fd_ctl *c);
/* fd_ctl_serve - one waiting client served (none: nothing done). */
void fd_ctl_serve(struct fd_ctl *c);

#endif
