/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd's control socket, as flowcutd (driver/control/fd_ctl),
 * flowcutctl and flowcut-web speak it: a unix SOCK_SEQPACKET socket, one
 * request per connection, one message each way, text.  Each request's
 * answer in full, and who may ask: docs/commands.md.
 *
 *   request  "cut-conn ID\n"           ID decimal, a fast-path connection id
 *            "status\n"                flowcutd's own state
 *            "resync\n"                a resync started: {"resync":N} at once
 *            "why ADDR\n", "why-conn ID\n", "triggers\n"
 *                                      which trigger cuts an address or a
 *                                      connection, each source's figures
 *            "counters\n"              every figure by name, one JSON object
 *            "conns FROM N [addr=ADDR[/LEN]] [port=P] [state=S] [action=A]\n"
 *                                      N (1-100) connections from id FROM
 *            "cuts [N]\n"              the N (1-100, 50) newest cuts
 *            "settings\n"              every key: value, default, kind, help
 *            "settings-set KEY VALUE\n", "settings-set KEY\nLINE\n..."
 *                                      (a repeatable key set whole; no
 *                                      line: cleared)
 *   prefix   "auth SECRET\n"           FC_WEB_SECRET_PATH's 64 hex digits,
 *                                      the request after it, one message
 *   answer   "ok TEXT\n" or "error TEXT\n"; status's, why's, triggers' and
 *            the page's TEXT is one JSON object; a peer without the
 *            right: "error refused: uid U is not root ..."
 *
 * Who may: the changes (cut-conn, settings-set) root, or a peer whose
 * message carries the secret; resync root alone; the others, reads, root
 * or a member of control_read_group.  A read may carry the secret too
 * (the page's, for its operator): a wrong one is refused whoever asks.
 */
#ifndef FLOWCUT_FC_CTL_H
#define FLOWCUT_FC_CTL_H

/*
 * In a folder of its own, not in /run/flowcut: that one is root's alone
 * (0700), and a read group must be able to reach the socket.
 */
#define FC_CTL_PATH "/run/flowcut-ctl/flowcutd.sock"
#define FC_CTL_MAX 4096	/* a request, bytes: a settings-set of a list */
/* The operator's secret: a change from a peer not root (fc_secret.h) */
#define FC_WEB_SECRET_PATH "/etc/flowcut/web.secret"
/*
 * The page's read credential: what opens flowcut-web's reads and /metrics
 * without the operator's secret (fc_secret_check_reader; flowcut-web
 * judges it, flowcutd never sees it)
 */
#define FC_READ_SECRET_PATH "/etc/flowcut/read.secret"
#define FC_CTL_ANS_MAX 65536	/* an answer, bytes: triggers, a source a line (320 at most), in one message */

#endif
