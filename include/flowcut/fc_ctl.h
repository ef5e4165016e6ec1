/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd's control socket, as flowcutd (driver/fd_ctl) and flowcutctl
 * both speak it: a unix SOCK_SEQPACKET socket, one request per
 * connection, one message each way, text:
 *
 *   request  "cut-conn ID\n"           ID decimal, a fast-path connection id
 *   answer   "ok TEXT\n" or "error TEXT\n"
 */
#ifndef FLOWCUT_FC_CTL_H
#define FLOWCUT_FC_CTL_H

#define FC_CTL_PATH "/run/flowcut/flowcutd.sock"
#define FC_CTL_MAX 256		/* a request or an answer, bytes */

#endif
