/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_settings: every rule of the format, row by row; saving atomically. */
#include <errno.h>
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
		{ "offload = yes\n", "line 1: 'yes' is not on or off" },
		{ "\n\ncut_in_hardware = 1\n", "line 3: '1' is not on or off" },
		{ "idle_timeout = 0\n", "line 1: idle_timeout '0' is not 1 to 65535 seconds" },
		{ "idle_timeout = 65536\n", "line 1: idle_timeout '65536' is not 1 to 65535 seconds" },
		{ "idle_timeout = -1\n", "line 1: idle_timeout '-1' is not 1 to 65535 seconds" },
		{ "idle_timeout = 10s\n", "line 1: idle_timeout '10s' is not 1 to 65535 seconds" },
		{ "gate = on\n", "line 1: unknown key 'gate' (offload, cut_in_hardware, idle_timeout, watched_list, watched_set, watched_fingerprints, tls_ports, control_read_group)" },
		{ "watched_fingerprints = /etc/flowcut/ja.txt\n", NULL },
		{ "watched_fingerprints = ja.txt\n", "line 1: watched_fingerprints 'ja.txt' is not an absolute path" },
		{ "watched_fingerprints = /a\nwatched_fingerprints = /b\n", "line 2: 'watched_fingerprints' is given twice" },
		{ "tls_ports = 443\n", NULL },
		{ "tls_ports =\t443   8443\t65535 1 # ports\n", NULL },
		{ "tls_ports = 443 0\n", "line 1: tls_ports: '0' is not a port (1 to 65535)" },
		{ "tls_ports = 65536\n", "line 1: tls_ports: '65536' is not a port (1 to 65535)" },
		{ "tls_ports = 443,8443\n", "line 1: tls_ports: '443,8443' is not a port (1 to 65535)" },
		{ "tls_ports = -443\n", "line 1: tls_ports: '-443' is not a port (1 to 65535)" },
		{ "tls_ports = 000443\n", "line 1: tls_ports: '000443' is not a port (1 to 65535)" },
		{ "tls_ports = 443 993 443\n", "line 1: tls_ports: 443 is given twice" },
		{ "tls_ports = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n", "line 1: tls_ports: more than 16 ports" },
		{ "tls_ports = 443\ntls_ports = 993\n", "line 2: 'tls_ports' is given twice" },
		{ "offload on\n", "line 1: 'offload on' is not key = value" },
		{ "offload =\n", "line 1: a key and a value are needed" },
		{ "= on\n", "line 1: a key and a value are needed" },
		{ "offload = on\noffload = off\n", "line 2: 'offload' is given twice" },
		{ "watched_list = relative/path\n", "line 1: watched_list 'relative/path' is not an absolute path" },
		{ "watched_list = /a\nwatched_list = /a\n", "line 2: watched_list '/a' is given twice" },
		{ "offload = on\nof\x01load = on\n", "line 2: a control or non-ASCII byte" },
		{ "watched_set = inet filter\n", "line 1: watched_set 'inet filter' is not FAMILY TABLE SET (three words, e.g. inet filter blocked4)" },
		{ "watched_set = inet filter a b\n", "line 1: watched_set 'inet filter a b' is not FAMILY TABLE SET (three words, e.g. inet filter blocked4)" },
		{ "watched_set = ipv4 filter a\n", "line 1: watched_set family 'ipv4' is not ip, ip6, inet, arp, bridge or netdev" },
		{ "watched_set = inet fil$ter a\n", "line 1: watched_set name 'fil$ter' is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "watched_set = inet filter 4set\n", "line 1: watched_set name '4set' is not an nftables name (a letter, '_' or '.', then letters, digits, '_', '.', '-', '/')" },
		{ "watched_set = inet filter a1234567890123456789012345678901234567890123456789012345678901234\n", "line 1: watched_set name 'a1234567890123456789012345678901234567890123456789012345678901234' is longer than 63 characters" },
		{ "watched_set = inet filter b\n# again\nwatched_set = inet filter  b\n", "line 3: watched_set 'inet filter  b' is given twice" },
		{ "control_read_group = root\n", NULL },
		{ "control_read_group = fc-no-such-group\n", "line 1: control_read_group 'fc-no-such-group' is not a group of this machine" },
		{ "control_read_group = a b\n", "line 1: control_read_group 'a b' is not a group name (letters, digits, '_', '.', '-')" },
		{ "control_read_group = ../x\n", "line 1: control_read_group '../x' is not a group name (letters, digits, '_', '.', '-')" },
		{ "control_read_group = a123456789012345678901234567890123456789012345678901234567890123\n", "line 1: control_read_group is longer than 63 characters" },
		{ "control_read_group = root\ncontrol_read_group = root\n", "line 2: 'control_read_group' is given twice" },
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
	assert_string_equal(err, "watched_set 'inet filter' is not FAMILY TABLE SET (three words, "
			    "e.g. inet filter blocked4)");
	assert_int_equal(s.nsets, 2);
	assert_string_equal(s.sets[1].family, "ip6");
	assert_string_equal(s.sets[1].table, "f2b-table");
	assert_string_equal(s.sets[1].set, "addr-set-ssh");
	assert_int_equal(fc_settings_set(&s, "idle_timeout", "abc", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "idle_timeout 'abc' is not 1 to 65535 seconds");
	assert_int_equal(s.idle_timeout, 60);
	n = fc_settings_format(&s, text, sizeof(text));
	assert_true(n > 0 && (size_t)n < sizeof(text));
	assert_int_equal(fc_settings_parse(text, (size_t)n, &back, err, sizeof(err)), 0);
	assert_memory_equal(&s, &back, sizeof(s));
	assert_non_null(strstr(text, "watched_set = inet filter blocked4\n"));
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
	assert_int_equal(s.nsets, 2);
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
	assert_string_equal(err, "control_read_group 'fc-none' is not a group of this machine");
	assert_string_equal(s.control_read_group, "root");
	assert_int_equal(fc_settings_set(&s, "control_read_group", "-", err, sizeof(err)), 0);
	assert_string_equal(s.control_read_group, "");
	n = fc_settings_format(&s, text, sizeof(text));
	assert_null(strstr(text, "control_read_group"));
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_values_and_defaults),
		cmocka_unit_test(test_set_and_round_trip),
		cmocka_unit_test(test_save_atomic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
