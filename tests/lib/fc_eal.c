/* SPDX-License-Identifier: BSD-3-Clause */
#include "fc_eal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

static char runtime_dir[4096];

/* EAL leaves its (empty, with --no-shconf) runtime folder: take it away. */
static void
runtime_dir_remove(void)
{
	rmdir(runtime_dir);
}

int
fc_eal_init(const char *tag, unsigned int mem_mb)
{
	char mem[16], prefix[64], log[64];
	const char *lvl = getenv("FC_EAL_LOG");
	char *argv[] = {
		(char *)tag, "--no-huge", "--no-pci", "--no-telemetry", "--no-shconf",
		"-m", mem, "--file-prefix", prefix, log, "-l", "0", NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(prefix, sizeof(prefix), "%s-%d", tag, (int)getpid());
	snprintf(log, sizeof(log), "--log-level=%s", lvl ? lvl : "error");
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: DPDK EAL init failed: %s\n", tag, rte_strerror(rte_errno));
		return -rte_errno;
	}
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
	atexit(runtime_dir_remove);
	return 0;
}
