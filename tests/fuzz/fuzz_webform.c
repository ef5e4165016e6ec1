/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcut-web's form and query parser (web/fw_form), what a
 * browser (or anyone) sends as a query string or a urlencoded POST body,
 * and the control requests built from it (web/fw_req).  Checks: no crash;
 * a refusal says why; an accepted form keeps every key unique, of key
 * bytes, within the limits; a request built from it is one line ending in
 * '\n' (conns, cut-conn, a single settings-set), or a list's lines with
 * no empty one, so no field can add a request of its own.  The same
 * bytes, NUL-terminated, as an Authorization header (web/fw_auth's Basic
 * parser: 0 with a password of printable bytes within its bound, or an
 * error with "" and, for -EINVAL, a reason) and as a Host header.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include <errno.h>

#include "fw_auth.h"
#include "fw_form.h"
#include "fw_req.h"

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_webform: %s: %s\n", what, detail);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

static void
one_line(const char *req, const char *what)
{
	const char *nl = strchr(req, '\n');

	if (nl == NULL || nl[1] != '\0')
		die(what, req);
}

/* The bytes as an Authorization and a Host header. */
static void
headers(const uint8_t *data, size_t size)
{
	static struct fw_auth a;
	static int ready;
	char hdr[512], secret[FW_AUTH_SECRET_MAX + 1];
	const char *why = NULL;
	size_t n = size < sizeof(hdr) - 1 ? size : sizeof(hdr) - 1;
	int rc;

	if (!ready) {
		if (fw_auth_init(&a) != 0 || fw_auth_listen(&a, "127.0.0.1:9842") != 0)
			die("fw_auth_init", "no auth");
		ready = 1;
	}
	memcpy(hdr, data, n);
	hdr[n] = '\0';
	rc = fw_auth_basic(hdr, secret, sizeof(secret), &why);
	if (rc == 0) {
		size_t len = strlen(secret);

		if (len == 0 || len > FW_AUTH_SECRET_MAX)
			die("a password accepted empty or past its bound", "");
		for (size_t i = 0; i < len; i++)
			if (secret[i] <= ' ' || secret[i] > '~')
				die("a password accepted with a byte a request line cannot carry", "");
	} else {
		if (secret[0] != '\0')
			die("a refused header left a password", "");
		if (rc == -EINVAL && (why == NULL || why[0] == '\0'))
			die("a header refused without a reason", "");
	}
	(void)fw_auth_host_ok(&a, hdr);
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	static char out[FW_FORM_BODY_MAX + 64];
	struct fw_form f;
	char err[256] = "";

	headers(data, size);
	if (fw_form_parse((const char *)data, size, &f, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			die("a form refused without a reason", "");
		if (f.n != 0)
			die("a refused form left fields", err);
		return 0;
	}
	if (f.n > FW_FORM_FIELDS_MAX)
		die("more fields than the bound", "");
	for (size_t i = 0; i < f.n; i++) {
		if (strlen(f.f[i].key) == 0 || strlen(f.f[i].key) > FW_FORM_KEY_MAX)
			die("a key past its bound or empty", f.f[i].key);
		if (strspn(f.f[i].key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
		    strlen(f.f[i].key))
			die("a key of other bytes", f.f[i].key);
		if (f.f[i].value_len > FW_FORM_VALUE_MAX || strlen(f.f[i].value) != f.f[i].value_len)
			die("a value past its bound or with a NUL", f.f[i].key);
		for (size_t j = 0; j < i; j++)
			if (strcmp(f.f[i].key, f.f[j].key) == 0)
				die("a key twice", f.f[i].key);
	}
	if (fw_req_conns(&f, out, sizeof(out), err, sizeof(err)) == 0)
		one_line(out, "conns: not one line");
	if (fw_req_cut(fw_form_get(&f, "id"), out, sizeof(out), err, sizeof(err)) == 0)
		one_line(out, "cut-conn: not one line");
	if (fw_req_set(fw_form_get(&f, "key"), fw_form_get(&f, "value"), 0, out, sizeof(out), err,
		       sizeof(err)) == 0)
		one_line(out, "settings-set: not one line");
	if (fw_req_set(fw_form_get(&f, "key"), fw_form_get(&f, "value"), 1, out, sizeof(out), err,
		       sizeof(err)) == 0) {
		if (out[strlen(out) - 1] != '\n' || strstr(out, "\n\n") != NULL || strchr(out, '\r'))
			die("settings-set list: an empty line or a CR", out);
	}
	fw_form_free(&f);
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"a=1&b=2", "addr=10.0.0.0%2F8&port=443&state=cut&action=DROP&from=8",
		"addr=fd00%3A%3A1", "v=a+b%20c", "a=1&&b=", "flag", "v=%zz", "v=%4", "a=1&a=2", "=1",
		"v=%00", "key=cut_in_hardware&value=off&csrf=0123456789abcdef0123456789abcdef",
		"key=watched_set&list=1&value=inet+f2b-table+*%0D%0Aip+crowdsec+crowdsec-*%0D%0A",
		"id=7&csrf=00", "secret=00112233445566778899aabbccddeeff",
		"key=idle_timeout&value=3%0Acut-conn+1", "state=a%0Acut-conn+1", "from=18446744073709551616",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
