/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_rtnl: rtnetlink messages as the kernel sends them, built with libmnl,
 * for the tests and the fuzz target of flowcutd's reading of them
 * (tests/unit/driver/test_rtnl.c, tests/fuzz/fuzz_rtnl.c).  Each writes one
 * message at buf (MNL_SOCKET_BUFFER_SIZE is room enough) and returns its
 * length.
 */
#ifndef FLOWCUT_FC_RTNL_H
#define FLOWCUT_FC_RTNL_H

#include <stddef.h>
#include <stdint.h>

/* RTM_NEWNEIGH or RTM_DELNEIGH; dst (4 or 16 bytes by af) and mac may be NULL. */
size_t fc_rtnl_neigh(char *buf, uint16_t type, int af, int ifindex, const void *dst,
		     const void *mac, uint16_t state);
/* RTM_NEWROUTE or RTM_DELROUTE for 198.18.1.0/24 out of oif; an MTU metric unless mtu is 0. */
size_t fc_rtnl_route(char *buf, uint16_t type, uint32_t oif, uint32_t mtu);
/* RTM_NEWLINK for ifindex named "fp1"; IFLA_MTU unless mtu is 0. */
size_t fc_rtnl_link(char *buf, int ifindex, uint32_t mtu);

#endif
