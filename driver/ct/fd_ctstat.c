/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_ctstat: see fd_ctstat.h. */
#include "fd_ctstat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FD_CTSTAT_COLS 64	/* columns of the stat file at most */
#define FD_CTSTAT_TEXT 65536	/* the stat file's bytes read at most (a CPU a line) */

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
			char hex[17], *e;
			unsigned long long v;

			if (c == ncols || n > 16) {
				snprintf(err, errlen, "line %u: %s", line, c == ncols ?
					 "more columns than its header" : "a figure over 16 hex digits");
				goto bad;
			}
			memcpy(hex, p - n, n);
			hex[n] = '\0';
			v = strtoull(hex, &e, 16);
			if (*e != '\0') {
				snprintf(err, errlen, "line %u, column %u: '%s' is not hex", line,
					 c + 1, hex);
				goto bad;
			}
			if (where[c] != NULL)
				*where[c] += (int64_t)(v & INT64_MAX);
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
	char *text = malloc(FD_CTSTAT_TEXT);
	long n;
	int rc = 0;

	proc = proc ? proc : "/proc";
	out->entries = number(proc, "sys/net/netfilter/nf_conntrack_count");
	out->limit = number(proc, "sys/net/netfilter/nf_conntrack_max");
	out->insert_failed = out->drop = out->early_drop = -1;
	n = text ? slurp(proc, "net/stat/nf_conntrack", text, FD_CTSTAT_TEXT) : -1;
	if (n > 0)
		rc = fd_ctstat_parse(text, (size_t)n, out, err, errlen);
	free(text);
	return rc;
}
