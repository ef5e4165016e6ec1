/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npu_wire: what the kernel under a port counts that its ethdev does not
 * say - frames lost before the port read them (docs/counters.md, "The
 * wire's own": RX_MISSED, KERNEL_RX_DROPPED).
 *
 *   - net_af_packet: DPDK 22.11's PMD never reads its sockets'
 *     PACKET_STATISTICS, so a frame the kernel found no room for in the
 *     socket's receive ring (tp_drops) was lost silently: its imissed
 *     stays 0.  Here they are read and added up (the kernel zeroes them at
 *     each read).
 *   - a port on a kernel netdev (net_af_packet, net_af_xdp): the netdev's
 *     own rx_dropped, read from sysfs; on net_af_xdp it counts what the
 *     port counts missed too (the XDP redirect failed for want of a fill
 *     buffer), so that part is left out: each lost frame counted once.
 *
 * Control thread only: the sockets' statistics are zeroed by the read
 * that returns them, so one reader must add them up.
 */
#ifndef FLOWCUT_NPU_WIRE_H
#define FLOWCUT_NPU_WIRE_H

#include <stdint.h>

/*
 * npu_wire_open - port's kernel figures found: its netdev's rx_dropped and,
 * on net_af_packet, the PMD's packet sockets bound to its interface (the
 * process's own descriptors).  After the port is made (its sockets are
 * opened at probe).  A port past `FC_WIRE_PORTS`, or on no netdev
 * (net_pcap, net_ring), has none: its figures read 0.
 */
void npu_wire_open(uint16_t port);

/*
 * npu_wire_rx_missed - frames the port's receive ring had no room for:
 * `imissed` (the ethdev's) plus, on net_af_packet, the packet sockets'
 * drops read since npu_wire_open (running total).
 */
uint64_t npu_wire_rx_missed(uint16_t port, uint64_t imissed);

/*
 * npu_wire_kernel_rx_dropped - the netdev's rx_dropped, less `missed`
 * (the ethdev's imissed, read first: the AF_XDP socket's drops) where the
 * netdev counts those too (net_af_xdp); floored at 0.
 */
uint64_t npu_wire_kernel_rx_dropped(uint16_t port, uint64_t missed);

#endif
