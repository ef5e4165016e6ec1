/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcutctl: speaks to a running coprocessor over the link.  This file
 * reads the options, attaches the link and runs the command; the commands
 * are a file a way of reaching what they ask (ctl.h): ctl_link.c,
 * ctl_daemon.c, ctl_files.c.
 *
 *   flowcutctl [--link PATH] [--json] COMMAND
 *
 *   status                          boot id, connections, fw_cfg, the lease
 *   counters [--all]                counters by name (non-zero unless --all),
 *                                   read from the counters window: no command
 *   counters clear                  COUNTER_CLEAR
 *   conns                           the connection table, both ways
 *   conn verdict ID drop|cut-thru|send-to-ips
 *   cfg                             the configuration word, bit by bit
 *   cfg NAME=on|off ...             set bits by name, read-modify-write
 *   settings                        the settings file (--settings PATH)
 *   settings set KEY VALUE          change one and save: flowcutd applies it
 *                                   at once (no link needed for these two)
 *   fingerprint FILE                each TLS ClientHello over TCP or QUIC in a capture
 *                                   (pcap or pcapng): its tuple, SNI, ALPN,
 *                                   JA4, JA4_r, JA3 (no link needed)
 *   cut ADDRESS|PREFIX|RANGE [--for SECONDS]
 *                                   add it to flowcutd's cut4/cut6 (nftables,
 *                                   in flowcutd's namespace): flowcutd cuts
 *                                   every connection with a far end in it,
 *                                   and the host drops it, for SECONDS or
 *                                   until uncut (no link needed)
 *   uncut ADDRESS|PREFIX|RANGE      remove it (as it was added)
 *   cut --conn ID                   ask flowcutd (its control socket,
 *                                   --control PATH) to cut one connection
 *                                   (root only)
 *   daemon                          flowcutd's own state, asked on its
 *                                   control socket (root, or a member of
 *                                   control_read_group; no link needed)
 *   resync [--wait]                 ask flowcutd to resync (root only): it
 *                                   starts the run and says its number;
 *                                   --wait waits until it is through and
 *                                   prints resync_last_ms
 *   why ADDRESS | why --conn ID     which trigger cuts it (never-cut entry,
 *                                   cut set, watched set and element, list
 *                                   and line, the cut connections: when,
 *                                   in hardware, frames since), or why
 *                                   nothing does (root or the read group)
 *   triggers                        each watched set's and list's figures:
 *                                   elements, connections cut, frames
 *   web-secret [--make]             the operator's secret file (--secret
 *                                   PATH, default /etc/flowcut/web.secret):
 *                                   its path and whether flowcutd accepts it
 *                                   (fc_secret's checks: root's, 0600, 64 hex
 *                                   digits), never the secret; --make writes
 *                                   one when missing (root), as flowcutd does
 *
 * Human-readable by default; --json prints one JSON document (jansson).
 * Exit status: 0, 1 when the coprocessor refused or could not be reached
 * (the message says which and why), 2 for a usage error.
 */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <flowcut/fc_ctl.h>

#include "ctl.h"
#include "lk.h"

bool json;
struct lk *lk;

int
print_json(json_t *doc)
{
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	return 0;
}

static void
usage(void)
{
	fprintf(stderr,
		"usage: flowcutctl [--link PATH] [--json] COMMAND\n"
		"  status\n"
		"  counters [--all] | counters clear\n"
		"  conns\n"
		"  conn verdict ID drop|cut-thru|send-to-ips\n"
		"  cfg [NAME=on|off ...]\n"
		"  [--settings PATH] settings [set KEY VALUE...]\n"
		"  fingerprint FILE\n"
		"  cut ADDRESS|PREFIX|RANGE [--for SECONDS] | uncut ADDRESS|PREFIX|RANGE\n"
		"  [--control PATH] cut --conn ID\n"
		"  [--control PATH] daemon\n"
		"  [--control PATH] resync [--wait]\n"
		"  [--control PATH] why ADDRESS | why --conn ID [--json]\n"
		"  [--control PATH] triggers [--json]\n"
		"  [--secret PATH] web-secret [--make] [--json]\n");
}

int
main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ "settings", required_argument, NULL, 'S' },
		{ "control", required_argument, NULL, 'c' },
		{ "secret", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = LK_PATH, *settings = "/etc/flowcut/settings.conf";
	const char *control = FC_CTL_PATH, *secret = FC_WEB_SECRET_PATH;
	int c, rc;

	while ((c = getopt_long(argc, argv, "+", lo, NULL)) != -1) {
		switch (c) {
		case 'l': path = optarg; break;
		case 'j': json = true; break;
		case 'S': settings = optarg; break;
		case 'c': control = optarg; break;
		case 'W': secret = optarg; break;
		default: usage(); return 2;
		}
	}
	if (optind >= argc) {
		usage();
		return 2;
	}
	if (strcmp(argv[optind], "settings") == 0)
		return cmd_settings(settings, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "fingerprint") == 0)
		return cmd_fingerprint(argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "daemon") == 0)
		return cmd_daemon(control, argc - optind - 1);
	if (strcmp(argv[optind], "why") == 0)
		return cmd_why(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "triggers") == 0)
		return cmd_triggers(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "web-secret") == 0)
		return cmd_web_secret(secret, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "resync") == 0)
		return cmd_resync(control, argc - optind - 1, argv + optind + 1);
	if (strcmp(argv[optind], "cut") == 0 || strcmp(argv[optind], "uncut") == 0)
		return cmd_cut(control, argv[optind][0] == 'c', argc - optind - 1,
			       argv + optind + 1);
	lk = lk_attach(path, -1);
	if (lk == NULL) {
		fprintf(stderr, "flowcutctl: link %s\n", lk_error());
		return 1;
	}
	argv += optind;
	argc -= optind;
	if (strcmp(argv[0], "status") == 0 && argc == 1)
		rc = cmd_status();
	else if (strcmp(argv[0], "counters") == 0)
		rc = cmd_counters(argc - 1, argv + 1);
	else if (strcmp(argv[0], "conns") == 0 && argc == 1)
		rc = cmd_conns();
	else if (strcmp(argv[0], "conn") == 0)
		rc = cmd_conn(argc - 1, argv + 1);
	else if (strcmp(argv[0], "cfg") == 0)
		rc = cmd_cfg(argc - 1, argv + 1);
	else {
		usage();
		rc = 2;
	}
	lk_close(lk);
	return rc;
}
