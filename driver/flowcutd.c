/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd: the host side of the appliance (part 4 of the architecture).
 *
 *   flowcutd [--link PATH] [--ports N] [--tap PREFIX] [--settings PATH]
 *            [--stats PATH] [--control PATH] [--secret PATH] [--lease MS]
 *
 * Now: it presents each front port to the host kernel as a persistent TAP
 * (PREFIX0, PREFIX1, ...) with the port's MAC (02:fc:00:00:00:<port+1>),
 * relays frames between those and the link both ways (fd_relay), and
 * programs the coprocessor - its ports (LIFs) and the configuration word
 * (the gate and the IPS switch from the settings, read-modify-write) - at
 * start and whenever the coprocessor boots.  The settings file
 * (fc_settings, docs/settings.md) is applied at start, at every boot, and
 * whenever it is saved (inotify); one that does not parse is refused with
 * its line and reason, and the last good settings stay in force.  Per
 * port it counts the frames the host takes in: the seed's "frames to the
 * host" (written to --stats as JSON once a second).  It binds conntrack's states to the fast path's connections
 * (fd_offload), marks what the host's rules accept (fd_nft), and when the
 * ruleset changes has every connection judged again.  It cuts (fd_cut):
 * what an element added to its table's cut4/cut6 holds (`flowcutctl cut
 * ADDRESS`), one connection asked for on its control socket (fd_ctl,
 * `flowcutctl cut --conn ID`, root only; `flowcutctl daemon` reads its
 * state there, root or control_read_group), and what the watched sets and list files of
 * the settings add (fd_watch).  Its inspector (fd_ips, fd_inspect) reads
 * the ClientHello of TCP connections to the TLS ports and cuts those whose
 * JA4 or JA3 the watched fingerprints file lists.  It holds a lease on the
 * coprocessor (fd_lease), renewed while its loop turns: when flowcutd is
 * stopped, killed or stuck for longer than the lease (--lease, 3000 ms by
 * default), the coprocessor fails closed by itself, and a clean stop
 * releases it at once.
 *
 * Its loop is bounded (flowcutd_turn): every job its budget a turn, the
 * priorities (nftables, the control socket, the cut triggers) first, the
 * bulk work (a ruleset change's unmark, a route change's paths) spread
 * over turns, and no wait while any has work left: a cut, a ruleset
 * change or a control request waits at most one turn of bulk work.
 *
 * Threads: the main thread speaks commands, takes the coprocessor's events
 * and conntrack's and nftables' over netlink; fd_relay's two threads move
 * frames.  SIGINT/SIGTERM stop it; the TAPs stay, with the host's addresses
 * on them.
 */
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

static struct fc_settings cur;		/* the settings in force */
static struct fd_ips *ips;		/* the inspector */
static struct fd_rulecheck *rck;	/* what offloaded connections bypass in the ruleset */
static struct fd_rtcache *rtc;		/* the routes and neighbours the binding asks, remembered */
static struct fd_why *whys;		/* what each cut keeps for why, each source's figures */
static struct fd_frames *frames;	/* the cut connections' frames read into whys */
static char settings_error[512];	/* why the file was last refused, or "" */
static uint64_t never_wide;		/* never-cut ranges in force wider than the default bounds */
static struct fd_dirwatch *settings_dw;	/* its folder's watch, or NULL */

static volatile sig_atomic_t quit;
/* main's own counters (fd_report.h: FD_MAIN_STATS) */
static struct fd_main_stats mst;
static struct fd_lease lease;		/* on the coprocessor: renewed while the loop turns */
/*
 * The configuration word as the coprocessor last took it (gate_set: the
 * FW_CFG_PARAMS_SET answered 0, on what FW_CFG_PARAMS_GET read): counters'
 * gate and ips_switch.  Not known (no set answered yet): left out.
 */
static bool fw_cfg_known;
static uint32_t fw_cfg_last;

/*
 * The coprocessor failed closed while this flowcutd was away (stopped,
 * stuck, or before it started): every connection is judged again under a
 * new revision, and only then does the fast path forward again.
 */
static void
lease_lapsed(struct fd_offload *off, const struct fd_cmds *cmds)
{
	fprintf(stderr, "flowcutd: the lease on the coprocessor had lapsed (lapse %u): "
		"every connection judged again, then forwarding again\n", lease.last.lapses);
	if (fd_offload_ruleset_changed(off) != 0) {
		/* not judged: it stays closed; the next renewal finds it lapsed again */
		fprintf(stderr, "flowcutd: judging every connection again failed; the coprocessor "
			"fails closed on\n");
		return;
	}
	if (fd_lease_reopen(&lease, cmds, fd_clock_ms()) != 0)
		fprintf(stderr, "flowcutd: the coprocessor still fails closed; trying again\n");
}

/* rtnetlink's changes: the route cache's first, then fd_offload's (it asks through the cache). */
static void
on_rt_change(void *arg, const struct fd_rt_change *c)
{
	fd_rtcache_change(rtc, c);
	fd_offload_rt_change(arg, c);
}

/* A bounded batch of rtnetlink's changes; the paths job (fd_offload_work) looks at them after. */
static void
rt_events(struct fd_route_watch *w, struct fd_offload *off)
{
	int rc = fd_route_watch_read(w, 64, on_rt_change, off, &mst.rtnl_bad);

	if (rc == -ENOBUFS) {
		fprintf(stderr, "flowcutd: route and neighbour changes lost; reading them again\n");
		(void)fd_rtcache_lost(rtc);	/* emptied and dumped again first; a failure is said */
		fd_offload_rt_lost(off);
	} else if (rc < 0) {
		fprintf(stderr, "flowcutd: rtnetlink: %s\n", strerror(-rc));
	}
}

/*
 * `settings-set KEY VALUE|lines`: the file saved as flowcutctl settings set
 * saves it; flowcutd follows its file (the save takes effect as any save).
 */
static void
ctl_settings_set(const struct fd_report *x, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	char err[512];
	json_t *doc;
	char *text;
	int rc = fc_settings_keys_save(x->settings, req->key, req->value, req->lines, err,
				       sizeof(err));

	if (rc != 0) {
		snprintf(ans, cap, "error %s\n", err);
		return;
	}
	doc = json_pack("{s:s, s:s}", "key", req->key, "value", req->value);
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	snprintf(ans, cap, text ? "ok %s\n" : "ok {}\n", text);
	free(text);
	json_decref(doc);
}

/* A resync asked (fd_ctl.h: answered when it is through, with its figures). */
/*
 * A resync asked by hand: started (the job runs over the loop's turns, as
 * one lost events start), answered at once with its number - the value
 * `resyncs` takes when it starts.  The run is through once status says
 * `resyncs` at least that and `resyncing` false, or `resyncs` past it.
 */
static void
ctl_resync(const struct fd_report *x, char *ans, size_t cap)
{
	struct fd_offload_stats os;

	if (!*x->programmed) {
		snprintf(ans, cap, "error resync: the coprocessor is not programmed yet (its "
			 "programming resyncs)\n");
		return;
	}
	fd_offload_stats(x->off, &os);
	fd_offload_resync(x->off);	/* one running: this one follows it */
	snprintf(ans, cap, "ok {\"resync\":%" PRIu64 "}\n", os.resyncs + 1);
}

/* A control request the peer may ask (fd_ctl checked its credentials). */
static void
on_ctl(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	const struct fd_report *x = arg;

	if (fd_report_answer(x, req, ans, cap))
		return;		/* a read: the report room's */
	if (req->op == FD_CTL_RESYNC)
		ctl_resync(x, ans, cap);
	else if (req->op == FD_CTL_SETTINGS_SET)
		ctl_settings_set(x, req, ans, cap);
	else if (req->op == FD_CTL_CUT_CONN)
		fd_trigger_conn(x->cut, req->id, ans, cap);	/* the cut by connection */
	else
		snprintf(ans, cap, "error request: not one flowcutd answers\n");
}

/* Who may read on the control socket, as the settings say. */
static const char *secret_path;	/* --secret: the operator's secret file */

static struct fd_ctl_access
ctl_access(const struct fc_settings *s)
{
	struct fd_ctl_access a = { .read_group = s->control_read_group[0] != '\0',
				   .gid = (gid_t)s->control_read_gid, .secret_path = secret_path };

	snprintf(a.name, sizeof(a.name), "%s", s->control_read_group);
	return a;
}

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

/* The inspector's news: the loop woken (fd_ips_wake_with). */
static void
bell_ring(void *bell)
{
	fd_bell_ring(bell);
}

/* The command client's notice: the loop acts on it once. */
static void
on_down(void *arg, enum fd_cmdq_state why)
{
	*(enum fd_cmdq_state *)arg = why;
}

static void
port_mac(unsigned int port, uint8_t mac[6])
{
	static const uint8_t base[6] = { 0x02, 0xfc, 0, 0, 0, 0 };

	memcpy(mac, base, 6);
	mac[5] = (uint8_t)(port + 1);
}

/*
 * fw_cfg as the settings say (Cut in hardware: the IPS switch), the gate
 * (OFFLOAD) open only with `open` and the settings' offload on.  The
 * value set in *set_out.  0 or the command's error (said).
 */
static int
gate_set(const struct fd_cmds *cmds, bool open, uint32_t *set_out)
{
	struct fc_ans_cfg now;
	struct fc_cmd_cfg set;
	int rc;

	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &now, sizeof(now));
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_GET: %s\n", strerror(-rc));
		return rc;
	}
	set.fw_cfg = now.fw_cfg & ~(FC_CFG_OFFLOAD | FC_CFG_IPS);
	set.fw_cfg |= (open && cur.offload ? FC_CFG_OFFLOAD : 0) |
		      (cur.cut_in_hardware ? FC_CFG_IPS : 0);
	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_SET, &set, sizeof(set), NULL, 0);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_SET 0x%03x: %s\n", set.fw_cfg, strerror(-rc));
		return rc;
	}
	if (set_out != NULL)
		*set_out = set.fw_cfg;
	fw_cfg_known = true;
	fw_cfg_last = set.fw_cfg;
	return 0;
}

/*
 * Everything the coprocessor forgets when it boots: the ports, then the
 * configuration word, the gate and the IPS switch set together on what it
 * reads back (never written as a constant).
 */
static int
program(const struct fd_cmds *cmds, const struct opts *o)
{
	int rc;

	for (unsigned int p = 0; p < o->ports; p++) {
		struct fc_cmd_lif l = { .id = (uint16_t)p, .port = (uint16_t)p, .mtu = 1500 };

		port_mac(p, l.mac);
		rc = fd_cmds_call(cmds, FC_CMD_LIF_ADD_UPDATE, &l, sizeof(l), NULL, 0);
		if (rc != 0) {
			fprintf(stderr, "flowcutd: LIF_ADD_UPDATE port %u: %s\n", p, strerror(-rc));
			return rc;
		}
	}
	return gate_set(cmds, false, NULL);
}

/*
 * (Re)reads the settings file.  Returns true when the settings in force
 * changed; a file that does not parse changes nothing and says why.
 */
static bool
settings_load(const char *path)
{
	struct fc_settings s;
	char err[sizeof(settings_error)] = "";
	int rc = fc_settings_load(path, &s, err, sizeof(err));

	if (rc == -ENOENT) {
		fc_settings_default(&s);	/* a new appliance: write the defaults down */
		rc = fc_settings_save(path, &s);
		if (rc != 0) {
			snprintf(err, sizeof(err), "%s: %s", path, strerror(-rc));
			fprintf(stderr, "flowcutd: settings: the defaults in force, not saved: %s\n",
				err);
		} else {
			err[0] = '\0';
		}
		rc = 0;
	}
	snprintf(settings_error, sizeof(settings_error), "%s", err);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: settings refused, the last good stay in force: %s\n",
			settings_error);
		return false;
	}
	if (memcmp(&s, &cur, sizeof(s)) == 0)
		return false;
	cur = s;
	printf("flowcutd: settings: offload %s, cut in hardware %s, idle timeout %u s\n",
	       cur.offload ? "on" : "off", cur.cut_in_hardware ? "on" : "off", cur.idle_timeout);
	fflush(stdout);
	return true;
}

/*
 * Watches the settings file's folder (a save is a rename into it): the
 * descriptor to wait on, or -1 (said) when it cannot be watched.
 */
static int
settings_watch(const char *path)
{
	int rc;

	settings_dw = fd_dirwatch_open();
	if (settings_dw == NULL) {
		fprintf(stderr, "flowcutd: watching %s: %s\n", path, strerror(errno));
		return -1;
	}
	rc = fd_dirwatch_add(settings_dw, 0, path, IN_CLOSE_WRITE | IN_MOVED_TO);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: watching %s: %s\n", path, strerror(-rc));
		fd_dirwatch_close(settings_dw);
		settings_dw = NULL;
		return -1;
	}
	return fd_dirwatch_fd(settings_dw);
}

/* Has the settings file been written since the last call? */
static bool
settings_touched(void)
{
	uint64_t changed;

	(void)fd_dirwatch_read(settings_dw, &changed);	/* failed: what came before */
	return changed != 0;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcutd [--link PATH] [--ports N] [--tap PREFIX] [--settings PATH]\n"
		"                [--stats PATH] [--control PATH] [--secret PATH] [--lease MS]\n"
		"                [--inspector PATH]\n");
}

/* The loop's sources: each one's epoll data word, and its handler in on_ready[]. */
enum fd_src {
	FD_SRC_CT,		/* conntrack's events */
	FD_SRC_NFT,		/* nftables' events: the ruleset, the cut and watched sets */
	FD_SRC_SETTINGS,	/* the settings file's folder (inotify) */
	FD_SRC_RT,		/* rtnetlink: routes, neighbours, links */
	FD_SRC_CTL,		/* the control socket */
	FD_SRC_WATCH,		/* the watched list files (inotify) */
	FD_SRC_BELL,		/* the coprocessor's events and answers, the inspector's news (fd_bell) */
	FD_SRC_N
};

/*
 * Everything main opens, and the loop's own state: one, static in main (the
 * command client's notice and the control handler hold pointers into it).
 */
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
};

/* The command line into *o.  0, or -EINVAL (said, or the usage printed). */
static int
opts_parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "ports", required_argument, NULL, 'p' },
		{ "tap", required_argument, NULL, 't' },
		{ "settings", required_argument, NULL, 'S' },
		{ "stats", required_argument, NULL, 's' },
		{ "control", required_argument, NULL, 'c' },
		{ "secret", required_argument, NULL, 'W' },
		{ "lease", required_argument, NULL, 'L' },
		{ "inspector", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'l': o->link = optarg; break;
		case 't': o->tap = optarg; break;
		case 's': o->stats = optarg; break;
		case 'p':
			o->ports = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o->ports == 0 || o->ports > FC_MAX_PORTS) {
				fprintf(stderr, "flowcutd: --ports: '%s' is not 1 to %u\n", optarg,
					FC_MAX_PORTS);
				return -EINVAL;
			}
			break;
		case 'S': o->settings = optarg; break;
		case 'c': o->control = optarg; break;
		case 'W': o->secret = optarg; break;
		case 'I': o->inspector = optarg; break;
		case 'L':
			o->lease_ms = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o->lease_ms < FD_LEASE_MIN_MS || o->lease_ms > FD_LEASE_MAX_MS) {
				fprintf(stderr, "flowcutd: --lease: '%s' is not %u to %u ms\n", optarg,
					FD_LEASE_MIN_MS, FD_LEASE_MAX_MS);
				return -EINVAL;
			}
			break;
		default: usage(); return -EINVAL;
		}
	}
	return 0;
}

/* errno `e` as a failure's return: never 0, even when nothing set errno. */
static int
neg_errno(int e)
{
	return e > 0 ? -e : -EIO;
}

/*
 * Every source into the epoll set, in the order of enum fd_src (the
 * settings' only when followed).  0, or a negative errno (said).
 */
static int
sources_add(struct flowcutd *d)
{
	const int fds[FD_SRC_N] = {
		[FD_SRC_CT] = fd_ct_fd(d->ct),
		[FD_SRC_NFT] = fd_nft_fd(d->nft),
		[FD_SRC_SETTINGS] = d->watch,
		[FD_SRC_RT] = fd_route_watch_fd(d->rtw),
		[FD_SRC_CTL] = fd_ctl_fd(d->ctl),
		[FD_SRC_WATCH] = fd_watch_fd(d->wat),
		[FD_SRC_BELL] = fd_bell_fd(d->bell),
	};

	for (uint32_t src = 0; src < FD_SRC_N; src++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = src };

		if (src == FD_SRC_SETTINGS && d->watch < 0)
			continue;
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fds[src], &ev) != 0) {
			int e = errno;

			fprintf(stderr, "flowcutd: epoll_ctl: %s\n", strerror(e));
			return neg_errno(e);
		}
	}
	return 0;
}

static void never_apply(struct flowcutd *d);

/*
 * Opens everything, in order: the signal handlers, the TAPs, the settings
 * and their watch, the link (waiting for the coprocessor), the command
 * client, the inspector, the relay, the binding, nftables, the ruleset
 * check, the cut, the watched sets and lists, rtnetlink, the control
 * socket, epoll and its sources.  Returns 0; 1 when asked to stop while
 * waiting for the coprocessor (nothing to close); a negative errno when
 * something could not be opened (said on stderr: what, and why).  What was opened
 * before a failure is left to the process's exit.
 */
static int
flowcutd_open(struct flowcutd *d)
{
	const struct opts *o = &d->o;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* a cut's line is in the log when it is made */
	if (signal(SIGINT, on_signal) == SIG_ERR || signal(SIGTERM, on_signal) == SIG_ERR ||
	    signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		int e = errno;

		fprintf(stderr, "flowcutd: signal handlers: %s\n", strerror(e));
		return neg_errno(e);
	}
	for (unsigned int p = 0; p < o->ports; p++) {
		char name[32];
		uint8_t mac[6];

		snprintf(name, sizeof(name), "%s%u", o->tap, p);
		port_mac(p, mac);
		d->taps[p] = fd_tap_open(name, mac, 1500);
		if (d->taps[p] < 0)
			return d->taps[p];	/* said */
		d->ocfg.ifindex[p] = fd_tap_ifindex(name);
		if (d->ocfg.ifindex[p] == 0) {
			int e = errno;

			fprintf(stderr, "flowcutd: TAP %s has no ifindex: %s\n", name,
				strerror(e));
			return neg_errno(e);
		}
		memcpy(d->ocfg.mac[p], mac, 6);
	}
	fd_lease_init(&lease, o->lease_ms);
	fc_settings_default(&cur);
	/* changed or not, what it leaves in `cur` is in force; a refusal is said */
	(void)settings_load(o->settings);
	d->watch = settings_watch(o->settings);
	d->ocfg.nports = o->ports;
	d->ocfg.cut_in_hardware = cur.cut_in_hardware;
	d->ocfg.timeout_s = cur.idle_timeout;
	d->ocfg.first_frame_reads = true;	/* first_frame_us_* (fd_first.h) */
	/* the coprocessor may not be there yet: wait for it */
	for (int said = 0; !quit && (d->lk = lk_attach(o->link, 0)) == NULL; said = errno) {
		/* not there yet, booting, or slot 0 held (another flowcutd: said once) */
		if (errno != ENOENT && errno != EPROTO && errno != EBUSY) {
			int e = errno;

			fprintf(stderr, "flowcutd: link %s\n", lk_error());
			return neg_errno(e);
		}
		if (errno == EBUSY && said != EBUSY)
			fprintf(stderr, "flowcutd: link %s; waiting for it\n", lk_error());
		usleep(100000);
	}
	if (d->lk == NULL)
		return 1;
	d->cmdq = fd_cmdq_create(d->lk, &(struct fd_cmdq_params){ .down = on_down,
								  .down_arg = &d->down });
	if (d->cmdq == NULL) {
		int e = errno;

		fprintf(stderr, "flowcutd: command client: %s\n", strerror(e));
		return neg_errno(e);
	}
	d->cmds = fd_cmds_q(d->cmdq);
	ips = fd_ips_open();
	if (ips == NULL) {
		int e = errno;

		fprintf(stderr, "flowcutd: inspector: %s\n", strerror(e));
		return neg_errno(e);
	}
	d->bell = fd_bell_open(d->lk);
	if (d->bell == NULL) {
		int e = errno;

		fprintf(stderr, "flowcutd: the coprocessor's doorbells: %s\n", strerror(e));
		return neg_errno(e);
	}
	fd_ips_wake_with(ips, bell_ring, d->bell);	/* before the relay's thread starts */
	d->relay = fd_relay_start(d->lk, d->taps, o->ports, fd_ips_relay_hook(ips));
	if (d->relay != NULL && fd_ips_parser(ips, o->inspector, d->relay) != 0) {
		int e = errno;

		fprintf(stderr, "flowcutd: inspector %s: %s\n", o->inspector, strerror(e));
		return neg_errno(e);
	}
	fd_ips_offload_cfg(ips, &d->ocfg);
	d->ct = fd_ct_open();
	d->route = fd_route_open();
	d->rtw = fd_route_watch_open();	/* before the route cache's dump: no change missed */
	d->rtio = fd_route_io_of(d->route);
	rtc = d->route && d->rtw ? fd_rtcache_open(&d->rtio, FD_RTCACHE_ROUTES, FD_RTCACHE_NEIGHS)
				 : NULL;
	if (rtc != NULL)
		d->rtio = fd_rtcache_io(rtc);	/* the binding asks through the cache */
	d->nhops = fd_nhop_open(&d->cmds, d->ocfg.nports, d->ocfg.mac);
	d->ctio = fd_ct_io_of(d->ct);
	d->off = d->ct && rtc && d->nhops ?
		 fd_offload_open(&d->cmds, &d->ctio, &d->rtio, d->nhops, &d->ocfg) : NULL;
	d->nft = fd_nft_open(CT_MARK_BIT);
	rck = fd_rulecheck_open(CT_MARK_BIT);
	d->cut = d->off && d->nft ?
		 fd_cut_open(&(struct fd_cut_parts){ .off = d->off, .ct = d->ctio, .cmds = d->cmds,
						     .nft = d->nft,
						     .cut_in_hardware = cur.cut_in_hardware }) : NULL;
	d->wat = d->nft && d->cut ? fd_watch_open(d->nft, d->cut) : NULL;
	whys = d->wat ? fd_why_open() : NULL;
	frames = whys ? fd_frames_open(d->off, &d->cmds, whys) : NULL;
	if (whys != NULL) {	/* before the settings are read: every source named, every cut kept */
		fd_cut_why(d->cut, whys);
		fd_watch_why(d->wat, whys);
	}
	d->report = (struct fd_report){ .cut = d->cut, .off = d->off, .lk = d->lk,
				      .relay = d->relay, .wat = d->wat, .ips = ips, .rck = rck,
				      .rtc = rtc, .whys = whys,
				      .why = { .why = whys, .cut = d->cut, .off = d->off, .nft = d->nft,
					       .frames_read = true },
				      .page = { .cmds = &d->cmds, .off = d->off, .why = whys },
				      .ports = o->ports, .settings = o->settings,
				      .programmed = &d->programmed, .cur = &cur,
				      .settings_error = settings_error, .never_wide = &never_wide,
				      .fw_cfg_known = &fw_cfg_known, .fw_cfg_last = &fw_cfg_last,
				      .mst = &mst, .lease = &lease };
	secret_path = o->secret;
	{	/* the operator's secret: made when missing, said when refused */
		char why[256], hex[FC_SECRET_HEX + 1];

		if (fc_secret_make(o->secret, why, sizeof(why)) < 0 ||
		    fc_secret_read(o->secret, hex, why, sizeof(why)) != 0)
			fprintf(stderr, "flowcutd: the operator's secret: %s: no secret is accepted "
				"(changes over the control socket are root's only)\n", why);
		explicit_bzero(hex, sizeof(hex));
	}
	d->acc = ctl_access(&cur);
	d->ctl = fd_ctl_open(o->control, &d->acc, on_ctl, &d->report);
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->relay == NULL || d->off == NULL || d->nft == NULL || d->cut == NULL ||
	    d->wat == NULL || frames == NULL || d->rtw == NULL || d->ctl == NULL || rck == NULL ||
	    d->epfd < 0) {
		int e = errno;

		fprintf(stderr, "flowcutd: %s: %s\n", d->relay == NULL ? "relay" : d->ct == NULL ?
			"conntrack" : d->route == NULL ? "routes" : d->rtw == NULL ? "rtnetlink" :
			rtc == NULL ? "route cache" : d->nhops == NULL ? "next hops" :
			d->off == NULL ? "binding" : d->nft == NULL ? "nftables" : d->cut == NULL ? "cut" :
			d->wat == NULL ? "watched lists" : frames == NULL ? "why's table" :
			d->ctl == NULL ? "control socket" :
			rck == NULL ? "ruleset check" : "epoll",
			strerror(e));
		return neg_errno(e);
	}
	fd_ips_bind(ips, d->off, &d->ctio, &d->cmds, d->cut);
	fd_ips_settings(ips, &cur);
	never_apply(d);		/* before any trigger cuts */
	fd_watch_settings(d->wat, &cur);	/* the lists into their sets; cut once programmed */
	(void)fd_rulecheck_run(rck);	/* what offloaded connections would bypass, said */
	return sources_add(d);
}

/*
 * The settings' never-cut list (never_cut, never_cut_file: read again at
 * every look, the file too) into flowcutd's never-cut sets and the cut.
 * When it changed: what it newly holds is released (fd_cut_never), and
 * once programmed the triggers are asked again, so what it no longer
 * holds is cut where a set, a list or a cut set still holds it.  A file
 * that cannot be read keeps the list in force, said.
 */
static void
never_apply(struct flowcutd *d)
{
	static struct fc_list now;	/* the list in force */
	struct fc_list l = { 0 };
	char err[512];
	int rc = fc_settings_never_cut(&cur, &l, err, sizeof(err));

	if (rc != 0) {
		fprintf(stderr, "flowcutd: never_cut: %s; the list in force stays (%zu ranges)\n",
			rc == -ENOMEM ? "no memory" : err, now.n);
		fc_list_free(&l);
		return;
	}
	if (l.n == now.n && (l.n == 0 || memcmp(l.r, now.r, l.n * sizeof(*l.r)) == 0) &&
	    d->never_set) {
		fc_list_free(&l);
		return;
	}
	if (fd_nft_never(d->nft, &l) != 0 || fd_cut_never(d->cut, &l) < 0) {
		fc_list_free(&l);
		return;		/* said; looked at again at the next settings change */
	}
	printf("flowcutd: never_cut: %zu ranges never cut\n", l.n);
	never_wide = 0;
	for (size_t i = 0; i < l.n; i++) {
		const struct fc_range *r = &l.r[i];
		char t[96];

		if (!fc_range_wider_than(r, r->family == 4 ? FC_SETTINGS_NEVER_MIN_PREFIX4
							   : FC_SETTINGS_NEVER_MIN_PREFIX6))
			continue;
		/* allowed only by a lowered never_cut_min_prefix: said, and counted in the stats */
		if (never_wide++ < 8)
			fprintf(stderr, "flowcutd: never_cut: WARNING: %s is wider than a /%u: no trigger "
					"cuts anything in it (never_cut_min_prefix%c lowered)\n",
				fc_range_format(r, t, sizeof(t)),
				r->family == 4 ? FC_SETTINGS_NEVER_MIN_PREFIX4 : FC_SETTINGS_NEVER_MIN_PREFIX6,
				r->family == 4 ? '4' : '6');
	}
	fc_list_free(&now);
	now = l;
	d->never_set = true;
	if (d->programmed) {
		fd_watch_boot(d->wat);	/* what no longer is never cut, cut if still asked */
		fd_trigger_hand_all(d->nft, d->cut);
	}
}

/*
 * Nothing is offloaded to a coprocessor whose ports and IPS switch are not
 * programmed: the resync that follows its programming reads every state.
 */
static void
on_ct_ready(struct flowcutd *d)
{
	if (d->programmed)
		fd_offload_events(d->off);
	else
		fd_offload_skip_events(d->off);
}

static void
on_nft_ready(struct flowcutd *d)
{
	int rc = fd_nft_events(d->nft);

	if (rc < 0 && rc != -ENOBUFS && rc != -EIO)
		fprintf(stderr, "flowcutd: nftables events: %s\n", strerror(-rc));
	/* a change, or one we may have missed */
	if (rc < 0 || (rc & FD_NFT_RULESET)) {
		(void)fd_offload_ruleset_changed(d->off);	/* said */
		(void)fd_rulecheck_run(rck);	/* what is new, said */
	}
	fd_trigger_hand(d->nft, d->cut, rc);	/* what was added to the cut sets, cut */
	fd_watch_nft(d->wat, rc);
}

static void
on_settings_ready(struct flowcutd *d)
{
	if (!settings_touched())
		return;
	if (!settings_load(d->o.settings)) {
		never_apply(d);		/* the same settings: never_cut_file may have changed */
		return;
	}
	/* saved: applied at once, the gate and the switch together */
	fd_offload_settings(d->off, cur.cut_in_hardware, cur.idle_timeout);
	fd_cut_settings(d->cut, cur.cut_in_hardware);
	fd_ips_settings(ips, &cur);
	/* the gate and the switch as saved (once programmed: before, programming opens it) */
	d->programmed = d->programmed && gate_set(&d->cmds, true, NULL) == 0;
	never_apply(d);
	fd_watch_settings(d->wat, &cur);
	d->acc = ctl_access(&cur);
	(void)fd_ctl_access(d->ctl, &d->acc);	/* a failure is said */
}

static void
on_rt_ready(struct flowcutd *d)
{
	rt_events(d->rtw, d->off);
}

static void
on_ctl_ready(struct flowcutd *d)
{
	fd_ctl_serve(d->ctl);
}

static void
on_watch_ready(struct flowcutd *d)
{
	fd_watch_files(d->wat);
}

/* The bell's news is taken where it always is: fp_events, fd_cmdq_poll, fd_ips_turn. */
static void
on_bell_ready(struct flowcutd *d)
{
	fd_bell_clear(d->bell);
}

/* What a source's readiness does, by its epoll data word. */
static void (*const on_ready[FD_SRC_N])(struct flowcutd *d) = {
	[FD_SRC_CT] = on_ct_ready,
	[FD_SRC_NFT] = on_nft_ready,
	[FD_SRC_SETTINGS] = on_settings_ready,
	[FD_SRC_RT] = on_rt_ready,
	[FD_SRC_CTL] = on_ctl_ready,
	[FD_SRC_WATCH] = on_watch_ready,
	[FD_SRC_BELL] = on_bell_ready,
};

/*
 * The coprocessor programmed once it answers, with the lease held first,
 * or the lease renewed.  Returns false when the turn must end here (the
 * lease not taken: said, tried again after 100 ms).
 */
static bool
lease_and_program(struct flowcutd *d)
{
	int rc;

	if (d->programmed) {
		if (fd_lease_renew(&lease, &d->cmds, fd_clock_ms(), false) == 1)
			lease_lapsed(d->off, &d->cmds);
		return true;
	}
	/*
	 * The gate shut before the lease is taken: fw_cfg outlives the
	 * flowcutd that set it, and its connections (their states gone
	 * meanwhile, or passed by rules changed since) would forward from the
	 * moment the lease is held, until this one's resync and revision
	 * bump.  It opens once those are done, below.  The lease next: the
	 * gate forwards only with it held.
	 */
	if (gate_set(&d->cmds, false, NULL) != 0) {
		usleep(100000);	/* said; tried again */
		return false;
	}
	rc = fd_lease_renew(&lease, &d->cmds, fd_clock_ms(), true);
	if (rc < 0) {
		usleep(100000);	/* said; tried again */
		return false;
	}
	d->programmed = program(&d->cmds, &d->o) == 0;
	if (d->programmed) {
		uint32_t fw_cfg = 0;

		d->programmed_boot = lk_boot_id(d->lk);
		fd_offload_resync(d->off);	/* the connections conntrack holds */
		fd_watch_boot(d->wat);	/* what the watched sets and lists hold, cut */
		fd_trigger_hand_all(d->nft, d->cut);	/* and the cut sets (a flowcutd before's too) */
		/*
		 * Marks a predecessor's rules set, and rules changed while
		 * no flowcutd ran, are not this one's to trust: everything
		 * is judged again once, cut connections kept.
		 */
		if (rc == 1)
			lease_lapsed(d->off, &d->cmds);
		else if (!d->judged)
			(void)fd_offload_ruleset_changed(d->off);	/* said */
		d->judged = true;
		/* judged: what a flowcutd before made forwards no more; the gate opens */
		if (gate_set(&d->cmds, true, &fw_cfg) != 0) {
			d->programmed = false;	/* tried again */
			return true;
		}
		printf("flowcutd: coprocessor %016" PRIx64 " programmed: %u ports, fw_cfg 0x%03x\n",
		       lk_boot_id(d->lk), d->o.ports, fw_cfg);
		fflush(stdout);
	}
	return true;
}

/*
 * A bounded batch of the coprocessor's events (FD_EVENTS_PER_TURN).
 * Returns false when the turn must end here (the link reset: resynced).
 */
static bool
fp_events(struct flowcutd *d)
{
	struct lk_event ev;
	int rc = 0;

	for (int k = 0; k < FD_EVENTS_PER_TURN && (rc = lk_event_take(d->lk, &ev)) == 0; k++) {
		if (ev.type != LK_EV_BOOT)
			fd_offload_fp_event(d->off, &ev);
		else if (ev.boot_id != d->programmed_boot)
			d->programmed = false;	/* it forgot everything */
	}
	if (rc == -EOVERFLOW && d->programmed) {
		/* the coprocessor lost events: only a reconciliation tells what */
		mst.events_lost++;
		fprintf(stderr, "flowcutd: coprocessor events lost; reconciling\n");
		fd_offload_resync(d->off);
	}
	if (rc == -ECONNRESET || rc == -EPROTO) {
		d->programmed = false;
		if (lk_resync(d->lk) != 0)
			usleep(100000);	/* still booting; EINTR only shortens it */
		return false;
	}
	return true;
}

/*
 * The sources in the order a turn serves them: the priorities first -
 * nftables (a ruleset change: its revision bump; the cut sets' triggers),
 * the control socket (a cut by connection, a status), the watched list
 * files (a cut trigger: a big change is fd_watch_work's, in chunks), the
 * settings file (saved by hand, rare) - then the bulk sources, each its
 * batch.  The coprocessor's events (not a descriptor) come between.
 */
static const enum fd_src turn_first[] = { FD_SRC_BELL, FD_SRC_NFT, FD_SRC_CTL, FD_SRC_WATCH,
					   FD_SRC_SETTINGS };
static const enum fd_src turn_then[] = { FD_SRC_CT, FD_SRC_RT };

/* The ready sources of `order` served, each once (on_ready[]). */
static void
serve(struct flowcutd *d, const bool ready[FD_SRC_N], const enum fd_src *order, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ready[order[i]])
			on_ready[order[i]](d);
}

/*
 * The longest sleep of an idle turn: FD_IDLE_MS, or less when the lease's
 * renewal falls due sooner (a lease of FD_LEASE_MIN_MS is renewed every
 * 50 ms), so the renewal is never late for want of a wakeup.
 */
static int
idle_ms(void)
{
	uint64_t now = fd_clock_ms();

	if (lease.next_ms <= now)
		return 0;
	return lease.next_ms - now < FD_IDLE_MS ? (int)(lease.next_ms - now) : FD_IDLE_MS;
}

/*
 * One turn of the loop, every job its budget, the priorities first:
 *
 *   job                                 budget a turn
 *   command client's answers            64 (fd_cmdq_poll)
 *   lease, programming                  one renewal
 *   nftables, control socket,           what is ready (no budget: priorities);
 *   watched lists, settings             a ruleset change is its revision bump
 *   coprocessor events (fp_events)      FD_EVENTS_PER_TURN (256)
 *   conntrack events                    FD_OFFLOAD_EVENTS_PER_TURN (256 datagrams)
 *   rtnetlink                           64 changes
 *   inspector, watched sets, expiries   as fd_ips_turn, fd_watch_work, fd_watch_expiry say
 *   the binding's jobs (fd_offload_work) a ruleset change's unmark 256 posted
 *                                       updates (never more than the ct event
 *                                       datagrams read this turn while some are
 *                                       left), its judging 256, the paths job
 *                                       4,096 entries, extensions 256
 *   stats                               once a second
 *
 * The bound: the wait for the sources is 0 ms while a job has work left
 * (fd_offload_busy, fd_watch_work), so a cut, a ruleset change or a
 * control request waits at most one turn of bulk work, then is served
 * first (measured: driver/README.md).  Else it sleeps until a source is
 * ready - the coprocessor's events and answers among them, through its
 * doorbells (fd_bell) - FD_IDLE_MS at most (FD_EVENT_POLL_MS while the
 * inspector's cuts wait for an offload).  A turn ends
 * early while the coprocessor is booting or the lease is not taken.  A
 * whole turn's time, less its wait, is counted in d->turns.
 */
static void
flowcutd_turn(struct flowcutd *d)
{
	struct epoll_event evs[FD_SRC_N];
	bool ready[FD_SRC_N] = { false };
	uint64_t t0 = fd_clock_ns(), waited;
	int n, wait_ms;

	/* the answers that came, and whether the coprocessor went down */
	fd_cmdq_poll(d->cmdq);
	if (d->down != FD_CMDQ_UP) {
		/*
		 * Noticed once: whatever was in flight has failed; the
		 * connections are taken out and put back once, by the
		 * program-and-resync below, when it answers again.
		 */
		fprintf(stderr, "flowcutd: coprocessor %s; programming it again and "
			"resyncing\n", d->down == FD_CMDQ_STALLED ? "not answering" : "rebooted");
		d->down = FD_CMDQ_UP;
		d->programmed = false;
	}
	/*
	 * The client takes posts again only once reset on a region that
	 * has finished booting: until then nothing is programmed, and the
	 * reset is tried again every turn (not once: a coprocessor still
	 * booting refuses the first).
	 */
	if (fd_cmdq_state(d->cmdq) != FD_CMDQ_UP && fd_cmdq_reset(d->cmdq) != 0) {
		usleep(100000);	/* still booting; EINTR only shortens it */
		return;
	}
	if (!lease_and_program(d))
		return;
	/* level-triggered: a source with more than its batch left is ready again at once */
	waited = fd_clock_ns();
	/*
	 * A job with work left (an unmark, paths, a resync, a list): the turn
	 * does not wait.  Else it sleeps until a source or the bell (the
	 * coprocessor's events and answers, the inspector's decisions) has
	 * something, FD_IDLE_MS at most.
	 */
	wait_ms = d->busy || (d->programmed && (fd_offload_busy(d->off) ||
						fd_offload_resyncing(d->off)))
		  ? 0 : fd_ips_waiting(ips) ? FD_EVENT_POLL_MS : idle_ms();
	/* armed only to sleep: a busy loop looks at the rings each turn itself, at no syscall's cost */
	if (wait_ms > 0)
		fd_bell_arm(d->bell);
	n = epoll_wait(d->epfd, evs, FD_SRC_N, wait_ms);
	waited = fd_clock_ns() - waited;
	if (n < 0 && errno != EINTR)
		fprintf(stderr, "flowcutd: epoll_wait: %s\n", strerror(errno));
	for (int i = 0; i < n; i++)
		ready[evs[i].data.u32] = true;
	serve(d, ready, turn_first, sizeof(turn_first) / sizeof(turn_first[0]));
	if (!fp_events(d))
		return;
	serve(d, ready, turn_then, sizeof(turn_then) / sizeof(turn_then[0]));
	fd_ips_turn(ips);	/* the inspector's decisions carried out */
	d->busy = fd_watch_work(d->wat) == 1;	/* a big list change: its next transaction */
	fd_watch_expiry(d->wat);	/* a cut or watched set's element ran out: what it alone cut, released */
	if (d->programmed) {
		fd_offload_work(d->off);	/* unmark, paths, extensions due, a resync to retry */
		(void)fd_offload_sync_step(d->off);	/* a resync's step (fd_offload_sync.c) */
		/* the cut ones' frames, 256 a second at most; a failed post tried next second */
		(void)fd_frames_turn(frames, fd_clock_ns() / 1000000);
	}
	fd_hist_add(&d->turns, (fd_clock_ns() - t0 - waited) / 1000);
	if (time(NULL) != d->last_stats) {
		d->last_stats = time(NULL);
		mst.turn_max_us = d->turns.max_us;
		mst.turn_p99_us = fd_hist_p99(&d->turns);
		mst.ctl_auth_refused = fd_ctl_auth_refused(d->ctl);
		mst.ctl_let_go = fd_ctl_let_go(d->ctl);
		mst.never_cut_wide = never_wide;
		fd_hist_reset(&d->turns);
		if (d->o.stats)
			fd_report_stats_write(&d->report, d->o.stats);
	}
}

/* A clean stop: the lease released, the last stats, everything closed. */
static void
flowcutd_close(struct flowcutd *d)
{
	/* a clean stop: the coprocessor fails closed now, not a lease later */
	if (d->programmed && fd_lease_release(&lease, &d->cmds) == 0)
		printf("flowcutd: stopping: the lease released, the coprocessor fails closed\n");
	if (d->o.stats)
		fd_report_stats_write(&d->report, d->o.stats);
	fd_ips_parser_stop(ips);	/* its answers go through the relay */
	fd_relay_stop(d->relay);
	fd_bell_close(d->bell);	/* after the relay: its thread rings it */
	fd_ips_close(ips);
	fd_ctl_close(d->ctl);
	fd_watch_close(d->wat);
	fd_nft_close(d->nft);
	fd_rulecheck_close(rck);
	fd_route_watch_close(d->rtw);
	fd_cut_close(d->cut);
	fd_offload_close(d->off);
	fd_nhop_close(d->nhops);
	fd_rtcache_close(rtc);
	fd_route_close(d->route);
	fd_ct_close(d->ct);
	fd_cmdq_destroy(d->cmdq);	/* after the binding: it fails what is left in flight */
	fd_frames_close(frames);	/* after: the reads it failed touched it */
	fd_why_close(whys);	/* after the cut, the watch and the reader that fed it */
	close(d->epfd);	/* nothing was written through it: no error to lose */
	lk_close(d->lk);
}

int
main(int argc, char **argv)
{
	static struct flowcutd d = {
		.o = { .link = LK_PATH, .tap = "fp", .ports = 2,
		       .settings = "/etc/flowcut/settings.conf", .control = FC_CTL_PATH, .secret = FC_WEB_SECRET_PATH,
		       .inspector = "/run/flowcut/inspect.sock",
		       .lease_ms = FD_LEASE_MS },
		.ocfg = { .mark_bit = CT_MARK_BIT },
		.down = FD_CMDQ_UP,
	};
	int rc;

	if (opts_parse(argc, argv, &d.o) != 0)
		return 2;
	/*
	 * Not dumpable: no core file and no ptrace or /proc/PID/mem of ours by
	 * a user who is not root (the operator's secret passes through us).
	 * /proc/PID/stat and status stay readable (the lab's and the tests'
	 * figures: their files turn root's, they run as root).
	 */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
		fprintf(stderr, "flowcutd: prctl(PR_SET_DUMPABLE, 0): %s (dumpable still)\n",
			strerror(errno));
	rc = flowcutd_open(&d);
	if (rc != 0)
		return rc < 0 ? 1 : 0;
	while (!quit)
		flowcutd_turn(&d);
	flowcutd_close(&d);
	return 0;
}
