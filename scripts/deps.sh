#!/usr/bin/env bash
# Installs the Debian packages flowcut builds and tests with, if any is
# missing.  Idempotent; needs root when something is missing.
set -euo pipefail
pkgs=(make gcc clang libclang-rt-14-dev pkg-config
      dpdk-dev libdpdk-dev libcmocka-dev libpcap-dev libjansson-dev valgrind bc iproute2 ethtool iputils-ping nftables conntrack iperf3 curl
      libmnl-dev libnetfilter-conntrack-dev libnftables-dev)
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
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
