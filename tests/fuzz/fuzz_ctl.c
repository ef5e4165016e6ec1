/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcutd's control requests (driver/control/fd_ctl, what a client
 * of its socket sends).  Checks: no crash; a refusal says why; an accepted
 * request, written back as "cut-conn ID\n", "status\n" or "resync\n",
 * reads back as the same.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fd_ctl.h"
#include "fuzz.h"

static void
die(const char *what)
{
	fprintf(stderr, "fuzz_ctl: %s\n", what);
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
	struct fd_ctl_req r, back;
	char err[128] = "", text[64];

	if (fd_ctl_parse((const char *)data, size, &r, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			die("a request refused without a reason");
		return 0;
	}
	if (r.op == FD_CTL_CUT_CONN)
		snprintf(text, sizeof(text), "cut-conn %" PRIu64 "\n", r.id);
	else if (r.op == FD_CTL_STATUS && r.id == 0)
		snprintf(text, sizeof(text), "status\n");
	else if (r.op == FD_CTL_RESYNC && r.id == 0)
		snprintf(text, sizeof(text), "resync\n");
	else
		die("an accepted request of no known op");
	if (fd_ctl_parse(text, strlen(text), &back, err, sizeof(err)) != 0 || back.op != r.op ||
	    back.id != r.id)
		die("an accepted request does not read back as itself");
	return 0;
}

int
fuzz_seeds(const char *dir)
{
	static const char *const seeds[] = {
		"cut-conn 0\n", "cut-conn 18446744073709551615\n", "cut-conn 18446744073709551616",
		"cut-conn 12a\n", "cut-conn \n", "uncut 5\n", "status\n", "status", "status 1\n",
		"statusx\n", "cut-conn\n", "resync\n", "resync", "resync 1\n", "resyncs\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
