#!/usr/bin/env bash
# Block lists as the tools write them (issue 17), in the lab (lab/lab.sh):
# the real fail2ban (Debian's package and its own nftables action) with two
# jails, watched by its table or by a pattern, never by a set name written
# here; the real CrowdSec and its firewall bouncer (Debian's crowdsec and
# crowdsec-firewall-bouncer), watched the same ways; a set made after
# flowcutd started, under a pattern, and its table
# deleted and made anew; a never-cut address inside a prefix that a list
# line and a hand cut both cover.  Every flood check is test_lab's: at most
# 10 frames to the host in the 10 s from 1 s after the cut of a 400 Mbit/s
# UDP flood, the coprocessor dropping it.  IPv4 and IPv6.  Each test builds
# a lab of its own (lab_suite's per-test), is bounded in time, and tears it
# down even when it fails.  Output: one "ok - NAME" / "not ok - NAME" line
# a test, "# ..." lines for the figures.
#
# Root only (namespaces).  BUILD names the build folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"	# say ex rx counter conns wait_for udp_stream forwarding port_counters port_rx f2b*, win_* flood floods_stop, lab_suite
LAB_TIMES=1

# The lab's addresses a family: the client's own (.2), a second one the
# test gives it (.3), one no host has (.9), and the server.
addrs() { # family: sets src alt spare dst
	if [ "$1" = 4 ]; then
		src=198.18.0.2 alt=198.18.0.3 spare=198.18.0.9 dst=198.18.1.2
	else
		src=2001:2::2 alt=2001:2::3 spare=2001:2::9 dst=2001:2:0:1::2
	fi
}
alt_addresses() {
	ex client ip addr add 198.18.0.3/24 dev c0 &&
		ex client ip addr add 2001:2::3/64 dev c0 nodad
}
set_() { "$ctl" --settings "$run/settings.conf" settings set "$@" >/dev/null; }
# a top-level counter of flowcutd's stats (written once a second)
stat() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$run/flowcutd.json" "$1"
}
# waits until flowcutd's log holds at least $2 lines matching $1 (5 s)
logged() { # regex [count]
	wait_for 50 bash -c "[ \$(grep -c -- '$1' '$run/flowcutd.log') -ge ${2:-1} ]"
}

lab_on_fail() {
	grep -E 'watched|never|cut \(|release' "$run/flowcutd.log" | tail -15
	[ -f "$run/f2b/fail2ban.log" ] && grep -E 'ERROR|Ban|jail' "$run/f2b/fail2ban.log" | tail -8
	[ -f "$run/cs/crowdsec-firewall-bouncer.log" ] && tail -6 "$run/cs/crowdsec-firewall-bouncer.log"
	return 0
}


# The real CrowdSec (Debian's crowdsec 1.4.6: its local API alone, no agent,
# no central API) and its real firewall bouncer (crowdsec-firewall-bouncer
# 0.0.25, nftables mode) in the lab's host namespace, every file of theirs
# in $run/cs - the machine's /etc/crowdsec and /var/lib/crowdsec are read
# (the hub, the profiles), never written.  cs_up makes the config, registers
# a machine (cscli's credentials) and a bouncer (its api key) in the test's
# own database, starts crowdsec (its API on 127.0.0.1:18087, the lab
# host's own loopback) and the bouncer; cs_down stops both (SIGTERM: the
# bouncer deletes its tables), then SIGKILL past 5 s.  The bouncer's
# `daemonize: true` is what makes it handle SIGTERM at all (0.0.25 runs in
# the foreground either way; with false a SIGTERM kills it and its tables
# stay); `update_frequency: 1s` puts a decision in its set within a second.
cs() { ex host cscli -c "$run/cs/config.yaml" --error "$@"; }
cs_up() {
	local key port=18087
	rm -rf "$run/cs"
	mkdir -p "$run/cs/data"
	: >"$run/cs/acquis.yaml"
	cat >"$run/cs/config.yaml" <<-EOF
	common:
	  daemonize: false
	  log_media: file
	  log_dir: $run/cs/
	  log_level: info
	  working_dir: $run/cs/
	config_paths:
	  config_dir: $run/cs/
	  data_dir: $run/cs/data/
	  simulation_path: /etc/crowdsec/simulation.yaml
	  hub_dir: /var/lib/crowdsec/hub/
	  index_path: /var/lib/crowdsec/hub/.index.json
	  notification_dir: $run/cs/notifications/
	  plugin_dir: /usr/lib/crowdsec/plugins/
	crowdsec_service:
	  acquisition_path: $run/cs/acquis.yaml
	cscli:
	  output: human
	  color: false
	db_config:
	  log_level: info
	  type: sqlite
	  db_path: $run/cs/data/crowdsec.db
	  use_wal: true
	api:
	  client:
	    credentials_path: $run/cs/local_api_credentials.yaml
	  server:
	    log_level: info
	    listen_uri: 127.0.0.1:$port
	    profiles_path: /etc/crowdsec/profiles.yaml
	    trusted_ips:
	      - 127.0.0.1
	prometheus:
	  enabled: false
	EOF
	cs machines add flowcut-lab --password "lab-$$-$RANDOM-$RANDOM" -f "$run/cs/local_api_credentials.yaml" ||
		{ say "cscli machines add failed"; return 1; }
	{ key=$(cs bouncers add flowcut-lab-fw -o raw) && [ -n "$key" ]; } || { say "cscli bouncers add failed"; return 1; }
	cat >"$run/cs/bouncer.yaml" <<-EOF
	mode: nftables
	pid_dir: $run/cs/
	update_frequency: 1s
	daemonize: true
	log_mode: file
	log_dir: $run/cs/
	log_level: info
	api_url: http://127.0.0.1:$port/
	api_key: $key
	disable_ipv6: false
	deny_action: DROP
	supported_decisions_types:
	  - ban
	prometheus:
	  enabled: false
	EOF
	ip netns exec "$L-host" crowdsec -c "$run/cs/config.yaml" -no-cs -no-capi >"$run/cs/crowdsec.out" 2>&1 &
	echo $! >"$run/cs/crowdsec.pid"
	wait_for 100 grep -q "Local API listening on 127.0.0.1:$port" "$run/cs/crowdsec.log" ||
		{ say "crowdsec's local API did not start"; return 1; }
	cs_bouncer_up
}
# the bouncer started: up once it has made both its tables (5 s).  The
# daemons are started by `ip netns exec`, which execs them: $! is theirs
# (`ex`, a function, would leave the pid of a subshell).
cs_bouncer_up() {
	ip netns exec "$L-host" crowdsec-firewall-bouncer -c "$run/cs/bouncer.yaml" >>"$run/cs/bouncer.out" 2>&1 &
	echo $! >"$run/cs/bouncer.pid"
	wait_for 50 bash -c "ip netns exec $L-host nft list table ip crowdsec && ip netns exec $L-host nft list table ip6 crowdsec6" ||
		{ say "the bouncer made no tables"; return 1; }
}
# SIGTERM to a daemon (its pid file), SIGKILL past 5 s; true when it had stopped by itself
cs_kill() {
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	rm -f "$1"
	kill "$pid" 2>/dev/null || return 0
	wait_for 50 bash -c "! $lab alive $L $pid" && return 0
	kill -9 "$pid" 2>/dev/null
	return 1
}
cs_down() { cs_kill "$run/cs/bouncer.pid"; cs_kill "$run/cs/crowdsec.pid"; }
# the set the bouncer made in TABLE (its name read from the kernel, never written here)
cs_set() { ex host nft list table "$@" | sed -n 's/^[[:space:]]*set \([^ ]*\) {.*/\1/p' | head -1; }

# ---- the tests: each returns 0 (ok), 1 (not ok) ----

# fail2ban, two jails (lab-a, lab-b: Debian's nftables-allports action in
# its own table inet f2b-table, sets addr-set-JAIL and addr6-set-JAIL made
# at a jail's first ban), watched by HOW: "table" (`inet f2b-table *`) or
# "pattern" (`addr-set-*` and `addr6-set-*`).  lab-b bans an address no host
# has (its set made), lab-a then bans a flood's client (family FA): cut.
# 3 s into that flood's window lab-b is stopped: its set deleted, flowcutd
# says it is gone, releases nothing (cut_released unchanged) and the flood
# stays dropped on the coprocessor.  `fail2ban-client reload` starts lab-b
# again (its ban restored from its database): its set followed again, and
# its ban of a second flood's client (the other family) cuts that one.
t_f2b() { # table|pattern FA
	local how=$1 fa=$2 fb=6 src alt spare dst a_src set_a set_b r0 r1
	[ "$fa" = 6 ] && fb=4
	command -v fail2ban-client >/dev/null || { say "fail2ban-client is not installed (make deps)"; return 1; }
	alt_addresses || return 1
	if [ "$how" = table ]; then
		set_ watched_set inet f2b-table '*' || return 1
	else
		set_ watched_set inet f2b-table 'addr-set-*' && set_ watched_set inet f2b-table 'addr6-set-*' || return 1
	fi
	logged "watched sets inet f2b-table .*: no table inet f2b-table" ||
		{ say "flowcutd did not say the table is missing"; return 1; }
	set_a=addr-set-lab-a set_b=addr6-set-lab-b
	[ "$fa" = 6 ] && set_a=addr6-set-lab-a set_b=addr-set-lab-b
	f2b_conf
	: >"$run/f2b/a.log"
	: >"$run/f2b/b.log"
	cat >"$run/f2b/conf/jail.local" <<-EOF
	[DEFAULT]
	filter = sshd
	backend = polling
	maxretry = 1000
	bantime = 600
	protocol = tcp,udp
	banaction = nftables-allports[chain_hook=forward, blocktype=drop]
	banaction_allports = nftables-allports[chain_hook=forward, blocktype=drop]
	[lab-a]
	enabled = true
	logpath = $run/f2b/a.log
	[lab-b]
	enabled = true
	logpath = $run/f2b/b.log
	EOF
	{ f2b_up lab-a && f2b status lab-b >/dev/null; } || { say "fail2ban did not start"; return 1; }
	addrs "$fb"
	f2b set lab-b banip "$spare" >/dev/null || { say "banip in lab-b failed"; return 1; }
	logged "watched set inet f2b-table $set_b: followed" ||
		{ say "flowcutd does not follow lab-b's set $set_b"; return 1; }
	# lab-a's ban cuts a flood from the client's own address
	addrs "$fa"
	a_src=$src
	flood "$fa" "$src" 5202 || return 1
	f2b set lab-a banip "$src" >/dev/null || { say "banip in lab-a failed"; return 1; }
	win_start
	sleep 3
	sleep 1.2	# the stats, written once a second
	r0=$(stat cut_released)
	f2b stop lab-b >/dev/null || { say "fail2ban-client stop lab-b failed"; return 1; }
	logged "watched set inet f2b-table $set_b: gone" || { say "flowcutd did not say $set_b is gone"; return 1; }
	! ex host nft list set inet f2b-table "$set_b" >/dev/null 2>&1 || { say "$set_b outlived its jail"; return 1; }
	win_end "UDP/IPv$fa 400 Mbit/s from $src, banned in lab-a ($set_a, watched by $how), lab-b stopped 4 s into the window" ||
		return 1
	sleep 1.2
	r1=$(stat cut_released)
	say "$(grep "$set_b: gone" "$run/flowcutd.log" | tail -1)"
	say "cut_released before lab-b's stop $r0, after $r1"
	[ "$r1" = "$r0" ] || { say "lab-b's stop released a cut connection"; return 1; }
	floods_stop
	# lab-b again: its set made anew (its ban restored), followed again
	f2b reload >/dev/null 2>&1 || { say "fail2ban-client reload failed"; return 1; }
	wait_for 50 f2b status lab-b || { say "lab-b did not start again"; return 1; }
	logged "watched set inet f2b-table $set_b: followed" 2 ||
		{ say "flowcutd does not follow $set_b again"; return 1; }
	say "$(grep "$set_b: followed" "$run/flowcutd.log" | tail -1)"
	addrs "$fb"
	flood "$fb" "$alt" 5203 || return 1
	f2b set lab-b banip "$alt" >/dev/null || { say "banip in lab-b failed"; return 1; }
	win_start
	win_end "UDP/IPv$fb 400 Mbit/s from $alt, banned in lab-b restarted ($set_b, watched by $how)" || return 1
	floods_stop
	say "$(grep -c 'cut (set) udp .* in hardware' "$run/flowcutd.log") cuts (set) in hardware logged;" \
	    "fail2ban: $(grep -c 'Ban ' "$run/f2b/fail2ban.log") bans, $a_src's: $(grep -c "Ban $a_src" "$run/f2b/fail2ban.log")"
	f2b_stop
	wait_for 50 bash -c "! ip netns exec $L-host nft list table inet f2b-table" ||
		{ say "fail2ban's table outlived it"; return 1; }
	logged "watched set inet f2b-table $set_a: gone"
}

# The real CrowdSec and its firewall bouncer (cs_up), watched by HOW:
# "table" (`ip crowdsec *`, `ip6 crowdsec6 *`) or "pattern"
# (`crowdsec-blacklists*`, `crowdsec6-blacklists*`), as docs/settings.md
# says to write them; the sets' names are read from what the bouncer made.
# `cscli decisions add` of a flood's client (family FA) cuts it; `why` names
# the bouncer's set and element; `cscli decisions delete` releases it (its
# frames reach the server again).  The bouncer stopped deletes both tables
# (flowcutd says the sets are gone), started again makes them (followed
# again), and a decision on a second flood's client (the other family)
# cuts that one.
t_crowdsec() { # table|pattern FA
	local how=$1 fa=$2 fb=6 src alt spare dst a_src ta=ip tb=ip6 set_a set_b k0 k1 why
	[ "$fa" = 6 ] && fb=4 ta=ip6 tb=ip
	{ command -v cscli >/dev/null && command -v crowdsec-firewall-bouncer >/dev/null; } ||
		{ say "crowdsec or crowdsec-firewall-bouncer is not installed (make deps)"; return 1; }
	trap cs_down EXIT
	alt_addresses && port_counters || return 1
	if [ "$how" = table ]; then
		set_ watched_set ip crowdsec '*' && set_ watched_set ip6 crowdsec6 '*' || return 1
	else
		set_ watched_set ip crowdsec 'crowdsec-blacklists*' &&
			set_ watched_set ip6 crowdsec6 'crowdsec6-blacklists*' || return 1
	fi
	logged "watched sets ip crowdsec .*: no table ip crowdsec" ||
		{ say "flowcutd did not say the table is missing"; return 1; }
	cs_up || return 1
	ta="$ta $([ "$ta" = ip ] && echo crowdsec || echo crowdsec6)"
	tb="$tb $([ "$tb" = ip ] && echo crowdsec || echo crowdsec6)"
	# shellcheck disable=SC2086	# "FAMILY TABLE"
	set_a=$(cs_set $ta) set_b=$(cs_set $tb)
	say "the bouncer made $ta $set_a and $tb $set_b"
	{ logged "watched set $ta $set_a: followed" && logged "watched set $tb $set_b: followed"; } ||
		{ say "flowcutd does not follow the bouncer's sets"; return 1; }
	# a decision on the client's own address cuts its flood
	addrs "$fa"
	a_src=$src
	flood "$fa" "$src" 5202 || return 1
	cs decisions add --ip "$src" --duration 1h || { say "cscli decisions add --ip $src failed"; return 1; }
	# shellcheck disable=SC2086
	wait_for 30 ex host nft get element $ta "$set_a" "{ $src }" || { say "the bouncer did not add $src"; return 1; }
	win_start
	win_end "UDP/IPv$fa 400 Mbit/s from $src, cscli decisions add ($ta $set_a, watched by $how)" || return 1
	why=$("$ctl" --control "$run-ctl/flowcutd.sock" why "$src") || { say "flowcutctl why $src failed"; return 1; }
	echo "$why" | while read -r line; do say "  $line"; done
	echo "$why" | grep -qF "set $ta $set_a: element $src" || { say "why does not name the set and element"; return 1; }
	# the decision deleted: released, its frames reach the server again
	cs decisions delete --ip "$src" || { say "cscli decisions delete --ip $src failed"; return 1; }
	logged "release (cut by set) conn .* $src " || { say "the deleted decision released nothing"; return 1; }
	sleep 0.5
	k0=$(port_rx 5202)
	sleep 1
	k1=$(port_rx 5202)
	say "released: the server took in $(( k1 - k0 )) frames of the flood from $src in 1 s from 0.5 s after the release"
	[ $(( k1 - k0 )) -ge 1000 ] || { say "the released flood does not reach the server"; return 1; }
	floods_stop
	# the bouncer stopped: both tables deleted; started: made again, followed
	cs_kill "$run/cs/bouncer.pid" || { say "the bouncer did not stop at SIGTERM"; return 1; }
	{ ! ex host nft list table ip crowdsec >/dev/null 2>&1 && ! ex host nft list table ip6 crowdsec6 >/dev/null 2>&1; } ||
		{ say "the bouncer's tables outlived it"; return 1; }
	{ logged "watched set $ta $set_a: gone" && logged "watched set $tb $set_b: gone"; } ||
		{ say "flowcutd did not say the sets are gone"; return 1; }
	cs_bouncer_up || return 1
	{ logged "watched set $ta $set_a: followed" 2 && logged "watched set $tb $set_b: followed" 2; } ||
		{ say "flowcutd does not follow the bouncer's sets again"; return 1; }
	say "$(grep "$set_b: followed" "$run/flowcutd.log" | tail -1)"
	addrs "$fb"
	flood "$fb" "$alt" 5203 || return 1
	cs decisions add --ip "$alt" --duration 1h || { say "cscli decisions add --ip $alt failed"; return 1; }
	# shellcheck disable=SC2086
	wait_for 30 ex host nft get element $tb "$set_b" "{ $alt }" || { say "the bouncer did not add $alt"; return 1; }
	win_start
	win_end "UDP/IPv$fb 400 Mbit/s from $alt, cscli decisions add after the bouncer's restart ($tb $set_b)" || return 1
	floods_stop
	"$ctl" --control "$run-ctl/flowcutd.sock" why "$alt" | grep -qF "set $tb $set_b: element $alt" ||
		{ say "why $alt does not name the set and element"; return 1; }
	say "$(grep -c 'cut (set) udp .* in hardware' "$run/flowcutd.log") cuts (set) in hardware logged;" \
	    "the bouncer: $(grep -c 'decision added\|decisions added' "$run/cs/crowdsec-firewall-bouncer.log") additions, $a_src's cut and released"
}

# A set made after flowcutd started, under a pattern (`inet lab-made blk-*`):
# the table is not there at first (said); made with blk-v4, the set is
# followed, `nft add element` of a flood's client cuts it.  The table
# deleted (the set gone, said) and made anew with blk-v6 (interval): followed
# again, a prefix added cuts an IPv6 flood.
t_made_later() {
	set_ watched_set inet lab-made 'blk-*' || return 1
	logged "watched sets inet lab-made blk-\*: no table inet lab-made" ||
		{ say "flowcutd did not say the table is missing"; return 1; }
	ex host nft "add table inet lab-made; add set inet lab-made blk-v4 { type ipv4_addr; }" || return 1
	logged "watched set inet lab-made blk-v4: followed" || { say "blk-v4 not followed"; return 1; }
	flood 4 198.18.0.2 5202 || return 1
	ex host nft add element inet lab-made blk-v4 "{ 198.18.0.2 }" || return 1
	win_start
	win_end "UDP/IPv4 400 Mbit/s from 198.18.0.2, added to inet lab-made blk-v4 (made after flowcutd started)" || return 1
	floods_stop
	ex host nft delete table inet lab-made || return 1
	logged "watched set inet lab-made blk-v4: gone" || { say "blk-v4's end not said"; return 1; }
	ex host nft "add table inet lab-made; add set inet lab-made blk-v6 { type ipv6_addr; flags interval; }" ||
		return 1
	{ logged "watched sets inet lab-made blk-\*: table inet lab-made found" 2 &&
		logged "watched set inet lab-made blk-v6: followed"; } ||
		{ say "the table made anew is not followed"; return 1; }
	grep 'inet lab-made' "$run/flowcutd.log" | while read -r line; do say "  $line"; done
	flood 6 2001:2::2 5203 || return 1	# 5202's iperf3 server may still be closing
	ex host nft add element inet lab-made blk-v6 "{ 2001:2::/64 }" || return 1
	win_start
	win_end "UDP/IPv6 400 Mbit/s from 2001:2::2, 2001:2::/64 added to blk-v6 of the table made anew" || return 1
	floods_stop
}

# never_cut: KEEP (the client's own address) is never cut; a list line and
# a hand cut (`flowcutctl cut PREFIX`) both cover PREFIX, which holds KEEP
# and CUT (a second address of the client's).  Two live floods to the
# server: from KEEP (100 Mbit/s, to 5202, counted at the server) and from
# CUT (400 Mbit/s, to 5203).  In the window from 1 s after both cuts the
# host takes in at most 10 frames (CUT's flood dropped on the coprocessor),
# the server takes KEEP's flood in (90% of it at least) and KEEP's stays
# forwarding in the fast path; the refusals are said and counted.
t_never() { # family
	# shellcheck disable=SC2034	# addrs sets them all
	local fam=$1 src alt spare dst prefix=198.18.0.0/30 k0 k1 want
	addrs "$fam"
	[ "$fam" = 6 ] && prefix=2001:2::/126
	alt_addresses && port_counters || return 1
	set_ never_cut "$src" || return 1
	logged "never_cut: 1 ranges never cut" || { say "never_cut not applied"; return 1; }
	flood "$fam" "$src" 5202 100M || return 1
	flood "$fam" "$alt" 5203 || return 1
	printf '# the lab'"'"'s block list\n%s\n' "$prefix" >"$run/block.txt"
	set_ watched_list "$run/block.txt" || return 1
	logged "list $run/block.txt: 1 ranges read" || { say "the list was not read"; return 1; }
	ex host "$ctl" cut "$prefix" --for 60 >/dev/null || { say "flowcutctl cut $prefix failed"; return 1; }
	win_start
	k0=$(port_rx 5202)
	win_rest
	k1=$(port_rx 5202)
	win_end "UDP/IPv$fam 400 Mbit/s from $alt in $prefix, cut by the list and by hand" || return 1
	forwarding "$fam udp" 5202 || { say "the never-cut flood is not forwarding in the fast path"; conns; return 1; }
	want=$(( 100000000 * 10 * 9 / 10 / 8000 ))	# 90% of 10 s of 1,000-byte datagrams at 100 Mbit/s
	say "the never-cut $src in the same prefix: the server took in $(( k1 - k0 )) frames of its" \
	    "100 Mbit/s flood in the window (at least $want wanted)"
	grep 'never cut (' "$run/flowcutd.log" | while read -r line; do say "  $line"; done
	sleep 1.2
	say "never_cut_refused $(stat never_cut_refused)"
	floods_stop
	[ $(( k1 - k0 )) -ge "$want" ] || { say "the never-cut flood did not reach the server"; return 1; }
	grep -q "never cut (list): .* $src" "$run/flowcutd.log" || { say "the list's refusal not said"; return 1; }
	[ "$(stat never_cut_refused)" -ge 2 ] || { say "the refusals not counted"; return 1; }
}

tests=(
	"fail2ban, two jails watched by its table: a ban in one cuts a 400 Mbit/s flood (IPv4), the other stopped releases nothing, started again cuts (IPv6)|90|t_f2b table 4"
	"fail2ban, two jails watched by a pattern: a ban in one cuts a 400 Mbit/s flood (IPv6), the other stopped releases nothing, started again cuts (IPv4)|90|t_f2b pattern 6"
	"crowdsec: the real bouncer watched by its tables: a decision cuts a 400 Mbit/s flood (IPv4), its delete releases, the bouncer stopped and started again is followed, a decision cuts (IPv6)|90|t_crowdsec table 4"
	"crowdsec: the real bouncer watched by a pattern: a decision cuts a 400 Mbit/s flood (IPv6), its delete releases, the bouncer stopped and started again is followed, a decision cuts (IPv4)|90|t_crowdsec pattern 6"
	"a set made after flowcutd started, under a pattern, cuts a flood (IPv4); its table deleted and made anew is followed again (IPv6)|75|t_made_later"
	"never_cut: an address inside a prefix a list and a hand cut both cover stays forwarded, the rest is cut (IPv4)|45|t_never 4"
	"never_cut: an address inside a prefix a list and a hand cut both cover stays forwarded, the rest is cut (IPv6)|45|t_never 6"
)

lab_suite fcl per-test
