#!/usr/bin/env bash
# Installs the Debian packages flowcut builds and tests with, if any is
# missing.  Idempotent; needs root when something is missing.
set -euo pipefail
pkgs=(make gcc clang libclang-rt-14-dev pkg-config
      dpdk-dev libdpdk-dev libcmocka-dev libpcap-dev libjansson-dev valgrind bc iproute2 ethtool iputils-ping nftables conntrack iperf3 curl
      libmnl-dev libnetfilter-conntrack-dev libnftables-dev
      # flowcutd's tables of offloaded connections (driver/offload/fd_offload.c)
      uthash-dev
      # the lab's real clients and servers (tests/lab/test_real.sh)
      nginx bind9-dnsutils dnsmasq-base netcat-openbsd openssl python3
      # inspect/ hashes with OpenSSL's libcrypto; its oracle test captures real
      # hellos and holds JA3 against tshark's (tests/tls/test_oracle.sh)
      libssl-dev tcpdump tshark
      # a real fail2ban whose nftables action writes a set flowcutd watches
      # (tests/lab/test_lab.sh, test_lists.sh): installed, never started as
      # the machine's (masked below)
      fail2ban
      # the lab's measurement scripts draw their plots (lab/measure.py)
      gnuplot-nox
      # trafgen, lab/flood.sh's SYN flood (tests/lab/test_flood.sh)
      netsniff-ng
      # the Debian package built, linted and installed (tests/pkg/test_pkg.sh),
      # the man pages checked (tests/pkg/test_man.sh)
      debhelper lintian dpkg-dev fakeroot man-db
      # flowcut-web (web/): its HTTP library; promtool and headless Chromium in its test
      libmicrohttpd-dev prometheus chromium)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages and not root: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# tshark's package asks whether non-root users may capture: no, without asking
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
# the servers (nginx) are installed, not started: the lab runs its own in
# its namespaces; a policy-rc.d of our own while none is there says so
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# fail2ban installed here is the tests' alone (each runs its own, its files
# under the test's run folder): the machine's service, whose Debian jail
# (sshd) bans into the machine's own nftables, is stopped if it started
# anyway (a policy-rc.d of the machine's own that allows it) and masked, so
# no boot starts it either.  Masked only when installed here: a fail2ban
# the machine already had is left as it is.
if [[ " ${missing[*]} " == *" fail2ban "* ]]; then
	if [ -d /run/systemd/system ]; then
		systemctl stop fail2ban.service 2>/dev/null || true
		systemctl mask fail2ban.service >/dev/null
	else	# no systemd running (a container): the unit masked on disk, the init script stopped
		if [ -x /etc/init.d/fail2ban ]; then /etc/init.d/fail2ban stop >/dev/null 2>&1 || true; fi
		systemctl --root=/ mask fail2ban.service >/dev/null 2>&1 ||
			ln -sf /dev/null /etc/systemd/system/fail2ban.service
		update-rc.d fail2ban disable >/dev/null 2>&1 || true
	fi
	echo "deps: fail2ban installed for the tests, its service masked (systemctl unmask fail2ban to use it)"
fi
