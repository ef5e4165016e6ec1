/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Replays fuzz inputs through the frame target without libFuzzer: every
 * file named on the command line, or in a directory named there.  Used by
 * the normal suite (with ASan and UBSan builds) to keep every crash ever
 * found fixed, and with --seeds DIR to write the seed corpus.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fc_frame.h"
#include "fuzz_frame.h"

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
	fuzz_frame_one(buf, n);
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

/* Seeds: a frame of every connection of the table, both ways. */
static int
write_seeds(const char *out)
{
	static const uint8_t p4[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, IPPROTO_GRE };
	static const uint8_t p6[] = { IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMPV6, IPPROTO_ESP };
	static const uint8_t lif0[6] = FUZZ_LIF0_MAC, lif1[6] = FUZZ_LIF1_MAC;

	for (int fam = 4; fam <= 6; fam += 2)
		for (int i = 0; i < 4; i++)
			for (int nat = 0; nat < 2; nat++)
				for (int d = 0; d < 2; d++) {
					struct fc_frame_spec s = { .payload = 20, .win = 512,
								   .tcp_flags = FP_TCP_ACK, .seq = 1 };
					struct fp_key k[2];
					uint8_t buf[256];
					char path[4096];
					size_t len;
					FILE *f;

					fuzz_key(fam, fam == 4 ? p4[i] : p6[i], nat, &k[0], &k[1]);
					s.key = k[d];
					memcpy(s.dmac, d ? lif1 : lif0, 6);
					/* port d; OFFLOAD | IPS; actions IPS both ways; CUT_THRU */
					buf[0] = (uint8_t)(d | 4 | 16);
					buf[1] = (uint8_t)(2 | 2 << 2 | 2 << 4);
					len = fc_frame_build(&s, buf + 2, sizeof(buf) - 2);
					snprintf(path, sizeof(path), "%s/seed-v%d-p%u-nat%d-dir%d", out,
						 fam, s.key.proto, nat, d);
					f = fopen(path, "wb");
					if (f == NULL || fwrite(buf, 1, len + 2, f) != len + 2) {
						fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
						return 1;
					}
					fclose(f);
				}
	return 0;
}

int
main(int argc, char **argv)
{
	unsigned int count = 0;
	int rc = 0;

	if (argc == 3 && strcmp(argv[1], "--seeds") == 0)
		return write_seeds(argv[2]);
	if (argc < 2) {
		fprintf(stderr, "usage: fuzz_frame_replay FILE|DIR...  |  --seeds DIR\n");
		return 2;
	}
	if (fuzz_frame_init() != 0)
		return 1;
	for (int i = 1; i < argc; i++)
		rc |= replay(argv[i], &count);
	printf("fuzz_frame_replay: %u inputs replayed\n", count);
	return rc ? 1 : 0;
}
