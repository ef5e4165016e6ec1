/* SPDX-License-Identifier: BSD-3-Clause */
/* fc_fplist: see fc_fplist.h. */
#include "fc_fplist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flowcut/fc_grow.h>

#include "fc_file.h"

static bool
all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static bool
lower_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
}

/*
 * A JA4's a part: t or q, the version (2 characters: "13", "s3", "d1"...),
 * d or i, two 2-digit counts, the ALPN's first and last characters (an
 * ASCII letter or digit each, "00" without ALPN).  NULL, or what is wrong.
 */
static const char *
ja4_a_bad(const char *a)
{
	if (a[0] != 't' && a[0] != 'q')
		return "a JA4 starts with t (TCP) or q (QUIC)";
	if (!lower_alnum(a[1]) || !lower_alnum(a[2]))
		return "a JA4's version is two characters (13, 12, s3...)";
	if (a[3] != 'd' && a[3] != 'i')
		return "a JA4's fourth character is d (SNI) or i (none)";
	for (int i = 4; i < 8; i++)
		if (!isdigit((unsigned char)a[i]))
			return "a JA4's cipher and extension counts are two digits each";
	if (!isalnum((unsigned char)a[8]) || !isalnum((unsigned char)a[9]))
		return "a JA4's ALPN characters are letters or digits";
	return NULL;
}

int
fc_fp_kind_of(const char *s, size_t len)
{
	if (len == 32 && all_hex(s, 32))
		return FC_FP_JA3;
	if (len == FC_FP_STR_MAX && s[10] == '_' && s[23] == '_' && ja4_a_bad(s) == NULL &&
	    all_hex(s + 11, 12) && all_hex(s + 24, 12))
		return FC_FP_JA4;
	return 0;
}

/* One token: its entry, or what is wrong with it. */
static const char *
token_parse(const char *t, size_t n, struct fc_fp *fp)
{
	int kind = fc_fp_kind_of(t, n);

	if (kind == 0) {
		const char *why;

		if (n == FC_FP_STR_MAX && t[10] == '_' && t[23] == '_')
			return (why = ja4_a_bad(t)) != NULL ? why
				: "a JA4's two hashes are 12 hex digits each";
		if (memchr(t, '_', n) != NULL)
			return "not a JA4 (36 characters: t13d1516h2_8daaf6152771_e5627efa2ab1)";
		if (n == 32)
			return "a JA3 is 32 hex digits (its MD5)";
		return "neither a JA4 (t13d1516h2_8daaf6152771_e5627efa2ab1) nor a JA3 (32 hex "
		       "digits)";
	}
	memset(fp, 0, sizeof(*fp));
	memcpy(fp->s, t, n);
	/* the hashes as fc_ja writes them: lowercase; a JA4's a part as given */
	for (size_t i = kind == FC_FP_JA4 ? 11 : 0; i < n; i++)
		fp->s[i] = (char)tolower((unsigned char)fp->s[i]);
	fp->kind = (uint8_t)kind;
	return NULL;
}

static int
add(struct fc_fplist *l, const struct fc_fp *fp)
{
	struct fc_fp *a = fc_grow(l->fp, &l->cap, l->n, sizeof(*a), 64);

	if (a == NULL)
		return -ENOMEM;
	l->fp = a;
	l->fp[l->n++] = *fp;
	return 0;
}

/* By string, then by line: the first line of a fingerprint given twice stays. */
static int
cmp_fp(const void *a, const void *b)
{
	const struct fc_fp *x = a, *y = b;
	int c = strcmp(x->s, y->s);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static void
canon(struct fc_fplist *l)
{
	size_t w = 0;

	if (l->n == 0)
		return;
	qsort(l->fp, l->n, sizeof(*l->fp), cmp_fp);
	for (size_t r = 1; r < l->n; r++)
		if (strcmp(l->fp[r].s, l->fp[w].s) != 0)
			l->fp[++w] = l->fp[r];
	l->n = w + 1;
}

/* A bad line told: its number and why, never its text (the file may be anything). */
static void
tell(fc_fplist_bad_fn *bad, void *arg, unsigned long line, const char *why)
{
	if (bad != NULL)
		bad(arg, line, why);
}

/* One line (its comment cut off): 0 good or empty, 1 bad, -ENOMEM. */
static int
line_parse(const char *s, size_t n, unsigned long line, struct fc_fplist *out,
	   fc_fplist_bad_fn *bad, void *arg)
{
	size_t a = 0, e, b;
	struct fc_fp fp;
	const char *why;

	while (a < n && isspace((unsigned char)s[a]))
		a++;
	if (a == n)
		return 0;
	for (e = a; e < n && !isspace((unsigned char)s[e]); e++)
		if (!isprint((unsigned char)s[e])) {
			tell(bad, arg, line, "a control or non-ASCII byte");
			return 1;
		}
	for (b = e; b < n && isspace((unsigned char)s[b]); b++)
		;
	if (b < n) {
		tell(bad, arg, line, "more than one fingerprint on the line");
		return 1;
	}
	why = token_parse(s + a, e - a, &fp);
	if (why != NULL) {
		tell(bad, arg, line, why);
		return 1;
	}
	fp.line = line;
	return add(out, &fp);
}

long
fc_fplist_parse(const char *text, size_t len, struct fc_fplist *out, fc_fplist_bad_fn *bad,
		void *arg)
{
	size_t pos = 0, keep = out->n;
	unsigned long line = 0;
	long nbad = 0;

	while (pos < len) {
		const char *s = text + pos, *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;
		const char *hash = memchr(s, '#', n);
		int rc;

		line++;
		pos += n + 1;
		if (n > FC_FPLIST_MAX_LINE) {
			tell(bad, arg, line, "longer than 1024 bytes");
			nbad++;
			continue;
		}
		rc = line_parse(s, hash ? (size_t)(hash - s) : n, line, out, bad, arg);
		if (rc < 0) {
			out->n = keep;
			return rc;
		}
		nbad += rc;
	}
	canon(out);
	return nbad;
}

long
fc_fplist_load(const char *path, size_t max_bytes, struct fc_fplist *out, fc_fplist_bad_fn *bad,
	       void *arg, char *err, size_t errlen)
{
	struct fc_fplist l = { 0 };
	char *text;
	size_t len;
	long rc = fc_file_read(path, max_bytes, "list_max_bytes", &text, &len, err, errlen);

	if (rc < 0)
		return rc;
	rc = fc_fplist_parse(text, len, &l, bad, arg);
	free(text);
	if (rc < 0) {
		snprintf(err, errlen, "%s: no memory for its fingerprints", path);
		fc_fplist_free(&l);
		return rc;
	}
	fc_fplist_free(out);
	*out = l;
	return rc;
}

const struct fc_fp *
fc_fplist_find(const struct fc_fplist *l, const char *fp)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->fp[mid].s, fp);

		if (c == 0)
			return &l->fp[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void
fc_fplist_free(struct fc_fplist *l)
{
	if (l == NULL)
		return;
	free(l->fp);
	*l = (struct fc_fplist){ 0 };
}
