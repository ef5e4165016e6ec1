/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays fuzz inputs through a fuzz target (fuzz.h) without libFuzzer:
 * every file named on the command line, or in a directory named there
 * (names starting with '.' skipped).  Used by the normal suite (release,
 * ASan and UBSan builds) to keep every crash ever found fixed, and with
 * --seeds DIR to write the target's seed corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int
replay_file(const char *path)
{
	static uint8_t buf[1 << 16];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	fuzz_one(buf, n);
	return 0;
}

static int
replay(const char *path, unsigned int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return replay_file(path);
	}
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char p[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		rc |= replay(p, count);
	}
	closedir(d);
	return rc;
}

int
main(int argc, char **argv)
{
	unsigned int count = 0;
	int rc = 0;

	if (argc == 3 && strcmp(argv[1], "--seeds") == 0)
		return fuzz_seeds(argv[2]) == 0 ? 0 : 1;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...  |  --seeds DIR\n", argv[0]);
		return 2;
	}
	if (fuzz_init() != 0)
		return 1;
	for (int i = 1; i < argc; i++)
		rc |= replay(argv[i], &count);
	printf("%s: %u inputs replayed\n", argv[0], count);
	return rc ? 1 : 0;
}
