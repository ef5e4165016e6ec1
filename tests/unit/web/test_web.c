/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut-web's pure parts, table-driven: the form and query parser
 * (fw_form), the control requests built from it (fw_req), Basic
 * authentication, the Host, CSRF and origin checks (fw_auth), the
 * sampler's rates (fw_sample),
 * and the renderers (fw_metrics, fw_html) fed documents as
 * docs/commands.md gives them.  The live server is tests/web/test_web.sh's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "fw_buf.h"
#include "fw_form.h"
#include "fw_html.h"
#include "fw_metrics.h"
#include "fw_req.h"
#include "fw_ctl.h"
#include "fw_sample.h"
#include "fw_auth.h"
#include "fw_guard.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* ---- fw_form ---- */

static const struct {
	const char *in;
	int rc;
	const char *key, *want;	/* a field and its value, or the error's words */
} form_rows[] = {
	{"a=1&b=2", 0, "b", "2"},
	{"addr=10.0.0.0%2F8", 0, "addr", "10.0.0.0/8"},
	{"v=a+b%20c", 0, "v", "a b c"},
	{"v=%41%42", 0, "v", "AB"},
	{"a=1&&b=", 0, "b", ""},
	{"flag", 0, "flag", ""},
	{"a=1&", 0, "a", "1"},
	{"", 0, NULL, NULL},
	{"v=%zz", -EINVAL, NULL, "bad escape '%zz' in value of 'v'"},
	{"v=%4", -EINVAL, NULL, "bad escape '%4'"},
	{"v=%", -EINVAL, NULL, "bad escape '%'"},
	{"a=1&a=2", -EINVAL, NULL, "key 'a' given twice"},
	{"=1", -EINVAL, NULL, "empty key"},
	{"a%20b=1", -EINVAL, NULL, "key 'a b'"},
	{"v=%00", -EINVAL, NULL, "control byte 0x00"},
	{"v=a%0Ab", 0, "v", "a\nb"},
};

static void
form_rows_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(form_rows) / sizeof(form_rows[0]); i++) {
		struct fw_form f;
		char err[256] = "";
		int rc = fw_form_parse(form_rows[i].in, strlen(form_rows[i].in), &f, err, sizeof(err));

		if (rc != form_rows[i].rc)
			fail_msg("row %zu '%s': rc %d, want %d (%s)", i, form_rows[i].in, rc,
				 form_rows[i].rc, err);
		if (rc == 0 && form_rows[i].key != NULL)
			assert_string_equal(fw_form_get(&f, form_rows[i].key), form_rows[i].want);
		if (rc != 0 && strstr(err, form_rows[i].want) == NULL)
			fail_msg("row %zu '%s': error '%s' lacks '%s'", i, form_rows[i].in, err,
				 form_rows[i].want);
		fw_form_free(&f);
	}
}

static void
form_limits_hold(void **state)
{
	char *s = malloc(70 * 8 + FW_FORM_VALUE_MAX + 16), err[256];
	struct fw_form f;
	size_t n = 0;

	(void)state;
	for (int i = 0; i < FW_FORM_FIELDS_MAX + 1; i++)
		n += (size_t)sprintf(s + n, "k%d=1&", i);
	assert_int_equal(fw_form_parse(s, n, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "more than 64 fields"));
	n = (size_t)sprintf(s, "v=");
	memset(s + n, 'x', FW_FORM_VALUE_MAX + 1);
	n += FW_FORM_VALUE_MAX + 1;
	assert_int_equal(fw_form_parse(s, n, &f, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer than 8192 bytes"));
	assert_int_equal(fw_form_parse(s, n - 1, &f, err, sizeof(err)), 0);
	fw_form_free(&f);
	free(s);
}

/* ---- fw_req ---- */

static const struct {
	const char *query;
	int rc;
	const char *want;	/* the request, or the error's words */
} conns_rows[] = {
	{"", 0, "conns 0 50\n"},
	{"from=8&addr=10.0.0.0%2F8&port=443", 0, "conns 8 50 addr=10.0.0.0/8 port=443\n"},
	{"state=cut&action=DROP", 0, "conns 0 50 state=cut action=DROP\n"},
	{"addr=fd00%3A%3A1", 0, "conns 0 50 addr=fd00::1\n"},
	{"addr=1.2.3.4+status", -EINVAL, "addr '1.2.3.4 status'"},
	{"state=a%0Acut-conn+1", -EINVAL, "state"},
	{"port=65536", -EINVAL, "past 65535"},
	{"from=-1", -EINVAL, "from '-1'"},
	{"from=18446744073709551616", -EINVAL, "past 2^64-1"},
};

static void
conns_rows_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(conns_rows) / sizeof(conns_rows[0]); i++) {
		struct fw_form q;
		char out[512], err[256] = "";
		int rc;

		assert_int_equal(fw_form_parse(conns_rows[i].query, strlen(conns_rows[i].query), &q,
					       err, sizeof(err)), 0);
		rc = fw_req_conns(&q, out, sizeof(out), err, sizeof(err));
		if (rc != conns_rows[i].rc)
			fail_msg("row %zu '%s': rc %d (%s)", i, conns_rows[i].query, rc, err);
		if (rc == 0)
			assert_string_equal(out, conns_rows[i].want);
		else if (strstr(err, conns_rows[i].want) == NULL)
			fail_msg("row %zu: error '%s' lacks '%s'", i, err, conns_rows[i].want);
		fw_form_free(&q);
	}
}

static const struct {
	const char *key, *value;
	int list, rc;
	const char *want;
} set_rows[] = {
	{"cut_in_hardware", "off", 0, 0, "settings-set cut_in_hardware off\n"},
	{"watched_set", "inet f2b-table *\r\nip crowdsec crowdsec-*\r\n\r\n", 1, 0,
	 "settings-set watched_set\ninet f2b-table *\nip crowdsec crowdsec-*\n"},
	{"watched_set", "", 1, 0, "settings-set watched_set\n"},
	{"idle_timeout", "3\ncut-conn 1", 0, -EINVAL, "a value of one line"},
	{"Bad Key", "1", 0, -EINVAL, "not a settings key"},
	{"k\n", "1", 0, -EINVAL, "not a settings key"},
};

static void
set_rows_hold(void **state)
{
	char out[FW_FORM_VALUE_MAX + 64], err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(set_rows) / sizeof(set_rows[0]); i++) {
		int rc = fw_req_set(set_rows[i].key, set_rows[i].value, set_rows[i].list, out,
				    sizeof(out), err, sizeof(err));

		if (rc != set_rows[i].rc)
			fail_msg("row %zu: rc %d (%s)", i, rc, err);
		if (rc == 0)
			assert_string_equal(out, set_rows[i].want);
		else if (strstr(err, set_rows[i].want) == NULL)
			fail_msg("row %zu: error '%s' lacks '%s'", i, err, set_rows[i].want);
	}
	assert_int_equal(fw_req_cut("12", out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "cut-conn 12\n");
	assert_int_equal(fw_req_cut("12 x", out, sizeof(out), err, sizeof(err)), -EINVAL);
}

/* ---- fw_auth ---- */

static const struct {
	const char *hdr;
	int rc;
	const char *secret;	/* rc 0: the password taken */
} basic_rows[] = {
	{"Basic b3BlcmF0b3I6czNjcmV0", 0, "s3cret"},		/* operator:s3cret */
	{"basic  b3BlcmF0b3I6czNjcmV0", 0, "s3cret"},		/* the scheme any case, spaces */
	{"Basic OnMzY3JldA==", 0, "s3cret"},			/* :s3cret, no user name */
	{"Basic b3BlcmF0b3I6YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWE=", 0, NULL},	/* 128 bytes: the most */
	{NULL, -ENOENT, NULL},					/* no header */
	{"Bearer b3BlcmF0b3I6czNjcmV0", -EINVAL, NULL},		/* wrong scheme */
	{"Basicb3BlcmF0b3I6czNjcmV0", -EINVAL, NULL},
	{"Digest username=\"operator\"", -EINVAL, NULL},
	{"Basic b3BlcmF0b3I6czNjcmV0!", -EINVAL, NULL},		/* bad base64: a byte not of it */
	{"Basic b3BlcmF0b3I6czNjcmV", -EINVAL, NULL},		/* not a multiple of 4 */
	{"Basic b3A=OnMz", -EINVAL, NULL},			/* padding inside */
	{"Basic ====", -EINVAL, NULL},
	{"Basic ", -EINVAL, NULL},				/* empty */
	{"Basic b3A6", -EINVAL, NULL},				/* op: - an empty password */
	{"Basic czNjcmV0", -EINVAL, NULL},			/* s3cret - no ':' */
	{"Basic b3A6YSBi", -EINVAL, NULL},			/* op:a b - a space */
	{"Basic b3BlcmF0b3I6YWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFhYWFh", -E2BIG, NULL},	/* too long: 129 bytes */
};

static void
basic_rows_hold(void **state)
{
	char secret[FW_AUTH_SECRET_MAX + 1];
	const char *why;

	(void)state;
	for (size_t i = 0; i < sizeof(basic_rows) / sizeof(basic_rows[0]); i++) {
		int rc = fw_auth_basic(basic_rows[i].hdr, secret, sizeof(secret), &why);

		if (rc != basic_rows[i].rc)
			fail_msg("basic row %zu: %d, not %d (%s)", i, rc, basic_rows[i].rc, why);
		if (rc == 0 && basic_rows[i].secret != NULL && strcmp(secret, basic_rows[i].secret) != 0)
			fail_msg("basic row %zu: the password '%s'", i, secret);
		if (rc == 0 && basic_rows[i].secret == NULL && strlen(secret) != FW_AUTH_SECRET_MAX)
			fail_msg("basic row %zu: a password of %zu bytes", i, strlen(secret));
		if (rc != 0 && (secret[0] != '\0' || strncmp(why, rc == -ENOENT ? "no " : "Authorization:",
								 rc == -ENOENT ? 3 : 14) != 0))
			fail_msg("basic row %zu: secret '%s', why '%s'", i, secret, why);
	}
}

static const struct {
	const char *host;
	bool ok;
} host_rows[] = {
	{"127.0.0.1:9842", true},
	{"[::1]:9842", true},
	{"localhost:9842", true},
	{"LocalHost:9842", true},
	{"127.0.0.1:8000", false},	/* another port's */
	{"localhost:8000", false},
	{"127.0.0.1", false},		/* no port: 80 */
	{"localhost", false},
	{"evil.example:9842", false},	/* DNS rebinding: a name resolving to 127.0.0.1 */
	{"127.0.0.1:9842.evil.example", false},
	{"", false},
	{NULL, false},
};

static void
host_rows_hold(void **state)
{
	struct fw_auth a;

	(void)state;
	assert_int_equal(fw_auth_init(&a), 0);
	assert_int_equal(fw_auth_listen(&a, "127.0.0.1:9842"), 0);
	assert_int_equal(fw_auth_listen(&a, "[::1]:9842"), 0);
	assert_int_equal(a.nhosts, 3);	/* one localhost:9842 */
	assert_int_equal(fw_auth_listen(&a, "127.0.0.1"), -EINVAL);
	for (size_t i = 0; i < sizeof(host_rows) / sizeof(host_rows[0]); i++)
		if (fw_auth_host_ok(&a, host_rows[i].host) != host_rows[i].ok)
			fail_msg("host row %zu (%s): not %d", i, host_rows[i].host ? host_rows[i].host : "NULL",
				 host_rows[i].ok);
	for (int i = 0; i < FW_AUTH_HOSTS; i++)
		if (fw_auth_listen(&a, "10.0.0.1:1") != 0)
			break;
	assert_int_equal(fw_auth_listen(&a, "10.0.0.1:2"), -ENOSPC);
}

static void
csrf_holds(void **state)
{
	struct fw_auth a, b;
	char t[FW_AUTH_HEX];

	(void)state;
	assert_int_equal(fw_auth_init(&a), 0);
	assert_int_equal(fw_auth_init(&b), 0);
	assert_int_equal(strspn(a.csrf, "0123456789abcdef"), 32);
	assert_string_not_equal(a.csrf, b.csrf);	/* random a process */
	memcpy(t, a.csrf, sizeof(t));
	assert_true(fw_auth_csrf_ok(&a, t));
	assert_false(fw_auth_csrf_ok(&b, t));
	t[31] = t[31] == '0' ? '1' : '0';
	assert_false(fw_auth_csrf_ok(&a, t));
	assert_false(fw_auth_csrf_ok(&a, "short"));
	assert_false(fw_auth_csrf_ok(&a, NULL));
}

static const struct {
	const char *origin, *referer, *host;
	bool ok;
} origin_rows[] = {
	{"http://127.0.0.1:9842", NULL, "127.0.0.1:9842", true},
	{"http://[::1]:9842", NULL, "[::1]:9842", true},
	{NULL, "http://127.0.0.1:9842/settings", "127.0.0.1:9842", true},
	{NULL, NULL, "127.0.0.1:9842", false},	/* neither: refused */
	{"http://127.0.0.1:8000", NULL, "127.0.0.1:9842", false},	/* another port */
	{"http://evil.example", NULL, "127.0.0.1:9842", false},
	{"null", NULL, "127.0.0.1:9842", false},
	{NULL, "http://127.0.0.1:98420/", "127.0.0.1:9842", false},
	{NULL, "http://127.0.0.1:9842.evil/", "127.0.0.1:9842", false},
	{"http://127.0.0.1:9842", NULL, NULL, false},
};

static void
origin_rows_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(origin_rows) / sizeof(origin_rows[0]); i++)
		if (fw_auth_origin_ok(origin_rows[i].origin, origin_rows[i].referer,
				      origin_rows[i].host) != origin_rows[i].ok)
			fail_msg("origin row %zu: not %d", i, origin_rows[i].ok);
}

/* ---- documents ---- */

static const char counters_a[] =
	"{\"fastpath\":{\"rx\":1000,\"drop_cut\":10},\"flowcutd\":{\"offloads\":5,\"turn_max_us\":728,"
	"\"resync_last_ms\":4,\"bus_ms_x\":1,\"ms\":2},"
	"\"conntrack\":{\"entries\":40,\"limit\":65536,\"insert_failed\":0,\"drop\":1,\"early_drop\":2},"
	"\"ports\":[{\"port\":0,\"to_host\":10,\"to_wire\":900,\"dropped\":10,\"wire\":{\"RX_MISSED\":17,\"TX_FRAMES\":\"x\",\"BUSY_NS\":1500000000}},"
	"{\"port\":1,\"to_host\":0,\"to_wire\":0,\"dropped\":0}],"
	"\"link\":{\"refused\":3},\"connections\":{\"ips\":1,\"fwd\":2,\"cut\":3,\"dropping\":1},"
	"\"connections_by\":[{\"action\":\"IPS\",\"verdict\":\"DROP\",\"n\":3},{\"action\":\"FWD\",\"verdict\":\"CUT_THRU\",\"n\":0},"
	"{\"action\":null,\"verdict\":\"DROP\",\"n\":9},{\"action\":\"IPS\",\"verdict\":\"CUT_THRU\",\"n\":\"x\"}],"
	"\"gate\":true,\"ips_switch\":false,\"boot_id\":\"00112233aabbccdd\",\"uptime_s\":90061,\"time_ms\":1000,\"fastpath_time_ms\":950}";
static const char counters_b[] =
	"{\"fastpath\":{\"rx\":3000,\"drop_cut\":5},\"ports\":[{\"port\":0,\"to_host\":20,\"to_wire\":2900,\"dropped\":1010}],"
	"\"time_ms\":3000}";
static const char triggers[] =
	"{\"sources\":[{\"kind\":\"set\",\"name\":\"inet t \\\"s\\\"\\\\x\\ny\",\"followed\":true,\"elements\":3,\"cut\":4,\"frames\":99},"
	"{\"kind\":\"list\",\"name\":\"/etc/l\",\"elements\":1,\"cut\":2,\"frames\":0},"
	"{\"kind\":\"set\",\"name\":\"b\",\"elements\":0,\"cut\":1,\"frames\":0}],\"frames_read\":1}";

static json_t *
doc(const char *s)
{
	json_t *j = json_loads(s, 0, NULL);

	assert_non_null(j);
	return j;
}

static void
rates_hold(void **state)
{
	json_t *a = doc(counters_a), *b = doc(counters_b);
	static struct fw_sample s;
	struct fw_point pts[FW_SAMPLE_N];
	json_t *last, *prev;
	double r;

	(void)state;
	assert_int_equal(fw_sample_rate(a, b, "fastpath", "rx", &r), 0);
	assert_true(r > 999.9 && r < 1000.1);
	assert_int_equal(fw_sample_rate(a, b, "fastpath", "drop_cut", &r), -ERANGE);
	assert_int_equal(fw_sample_rate(a, b, "flowcutd", "offloads", &r), -ENOENT);
	assert_int_equal(fw_sample_rate(b, a, "fastpath", "rx", &r), -EINVAL);
	fw_sample_init(&s);
	fw_sample_push(&s, a);
	fw_sample_push(&s, b);
	assert_int_equal(fw_sample_get(&s, &last, &prev, pts, NULL, 0), 1);
	assert_true(pts[0].ok);
	assert_true(pts[0].wire > 999.9 && pts[0].wire < 1000.1);
	assert_true(pts[0].dropped > 499.9 && pts[0].dropped < 500.1);
	assert_true(pts[0].host > 4.9 && pts[0].host < 5.1);
	json_decref(last);
	json_decref(prev);
	for (int i = 0; i < FW_SAMPLE_N + 5; i++) {
		json_t *c = json_pack("{s:I, s:[{s:i, s:i, s:i, s:i}]}", "time_ms", (json_int_t)(4000 + 1000 * i),
				      "ports", "port", 0, "to_host", i, "to_wire", i, "dropped", i);
		fw_sample_push(&s, c);
		json_decref(c);
	}
	assert_int_equal(fw_sample_get(&s, &last, &prev, pts, NULL, 0), FW_SAMPLE_N);
	assert_int_equal(pts[FW_SAMPLE_N - 1].t_ms, 4000 + 1000 * (FW_SAMPLE_N + 4));
	assert_true(pts[FW_SAMPLE_N - 2].t_ms < pts[FW_SAMPLE_N - 1].t_ms);
	json_decref(last);
	json_decref(prev);
	fw_sample_fini(&s);
	json_decref(a);
	json_decref(b);
}

/* flowcutd's answers as fw_ctl reads them: JSON, and cut-conn's text as it answers it */
static const struct {
	const char *ans;
	int rc;
	const char *want;	/* the string doc's text, a key the object has, or err's words */
} answer_rows[] = {
	{"ok {\"key\":\"idle_timeout\",\"value\":\"30\"}\n", 0, "key"},
	{"ok [1,2]\n", 0, NULL},
	{"ok connection 1 cut in hardware\n", 0, "connection 1 cut in hardware"},
	{"ok connection 1 cut on the host\n\n", 0, "connection 1 cut on the host"},
	{"error idle_timeout: not 1 to 65535 seconds\n", -EPROTO, "idle_timeout: not 1 to 65535 seconds"},
	{"ok {\"key\":\n", -EBADMSG, "not JSON"},
	{"okay\n", -EBADMSG, "neither ok nor error: okay"},
	{"ok \xff\xfe\n", -EBADMSG, "not UTF-8"},
	{"", -EBADMSG, "neither ok nor error"},
};

static void
answer_rows_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(answer_rows) / sizeof(answer_rows[0]); i++) {
		char ans[256], err[256] = "";
		json_t *d = (json_t *)1;
		int rc;

		snprintf(ans, sizeof(ans), "%s", answer_rows[i].ans);
		rc = fw_ctl_answer("/x.sock", ans, strlen(ans), &d, err, sizeof(err));
		if (rc != answer_rows[i].rc)
			fail_msg("row %zu (%s): rc %d, want %d (%s)", i, answer_rows[i].ans, rc, answer_rows[i].rc, err);
		if (rc != 0 && (d != NULL || strstr(err, answer_rows[i].want) == NULL))
			fail_msg("row %zu: err '%s', want '%s'", i, err, answer_rows[i].want);
		if (rc == 0 && answer_rows[i].want != NULL &&
		    !(json_is_string(d) ? strcmp(json_string_value(d), answer_rows[i].want) == 0 :
					  json_object_get(d, answer_rows[i].want) != NULL))
			fail_msg("row %zu: the answer's document lacks '%s'", i, answer_rows[i].want);
		json_decref(d);
	}
}

/* the graph's figures from two answers as flowcutd sends them
 * (docs/commands.md; flowcutd's ports carry to_host alone: to the wire and
 * dropped are then the fast path's outcomes) and as the protocol has them
 * (the ports' own win) */
static const struct {
	const char *a, *b;	/* two `counters` answers, 1 s apart */
	bool ok;
	double wire, host, dropped;
} figure_rows[] = {
	{"{\"time_ms\":1000, \"ports\":[{\"port\":0, \"to_host\":10}, {\"port\":1, \"to_host\":0}],"
	 " \"fastpath\":{\"FROM_WIRE_RX\":0, \"FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU\":0, \"FROM_KN_TO_WIRE\":0,"
	 " \"FROM_WIRE_DROP_IPS_VERDICT\":0, \"FROM_KN_DROP_LIF_UNKNOWN\":0, \"NPU_TX_FULL\":0}}",
	 "{\"time_ms\":2000, \"ports\":[{\"port\":0, \"to_host\":13}, {\"port\":1, \"to_host\":4}],"
	 " \"fastpath\":{\"FROM_WIRE_RX\":90000, \"FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU\":300, \"FROM_KN_TO_WIRE\":20,"
	 " \"FROM_WIRE_DROP_IPS_VERDICT\":50000, \"FROM_KN_DROP_LIF_UNKNOWN\":2, \"NPU_TX_FULL\":7}}",
	 true, 320, 7, 50002},
	{"{\"time_ms\":1000, \"ports\":[{\"port\":0, \"to_host\":0, \"to_wire\":0, \"dropped\":0}],"
	 " \"fastpath\":{\"FROM_WIRE_TO_WIRE\":0, \"FROM_WIRE_DROP_IPS_VERDICT\":0}}",
	 "{\"time_ms\":2000, \"ports\":[{\"port\":0, \"to_host\":1, \"to_wire\":2, \"dropped\":3}],"
	 " \"fastpath\":{\"FROM_WIRE_TO_WIRE\":900, \"FROM_WIRE_DROP_IPS_VERDICT\":900}}",
	 true, 2, 1, 3},
	{"{\"time_ms\":1000, \"ports\":[{\"port\":0, \"to_host\":0}]}",
	 "{\"time_ms\":2000, \"ports\":[{\"port\":0, \"to_host\":5}]}", false, 0, 0, 0},
};

static void
figure_rows_hold(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(figure_rows) / sizeof(figure_rows[0]); i++) {
		json_t *a = doc(figure_rows[i].a), *b = doc(figure_rows[i].b), *last, *prev;
		static struct fw_sample s;
		struct fw_point pts[FW_SAMPLE_N];

		fw_sample_init(&s);
		fw_sample_push(&s, a);
		fw_sample_push(&s, b);
		assert_int_equal(fw_sample_get(&s, &last, &prev, pts, NULL, 0), 1);
		if (pts[0].ok != figure_rows[i].ok)
			fail_msg("row %zu: ok %d, want %d", i, pts[0].ok, figure_rows[i].ok);
		if (figure_rows[i].ok && (pts[0].wire != figure_rows[i].wire || pts[0].host != figure_rows[i].host ||
					  pts[0].dropped != figure_rows[i].dropped))
			fail_msg("row %zu: wire %.1f host %.1f dropped %.1f, want %.1f %.1f %.1f", i, pts[0].wire,
				 pts[0].host, pts[0].dropped, figure_rows[i].wire, figure_rows[i].host,
				 figure_rows[i].dropped);
		json_decref(last);
		json_decref(prev);
		fw_sample_fini(&s);
		json_decref(a);
		json_decref(b);
	}
}

static const struct {
	const char *want;	/* a line that must be in /metrics, or (absent) one that must not */
	bool present;
} metrics_rows[] = {
	{"flowcut_fastpath_frames_total{outcome=\"rx\"} 1000\n", true},
	{"# TYPE flowcut_fastpath_frames_total counter\n", true},
	{"flowcut_daemon_offloads 5\n", true},
	{"flowcut_daemon_turn_max_seconds 0.000728\n", true},	/* promtool: base units */
	{"flowcut_daemon_resync_last_seconds 0.004\n", true},
	{"flowcut_daemon_bus_seconds_x 0.001\n", true},
	{"flowcut_daemon_seconds 0.002\n", true},
	{"_us ", false},
	{"_ms ", false},
	{"flowcut_port_frames_total{port=\"0\",way=\"to_host\"} 10\n", true},
	{"flowcut_wire_frames_total{port=\"0\",figure=\"RX_MISSED\"} 17\n", true},
	{"# TYPE flowcut_wire_frames_total counter\n", true},
	{"figure=\"TX_FRAMES\"", false},		/* not a number: left out */
	{"figure=\"BUSY_NS\"", false},		/* a time, not frames: */
	{"flowcut_wire_busy_seconds_total{port=\"0\"} 1.500000000\n", true},	/* in seconds */
	{"# TYPE flowcut_wire_busy_seconds_total counter\n", true},
	{"flowcut_link_refused_total 3\n", true},
	{"flowcut_connections{action=\"IPS\",verdict=\"DROP\"} 3\n", true},
	{"flowcut_connections{action=\"FWD\",verdict=\"CUT_THRU\"} 0\n", true},	/* 0: a series kept */
	{"# TYPE flowcut_connections gauge\n", true},
	{"} 9\n", false},			/* a cell without its action: left out */
	{"verdict=\"CUT_THRU\"} x", false},
	{"flowcut_connections{kind=", false},
	{"flowcut_connections_cut 3\n", true},
	{"flowcut_counters_time_seconds 0.950\n", true},	/* fastpath_time_ms 950, not time_ms 1000 */
	{"flowcut_gate 1\n", true},
	{"flowcut_ips_switch 0\n", true},
	{"flowcut_boot_info{boot_id=\"00112233aabbccdd\"} 1\n", true},
	{"node_nf_conntrack_entries 40\n", true},
	{"node_nf_conntrack_entries_limit 65536\n", true},
	{"node_nf_conntrack_stat_insert_failed 0\n", true},
	{"node_nf_conntrack_stat_drop 1\n", true},
	{"node_nf_conntrack_stat_early_drop 2\n", true},
	{"flowcut_cuts_total{trigger=\"set\"} 5\n", true},
	{"flowcut_cuts_total{trigger=\"list\"} 2\n", true},
	{"flowcut_cuts_total{trigger=\"fingerprint\"}", false},
	{"flowcut_source_elements{kind=\"set\",source=\"inet t \\\"s\\\"\\\\x\\ny\"} 3\n", true},
	{"flowcut_source_frames_dropped_total{kind=\"set\",source=\"b\"} 0\n", true},
	{"flowcut_web_flowcutd_up 1\n", true},
};

static void
metrics_rows_hold(void **state)
{
	json_t *c = doc(counters_a), *t = doc(triggers);
	struct fw_buf b = {0};

	(void)state;
	assert_int_equal(fw_metrics_render(&b, c, t), 0);
	for (size_t i = 0; i < sizeof(metrics_rows) / sizeof(metrics_rows[0]); i++)
		if ((strstr(b.p, metrics_rows[i].want) != NULL) != metrics_rows[i].present)
			fail_msg("metrics row %zu: '%s' %s\n%s", i, metrics_rows[i].want,
				 metrics_rows[i].present ? "missing" : "present", b.p);
	fw_buf_free(&b);
	/* nothing answered: up 0 and no figure made up */
	assert_int_equal(fw_metrics_render(&b, NULL, NULL), 0);
	assert_non_null(strstr(b.p, "flowcut_web_flowcutd_up 0\n"));
	assert_null(strstr(b.p, "node_nf_conntrack_entries"));
	assert_null(strstr(b.p, "flowcut_gate"));
	fw_buf_free(&b);
	json_decref(c);
	json_decref(t);
}

/* ---- fw_html ---- */

static const char conns_doc[] =
	"{\"from\":0,\"next\":9,\"conns\":[{\"id\":7,\"family\":6,\"proto\":\"udp\",\"src\":\"fd00::2\",\"sport\":5000,"
	"\"dst\":\"fd00::3\",\"dport\":53,\"action\":\"DROP\",\"verdict\":\"DROP\",\"state\":\"cut\",\"idle_ms\":1500,"
	"\"packets\":10,\"cut\":{\"trigger\":\"set\",\"source\":\"<script>x</script>\",\"element\":\"fd00::/64\","
	"\"line\":null,\"when_s\":5,\"in_hardware\":true,\"frames_dropped\":3}}]}";
static const char settings_doc[] =
	"{\"path\":\"/etc/flowcut/settings.conf\",\"refused\":null,\"keys\":["
	"{\"key\":\"cut_in_hardware\",\"value\":\"off\",\"default\":\"on\",\"help\":\"Cut on the <coprocessor>.\",\"kind\":\"bool\"},"
	"{\"key\":\"watched_set\",\"value\":[\"inet f2b *\",\"ip a b\"],\"default\":[],\"help\":\"h\",\"kind\":\"list\"},"
	"{\"key\":\"idle_timeout\",\"value\":\"30\",\"default\":\"30\",\"help\":\"h2\",\"kind\":\"number\"}]}";

enum page { STATUS, CONNS, CONNS_ANON, SETTINGS, SETTINGS_ANON, CUTS, SETTINGS_AUTH, PAGES };

static const struct {
	enum page page;
	const char *want;
	bool present;
} html_rows[] = {
	{STATUS, "<b class=\"on\">open</b>", true},
	{STATUS, "<b class=\"off\">off</b>", true},
	{STATUS, "1d 01:01:01", true},
	{STATUS, "00112233aabbccdd", true},
	{STATUS, "<svg class=\"graph\"", true},
	{STATUS, "<td>rx</td><td class=\"n\">3000</td><td class=\"n\">1000.0</td>", true},
	{STATUS, "<td>drop_cut</td><td class=\"n\">5</td><td class=\"n\">-</td>", true},
	{STATUS, "<script src", false},
	{STATUS, "<link", false},
	{CONNS, "[fd00::2]:5000", true},
	{CONNS, "&lt;script&gt;x&lt;/script&gt;", true},
	{CONNS, "<script>x", false},
	{CONNS, "fd00::/64 (in hardware)", true},
	{CONNS, "<td class=\"n\">1.5</td>", true},
	{CONNS, "<td class=\"n\">-</td></tr>", false},	/* bytes missing: "-" but not at the row's end */
	{CONNS, "name=\"csrf\" value=\"0123456789abcdef0123456789abcdef\"", true},
	{CONNS, "action=\"/conns/cut\"", true},
	{CONNS, "/conns?from=9&amp;addr=fd00%3A%3A%2F64", false},
	{CONNS, "/conns?from=9&amp;addr=fd00::%2F64", true},
	{CONNS_ANON, "action=\"/conns/cut\"", false},
	{CONNS_ANON, "A cut asks for the operator's secret", true},
	{CONNS, "href=\"/login\"", false},
	{SETTINGS, "<option>on</option><option selected>off</option>", true},
	{SETTINGS, "Cut on the &lt;coprocessor&gt;.", true},
	{SETTINGS, "<textarea name=\"value\" id=\"watched_set\">inet f2b *\nip a b\n</textarea>", true},
	{SETTINGS, "refused: not a number: x&amp;y</span>", true},
	{SETTINGS_ANON, "<button>save</button>", false},
	/* flowcutd's refusal of the secret starts with its own "refused: " */
	{SETTINGS_AUTH, "<span class=\"err\">refused: uid 65534: the secret is wrong</span>", true},
	{SETTINGS_AUTH, "refused: refused", false},
	{CUTS, "<td>/etc/l</td><td class=\"n\">1</td><td class=\"n\">2</td>", true},
	/* when_s as UTC and its age at the page's now (1764631205: 2025-12-01 23:20:05 UTC) */
	{CUTS, "<td>2025-12-01 23:20:05 UTC (0 s ago)</td>", true},
	{CUTS, "<td>2025-12-01 23:19:30 UTC (35 s ago)</td>", true},
	{CUTS, "<td>2025-12-01 23:17:05 UTC (3 min ago)</td>", true},
	{CUTS, "<td>2025-12-01 21:19:05 UTC (2 h ago)</td>", true},
	{CUTS, "<td>2025-11-27 23:20:05 UTC (4 d ago)</td>", true},
	{CUTS, "<td>2025-12-01 23:21:05 UTC (0 s ago)</td>", true},	/* ahead of the page's clock */
	{CUTS, "<td>-</td><td>set", true},				/* not a number */
	{CUTS, "1764631205", false},
	{CUTS, "<th>when</th>", true},
};

static const char cuts_doc[] =
	"{\"cuts\":[{\"when_s\":1764631205,\"trigger\":\"hand\"},{\"when_s\":1764631170,\"trigger\":\"hand\"},"
	"{\"when_s\":1764631025,\"trigger\":\"hand\"},{\"when_s\":1764623945,\"trigger\":\"hand\"},"
	"{\"when_s\":1764285605,\"trigger\":\"hand\"},{\"when_s\":1764631265,\"trigger\":\"hand\"},"
	"{\"when_s\":\"x\",\"trigger\":\"set\"}]}";

static void
html_rows_hold(void **state)
{
	json_t *a = doc(counters_a), *b = doc(counters_b), *c = doc(conns_doc), *s = doc(settings_doc);
	json_t *t = doc(triggers), *a0 = doc(counters_a);
	const char *csrf = "0123456789abcdef0123456789abcdef";
	struct fw_buf pages[PAGES] = {{0}};
	struct fw_point pt = {.t_ms = 3000, .ok = true, .wire = 1000, .host = 5, .dropped = 500};
	struct fw_form q;
	char err[64];

	(void)state;
	assert_int_equal(fw_form_parse("addr=fd00::/64", 14, &q, err, sizeof(err)), 0);
	/* the documents merged as the page has them: b's figures over a's */
	json_object_update(a, b);
	assert_int_equal(fw_html_status(&pages[STATUS], a, a0, &pt, 1, NULL, NULL), 0);
	assert_int_equal(fw_html_conns(&pages[CONNS], c, NULL, &q, csrf, NULL), 0);
	assert_int_equal(fw_html_conns(&pages[CONNS_ANON], c, NULL, &q, NULL, NULL), 0);
	assert_int_equal(fw_html_settings(&pages[SETTINGS], s, NULL, csrf, "idle_timeout",
					  "not a number: x&y", NULL), 0);
	assert_int_equal(fw_html_settings(&pages[SETTINGS_ANON], s, NULL, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(fw_html_settings(&pages[SETTINGS_AUTH], s, NULL, csrf, "idle_timeout",
					  "refused: uid 65534: the secret is wrong", NULL), 0);
	json_t *cu = doc(cuts_doc);
	assert_int_equal(fw_html_cuts(&pages[CUTS], cu, t, NULL, 1764631205), 0);
	json_decref(cu);
	for (size_t i = 0; i < sizeof(html_rows) / sizeof(html_rows[0]); i++)
		if ((strstr(pages[html_rows[i].page].p, html_rows[i].want) != NULL) != html_rows[i].present)
			fail_msg("html row %zu: '%s' %s", i, html_rows[i].want,
				 html_rows[i].present ? "missing" : "present");
	/* a forced never_cut (flowcutd's never_cut_wide): said first on the status page, else not */
	assert_null(strstr(pages[STATUS].p, "never_cut holds"));
	{
		struct fw_buf w = {0};
		json_t *f = json_object_get(a, "flowcutd");

		json_object_set_new(f, "never_cut_wide", json_integer(2));
		assert_int_equal(fw_html_status(&w, a, a0, &pt, 1, NULL, NULL), 0);
		assert_non_null(strstr(w.p, "<p class=\"err\">never_cut holds 2 range(s) wider than a "
					  "/16 or /48 (never_cut_min_prefix lowered): nothing in them is "
					  "ever cut</p>"));
		assert_true(strstr(w.p, "never_cut holds") < strstr(w.p, "class=\"cards\""));
		json_object_del(f, "never_cut_wide");
		fw_buf_free(&w);
	}
	/* cut_in_hardware first, as the document orders it */
	assert_true(strstr(pages[SETTINGS].p, "cut_in_hardware") < strstr(pages[SETTINGS].p, "watched_set"));
	for (int i = 0; i < PAGES; i++)
		fw_buf_free(&pages[i]);
	fw_form_free(&q);
	json_decref(a);
	json_decref(b);
	json_decref(c);
	json_decref(s);
	json_decref(t);
	json_decref(a0);
}

/* ---- fw_guard: who holds the connections ---- */

/* the other end of a connection the guard let go reads its end (EOF), not nothing */
static bool
shut(int peer)
{
	char b;

	return recv(peer, &b, 1, MSG_DONTWAIT) == 0;
}

/*
 * Connections without an IP peer (socketpairs: one client): past
 * FW_GUARD_PER_CLIENT the oldest waiting goes, never one being answered;
 * every one being answered, the new one is over (503); a wait past
 * FW_GUARD_REQUEST_MS goes at the next opening; closes free their entries.
 */
static void
guard_bounds_hold(void **state)
{
	static int sv[FW_GUARD_PER_CLIENT + 2][2];
	static struct fw_guard g;
	struct fw_guard_conn *e[FW_GUARD_PER_CLIENT + 2], *x;
	struct fw_guard_stats st;
	uint64_t t;

	(void)state;
	fw_guard_init(&g, 10);
	t = fw_guard_now_ms();	/* times from now: the guard's own sweep reads the clock */
	for (int i = 0; i < FW_GUARD_PER_CLIENT; i++) {
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[i]), 0);
		e[i] = fw_guard_open(&g, sv[i][0], t + (uint64_t)i);
		assert_non_null(e[i]);
		assert_false(e[i]->over);
	}
	fw_guard_answering(&g, e[0]);	/* the oldest is being answered: the next oldest goes */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[FW_GUARD_PER_CLIENT]), 0);
	x = fw_guard_open(&g, sv[FW_GUARD_PER_CLIENT][0], t + 200);
	assert_non_null(x);
	assert_false(x->over);
	assert_false(shut(sv[0][1]));
	assert_true(shut(sv[1][1]));
	assert_false(shut(sv[2][1]));
	fw_guard_stats(&g, &st);
	assert_int_equal(st.let_go_client, 1);
	fw_guard_close(&g, e[1]);	/* MHD's close of the one let go */
	/* every one being answered: the next is over */
	for (int i = 2; i < FW_GUARD_PER_CLIENT; i++)
		fw_guard_answering(&g, e[i]);
	fw_guard_answering(&g, x);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv[FW_GUARD_PER_CLIENT + 1]), 0);
	x = fw_guard_open(&g, sv[FW_GUARD_PER_CLIENT + 1][0], t + 300);
	assert_non_null(x);
	assert_true(x->over);
	assert_false(shut(sv[FW_GUARD_PER_CLIENT + 1][1]));
	/* answered at t + 300, then nothing until FW_GUARD_REQUEST_MS past: it goes (with the rest waiting) */
	fw_guard_answered(&g, e[2], t + 300);
	fw_guard_close(&g, x);
	x = fw_guard_open(&g, sv[FW_GUARD_PER_CLIENT + 1][0], t + 300 + FW_GUARD_REQUEST_MS + 1);
	assert_true(shut(sv[2][1]));
	assert_false(shut(sv[3][1]));
	fw_guard_stats(&g, &st);
	assert_int_equal(st.let_go_deadline, 1);
	assert_int_equal(st.over, 1);
	fw_guard_close(&g, x);
	for (int i = 0; i < FW_GUARD_PER_CLIENT + 2; i++) {
		if (i != 1 && i < FW_GUARD_PER_CLIENT)
			fw_guard_close(&g, e[i]);
		close(sv[i][0]);
		close(sv[i][1]);
	}
	fw_guard_close(&g, NULL);
	fw_guard_fini(&g);
}

/*
 * A loopback TCP peer's client is its owner's uid (sock_diag), the same
 * uid for each of its connections; costly reads: twice the rate at once,
 * then the rate a second, past it refused.
 */
static void
guard_client_and_costly(void **state)
{
	static struct fw_guard g;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c[2], s[2];
	struct fw_guard_conn *e[2];
	struct fw_guard_stats st;
	int ok = 0;

	(void)state;
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 4), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
	if (fw_guard_init(&g, 10) != 0) {
		fw_guard_fini(&g);
		close(l);
		skip();
	}
	for (int i = 0; i < 2; i++) {
		c[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(c[i], (struct sockaddr *)&a, sizeof(a)), 0);
		s[i] = accept(l, NULL, NULL);
		assert_true(s[i] >= 0);
		e[i] = fw_guard_open(&g, s[i], 1000);
		assert_non_null(e[i]);
	}
	assert_int_equal(e[0]->client, e[1]->client);
	assert_int_equal(g.clients[e[0]->client].kind, 0);
	assert_int_equal(g.clients[e[0]->client].uid, geteuid());
	fw_guard_stats(&g, &st);
	assert_int_equal(st.uid_unknown, 0);
	for (int i = 0; i < 25; i++)
		ok += fw_guard_costly(&g, e[i % 2], 1000);
	assert_int_equal(ok, 20);
	assert_false(fw_guard_costly(&g, e[0], 1050));	/* half a token */
	assert_true(fw_guard_costly(&g, e[1], 1100));	/* one, 100 ms on */
	assert_false(fw_guard_costly(&g, e[1], 1100));
	/* a thread whose clock read came before another's: no refill (not 2^64 ms of one) */
	assert_false(fw_guard_costly(&g, e[0], 1090));
	fw_guard_stats(&g, &st);
	assert_int_equal(st.costly_refused, 8);
	for (int i = 0; i < 2; i++) {
		fw_guard_close(&g, e[i]);
		close(c[i]);
		close(s[i]);
	}
	fw_guard_fini(&g);
	close(l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(form_rows_hold),
		cmocka_unit_test(form_limits_hold),
		cmocka_unit_test(conns_rows_hold),
		cmocka_unit_test(set_rows_hold),
		cmocka_unit_test(basic_rows_hold),
		cmocka_unit_test(host_rows_hold),
		cmocka_unit_test(csrf_holds),
		cmocka_unit_test(origin_rows_hold),
		cmocka_unit_test(rates_hold),
		cmocka_unit_test(figure_rows_hold),
		cmocka_unit_test(answer_rows_hold),
		cmocka_unit_test(metrics_rows_hold),
		cmocka_unit_test(html_rows_hold),
		cmocka_unit_test(guard_bounds_hold),
		cmocka_unit_test(guard_client_and_costly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
