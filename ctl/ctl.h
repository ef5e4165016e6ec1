/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl: what flowcutctl's commands share, private to ctl/.  flowcutctl.c
 * holds main() (the options, the command's choice, the link attached for
 * the commands of the link) and print_json; the commands are a file a way
 * of reaching what they ask: ctl_link.c (the coprocessor, over the link),
 * ctl_daemon.c (flowcutd: its control socket, its cut sets) and
 * ctl_files.c (files of this host: settings, a capture, the web secret).
 * They call what is declared here and nothing of one another; main()
 * alone calls them.  Single-threaded, one command a process.
 */
#ifndef FLOWCUT_CTL_H
#define FLOWCUT_CTL_H

#include <stdbool.h>

#include <jansson.h>

struct lk;

/* --json (or a command's trailing --json): one JSON document, not lines */
extern bool json;

/* the link, attached by main() before a command of ctl_link.c runs */
extern struct lk *lk;

/* print_json - print doc on stdout, indented, and drop it.  Returns 0. */
int print_json(json_t *doc);

/*
 * The commands: each takes the words after the command's name (those it
 * reads), prints its answer (a JSON document with json) and returns the
 * process's exit status: 0, 1 when refused or not reached (said on
 * stderr), 2 for a usage error.
 */

/* ctl_link.c: lk attached */
int cmd_status(void);
int cmd_counters(int argc, char **argv);
int cmd_conns(void);
int cmd_conn(int argc, char **argv);
int cmd_cfg(int argc, char **argv);

/* ctl_daemon.c: control, flowcutd's control socket */
int cmd_daemon(const char *control, int argc);
int cmd_cut(const char *control, bool cut, int argc, char **argv);	/* cut, uncut */
int cmd_resync(const char *control, int argc, char **argv);
int cmd_why(const char *control, int argc, char **argv);
int cmd_triggers(const char *control, int argc, char **argv);

/* ctl_files.c: path, the file (--settings, --secret) */
int cmd_settings(const char *path, int argc, char **argv);
int cmd_fingerprint(int argc, char **argv);
int cmd_web_secret(const char *path, int argc, char **argv);

#endif
