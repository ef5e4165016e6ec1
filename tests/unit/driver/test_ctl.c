/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_ctl, flowcutd's control socket: its requests parsed (rows), who may
 * ask what (fd_ctl_allowed as rows: uid, gids, request -> allowed or
 * refused and why), and, as root, a real socket asked by `nobody` (a
 * child: setgroups, setresgid, setresuid) - refused for cut-conn, allowed
 * for status when its group is the read group, refused when it is not, the
 * refusal logged once however often it comes - and the socket's folder
 * and modes.  Everything made under one folder in /tmp, removed at the end
 * even when a case fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fd_ctl.h"

#define NOBODY 65534	/* nobody, and nogroup: Debian's */
#define OTHER_GID 4242	/* a group nobody is in unless a case puts it there */

#define NOT_A_REQUEST "not a request (cut-conn ID, status, resync, why ADDR, why-conn ID, " \
	"triggers, counters, conns FROM N, cuts [N], settings, settings-set KEY VALUE)"
#define SECRET "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define NO_SECRET(uid, op) "uid " uid " is not root and sent no secret (" op " changes " \
	"flowcutd's state: root, or the operator's secret)"
#define ROOTS(uid, op) "uid " uid " is not root (" op " is root's: the operator's secret does " \
	"not open it)"

static void
test_parse_rows(void **state)
{
	static const struct {
		const char *text;
		int op;		/* -1: refused with err */
		uint64_t id;
		const char *err;
		uint8_t family;	/* why's: 4, 6, or 0 */
		const char *addr;	/* ... its bytes, as a string of them */
	} rows[] = {
		{ "why 198.18.1.2\n", FD_CTL_WHY, 0, NULL, 4, "\xc6\x12\x01\x02" },
		{ "why 0.0.0.0", FD_CTL_WHY, 0, NULL, 4, "\0\0\0\0" },
		{ "why 2001:db8::1\n", FD_CTL_WHY, 0, NULL, 6,
		  "\x20\x01\x0d\xb8\0\0\0\0\0\0\0\0\0\0\0\x01" },
		{ "why ::ffff:198.18.1.2\n", FD_CTL_WHY, 0, NULL, 6,
		  "\0\0\0\0\0\0\0\0\0\0\xff\xff\xc6\x12\x01\x02" },
		{ "why 198.18.1.0/24\n", -1, 0, "why: '198.18.1.0/24' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why 198.18.1\n", -1, 0, "why: '198.18.1' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why example.org\n", -1, 0, "why: 'example.org' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why 2001:db8::1::2\n", -1, 0, "why: '2001:db8::1::2' is not an IPv4 or IPv6 address", 0, NULL },
		{ "why \n", -1, 0, "why: the address is missing, too long (0 bytes) or not printable", 0, NULL },
		{ "why 1.2.3.4 5\n", -1, 0,
		  "why: the address is missing, too long (9 bytes) or not printable", 0, NULL },
		{ "why 1.2.3.4\x1b[2J\n", -1, 0,
		  "why: the address is missing, too long (11 bytes) or not printable", 0, NULL },
		{ "why 1111:2222:3333:4444:5555:6666:7777:8888:9999:0000\n", -1, 0,
		  "why: the address is missing, too long (49 bytes) or not printable", 0, NULL },
		{ "why\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "whyx 1.2.3.4\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "why-conn 7\n", FD_CTL_WHY_CONN, 7, NULL, 0, NULL },
		{ "why-conn 18446744073709551615", FD_CTL_WHY_CONN, UINT64_MAX, NULL, 0, NULL },
		{ "why-conn 1.2.3.4\n", -1, 0, "why-conn: '1.2.3.4' is not a connection id", 0, NULL },
		{ "why-conn \n", -1, 0, "why-conn: the id is missing or too long", 0, NULL },
		{ "why-conn\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "triggers\n", FD_CTL_TRIGGERS, 0, NULL, 0, NULL },
		{ "triggers", FD_CTL_TRIGGERS, 0, NULL, 0, NULL },
		{ "triggers --json\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn 0\n", FD_CTL_CUT_CONN, 0, NULL, 0, NULL },
		{ "cut-conn 42", FD_CTL_CUT_CONN, 42, NULL, 0, NULL },
		{ "cut-conn 18446744073709551615\n", FD_CTL_CUT_CONN, UINT64_MAX, NULL, 0, NULL },
		{ "status\n", FD_CTL_STATUS, 0, NULL, 0, NULL },
		{ "status", FD_CTL_STATUS, 0, NULL, 0, NULL },
		{ "resync\n", FD_CTL_RESYNC, 0, NULL, 0, NULL },
		{ "resync", FD_CTL_RESYNC, 0, NULL, 0, NULL },
		{ "resync 1\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "resyncs\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn 18446744073709551616\n", -1, 0,
		  "cut-conn: '18446744073709551616' is not a connection id", 0, NULL },
		{ "cut-conn 12a\n", -1, 0, "cut-conn: '12a' is not a connection id", 0, NULL },
		{ "cut-conn \n", -1, 0, "cut-conn: the id is missing or too long", 0, NULL },
		{ "cut-conn 000000000000000000000001\n", -1, 0,
		  "cut-conn: the id is missing or too long", 0, NULL },
		{ "cut-conn\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "cut-conn5\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "status 1\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "statusx\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "status\n\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "STATUS\n", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "", -1, 0, NOT_A_REQUEST, 0, NULL },
		{ "uncut 5\n", -1, 0, NOT_A_REQUEST, 0, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_req r = { .op = FD_CTL_CUT_CONN, .id = 777 };
		char err[160] = "";
		int rc = fd_ctl_parse(rows[i].text, strlen(rows[i].text), &r, err, sizeof(err));

		print_message("row %zu\n", i);
		if (rows[i].op < 0) {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, rows[i].err);
		} else {
			assert_int_equal(rc, 0);
			assert_int_equal(r.op, rows[i].op);
			assert_true(r.id == rows[i].id);
			assert_int_equal(r.family, rows[i].family);
			if (rows[i].family)
				assert_memory_equal(r.addr, rows[i].addr, rows[i].family == 4 ? 4 : 16);
		}
	}
}

/* The page's requests, and the auth line: what each parses to, or why not. */
#define BAD(text, err) { text, -1, err, 0, 0, 0, 0, -1, "", "", "", "", false, NULL }
static void
test_page_parse_rows(void **state)
{
	static char big[FC_CTL_MAX + 2];
	static const struct {
		const char *text;	/* NULL: big (a request over FC_CTL_MAX) */
		int op;			/* -1: refused with err */
		const char *err;
		uint64_t id;		/* conns' FROM */
		unsigned int n;
		uint8_t family, plen;
		int32_t port;
		const char *state, *action, *key, *value;
		bool lines;
		const char *secret;	/* the auth line's, NULL none */
	} rows[] = {
		{ "counters\n", FD_CTL_COUNTERS, NULL, 0, 0, 0, 0, -1, "", "", "", "", false, NULL },
		BAD("counters 1\n", NOT_A_REQUEST),
		{ "settings\n", FD_CTL_SETTINGS, NULL, 0, 0, 0, 0, -1, "", "", "", "", false, NULL },
		{ "cuts\n", FD_CTL_CUTS, NULL, 0, 50, 0, 0, -1, "", "", "", "", false, NULL },
		{ "cuts 100\n", FD_CTL_CUTS, NULL, 0, 100, 0, 0, -1, "", "", "", "", false, NULL },
		{ "cuts 1", FD_CTL_CUTS, NULL, 0, 1, 0, 0, -1, "", "", "", "", false, NULL },
		BAD("cuts 101\n", "cuts: N is not 1 to 100"),
		BAD("cuts 0\n", "cuts: N is not 1 to 100"),
		BAD("cuts x\n", "cuts: N is not 1 to 100"),
		BAD("cuts \n", "cuts: N is not 1 to 100"),
		{ "conns 0 100\n", FD_CTL_CONNS, NULL, 0, 100, 0, 0, -1, "", "", "", "", false, NULL },
		{ "conns 77 5 addr=198.18.0.0/15 port=443 state=ESTABLISHED action=DROP\n",
		  FD_CTL_CONNS, NULL, 77, 5, 4, 15, 443, "ESTABLISHED", "DROP", "", "", false, NULL },
		{ "conns 1 1 action=FWD addr=2001:2::1\n", FD_CTL_CONNS, NULL, 1, 1, 6, 128, -1, "",
		  "FWD", "", "", false, NULL },
		{ "conns 1 1 addr=2001:2::/48 state=cut\n", FD_CTL_CONNS, NULL, 1, 1, 6, 48, -1,
		  "cut", "", "", "", false, NULL },
		{ "conns 1 1 port=0\n", FD_CTL_CONNS, NULL, 1, 1, 0, 0, 0, "", "", "", "", false,
		  NULL },
		BAD("conns 0\n", "conns: N is missing (conns FROM N [filters])"),
		BAD("conns\n", NOT_A_REQUEST),
		BAD("conns x 5\n", "conns: 'x' is not a connection id"),
		BAD("conns 0 101\n", "conns: N is not 1 to 100"),
		BAD("conns 0 5 port=65536\n", "conns: port= is not 0 to 65535"),
		BAD("conns 0 5 port=\n", "conns: filter 1 is not one (addr=, port=, state=, "
		  "action=, each once)"),
		BAD("conns 0 5 port=1 port=2\n", "conns: filter 2 is given twice (addr=, port=, "
		  "state=, action=, each once)"),
		BAD("conns 0 5 proto=tcp\n", "conns: filter 1 is not one (addr=, port=, state=, "
		  "action=, each once)"),
		BAD("conns 0 5 addr=198.18.0.0/33\n", "conns: addr=: '198.18.0.0/33' is not an address or ADDR/LEN"),
		BAD("conns 0 5 addr=2001:2::/129\n", "conns: addr=: '2001:2::/129' is not an address or ADDR/LEN"),
		BAD("conns 0 5 addr=1.2.3.4/\n", "conns: addr=: '1.2.3.4/' is not an address or ADDR/LEN"),
		BAD("conns 0 5 addr=example.org\n", "conns: addr=: 'example.org' is not an address or ADDR/LEN"),
		BAD("conns 0 5 state=a-b\n", "conns: state= is not a word of letters, digits and _ "
		  "(15 at most)"),
		BAD("conns 0 5 action=ABCDEFGHIJKLMNOP\n", "conns: action= is not a word of "
		  "letters, digits and _ (15 at most)"),
		BAD("conns 0 5  port=1\n", "conns: filter 1 is not one (addr=, port=, state=, "
		  "action=, each once)"),
		{ "settings-set cut_in_hardware off\n", FD_CTL_SETTINGS_SET, NULL, 0, 0, 0, 0, -1, "",
		  "", "cut_in_hardware", "off", false, NULL },
		{ "settings-set tls_ports 443 8443\n", FD_CTL_SETTINGS_SET, NULL, 0, 0, 0, 0, -1, "",
		  "", "tls_ports", "443 8443", false, NULL },
		{ "settings-set watched_set\ninet f2b-table *\nip crowdsec crowdsec-*\n",
		  FD_CTL_SETTINGS_SET, NULL, 0, 0, 0, 0, -1, "", "", "watched_set",
		  "inet f2b-table *\nip crowdsec crowdsec-*", true, NULL },
		{ "settings-set never_cut\n", FD_CTL_SETTINGS_SET, NULL, 0, 0, 0, 0, -1, "", "",
		  "never_cut", "", true, NULL },
		{ "settings-set never_cut", FD_CTL_SETTINGS_SET, NULL, 0, 0, 0, 0, -1, "", "",
		  "never_cut", "", true, NULL },
		BAD("settings-set watched_set\ninet t a\n\nip t b\n", "settings-set watched_set: line 2 is empty"),
		BAD("settings-set watched_set\n\n", "settings-set watched_set: an empty line"),
		BAD("settings-set watched_list\n/a\x01\n", "settings-set watched_list: line 1 holds a byte that is not printable (0x01)"),
		BAD("settings-set cut_in_hardware \n", "settings-set cut_in_hardware: the value is missing"),
		BAD("settings-set offload o\tn\n", "settings-set offload: line 1 holds a byte that is not printable (0x09)"),
		BAD("settings-set Offload on\n", "settings-set: the key is not lowercase letters, digits and _"),
		BAD("settings-set  on\n", "settings-set: the key is missing or longer than 31 bytes"),
		BAD("settings-set abcdefghijklmnopqrstuvwxyz_abcdef on\n", "settings-set: the key is missing or longer than 31 bytes"),
		BAD("settings-set\n", NOT_A_REQUEST),
		BAD("settings-setx a b\n", NOT_A_REQUEST),
		{ "auth " SECRET "\nsettings-set offload off\n", FD_CTL_SETTINGS_SET, NULL, 0, 0, 0,
		  0, -1, "", "", "offload", "off", false, SECRET },
		{ "auth " SECRET "\ncut-conn 9\n", FD_CTL_CUT_CONN, NULL, 9, 0, 0, 0, -1, "", "", "",
		  "", false, SECRET },
		{ "auth short\nstatus\n", FD_CTL_STATUS, NULL, 0, 0, 0, 0, -1, "", "", "", "", false,
		  "short" },
		BAD("auth " SECRET, "auth: the request is missing after the secret's line"),
		BAD("auth " SECRET "\n", NOT_A_REQUEST),
		BAD("auth \nstatus\n", "auth: the secret is missing"),
		BAD("auth " SECRET SECRET "x\nstatus\n", "auth: the secret is longer than 128 "
		  "bytes"),
		BAD("auth a b\nstatus\n", "auth: the secret holds a byte that is not printable"),
		BAD("auth " SECRET "\nauth " SECRET "\nstatus\n", NOT_A_REQUEST),
		BAD("auth\nstatus\n", NOT_A_REQUEST),
		BAD(NULL, "request longer than 4096 bytes"),
	};

	(void)state;
	memset(big, 'a', sizeof(big));
	memcpy(big, "settings-set watched_list\n", 26);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_req r = { .op = FD_CTL_CUT_CONN, .id = 777 };
		char err[256] = "";
		const char *text = rows[i].text ? rows[i].text : big;
		size_t len = rows[i].text ? strlen(text) : FC_CTL_MAX + 1;
		int rc = fd_ctl_parse(text, len, &r, err, sizeof(err));

		print_message("row %zu\n", i);
		if (rows[i].op < 0) {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, rows[i].err);
			assert_int_equal(r.id, 777);	/* untouched */
			continue;
		}
		assert_int_equal(rc, 0);
		assert_int_equal(r.op, rows[i].op);
		assert_true(r.id == rows[i].id);
		assert_int_equal(r.n, rows[i].n);
		assert_int_equal(r.family, rows[i].family);
		assert_int_equal(r.plen, rows[i].plen);
		assert_int_equal(r.port, rows[i].port);
		assert_string_equal(r.state, rows[i].state);
		assert_string_equal(r.action, rows[i].action);
		assert_string_equal(r.key, rows[i].key);
		assert_string_equal(r.value, rows[i].value);
		assert_int_equal(r.lines, rows[i].lines);
		assert_int_equal(r.auth, rows[i].secret != NULL);
		if (rows[i].secret) {
			assert_int_equal(r.secret_len, strlen(rows[i].secret));
			assert_memory_equal(r.secret, rows[i].secret, r.secret_len);
		}
	}
}

static void
test_allowed_rows(void **state)
{
	static const gid_t adm_other[] = { 4, OTHER_GID }, adm[] = { 4 };
	static const struct {
		bool group;	/* the read group is OTHER_GID, "flowcut-read" */
		uid_t uid;
		gid_t gid;
		size_t ngroups;
		const gid_t *groups;
		enum fd_ctl_op op;
		const char *why;	/* NULL: allowed */
		enum fc_secret_verdict v;	/* the request's secret (FC_SECRET_NONE: none) */
	} rows[] = {
		{ false, 0, 0, 0, NULL, FD_CTL_CUT_CONN, NULL, FC_SECRET_NONE },
		{ false, 0, 0, 0, NULL, FD_CTL_STATUS, NULL, FC_SECRET_NONE },
		{ true, 0, NOBODY, 0, NULL, FD_CTL_CUT_CONN, NULL, FC_SECRET_NONE },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_STATUS,
		  "uid 65534 is not root and no control_read_group is set", FC_SECRET_NONE },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_CUT_CONN,
		  NO_SECRET("65534", "cut-conn"), FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_STATUS, NULL, FC_SECRET_NONE },	/* its own group */
		{ true, 1000, 1000, 2, adm_other, FD_CTL_STATUS, NULL, FC_SECRET_NONE },	/* a supplementary one */
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_WHY, NULL, FC_SECRET_NONE },	/* why, triggers: read */
		{ true, 1000, 1000, 2, adm_other, FD_CTL_WHY_CONN, NULL, FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_TRIGGERS, NULL, FC_SECRET_NONE },
		{ true, 1000, 1000, 1, adm, FD_CTL_TRIGGERS,
		  "uid 1000 is not root and not in group flowcut-read", FC_SECRET_NONE },
		{ true, 1000, 1000, 2, adm_other, FD_CTL_CUT_CONN,
		  NO_SECRET("1000", "cut-conn"), FC_SECRET_NONE },
		{ true, NOBODY, NOBODY, 0, NULL, FD_CTL_STATUS,
		  "uid 65534 is not root and not in group flowcut-read", FC_SECRET_NONE },
		{ true, 1000, 1000, 1, adm, FD_CTL_STATUS,
		  "uid 1000 is not root and not in group flowcut-read", FC_SECRET_NONE },
		/* gid 0 is no root: only uid 0 is */
		{ true, NOBODY, 0, 0, NULL, FD_CTL_CUT_CONN,
		  NO_SECRET("65534", "cut-conn"), FC_SECRET_NONE },
		/* a resync is a change: root only, the read group or not */
		{ false, 0, 0, 0, NULL, FD_CTL_RESYNC, NULL, FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_RESYNC,
		  ROOTS("65534", "resync"), FC_SECRET_NONE },
		{ false, 1000, 1000, 0, NULL, FD_CTL_RESYNC,
		  ROOTS("1000", "resync"), FC_SECRET_NONE },
		/* the page's reads are reads, settings-set a change */
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_COUNTERS, NULL, FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_CONNS, NULL, FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_CUTS, NULL, FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_SETTINGS, NULL, FC_SECRET_NONE },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_SETTINGS,
		  "uid 65534 is not root and no control_read_group is set", FC_SECRET_NONE },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_SETTINGS_SET,
		  NO_SECRET("65534", "settings-set"), FC_SECRET_NONE },
		/* the secret: right lets anyone change, wrong or none accepted does not */
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_SETTINGS_SET, NULL, FC_SECRET_RIGHT },
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_CUT_CONN, NULL, FC_SECRET_RIGHT },
		/* ... but not a resync: root's alone (the page never sends it) */
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_RESYNC, ROOTS("65534", "resync"),
		  FC_SECRET_RIGHT },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_RESYNC, ROOTS("65534", "resync"),
		  FC_SECRET_RIGHT },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_SETTINGS_SET,
		  "uid 65534: the secret is wrong (settings-set changes flowcutd's state: root, or "
		  "the operator's secret)", FC_SECRET_WRONG },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_CUT_CONN,
		  "uid 65534 is not root and no secret is accepted now: the secret file is missing "
		  "or refused (cut-conn changes flowcutd's state; flowcutd's log says why)",
		  FC_SECRET_REFUSED },
		/* a secret opens no read: reads stay the read group's */
		{ false, NOBODY, NOBODY, 0, NULL, FD_CTL_CONNS,
		  "uid 65534 is not root and no control_read_group is set", FC_SECRET_RIGHT },
		/*
		 * a read carrying a secret (the page's, for its operator): served only on the
		 * right one, whatever the peer's group; root needs none
		 */
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_CONNS, NULL, FC_SECRET_RIGHT },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_STATUS,
		  "uid 65534: the secret is wrong (a read that carries one is served only when it "
		  "is right)", FC_SECRET_WRONG },
		{ true, NOBODY, OTHER_GID, 0, NULL, FD_CTL_SETTINGS,
		  "uid 65534: no secret is accepted now: the secret file is missing or refused "
		  "(flowcutd's log says why)", FC_SECRET_REFUSED },
		{ false, 0, 0, 0, NULL, FD_CTL_CONNS,
		  "uid 0: the secret is wrong (a read that carries one is served only when it is "
		  "right)", FC_SECRET_WRONG },
		/*
		 * root needs none, and a broken file does not refuse its change; but a wrong
		 * one is refused, root's too (a page run as root forwards whatever was typed)
		 */
		{ false, 0, 0, 0, NULL, FD_CTL_SETTINGS_SET, NULL, FC_SECRET_NONE },
		{ false, 0, 0, 0, NULL, FD_CTL_SETTINGS_SET,
		  "uid 0: the secret is wrong (settings-set changes flowcutd's state: root, or the "
		  "operator's secret; a request that carries one is served only when it is right)",
		  FC_SECRET_WRONG },
		{ false, 0, 0, 0, NULL, FD_CTL_CUT_CONN, NULL, FC_SECRET_REFUSED },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_access a = { .read_group = rows[i].group, .gid = OTHER_GID,
					   .name = "flowcut-read" };
		struct fd_ctl_peer p = { .uid = rows[i].uid, .gid = rows[i].gid,
					 .ngroups = rows[i].ngroups, .groups = rows[i].groups };
		char why[256] = "";
		int rc = fd_ctl_allowed(&a, &p, rows[i].op, rows[i].v, why, sizeof(why));

		print_message("row %zu: uid %u op %d\n", i, (unsigned int)rows[i].uid, rows[i].op);
		if (rows[i].why == NULL) {
			assert_int_equal(rc, 0);
		} else {
			assert_int_equal(rc, -EACCES);
			assert_string_equal(why, rows[i].why);
		}
	}
}

/* ---- a real socket, asked by nobody (root only) ---- */

static char top[] = "/tmp/fc-ctl-XXXXXX";
static bool have_top;
static unsigned int handled;	/* requests the handler saw: a refused one changes nothing */

static void
handler(void *arg, const struct fd_ctl_req *req, char *ans, size_t cap)
{
	(void)arg;
	handled++;
	snprintf(ans, cap, req->op == FD_CTL_STATUS ? "ok {\"status\":true}\n" :
		 req->op == FD_CTL_RESYNC ? "ok {\"resyncs\":1}\n" :
		 req->op == FD_CTL_SETTINGS_SET ? "ok set\n" : "ok cut\n");
}

static int
setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	if (mkdtemp(top) == NULL)
		return -1;
	have_top = true;
	return chmod(top, 0755);	/* nobody may walk to the folders below */
}

static int
teardown(void **state)
{
	char cmd[64];

	(void)state;
	if (!have_top)
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	return system(cmd) == 0 ? 0 : -1;
}

#define SKIP_UNLESS_ROOT()						\
	do {								\
		if (geteuid() != 0) {					\
			print_message("skipped: needs root (setresuid to nobody)\n"); \
			skip();						\
		}							\
	} while (0)

/*
 * A child as uid `uid` (groups: gid and the `ngroups` of `groups`) sends
 * `req` to `path` while this process serves; its answer, or "connect:
 * ERRNO TEXT", in out.
 */
static void
ask_as(struct fd_ctl *c, const char *path, uid_t uid, gid_t gid, size_t ngroups,
       const gid_t *groups, const char *req, char *out, size_t cap)
{
	int p[2];
	pid_t pid;
	size_t got = 0;
	int status;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		char ans[FC_CTL_ANS_MAX + 64];
		ssize_t n;
		int s;

		close(p[0]);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		if (setgroups(ngroups, groups) != 0 || setresgid(gid, gid, gid) != 0 ||
		    setresuid(uid, uid, uid) != 0)
			_exit(3);
		s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			n = snprintf(ans, sizeof(ans), "connect: %s", strerror(errno));
		} else if (send(s, req, strlen(req), 0) < 0) {
			n = snprintf(ans, sizeof(ans), "send: %s", strerror(errno));
		} else {
			n = recv(s, ans, sizeof(ans) - 1, 0);
			if (n < 0)
				n = snprintf(ans, sizeof(ans), "recv: %s", strerror(errno));
		}
		_exit(write(p[1], ans, (size_t)n) == n ? 0 : 4);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf[2] = { { .fd = fd_ctl_fd(c), .events = POLLIN },
					{ .fd = p[0], .events = POLLIN } };
		ssize_t n;

		assert_true(poll(pf, 2, 5000) > 0);
		if (pf[0].revents & POLLIN)
			fd_ctl_serve(c);
		if (!(pf[1].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(p[0], out + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	out[got] = '\0';
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* One asking and its answer, row by row. */
struct ask {
	const char *what;
	bool group;		/* the read group set: gid RG, name "flowcut-read" */
	gid_t rg;
	bool open_up;		/* folder 0755, socket 0666: the modes no longer keep anyone out */
	uid_t uid;
	gid_t gid;
	gid_t extra;		/* a supplementary group, 0 none */
	const char *req;
	const char *want;	/* the answer */
	bool handled;		/* the handler saw it */
};

static void
test_nobody_asks(void **state)
{
	static const struct ask rows[] = {
		/* nogroup is the read group: status answered, a cut refused */
		{ "in the read group, status", true, NOBODY, false, NOBODY, NOBODY, 0,
		  "status\n", "ok {\"status\":true}\n", true },
		{ "in the read group, cut-conn", true, NOBODY, false, NOBODY, NOBODY, 0,
		  "cut-conn 5\n",
		  "error refused: " NO_SECRET("65534", "cut-conn") "\n", false },
		{ "in the read group by a supplementary group", true, OTHER_GID, false, NOBODY,
		  NOBODY, OTHER_GID, "status\n", "ok {\"status\":true}\n", true },
		/* not in it: the socket's mode keeps nobody out, and so does the check */
		{ "not in the read group", true, OTHER_GID, false, NOBODY, NOBODY, 0, "status\n",
		  "connect: Permission denied", false },
		{ "not in the read group, the socket opened up", true, OTHER_GID, true, NOBODY,
		  NOBODY, 0, "status\n",
		  "error refused: uid 65534 is not root and not in group flowcut-read\n", false },
		{ "not in the read group, the socket opened up, cut-conn", true, OTHER_GID, true,
		  NOBODY, NOBODY, 0, "cut-conn 5\n",
		  "error refused: uid 65534 is not root and not in group flowcut-read\n", false },
		{ "no read group", false, 0, false, NOBODY, NOBODY, 0, "status\n",
		  "connect: Permission denied", false },
		{ "no read group, the socket opened up, cut-conn", false, 0, true, NOBODY, NOBODY, 0,
		  "cut-conn 5\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "a stranger's junk is refused before it is parsed", false, 0, true, NOBODY,
		  NOBODY, 0, "junk\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "in the read group, junk", true, NOBODY, false, NOBODY, NOBODY, 0, "junk\n",
		  "error " NOT_A_REQUEST "\n", false },
		{ "root, cut-conn", true, NOBODY, false, 0, 0, 0, "cut-conn 5\n", "ok cut\n", true },
		{ "in the read group, resync", true, NOBODY, false, NOBODY, NOBODY, 0, "resync\n",
		  "error refused: " ROOTS("65534", "resync") "\n", false },
		{ "root, resync", false, 0, false, 0, 0, 0, "resync\n", "ok {\"resyncs\":1}\n",
		  true },
		{ "root, no read group, status", false, 0, false, 0, 0, 0, "status\n",
		  "ok {\"status\":true}\n", true },
	};
	char dir[128], path[160], ans[FC_CTL_ANS_MAX + 64];

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct ask *r = &rows[i];
		struct fd_ctl_access a = { .read_group = r->group, .gid = r->rg,
					   .name = "flowcut-read" };
		struct fd_ctl *c = fd_ctl_open(path, &a, handler, NULL);
		unsigned int before = handled;

		print_message("row %zu: %s\n", i, r->what);
		assert_non_null(c);
		if (r->open_up) {
			assert_int_equal(chmod(dir, 0755), 0);
			assert_int_equal(chmod(path, 0666), 0);
		}
		ask_as(c, path, r->uid, r->gid, r->extra ? 1 : 0, &r->extra, r->req, ans,
		       sizeof(ans));
		fd_ctl_close(c);
		assert_string_equal(ans, r->want);
		assert_int_equal(handled - before, r->handled ? 1 : 0);
	}
}

/*
 * fc_secret_make's folder and temporary as rows: the folder's mode and
 * owner (or none), a crash's temporary there -> rc, and after it the
 * secret there or nothing, and never a temporary left.
 */
static void
make_rows(void)
{
	static const struct {
		const char *what;
		mode_t mode;		/* the folder's; 0: none */
		uid_t uid;
		bool stale;		/* a crash's temporary there */
		int rc;
	} rows[] = {
		{ "a folder of root's, 0700", 0700, 0, false, 1 },
		{ "0755: others may not write, made", 0755, 0, false, 1 },
		{ "a crash's temporary there: removed, made", 0700, 0, true, 1 },
		{ "the folder 0777: refused, nothing made", 0777, 0, false, -EPERM },
		{ "the folder 0770: refused", 0770, 0, false, -EPERM },
		{ "the folder nobody's: refused", 0700, NOBODY, false, -EPERM },
		{ "no folder: refused, none made", 0, 0, false, -ENOENT },
	};
	char dir[160], path[200], tmp[240], why[512], hex[FC_SECRET_HEX + 1];

	snprintf(dir, sizeof(dir), "%s/secret-dir", top);
	snprintf(path, sizeof(path), "%s/web.secret", dir);
	snprintf(tmp, sizeof(tmp), "%s/.web.secret.%ld.tmp", dir, (long)getpid());
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("make row %zu: %s\n", i, rows[i].what);
		if (rows[i].mode != 0) {
			assert_int_equal(mkdir(dir, 0700), 0);
			if (rows[i].stale) {
				FILE *f = fopen(tmp, "w");

				assert_non_null(f);
				fclose(f);	/* empty: a crash before its write */
			}
			assert_int_equal(chmod(dir, rows[i].mode), 0);
			assert_int_equal(chown(dir, rows[i].uid, 0), 0);
		}
		why[0] = '\0';
		assert_int_equal(fc_secret_make(path, why, sizeof(why)), rows[i].rc);
		if (rows[i].rc == 1)
			assert_int_equal(fc_secret_read(path, hex, why, sizeof(why)), 0);
		else {
			assert_non_null(strstr(why, path));	/* said, with the path */
			assert_int_equal(access(path, F_OK), -1);
		}
		assert_int_equal(access(tmp, F_OK), -1);	/* no temporary left */
		unlink(path);
		rmdir(dir);
	}
}

/*
 * The secret file (fc_secret) as rows: its mode, owner and text -> the
 * verdict on a given secret; then the socket asked by nobody (not in the
 * read group, the socket opened up) with an auth line.
 */
static void
test_secret_rows(void **state)
{
	static const struct {
		const char *what;
		const char *text;	/* the file's; NULL: no file */
		mode_t mode;
		uid_t uid;
		const char *given;	/* NULL: none */
		enum fc_secret_verdict v;
	} rows[] = {
		{ "right", SECRET "\n", 0600, 0, SECRET, FC_SECRET_RIGHT },
		{ "right, no newline", SECRET, 0400, 0, SECRET, FC_SECRET_RIGHT },
		{ "uppercase in the file, lowercase given: compared as text", "0123456789ABCDEF0123456789abcdef0123456789abcdef"
		  "0123456789abcdef\n", 0600, 0, SECRET, FC_SECRET_WRONG },
		{ "wrong, its last digit", SECRET "\n", 0600, 0,
		  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdee", FC_SECRET_WRONG },
		{ "too short", SECRET "\n", 0600, 0, "0123456789abcdef", FC_SECRET_WRONG },
		{ "too long", SECRET "\n", 0600, 0, SECRET "0", FC_SECRET_WRONG },
		{ "none given", SECRET "\n", 0600, 0, NULL, FC_SECRET_NONE },
		{ "the file 0644", SECRET "\n", 0644, 0, SECRET, FC_SECRET_REFUSED },
		{ "the file 0640", SECRET "\n", 0640, 0, SECRET, FC_SECRET_REFUSED },
		{ "the file 0602", SECRET "\n", 0602, 0, SECRET, FC_SECRET_REFUSED },
		{ "the file nobody's", SECRET "\n", 0600, NOBODY, SECRET, FC_SECRET_REFUSED },
		{ "no file", NULL, 0600, 0, SECRET, FC_SECRET_REFUSED },
		{ "63 digits", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n",
		  0600, 0, "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde",
		  FC_SECRET_REFUSED },
		{ "not hex", "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n", 0600,
		  0, "g123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		  FC_SECRET_REFUSED },
		{ "a second line", SECRET "\n" SECRET "\n", 0600, 0, SECRET, FC_SECRET_REFUSED },
		{ "empty", "", 0600, 0, SECRET, FC_SECRET_REFUSED },
	};
	/* a read credential (fc_secret_check_reader): its group may read, nothing more */
	static const struct {
		const char *what;
		mode_t mode;
		uid_t uid;
		enum fc_secret_verdict v;
	} readers[] = {
		{ "0640 root", 0640, 0, FC_SECRET_RIGHT },
		{ "0600 root", 0600, 0, FC_SECRET_RIGHT },
		{ "0600, the caller's own", 0600, 0, FC_SECRET_RIGHT },	/* euid 0 here */
		{ "0660: group may write", 0660, 0, FC_SECRET_REFUSED },
		{ "0644: others may read", 0644, 0, FC_SECRET_REFUSED },
		{ "0641", 0641, 0, FC_SECRET_REFUSED },
		{ "0640 nobody's", 0640, NOBODY, FC_SECRET_REFUSED },
	};
	char path[160], why[256], hex[FC_SECRET_HEX + 1];
	struct stat st;
	FILE *f;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(path, sizeof(path), "%s/web.secret", top);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row %zu: %s\n", i, rows[i].what);
		unlink(path);
		if (rows[i].text != NULL) {
			f = fopen(path, "w");
			assert_non_null(f);
			fputs(rows[i].text, f);
			fclose(f);
			assert_int_equal(chmod(path, rows[i].mode), 0);
			assert_int_equal(chown(path, rows[i].uid, 0), 0);
		}
		why[0] = '\0';
		assert_int_equal(fc_secret_check(path, rows[i].given,
						 rows[i].given ? strlen(rows[i].given) : 0, why,
						 sizeof(why)), rows[i].v);
		if (rows[i].v == FC_SECRET_REFUSED)
			assert_non_null(strstr(why, path));	/* said, with the path */
	}
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		print_message("reader %zu: %s\n", i, readers[i].what);
		unlink(path);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(SECRET "\n", f);
		fclose(f);
		assert_int_equal(chmod(path, readers[i].mode), 0);
		assert_int_equal(chown(path, readers[i].uid, 0), 0);
		why[0] = '\0';
		assert_int_equal(fc_secret_check_reader(path, SECRET, FC_SECRET_HEX, why,
							sizeof(why)), readers[i].v);
		assert_int_equal(fc_secret_check(path, SECRET, FC_SECRET_HEX, why, sizeof(why)),
				 readers[i].mode == 0600 && readers[i].uid == 0 ? FC_SECRET_RIGHT :
				 FC_SECRET_REFUSED);
		assert_int_equal(fc_secret_check_reader(path, "wrong", 5, why, sizeof(why)),
				 readers[i].v == FC_SECRET_RIGHT ? FC_SECRET_WRONG : FC_SECRET_REFUSED);
	}
	/* made when missing: 0600 root, 64 hex digits; never over one there */
	unlink(path);
	assert_int_equal(fc_secret_make(path, why, sizeof(why)), 1);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(fc_secret_read(path, hex, why, sizeof(why)), 0);
	assert_int_equal(strlen(hex), FC_SECRET_HEX);
	assert_int_equal(fc_secret_check(path, hex, FC_SECRET_HEX, why, sizeof(why)),
			 FC_SECRET_RIGHT);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(fc_secret_make(path, why, sizeof(why)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);	/* left as it was, and refused */
	assert_int_equal(fc_secret_read(path, hex, why, sizeof(why)), -EPERM);
	unlink(path);
	make_rows();
}

static void
test_nobody_with_secret(void **state)
{
	static const struct {
		const char *what;
		mode_t mode;		/* the secret file's */
		uid_t file_uid;
		uid_t uid;		/* who asks */
		const char *req;
		const char *want;
		bool handled;
	} rows[] = {
		{ "right secret, settings-set", 0600, 0, NOBODY,
		  "auth " SECRET "\nsettings-set offload off\n", "ok set\n", true },
		{ "right secret, cut-conn", 0600, 0, NOBODY, "auth " SECRET "\ncut-conn 5\n",
		  "ok cut\n", true },
		{ "right secret, resync: root's alone", 0600, 0, NOBODY, "auth " SECRET "\nresync\n",
		  "error refused: " ROOTS("65534", "resync") "\n", false },
		{ "wrong secret", 0600, 0, NOBODY, "auth " SECRET "0\nsettings-set offload off\n",
		  "error refused: uid 65534: the secret is wrong (settings-set changes flowcutd's "
		  "state: root, or the operator's secret)\n", false },
		{ "too short", 0600, 0, NOBODY, "auth 0123\nsettings-set offload off\n",
		  "error refused: uid 65534: the secret is wrong (settings-set changes flowcutd's "
		  "state: root, or the operator's secret)\n", false },
		{ "missing", 0600, 0, NOBODY, "settings-set offload off\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "right secret, a read: not opened by it", 0600, 0, NOBODY,
		  "auth " SECRET "\ncounters\n",
		  "error refused: uid 65534 is not root and no control_read_group is set\n", false },
		{ "wrong secret, a read: refused, counted", 0600, 0, NOBODY,
		  "auth " SECRET "0\ncounters\n",
		  "error refused: uid 65534: the secret is wrong (a read that carries one is served "
		  "only when it is right)\n", false },
		{ "the file 0644: no secret works", 0644, 0, NOBODY,
		  "auth " SECRET "\nsettings-set offload off\n",
		  "error refused: uid 65534 is not root and no secret is accepted now: the secret "
		  "file is missing or refused (settings-set changes flowcutd's state; flowcutd's "
		  "log says why)\n", false },
		{ "the file nobody's: no secret works", 0600, NOBODY, NOBODY,
		  "auth " SECRET "\ncut-conn 5\n",
		  "error refused: uid 65534 is not root and no secret is accepted now: the secret "
		  "file is missing or refused (cut-conn changes flowcutd's state; flowcutd's log "
		  "says why)\n", false },
		{ "root needs none", 0644, 0, 0, "settings-set offload off\n", "ok set\n", true },
	};
	char dir[128], path[160], secret[160], ans[FC_CTL_ANS_MAX + 64];
	uint64_t auth_refused = 0;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	snprintf(secret, sizeof(secret), "%s/web.secret", top);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fd_ctl_access a = { .secret_path = secret };
		struct fd_ctl *c;
		unsigned int before = handled;
		FILE *f = fopen(secret, "w");

		print_message("row %zu: %s\n", i, rows[i].what);
		assert_non_null(f);
		fputs(SECRET "\n", f);
		fclose(f);
		assert_int_equal(chmod(secret, rows[i].mode), 0);
		assert_int_equal(chown(secret, rows[i].file_uid, 0), 0);
		c = fd_ctl_open(path, &a, handler, NULL);
		assert_non_null(c);
		assert_int_equal(chmod(dir, 0755), 0);
		assert_int_equal(chmod(path, 0666), 0);
		ask_as(c, path, rows[i].uid, rows[i].uid, 0, NULL, rows[i].req, ans, sizeof(ans));
		auth_refused = fd_ctl_auth_refused(c);
		fd_ctl_close(c);
		assert_string_equal(ans, rows[i].want);
		assert_int_equal(handled - before, rows[i].handled ? 1 : 0);
		/* counted: a change refused for its secret (not one refused unparsed) */
		assert_int_equal(auth_refused, !rows[i].handled && strstr(rows[i].req, "auth ") &&
				 !strstr(rows[i].req, SECRET "\ncounters") &&
				 !strstr(rows[i].req, "resync") ? 1 : 0);
	}
	unlink(secret);
}

/* stderr into the file log from here (what flowcutd says): its descriptor; the old stderr in *saved */
static int
stderr_to(const char *log, int *saved)
{
	int fd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	fflush(stderr);
	*saved = dup(2);
	dup2(fd, 2);
	return fd;
}

/* stderr back (saved), and what was said into it, in text (len bytes at most) */
static void
stderr_back(int fd, int saved, char *text, size_t len)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, text, len - 1, 0);
	close(fd);
	assert_true(n > 0);
	text[n] = '\0';
	print_message("%s", text);
}

/* A loop of refused connects: each refused, one log line for the uid. */
static void
test_refusals_logged_once(void **state)
{
	struct fd_ctl_access a = { .read_group = true, .gid = OTHER_GID, .name = "flowcut-read" };
	char dir[128], path[160], log[128], ans[FC_CTL_ANS_MAX + 64], text[4096];
	struct fd_ctl *c;
	int fd, saved;
	unsigned int lines = 0;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	snprintf(log, sizeof(log), "%s/stderr", top);
	c = fd_ctl_open(path, &a, handler, NULL);
	assert_non_null(c);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(path, 0666), 0);
	fd = stderr_to(log, &saved);
	for (int k = 0; k < 5; k++) {
		ask_as(c, path, NOBODY, NOBODY, 0, NULL, k % 2 ? "status\n" : "cut-conn 1\n", ans,
		       sizeof(ans));
		if (strncmp(ans, "error refused: ", 15) != 0)
			break;
	}
	ask_as(c, path, 1000, 1000, 0, NULL, "status\n", ans, sizeof(ans));	/* another uid */
	stderr_back(fd, saved, text, sizeof(text));
	assert_string_equal(ans, "error refused: uid 1000 is not root and not in group "
			    "flowcut-read\n");
	assert_int_equal(fd_ctl_refused(c), 6);
	fd_ctl_close(c);
	for (char *p = text; (p = strstr(p, "control socket: refused")) != NULL; p++)
		lines++;
	assert_int_equal(lines, 2);
	assert_non_null(strstr(text, "uid 65534 is not root and not in group flowcut-read"));
	assert_non_null(strstr(text, "uid 1000 is not root and not in group flowcut-read"));
}

/*
 * Every change is logged with who made it (its pid, uid, and root or the
 * operator's secret), a read is not, and the secret never is.
 */
static void
test_changes_logged(void **state)
{
	char dir[128], path[160], log[128], secret[160], ans[FC_CTL_ANS_MAX + 64], text[4096];
	struct fd_ctl_access a = { .read_group = true, .gid = OTHER_GID, .name = "flowcut-read" };
	struct fd_ctl *c;
	int fd, saved;
	FILE *f;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/ctl", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	snprintf(log, sizeof(log), "%s/stderr", top);
	snprintf(secret, sizeof(secret), "%s/web.secret", top);
	f = fopen(secret, "w");
	assert_non_null(f);
	fputs(SECRET "\n", f);
	fclose(f);
	assert_int_equal(chmod(secret, 0600), 0);
	assert_int_equal(chown(secret, 0, 0), 0);
	a.secret_path = secret;
	c = fd_ctl_open(path, &a, handler, NULL);
	assert_non_null(c);
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(path, 0666), 0);
	fd = stderr_to(log, &saved);
	ask_as(c, path, NOBODY, NOBODY, 0, NULL, "auth " SECRET "\nsettings-set offload off\n", ans,
	       sizeof(ans));
	ask_as(c, path, NOBODY, NOBODY, 0, NULL, "auth " SECRET "\ncut-conn 5\n", ans, sizeof(ans));
	ask_as(c, path, NOBODY, OTHER_GID, 0, NULL, "status\n", ans, sizeof(ans));
	ask_as(c, path, 0, 0, 0, NULL, "settings-set offload on\n", ans, sizeof(ans));
	stderr_back(fd, saved, text, sizeof(text));
	fd_ctl_close(c);
	unlink(secret);
	assert_non_null(strstr(text, "uid 65534 (with the operator's secret) asks: settings-set "
				     "offload = off\n"));
	assert_non_null(strstr(text, "uid 65534 (with the operator's secret) asks: cut-conn 5\n"));
	assert_non_null(strstr(text, "uid 0 (root) asks: settings-set offload = on\n"));
	assert_null(strstr(text, "status"));
	assert_null(strstr(text, SECRET));
}

/* The folder and the socket: modes as the access says; a folder others could swap refused. */
static void
test_folder_and_modes(void **state)
{
	struct fd_ctl_access none = { 0 }, grp = { .read_group = true, .gid = OTHER_GID,
						   .name = "flowcut-read" };
	char dir[128], path[160], link[128], file[160];
	struct fd_ctl *c;
	struct stat st;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(dir, sizeof(dir), "%s/own", top);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", dir);
	/* made by fd_ctl: 0700 root:root, the socket 0600 */
	c = fd_ctl_open(path, &none, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	/* the settings name a read group: 0750 root:GROUP, the socket 0660 root:GROUP */
	assert_int_equal(fd_ctl_access(c, &grp), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(st.st_gid, OTHER_GID);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0660);
	assert_int_equal(st.st_gid, OTHER_GID);
	/* and back */
	assert_int_equal(fd_ctl_access(c, &none), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_gid, 0);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), -1);	/* ours: removed with the socket */
	/* made with the group from the start; a stale socket at the path replaced */
	c = fd_ctl_open(path, &grp, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	fd_ctl_close(c);
	/* a crashed flowcutd's folder (0750 root:GROUP, its socket left): taken as ours */
	{
		pid_t pid = fork();
		int status;

		assert_true(pid >= 0);
		if (pid == 0)	/* opens, and dies without closing */
			_exit(fd_ctl_open(path, &grp, handler, NULL) != NULL ? 0 : 1);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	c = fd_ctl_open(path, &none, handler, NULL);
	assert_non_null(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(st.st_gid, 0);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), -1);
	/* a folder others may write: refused, and nothing made in it */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 0777), 0);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(chmod(dir, 0770), 0);	/* group-writable: refused too */
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	/* a folder of nobody's: refused */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, NOBODY, NOBODY), 0);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	/* a folder root made itself (0755, not ours): used, and left as it is */
	assert_int_equal(chown(dir, 0, 0), 0);
	c = fd_ctl_open(path, &grp, handler, NULL);
	assert_non_null(c);
	fd_ctl_close(c);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	/* a symlink for the folder: refused */
	snprintf(link, sizeof(link), "%s/link", top);
	assert_int_equal(symlink(dir, link), 0);
	snprintf(path, sizeof(path), "%s/flowcutd.sock", link);
	errno = 0;
	assert_null(fd_ctl_open(path, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	/* something not a socket at the path: refused, and left there */
	snprintf(file, sizeof(file), "%s/flowcutd.sock", dir);
	fd_ctl_close(NULL);
	{
		int fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0600);

		assert_true(fd >= 0);
		close(fd);
	}
	errno = 0;
	assert_null(fd_ctl_open(file, &none, handler, NULL));
	assert_int_equal(errno, EPERM);
	assert_int_equal(stat(file, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

/*
 * Silent peers never stall it: 100 clients connect and send nothing, then
 * one asks - it is answered at once, in a few turns (before, each silent
 * client held a turn 200 ms: the asker waited 20 s); over 64 waiting the
 * oldest are let go, and those left are let go 200 ms after they came.
 */
static void
test_silent_peers(void **state)
{
	struct fd_ctl_access none = { 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[100], ans[256];
	int silent[100], s;
	struct timespec t0, t1;
	struct fd_ctl *c;
	ssize_t n = -1;

	(void)state;
	SKIP_UNLESS_ROOT();
	snprintf(path, sizeof(path), "%s/silent/flowcutd.sock", top);
	c = fd_ctl_open(path, &none, handler, NULL);
	assert_non_null(c);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (int i = 0; i < 100; i++) {
		silent[i] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);	/* a full queue: EAGAIN, not a hang */
		assert_int_equal(connect(silent[i], (struct sockaddr *)&sa, sizeof(sa)), 0);
		if (i % 32 == 31)	/* the listen queue drained now and then, as the loop would */
			fd_ctl_serve(c);
	}
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(send(s, "status", 6, 0), 6);
	handled = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int turn = 0; turn < 20 && n < 0; turn++) {
		struct pollfd pf = { .fd = fd_ctl_fd(c), .events = POLLIN };

		if (poll(&pf, 1, 100) > 0)
			fd_ctl_serve(c);
		n = recv(s, ans, sizeof(ans) - 1, MSG_DONTWAIT);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(n > 0);
	ans[n] = '\0';
	assert_string_equal(ans, "ok {\"status\":true}\n");
	/* a generous bound, not a speed target: waiting on the silent would take 20 s */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
	assert_true(fd_ctl_let_go(c) >= 100 - 64);	/* over 64 waiting: the oldest let go */
	usleep(250 * 1000);	/* past their 200 ms */
	fd_ctl_serve(c);
	assert_int_equal(fd_ctl_let_go(c), 100);
	for (int i = 0; i < 100; i++) {
		/* each let go: its end is closed, nothing answered */
		assert_int_equal(recv(silent[i], ans, sizeof(ans), MSG_DONTWAIT), 0);
		close(silent[i]);
	}
	close(s);
	fd_ctl_close(c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_rows),
		cmocka_unit_test(test_page_parse_rows),
		cmocka_unit_test(test_allowed_rows),
		cmocka_unit_test(test_nobody_asks),
		cmocka_unit_test(test_secret_rows),
		cmocka_unit_test(test_nobody_with_secret),
		cmocka_unit_test(test_refusals_logged_once),
		cmocka_unit_test(test_changes_logged),
		cmocka_unit_test(test_folder_and_modes),
		cmocka_unit_test(test_silent_peers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
