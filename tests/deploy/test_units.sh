#!/usr/bin/env bash
# The systemd units of deploy/: they load cleanly (systemd-analyze verify,
# on copies whose ExecStart names the built programs, so it runs from a
# checkout; any warning fails), each is sandboxed to at most MEDIUM
# exposure (systemd-analyze security --offline=yes), and what the units
# must keep holds: restarts never stop (StartLimitIntervalSec=0 in [Unit],
# Restart=always) and /run/flowcut is root's only and outlives either unit
# (RuntimeDirectory=flowcut, mode 0700, preserved, in both).
#
# Output: one "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line
# per test (tests/run.sh counts them).  BUILD names the build folder;
# UNITS the folder of units (default deploy/).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
UNITS=${UNITS:-$top/deploy}
units=(flowcut-npu.service flowcutd.service)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# the value of KEY in [SECTION] of a unit file (the last one set)
key() { # file section key
	awk -v s="[$2]" -v k="$3" '
		/^\[/ { in_s = ($0 == s); next }
		in_s && index($0, k "=") == 1 { v = substr($0, length(k) + 2) }
		END { print v }' "$1"
}

. "$top/tests/pkg/tap.sh"

# systemd-analyze of one unit file: verify's output and exit (out, rc),
# security's (sec), its overall exposure (overall) and whether that is at
# most MEDIUM (medium: 1 or 0)
analyze() { # file
	out=$(systemd-analyze verify --man=no "$1" 2>&1)
	rc=$?
	sec=$(systemd-analyze security --offline=yes --no-pager "$1" 2>&1)
	overall=$(grep 'Overall exposure level' <<<"$sec" | sed 's/.*: //' | awk '{ print $1, $2 }')
	case "$overall" in *" SAFE"* | *" OK"* | *" MEDIUM"*) medium=1 ;; *) medium=0 ;; esac
}

for u in "${units[@]}"; do
	[ -f "$UNITS/$u" ] || { result "$u: present in $UNITS" 1 "no such file"; continue; }
	sed "s#/usr/local/sbin/#$BUILD/#g" "$UNITS/$u" >"$work/$u"
done
# the page's unit (issue 18): verified and rated as the others, on
# /bin/true where flowcut-web is not built; it is no root unit (below)
web=flowcut-web.service
if [ -f "$UNITS/$web" ]; then
	exe=$BUILD/flowcut-web
	[ -x "$exe" ] || exe=/bin/true
	sed "s#/usr/local/sbin/flowcut-web#$exe#g" "$UNITS/$web" >"$work/$web"
	f=$work/$web
	why=()
	[ "$(key "$f" Service User)" = flowcut-web ] || why+=("User= is not flowcut-web")
	[ "$(key "$f" Service NoNewPrivileges)" = yes ] || why+=("NoNewPrivileges= is not yes")
	[ "$(key "$f" Service ProtectSystem)" = strict ] || why+=("ProtectSystem= is not strict")
	[ "$(key "$f" Service PrivateTmp)" = yes ] || why+=("PrivateTmp= is not yes")
	[ -z "$(key "$f" Service CapabilityBoundingSet)" ] && grep -q '^CapabilityBoundingSet=$' "$f" ||
		why+=("CapabilityBoundingSet= is not empty")
	[ "$(key "$f" Service RestrictAddressFamilies)" = "AF_UNIX AF_INET AF_INET6 AF_NETLINK" ] ||
		why+=("RestrictAddressFamilies= is not AF_UNIX AF_INET AF_INET6 AF_NETLINK (sock_diag: its guard)")
	grep -qw flowcutd.service <<<"$(key "$f" Unit After)" || why+=("not After=flowcutd.service")
	# its sockets systemd's, made at boot: no local user can take the port (issue 30)
	ws=$UNITS/flowcut-web.socket
	cp "$ws" "$work/" 2>/dev/null || why+=("no flowcut-web.socket")
	grep -qw flowcut-web.socket <<<"$(key "$f" Unit Requires)" || why+=("does not require flowcut-web.socket")
	grep -qx 'ListenStream=127.0.0.1:9842' "$ws" 2>/dev/null && grep -qx 'ListenStream=\[::1\]:9842' "$ws" 2>/dev/null ||
		why+=("flowcut-web.socket does not listen on 127.0.0.1:9842 and [::1]:9842")
	grep -q -- '--listen' <<<"$(key "$f" Service Environment)$(key "$f" Service ExecStart)" &&
		why+=("it is given --listen: it would bind the port itself")
	result "$web: its own user, no capability, read-only, after flowcutd, on systemd's sockets" ${#why[@]} "${why[@]}"
	units+=("$web")
fi

# the parser's unit (issue 29): its own user, no capability, no IP, its
# socket systemd's (root's 0600 in /run/flowcut), restarted for ever; rated
# below as the others, and no worse than the page's
ins=flowcut-inspect.service
if [ -f "$UNITS/$ins" ]; then
	exe=$BUILD/flowcut-inspect
	[ -x "$exe" ] || exe=/bin/true
	sed "s#/usr/local/sbin/flowcut-inspect#$exe#g" "$UNITS/$ins" >"$work/$ins"
	cp "$UNITS/flowcut-inspect.socket" "$work/" 2>/dev/null
	f=$work/$ins
	sk=$work/flowcut-inspect.socket
	why=()
	[ "$(key "$f" Service User)" = flowcut-inspect ] || why+=("User= is not flowcut-inspect")
	[ "$(key "$f" Service NoNewPrivileges)" = yes ] || why+=("NoNewPrivileges= is not yes")
	[ "$(key "$f" Service ProtectSystem)" = strict ] || why+=("ProtectSystem= is not strict")
	[ "$(key "$f" Service PrivateNetwork)" = yes ] || why+=("PrivateNetwork= is not yes")
	[ -z "$(key "$f" Service CapabilityBoundingSet)" ] && grep -q '^CapabilityBoundingSet=$' "$f" ||
		why+=("CapabilityBoundingSet= is not empty")
	[ "$(key "$f" Service RestrictAddressFamilies)" = AF_UNIX ] || why+=("RestrictAddressFamilies= is not AF_UNIX")
	[ "$(key "$f" Service Restart)" = always ] || why+=("Restart= is not always")
	[ "$(key "$f" Unit StartLimitIntervalSec)" = 0 ] || why+=("no StartLimitIntervalSec=0 in [Unit]")
	[ -f "$sk" ] || why+=("no flowcut-inspect.socket")
	[ "$(key "$sk" Socket ListenSequentialPacket)" = /run/flowcut/inspect.sock ] ||
		why+=("the socket is not ListenSequentialPacket=/run/flowcut/inspect.sock")
	[ "$(key "$sk" Socket SocketMode)" = 0600 ] || why+=("SocketMode= is not 0600")
	[ "$(key "$sk" Socket DirectoryMode)" = 0700 ] || why+=("DirectoryMode= is not 0700")
	grep -qw flowcut-inspect.socket <<<"$(key "$UNITS/flowcutd.service" Unit Wants)" ||
		why+=("flowcutd.service does not want flowcut-inspect.socket")
	result "$ins: its own user, no capability, no IP, on systemd's root-only socket, restarted" \
		${#why[@]} "${why[@]}"
	units+=("$ins")
fi

if ! command -v systemd-analyze >/dev/null 2>&1; then
	for u in "${units[@]}"; do
		echo "ok - $u: systemd-analyze verify # SKIP systemd-analyze is not installed"
		echo "ok - $u: exposure at most MEDIUM # SKIP systemd-analyze is not installed"
	done
else
	for u in "${units[@]}"; do
		[ -f "$work/$u" ] || continue
		analyze "$work/$u"
		[ $rc -eq 0 ] && [ -z "$out" ]
		result "$u: systemd-analyze verify says nothing" $? "exit $rc" "$out"
		score=$(grep 'Overall exposure level' <<<"$sec" | sed 's/.*: //' | awk '{ print $1 }')
		[ "$u" = "$web" ] && web_score=$score
		if [ "$u" = "$ins" ] && [ -n "${web_score:-}" ]; then
			awk -v a="$score" -v b="$web_score" 'BEGIN { exit !(a <= b) }'
			result "$u: exposure $score, no worse than $web's $web_score" $? \
				"the heaviest exposures:" "$(grep '✗' <<<"$sec" | head -8)"
		fi
		result "$u: exposure at most MEDIUM (${overall:-none said})" $((!medium)) \
			"the heaviest exposures:" "$(grep '✗' <<<"$sec" | awk '{ print $NF "\t" $0 }' |
				sort -rn | cut -f2- | head -8)"
	done
fi

# the AF_XDP drop-in (deploy/af_xdp.conf) on the coprocessor's unit, as
# /etc/systemd/system/flowcut-npu.service.d/ would hold it: it loads
# cleanly, keeps the exposure at most MEDIUM, and its capabilities are the
# unit's (systemd-analyze reads the drop-in from beside the unit)
xdp=$UNITS/af_xdp.conf
if [ -f "$xdp" ] && [ -f "$work/flowcut-npu.service" ]; then
	if ! command -v systemd-analyze >/dev/null 2>&1; then
		echo "ok - flowcut-npu.service with af_xdp.conf # SKIP systemd-analyze is not installed"
	else
		mkdir -p "$work/xdp/flowcut-npu.service.d"
		cp "$work/flowcut-npu.service" "$work/xdp/"
		cp "$xdp" "$work/xdp/flowcut-npu.service.d/af_xdp.conf"
		analyze "$work/xdp/flowcut-npu.service"
		why=()
		[ $rc -eq 0 ] && [ -z "$out" ] || why+=("verify: exit $rc" "$out")
		[ "$medium" = 1 ] || why+=("exposure ${overall:-not said}")
		for k in CapabilityBoundingSet=~CAP_SYS_ADMIN CapabilityBoundingSet=~CAP_IPC_LOCK \
			RestrictAddressFamilies=~AF_NETLINK; do
			grep -q "✗ $k " <<<"$sec" || why+=("${k#*~} not allowed with the drop-in")
		done
		result "flowcut-npu.service with af_xdp.conf: verify says nothing, exposure ${overall:-?}, its capabilities in force" \
			${#why[@]} "${why[@]}"
	fi
fi

for u in "${units[@]}"; do
	f=$work/$u
	[ -f "$f" ] && [ "$u" != "$web" ] && [ "$u" != "$ins" ] || continue
	why=()
	[ "$(key "$f" Unit StartLimitIntervalSec)" = 0 ] || why+=("no StartLimitIntervalSec=0 in [Unit]")
	[ "$(key "$f" Service Restart)" = always ] || why+=("Restart= is not always")
	grep -qw flowcut <<<"$(key "$f" Service RuntimeDirectory)" || why+=("no RuntimeDirectory=flowcut")
	[ "$(key "$f" Service RuntimeDirectoryMode)" = 0700 ] || why+=("RuntimeDirectoryMode= is not 0700")
	[ "$(key "$f" Service RuntimeDirectoryPreserve)" = yes ] || why+=("RuntimeDirectoryPreserve= is not yes")
	[ -z "$(key "$f" Service User)" ] || why+=("User= set: /run/flowcut is root's (0700)")
	result "$u: restarts never stop, /run/flowcut root's and kept" ${#why[@]} "${why[@]}"
done
