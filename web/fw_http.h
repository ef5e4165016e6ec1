/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_http - flowcut-web's HTTP server on libmicrohttpd: one MHD daemon per
 * --listen address, each a pool of FW_HTTP_THREADS threads with its
 * limits (FW_HTTP_*), the routes, and the answers.
 *
 *   GET  /health                      open: "ok", 503 flowcutd not answering
 *   GET  /  /conns  /cuts  /settings  the pages (fw_html)
 *   GET  /metrics                     Prometheus (fw_metrics)
 *   GET  /api/status /api/counters /api/conns /api/cuts /api/settings   JSON
 *   POST /conns/cut /settings         changes (fw_auth)
 *
 * Every path but /health asks for HTTP Basic authentication: its password
 * the read credential (read_secret's file, judged here each request by
 * fc_secret_check_reader) or the operator's secret (sent to flowcutd as
 * `auth SECRET`).  A read asks flowcutd at most once (fw_ctl; / and
 * /metrics on the read credential ask nothing: fw_sample); a change at
 * most twice, the change and its page read again (a refused value is
 * 400, its reason beside its field).
 *
 * Refused: 503 (Retry-After: 1) no room (fw_guard; unguarded, past
 * FW_HTTP_BUSY); 429 (Retry-After: 1) reads of flowcutd past the client's
 * rate; 404 a path; 405 (Allow) a method; 400 a malformed query or form;
 * 413 a body past FW_FORM_BODY_MAX; 415 a POST not urlencoded; 421 a Host
 * not a --listen address; 403 a change with a bad CSRF token or another
 * origin; 401 (WWW-Authenticate: Basic) no credential, or one refused;
 * 502 flowcutd did not answer.
 *
 * Threads: fw_http_start from one thread; the routes on MHD's (they share
 * nothing writable but fw_ctl's turn); fw_http_stop stops and frees all
 * it made.  Design notes (the pool, the limits): web/README.md.
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
