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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/prctl.h>

#include "flowcutd.h"

static volatile sig_atomic_t quit;

/* rtnetlink's changes: the route cache's first, then fd_offload's (it asks through the cache). */
static void
on_rt_change(void *arg, const struct fd_rt_change *c)
{
	struct flowcutd *d = arg;

	fd_rtcache_change(d->rtc, c);
	fd_offload_rt_change(d->off, c);
}

/* A bounded batch of rtnetlink's changes; the paths job (fd_offload_work) looks at them after. */
static void
rt_events(struct flowcutd *d)
{
	struct fd_offload *off = d->off;
	int rc = fd_route_watch_read(d->rtw, 64, on_rt_change, d, &d->mst.rtnl_bad);

	if (rc == -ENOBUFS) {
		fprintf(stderr, "flowcutd: route and neighbour changes lost; reading them again\n");
		(void)fd_rtcache_lost(d->rtc);	/* emptied and dumped again first; a failure is said */
		fd_offload_rt_lost(off);
	} else if (rc < 0) {
		fprintf(stderr, "flowcutd: rtnetlink: %s\n", strerror(-rc));
	}
}

/* Who may read on the control socket, as the settings say. */

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

/* the signals: SIGINT and SIGTERM stop, SIGPIPE ignored */
static int
open_signals(struct flowcutd *d)
{
	(void)d;
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a cut's line is in the log when it is made */
	if (signal(SIGINT, on_signal) == SIG_ERR || signal(SIGTERM, on_signal) == SIG_ERR ||
	    signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		int e = errno;

		fprintf(stderr, "flowcutd: signal handlers: %s\n", strerror(e));
		return neg_errno(e);
	}
	return 0;
}

/* the front ports' TAPs, each with its port's MAC */
static int
open_ports(struct flowcutd *d)
{
	const struct opts *o = &d->o;

	for (unsigned int p = 0; p < o->ports; p++) {
		char name[32];
		uint8_t mac[6];

		snprintf(name, sizeof(name), "%s%u", o->tap, p);
		coproc_port_mac(p, mac);
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
	return 0;
}

/* the settings read and followed, the lease and the binding's settings from them */
static int
open_settings(struct flowcutd *d)
{
	const struct opts *o = &d->o;

	fd_lease_init(&d->lease, o->lease_ms);
	fc_settings_default(&d->cur);
	/* changed or not, what it leaves in `cur` is in force; a refusal is said */
	(void)settings_load(d, o->settings);
	d->watch = settings_watch(d, o->settings);
	d->ocfg.nports = o->ports;
	d->ocfg.cut_in_hardware = d->cur.cut_in_hardware;
	d->ocfg.timeout_s = d->cur.idle_timeout;
	d->ocfg.first_frame_reads = true;	/* first_frame_us_* (fd_first.h) */
	return 0;
}

/* the link (waiting for the coprocessor) and the command client */
static int
open_link(struct flowcutd *d)
{
	const struct opts *o = &d->o;

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
	return 0;
}

/* the inspector, the doorbells, the relay and the parser's channel */
static int
open_inspector(struct flowcutd *d)
{
	const struct opts *o = &d->o;

	d->ips = fd_ips_open();
	if (d->ips == NULL) {
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
	fd_ips_wake_with(d->ips, bell_ring, d->bell);	/* before the relay's thread starts */
	d->relay = fd_relay_start(d->lk, d->taps, o->ports, fd_ips_relay_hook(d->ips));
	if (d->relay != NULL && fd_ips_parser(d->ips, o->inspector, d->relay) != 0) {
		int e = errno;

		fprintf(stderr, "flowcutd: inspector %s: %s\n", o->inspector, strerror(e));
		return neg_errno(e);
	}
	fd_ips_offload_cfg(d->ips, &d->ocfg);
	return 0;
}

/* conntrack, the routes and their cache, the next hops, the binding */
static int
open_binding(struct flowcutd *d)
{
	d->ct = fd_ct_open();
	d->route = fd_route_open();
	d->rtw = fd_route_watch_open();	/* before the route cache's dump: no change missed */
	d->rtio = fd_route_io_of(d->route);
	d->rtc = d->route && d->rtw ? fd_rtcache_open(&d->rtio, FD_RTCACHE_ROUTES, FD_RTCACHE_NEIGHS)
				 : NULL;
	if (d->rtc != NULL)
		d->rtio = fd_rtcache_io(d->rtc);	/* the binding asks through the cache */
	d->nhops = fd_nhop_open(&d->cmds, d->ocfg.nports, d->ocfg.mac);
	d->ctio = fd_ct_io_of(d->ct);
	d->off = d->ct && d->rtc && d->nhops ?
		 fd_offload_open(&d->cmds, &d->ctio, &d->rtio, d->nhops, &d->ocfg) : NULL;
	return 0;
}

/* nftables, the ruleset check, the cut, the watched sets and lists, why */
static int
open_cut(struct flowcutd *d)
{
	d->nft = fd_nft_open(CT_MARK_BIT);
	d->rck = fd_rulecheck_open(CT_MARK_BIT);
	d->cut = d->off && d->nft ?
		 fd_cut_open(&(struct fd_cut_parts){ .off = d->off, .ct = d->ctio, .cmds = d->cmds,
						     .nft = d->nft,
						     .cut_in_hardware = d->cur.cut_in_hardware }) : NULL;
	d->wat = d->nft && d->cut ? fd_watch_open(d->nft, d->cut) : NULL;
	d->whys = d->wat ? fd_why_open() : NULL;
	d->frames = d->whys ? fd_frames_open(d->off, &d->cmds, d->whys) : NULL;
	if (d->whys != NULL) {	/* before the settings are read: every source named, every cut kept */
		fd_cut_why(d->cut, d->whys);
		fd_watch_why(d->wat, d->whys);
	}
	return 0;
}

/* the report's parts lent, the operator's secret, the control socket */
static int
open_control(struct flowcutd *d)
{
	const struct opts *o = &d->o;

	d->report = (struct fd_report){ .cut = d->cut, .off = d->off, .lk = d->lk,
				      .relay = d->relay, .wat = d->wat, .ips = d->ips, .rck = d->rck,
				      .rtc = d->rtc, .whys = d->whys,
				      .why = { .why = d->whys, .cut = d->cut, .off = d->off, .nft = d->nft,
					       .frames_read = true },
				      .page = { .cmds = &d->cmds, .off = d->off, .why = d->whys },
				      .ports = o->ports, .settings = o->settings,
				      .programmed = &d->programmed, .cur = &d->cur,
				      .settings_error = d->settings_error, .never_wide = &d->never_wide,
				      .fw_cfg_known = &d->fw_cfg_known, .fw_cfg_last = &d->fw_cfg_last,
				      .mst = &d->mst, .lease = &d->lease };
	d->secret_path = o->secret;
	{	/* the operator's secret: made when missing, said when refused */
		char why[256], hex[FC_SECRET_HEX + 1];

		if (fc_secret_make(o->secret, why, sizeof(why)) < 0 ||
		    fc_secret_read(o->secret, hex, why, sizeof(why)) != 0)
			fprintf(stderr, "flowcutd: the operator's secret: %s: no secret is accepted "
				"(changes over the control socket are root's only)\n", why);
		explicit_bzero(hex, sizeof(hex));
	}
	d->acc = ctl_access(d, &d->cur);
	d->ctl = fd_ctl_open(o->control, &d->acc, ctl_on_request, &d->report);
	return 0;
}

/*
 * Opens everything, in order (the steps above, named): the signal handlers, the TAPs, the settings
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
	static int (*const steps[])(struct flowcutd *d) = {
		open_signals, open_ports, open_settings, open_link, open_inspector, open_binding,
		open_cut, open_control,
	};

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		int rc = steps[i](d);

		if (rc != 0)
			return rc;
	}
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->relay == NULL || d->off == NULL || d->nft == NULL || d->cut == NULL ||
	    d->wat == NULL || d->frames == NULL || d->rtw == NULL || d->ctl == NULL || d->rck == NULL ||
	    d->epfd < 0) {
		int e = errno;

		fprintf(stderr, "flowcutd: %s: %s\n", d->relay == NULL ? "relay" : d->ct == NULL ?
			"conntrack" : d->route == NULL ? "routes" : d->rtw == NULL ? "rtnetlink" :
			d->rtc == NULL ? "route cache" : d->nhops == NULL ? "next hops" :
			d->off == NULL ? "binding" : d->nft == NULL ? "nftables" : d->cut == NULL ? "cut" :
			d->wat == NULL ? "watched lists" : d->frames == NULL ? "why's table" :
			d->ctl == NULL ? "control socket" :
			d->rck == NULL ? "ruleset check" : "epoll",
			strerror(e));
		return neg_errno(e);
	}
	fd_ips_bind(d->ips, d->off, &d->ctio, &d->cmds, d->cut);
	fd_ips_settings(d->ips, &d->cur);
	never_apply(d);		/* before any trigger cuts */
	fd_watch_settings(d->wat, &d->cur);	/* the lists into their sets; cut once programmed */
	(void)fd_rulecheck_run(d->rck);	/* what offloaded connections would bypass, said */
	return sources_add(d);
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
		(void)fd_rulecheck_run(d->rck);	/* what is new, said */
	}
	fd_trigger_hand(d->nft, d->cut, rc);	/* what was added to the cut sets, cut */
	fd_watch_nft(d->wat, rc);
}

static void
on_settings_ready(struct flowcutd *d)
{
	if (!settings_touched(d))
		return;
	if (!settings_load(d, d->o.settings)) {
		never_apply(d);		/* the same settings: never_cut_file may have changed */
		return;
	}
	/* saved: applied at once, the gate and the switch together */
	fd_offload_settings(d->off, d->cur.cut_in_hardware, d->cur.idle_timeout);
	fd_cut_settings(d->cut, d->cur.cut_in_hardware);
	fd_ips_settings(d->ips, &d->cur);
	/* the gate and the switch as saved (once programmed: before, programming opens it) */
	d->programmed = d->programmed && coproc_gate_set(d, true, NULL) == 0;
	never_apply(d);
	fd_watch_settings(d->wat, &d->cur);
	d->acc = ctl_access(d, &d->cur);
	(void)fd_ctl_access(d->ctl, &d->acc);	/* a failure is said */
}

static void
on_rt_ready(struct flowcutd *d)
{
	rt_events(d);
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

/* The bell's news is taken where it always is: coproc_events, fd_cmdq_poll, fd_ips_turn. */
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
idle_ms(const struct flowcutd *d)
{
	uint64_t now = fd_clock_ms();

	if (d->lease.next_ms <= now)
		return 0;
	return d->lease.next_ms - now < FD_IDLE_MS ? (int)(d->lease.next_ms - now) : FD_IDLE_MS;
}

/*
 * One turn of the loop, every job its budget, the priorities first:
 *
 *   job                                 budget a turn
 *   command client's answers            64 (fd_cmdq_poll)
 *   lease, programming                  one renewal
 *   nftables, control socket,           what is ready (no budget: priorities);
 *   watched lists, settings             a ruleset change is its revision bump
 *   coprocessor events (coproc_events)      FD_EVENTS_PER_TURN (256)
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
	if (!coproc_lease_and_program(d))
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
		  ? 0 : fd_ips_waiting(d->ips) ? FD_EVENT_POLL_MS : idle_ms(d);
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
	if (!coproc_events(d))
		return;
	serve(d, ready, turn_then, sizeof(turn_then) / sizeof(turn_then[0]));
	fd_ips_turn(d->ips);	/* the inspector's decisions carried out */
	d->busy = fd_watch_work(d->wat) == 1;	/* a big list change: its next transaction */
	fd_watch_expiry(d->wat);	/* a cut or watched set's element ran out: what it alone cut, released */
	if (d->programmed) {
		fd_offload_work(d->off);	/* unmark, paths, extensions due, a resync to retry */
		(void)fd_offload_sync_step(d->off);	/* a resync's step (fd_offload_sync.c) */
		/* the cut ones' frames, 256 a second at most; a failed post tried next second */
		(void)fd_frames_turn(d->frames, fd_clock_ns() / 1000000);
	}
	fd_hist_add(&d->turns, (fd_clock_ns() - t0 - waited) / 1000);
	if (time(NULL) != d->last_stats) {
		d->last_stats = time(NULL);
		d->mst.turn_max_us = d->turns.max_us;
		d->mst.turn_p99_us = fd_hist_p99(&d->turns);
		d->mst.ctl_auth_refused = fd_ctl_auth_refused(d->ctl);
		d->mst.ctl_let_go = fd_ctl_let_go(d->ctl);
		d->mst.never_cut_wide = d->never_wide;
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
	if (d->programmed && fd_lease_release(&d->lease, &d->cmds) == 0)
		printf("flowcutd: stopping: the lease released, the coprocessor fails closed\n");
	if (d->o.stats)
		fd_report_stats_write(&d->report, d->o.stats);
	fd_ips_parser_stop(d->ips);	/* its answers go through the relay */
	fd_relay_stop(d->relay);
	fd_bell_close(d->bell);	/* after the relay: its thread rings it */
	fd_ips_close(d->ips);
	fd_ctl_close(d->ctl);
	fd_watch_close(d->wat);
	fd_nft_close(d->nft);
	fd_rulecheck_close(d->rck);
	fd_route_watch_close(d->rtw);
	fd_cut_close(d->cut);
	fd_offload_close(d->off);
	fd_nhop_close(d->nhops);
	fd_rtcache_close(d->rtc);
	fd_route_close(d->route);
	fd_ct_close(d->ct);
	fd_cmdq_destroy(d->cmdq);	/* after the binding: it fails what is left in flight */
	fd_frames_close(d->frames);	/* after: the reads it failed touched it */
	fd_why_close(d->whys);	/* after the cut, the watch and the reader that fed it */
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
