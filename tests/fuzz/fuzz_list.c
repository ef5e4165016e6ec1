/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the list files' reader (settings/fc_list).  Checks: no
 * crash; every bad line is told with a line that exists; the canonical
 * form is sorted and disjoint and holds both ends of every entry read;
 * each canonical range, written and read again, is itself; a list differs
 * from itself in nothing; read with a minimum prefix (from the first
 * byte), no entry is wider and each entry refused is one line more told;
 * each canonical prefix or address, as a JSON DROP object's "cidr", reads
 * back as itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_list.h"
#include "fuzz.h"

static unsigned long lines;

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_list: %s\n", what);
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

/* hi - lo + 1 > 2^(bits - min), in 128-bit arithmetic (fc_list works byte by byte) */
static int
wider(const struct fc_range *r, unsigned int min)
{
	unsigned int n = r->family == 4 ? 4 : 16, bits = 8 * n;
	unsigned __int128 lo = 0, hi = 0, d;

	for (unsigned int i = 0; i < n; i++) {
		lo = lo << 8 | r->lo[i];
		hi = hi << 8 | r->hi[i];
	}
	d = hi - lo;
	if (min == 0)
		return 0;
	return bits - min == 128 ? 0 : d >= ((unsigned __int128)1 << (bits - min));
}

/* The same text under a minimum prefix: fewer entries, each refused one bad line more. */
static void
within(const uint8_t *data, size_t size, const struct fc_list *raw, long nbad)
{
	struct fc_list_limits lim = { 1u << 20, size ? data[0] % 33 : 1, size ? data[0] % 129 : 1, NULL };
	struct fc_list l = { 0 };
	long n = fc_list_parse_within((const char *)data, size, &lim, &l, on_bad, NULL);

	if (n < 0)
		die("out of memory");
	for (size_t i = 0; i < l.n; i++)
		if (wider(&l.r[i], l.r[i].family == 4 ? lim.min_prefix4 : lim.min_prefix6))
			die("an entry wider than the minimum prefix read");
	if (n < nbad || l.n + (size_t)(n - nbad) != raw->n)
		die("an entry refused for its width not told as one bad line");
	fc_list_free(&l);
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	struct fc_list raw = { 0 }, l = { 0 }, add = { 0 }, rem = { 0 };
	long nbad;

	lines = 1;
	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	nbad = fc_list_parse((const char *)data, size, &raw, on_bad, NULL);
	if (nbad < 0)
		die("out of memory");
	within(data, size, &raw, nbad);
	for (size_t i = 0; i < raw.n; i++) {
		if (raw.r[i].family != 4 && raw.r[i].family != 6)
			die("an entry of no family");
		if (memcmp(raw.r[i].lo, raw.r[i].hi, 16) > 0)
			die("an entry whose first address is above its last");
		if (fc_list_add(&l, &raw.r[i]) != 0)
			die("out of memory");
	}
	fc_list_canon(&l);
	for (size_t i = 0; i < l.n; i++) {
		struct fc_list back = { 0 };
		char text[128];

		if (i > 0 && l.r[i - 1].family == l.r[i].family &&
		    memcmp(l.r[i - 1].hi, l.r[i].lo, 16) >= 0)
			die("canonical ranges overlap");
		if (i > 0 && l.r[i - 1].family > l.r[i].family)
			die("canonical ranges out of order");
		fc_range_format(&l.r[i], text, sizeof(text));
		if (fc_list_parse(text, strlen(text), &back, NULL, NULL) != 0 || back.n != 1 ||
		    memcmp(&back.r[0], &l.r[i], sizeof(back.r[0])) != 0)
			die("a canonical range does not read back as itself");
		fc_list_free(&back);
		/* and a prefix or an address as a JSON DROP object's "cidr": the same reader */
		if (strchr(text, '-') == NULL) {
			char obj[192];

			snprintf(obj, sizeof(obj), "{\"cidr\":\"%s\",\"sblid\":\"SBL1\"}\r\n", text);
			if (fc_list_parse(obj, strlen(obj), &back, NULL, NULL) != 0 || back.n != 1 ||
			    memcmp(&back.r[0], &l.r[i], sizeof(back.r[0])) != 0)
				die("a canonical prefix does not read back as itself from JSON");
			fc_list_free(&back);
		}
	}
	for (size_t i = 0; i < raw.n; i++)
		if (!fc_list_holds(&l, raw.r[i].family, raw.r[i].lo) ||
		    !fc_list_holds(&l, raw.r[i].family, raw.r[i].hi))
			die("the canonical list lost an address it was given");
	if (fc_list_diff(&l, &l, &add, &rem) != 0 || add.n || rem.n)
		die("a list differs from itself");
	fc_list_free(&raw);
	fc_list_free(&l);
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"198.18.0.1\n198.18.0.0/24\n198.18.0.5-198.18.0.9\n",
		"; Spamhaus DROP\n1.10.16.0/20 ; SBL256894\n2001:2::/32 ; SBL1\n",
		"#\n# firehol\n#\n0.0.0.0/8\n10.0.0.0/8\n\n",
		"2001:2::1-2001:2::ff\n::/0\nffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\n",
		"255.255.255.255\r\n0.0.0.0/0 # all\n198.18.0.300\nnot an address\n",
		/* Spamhaus's JSON DROP: drop_v4.json, drop_v6.json */
		"{\"cidr\":\"1.10.16.0/20\",\"sblid\":\"SBL256894\",\"rir\":\"apnic\"}\n"
		"{\"cidr\":\"1.19.0.0/16\",\"sblid\":\"SBL434604\",\"rir\":\"apnic\"}\n"
		"{\"type\":\"metadata\",\"timestamp\":1733011200,\"size\":12345,\"records\":2,"
		"\"copyright\":\"(c) 2024 The Spamhaus Project SLU\","
		"\"terms\":\"https://www.spamhaus.org/drop/terms/\"}\n",
		"{\"cidr\":\"2001:678:738::/48\",\"sblid\":\"SBL636047\",\"rir\":\"ripencc\"}\r\n"
		"\r\n{\"cidr\":\"2a06:e480::/29\",\"sblid\":\"SBL1\",\"rir\":\"ripencc\"}\r\n"
		"{\"type\":\"metadata\",\"records\":2}\r\n",
		"; a mirror's note\n{\"cidr\":\"198.18.0.1\"}\n{\"cidr\":\"0.0.0.0/0\"}\n{\"cidr\":17}\n"
		"{\"cidr\":\"198.18.0.0/33\"}\n{\"sblid\":\"SBL1\"}\n{\"cidr\":\"198.18.0.1\",}\n"
		"198.18.0.2\n{\"cidr\":\"a-b\",\"cidr\":\"c\"}\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
