/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ctl_daemon: flowcutctl's commands that ask flowcutd, on its control
 * socket (cut --conn, daemon, resync, why, triggers) or in its nftables
 * cut sets (cut, uncut); none needs the link.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>
#include <nftables/libnftables.h>

#include <flowcut/fc_nft.h>
#include <flowcut/fc_ctl.h>

#include "ctl.h"
#include "fc_list.h"

/* ---- cuts by hand (flowcutd's table; its control socket) ---- */

/*
 * One request on flowcutd's control socket; its answer, without "ok " and
 * the newline, in ans (cap bytes), waited for `wait_s` seconds.  0; 1 said
 * (unreachable, no answer in time, or flowcutd answered an error: a
 * refusal, ...).
 */
static int
ctl_ask_for(const char *path, const char *req, char *ans, size_t cap, long wait_s)
{
	struct timeval tv = { .tv_sec = wait_s };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[FC_CTL_ANS_MAX + 1];
	ssize_t n = -1;
	int s;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "flowcutctl: --control %s: path too long\n", path);
		return 1;
	}
	strcpy(sa.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    send(s, req, strlen(req), MSG_NOSIGNAL) < 0 ||
	    (n = recv(s, buf, FC_CTL_ANS_MAX, 0)) < 0) {
		fprintf(stderr, "flowcutctl: flowcutd's control socket %s: %s\n", path,
			errno == ENOENT || errno == ECONNREFUSED ? "no flowcutd listening" :
			errno == EAGAIN ? "no answer in time (flowcutd busy, or stopped)" :
			errno == EACCES ? "not allowed to reach it (root, or control_read_group "
					  "for what only reads)" : strerror(errno));
		if (s >= 0)
			close(s);
		return 1;
	}
	close(s);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (strncmp(buf, "ok ", 3) != 0) {
		if (json)
			print_json(json_pack("{s:b, s:s}", "ok", 0, "answer", buf));
		else
			fprintf(stderr, "flowcutctl: flowcutd: %s\n",
				strncmp(buf, "error ", 6) == 0 ? buf + 6 : buf);
		return 1;
	}
	snprintf(ans, cap, "%s", buf + 3);
	return 0;
}

/* ctl_ask_for with every request's 5 s. */
static int
ctl_ask(const char *path, const char *req, char *ans, size_t cap)
{
	return ctl_ask_for(path, req, ans, cap, 5);
}

/* One request whose answer is a sentence: printed.  0, 1. */
static int
ctl_request(const char *path, const char *req)
{
	char ans[FC_CTL_ANS_MAX + 1];

	if (ctl_ask(path, req, ans, sizeof(ans)) != 0)
		return 1;
	if (json)
		return print_json(json_pack("{s:b, s:s}", "ok", 1, "answer", ans));
	printf("%s\n", ans);
	return 0;
}

/* ---- flowcutd's own state (its control socket) ---- */

int
cmd_daemon(const char *control, int argc)
{
	char ans[FC_CTL_ANS_MAX + 1], *boot = NULL;
	json_int_t off = 0, hw = 0, host = 0, failed = 0;
	int prog = 0, gate = 0, cih = 0, refused = 0;
	json_error_t jerr;
	json_t *doc;

	if (argc != 0) {
		fprintf(stderr, "flowcutctl: daemon takes no argument\n");
		return 2;
	}
	if (ctl_ask(control, "status\n", ans, sizeof(ans)) != 0)
		return 1;
	doc = json_loads(ans, 0, &jerr);
	if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:b, s:s, s:I, s:I, s:I, s:I, s:b, "
					  "s:b, s:b}", "programmed", &prog, "boot_id", &boot,
					  "offloaded", &off, "cuts_in_hardware", &hw,
					  "cuts_on_host", &host, "cut_failed", &failed, "offload",
					  &gate, "cut_in_hardware", &cih, "settings_refused",
					  &refused) != 0) {
		fprintf(stderr, "flowcutctl: flowcutd's status is not what this flowcutctl reads: "
			"%s\n", jerr.text);
		json_decref(doc);
		return 1;
	}
	if (json)
		return print_json(doc);
	printf("programmed   %s\n", prog ? "yes" : "no (waiting for the coprocessor)");
	printf("boot id      %s\n", boot);
	printf("offloaded    %" JSON_INTEGER_FORMAT "\n", off);
	printf("cuts         %" JSON_INTEGER_FORMAT " in hardware, %" JSON_INTEGER_FORMAT
	       " on the host, %" JSON_INTEGER_FORMAT " failed\n", hw, host, failed);
	printf("settings     offload %s, cut in hardware %s%s\n", gate ? "on" : "off",
	       cih ? "on" : "off", refused ? " (the file was refused: see flowcutd's log)" : "");
	if (json_integer_value(json_object_get(doc, "never_cut_wide")) > 0)
		printf("WARNING      never_cut holds %" JSON_INTEGER_FORMAT " range(s) wider than a /16 "
		       "or /48 (never_cut_min_prefix lowered): nothing in them is ever cut\n",
		       json_integer_value(json_object_get(doc, "never_cut_wide")));
	json_decref(doc);
	return 0;
}

/* An address, prefix or range of one line, as a canonical range.  0, or 2 (said). */
static int
cut_target(const char *arg, struct fc_range *r)
{
	struct fc_list l = { 0 };
	long bad;

	if (strpbrk(arg, "\n#;") != NULL) {
		fprintf(stderr, "flowcutctl: '%s' is not an address, prefix or range\n", arg);
		return 2;
	}
	bad = fc_list_parse(arg, strlen(arg), &l, NULL, NULL);
	if (bad != 0 || l.n != 1) {
		fprintf(stderr, "flowcutctl: '%s' is not an address, prefix or range\n", arg);
		fc_list_free(&l);
		return 2;
	}
	*r = l.r[0];
	fc_list_free(&l);
	return 0;
}

/* "add"/"delete element inet flowcut cut4|cut6 { ELEMENT [timeout Ns] }". */
static int
cut_element(const char *verb, const struct fc_range *r, unsigned long secs)
{
	char elem[2 * INET6_ADDRSTRLEN + 8], cmd[256];
	const char *set = r->family == 4 ? FC_NFT_CUT4 : FC_NFT_CUT6;
	struct nft_ctx *nft = nft_ctx_new(NFT_CTX_DEFAULT);
	int rc;

	if (nft == NULL) {
		fprintf(stderr, "flowcutctl: libnftables: no context\n");
		return 1;
	}
	nft_ctx_buffer_error(nft);
	fc_range_format(r, elem, sizeof(elem));
	if (secs)
		snprintf(cmd, sizeof(cmd), "%s element " FC_NFT_TABLE_NAME " %s { %s timeout %lus }\n",
			 verb, set, elem, secs);
	else
		snprintf(cmd, sizeof(cmd), "%s element " FC_NFT_TABLE_NAME " %s { %s }\n", verb, set,
			 elem);
	rc = nft_run_cmd_from_buffer(nft, cmd);
	if (rc != 0)
		fprintf(stderr, "flowcutctl: nftables: %s element %s of " FC_NFT_TABLE_NAME " %s: %s",
			verb, elem, set, nft_ctx_get_error_buffer(nft));
	else if (json)
		rc = print_json(json_pack("{s:s, s:s, s:s, s:I}", "op", verb, "set", set, "element",
					  elem, "timeout", (json_int_t)secs));
	else if (secs)
		printf("cut %s for %lu s\n", elem, secs);
	else
		printf("%s %s\n", strcmp(verb, "add") == 0 ? "cut" : "uncut", elem);
	nft_ctx_free(nft);
	return rc == 0 ? 0 : 1;
}

int
cmd_cut(const char *control, bool cut, int argc, char **argv)
{
	struct fc_range r;
	unsigned long secs = 0;
	char *end;
	int rc;

	if (cut && argc == 2 && strcmp(argv[0], "--conn") == 0) {
		char req[64];
		uint64_t id = strtoull(argv[1], &end, 10);

		if (!isdigit((unsigned char)argv[1][0]) || *end) {
			fprintf(stderr, "flowcutctl: cut --conn: '%s' is not a connection id\n",
				argv[1]);
			return 2;
		}
		snprintf(req, sizeof(req), "cut-conn %" PRIu64 "\n", id);
		return ctl_request(control, req);
	}
	if (cut && argc == 3 && strcmp(argv[1], "--for") == 0) {
		secs = strtoul(argv[2], &end, 10);
		if (!isdigit((unsigned char)argv[2][0]) || *end || secs == 0 || secs > 86400 * 365) {
			fprintf(stderr, "flowcutctl: cut --for: '%s' is not 1 to 31536000 seconds\n",
				argv[2]);
			return 2;
		}
	} else if (argc != 1) {
		fprintf(stderr, cut ? "flowcutctl: cut ADDRESS|PREFIX|RANGE [--for SECONDS] | "
				      "cut --conn ID\n" : "flowcutctl: uncut ADDRESS|PREFIX|RANGE\n");
		return 2;
	}
	rc = cut_target(argv[0], &r);
	return rc ? rc : cut_element(cut ? "add" : "delete", &r, secs);
}

/*
 * A resync asked of flowcutd (root only).  flowcutd starts it and answers
 * at once with its number (the job runs over its loop's turns, fd_ctl.h);
 * --wait then asks `status` every 20 ms until that run is through
 * (`resyncs` past it, or at it and `resyncing` false), at most
 * FLOWCUTCTL_RESYNC_WAIT_S, and prints its figures: resync_last_ms (the
 * run's own time, flowcutd's clock), resync_taken_out (since start),
 * offloaded, and the wait as flowcutctl saw it.
 */
#define FLOWCUTCTL_RESYNC_WAIT_S 900
int
cmd_resync(const char *control, int argc, char **argv)
{
	char ans[FC_CTL_ANS_MAX + 1];
	json_int_t r = 0, n = 0, ms = 0, taken = 0, off = 0;
	bool wait = argc == 1 && strcmp(argv[0], "--wait") == 0;
	struct timespec t0, t1;
	json_error_t jerr;
	long long wait_ms;
	json_t *doc;
	int running = 0;

	if (argc > 1 || (argc == 1 && !wait)) {
		fprintf(stderr, "flowcutctl: resync [--wait]: '%s' is not --wait\n", argv[0]);
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (ctl_ask(control, "resync\n", ans, sizeof(ans)) != 0)
		return 1;
	doc = json_loads(ans, 0, &jerr);
	if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:I}", "resync", &r) != 0) {
		fprintf(stderr, "flowcutctl: resync: flowcutd's answer '%s': %s\n", ans, jerr.text);
		json_decref(doc);
		return 1;
	}
	json_decref(doc);
	if (!wait) {
		if (json)
			return print_json(json_pack("{s:I}", "resync", r));
		printf("resync %lld started\n", (long long)r);
		return 0;
	}
	for (;;) {
		if (ctl_ask(control, "status\n", ans, sizeof(ans)) != 0)
			return 1;
		doc = json_loads(ans, 0, &jerr);
		if (doc == NULL || json_unpack_ex(doc, &jerr, 0, "{s:I, s:b, s:I, s:I, s:I}",
						  "resyncs", &n, "resyncing", &running,
						  "resync_last_ms", &ms, "resync_taken_out", &taken,
						  "offloaded", &off) != 0) {
			fprintf(stderr, "flowcutctl: resync: flowcutd's status is not what this "
				"flowcutctl reads: %s\n", jerr.text);
			json_decref(doc);
			return 1;
		}
		json_decref(doc);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (n > r || (n == r && !running))
			break;
		if (t1.tv_sec - t0.tv_sec > FLOWCUTCTL_RESYNC_WAIT_S) {
			fprintf(stderr, "flowcutctl: resync %lld not through after %d s\n",
				(long long)r, FLOWCUTCTL_RESYNC_WAIT_S);
			return 1;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	}
	wait_ms = (t1.tv_sec - t0.tv_sec) * 1000LL + (t1.tv_nsec - t0.tv_nsec) / 1000000;

	if (json)
		return print_json(json_pack("{s:I, s:I, s:I, s:I, s:I}", "resync", r, "resync_last_ms",
					    ms, "resync_taken_out", taken, "offloaded", off,
					    "wait_ms", (json_int_t)wait_ms));
	printf("resync %lld: resync_last_ms %lld (the wait %lld ms), resync_taken_out "
	       "%lld, offloaded %lld\n", (long long)r, (long long)ms, wait_ms, (long long)taken,
	       (long long)off);
	return 0;
}

/* ---- why, triggers (flowcutd's control socket: fd_explain's answers) ---- */

/* A trailing --json, as the global one.  The arguments left. */
static int
json_tail(int argc, char **argv)
{
	if (argc > 0 && strcmp(argv[argc - 1], "--json") == 0) {
		json = true;
		return argc - 1;
	}
	return argc;
}

/* One request whose answer is a JSON object: parsed into *doc.  0, 1 (said). */
static int
ctl_ask_json(const char *control, const char *req, json_t **doc)
{
	static char ans[FC_CTL_ANS_MAX + 1];
	json_error_t jerr;

	if (ctl_ask(control, req, ans, sizeof(ans)) != 0)
		return 1;
	*doc = json_loads(ans, 0, &jerr);
	if (*doc == NULL || !json_is_object(*doc)) {
		fprintf(stderr, "flowcutctl: flowcutd's answer to %.*s is not what this flowcutctl "
			"reads: %s\n", (int)strcspn(req, "\n"), req, *doc ? "not an object" : jerr.text);
		json_decref(*doc);
		return 1;
	}
	return 0;
}

static const char *
jstr(const json_t *o, const char *key, const char *none)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v ? v : none;
}

/* A watched set's or list's part in a why: "set NAME: element E", "list PATH: line N (E)". */
static void
why_source(const json_t *s, const char *indent)
{
	if (strcmp(jstr(s, "kind", ""), "set") == 0)
		printf("%sset %s: element %s\n", indent, jstr(s, "name", "?"),
		       jstr(s, "element", "(none now)"));
	else if (strcmp(jstr(s, "kind", ""), "fingerprints") == 0)
		printf("%sfingerprints %s: line %" JSON_INTEGER_FORMAT "\n", indent,
		       jstr(s, "name", "?"), json_integer_value(json_object_get(s, "line")));
	else
		printf("%slist %s: line %" JSON_INTEGER_FORMAT " (%s)\n", indent, jstr(s, "name", "?"),
		       json_integer_value(json_object_get(s, "line")),
		       jstr(s, "entry", "not in the file's first 65,536 lines now"));
}

static void
why_conn(const json_t *c)
{
	json_t *src = json_object_get(c, "source");

	printf("  connection %" JSON_INTEGER_FORMAT ": server %s, client %s: ",
	       json_integer_value(json_object_get(c, "id")), jstr(c, "server", "?"),
	       jstr(c, "client", "?"));
	if (!json_is_true(json_object_get(c, "cut"))) {
		printf("%s%s%s\n", jstr(c, "why", "not cut"),
		       json_is_string(json_object_get(c, "never_cut")) ? ": never_cut " : "",
		       jstr(c, "never_cut", ""));
		return;
	}
	printf("cut by %s", jstr(c, "trigger", "?"));
	if (json_object_get(c, "when") == NULL) {
		printf(" (%s)\n", jstr(c, "record", "no record"));
		return;
	}
	printf(" at %s, %s, frames dropped since: ", jstr(c, "when", "?"),
	       json_is_true(json_object_get(c, "in_hardware")) ? "in hardware" : "on the host");
	if (json_is_true(json_object_get(c, "frames_read")))
		printf("%" JSON_INTEGER_FORMAT "\n", json_integer_value(json_object_get(c, "frames")));
	else
		printf("not read yet\n");
	if (json_object_get(c, "by") != NULL && !json_is_object(src)) {
		printf("    %s", jstr(c, "by", ""));
		if (json_object_get(c, "line") != NULL)
			printf(": its list line %" JSON_INTEGER_FORMAT,
			       json_integer_value(json_object_get(c, "line")));
		printf("\n");
	}
	if (json_is_object(src))
		why_source(src, "    ");
}

/* why ADDR | why --conn ID: which trigger cuts it, or why nothing does. */
int
cmd_why(const char *control, int argc, char **argv)
{
	char req[FC_CTL_MAX];
	json_t *doc, *v;
	size_t i;
	char *end;

	argc = json_tail(argc, argv);
	if (argc == 2 && strcmp(argv[0], "--conn") == 0) {
		uint64_t id = strtoull(argv[1], &end, 10);

		if (!isdigit((unsigned char)argv[1][0]) || *end) {
			fprintf(stderr, "flowcutctl: why --conn: '%s' is not a connection id\n",
				argv[1]);
			return 2;
		}
		snprintf(req, sizeof(req), "why-conn %" PRIu64 "\n", id);
	} else if (argc == 1 && strlen(argv[0]) < 64 && !strpbrk(argv[0], "\n ")) {
		snprintf(req, sizeof(req), "why %s\n", argv[0]);
	} else {
		fprintf(stderr, "flowcutctl: why ADDRESS | why --conn ID (an IPv4 or IPv6 address)\n");
		return 2;
	}
	if (ctl_ask_json(control, req, &doc) != 0)
		return 1;
	if (json)
		return print_json(doc);
	if (json_object_get(doc, "address") == NULL) {	/* why-conn */
		why_conn(doc);
		json_decref(doc);
		return 0;
	}
	printf("%s: %s\n", jstr(doc, "address", "?"), jstr(doc, "why", "?"));
	if (json_is_string(json_object_get(doc, "never_cut")))
		printf("  never_cut entry %s\n", jstr(doc, "never_cut", ""));
	json_array_foreach(json_object_get(doc, "hand"), i, v)
		printf("  by hand: cut set element %s\n", json_string_value(v));
	json_array_foreach(json_object_get(doc, "sources"), i, v)
		why_source(v, "  ");
	json_array_foreach(json_object_get(doc, "connections"), i, v)
		why_conn(v);
	json_decref(doc);
	return 0;
}

/* triggers: each watched set's and list's figures. */
int
cmd_triggers(const char *control, int argc, char **argv)
{
	json_t *doc, *v;
	size_t i;

	if (json_tail(argc, argv) != 0) {
		fprintf(stderr, "flowcutctl: triggers takes no argument (but --json)\n");
		return 2;
	}
	if (ctl_ask_json(control, "triggers\n", &doc) != 0)
		return 1;
	if (json)
		return print_json(doc);
	printf("%-12s %-8s %10s %10s %12s  %s\n", "kind", "followed", "elements", "cut", "frames",
	       "name");
	json_array_foreach(json_object_get(doc, "sources"), i, v) {
		char frames[24] = "not read";

		if (json_is_true(json_object_get(doc, "frames_read")))
			snprintf(frames, sizeof(frames), "%" JSON_INTEGER_FORMAT,
				 json_integer_value(json_object_get(v, "frames")));
		printf("%-12s %-8s %10" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT " %12s  %s\n",
		       jstr(v, "kind", "?"), json_is_true(json_object_get(v, "followed")) ? "yes" : "no",
		       json_integer_value(json_object_get(v, "elements")),
		       json_integer_value(json_object_get(v, "cut")), frames, jstr(v, "name", "?"));
	}
	if (json_integer_value(json_object_get(doc, "sources_left")) > 0)
		printf("(and %" JSON_INTEGER_FORMAT " sources more: no room in flowcutd's answer; "
		       "flowcutd.json's triggers has them all)\n",
		       json_integer_value(json_object_get(doc, "sources_left")));
	json_decref(doc);
	return 0;
}
