/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_req.h"

/* s non-empty and every byte in set */
static int
only(const char *s, const char *set)
{
	return s[0] != '\0' && strspn(s, set) == strlen(s);
}

static int
digits(const char *s, size_t max)
{
	return only(s, "0123456789") && strlen(s) <= max;
}

static const struct {
	const char *key, *set;
	size_t max;
} conn_filters[] = {
	{"addr", "0123456789abcdefABCDEF:./", 49},
	{"port", "0123456789", 5},
	{"state", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", 24},
	{"action", "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_", 24},
};

static int
put(char *out, size_t cap, size_t *at, const char *fmt, const char *a, const char *b)
{
	int n = snprintf(out + *at, cap - *at, fmt, a, b);

	if (n < 0 || (size_t)n >= cap - *at)
		return -EMSGSIZE;
	*at += (size_t)n;
	return 0;
}

int
fw_req_conns(const struct fw_form *q, char *out, size_t cap, char *err, size_t errlen)
{
	const char *from = q ? fw_form_get(q, "from") : NULL;
	char page[16];
	size_t at = 0;
	int rc;

	if (from == NULL || from[0] == '\0')
		from = "0";
	if (!digits(from, 20)) {
		snprintf(err, errlen, "from '%.40s': not a connection id (decimal)", from);
		return -EINVAL;
	}
	if (strlen(from) == 20 && strcmp(from, "18446744073709551615") > 0) {
		snprintf(err, errlen, "from '%s': past 2^64-1", from);
		return -EINVAL;
	}
	snprintf(page, sizeof(page), "%d", FW_REQ_CONNS_PAGE);
	rc = put(out, cap, &at, "conns %s %s", from, page);
	for (size_t i = 0; rc == 0 && i < sizeof(conn_filters) / sizeof(conn_filters[0]); i++) {
		const char *v = q ? fw_form_get(q, conn_filters[i].key) : NULL;

		if (v == NULL || v[0] == '\0')
			continue;
		if (!only(v, conn_filters[i].set) || strlen(v) > conn_filters[i].max) {
			snprintf(err, errlen, "%s '%.60s': not %s", conn_filters[i].key, v,
				 i == 0 ? "an address or a prefix" :
				 i == 1 ? "a port (decimal, up to 65535)" : "a name (letters and _)");
			return -EINVAL;
		}
		if (i == 1 && strtoul(v, NULL, 10) > 65535) {
			snprintf(err, errlen, "port '%s': past 65535", v);
			return -EINVAL;
		}
		rc = put(out, cap, &at, " %s=%s", conn_filters[i].key, v);
	}
	if (rc == 0)
		rc = put(out, cap, &at, "%s%s", "\n", "");
	if (rc != 0)
		snprintf(err, errlen, "conns request: longer than %zu bytes", cap);
	return rc;
}

int
fw_req_cut(const char *id, char *out, size_t cap, char *err, size_t errlen)
{
	size_t at = 0;

	if (id == NULL || !digits(id, 20)) {
		snprintf(err, errlen, "id '%.40s': not a connection id (decimal)", id ? id : "");
		return -EINVAL;
	}
	if (put(out, cap, &at, "cut-conn %s%s\n", id, "") != 0) {
		snprintf(err, errlen, "cut-conn request: longer than %zu bytes", cap);
		return -EMSGSIZE;
	}
	return 0;
}

int
fw_req_set(const char *key, const char *value, int list, char *out, size_t cap, char *err,
	   size_t errlen)
{
	size_t at = 0;
	int rc;

	if (key == NULL || !only(key, "abcdefghijklmnopqrstuvwxyz0123456789_") || strlen(key) > 64) {
		snprintf(err, errlen, "key '%.64s': not a settings key ([a-z0-9_])", key ? key : "");
		return -EINVAL;
	}
	if (value == NULL)
		value = "";
	if (!list) {
		if (strpbrk(value, "\r\n") != NULL) {
			snprintf(err, errlen, "%s: a value of one line (only a list takes a line a value)", key);
			return -EINVAL;
		}
		rc = put(out, cap, &at, "settings-set %s %s\n", key, value);
	} else {
		const char *p = value;

		rc = put(out, cap, &at, "settings-set %s%s\n", key, "");
		while (rc == 0 && *p != '\0') {
			size_t n = strcspn(p, "\r\n");
			char line[FW_FORM_VALUE_MAX + 1];

			memcpy(line, p, n);
			line[n] = '\0';
			/* blank lines (and a line of spaces) are no values */
			if (strspn(line, " \t") != n)
				rc = put(out, cap, &at, "%s%s\n", line, "");
			p += n;
			p += strspn(p, "\r\n");
		}
	}
	if (rc != 0)
		snprintf(err, errlen, "%s: the request is longer than %zu bytes", key, cap);
	return rc;
}
