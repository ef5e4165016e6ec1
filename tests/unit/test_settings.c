/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_settings: every rule of the format, row by row; saving atomically. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "fc_settings.h"
#include "fc_settings_keys.h"
#include "trust_rows.h"

static void
test_rows(void **state)
{
	static const struct {
		const char *text;
		const char *err;	/* NULL: parses */
	} rows[] = {
		{ "", NULL },
		{ "# only a comment\n\n   \n", NULL },
		{ "offload = off\ncut_in_hardware = off\nidle_timeout = 30\n", NULL },
		{ "offload=on # trailing comment\r\n", NULL },
		{ "\tidle_timeout =\t65535", NULL },
		{ "watched_list = /etc/a\nwatched_list = /etc/b\n", NULL },
		{ "watched_list = /etc/a#b # a comment\n", NULL },
		{ "watched_set = inet filter blocked4\nwatched_set =\tip6  f2b-table\taddr-set-ssh\n", NULL },
		{ "watched_set = netdev _t .s/1\n", NULL },
		/* patterns on the set's name: every set of the table, or those matching */
		{ "watched_set = inet f2b-table *\n", NULL },
		{ "watched_set = ip crowdsec crowdsec-blacklists*\nwatched_set = ip6 crowdsec6 *\n", NULL },
		{ "watched_set = inet f2b-table addr-set-*\nwatched_set = inet f2b-table addr6-set-*\n", NULL },
		{ "watched_set = inet t ?[0-9][!a-c]-[^x]_.*/\n", NULL },
		{ "watched_set = inet t 4*\n", NULL },	/* a name may not start with a digit; a pattern may */
		{ "watched_set = inet t *\nwatched_set = inet t *\n", "line 2: watched_set is given twice" },
		{ "watched_set = inet t *\nwatched_set = inet t a*\nwatched_set = inet t a\n", NULL },
		{ "watched_set = inet t []\n", "line 1: watched_set: a pattern's '[]' is empty" },
		{ "watched_set = inet t a[!]\n", "line 1: watched_set: a pattern's '[]' is empty" },
		{ "watched_set = inet t a[0-9\n", "line 1: watched_set: a pattern's '[' is not closed by ']'" },
		{ "watched_set = inet t [[:digit:]]\n", "line 1: watched_set: a pattern's '[...]' holds a character that is not a name's" },
		{ "watched_set = inet t a\\*\n", "line 1: watched_set: a pattern holds a character that is neither a name's nor one of '*', '?', '[...]'" },
		{ "watched_set = inet t a*]\n", "line 1: watched_set: a pattern holds a character that is neither a name's nor one of '*', '?', '[...]'" },
		{ "watched_set = inet t *a123456789012345678901234567890123456789012345678901234567890123\n", "line 1: watched_set: a name is longer than 63 characters" },
		{ "watched_set = inet * a\n", "line 1: watched_set: a name is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "watched_set = inet S3CR3T *$\n", "line 1: watched_set: a pattern holds a character that is neither a name's nor one of '*', '?', '[...]'" },
		{ "watched_set = inet t 1*\nwatched_set = inet t 2*\nwatched_set = inet t 3*\n"
		  "watched_set = inet t 4*\nwatched_set = inet t 5*\nwatched_set = inet t 6*\n"
		  "watched_set = inet t 7*\nwatched_set = inet t 8*\nwatched_set = inet t 9*\n"
		  "watched_set = inet t a*\nwatched_set = inet t b*\nwatched_set = inet t c*\n"
		  "watched_set = inet t d*\nwatched_set = inet t e*\nwatched_set = inet t f*\n"
		  "watched_set = inet t g\n", NULL },	/* 16 lines, patterns or not */
		{ "watched_set = inet t 1*\nwatched_set = inet t 2*\nwatched_set = inet t 3*\n"
		  "watched_set = inet t 4*\nwatched_set = inet t 5*\nwatched_set = inet t 6*\n"
		  "watched_set = inet t 7*\nwatched_set = inet t 8*\nwatched_set = inet t 9*\n"
		  "watched_set = inet t a*\nwatched_set = inet t b*\nwatched_set = inet t c*\n"
		  "watched_set = inet t d*\nwatched_set = inet t e*\nwatched_set = inet t f*\n"
		  "watched_set = inet t g\nwatched_set = inet t *\n", "line 17: more than 16 watched sets" },
		{ "offload = yes\n", "line 1: offload is not on or off" },
		{ "\n\ncut_in_hardware = 1\n", "line 3: cut_in_hardware is not on or off" },
		{ "idle_timeout = 0\n", "line 1: idle_timeout is not 1 to 65535 seconds" },
		{ "idle_timeout = 65536\n", "line 1: idle_timeout is not 1 to 65535 seconds" },
		{ "idle_timeout = -1\n", "line 1: idle_timeout is not 1 to 65535 seconds" },
		{ "idle_timeout = 10s\n", "line 1: idle_timeout is not 1 to 65535 seconds" },
		{ "gate = on\n", "line 1: unknown key (docs/settings.md lists them)" },
		{ "inspect_hold_ms = 100\ninspect_read_timeout = 3600\ninspect_undecided = cut\n", NULL },
		{ "inspect_hold_ms = 99\n", "line 1: inspect_hold_ms is not 100 to 600000 (ms)" },
		{ "inspect_hold_ms = 600001\n", "line 1: inspect_hold_ms is not 100 to 600000 (ms)" },
		{ "inspect_read_timeout = 0\n", "line 1: inspect_read_timeout is not 1 to 3600 seconds" },
		{ "inspect_undecided = drop\n", "line 1: inspect_undecided is not pass or cut" },
		{ "inspect_undecided = pass\ninspect_undecided = cut\n", "line 2: 'inspect_undecided' is given twice" },
		{ "watched_fingerprints = /etc/flowcut/ja.txt\n", NULL },
		{ "watched_fingerprints = ja.txt\n", "line 1: watched_fingerprints is not an absolute path" },
		{ "watched_fingerprints = /a\nwatched_fingerprints = /b\n", "line 2: 'watched_fingerprints' is given twice" },
		{ "tls_ports = 443\n", NULL },
		{ "tls_ports =\t443   8443\t65535 1 # ports\n", NULL },
		{ "tls_ports = 443 0\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "tls_ports = 65536\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "tls_ports = 443,8443\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "tls_ports = -443\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "tls_ports = 000443\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "tls_ports = 443 993 443\n", "line 1: tls_ports: a port is given twice" },
		{ "tls_ports = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", "line 1: tls_ports: more than 16 ports" },
		{ "tls_ports = 443\ntls_ports = 993\n", "line 2: 'tls_ports' is given twice" },
		{ "offload on\n", "line 1: not key = value" },
		{ "offload =\n", "line 1: a key and a value are needed" },
		{ "= on\n", "line 1: a key and a value are needed" },
		{ "offload = on\noffload = off\n", "line 2: 'offload' is given twice" },
		{ "watched_list = relative/path\n", "line 1: watched_list is not an absolute path" },
		{ "watched_list = /a\nwatched_list = /a\n", "line 2: watched_list is given twice" },
		{ "offload = on\nof\x01load = on\n", "line 2: a control or non-ASCII byte" },
		{ "watched_set = inet filter\n", "line 1: watched_set is not FAMILY TABLE SET (three words, e.g. inet filter blocked4)" },
		{ "watched_set = inet filter a b\n", "line 1: watched_set is not FAMILY TABLE SET (three words, e.g. inet filter blocked4)" },
		{ "watched_set = ipv4 filter a\n", "line 1: watched_set: the family is not ip, ip6, inet, arp, bridge or netdev" },
		{ "watched_set = inet fil$ter a\n", "line 1: watched_set: a name is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "watched_set = inet filter 4set\n", "line 1: watched_set: a name is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "watched_set = inet filter a1234567890123456789012345678901234567890123456789012345678901234\n", "line 1: watched_set: a name is longer than 63 characters" },
		{ "watched_set = inet filter b\n# again\nwatched_set = inet filter  b\n", "line 3: watched_set is given twice" },
		{ "list_max_bytes = 1024\nlist_min_prefix4 = 0\nlist_min_prefix6 = 128\n", NULL },
		{ "list_max_bytes = 1073741824\nlist_min_prefix4 = 32\nlist_min_prefix6 = 0\n", NULL },
		{ "list_max_bytes = 1023\n", "line 1: list_max_bytes is not 1024 to 1073741824 (bytes)" },
		{ "list_max_bytes = 1073741825\n", "line 1: list_max_bytes is not 1024 to 1073741824 (bytes)" },
		{ "list_max_bytes = 64M\n", "line 1: list_max_bytes is not 1024 to 1073741824 (bytes)" },
		{ "list_max_bytes = -1\n", "line 1: list_max_bytes is not 1024 to 1073741824 (bytes)" },
		{ "list_min_prefix4 = 33\n", "line 1: list_min_prefix4 is not 0 to 32" },
		{ "list_min_prefix4 = /8\n", "line 1: list_min_prefix4 is not 0 to 32" },
		{ "list_min_prefix6 = 129\n", "line 1: list_min_prefix6 is not 0 to 128" },
		{ "list_min_prefix6 = 1\nlist_min_prefix6 = 2\n", "line 2: 'list_min_prefix6' is given twice" },
		/* a file's text is never told back: only the line and the key */
		{ "offload = S3CR3T\n", "line 1: offload is not on or off" },
		{ "root:$y$j9T$S3CR3T:19000:0:99999:7:::\n", "line 1: not key = value" },
		{ "S3CR3T = on\n", "line 1: unknown key (docs/settings.md lists them)" },
		{ "watched_list = S3CR3T\n", "line 1: watched_list is not an absolute path" },
		{ "watched_set = inet S3CR3T$ x\n", "line 1: watched_set: a name is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "tls_ports = S3CR3T\n", "line 1: tls_ports: not a port (1 to 65535)" },
		{ "idle_timeout = S3CR3T\n", "line 1: idle_timeout is not 1 to 65535 seconds" },
		{ "control_read_group = root\n", NULL },
		{ "control_read_group = fc-no-such-group\n", "line 1: control_read_group is not a group of this machine" },
		{ "control_read_group = a b\n", "line 1: control_read_group is not a group name (letters, digits, '_', '.', '-')" },
		{ "control_read_group = ../x\n", "line 1: control_read_group is not a group name (letters, digits, '_', '.', '-')" },
		{ "control_read_group = a123456789012345678901234567890123456789012345678901234567890123\n", "line 1: control_read_group is longer than 63 characters" },
		{ "control_read_group = root\ncontrol_read_group = root\n", "line 2: 'control_read_group' is given twice" },
		/* never_cut: addresses and prefixes, several a line and several lines, both families */
		{ "never_cut = 198.51.100.1 2001:db8::/32\tnever_cut_file = /etc/x\n", "line 1: never_cut, entry 3: not an address or a prefix (ADDR/LEN)" },
		{ "never_cut = 198.51.100.1 2001:db8::/32 10.0.0.0/8\nnever_cut = 192.0.2.53 ::1 0.0.0.0/0\n", NULL },
		{ "never_cut = 198.51.100.7/24\n", "line 1: never_cut, entry 1: a host part is set in the prefix (its address is not the prefix's first)" },
		{ "never_cut = 10.0.0.1\nnever_cut = 2001:db8::1 2001:db8::1/32\n", "line 2: never_cut, entry 2: a host part is set in the prefix (its address is not the prefix's first)" },
		{ "never_cut = 10.0.0.1 resolver\n", "line 1: never_cut, entry 2: not an address or a prefix (ADDR/LEN)" },
		{ "never_cut = 10.0.0.0/33\n", "line 1: never_cut, entry 1: the prefix length is not 0 to 32" },
		{ "\nnever_cut = 2001:db8::/129\n", "line 2: never_cut, entry 1: the prefix length is not 0 to 128" },
		{ "never_cut = 10.0.0.1/x\n", "line 1: never_cut, entry 1: the prefix length is not 0 to 32" },
		{ "never_cut = 10.0.0.1-10.0.0.9\n", "line 1: never_cut, entry 1: a range: an address or a prefix (ADDR/LEN) is wanted" },
		{ "never_cut = S3CR3T/8\n", "line 1: never_cut, entry 1: not an address before the '/'" },
		{ "never_cut = 1.0.0.1 1.0.0.2 1.0.0.3 1.0.0.4 1.0.0.5 1.0.0.6 1.0.0.7 1.0.0.8 1.0.0.9 1.0.0.10 1.0.0.11 1.0.0.12 1.0.0.13 1.0.0.14 1.0.0.15 1.0.0.16 1.0.0.17 1.0.0.18 1.0.0.19 1.0.0.20 1.0.0.21 1.0.0.22 1.0.0.23 1.0.0.24 1.0.0.25 1.0.0.26 1.0.0.27 1.0.0.28 1.0.0.29 1.0.0.30 1.0.0.31 1.0.0.32\n"
		  "never_cut = 2.0.0.1 2.0.0.2 2.0.0.3 2.0.0.4 2.0.0.5 2.0.0.6 2.0.0.7 2.0.0.8 2.0.0.9 2.0.0.10 2.0.0.11 2.0.0.12 2.0.0.13 2.0.0.14 2.0.0.15 2.0.0.16 2.0.0.17 2.0.0.18 2.0.0.19 2.0.0.20 2.0.0.21 2.0.0.22 2.0.0.23 2.0.0.24 2.0.0.25 2.0.0.26 2.0.0.27 2.0.0.28 2.0.0.29 2.0.0.30 2.0.0.31 2.0.0.32 2.0.0.33\n",
		  "line 2: never_cut, entry 33: more than 64 never_cut entries (a longer list: never_cut_file)" },
		{ "never_cut_file = /etc/flowcut/never-cut.txt\n", NULL },
		{ "never_cut_file = never.txt\n", "line 1: never_cut_file is not an absolute path" },
		{ "never_cut_file = /a\nnever_cut_file = /b\n", "line 2: 'never_cut_file' is given twice" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_settings s, before;
		char err[256] = "";
		int rc;

		fc_settings_default(&s);
		s.idle_timeout = 7;	/* so "untouched on error" can be seen */
		before = s;
		rc = fc_settings_parse(rows[i].text, strlen(rows[i].text), &s, err, sizeof(err));
		print_message("row %zu: %s\n", i, rows[i].err ? rows[i].err : "parses");
		if (rows[i].err == NULL) {
			if (rc != 0)
				fail_msg("row %zu: refused: %s", i, err);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, rows[i].err);
			assert_memory_equal(&s, &before, sizeof(s));
		}
	}
}

static void
test_values_and_defaults(void **state)
{
	const char *t = "offload = off\nidle_timeout = 30\nwatched_list = /etc/x\n";
	struct fc_settings s;
	char err[256];

	(void)state;
	fc_settings_default(&s);
	assert_true(s.offload);
	assert_true(s.cut_in_hardware);	/* on by default, as the seed's page says */
	assert_int_equal(s.idle_timeout, 60);
	assert_int_equal(s.list_max_bytes, 64u << 20);	/* a million-line list fits */
	assert_int_equal(s.list_min_prefix4, 1);	/* only 0.0.0.0/0 refused */
	assert_int_equal(s.list_min_prefix6, 1);
	assert_int_equal(fc_settings_parse(t, strlen(t), &s, err, sizeof(err)), 0);
	assert_false(s.offload);
	assert_true(s.cut_in_hardware);	/* not given: the default */
	assert_int_equal(s.idle_timeout, 30);
	assert_int_equal(s.nlists, 1);
	assert_string_equal(s.lists[0], "/etc/x");
	/* the TLS ports by default: 443 465 853 993 995 8443; no fingerprints watched */
	assert_int_equal(s.ntls_ports, 6);
	assert_int_equal(s.tls_ports[0], 443);
	assert_int_equal(s.tls_ports[5], 8443);
	assert_string_equal(s.fingerprints, "");
	{
		const char *p = "tls_ports = 8443 443\nwatched_fingerprints = /etc/ja#4 # c\n";

		assert_int_equal(fc_settings_parse(p, strlen(p), &s, err, sizeof(err)), 0);
		assert_int_equal(s.ntls_ports, 2);
		assert_int_equal(s.tls_ports[0], 8443);
		assert_int_equal(s.tls_ports[1], 443);
		assert_int_equal(s.tls_ports[2], 0);
		assert_string_equal(s.fingerprints, "/etc/ja#4");
	}
	{
		const char *h = "watched_list = /etc/with#hash # comment\n";

		assert_int_equal(fc_settings_parse(h, strlen(h), &s, err, sizeof(err)), 0);
		assert_string_equal(s.lists[0], "/etc/with#hash");
	}
	/* a long line is refused, not cut */
	{
		char big[1100];

		memset(big, 'a', sizeof(big));
		assert_int_equal(fc_settings_parse(big, sizeof(big), &s, err, sizeof(err)), -EINVAL);
		assert_string_equal(err, "line 1: longer than 1024 bytes");
	}
}

static void
test_set_and_round_trip(void **state)
{
	struct fc_settings s, back;
	char err[256], text[4096];
	int n;

	(void)state;
	fc_settings_default(&s);
	assert_int_equal(fc_settings_set(&s, "cut_in_hardware", "off", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "watched_list", "/etc/l1", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "watched_list", "/etc/l2", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "watched_set", "inet filter blocked4", err, sizeof(err)),
			 0);
	assert_int_equal(fc_settings_set(&s, "watched_set", "ip6 f2b-table addr-set-ssh", err,
					 sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "watched_set", "inet filter", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watched_set is not FAMILY TABLE SET (three words, "
			    "e.g. inet filter blocked4): 'inet filter'");	/* flowcutctl's own value */
	assert_int_equal(fc_settings_set(&s, "watched_set", "inet f2b-table addr-set-*", err,
					 sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "watched_set", "inet t a[", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "watched_set: a pattern's '[' is not closed by ']': 'a['");
	assert_int_equal(s.nsets, 3);
	assert_string_equal(s.sets[1].family, "ip6");
	assert_string_equal(s.sets[1].table, "f2b-table");
	assert_string_equal(s.sets[1].set, "addr-set-ssh");
	assert_int_equal(fc_settings_set(&s, "idle_timeout", "abc", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "idle_timeout is not 1 to 65535 seconds: 'abc'");
	assert_int_equal(s.idle_timeout, 60);
	assert_int_equal(fc_settings_set(&s, "list_max_bytes", "1048576", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "list_min_prefix4", "8", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "list_min_prefix6", "32", err, sizeof(err)), 0);
	n = fc_settings_format(&s, text, sizeof(text));
	assert_non_null(strstr(text, "list_max_bytes = 1048576\nlist_min_prefix4 = 8\n"
				     "list_min_prefix6 = 32\n"));
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_non_null(strstr(text, "watched_set = inet filter blocked4\n"));
	assert_non_null(strstr(text, "watched_set = inet f2b-table addr-set-*\n"));
	assert_int_equal(fc_settings_set(&s, "watched_list", "-", err, sizeof(err)), 0);
	assert_int_equal(s.nlists, 0);
	/* watched_fingerprints and tls_ports round-trip, and "-" takes the file away */
	assert_int_equal(fc_settings_set(&s, "watched_fingerprints", "/etc/ja.txt", err, sizeof(err)),
			 0);
	assert_int_equal(fc_settings_set(&s, "tls_ports", "443 993", err, sizeof(err)), 0);
	assert_int_equal(fc_settings_set(&s, "tls_ports", "  ", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "tls_ports: no port given");
	n = fc_settings_format(&s, text, sizeof(text));
	assert_non_null(strstr(text, "watched_fingerprints = /etc/ja.txt\ntls_ports = 443 993\n"));
	assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_int_equal(fc_settings_set(&s, "watched_fingerprints", "-", err, sizeof(err)), 0);
	assert_string_equal(s.fingerprints, "");
	n = fc_settings_format(&s, text, sizeof(text));
	assert_null(strstr(text, "watched_fingerprints"));
	assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_int_equal(s.nsets, 3);
	assert_int_equal(fc_settings_set(&s, "watched_set", "-", err, sizeof(err)), 0);
	assert_int_equal(s.nsets, 0);
	/* control_read_group: resolved to its gid, written back, "-" takes it away */
	assert_string_equal(s.control_read_group, "");
	assert_int_equal(fc_settings_set(&s, "control_read_group", "root", err, sizeof(err)), 0);
	assert_string_equal(s.control_read_group, "root");
	assert_int_equal(s.control_read_gid, 0);
	n = fc_settings_format(&s, text, sizeof(text));
	assert_non_null(strstr(text, "control_read_group = root\n"));
	assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_int_equal(fc_settings_set(&s, "control_read_group", "fc-none", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "control_read_group is not a group of this machine: 'fc-none'");
	assert_string_equal(s.control_read_group, "root");
	assert_int_equal(fc_settings_set(&s, "control_read_group", "-", err, sizeof(err)), 0);
	assert_string_equal(s.control_read_group, "");
	n = fc_settings_format(&s, text, sizeof(text));
	assert_null(strstr(text, "control_read_group"));
}

/* A watched_set's SET: a pattern when it holds `*`, `?` or `[`, else an exact name. */
static void
test_is_pattern(void **state)
{
	static const struct {
		const char *set;
		bool pattern;
	} rows[] = {
		{ "*", true }, { "addr-set-*", true }, { "crowdsec-blacklists*", true },
		{ "set?", true }, { "s[46]", true }, { "addr-set-ssh", false },
		{ "crowdsec-blacklists", false }, { "_t.s/1", false }, { "a-b", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		print_message("row %zu: %s\n", i, rows[i].set);
		assert_int_equal(fc_settings_is_pattern(rows[i].set), rows[i].pattern);
	}
}

static void
test_save_atomic(void **state)
{
	char dir[] = "/tmp/fc-settings-XXXXXX", path[128], err[256];
	struct fc_settings s, back;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/settings.conf", dir);
	fc_settings_default(&s);
	s.offload = false;
	assert_int_equal(fc_settings_save(path, &s), 0);
	assert_int_equal(fc_settings_load(path, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* nothing but the file is left behind */
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "test $(ls %s | wc -l) -eq 1", dir);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(fc_settings_load("/nonexistent/x", &back, err, sizeof(err)), -ENOENT);
	unlink(path);
	rmdir(dir);
}

/* never_cut's entries and never_cut_file's lines into one list; the file's errors refuse the settings. */
static void
test_never_cut(void **state)
{
	static const struct {
		const char *file;	/* never_cut_file's text (NULL: no file) */
		const char *err;	/* fc_settings_load's error (NULL: loads) */
		const char *list;	/* what fc_settings_never_cut gives, formatted */
	} rows[] = {
		{ NULL, NULL, "192.0.2.0/24 198.51.100.1 2001:db8::53" },
		{ "# resolvers\n198.51.100.2 ; one more\n203.0.113.0/25\n2001:db8:1::/48\n", NULL,
		  "192.0.2.0/24 198.51.100.1-198.51.100.2 203.0.113.0/25 2001:db8::53 2001:db8:1::/48" },
		{ "198.51.100.9\nresolver\n", "line 4: never_cut_file DIR/never.txt: line 2: not an "
		  "address, a prefix (ADDR/LEN) or a range (ADDR-ADDR) (1 bad line)", NULL },
	};
	char dir[] = "/tmp/fc-never-XXXXXX", conf[128], never[128], err[512], text[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(chmod(dir, 0755), 0);
	snprintf(conf, sizeof(conf), "%s/settings.conf", dir);
	snprintf(never, sizeof(never), "%s/never.txt", dir);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fc_settings s;
		struct fc_list l = { 0 };
		char got[512] = "", want[512];
		FILE *f = fopen(conf, "w");

		assert_non_null(f);
		fprintf(f, "offload = on\nnever_cut = 198.51.100.1 192.0.2.0/24\n"
			"never_cut = 2001:db8::53\n");
		if (rows[i].file != NULL) {
			FILE *g = fopen(never, "w");

			assert_non_null(g);
			fputs(rows[i].file, g);
			fclose(g);
			fprintf(f, "never_cut_file = %s\n", never);
		}
		fclose(f);
		err[0] = '\0';
		if (rows[i].err != NULL) {
			const char *at = strstr(rows[i].err, "DIR");

			assert_int_equal(fc_settings_load(conf, &s, err, sizeof(err)), -EINVAL);
			snprintf(want, sizeof(want), "%.*s%s%s", (int)(at - rows[i].err), rows[i].err,
				 dir, at + 3);
			assert_string_equal(err, want);
			continue;
		}
		if (fc_settings_load(conf, &s, err, sizeof(err)) != 0)
			fail_msg("row %zu: refused: %s", i, err);
		assert_int_equal(fc_settings_never_cut(&s, &l, err, sizeof(err)), 0);
		for (size_t j = 0; j < l.n; j++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", j ? " " : "",
				 fc_range_format(&l.r[j], text, sizeof(text)));
		assert_string_equal(got, rows[i].list);
		fc_list_free(&l);
	}
	/* a file that cannot be read: the settings refused, naming never_cut_file's line */
	{
		struct fc_settings s;
		FILE *f = fopen(conf, "w");
		char want[512];

		assert_non_null(f);
		fprintf(f, "offload = on\n\nnever_cut_file = %s/none.txt\n", dir);
		fclose(f);
		assert_int_equal(fc_settings_load(conf, &s, err, sizeof(err)), -ENOENT);
		snprintf(want, sizeof(want), "line 3: never_cut_file %s/none.txt: ", dir);
		assert_memory_equal(err, want, strlen(want));
	}
	/* flowcutctl: entries added, "-" takes them away; written back and read again */
	{
		struct fc_settings s, back;
		int n;

		fc_settings_default(&s);
		assert_int_equal(fc_settings_set(&s, "never_cut", "10.1.0.0/16 2001:db8::/64", err,
						 sizeof(err)), 0);
		assert_int_equal(fc_settings_set(&s, "never_cut", "10.1.0.1/16", err, sizeof(err)),
				 -EINVAL);
		assert_string_equal(err, "never_cut: a host part is set in the prefix (its address "
				    "is not the prefix's first): '10.1.0.1/16'");
		assert_int_equal(s.nnever, 2);
		n = fc_settings_format(&s, text, sizeof(text));
		assert_non_null(strstr(text, "never_cut = 10.1.0.0/16\nnever_cut = 2001:db8::/64\n"));
		assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
		assert_memory_equal(&s, &back, sizeof(s));
		assert_int_equal(fc_settings_set(&s, "never_cut", "-", err, sizeof(err)), 0);
		assert_int_equal(s.nnever, 0);
	}
	unlink(conf);
	unlink(never);
	rmdir(dir);
}

static long
trust_load(const char *path, char *err, size_t errlen)
{
	struct fc_settings s;
	int rc = fc_settings_load(path, &s, err, errlen);

	if (rc == 0 && s.offload)
		fail_msg("%s: read, but not as written", path);
	return rc;
}

/* A settings file anyone but root could have written (or swapped) is refused, saying whose path and why. */
static void
test_trust(void **state)
{
	(void)state;
	if (trust_rows_run(trust_load, "offload = off\n") > 0)
		print_message("# the rows that chown were skipped: not root\n");
}

/*
 * fc_settings_keys: settings-set's saves as rows (a file in /tmp, saved
 * step by step) -> rc, err, and the key's value in the `settings` answer.
 */
static void
test_keys_rows(void **state)
{
	static const struct {
		const char *key, *value;
		bool lines;
		int rc;
		const char *err;	/* "" none */
		const char *json;	/* the key's value after, as JSON */
	} rows[] = {
		{ "cut_in_hardware", "off", false, 0, "", "\"off\"" },
		{ "cut_in_hardware", "maybe", false, -EINVAL, "cut_in_hardware: ", "\"off\"" },
		{ "watched_set", "inet f2b-table *\nip crowdsec crowdsec-*", true, 0, "",
		  "[\"inet f2b-table *\", \"ip crowdsec crowdsec-*\"]" },
		{ "watched_set", "inet t a\nip t b!", true, -EINVAL, "watched_set: ",
		  "[\"inet f2b-table *\", \"ip crowdsec crowdsec-*\"]" },	/* one bad line: none */
		{ "watched_set", "inet filter blocked4", false, 0, "", "[\"inet filter blocked4\"]" },
		{ "watched_set", "", true, 0, "", "[]" },
		{ "never_cut", "198.51.100.0/24\n2001:db8::1", true, 0, "",
		  "[\"198.51.100.0/24\", \"2001:db8::1\"]" },
		{ "idle_timeout", "30", false, 0, "", "\"30\"" },
		{ "idle_timeout", "30", true, -EINVAL,
		  "idle_timeout: takes one value (settings-set KEY VALUE), not lines", "\"30\"" },
		{ "no_such_key", "1", false, -EINVAL, "no_such_key: not a key of the settings", NULL },
		/* the settings whole, as the loader reads them back: a never_cut_file it would
		 * refuse is not saved (else every later settings-set fails: a lock-out) */
		{ "never_cut_file", "/nonexistent/never.list", false, -EINVAL,
		  "never_cut_file: not saved, the settings would be refused: never_cut_file "
		  "/nonexistent/never.list", "\"\"" },
		{ "cut_in_hardware", "on", false, 0, "", "\"on\"" },	/* still saves */
	};
	char path[] = "/tmp/fc-keys-XXXXXX", file[64], err[512];
	struct fc_settings s;

	(void)state;
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/settings.conf", path);
	assert_string_equal(fc_settings_keys[0].name, "cut_in_hardware");	/* first */
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		json_t *keys, *want;
		int rc;

		print_message("row %zu: %s\n", i, rows[i].key);
		err[0] = '\0';
		rc = fc_settings_keys_save(file, rows[i].key, rows[i].value, rows[i].lines, err,
					   sizeof(err));
		assert_int_equal(rc, rows[i].rc);
		assert_true(strncmp(err, rows[i].err, strlen(rows[i].err)) == 0);
		if (rows[i].json == NULL)
			continue;
		assert_int_equal(fc_settings_load(file, &s, err, sizeof(err)), 0);
		keys = fc_settings_keys_json(&s);
		assert_non_null(keys);
		assert_int_equal(json_array_size(keys), fc_settings_nkeys);
		want = json_loads(rows[i].json, JSON_DECODE_ANY, NULL);
		assert_non_null(want);
		for (size_t k = 0; k < json_array_size(keys); k++) {
			json_t *e = json_array_get(keys, k);

			assert_non_null(json_object_get(e, "help"));
			if (strcmp(json_string_value(json_object_get(e, "key")), rows[i].key) == 0)
				assert_true(json_equal(json_object_get(e, "value"), want));
		}
		json_decref(want);
		json_decref(keys);
	}
	unlink(file);
	rmdir(path);
}

/*
 * A never_cut entry wider than never_cut_min_prefix4/6 (16, 48) refuses
 * the settings when they are checked (loaded, or saved by settings-set):
 * one setting must not switch the cut off for a whole network by a slip;
 * lowered, the bound allows it.  The same of never_cut_file's lines.
 */
static void
test_never_cut_bound(void **state)
{
	static const struct {
		const char *text;
		const char *err;	/* NULL: accepted */
	} rows[] = {
		{ "never_cut = 10.1.0.0/16 2001:db8:1::/48\n", NULL },
		{ "never_cut = 10.0.0.0/8\n", "never_cut 10.0.0.0/8: wider than a /16 (never_cut_min_prefix4: lower it to allow this, and every cut in it is off)" },
		{ "never_cut = 0.0.0.0/0\n", "never_cut 0.0.0.0/0: wider than a /16 (never_cut_min_prefix4: lower it to allow this, and every cut in it is off)" },
		{ "never_cut = 198.51.100.1 ::/0\n", "never_cut ::/0: wider than a /48 (never_cut_min_prefix6: lower it to allow this, and every cut in it is off)" },
		{ "never_cut = 2001:db8::/32\n", "never_cut 2001:db8::/32: wider than a /48 (never_cut_min_prefix6: lower it to allow this, and every cut in it is off)" },
		{ "never_cut = 10.0.0.0/8\nnever_cut_min_prefix4 = 8\n", NULL },
		{ "never_cut_min_prefix6 = 0\nnever_cut = ::/0\n", NULL },
		{ "never_cut_min_prefix4 = 33\n", "line 1: never_cut_min_prefix4 is not 0 to 32" },
	};
	char dir[] = "/tmp/fc-never-XXXXXX", path[64], text[256], err[256];
	struct fc_settings s;
	int fd;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int rc;

		fc_settings_default(&s);
		err[0] = '\0';
		rc = fc_settings_parse(rows[i].text, strlen(rows[i].text), &s, err, sizeof(err));
		if (rc == 0)
			rc = fc_settings_check(&s, err, sizeof(err));
		print_message("row %zu: %s\n", i, rows[i].err ? rows[i].err : "accepted");
		if (rows[i].err == NULL) {
			if (rc != 0)
				fail_msg("row %zu: refused: %s", i, err);
		} else {
			assert_int_equal(rc, -EINVAL);
			assert_string_equal(err, rows[i].err);
		}
	}
	/* a line of never_cut_file as wide: a bad line naming the bound (in a folder of its own: the loader refuses /tmp) */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/never.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "192.0.2.0/24\n10.0.0.0/8\n", 24), 24);
	close(fd);
	snprintf(text, sizeof(text), "never_cut_file = %s\n", path);
	fc_settings_default(&s);
	assert_int_equal(fc_settings_parse(text, strlen(text), &s, err, sizeof(err)), 0);
	assert_int_equal(fc_settings_check(&s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2: wider than a /16 (never_cut_min_prefix4)"));
	s.never_min_prefix4 = 8;
	assert_int_equal(fc_settings_check(&s, err, sizeof(err)), 0);
	unlink(path);
	rmdir(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_never_cut_bound),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_values_and_defaults),
		cmocka_unit_test(test_set_and_round_trip),
		cmocka_unit_test(test_is_pattern),
		cmocka_unit_test(test_save_atomic),
		cmocka_unit_test(test_trust),
		cmocka_unit_test(test_never_cut),
		cmocka_unit_test(test_keys_rows),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
