/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_http - flowcut-web's HTTP server on libmicrohttpd: one MHD daemon per
 * --listen address, each with a pool of FW_HTTP_THREADS polling threads
 * and its limits (FW_HTTP_* below: connections in all and per address, an
 * idle timeout for slow clients, each connection's memory; a POST body
 * past FW_FORM_BODY_MAX is 413), the routes, and the answers: 503 (with
 * Retry-After: 1, flowcutd not asked) for a request fw_guard made no room
 * for (or, unguarded, while more than FW_HTTP_BUSY connections are open),
 * 429 (Retry-After: 1) for a read that asks flowcutd past its client's
 * rate (fw_guard), 404 for an
 * unknown path, 405 (with Allow) for a wrong method, 400 for a malformed
 * query or form (what was wrong in the body), 413, 415 for a POST that is
 * not application/x-www-form-urlencoded, 421 for a Host not one of the
 * --listen addresses (DNS rebinding), 403 for a change with a bad CSRF
 * token or without this origin in Origin/Referer, 401 (WWW-Authenticate:
 * Basic) for a read or a change without its credential or with one
 * refused, 502 when flowcutd did not answer.
 *
 *   GET  /health                                   "ok", or 503: flowcutd not answering (open)
 *   GET  /  /conns  /cuts  /settings              the pages (fw_html)
 *   GET  /metrics                                  Prometheus (fw_metrics)
 *   GET  /api/status /api/counters /api/conns /api/cuts /api/settings   JSON
 *   POST /conns/cut /settings                      changes (fw_auth)
 *
 * Reads need a right, as the control socket's do (flowcut-web is in
 * control_read_group; what it re-serves would otherwise be any local
 * user's): every path but /health asks for HTTP Basic authentication, its
 * password the read credential (read_secret's file, FC_READ_SECRET_PATH,
 * judged here by fc_secret_check_reader each request: a new one takes
 * effect at once; flowcutd never sees it) or the operator's secret (not
 * ours to read: it goes to flowcutd as `auth SECRET` with the read, or
 * with a `status` for a page drawn from the sampler, and a refusal is
 * 401).  Prometheus scrapes /metrics with the read credential, from a
 * file of its own (docs/web.md).
 *
 * A read asks flowcutd at most once (fw_ctl, bounded in time, one request
 * of the process at a time): / and /metrics ask nothing on the read
 * credential (the sampler's figures, fw_sample), the others one request
 * each.  A change asks twice:
 * the change, then its page read again, answered directly (200, or 400
 * for a refused value, its reason beside its field): no session keeps
 * what flowcutd said for a later GET, so there is no 303 (a reload
 * of the answer asks the browser to post again).
 * The raw request line is taken in MHD's URI log callback, so the query
 * goes through fw_form (MHD's own parse of it says nothing of what is
 * wrong).
 *
 * fw_http_start from one thread; the routes run on MHD's threads (they
 * share nothing writable but fw_ctl's turn); fw_http_stop stops and frees
 * everything it made.
 *
 * Why a thread pool and not a thread per connection: a thread per
 * connection gives a slow client (half a request, then silence) a thread
 * and its stack for FW_HTTP_TIMEOUT_S, so FW_HTTP_CONN_LIMIT of them are
 * that many threads; a pool of 4 polls every connection, a slow one costs
 * its memory alone (FW_HTTP_CONN_MEMORY at most), and one slow answer of
 * flowcutd (fw_ctl's bound) holds one thread of four, not the address.
 * Why a soft limit (FW_HTTP_BUSY) under the hard one: past MHD's
 * connection limits a connection is closed unanswered; below them a
 * flood is answered 503, which a client can read; and MHD splits its
 * connection limit among the pool's threads (each accepts for itself, so
 * one may be full while the others are not), so the hard limit is far
 * above the soft one (1,024: 256 a thread; a connection's memory is
 * FW_HTTP_CONN_MEMORY at most, touched as used).  The per-address limit
 * is the total's: on the default addresses (127.0.0.1, ::1) every client
 * is one address, so a lower one would close connections unanswered
 * while the total still has room.
 */
#ifndef FLOWCUT_FW_HTTP_H
#define FLOWCUT_FW_HTTP_H

#include <pthread.h>

#include "fw_sample.h"
#include "fw_auth.h"
#include "fw_guard.h"

#define FW_HTTP_LISTEN_MAX 8
#define FW_HTTP_THREADS 4		/* MHD_OPTION_THREAD_POOL_SIZE, each address */
#define FW_HTTP_CONN_LIMIT 1024		/* MHD_OPTION_CONNECTION_LIMIT, each address (see above) */
#define FW_HTTP_PER_IP_LIMIT 1024	/* MHD_OPTION_PER_IP_CONNECTION_LIMIT (see above) */
#define FW_HTTP_BUSY 128		/* connections open (all addresses) past which: 503 */
#define FW_HTTP_TIMEOUT_S 10		/* MHD_OPTION_CONNECTION_TIMEOUT: idle, slow clients */
#define FW_HTTP_CONN_MEMORY (64 * 1024)	/* MHD_OPTION_CONNECTION_MEMORY_LIMIT */

struct MHD_Daemon;

struct fw_http {
	const char *ctl_path;
	const char *read_secret;	/* the read credential's file */
	unsigned int read_said;		/* its file refused: said once (atomic) */
	struct fw_sample *sample;
	struct fw_auth auth;		/* the CSRF token, the Host values (read-only once started) */
	struct MHD_Daemon *d[FW_HTTP_LISTEN_MAX];
	unsigned int nd;
	unsigned int open;		/* connections open, all addresses (atomic) */
	struct fw_guard *guard;		/* who holds the connections (fw_guard.h) */
};

/*
 * fw_http_start - listen on each of addrs ("127.0.0.1:9842", "[::1]:9842");
 * with fds (not NULL), serve the listening sockets fds[0..n-1] made by
 * someone else (systemd's socket activation, the lab's keeper), each at
 * its addrs[i] (the Host check's).  0, or -EINVAL (an address not
 * ADDR:PORT, err says which) or -EADDRNOTAVAIL (MHD could not listen
 * there) with err naming it; then nothing is left listening.  read_secret:
 * the read credential's file (its path kept, not copied); reads_per_s:
 * a client's reads that ask flowcutd, a second (fw_guard).
 */
int fw_http_start(struct fw_http *h, const char *const *addrs, const int *fds, unsigned int n,
		  const char *ctl_path, const char *read_secret, unsigned int reads_per_s,
		  struct fw_sample *sample, char *err, size_t errlen);
void fw_http_stop(struct fw_http *h);

#endif
