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
      # flowcut-inspect's system call filter (inspector/fi_jail.c)
      libseccomp-dev
      # a real fail2ban whose nftables action writes a set flowcutd watches
      # (tests/lab/test_lab.sh, test_lists.sh): installed, never started as
      # the machine's (masked below)
      fail2ban
      # the real CrowdSec (its local API) and its firewall bouncer, nftables
      # mode (tests/lab/test_lists.sh): installed, never started as the
      # machine's (masked below), registered with no central API
      crowdsec crowdsec-firewall-bouncer
      # the lab's measurement scripts draw their plots (lab/measure.py)
      gnuplot-nox
      # trafgen: lab/flood.sh's SYN flood (tests/lab/test_flood.sh), lab/peer.sh's 64-byte flood
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
# crowdsec's postinst registers with CrowdSec's central API, on the
# internet, and fails the install without it; a comment in its credentials
# file before the install skips that (Debian's README.Debian: "# no
# thanks"), and the file stays, as the admin's wish, when it is purged
if [[ " ${missing[*]} " == *" crowdsec "* ]] && [ ! -s /etc/crowdsec/online_api_credentials.yaml ]; then
	mkdir -p /etc/crowdsec
	echo "# no thanks: flowcut's tests run crowdsec offline (scripts/deps.sh)" \
		>/etc/crowdsec/online_api_credentials.yaml
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# fail2ban, crowdsec and its bouncer installed here are the tests' alone
# (each runs its own, its files under the test's run folder): the
# machine's services (fail2ban's Debian jail, sshd, bans into the machine's
# own nftables; the bouncer too) are stopped if they started anyway (a
# policy-rc.d of the machine's own that allows it) and masked, so no boot
# starts them either.  Masked only when installed here: one the machine
# already had is left as it is.
mask_service() { # package (its service of the same name)
	[[ " ${missing[*]} " == *" $1 "* ]] || return 0
	if [ -d /run/systemd/system ]; then
		systemctl stop "$1.service" 2>/dev/null || true
		systemctl mask "$1.service" >/dev/null
	else	# no systemd running (a container): the unit masked on disk, the init script stopped
		if [ -x "/etc/init.d/$1" ]; then "/etc/init.d/$1" stop >/dev/null 2>&1 || true; fi
		systemctl --root=/ mask "$1.service" >/dev/null 2>&1 ||
			ln -sf /dev/null "/etc/systemd/system/$1.service"
		update-rc.d "$1" disable >/dev/null 2>&1 || true
	fi
	echo "deps: $1 installed for the tests, its service masked (systemctl unmask $1 to use it)"
}
mask_service fail2ban
mask_service crowdsec
mask_service crowdsec-firewall-bouncer
