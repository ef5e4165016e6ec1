/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_ctstat: see fd_ctstat.h. */
#include "fd_ctstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FD_CTSTAT_COLS 64	/* columns of the stat file at most */
#define FD_CTSTAT_TEXT 65536	/* the stat file's first read (a CPU a line: ~420 CPUs) */
#define FD_CTSTAT_TEXT_MAX (16u << 20)	/* ... grown to at most (100,000 CPUs) */

/* The columns summed, by their header's name, and where each goes. */
static int64_t *
col_of(struct fd_ctstat *s, const char *name, size_t len)
{
	static const struct {
		const char *name;
		size_t off;
	} cols[] = {
		{ "insert_failed", offsetof(struct fd_ctstat, insert_failed) },
		{ "drop", offsetof(struct fd_ctstat, drop) },
		{ "early_drop", offsetof(struct fd_ctstat, early_drop) },
	};

	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (strlen(cols[i].name) == len && memcmp(cols[i].name, name, len) == 0)
			return (int64_t *)((char *)s + cols[i].off);
	return NULL;
}

/* The next word of [*p, end) (spaces and tabs between): its length, 0 at the line's end. */
static size_t
word(const char **p, const char *end)
{
	const char *w;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	w = *p;
	while (*p < end && **p != ' ' && **p != '\t' && **p != '\n')
		(*p)++;
	return (size_t)(*p - w);
}

int
fd_ctstat_parse(const char *text, size_t len, struct fd_ctstat *out, char *err, size_t errlen)
{
	const char *p = text, *end = text + len;
	int64_t *where[FD_CTSTAT_COLS];
	unsigned int ncols = 0, line = 1;
	size_t n;

	out->insert_failed = out->drop = out->early_drop = -1;
	while ((n = word(&p, end)) > 0) {
		if (ncols == FD_CTSTAT_COLS) {
			snprintf(err, errlen, "its header has more than %d columns", FD_CTSTAT_COLS);
			goto bad;
		}
		where[ncols++] = col_of(out, p - n, n);
	}
	if (ncols == 0) {
		snprintf(err, errlen, "no header line");
		goto bad;
	}
	for (unsigned int c = 0; c < ncols; c++)
		if (where[c] != NULL)
			*where[c] = 0;
	while (p < end) {
		unsigned int c = 0;

		p++;	/* the '\n' */
		line++;
		for (; (n = word(&p, end)) > 0; c++) {
			char hex[17];
			unsigned long long v;

			if (c == ncols || n > 16) {
				snprintf(err, errlen, "line %u: %s", line, c == ncols ?
					 "more columns than its header" : "a figure over 16 hex digits");
				goto bad;
			}
			memcpy(hex, p - n, n);
			hex[n] = '\0';
			if (strspn(hex, "0123456789abcdefABCDEF") != n) {	/* no sign, no 0x */
				snprintf(err, errlen, "line %u, column %u: '%s' is not hex", line,
					 c + 1, hex);
				goto bad;
			}
			v = strtoull(hex, NULL, 16);
			if (where[c] != NULL)	/* held at INT64_MAX, never wrapped */
				*where[c] = (uint64_t)*where[c] + v > INT64_MAX || v > INT64_MAX ?
					    INT64_MAX : *where[c] + (int64_t)v;
		}
		if (c != 0 && c != ncols) {
			snprintf(err, errlen, "line %u: %u columns, its header %u", line, c, ncols);
			goto bad;
		}
	}
	return 0;
bad:
	out->insert_failed = out->drop = out->early_drop = -1;
	return -EINVAL;
}

/* A file's text under `proc` into buf (NUL-terminated): its length, or -1. */
static long
slurp(const char *proc, const char *name, char *buf, size_t cap)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", proc, name);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

/*
 * The stat file whole into *text (grown, the caller frees; a machine of
 * more CPUs than the first read holds is read whole, not cut mid-line):
 * its length, or -1 (none, no memory, or past FD_CTSTAT_TEXT_MAX).
 */
static long
slurp_all(const char *proc, const char *name, char **text)
{
	char path[512], *buf = NULL, *more;
	size_t n = 0, cap = FD_CTSTAT_TEXT / 2, got;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", proc, name);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	do {
		if (cap >= FD_CTSTAT_TEXT_MAX || (more = realloc(buf, cap * 2)) == NULL) {
			n = 0;
			break;
		}
		buf = more;
		cap *= 2;
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (n == cap);
	fclose(f);
	*text = buf;
	return n > 0 ? (long)n : -1;
}

static int64_t
number(const char *proc, const char *name)
{
	char buf[32], *e;
	long long v;

	if (slurp(proc, name, buf, sizeof(buf)) <= 0)
		return -1;
	v = strtoll(buf, &e, 10);
	return e != buf && (*e == '\n' || *e == '\0') && v >= 0 ? v : -1;
}

int
fd_ctstat_read(const char *proc, struct fd_ctstat *out, char *err, size_t errlen)
{
	char *text = NULL;
	long n;
	int rc = 0;

	proc = proc ? proc : "/proc";
	out->entries = number(proc, "sys/net/netfilter/nf_conntrack_count");
	out->limit = number(proc, "sys/net/netfilter/nf_conntrack_max");
	out->insert_failed = out->drop = out->early_drop = -1;
	n = slurp_all(proc, "net/stat/nf_conntrack", &text);
	if (n > 0)
		rc = fd_ctstat_parse(text, (size_t)n, out, err, errlen);
	free(text);
	return rc;
}
