/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_fplist: the watched TLS fingerprints file (`watched_fingerprints`):
 * the JA4 and JA3 fingerprints of clients whose connections are cut.
 *
 * One fingerprint a line:
 *
 *   t13d1516h2_8daaf6152771_e5627efa2ab1    a JA4: its a part (t or q, the
 *                                           version, d or i, two 2-digit
 *                                           counts, the ALPN's two
 *                                           characters), then two hashes
 *                                           of 12 hex digits
 *   e7d705a3286e19ea42f587b344ee6865        a JA3: the MD5, 32 hex digits
 *
 * '#' starts a comment anywhere on a line; blanks around a fingerprint and
 * blank lines are ignored.  Hex digits are read in either case and kept in
 * lowercase (as fc_ja writes them).  A bad line is told with its number
 * and what was wrong (never a byte of the line: the file may be anything,
 * /etc/shadow say), and skipped; the good lines load.  A fingerprint
 * given twice is kept once.  The list is kept sorted, for a binary search.
 *
 * Written by hand: the format is one token a line, and its errors must
 * name the line.  No state; any thread (a list belongs to its caller).
 */
#ifndef FLOWCUT_FC_FPLIST_H
#define FLOWCUT_FC_FPLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FC_FP_STR_MAX 36		/* a JA4; a JA3 is 32 */
#define FC_FPLIST_MAX_LINE 1024		/* a longer line is a bad line */

enum fc_fp_kind {
	FC_FP_JA4 = 1,
	FC_FP_JA3 = 2,
};

struct fc_fp {
	char s[FC_FP_STR_MAX + 1];	/* NUL-terminated, hex in lowercase */
	uint8_t kind;			/* enum fc_fp_kind */
	unsigned long line;		/* where it was read first */
};

struct fc_fplist {
	struct fc_fp *fp;		/* sorted by s, unique */
	size_t n;
	size_t cap;
};

/* Told of each bad line: its number (from 1) and what was wrong (none of its text). */
typedef void fc_fplist_bad_fn(void *arg, unsigned long line, const char *what);

/*
 * fc_fplist_parse - read `len` bytes of text (no NUL needed) into `out`
 * (which must be empty or a list this module made: it is added to, then
 * sorted).  Returns the number of bad lines, each told to `bad` (may be
 * NULL), or -ENOMEM (out keeps what it had).
 */
long fc_fplist_parse(const char *text, size_t len, struct fc_fplist *out, fc_fplist_bad_fn *bad,
		     void *arg);

/*
 * fc_fplist_load - read a whole file (fc_file_read: owner, mode and
 * folders checked on their descriptors, under `max_bytes`, the setting
 * list_max_bytes) and fc_fplist_parse it into a new list.  Returns the
 * number of bad lines, or fc_file_read's negative errno with `err` saying
 * "PATH: why" (-EPERM, -ELOOP, -EISDIR, -EFBIG, -EAGAIN, -ENOENT...), or
 * -ENOMEM; out is then untouched, so the caller keeps the last good
 * contents.
 */
long fc_fplist_load(const char *path, size_t max_bytes, struct fc_fplist *out,
		    fc_fplist_bad_fn *bad, void *arg, char *err, size_t errlen);

/* fc_fplist_find - the entry equal to `fp` (as fc_ja writes it), or NULL. */
const struct fc_fp *fc_fplist_find(const struct fc_fplist *l, const char *fp);

/* fc_fp_kind_of - what `s` is: FC_FP_JA4, FC_FP_JA3, or 0 (neither; a JA4's hex may be upper case). */
int fc_fp_kind_of(const char *s, size_t len);

/* fc_fplist_free - frees the entries; the list is then empty.  NULL does nothing. */
void fc_fplist_free(struct fc_fplist *l);

#endif
