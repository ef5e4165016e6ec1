/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd.h: what flowcutd's three files share, private to them: its
 * options, struct flowcutd (everything it opened and keeps: one, main's),
 * and the calls between them.  flowcutd.c opens (in named steps), turns
 * and closes, and calls down into flowcutd_coproc.c (the coprocessor: its
 * ports and configuration word programmed, the lease, its events) and
 * flowcutd_settings.c (the settings followed, the control socket's
 * changes, the never-cut list applied); those two call no flowcutd.c
 * function and not each other.  Main thread only.
 */
#ifndef FLOWCUT_FLOWCUTD_H
#define FLOWCUT_FLOWCUTD_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include <flowcut/fc_cmd.h>

#include "fc_settings.h"
#include "fd_clock.h"
#include "fd_cmdq.h"
#include "fd_cmds.h"
#include "fd_ct.h"
#include "fd_ctl.h"
#include "fd_ctstat.h"
#include "fd_cut.h"
#include "fd_dirwatch.h"
#include "fd_frames.h"
#include "fd_hist.h"
#include "fd_ips.h"
#include "fd_lease.h"
#include "fd_nft.h"
#include "fd_nhop.h"
#include "fd_offload.h"
#include "fd_relay.h"
#include "fd_report.h"
#include "fd_route.h"
#include "fd_rtcache.h"
#include "fd_rulecheck.h"
#include "fd_tap.h"
#include "fd_trigger.h"
#include "fd_watch.h"
#include "fd_why.h"
#include "fd_bell.h"
#include "fc_settings_keys.h"
#include "fc_secret.h"
#include "lk.h"

#include <sys/epoll.h>
#include <sys/prctl.h>

#define CT_MARK_BIT 0x40000000u	/* set by fd_nft on what the rules let through */
#define FD_EVENTS_PER_TURN 256	/* coprocessor events read in one turn */
#define FD_EVENT_POLL_MS 5	/* a wait while the inspector's cuts wait for an offload */
#define FD_IDLE_MS 100		/* the longest wait: the lease, the timers, the stats */

struct opts {
	const char *link;
	const char *tap;
	const char *stats;
	const char *settings;
	const char *control;
	const char *secret;	/* the operator's secret file (fc_secret.h) */
	const char *inspector;	/* flowcut-inspect's socket */
	unsigned int ports;
	unsigned int lease_ms;
};


/* flowcutd: everything it opened and keeps, one (main's) */
struct flowcutd {
	struct opts o;
	int watch;			/* the settings file's folder, or -1: not followed */
	struct fd_offload_cfg ocfg;
	/* the binding's parts, opened here and handed in (fd_offload.h) */
	struct fd_ct *ct;
	struct fd_ct_io ctio;
	struct fd_route *route;
	struct fd_route_io rtio;
	struct fd_nhop *nhops;
	struct fd_offload *off;
	struct fd_cut *cut;
	struct fd_watch *wat;
	struct fd_ctl *ctl;
	struct fd_ctl_access acc;
	struct fd_report report;	/* what flowcutd answers and publishes reads (fd_report.h) */
	struct fd_cmds cmds;
	struct fd_cmdq *cmdq;
	enum fd_cmdq_state down;	/* set by on_down, acted on by the loop */
	struct fd_nft *nft;
	struct fd_route_watch *rtw;
	int epfd;
	int taps[FC_MAX_PORTS];
	struct fd_relay *relay;
	struct fd_bell *bell;
	struct lk *lk;
	bool programmed, judged;	/* judged: once, after the first programming */
	bool busy;			/* a job outside the binding has work left (fd_watch_work) */
	bool never_set;			/* never_cut applied once (never_apply) */
	uint64_t programmed_boot;	/* the boot whose tables we filled */
	time_t last_stats;
	struct fd_hist turns;		/* this second's turns (main_stats' turn_*) */
	/* flowcutd's own state */
	struct fc_settings cur;		/* the settings in force */
	char settings_error[512];	/* why the file was last refused, or "" */
	struct fd_dirwatch *settings_dw;	/* its folder's watch, or NULL */
	uint64_t never_wide;		/* never-cut ranges in force wider than the default bounds */
	const char *secret_path;	/* --secret: the operator's secret file */
	struct fd_ips *ips;		/* the inspector */
	struct fd_rulecheck *rck;	/* what offloaded connections bypass in the ruleset */
	struct fd_rtcache *rtc;		/* the routes and neighbours the binding asks, remembered */
	struct fd_why *whys;		/* what each cut keeps for why, each source's figures */
	struct fd_frames *frames;	/* the cut connections' frames read into whys */
	struct fd_main_stats mst;	/* main's own counters (fd_report.h: FD_MAIN_STATS) */
	struct fd_lease lease;		/* on the coprocessor: renewed while the loop turns */
	/*
	 * The configuration word as the coprocessor last took it (gate_set: the
	 * FW_CFG_PARAMS_SET answered 0, on what FW_CFG_PARAMS_GET read): counters'
	 * gate and ips_switch.  Not known (no set answered yet): left out.
	 */
	bool fw_cfg_known;
	uint32_t fw_cfg_last;
};

/* flowcutd_coproc.c: the coprocessor */
void coproc_port_mac(unsigned int port, uint8_t mac[6]);
/*
 * coproc_gate_set - fw_cfg as the settings say, the gate open only with
 * `open` and the settings' offload on; the value set in *set_out.  0, or
 * the command's error (said).
 */
int coproc_gate_set(struct flowcutd *d, bool open, uint32_t *set_out);
/*
 * coproc_lease_and_program - the coprocessor programmed once it answers,
 * the lease held first, or the lease renewed: false when the turn must end
 * here (the lease not taken: said, tried again after 100 ms).
 */
bool coproc_lease_and_program(struct flowcutd *d);
/*
 * coproc_events - a bounded batch of the coprocessor's events
 * (FD_EVENTS_PER_TURN): false when the turn must end here (the link reset:
 * resynced).
 */
bool coproc_events(struct flowcutd *d);

/* flowcutd_settings.c: the settings, the control socket's changes */
void ctl_on_request(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap);
struct fd_ctl_access ctl_access(const struct flowcutd *d, const struct fc_settings *s);
bool settings_load(struct flowcutd *d, const char *path);
int settings_watch(struct flowcutd *d, const char *path);
bool settings_touched(struct flowcutd *d);
void never_apply(struct flowcutd *d);

#endif
