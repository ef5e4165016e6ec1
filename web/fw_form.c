/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_form.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int
key_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.' || c == '-';
}

/*
 * decode s[0..n) into a new string: 0 and *out, or -EINVAL with err
 * (what names "key" or "value of 'K'"), -ENOMEM.
 */
static int
decode(const char *s, size_t n, size_t max, size_t field, const char *what, char **out,
       size_t *outlen, char *err, size_t errlen)
{
	char *d = malloc(n + 1);
	size_t j = 0;

	if (d == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int hi = i + 1 < n ? hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? hexval(s[i + 2]) : -1;

			if (hi < 0 || lo < 0) {
				snprintf(err, errlen, "field %zu: bad escape '%.*s' in %s (%%XX, two hex digits)",
					 field + 1, (int)(n - i < 3 ? n - i : 3), s + i, what);
				free(d);
				return -EINVAL;
			}
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		if (c < 0x20 && c != '\t' && c != '\r' && c != '\n') {
			snprintf(err, errlen, "field %zu: control byte 0x%02x in %s", field + 1, c, what);
			free(d);
			return -EINVAL;
		}
		if (j == max) {
			snprintf(err, errlen, "field %zu: %s longer than %zu bytes", field + 1, what, max);
			free(d);
			return -EINVAL;
		}
		d[j++] = (char)c;
	}
	d[j] = '\0';
	*out = d;
	*outlen = j;
	return 0;
}

int
fw_form_parse(const char *s, size_t len, struct fw_form *form, char *err, size_t errlen)
{
	size_t at = 0;
	int rc = 0;

	memset(form, 0, sizeof(*form));
	while (at < len && rc == 0) {
		const char *amp = memchr(s + at, '&', len - at);
		size_t end = amp ? (size_t)(amp - s) : len;
		const char *eq = memchr(s + at, '=', end - at);
		size_t kend = eq ? (size_t)(eq - s) : end;
		struct fw_form_field *f;
		char what[FW_FORM_KEY_MAX + 16];
		size_t klen;

		if (end == at) {	/* an empty pair */
			at = end + 1;
			continue;
		}
		if (form->n == FW_FORM_FIELDS_MAX) {
			snprintf(err, errlen, "more than %d fields", FW_FORM_FIELDS_MAX);
			rc = -EINVAL;
			break;
		}
		f = &form->f[form->n];
		rc = decode(s + at, kend - at, FW_FORM_KEY_MAX, form->n, "key", &f->key, &klen, err,
			    errlen);
		if (rc != 0)
			break;
		form->n++;
		if (klen == 0) {
			snprintf(err, errlen, "field %zu: empty key", form->n);
			rc = -EINVAL;
			break;
		}
		for (size_t i = 0; i < klen; i++) {
			if (!key_byte((unsigned char)f->key[i])) {
				snprintf(err, errlen, "field %zu: key '%s': byte 0x%02x is not A-Z a-z 0-9 _ . -",
					 form->n, f->key, (unsigned char)f->key[i]);
				rc = -EINVAL;
				break;
			}
		}
		for (size_t i = 0; rc == 0 && i + 1 < form->n; i++) {
			if (strcmp(form->f[i].key, f->key) == 0) {
				snprintf(err, errlen, "key '%s' given twice (fields %zu and %zu)", f->key,
					 i + 1, form->n);
				rc = -EINVAL;
			}
		}
		if (rc != 0)
			break;
		snprintf(what, sizeof(what), "value of '%s'", f->key);
		if (eq != NULL)
			rc = decode(eq + 1, end - kend - 1, FW_FORM_VALUE_MAX, form->n - 1, what,
				    &f->value, &f->value_len, err, errlen);
		else
			rc = decode("", 0, FW_FORM_VALUE_MAX, form->n - 1, what, &f->value,
				    &f->value_len, err, errlen);
		at = end + 1;
	}
	if (rc != 0)
		fw_form_free(form);
	return rc;
}

const char *
fw_form_get(const struct fw_form *form, const char *key)
{
	for (size_t i = 0; i < form->n; i++)
		if (strcmp(form->f[i].key, key) == 0)
			return form->f[i].value;
	return NULL;
}

void
fw_form_free(struct fw_form *form)
{
	for (size_t i = 0; i < form->n; i++) {
		free(form->f[i].key);
		free(form->f[i].value);
	}
	memset(form, 0, sizeof(*form));
}
