/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcutd's control requests (driver/control/fd_ctl, what a client
 * of its socket sends).  Checks: no crash; a refusal says why; an accepted
 * request, written back as "cut-conn ID\n", "status\n", "resync\n",
 * "why ADDR\n" (by inet_ntop), "why-conn ID\n" or "triggers\n", reads back as
 * the same, its address too; the page's (counters, conns with its filters,
 * cuts, settings, settings-set in both forms) and the auth line too.
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
	static struct fd_ctl_req r, back;
	static char text[FC_CTL_MAX + 256];
	char err[256] = "", a[INET6_ADDRSTRLEN];
	int off = 0;

	if (fd_ctl_parse((const char *)data, size, &r, err, sizeof(err)) != 0) {
		if (err[0] == '\0')
			die("a request refused without a reason");
		return 0;
	}
	if (r.auth)
		off = snprintf(text, sizeof(text), "auth %.*s\n", (int)r.secret_len, r.secret);
	if (r.op == FD_CTL_CUT_CONN)
		snprintf(text + off, sizeof(text) - off, "cut-conn %" PRIu64 "\n", r.id);
	else if (r.op == FD_CTL_STATUS && r.id == 0)
		snprintf(text + off, sizeof(text) - off, "status\n");
	else if (r.op == FD_CTL_RESYNC && r.id == 0)
		snprintf(text + off, sizeof(text) - off, "resync\n");
	else if (r.op == FD_CTL_WHY && r.id == 0 && (r.family == 4 || r.family == 6) &&
		 inet_ntop(r.family == 4 ? AF_INET : AF_INET6, r.addr, a, sizeof(a)) != NULL)
		snprintf(text + off, sizeof(text) - off, "why %s\n", a);
	else if (r.op == FD_CTL_WHY_CONN)
		snprintf(text + off, sizeof(text) - off, "why-conn %" PRIu64 "\n", r.id);
	else if (r.op == FD_CTL_TRIGGERS && r.id == 0)
		snprintf(text + off, sizeof(text) - off, "triggers\n");
	else if (r.op == FD_CTL_COUNTERS || r.op == FD_CTL_SETTINGS)
		snprintf(text + off, sizeof(text) - off, "%s\n",
			 r.op == FD_CTL_COUNTERS ? "counters" : "settings");
	else if (r.op == FD_CTL_CUTS)
		snprintf(text + off, sizeof(text) - off, "cuts %u\n", r.n);
	else if (r.op == FD_CTL_CONNS) {
		off += snprintf(text + off, sizeof(text) - off, "conns %" PRIu64 " %u", r.id, r.n);
		if (r.family != 0 && inet_ntop(r.family == 4 ? AF_INET : AF_INET6, r.addr, a,
					       sizeof(a)) != NULL)
			off += snprintf(text + off, sizeof(text) - off, " addr=%s/%u", a, r.plen);
		if (r.port >= 0)
			off += snprintf(text + off, sizeof(text) - off, " port=%d", (int)r.port);
		if (r.state[0])
			off += snprintf(text + off, sizeof(text) - off, " state=%s", r.state);
		if (r.action[0])
			off += snprintf(text + off, sizeof(text) - off, " action=%s", r.action);
		snprintf(text + off, sizeof(text) - off, "\n");
	} else if (r.op == FD_CTL_SETTINGS_SET)
		snprintf(text + off, sizeof(text) - off, "settings-set %s%s%s\n", r.key,
			 r.lines ? (r.value[0] ? "\n" : "") : " ", r.value);
	else
		die("an accepted request of no known op");
	if (r.op != FD_CTL_WHY && r.op != FD_CTL_CONNS && r.family != 0)
		die("an accepted request other than why and conns with an address");
	if (strlen(text) > FC_CTL_MAX)
		return 0;	/* an auth line's and a value's written back past the bound */
	if (fd_ctl_parse(text, strlen(text), &back, err, sizeof(err)) != 0 || back.op != r.op ||
	    back.id != r.id || back.family != r.family ||
	    (r.family != 0 && memcmp(back.addr, r.addr, r.family == 4 ? 4 : 16) != 0) ||
	    back.plen != r.plen || back.port != r.port || back.n != r.n ||
	    strcmp(back.state, r.state) != 0 || strcmp(back.action, r.action) != 0 ||
	    strcmp(back.key, r.key) != 0 || strcmp(back.value, r.value) != 0 ||
	    back.lines != r.lines || back.auth != r.auth || back.secret_len != r.secret_len ||
	    memcmp(back.secret, r.secret, r.secret_len) != 0)
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
		"counters\n", "settings\n", "cuts\n", "cuts 100\n", "cuts 101\n", "conns 0 100\n",
		"conns 7 5 addr=198.18.0.0/15 port=443 state=ESTABLISHED action=DROP\n",
		"conns 1 1 addr=2001:2::1 state=cut\n", "conns 0 5 port=1 port=2\n",
		"settings-set cut_in_hardware off\n",
		"settings-set watched_set\ninet f2b-table *\nip crowdsec crowdsec-*\n",
		"settings-set never_cut\n", "settings-set watched_set\n\n",
		"auth 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"
		"settings-set offload off\n",
		"auth 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\ncut-conn 5\n",
		"auth short\nstatus\n", "auth \nstatus\n",
	};

	return fuzz_seed_texts(dir, seeds, sizeof(seeds) / sizeof(seeds[0]));
}
