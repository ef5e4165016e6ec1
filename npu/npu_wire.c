/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * npu_wire: the kernel's own counts of the frames a port lost before it
 * read them (npu_wire.h).
 *
 * Written here because no library says them: DPDK 22.11's net_af_packet
 * reads no PACKET_STATISTICS (its code makes no getsockopt call: its
 * imissed is always 0), and no ethdev reads the netdev's rx_dropped.  The
 * PMD's sockets are private to it, so they are found the way ss(8) would
 * see them from inside the process: among its descriptors, the AF_PACKET
 * sockets whose bound address names the port's interface.  Seen lost
 * before: a lab flood read 1,146,759 frames of the 2,109,958 its veth
 * took in, with every loss figure at 0.
 */
#include "npu_wire.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include <flowcut/fc_defs.h>

/* net_af_packet opens a socket a queue pair: at most 16 (RTE_PMD_AF_PACKET_MAX_RINGS) */
#define NPU_WIRE_SOCKS 16

struct npu_wire_port {
	bool kdrop;		/* has a netdev: its statistics/rx_dropped open */
	int kdrop_fd;
	bool kdrop_has_missed;	/* net_af_xdp: the netdev counts the port's missed too */
	unsigned int nsocks;
	int socks[NPU_WIRE_SOCKS];	/* the PMD's packet sockets: not ours to close */
	uint64_t sock_drops;	/* their tp_drops, added up (each read zeroes them) */
};

static struct npu_wire_port wire[FC_WIRE_PORTS];

/* The process's AF_PACKET sockets bound to ifindex, into w->socks. */
static void
socks_find(struct npu_wire_port *w, unsigned int ifindex)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL && w->nsocks < NPU_WIRE_SOCKS) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(int);
		int fd, domain;
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || v < 0 || v == dirfd(d))
			continue;
		fd = (int)v;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET)
			continue;
		len = sizeof(sll);
		if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_family != AF_PACKET || (unsigned int)sll.sll_ifindex != ifindex)
			continue;
		w->socks[w->nsocks++] = fd;
	}
	closedir(d);
}

void
npu_wire_open(uint16_t port)
{
	struct rte_eth_dev_info info;
	char name[IF_NAMESIZE], path[96];
	struct npu_wire_port *w;

	if (port >= FC_WIRE_PORTS)
		return;		/* past the window: no figures published */
	w = &wire[port];
	if (rte_eth_dev_info_get(port, &info) != 0 || info.if_index == 0 ||
	    if_indextoname(info.if_index, name) == NULL)
		return;
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/rx_dropped", name);
	w->kdrop_fd = open(path, O_RDONLY | O_CLOEXEC);
	w->kdrop = w->kdrop_fd >= 0;
	w->kdrop_has_missed = strcmp(info.driver_name, "net_af_xdp") == 0;
	if (strcmp(info.driver_name, "net_af_packet") != 0)
		return;
	socks_find(w, info.if_index);
	if (w->nsocks == 0)
		fprintf(stderr, "flowcut-npu: port %u (net_af_packet on %s): none of its packet "
			"sockets found; the frames its receive ring has no room for are not counted\n",
			port, name);
}

uint64_t
npu_wire_rx_missed(uint16_t port, uint64_t imissed)
{
	struct npu_wire_port *w;

	if (port >= FC_WIRE_PORTS)
		return imissed;
	w = &wire[port];
	for (unsigned int i = 0; i < w->nsocks; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		if (getsockopt(w->socks[i], SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			w->sock_drops += st.tp_drops;
	}
	return imissed + w->sock_drops;
}

uint64_t
npu_wire_kernel_rx_dropped(uint16_t port, uint64_t missed)
{
	struct npu_wire_port *w;
	char buf[32];
	ssize_t n;
	uint64_t v;

	if (port >= FC_WIRE_PORTS)
		return 0;
	w = &wire[port];
	if (!w->kdrop || (n = pread(w->kdrop_fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return 0;
	buf[n] = '\0';
	v = strtoull(buf, NULL, 10);
	if (w->kdrop_has_missed)
		v = v > missed ? v - missed : 0;
	return v;
}
