/* SPDX-License-Identifier: BSD-3-Clause */
/* fd_tap: see fd_tap.h. */
#include "fd_tap.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <linux/if_tun.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int
fail(const char *name, const char *what, int err)
{
	fprintf(stderr, "flowcutd: TAP %s: %s: %s\n", name, what, strerror(err));
	return -err;
}

int
fd_tap_open(const char *name, const uint8_t mac[6], unsigned int mtu)
{
	struct ifreq ifr = { 0 };
	int fd, s, err;

	if (strlen(name) >= IFNAMSIZ)
		return fail(name, "name", ENAMETOOLONG);
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail(name, "/dev/net/tun", errno);
	snprintf(ifr.ifr_name, IFNAMSIZ, "%s", name);
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &ifr) != 0 || ioctl(fd, TUNSETPERSIST, 1) != 0) {
		err = errno;
		close(fd);
		return fail(name, "TUNSETIFF", err);
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0) {
		err = errno;
		close(fd);
		return fail(name, "socket", err);
	}
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, mac, 6);
	if (ioctl(s, SIOCSIFHWADDR, &ifr) != 0) {
		err = errno;
		goto fail;
	}
	ifr.ifr_mtu = (int)mtu;
	if (ioctl(s, SIOCSIFMTU, &ifr) != 0) {
		err = errno;
		goto fail;
	}
	if (ioctl(s, SIOCGIFFLAGS, &ifr) != 0) {
		err = errno;
		goto fail;
	}
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) != 0) {
		err = errno;
		goto fail;
	}
	close(s);
	return fd;
fail:
	close(s);
	close(fd);
	return fail(name, "configure", err);
}

unsigned int
fd_tap_ifindex(const char *name)
{
	return if_nametoindex(name);
}
