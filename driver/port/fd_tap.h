/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fd_tap: a front port as the host kernel sees it - a persistent TAP
 * netdev in flowcutd's network namespace, with the port's MAC.
 *
 * Persistent, so the host's addresses and routes on it outlive a restart
 * of flowcutd: opening an existing TAP of that name attaches to it.  Any
 * thread; no state of its own besides the file descriptor.
 */
#ifndef FLOWCUT_FD_TAP_H
#define FLOWCUT_FD_TAP_H

#include <stdint.h>

/*
 * fd_tap_open - attach to (or make) TAP `name`, set its MAC and MTU, bring
 * it up.  Returns a non-blocking file descriptor that reads and writes
 * whole Ethernet frames, or a negative errno (after printing what failed).
 */
int fd_tap_open(const char *name, const uint8_t mac[6], unsigned int mtu);

/* fd_tap_ifindex - the netdev's index, or 0. */
unsigned int fd_tap_ifindex(const char *name);

#endif
