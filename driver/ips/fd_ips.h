/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ips: the inspector's place in flowcutd - what binds fd_inspect (pure:
 * frames in, frames out, decisions queued) to the rest:
 *
 *  - the relay's hook: every frame up goes through fd_inspect first (in
 *    the relay's "up" thread), which hands frames on with
 *    fd_relay_to_host; the relay's ticks carry its deadlines;
 *  - the offload's verdict hook: a connection to a TLS port is made
 *    CUT_THRU at once when it was passed already, else SEND_TO_IPS (with
 *    Cut in hardware off, FWD, it is not offloaded until passed);
 *  - the settings: `watched_fingerprints` loaded and followed (a file
 *    that cannot be read keeps the last good fingerprints), `tls_ports`
 *    to the inspector and to the offload policy;
 *  - the decisions, carried out on the main thread: a pass sets an
 *    offloaded connection's verdict CUT_THRU, or offloads one not
 *    offloaded yet (fd_offload_try); a cut is logged and made with
 *    fd_cut_conn (trigger "tls") once the connection is in the binding;
 *    one never offloaded within 2 s, or any with Cut in hardware off, is
 *    cut as a state (fd_cut_state), counted `cut_not_offloaded`.
 *
 * fd_ips_open, then fd_ips_relay_hook (for fd_relay_start) and
 * fd_ips_offload_cfg (before fd_offload_open), then fd_ips_bind.  All but
 * the hooks from the main thread.  fd_ips_close(NULL) does nothing; close
 * it after the relay has stopped.
 *
 * Design notes: driver/ips/README.md.
 */
#ifndef FLOWCUT_FD_IPS_H
#define FLOWCUT_FD_IPS_H

#include <jansson.h>

#include "fc_settings.h"
#include "fd_cut.h"
#include "fd_offload.h"
#include "fd_relay.h"

struct fd_ips;

/* fd_ips_open - the inspector, reading nothing until fd_ips_settings.  NULL, errno. */
struct fd_ips *fd_ips_open(void);
void fd_ips_close(struct fd_ips *x);

/*
 * fd_ips_parser - the parser, flowcut-inspect, asked over its socket at
 * path (connected now and whenever it is lost); its answers' frames go
 * on through relay.  Until it answers, connections to read follow
 * inspect_undecided (parser_down).  0, or a negative errno.
 */
int fd_ips_parser(struct fd_ips *x, const char *path, struct fd_relay *relay);
/* fd_ips_parser_stop - no more answers (before the relay stops): every question refused. */
void fd_ips_parser_stop(struct fd_ips *x);

/*
 * fd_ips_wake_with - `wake(arg)` is called from the relay's thread when
 * the inspector has decided something, so a main loop asleep carries it
 * out at once (flowcutd: fd_bell_ring).  Before fd_relay_start.
 */
void fd_ips_wake_with(struct fd_ips *x, void (*wake)(void *), void *arg);
/* fd_ips_waiting - cuts wait for an offload (fd_ips_turn retries them each turn). */
bool fd_ips_waiting(const struct fd_ips *x);

/* fd_ips_relay_hook - the hook for fd_relay_start (valid while x lives). */
const struct fd_relay_hook *fd_ips_relay_hook(struct fd_ips *x);
/* fd_ips_offload_cfg - sets cfg's inspect_verdict and inspect_arg. */
void fd_ips_offload_cfg(struct fd_ips *x, struct fd_offload_cfg *cfg);
/*
 * fd_ips_bind - the binding, its conntrack and commands (copied; the
 * binding's own, which must outlive x) and the cut the decisions are
 * carried out with.
 */
void fd_ips_bind(struct fd_ips *x, struct fd_offload *off, const struct fd_ct_io *ct,
		 const struct fd_cmds *cmds, struct fd_cut *cut);

/*
 * fd_ips_settings - watched_fingerprints, tls_ports and Cut in hardware as
 * in `s` (a change: the file read again).
 */
void fd_ips_settings(struct fd_ips *x, const struct fc_settings *s);

/*
 * fd_ips_turn - each main-loop turn (woken by fd_ips_wake_with's call, and
 * every 5 ms while fd_ips_waiting): the decisions
 * carried out, the cuts waiting for an offload, the file's changes (its
 * inotify descriptor read, non-blocking).
 */
void fd_ips_turn(struct fd_ips *x);

/* fd_ips_stats_json - the inspector's counters and the file's state, a new object (NULL: no memory). */
json_t *fd_ips_stats_json(struct fd_ips *x);

#endif
