/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_ctl - flowcut-web's client of flowcutd's control socket
 * (include/flowcut/fc_ctl.h, the page's requests: counters, conns,
 * cuts, settings, settings-set, cut-conn): one connection, one request,
 * one answer, each bounded in time (FW_CTL_TIMEOUT_MS on connect, send and
 * receive), so an HTTP request never waits on flowcutd longer than that.
 *
 * At most one request of the process in flight (a mutex around connect,
 * send and receive; the sampler's requests take it too): flowcutd answers
 * a request in its loop, and a `conns` may hold that loop for up to 32
 * coprocessor round trips, so 4 threads an address asking at once would
 * cost flowcutd that many; with the mutex the web never costs it more
 * than one request at a time.  A request waits for its turn at most
 * FW_CTL_TIMEOUT_MS (then -ETIMEDOUT, err saying so), so one HTTP request
 * waits at most twice that.
 *
 * A change carries the operator's secret: fw_ctl_ask's secret, when not
 * NULL, goes first as "auth SECRET\n", the request after it in the same
 * message (include/flowcut/fc_ctl.h).  The secret is the caller's; fw_ctl
 * keeps no copy (the message buffer is wiped before it is freed).
 *
 * Any thread; its state the one mutex.
 */
#ifndef FLOWCUT_FW_CTL_H
#define FLOWCUT_FW_CTL_H

#include <jansson.h>
#include <stddef.h>

#define FW_CTL_TIMEOUT_MS 2000
/*
 * a request's bytes: the protocol's FC_CTL_MAX (include/flowcut/fc_ctl.h),
 * 4096 so that a settings value can be long; this side holds the figure
 * itself.
 */
#define FW_CTL_REQ_MAX 4096

/*
 * fw_ctl_ask - send req (it ends in '\n') to the socket at path, read the
 * answer.  0 and *doc the answer's JSON ("ok JSON\n"; the caller
 * json_decref()s it); -EPROTO and err the answer's own text
 * ("error TEXT\n": flowcutd refused, its reason); -EMSGSIZE a request past
 * FW_CTL_REQ_MAX; -EBADMSG an answer neither (err says what came);
 * -ETIMEDOUT (flowcutd's answer, or the turn behind another request);
 * or a socket call's -errno, with err naming the call and path.
 */
int fw_ctl_ask(const char *path, const char *secret, const char *req, json_t **doc, char *err,
	       size_t errlen);

/*
 * fw_ctl_answer - one answer of n bytes from path (ans NUL-terminated;
 * its trailing newlines cut in place): "ok {...}" or "ok [...]" is 0 and
 * *doc its JSON; "ok TEXT" (not JSON: the answer of a request older than
 * the page's, cut-conn's "connection ID cut in hardware") is 0 and *doc a
 * JSON string of TEXT; "error TEXT" -EPROTO and err TEXT; anything else,
 * or JSON that does not parse, -EBADMSG and err what came.
 */
int fw_ctl_answer(const char *path, char *ans, size_t n, json_t **doc, char *err, size_t errlen);

#endif
