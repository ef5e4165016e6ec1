/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcutd's control requests (driver/control/fd_ctl, what a client
 * of its socket sends).  Checks: no crash; a refusal says why; an accepted
 * request, written back as "cut-conn ID\n", "status\n", "resync\n",
 * "why ADDR\n" (by inet_ntop), "why-conn ID\n" or "triggers\n", reads back as
 * the same, its address too.
 */
#include <arpa/inet.h>
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
	char err[128] = "", text[96], a[INET6_ADDRSTRLEN];

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
	else if (r.op == FD_CTL_WHY && r.id == 0 && (r.family == 4 || r.family == 6) &&
		 inet_ntop(r.family == 4 ? AF_INET : AF_INET6, r.addr, a, sizeof(a)) != NULL)
		snprintf(text, sizeof(text), "why %s\n", a);
	else if (r.op == FD_CTL_WHY_CONN)
		snprintf(text, sizeof(text), "why-conn %" PRIu64 "\n", r.id);
	else if (r.op == FD_CTL_TRIGGERS && r.id == 0)
		snprintf(text, sizeof(text), "triggers\n");
	else
		die("an accepted request of no known op");
	if (r.op != FD_CTL_WHY && r.family != 0)
		die("an accepted request other than why with an address");
	if (fd_ctl_parse(text, strlen(text), &back, err, sizeof(err)) != 0 || back.op != r.op ||
	    back.id != r.id || back.family != r.family ||
	    (r.family != 0 && memcmp(back.addr, r.addr, r.family == 4 ? 4 : 16) != 0))
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
		"why 198.18.1.2\n", "why 2001:db8::1\n", "why ::ffff:1.2.3.4\n", "why 1.2.3.0/24\n",
		"why 1.2.3\n", "why \n", "why\n", "why example.org\n", "why 1.2.3.4\x1b\n",
		"why-conn 7\n", "why-conn 1.2.3.4\n", "why-conn \n", "triggers\n", "triggers 1\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
