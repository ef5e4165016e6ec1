/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_form - flowcut-web's parser of what a browser sends as fields: a
 * query string (after the URL's '?') and an
 * application/x-www-form-urlencoded POST body, both the same grammar:
 * pairs "KEY=VALUE" separated by '&', '+' a space, "%XX" a byte.
 *
 * Hand-written rather than libmicrohttpd's own: MHD_get_connection_values
 * hands back the query already decoded and says nothing of a bad escape
 * ("%zz" passes through as is), of a key given twice (both delivered) or of
 * a count or a length past any bound, and MHD_create_post_processor, built
 * for streamed multipart bodies, is the same for urlencoded ones; neither
 * can tell the browser what was wrong, and neither is a pure function a
 * fuzz target can drive (tests/fuzz/fuzz_webform.c).  The body is bounded
 * before it gets here (fw_http: 413 past FW_FORM_BODY_MAX).
 *
 * The choices: a key given twice is refused (one field, one value: a
 * list setting is one textarea, a line a value), so no reader picks "the
 * first" while another picks "the last"; a key is [A-Za-z0-9_.-]+; a
 * decoded NUL or a control byte but \t, \r, \n is refused; an empty
 * pair ("a=1&&b=2", a trailing '&') is skipped; "KEY" alone is KEY with
 * an empty value.
 *
 * Any thread; a form is the caller's, fw_form_free() frees what it holds
 * (on a zeroed form, or twice, it does nothing).
 */
#ifndef FLOWCUT_FW_FORM_H
#define FLOWCUT_FW_FORM_H

#include <stddef.h>

#define FW_FORM_FIELDS_MAX 64		/* pairs in one form or query */
#define FW_FORM_KEY_MAX 64		/* a key's bytes, decoded */
#define FW_FORM_VALUE_MAX 8192		/* a value's bytes, decoded */
#define FW_FORM_BODY_MAX (16 * 1024)	/* a POST body: 413 past it */

struct fw_form_field {
	char *key;
	char *value;
	size_t value_len;
};

struct fw_form {
	size_t n;
	struct fw_form_field f[FW_FORM_FIELDS_MAX];
};

/*
 * fw_form_parse - s[0..len) into form (zeroed first).  0; -EINVAL with
 * err naming what was wrong and where ("field 3: bad escape '%zz' in
 * value of 'port'", "key 'a' given twice", "more than 64 fields", ...),
 * form then empty; -ENOMEM.  s need not be NUL-terminated.
 */
int fw_form_parse(const char *s, size_t len, struct fw_form *form, char *err, size_t errlen);

/* fw_form_get - KEY's value (NUL-terminated, the form's), or NULL */
const char *fw_form_get(const struct fw_form *form, const char *key);

void fw_form_free(struct fw_form *form);

#endif
