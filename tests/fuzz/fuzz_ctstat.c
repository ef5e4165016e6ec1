/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: conntrack's per-CPU stats text (driver/ct/fd_ctstat's
 * fd_ctstat_parse, /proc/net/stat/nf_conntrack as a kernel writes it).
 * Checks: no crash; a refusal says why and leaves the three figures -1;
 * an accepted text gives each figure -1 (its column not named) or a sum
 * of at least 0, never past INT64_MAX; the caller's count and limit are
 * not touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_ctstat.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_ctstat: %s\n", what);
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
	struct fd_ctstat s = { .entries = 7, .limit = 8 };
	char err[160] = "";
	int64_t v[3];

	if (fd_ctstat_parse((const char *)data, size, &s, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			die("a text refused without a reason");
		if (s.insert_failed != -1 || s.drop != -1 || s.early_drop != -1)
			die("a refused text left a figure");
	} else {
		v[0] = s.insert_failed, v[1] = s.drop, v[2] = s.early_drop;
		for (int i = 0; i < 3; i++)
			if (v[i] < -1)
				die("a figure below -1");
	}
	if (s.entries != 7 || s.limit != 8)
		die("the parser touched the count or the limit");
	return 0;
}

int
fuzz_seeds(const char *dir)
{
#define HEAD6 "entries  clashres found new invalid ignore delete chainlength insert " \
	"insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete " \
	"search_restart\n"
#define HEAD4 "entries  searched found new invalid ignore delete delete_list insert " \
	"insert_failed drop early_drop icmp_error  expect_new expect_create expect_delete " \
	"search_restart\n"
#define CPU "0000002a  00000001 00000002 00000003 00000004 00000005 00000006 00000007 " \
	"00000008 00000009 0000000a 0000000b 0000000c  0000000d 0000000e 0000000f 00000010\n"
	static const char *const seeds[] = {
		HEAD6 CPU CPU, HEAD4 CPU, HEAD6, HEAD6 CPU "\n" CPU,
		HEAD6 "0 0 0 0 0 0 0 0 0 5 6 7 0 0 0 0 0",
		"entries insert_failed drop\n1 2 3\n1 2 3\n", "entries found\n1 2\n",
		HEAD6 CPU "00000000 00000000 00000000\n", "entries drop\n1 2 3\n",
		"entries drop\n1 zz\n", "entries drop\n1 -1\n", "entries drop\n1 0x10\n",
		"entries drop\n1 00000000000000001\n", "", "\n1 2\n",
		"entries drop\n0 7fffffffffffffff\n0 7fffffffffffffff\n0 ffffffffffffffff\n",
		"entries\tdrop\t\n\t1\t2\t\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
