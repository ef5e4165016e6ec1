/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_buf.h"

static int
grow(struct fw_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->err != 0)
		return -1;
	if (b->len + more + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 1024;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (p == NULL) {
		b->err = -ENOMEM;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void
fw_buf_add(struct fw_buf *b, const char *s, size_t n)
{
	if (grow(b, n) != 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void
fw_buf_str(struct fw_buf *b, const char *s)
{
	fw_buf_add(b, s, strlen(s));
}

void
fw_buf_printf(struct fw_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow(b, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
fw_buf_html(struct fw_buf *b, const char *s)
{
	if (s == NULL) {
		fw_buf_str(b, "-");
		return;
	}
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fw_buf_str(b, "&amp;"); break;
		case '<': fw_buf_str(b, "&lt;"); break;
		case '>': fw_buf_str(b, "&gt;"); break;
		case '"': fw_buf_str(b, "&quot;"); break;
		case '\'': fw_buf_str(b, "&#39;"); break;
		default: fw_buf_add(b, s, 1);
		}
	}
}

void
fw_buf_label(struct fw_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '\\': fw_buf_str(b, "\\\\"); break;
		case '"': fw_buf_str(b, "\\\""); break;
		case '\n': fw_buf_str(b, "\\n"); break;
		default: fw_buf_add(b, s, 1);
		}
	}
}

int
fw_buf_err(const struct fw_buf *b)
{
	return b->err;
}

char *
fw_buf_take(struct fw_buf *b)
{
	char *p;

	if (b->err != 0) {
		fw_buf_free(b);
		return NULL;
	}
	if (b->p == NULL)
		fw_buf_add(b, "", 0);
	p = b->p;
	if (p == NULL)
		return NULL;
	memset(b, 0, sizeof(*b));
	return p;
}

void
fw_buf_free(struct fw_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}
