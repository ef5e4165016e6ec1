/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * flowcut: address lists (the watched list files, the cut sets).
 *
 * A list file holds one entry a line: an address, a prefix (ADDR/LEN) or
 * a range (ADDR-ADDR), IPv4 or IPv6.  '#' and ';' start a comment, so the
 * Spamhaus DROP ("1.10.16.0/20 ; SBL256894") and FireHOL netset formats
 * load unchanged.  Spamhaus's JSON DROP (one object a line, its "cidr"
 * read as a text entry) is read too, told by content: one format a file.
 * A bad line is reported with its number and skipped; the good lines
 * load.  What is said of a bad line is its number and a fixed reason,
 * never a byte of the line: a list file may be anything.
 *
 * A list file can cut, so fc_list_load reads it as fc_file does (owner,
 * mode and folders checked on their descriptors, read() under a cap) and
 * refuses an entry wider than a minimum prefix (by default 0.0.0.0/0 and
 * ::/0, or a range as wide: one such line would cut everything).
 *
 * A list is kept canonical: ranges sorted, overlapping and adjacent ones
 * merged, so two lists compare element by element and a change becomes a
 * difference (what was added, what was removed) to apply to an nftables
 * interval set.
 *
 * The parsers and fc_list_load return the number of bad lines or a
 * negative errno (-ENOMEM; fc_list_load fc_file_read's too, with err);
 * the other int calls 0 or -ENOMEM.  A struct fc_list is the caller's,
 * freed by fc_list_free.  No state; any thread, each on its own list.
 *
 * Design notes (the JSON DROP's shape, jansson): settings/README.md.
 */
#ifndef FLOWCUT_FC_LIST_H
#define FLOWCUT_FC_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FC_LIST_MAX_LINE 1024	/* a longer line is a bad line */

/* A closed range of addresses of one family; IPv4 in the first 4 bytes. */
struct fc_range {
	uint8_t family;		/* 4 or 6 */
	uint8_t lo[16];
	uint8_t hi[16];
};

struct fc_list {
	struct fc_range *r;
	size_t n;
	size_t cap;
};

/* What a list file may be (the settings list_max_bytes, list_min_prefix4/6). */
struct fc_list_limits {
	size_t max_bytes;		/* a larger file is refused whole */
	unsigned int min_prefix4;	/* an IPv4 entry wider than a /min_prefix4 is a bad line (0: none) */
	unsigned int min_prefix6;	/* ... an IPv6 one, than a /min_prefix6 */
	const char *min_name;		/* the setting a bad line names ("list_min_prefix": NULL) */
};

/* fc_range_wider_than - r holds more addresses than a /len of its family (len 0: never). */
bool fc_range_wider_than(const struct fc_range *r, unsigned int len);

/* Told of each bad line: its number (from 1) and what was wrong (none of its text). */
typedef void fc_list_bad_fn(void *arg, unsigned long line, const char *what);

/*
 * fc_list_parse - read `len` bytes of a list (text or JSON DROP, no NUL needed) into `out`
 * (appended; call fc_list_canon after), no entry too wide.  Returns the
 * number of bad lines, each told to `bad` (may be NULL), or -ENOMEM (out
 * keeps what it had).
 */
long fc_list_parse(const char *text, size_t len, struct fc_list *out, fc_list_bad_fn *bad,
		   void *arg);

/*
 * fc_list_parse_within - fc_list_parse, and an entry wider than lim's
 * minimum prefix of its family is a bad line ("wider than a /1
 * (list_min_prefix4)"), skipped and counted like any other.
 */
long fc_list_parse_within(const char *text, size_t len, const struct fc_list_limits *lim,
			  struct fc_list *out, fc_list_bad_fn *bad, void *arg);

/*
 * fc_list_load - read a whole file (fc_file_read: checked, under
 * lim->max_bytes) and fc_list_parse_within it into a new canonical list.
 * Returns the number of bad lines, or fc_file_read's negative errno with
 * `err` saying "PATH: why" (-EPERM, -ELOOP, -EFBIG, -EAGAIN, -ENOENT...),
 * or -ENOMEM; out is then untouched: the caller keeps the last good
 * contents.
 */
long fc_list_load(const char *path, const struct fc_list_limits *lim, struct fc_list *out,
		  fc_list_bad_fn *bad, void *arg, char *err, size_t errlen);

/*
 * fc_list_entry - one entry as a list line holds it ("ADDR", "ADDR/LEN",
 * "ADDR-ADDR", no blanks or comment) into *r.  Returns NULL, or a fixed
 * reason (none of its text).  With `exact` (the settings' never_cut),
 * only an address or a prefix is taken, and a prefix with a bit set below
 * its length is refused ("a host part is set ..."), not cleared.
 */
const char *fc_list_entry(const char *entry, bool exact, struct fc_range *r);

/* fc_list_canon - sort, and merge overlapping and adjacent ranges. */
void fc_list_canon(struct fc_list *l);

/*
 * fc_list_diff - for two canonical lists, the ranges of `to` not in `from`
 * (added) and of `from` not in `to` (removed), each canonical.  0 or
 * -ENOMEM.
 */
int fc_list_diff(const struct fc_list *from, const struct fc_list *to, struct fc_list *added,
		 struct fc_list *removed);

/* fc_list_holds - whether a canonical list holds the address (binary search). */
bool fc_list_holds(const struct fc_list *l, uint8_t family, const uint8_t *addr);

/* fc_list_add - append one range (lo <= hi); 0 or -ENOMEM. */
int fc_list_add(struct fc_list *l, const struct fc_range *r);

/* fc_range_format - "198.18.0.0/24", "2001:2::1", "198.18.0.5-198.18.0.9". */
char *fc_range_format(const struct fc_range *r, char *buf, size_t len);

void fc_list_free(struct fc_list *l);

#endif
