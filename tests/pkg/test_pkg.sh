#!/usr/bin/env bash
# The Debian package and make install, on this machine (root only):
# - the package built from a copy of the tree (dpkg-buildpackage -us -uc -b,
#   under a temporary folder: nothing left beside the tree) and lintian on
#   its .deb and .changes: no tag but the ones debian/README.source names;
# - installed with dpkg, no unit started (a policy-rc.d saying 101 while
#   none is there, as scripts/deps.sh does; and none starts where systemd
#   is not running): its files, the units enabled, the users, the secret
#   (root's 0600, 64 hex digits), the settings (they parse, the read group);
#   installed again: the secret and an operator's settings kept;
# - removed: no program, unit or man page left, no process of it, only its
#   configuration (the conffile /etc/default/flowcut, the settings and the
#   secret the postinst made); purged: none of those, no user, no group;
# - make install DESTDIR=... and make uninstall: nothing left but the empty
#   folders of the hierarchy, an operator's settings never overwritten.
# It refuses to run (SKIP) where it would disturb the machine: flowcut
# installed already, its users or /etc/flowcut there, /run/flowcut in use.
# Every exit (a failure too) purges what it installed and removes its files.
#
# Output: one "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line
# per test (tests/run.sh counts them).  BUILD names the build folder (make
# install's programs).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
pkg=flowcut
tests=(build lintian install reinstall remove purge "make install" "make uninstall")

. "$here/tap.sh"

skip_all() { # why
	for t in "${tests[@]}"; do echo "ok - $t # SKIP $1"; done
	exit 0
}

[ "$(id -u)" -eq 0 ] || skip_all "not root"
for c in dpkg-buildpackage lintian dh fakeroot man; do
	command -v $c >/dev/null || skip_all "$c is not installed (scripts/deps.sh)"
done
dpkg-query -W -f='${Status}' $pkg 2>/dev/null | grep -q "ok installed\|config-files" &&
	skip_all "the package $pkg is on this machine already"
for u in flowcut-web flowcut-inspect; do getent passwd $u >/dev/null && skip_all "a user $u exists"; done
for g in flowcut flowcut-inspect; do getent group $g >/dev/null && skip_all "a group $g exists"; done
for f in /etc/flowcut /etc/default/flowcut /run/flowcut /run/flowcut-ctl; do
	[ -e $f ] && skip_all "$f exists (this machine's)"
done

work=$(mktemp -d)
made_policy=
installed=
cleanup() {
	if [ -n "$installed" ]; then dpkg -P $pkg >/dev/null 2>&1; fi
	# none was there before (checked above): a purge that failed leaves none
	if getent passwd flowcut-web >/dev/null; then userdel flowcut-web; fi
	if getent passwd flowcut-inspect >/dev/null; then userdel flowcut-inspect; fi
	for g in flowcut flowcut-inspect; do if getent group $g >/dev/null; then groupdel $g; fi; done
	if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; fi
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- build ------------------------------------------------------------------
mkdir -p "$work/src/$pkg"
tar -C "$top" --exclude=./.git --exclude=./build --exclude=./debian/build \
	--exclude='./debian/.debhelper' --exclude="./debian/$pkg" -cf - . | tar -C "$work/src/$pkg" -xf -
start=$(date +%s)
(cd "$work/src/$pkg" && nice -n 15 dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
deb=$(ls "$work"/src/${pkg}_*.deb 2>/dev/null | head -1)
changes=$(ls "$work"/src/${pkg}_*.changes 2>/dev/null | head -1)
[ $rc -eq 0 ] && [ -n "$deb" ] && [ -n "$changes" ]
result "build: dpkg-buildpackage -us -uc -b (${secs} s)" $? "exit $rc" "$(tail -25 "$work/build.log")"
[ -n "$deb" ] || { for t in "${tests[@]:1}"; do echo "not ok - $t"; echo "# no package built"; done; exit 1; }

# ---- lintian: the tags debian/README.source says, no other ------------------
allowed=$(sed -n 's/^ *lintian: \([a-z0-9-]*\).*/\1/p' "$top/debian/README.source")
out=$(lintian --pedantic --display-info "$deb" "$changes" 2>&1 | grep -v '^running with root privileges')
tags=$(sed -n 's/^[EWIPX]: [^ ]*: \([a-z0-9-]*\).*/\1/p' <<<"$out" | sort -u)
unsaid=$(comm -23 <(echo "$tags" | sed '/^$/d') <(echo "$allowed" | sort -u))
errors=$(grep -v '^[EWIPXNO]: ' <<<"$out" | sed '/^$/d')
[ -z "$unsaid" ] && [ -z "$errors" ]
result "lintian on the .deb and the .changes: no tag debian/README.source does not say" $? \
	"$(grep -F -f <(echo "${unsaid:-^$}") <<<"$out")" "$errors"

# ---- install ----------------------------------------------------------------
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
	made_policy=1
fi
installed=1
out=$(dpkg -i "$deb" 2>&1)
rc=$?
why=("exit $rc" "$out")
[ $rc -eq 0 ] || why+=("dpkg -i failed")
for f in /usr/sbin/flowcut-npu /usr/sbin/flowcutd /usr/sbin/flowcutctl /usr/sbin/flowcut-web /usr/sbin/flowcut-inspect; do
	[ -x $f ] || why+=("$f: no program")
done
for u in flowcut-npu flowcutd flowcut-web; do
	[ -f /lib/systemd/system/$u.service ] || why+=("no unit $u.service")
	grep -q "^ExecStart=/usr/sbin/$u " /lib/systemd/system/$u.service 2>/dev/null ||
		why+=("$u.service: ExecStart is not /usr/sbin/$u")
	[ -L /etc/systemd/system/multi-user.target.wants/$u.service ] || why+=("$u.service not enabled")
	man -w $u >/dev/null 2>&1 || why+=("man $u: no page")
done
# the parser: its unit on its socket's, both enabled, its own user in no group of flowcut's
grep -qx "ExecStart=/usr/sbin/flowcut-inspect" /lib/systemd/system/flowcut-inspect.service 2>/dev/null ||
	why+=("flowcut-inspect.service: ExecStart is not /usr/sbin/flowcut-inspect")
[ -f /lib/systemd/system/flowcut-inspect.socket ] || why+=("no unit flowcut-inspect.socket")
[ -L /etc/systemd/system/sockets.target.wants/flowcut-inspect.socket ] || why+=("flowcut-inspect.socket not enabled")
# the page's sockets, systemd's (issue 30)
[ -f /lib/systemd/system/flowcut-web.socket ] || why+=("no unit flowcut-web.socket")
[ -L /etc/systemd/system/sockets.target.wants/flowcut-web.socket ] || why+=("flowcut-web.socket not enabled")
man -w flowcut-inspect >/dev/null 2>&1 || why+=("man flowcut-inspect: no page")
[ "$(id -gn flowcut-inspect 2>/dev/null)" = flowcut-inspect ] || why+=("flowcut-inspect's group is not its own")
[ "$(id -Gn flowcut-inspect 2>/dev/null)" = flowcut-inspect ] || why+=("flowcut-inspect is in another group")
[ -f /etc/default/flowcut ] || why+=("no /etc/default/flowcut")
grep -qx /etc/default/flowcut /var/lib/dpkg/info/$pkg.conffiles 2>/dev/null ||
	why+=("/etc/default/flowcut is not a conffile")
# the users: flowcut-web, in the read group flowcut, no login
ent=$(getent passwd flowcut-web)
[ -n "$ent" ] || why+=("no user flowcut-web")
[ "$(id -gn flowcut-web 2>/dev/null)" = flowcut ] || why+=("flowcut-web's group is not flowcut")
[ "${ent##*:}" = /usr/sbin/nologin ] || why+=("flowcut-web's shell is '${ent##*:}', not nologin")
[ "$(id -u flowcut-web 2>/dev/null)" -lt 1000 ] 2>/dev/null || why+=("flowcut-web is not a system user")
# the secret: root's 0600, one line of 64 hex digits
s=/etc/flowcut/web.secret
[ "$(stat -c '%a %U %G' $s 2>/dev/null)" = "600 root root" ] ||
	why+=("$s: $(stat -c '%a %U %G' $s 2>&1), not 600 root root")
grep -qxE '[0-9a-f]{64}' $s 2>/dev/null && [ "$(wc -l <$s)" -eq 1 ] || why+=("$s: not one line of 64 hex digits")
secret=$(cat $s 2>/dev/null)
# the settings: they parse, the read group is flowcut
out=$(flowcutctl --settings /etc/flowcut/settings.conf --json settings 2>&1) || why+=("settings: $out")
grep -qx 'control_read_group = flowcut' /etc/flowcut/settings.conf 2>/dev/null ||
	why+=("/etc/flowcut/settings.conf: no control_read_group = flowcut")
[ ${#why[@]} -eq 2 ]
result "install: dpkg -i: programs, units enabled, man pages, the users, the secret 0600, the settings" $? "${why[@]}"

# ---- installed again: what the operator has is kept --------------------------
why=()
flowcutctl --settings /etc/flowcut/settings.conf settings set idle_timeout 30 >/dev/null || why+=("settings set failed")
echo "# an operator's line" >>/etc/default/flowcut
out=$(dpkg -i "$deb" 2>&1) || why+=("dpkg -i again: $out")
[ "$(cat $s 2>/dev/null)" = "$secret" ] || why+=("the secret was replaced")
grep -qx 'idle_timeout = 30' /etc/flowcut/settings.conf || why+=("the operator's settings were replaced")
grep -qx "# an operator's line" /etc/default/flowcut || why+=("the operator's /etc/default/flowcut was replaced")
result "reinstall: the secret, the settings and /etc/default/flowcut kept" ${#why[@]} "${why[@]}"

# ---- remove -------------------------------------------------------------------
why=()
list=$(dpkg -L $pkg 2>/dev/null)
out=$(dpkg -r $pkg 2>&1) || why+=("dpkg -r: $out")
while read -r f; do
	[ -n "$f" ] && [ ! -d "$f" ] && [ -e "$f" ] && [ "$f" != /etc/default/flowcut ] && why+=("$f left")
done <<<"$list"
[ -f /etc/default/flowcut ] || why+=("the conffile /etc/default/flowcut removed before the purge")
for f in /etc/flowcut/settings.conf /etc/flowcut/web.secret; do [ -f $f ] || why+=("$f removed before the purge"); done
for p in /proc/[0-9]*; do
	exe=$(readlink "$p/exe" 2>/dev/null) || continue
	case "$exe" in /usr/sbin/flowcut*) why+=("process ${p#/proc/} runs $exe") ;; esac
done
for d in /run/flowcut /run/flowcut-ctl; do [ -e $d ] && why+=("$d left"); done
result "remove: no file of it left but its configuration, no process" ${#why[@]} "${why[@]}"

# ---- purge --------------------------------------------------------------------
why=()
out=$(dpkg -P $pkg 2>&1) || why+=("dpkg -P: $out")
installed=
st=$(dpkg-query -W -f='${Status}' $pkg 2>/dev/null)
case "$st" in "" | *" not-installed") ;; *) why+=("dpkg says $pkg is '$st'") ;; esac
for f in /etc/flowcut /etc/default/flowcut /etc/systemd/system/multi-user.target.wants/flowcutd.service \
	/etc/systemd/system/multi-user.target.wants/flowcut-npu.service \
	/etc/systemd/system/multi-user.target.wants/flowcut-web.service; do
	[ -e $f ] || [ -L $f ] && why+=("$f left")
done
getent passwd flowcut-web >/dev/null && why+=("the user flowcut-web left")
getent passwd flowcut-inspect >/dev/null && why+=("the user flowcut-inspect left")
getent group flowcut >/dev/null && why+=("the group flowcut left")
getent group flowcut-inspect >/dev/null && why+=("the group flowcut-inspect left")
result "purge: no configuration, no user, no group left" ${#why[@]} "${why[@]}"

# ---- make install, make uninstall -------------------------------------------
why=()
d=$work/destdir
out=$(MAKEFLAGS= make -s -C "$top" BUILD="$BUILD" install DESTDIR="$d" 2>&1) || why+=("make install: $out")
for f in usr/local/sbin/flowcut-npu usr/local/sbin/flowcutd usr/local/sbin/flowcutctl \
	usr/local/lib/systemd/system/flowcut-npu.service usr/local/lib/systemd/system/flowcutd.service \
	usr/local/share/man/man8/flowcutd.8 usr/local/lib/sysusers.d/flowcut.conf \
	etc/flowcut/settings.conf etc/default/flowcut; do
	[ -f "$d/$f" ] || why+=("no $f")
done
grep -q "^ExecStart=/usr/local/sbin/flowcutd " "$d/usr/local/lib/systemd/system/flowcutd.service" 2>/dev/null ||
	why+=("flowcutd.service's ExecStart is not /usr/local/sbin/flowcutd")
"$d/usr/local/sbin/flowcutctl" --settings "$d/etc/flowcut/settings.conf" settings set idle_timeout 30 >/dev/null ||
	why+=("the installed settings do not take a set")
out=$(MAKEFLAGS= make -s -C "$top" BUILD="$BUILD" install DESTDIR="$d" 2>&1) || why+=("make install again: $out")
grep -qx 'idle_timeout = 30' "$d/etc/flowcut/settings.conf" || why+=("make install overwrote the operator's settings")
result "make install DESTDIR: programs, units, man pages, settings; an operator's settings kept" ${#why[@]} "${why[@]}"

why=()
out=$(MAKEFLAGS= make -s -C "$top" BUILD="$BUILD" uninstall DESTDIR="$d" 2>&1) || why+=("make uninstall: $out")
[ -f "$d/etc/flowcut/settings.conf" ] || why+=("make uninstall took the operator's settings")
rm -f "$d/etc/flowcut/settings.conf"
rmdir "$d/etc/flowcut" 2>/dev/null
MAKEFLAGS= make -s -C "$top" BUILD="$BUILD" install DESTDIR="$d" >/dev/null 2>&1 || why+=("make install (3) failed")
out=$(MAKEFLAGS= make -s -C "$top" BUILD="$BUILD" uninstall DESTDIR="$d" 2>&1) || why+=("make uninstall (2): $out")
left=$(find "$d" -not -type d; find "$d" -type d -name '*flowcut*')
[ -z "$left" ] || why+=("left:" $left)
result "make uninstall DESTDIR: nothing left (an operator's settings kept until then)" ${#why[@]} "${why[@]}"
