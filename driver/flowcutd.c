/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutd: the host side of the appliance (part 4 of the architecture).
 *
 *   flowcutd [--link PATH] [--ports N] [--tap PREFIX] [--settings PATH]
 *            [--stats PATH] [--control PATH] [--lease MS]
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
#include "fd_cmdq.h"
#include "fd_cmds.h"
#include "fd_ctl.h"
#include "fd_cut.h"
#include "fd_ips.h"
#include "fd_lease.h"
#include "fd_nft.h"
#include "fd_offload.h"
#include "fd_relay.h"
#include "fd_route.h"
#include "fd_rulecheck.h"
#include "fd_tap.h"
#include "fd_trigger.h"
#include "fd_watch.h"
#include "lk.h"

#include <libgen.h>
#include <sys/epoll.h>
#include <sys/inotify.h>

#define CT_MARK_BIT 0x40000000u	/* set by fd_nft on what the rules let through */
#define FD_EVENTS_PER_TURN 256	/* coprocessor events read in one turn */
#define FD_EVENT_POLL_MS 5	/* the coprocessor's events are looked for this often */

struct opts {
	const char *link;
	const char *tap;
	const char *stats;
	const char *settings;
	const char *control;
	unsigned int ports;
	unsigned int lease_ms;
};

static struct fc_settings cur;		/* the settings in force */
static struct fd_ips *ips;		/* the inspector */
static struct fd_rulecheck *rck;	/* what offloaded connections bypass in the ruleset */
static char settings_error[512];	/* why the file was last refused, or "" */

static volatile sig_atomic_t quit;
static uint64_t rtnl_bad;		/* rtnetlink datagrams that did not parse */
static uint64_t events_lost;		/* times the coprocessor said it lost events */
static struct fd_lease lease;		/* on the coprocessor: renewed while the loop turns */

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

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
	if (fd_lease_reopen(&lease, cmds, now_ms()) != 0)
		fprintf(stderr, "flowcutd: the coprocessor still fails closed; trying again\n");
}

/* rtnetlink's changes for fd_offload. */
static void
on_rt_change(void *arg, const struct fd_rt_change *c)
{
	fd_offload_rt_change(arg, c);
}

/* A bounded batch of rtnetlink's changes; the paths looked at after it. */
static void
rt_events(struct fd_route_watch *w, struct fd_offload *off)
{
	int rc = fd_route_watch_read(w, 64, on_rt_change, off, &rtnl_bad);

	if (rc == -ENOBUFS) {
		fprintf(stderr, "flowcutd: route and neighbour changes lost; reading them again\n");
		fd_offload_rt_lost(off);
	} else if (rc < 0) {
		fprintf(stderr, "flowcutd: rtnetlink: %s\n", strerror(-rc));
	}
	fd_offload_paths(off);
}

/* What the control socket's handler answers from (main's own, lent). */
struct ctl_ctx {
	struct fd_cut *cut;
	const struct fd_offload *off;
	struct lk *lk;
	const bool *programmed;
};

/*
 * flowcutd's own state as one JSON object on one line (what the stats file
 * holds, the part that fits an answer): programmed or not, the
 * coprocessor's boot id, connections offloaded, cuts, the settings.
 */
static void
ctl_status(const struct ctl_ctx *x, char *ans, size_t cap)
{
	struct fd_offload_stats os;
	struct fd_cut_stats cs;
	json_int_t hw = 0, host = 0;
	char boot[20], *text;
	json_t *doc;

	fd_offload_stats(x->off, &os);
	fd_cut_stats(x->cut, &cs);
	for (int t = 0; t < FD_CUT_NTRIGGERS; t++) {
		hw += (json_int_t)cs.in_hardware[t];
		host += (json_int_t)cs.on_host[t];
	}
	snprintf(boot, sizeof(boot), "%016" PRIx64, lk_boot_id(x->lk));
	doc = json_pack("{s:b, s:s, s:I, s:I, s:I, s:I, s:b, s:b, s:b}", "programmed",
			*x->programmed, "boot_id", boot, "offloaded", (json_int_t)os.offloaded,
			"cuts_in_hardware", hw, "cuts_on_host", host, "cut_failed",
			(json_int_t)cs.failed, "offload", cur.offload, "cut_in_hardware",
			cur.cut_in_hardware, "settings_refused", settings_error[0] != '\0');
	text = doc ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	if (text == NULL || (size_t)snprintf(ans, cap, "ok %s\n", text) >= cap)
		snprintf(ans, cap, "error status: %s\n", text ? "longer than an answer"
								: "no memory for the document");
	free(text);
	json_decref(doc);
}

/* A control request the peer may ask (fd_ctl checked its credentials). */
static void
on_ctl(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	const struct ctl_ctx *x = arg;

	if (req->op == FD_CTL_STATUS)
		ctl_status(x, ans, cap);
	else
		fd_trigger_conn(x->cut, req->id, ans, cap);	/* the cut by connection */
}

/* Who may read on the control socket, as the settings say. */
static struct fd_ctl_access
ctl_access(const struct fc_settings *s)
{
	struct fd_ctl_access a = { .read_group = s->control_read_group[0] != '\0',
				   .gid = (gid_t)s->control_read_gid };

	snprintf(a.name, sizeof(a.name), "%s", s->control_read_group);
	return a;
}

static void
on_signal(int sig)
{
	(void)sig;
	quit = 1;
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
 * Everything the coprocessor forgets when it boots: the ports, then the
 * configuration word, the gate and the IPS switch set together on what it
 * reads back (never written as a constant).
 */
static int
program(const struct fd_cmds *cmds, struct lk *lk, const struct opts *o)
{
	struct fc_ans_cfg now;
	struct fc_cmd_cfg set;
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
	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_GET, NULL, 0, &now, sizeof(now));
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_GET: %s\n", strerror(-rc));
		return rc;
	}
	set.fw_cfg = now.fw_cfg & ~(FC_CFG_OFFLOAD | FC_CFG_IPS);
	set.fw_cfg |= (cur.offload ? FC_CFG_OFFLOAD : 0) | (cur.cut_in_hardware ? FC_CFG_IPS : 0);
	rc = fd_cmds_call(cmds, FC_CMD_FW_CFG_PARAMS_SET, &set, sizeof(set), NULL, 0);
	if (rc != 0) {
		fprintf(stderr, "flowcutd: FW_CFG_PARAMS_SET 0x%03x: %s\n", set.fw_cfg, strerror(-rc));
		return rc;
	}
	printf("flowcutd: coprocessor %016" PRIx64 " programmed: %u ports, fw_cfg 0x%03x\n",
	       lk_boot_id(lk), o->ports, set.fw_cfg);
	fflush(stdout);
	return 0;
}

/* One member of the stats document; *bad remembers one that could not be set. */
static void
put(json_t *doc, const char *key, json_t *v, bool *bad)
{
	if (json_object_set_new(doc, key, v) != 0)	/* v is freed either way */
		*bad = true;
}

/*
 * Writes the relay's counts as JSON, atomically (a temporary file renamed).
 * A document that could not be built whole (no memory) is not written: the
 * file keeps the last whole one, and stderr says why.
 */
static void
stats_write(const char *path, const struct fd_relay *r, const struct fd_offload *off,
	    const struct fd_cut *cut, unsigned int ports)
{
	struct fd_relay_stats st;
	struct fd_offload_stats os;
	struct fd_cut_stats cs;
	json_t *cuts = json_object();
	json_t *doc = json_object(), *to = json_array(), *from = json_array();
	char tmp[4096];
	bool bad = doc == NULL || to == NULL || from == NULL || cuts == NULL;

	fd_relay_stats(r, &st);
	for (unsigned int p = 0; p < ports; p++) {
		bad |= json_array_append_new(to, json_integer((json_int_t)st.to_host[p])) != 0;
		bad |= json_array_append_new(from, json_integer((json_int_t)st.from_host[p])) != 0;
	}
	put(doc, "to_host", to, &bad);
	put(doc, "from_host", from, &bad);
	put(doc, "inspect_dropped", json_integer((json_int_t)st.inspect), &bad);
	put(doc, "up_bad_port", json_integer((json_int_t)st.up_bad_port), &bad);
	put(doc, "up_tap_full", json_integer((json_int_t)st.up_tap_full), &bad);
	put(doc, "down_ring_full", json_integer((json_int_t)st.down_ring_full), &bad);
	put(doc, "settings", json_pack("{s:b, s:b, s:i}", "offload", cur.offload,
				       "cut_in_hardware", cur.cut_in_hardware,
				       "idle_timeout", cur.idle_timeout), &bad);
	put(doc, "settings_error", settings_error[0] ? json_string(settings_error) : json_null(),
	    &bad);
	fd_offload_stats(off, &os);
	put(doc, "offloaded", json_integer((json_int_t)os.offloaded), &bad);
	put(doc, "refused", json_integer((json_int_t)os.refused), &bad);
	put(doc, "removed", json_integer((json_int_t)os.removed), &bad);
	put(doc, "refreshed", json_integer((json_int_t)os.refreshed), &bad);
	put(doc, "revived", json_integer((json_int_t)os.revived), &bad);
	put(doc, "resyncs", json_integer((json_int_t)os.resyncs), &bad);
	put(doc, "rev_bumps", json_integer((json_int_t)os.rev_bumps), &bad);
	put(doc, "nhop_followed", json_integer((json_int_t)os.nhop_followed), &bad);
	put(doc, "rerouted", json_integer((json_int_t)os.rerouted), &bad);
	put(doc, "waiting_dropped", json_integer((json_int_t)os.waiting_dropped), &bad);
	put(doc, "cut_adopted", json_integer((json_int_t)os.adopted), &bad);
	fd_cut_stats(cut, &cs);
	for (int t = 0; t < FD_CUT_NTRIGGERS; t++)
		put(cuts, fd_cut_trigger_name(t),
		    json_pack("{s:I, s:I}", "in_hardware", (json_int_t)cs.in_hardware[t],
			      "on_host", (json_int_t)cs.on_host[t]), &bad);
	put(doc, "cuts", cuts, &bad);
	put(doc, "cut_failed", json_integer((json_int_t)cs.failed), &bad);
	put(doc, "cut_released", json_integer((json_int_t)cs.released), &bad);
	put(doc, "rtnl_bad", json_integer((json_int_t)rtnl_bad), &bad);
	put(doc, "events_lost", json_integer((json_int_t)events_lost), &bad);
	put(doc, "lease", json_pack("{s:I, s:s, s:I, s:I}", "ms", (json_int_t)lease.ms, "state",
				    fd_lease_state_name(lease.last.state), "lapses",
				    (json_int_t)lease.last.lapses, "lapses_found",
				    (json_int_t)lease.lapses_found), &bad);
	put(doc, "inspector", fd_ips_stats_json(ips), &bad);
	put(doc, "rulecheck", fd_rulecheck_stats_json(rck), &bad);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (bad)
		fprintf(stderr, "flowcutd: stats: no memory for the document; %s not updated\n",
			path);
	else if (json_dump_file(doc, tmp, JSON_COMPACT) != 0)
		fprintf(stderr, "flowcutd: stats: writing %s failed\n", tmp);
	else if (rename(tmp, path) != 0) {
		fprintf(stderr, "flowcutd: stats: %s to %s: %s\n", tmp, path, strerror(errno));
		unlink(tmp);	/* nothing more to do with it */
	}
	json_decref(doc);	/* and with it to and from, handed to it by put() */
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

/* Watches the settings file's folder (a save is a rename into it). */
static int
settings_watch(const char *path, char *name, size_t len)
{
	char copy[4096];
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	snprintf(copy, sizeof(copy), "%s", path);
	snprintf(name, len, "%s", basename(copy));
	snprintf(copy, sizeof(copy), "%s", path);
	if (fd >= 0 && inotify_add_watch(fd, dirname(copy), IN_CLOSE_WRITE | IN_MOVED_TO) < 0) {
		fprintf(stderr, "flowcutd: watching %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Has the settings file been written since the last call? */
static bool
settings_touched(int fd, const char *name)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool hit = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->len && strcmp(ev->name, name) == 0)
				hit = true;
			p += sizeof(*ev) + ev->len;
		}
	return hit;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcutd [--link PATH] [--ports N] [--tap PREFIX] [--settings PATH]\n"
		"                [--stats PATH] [--control PATH] [--lease MS]\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "ports", required_argument, NULL, 'p' },
		{ "tap", required_argument, NULL, 't' },
		{ "settings", required_argument, NULL, 'S' },
		{ "stats", required_argument, NULL, 's' },
		{ "control", required_argument, NULL, 'c' },
		{ "lease", required_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .link = LK_PATH, .tap = "fp", .ports = 2,
			  .settings = "/etc/flowcut/settings.conf", .control = FC_CTL_PATH,
			  .lease_ms = FD_LEASE_MS };
	char settings_name[256];
	int watch;
	struct fd_offload_cfg ocfg = { .mark_bit = CT_MARK_BIT };
	struct fd_offload *off;
	struct fd_cut *cut;
	struct fd_watch *wat;
	struct fd_ctl *ctl;
	struct fd_ctl_access acc;
	struct ctl_ctx ctlx;
	struct fd_cmds cmds;
	struct fd_cmdq *cmdq;
	enum fd_cmdq_state down = FD_CMDQ_UP;	/* set by on_down, acted on by the loop */
	struct fd_nft *nft;
	struct fd_route_watch *rtw;
	int epfd;
	int taps[FD_MAX_PORTS], c;
	struct fd_relay *relay;
	struct lk *lk = NULL;
	bool programmed = false, judged = false;	/* judged: once, after the first programming */
	uint64_t programmed_boot = 0;	/* the boot whose tables we filled */
	time_t last_stats = 0;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'l': o.link = optarg; break;
		case 't': o.tap = optarg; break;
		case 's': o.stats = optarg; break;
		case 'p':
			o.ports = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o.ports == 0 || o.ports > FD_MAX_PORTS) {
				fprintf(stderr, "flowcutd: --ports: '%s' is not 1 to %u\n", optarg,
					FD_MAX_PORTS);
				return 2;
			}
			break;
		case 'S': o.settings = optarg; break;
		case 'c': o.control = optarg; break;
		case 'L':
			o.lease_ms = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || o.lease_ms < FD_LEASE_MIN_MS || o.lease_ms > FD_LEASE_MAX_MS) {
				fprintf(stderr, "flowcutd: --lease: '%s' is not %u to %u ms\n", optarg,
					FD_LEASE_MIN_MS, FD_LEASE_MAX_MS);
				return 2;
			}
			break;
		default: usage(); return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);	/* a cut's line is in the log when it is made */
	if (signal(SIGINT, on_signal) == SIG_ERR || signal(SIGTERM, on_signal) == SIG_ERR ||
	    signal(SIGPIPE, SIG_IGN) == SIG_ERR) {
		fprintf(stderr, "flowcutd: signal handlers: %s\n", strerror(errno));
		return 1;
	}
	for (unsigned int p = 0; p < o.ports; p++) {
		char name[32];
		uint8_t mac[6];

		snprintf(name, sizeof(name), "%s%u", o.tap, p);
		port_mac(p, mac);
		taps[p] = fd_tap_open(name, mac, 1500);
		if (taps[p] < 0)
			return 1;
		ocfg.ifindex[p] = fd_tap_ifindex(name);
		if (ocfg.ifindex[p] == 0) {
			fprintf(stderr, "flowcutd: TAP %s has no ifindex: %s\n", name,
				strerror(errno));
			return 1;
		}
		memcpy(ocfg.mac[p], mac, 6);
	}
	fd_lease_init(&lease, o.lease_ms);
	fc_settings_default(&cur);
	/* changed or not, what it leaves in `cur` is in force; a refusal is said */
	(void)settings_load(o.settings);
	watch = settings_watch(o.settings, settings_name, sizeof(settings_name));
	ocfg.nports = o.ports;
	ocfg.cut_in_hardware = cur.cut_in_hardware;
	ocfg.timeout_s = cur.idle_timeout;
	/* the coprocessor may not be there yet: wait for it */
	for (int said = 0; !quit && (lk = lk_attach(o.link, 0)) == NULL; said = errno) {
		/* not there yet, booting, or slot 0 held (another flowcutd: said once) */
		if (errno != ENOENT && errno != EPROTO && errno != EBUSY) {
			fprintf(stderr, "flowcutd: link %s\n", lk_error());
			return 1;
		}
		if (errno == EBUSY && said != EBUSY)
			fprintf(stderr, "flowcutd: link %s; waiting for it\n", lk_error());
		usleep(100000);
	}
	if (lk == NULL)
		return 0;
	cmdq = fd_cmdq_create(lk, &(struct fd_cmdq_params){ .down = on_down, .down_arg = &down });
	if (cmdq == NULL) {
		fprintf(stderr, "flowcutd: command client: %s\n", strerror(errno));
		return 1;
	}
	cmds = fd_cmds_q(cmdq);
	ips = fd_ips_open();
	if (ips == NULL) {
		fprintf(stderr, "flowcutd: inspector: %s\n", strerror(errno));
		return 1;
	}
	relay = fd_relay_start(lk, taps, o.ports, fd_ips_relay_hook(ips));
	fd_ips_offload_cfg(ips, &ocfg);
	off = fd_offload_open(&cmds, &ocfg);
	nft = fd_nft_open(CT_MARK_BIT);
	rck = fd_rulecheck_open(CT_MARK_BIT);
	cut = off && nft ? fd_cut_open(off, nft) : NULL;
	wat = nft && cut ? fd_watch_open(nft, cut) : NULL;
	rtw = fd_route_watch_open();
	ctlx = (struct ctl_ctx){ .cut = cut, .off = off, .lk = lk, .programmed = &programmed };
	acc = ctl_access(&cur);
	ctl = fd_ctl_open(o.control, &acc, on_ctl, &ctlx);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (relay == NULL || off == NULL || nft == NULL || cut == NULL || wat == NULL ||
	    rtw == NULL || ctl == NULL || rck == NULL || epfd < 0) {
		fprintf(stderr, "flowcutd: %s: %s\n", relay == NULL ? "relay" : off == NULL ?
			"conntrack" : nft == NULL ? "nftables" : cut == NULL ? "cut" : wat == NULL ?
			"watched lists" : rtw == NULL ? "rtnetlink" : ctl == NULL ? "control socket" :
			rck == NULL ? "ruleset check" : "epoll", strerror(errno));
		return 1;
	}
	fd_ips_bind(ips, off, cut);
	fd_ips_settings(ips, &cur);
	fd_watch_settings(wat, &cur);	/* the lists into their sets; cut once programmed */
	(void)fd_rulecheck_run(rck);	/* what offloaded connections would bypass, said */
	{
		struct epoll_event ct_ev = { .events = EPOLLIN, .data.u32 = 0 };
		struct epoll_event nft_ev = { .events = EPOLLIN, .data.u32 = 1 };
		struct epoll_event set_ev = { .events = EPOLLIN, .data.u32 = 2 };
		struct epoll_event rt_ev = { .events = EPOLLIN, .data.u32 = 3 };
		struct epoll_event ctl_ev = { .events = EPOLLIN, .data.u32 = 4 };
		struct epoll_event wat_ev = { .events = EPOLLIN, .data.u32 = 5 };

		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd_offload_fd(off), &ct_ev) != 0 ||
		    epoll_ctl(epfd, EPOLL_CTL_ADD, fd_nft_fd(nft), &nft_ev) != 0 ||
		    (watch >= 0 && epoll_ctl(epfd, EPOLL_CTL_ADD, watch, &set_ev) != 0) ||
		    epoll_ctl(epfd, EPOLL_CTL_ADD, fd_route_watch_fd(rtw), &rt_ev) != 0 ||
		    epoll_ctl(epfd, EPOLL_CTL_ADD, fd_ctl_fd(ctl), &ctl_ev) != 0 ||
		    epoll_ctl(epfd, EPOLL_CTL_ADD, fd_watch_fd(wat), &wat_ev) != 0) {
			fprintf(stderr, "flowcutd: epoll_ctl: %s\n", strerror(errno));
			return 1;
		}
	}
	while (!quit) {
		struct epoll_event evs[6];
		struct lk_event ev;
		int rc, n;

		/* the answers that came, and whether the coprocessor went down */
		fd_cmdq_poll(cmdq);
		if (down != FD_CMDQ_UP) {
			/*
			 * Noticed once: whatever was in flight has failed; the
			 * connections are taken out and put back once, by the
			 * program-and-resync below, when it answers again.
			 */
			fprintf(stderr, "flowcutd: coprocessor %s; programming it again and "
				"resyncing\n", down == FD_CMDQ_STALLED ? "not answering" : "rebooted");
			down = FD_CMDQ_UP;
			programmed = false;
		}
		/*
		 * The client takes posts again only once reset on a region that
		 * has finished booting: until then nothing is programmed, and the
		 * reset is tried again every turn (not once: a coprocessor still
		 * booting refuses the first).
		 */
		if (fd_cmdq_state(cmdq) != FD_CMDQ_UP && fd_cmdq_reset(cmdq) != 0) {
			usleep(100000);	/* still booting; EINTR only shortens it */
			continue;
		}
		if (!programmed) {
			/* the lease first: the gate opens only with it held */
			rc = fd_lease_renew(&lease, &cmds, now_ms(), true);
			if (rc < 0) {
				usleep(100000);	/* said; tried again */
				continue;
			}
			programmed = program(&cmds, lk, &o) == 0;
			if (programmed) {
				programmed_boot = lk_boot_id(lk);
				fd_offload_resync(off);	/* the connections conntrack holds */
				fd_watch_boot(wat);	/* what the watched sets and lists hold, cut */
				fd_trigger_hand_all(nft, cut);	/* and the cut sets (a flowcutd before's too) */
				/*
				 * Marks a predecessor's rules set, and rules changed while
				 * no flowcutd ran, are not this one's to trust: everything
				 * is judged again once, cut connections kept.
				 */
				if (rc == 1)
					lease_lapsed(off, &cmds);
				else if (!judged)
					(void)fd_offload_ruleset_changed(off);	/* said */
				judged = true;
			}
		} else if (fd_lease_renew(&lease, &cmds, now_ms(), false) == 1) {
			lease_lapsed(off, &cmds);
		}
		/* a bounded batch a turn: conntrack, nftables and routes get theirs */
		for (int k = 0; k < FD_EVENTS_PER_TURN && (rc = lk_event_take(lk, &ev)) == 0; k++) {
			if (ev.type != LK_EV_BOOT)
				fd_offload_fp_event(off, &ev);
			else if (ev.boot_id != programmed_boot)
				programmed = false;	/* it forgot everything */
		}
		if (rc == -EOVERFLOW && programmed) {
			/* the coprocessor lost events: only a reconciliation tells what */
			events_lost++;
			fprintf(stderr, "flowcutd: coprocessor events lost; reconciling\n");
			fd_offload_resync(off);
		}
		if (rc == -ECONNRESET || rc == -EPROTO) {
			programmed = false;
			if (lk_resync(lk) != 0)
				usleep(100000);	/* still booting; EINTR only shortens it */
			continue;
		}
		/*
		 * Level-triggered: a source with more than its batch left is
		 * ready again at once, after every other source had its turn.
		 */
		n = epoll_wait(epfd, evs, 6, FD_EVENT_POLL_MS);
		if (n < 0 && errno != EINTR)
			fprintf(stderr, "flowcutd: epoll_wait: %s\n", strerror(errno));
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == 0) {
				/*
				 * Nothing is offloaded to a coprocessor whose ports
				 * and IPS switch are not programmed: the resync that
				 * follows its programming reads every state.
				 */
				if (programmed)
					fd_offload_events(off);
				else
					fd_offload_skip_events(off);
			} else if (evs[i].data.u32 == 1) {
				rc = fd_nft_events(nft);
				if (rc < 0 && rc != -ENOBUFS && rc != -EIO)
					fprintf(stderr, "flowcutd: nftables events: %s\n",
						strerror(-rc));
				/* a change, or one we may have missed */
				if (rc < 0 || (rc & FD_NFT_RULESET)) {
					(void)fd_offload_ruleset_changed(off);	/* said */
					(void)fd_rulecheck_run(rck);	/* what is new, said */
				}
				fd_trigger_hand(nft, cut, rc);	/* what was added to the cut sets, cut */
				fd_watch_nft(wat, rc);
			} else if (evs[i].data.u32 == 4) {
				fd_ctl_serve(ctl);
			} else if (evs[i].data.u32 == 5) {
				fd_watch_files(wat);
			} else if (evs[i].data.u32 == 3) {
				rt_events(rtw, off);
			} else if (settings_touched(watch, settings_name) &&
				   settings_load(o.settings)) {
				/* saved: applied at once, the gate and the switch together */
				fd_offload_settings(off, cur.cut_in_hardware, cur.idle_timeout);
				fd_ips_settings(ips, &cur);
				programmed = program(&cmds, lk, &o) == 0 && programmed;
				fd_watch_settings(wat, &cur);
				acc = ctl_access(&cur);
				(void)fd_ctl_access(ctl, &acc);	/* a failure is said */
			}
		}
		fd_ips_turn(ips);	/* the inspector's decisions carried out */
		(void)fd_watch_work(wat);	/* a big list change: its next transaction */
		fd_watch_expiry(wat);	/* a cut or watched set's element ran out: what it alone cut, released */
		if (time(NULL) != last_stats) {
			last_stats = time(NULL);
			if (programmed)
				fd_offload_refresh(off);
			if (o.stats)
				stats_write(o.stats, relay, off, cut, o.ports);
		}
	}
	/* a clean stop: the coprocessor fails closed now, not a lease later */
	if (programmed && fd_lease_release(&lease, &cmds) == 0)
		printf("flowcutd: stopping: the lease released, the coprocessor fails closed\n");
	if (o.stats)
		stats_write(o.stats, relay, off, cut, o.ports);
	fd_relay_stop(relay);
	fd_ips_close(ips);
	fd_ctl_close(ctl);
	fd_watch_close(wat);
	fd_nft_close(nft);
	fd_rulecheck_close(rck);
	fd_route_watch_close(rtw);
	fd_cut_close(cut);
	fd_offload_close(off);
	fd_cmdq_destroy(cmdq);	/* after the binding: it fails what is left in flight */
	close(epfd);	/* nothing was written through it: no error to lose */
	lk_close(lk);
	return 0;
}
