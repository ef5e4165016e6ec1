/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What every fuzz target provides: the libFuzzer glue (libfuzzer_glue.c)
 * and the replayer (replay_main.c) call these.
 */
#ifndef FLOWCUT_FUZZ_H
#define FLOWCUT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* fuzz_init - set up once (EAL, tables); 0 or -1. */
int fuzz_init(void);
/* fuzz_one - one input; aborts when an invariant breaks. */
int fuzz_one(const uint8_t *data, size_t size);
/* fuzz_seeds - write the seed corpus into dir; 0 or -1. */
int fuzz_seeds(const char *dir);

/* fuzz_seed_put - one seed, dir/seed-<i>, written whole; 0 or -1. */
static inline int
fuzz_seed_put(const char *dir, size_t i, const void *data, size_t len)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/seed-%zu", dir, i);
	f = fopen(path, "wb");
	if (f == NULL)
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* fuzz_seed_texts - n text seeds, dir/seed-0 on; 0 or -1. */
static inline int
fuzz_seed_texts(const char *dir, const char *const *seeds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fuzz_seed_put(dir, i, seeds[i], strlen(seeds[i])) != 0)
			return -1;
	return 0;
}

#endif
