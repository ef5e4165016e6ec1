/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fc_netns: a private network namespace laid out as flowcutd's host sees
 * its front ports, for the programs that run the driver against the real
 * kernel in one process (tests/integration/test_driver.c, flowcut-bench
 * cut):
 *
 *   fp0 198.18.0.1/24 2001:2::1/64       client  .10 / ::10 (02:00:00:00:00:0a)
 *   fp1 198.19.0.1/24 2001:2:0:1::1/64   server  .10 / ::10 (02:00:00:00:00:0b)
 *                                        another .11 / ::11 (02:00:00:00:00:0c)
 *
 * veth pairs (fp0-c0, fp1-s1), the far ends' neighbours permanent,
 * conntrack's modules loaded.  The namespace goes with the process.
 */
#ifndef FLOWCUT_FC_NETNS_H
#define FLOWCUT_FC_NETNS_H

/* fc_netns_front_ports - NULL when made, else why not (not root, no conntrack, ...). */
const char *fc_netns_front_ports(void);

/* fc_netns_sh - system(cmd); a failure said on stderr.  system()'s status. */
int fc_netns_sh(const char *cmd);

#endif
