/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_eal: DPDK EAL set up the way this machine allows - no hugepages, no
 * PCI, a file prefix of the caller's own - for tests, benchmarks and tools.
 * Call once, from the main thread, before any other DPDK call.
 */
#ifndef FLOWCUT_FC_EAL_H
#define FLOWCUT_FC_EAL_H

/*
 * fc_eal_init - EAL with `mem_mb` MB of ordinary memory and the file prefix
 * "<tag>-<pid>"; quiet unless FC_EAL_LOG names a log level.  Returns 0, or
 * a negative errno after printing why.
 */
int fc_eal_init(const char *tag, unsigned int mem_mb);

#endif
