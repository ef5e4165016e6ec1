/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd's control socket, as flowcutd (driver/control/fd_ctl) and flowcutctl
 * both speak it: a unix SOCK_SEQPACKET socket, one request per
 * connection, one message each way, text:
 *
 *   request  "cut-conn ID\n"           ID decimal, a fast-path connection id
 *                                      (a change: root only)
 *            "status\n"                flowcutd's own state (reads only: root,
 *                                      or a member of control_read_group)
 *            "resync\n"                a resync (fd_offload_resync) started (a
 *                                      change: root only); answered at once
 *                                      with its number, {"resync":N}: it is
 *                                      through once status's resyncs is past
 *                                      N, or N and resyncing false
 *            "why ADDR\n", "why-conn ID\n", "triggers\n"
 *                                      which trigger cuts an address or a
 *                                      connection, each source's figures
 *                                      (reads only; driver/cut/fd_explain.h)
 *            issue 18, the page's (flowcut-web's), reads:
 *            "counters\n"              every figure by name, one JSON object
 *            "conns FROM N [addr=ADDR[/LEN]] [port=P] [state=S] [action=A]\n"
 *                                      a page of N (1-100) connections from id FROM
 *            "cuts [N]\n"              the N (1-100, 50) newest cuts
 *            "settings\n"              every key: value, default, kind, help
 *            and a change:
 *            "settings-set KEY VALUE\n", or "settings-set KEY\nLINE\n..." (a
 *                                      repeatable key set whole; no line: cleared)
 *            a change from a peer not root: its message starts with the line
 *            "auth SECRET\n" (FC_WEB_SECRET_PATH's 64 hex digits), the
 *            request after it in the same message; a read may carry it
 *            too (the page's, for an operator it asks on behalf of): a
 *            wrong one is refused whoever asks, as a change's would be
 *   answer   "ok TEXT\n" or "error TEXT\n"; status's, why's, triggers' and
 *            the page's TEXT is one JSON object;
 *            a peer without the right: "error refused: uid U is not root ..."
 */
#ifndef FLOWCUT_FC_CTL_H
#define FLOWCUT_FC_CTL_H

/*
 * In a folder of its own, not in /run/flowcut: that one is root's alone
 * (0700), and a read group must be able to reach the socket.
 */
#define FC_CTL_PATH "/run/flowcut-ctl/flowcutd.sock"
#define FC_CTL_MAX 4096	/* a request, bytes: a settings-set of a list (issue 18) */
/* The operator's secret: a change from a peer not root (fc_secret.h, issue 18) */
#define FC_WEB_SECRET_PATH "/etc/flowcut/web.secret"
/*
 * The page's read credential: what opens flowcut-web's reads and /metrics
 * without the operator's secret (fc_secret_check_reader; flowcut-web
 * judges it, flowcutd never sees it)
 */
#define FC_READ_SECRET_PATH "/etc/flowcut/read.secret"
#define FC_CTL_ANS_MAX 65536	/* an answer, bytes: triggers, a source a line (320 at most), in one message */

#endif
