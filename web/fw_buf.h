/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fw_buf - a growing text buffer for flowcut-web's renderers, with the
 * escapes the outputs need: HTML text and attributes (& < > " '), and a
 * Prometheus label value (\\, \" and \n, exposition format 0.0.4).
 *
 * One buffer, one thread.  A failed allocation is sticky: every later
 * add does nothing and fw_buf_err() says -ENOMEM, so a renderer checks once
 * at its end.  fw_buf_free() frees the text; a buffer all zero is empty and
 * ready; fw_buf_free on it does nothing.
 */
#ifndef FLOWCUT_FW_BUF_H
#define FLOWCUT_FW_BUF_H

#include <stddef.h>

struct fw_buf {
	char *p;	/* NUL-terminated once anything was added */
	size_t len;
	size_t cap;
	int err;	/* 0 or -ENOMEM, sticky */
};

void fw_buf_add(struct fw_buf *b, const char *s, size_t n);
void fw_buf_str(struct fw_buf *b, const char *s);
void fw_buf_printf(struct fw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s escaped for HTML text or a quoted attribute; NULL adds "-" */
void fw_buf_html(struct fw_buf *b, const char *s);
/* s escaped as a Prometheus label value (without the quotes) */
void fw_buf_label(struct fw_buf *b, const char *s);
/* 0, or -ENOMEM if an add failed */
int fw_buf_err(const struct fw_buf *b);
/* the text handed over (caller frees), NULL on error (then freed) */
char *fw_buf_take(struct fw_buf *b);
void fw_buf_free(struct fw_buf *b);

#endif
