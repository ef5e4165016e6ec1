/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: a set's elements read from libnftables' JSON output
 * (driver/fd_nft, fd_nft_set_parse: what flowcutd cuts by hand).  Checks:
 * no crash; every range read has a family and its first address at or
 * below its last.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_list.h"
#include "fd_nft.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_nftset: %s\n", what);
	abort();
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	struct fc_list l = { 0 };
	char *text = malloc(size + 1);
	int rc;

	if (text == NULL)
		die("out of memory");
	memcpy(text, data, size);
	text[size] = '\0';
	rc = fd_nft_set_parse(text, &l);
	if (rc == -ENOMEM)
		die("out of memory");
	for (size_t i = 0; i < l.n; i++)
		if ((l.r[i].family != 4 && l.r[i].family != 6) || memcmp(l.r[i].lo, l.r[i].hi, 16) > 0)
			die("a range read with no family or upside down");
	fc_list_free(&l);
	free(text);
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\"}}, {\"set\": {\"family\": "
		"\"inet\", \"name\": \"cut4\", \"table\": \"flowcut\", \"type\": \"ipv4_addr\", "
		"\"elem\": [{\"elem\": {\"val\": {\"prefix\": {\"addr\": \"198.19.0.0\", \"len\": 24}}, "
		"\"timeout\": 30, \"expires\": 29}}, {\"range\": [\"198.20.0.5\", \"198.20.0.9\"]}, "
		"\"198.21.0.1\"]}}]}",
		"{\"nftables\": [{\"set\": {\"name\": \"cut6\", \"elem\": [{\"prefix\": {\"addr\": "
		"\"2001:2::\", \"len\": 64}}, \"2001:2::1\", {\"range\": [\"2001:2::9\", \"2001:2::1\"]}]}}]}",
		"{\"nftables\": [{\"set\": {\"elem\": [1, null, {\"prefix\": {\"addr\": 5}}, "
		"{\"elem\": {}}, \"not an address\"]}}]}",
		"not json",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
