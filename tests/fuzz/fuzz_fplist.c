/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the watched fingerprints file's reader (settings/fc_fplist).
 * Checks: no crash; every bad line is told with a line that exists and a
 * reason; the list is sorted and unique, each entry a JA4 or JA3 of the
 * kind it says, from a line that exists, found by a lookup; each entry,
 * read again alone, is itself; the number of good lines plus bad lines
 * is no more than the lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_fplist.h"
#include "fuzz.h"

static unsigned long lines;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_fplist: %s\n", what);
	abort();
}

static void
on_bad(void *arg, unsigned long line, const char *what)
{
	(void)arg;
	if (line == 0 || line > lines || what == NULL || what[0] == '\0')
		die("a bad line told without its number or reason");
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	struct fc_fplist l = { 0 };
	long nbad;

	lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	nbad = fc_fplist_parse((const char *)data, size, &l, on_bad, NULL);
	if (nbad < 0)
		die("out of memory");
	if ((unsigned long)nbad + l.n > lines)
		die("more entries and bad lines than lines");
	for (size_t i = 0; i < l.n; i++) {
		const struct fc_fp *fp = &l.fp[i];
		struct fc_fplist back = { 0 };
		size_t len = strnlen(fp->s, sizeof(fp->s));

		if (len == sizeof(fp->s) || fc_fp_kind_of(fp->s, len) != fp->kind ||
		    fp->kind == 0)
			die("an entry that is not what it says");
		if (fp->line == 0 || fp->line > lines)
			die("an entry from a line that does not exist");
		if (i > 0 && strcmp(l.fp[i - 1].s, fp->s) >= 0)
			die("entries out of order, or twice");
		if (fc_fplist_find(&l, fp->s) != fp)
			die("an entry the lookup does not find");
		if (fc_fplist_parse(fp->s, len, &back, NULL, NULL) != 0 || back.n != 1 ||
		    strcmp(back.fp[0].s, fp->s) != 0)
			die("an entry does not read back as itself");
		fc_fplist_free(&back);
	}
	fc_fplist_free(&l);
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"t13d1516h2_8daaf6152771_e5627efa2ab1\ne7d705a3286e19ea42f587b344ee6865\n",
		"# comment\n  t13d1516h2_8DAAF6152771_e5627efa2ab1 # chrome\r\n\n",
		"q13d0310h3_55b375c5d22e_cd85d2d88918\nnot one\n0123456789ABCDEF0123456789abcdef",
		"t13d1516h2_8daaf6152771 e5627efa2ab1\nx13d1516h2_8daaf6152771_e5627efa2ab1\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
