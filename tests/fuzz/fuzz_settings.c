/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: the settings parser.  Checks: no crash; an accepted file,
 * written back and parsed again, gives the same settings; a refusal says
 * "line N: ..." with a line that exists.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fc_settings.h"
#include "fuzz.h"

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	struct fc_settings s, back;
	char err[512], text[8192];
	int rc = fc_settings_parse((const char *)data, size, &s, err, sizeof(err));

	if (rc == 0) {
		int n = fc_settings_format(&s, text, sizeof(text));

		int again = n < 0 || (size_t)n >= sizeof(text) ? -1
			    : fc_settings_parse(text, (size_t)n, &back, err, sizeof(err));

		/* where never_cut_file stood is not a setting: the written file orders the keys */
		s.never_file_line = back.never_file_line = 0;
		if (again != 0 || memcmp(&s, &back, sizeof(s)) != 0) {
			fprintf(stderr, "fuzz_settings: an accepted file does not round-trip\n");
			abort();
		}
	} else {
		unsigned long line = strtoul(err + 5, NULL, 10), lines = 1;

		for (size_t i = 0; i < size; i++)
			lines += data[i] == '\n';
		if (rc != -EINVAL || strncmp(err, "line ", 5) != 0 || line == 0 || line > lines) {
			fprintf(stderr, "fuzz_settings: a refusal without its line: %s\n", err);
			abort();
		}
	}
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"offload = on\ncut_in_hardware = on\nidle_timeout = 60\n",
		"# comment\noffload = off # off\n\nwatched_list = /etc/flowcut/block.txt\n",
		"idle_timeout = 65535\r\ncut_in_hardware=off\n",
		"watched_fingerprints = /etc/flowcut/ja.txt\ntls_ports = 443 8443 # TLS\n",
		"watched_set = inet filter blocked4\nwatched_set =\tip6  f2b-table addr6-set-ssh\n",
		"control_read_group = root\n",
		"list_max_bytes = 67108864\nlist_min_prefix4 = 1\nlist_min_prefix6 = 128\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
