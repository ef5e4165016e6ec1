#!/usr/bin/env bash
# The appliance in the lab (lab/lab.sh), with real traffic (iperf3).  Each
# test builds a lab of its own, is bounded in time, and tears it down even
# when it fails.  Output: one "ok - NAME", "not ok - NAME" or
# "ok - NAME # SKIP why" line per test (tests/run.sh counts them).
#
# Root only (namespaces).  BUILD names the build folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"	# say ex rx counter conns cfg wait_for lab_up lab_down, the runner: lab_suite

# connections in the fast path; "error" when flowcutctl could not say
njson() {
	local out
	out=$("$ctl" --link "/run/flowcut-lab/$L/link" --json conns) || { echo error; return 1; }
	echo "$out" | grep -c '"id"' || true
}
# true when no UDP connection is in the fast path (false when flowcutctl fails)
no_udp_conn() {
	local out
	out=$("$ctl" --link "/run/flowcut-lab/$L/link" conns) || return 1
	! echo "$out" | grep -q ' udp '
}

# flowcutctl as nobody (nogroup, no other group) on flowcutd's control socket
ctl_as_nobody() {
	ex host setpriv --reuid=nobody --regid=nogroup --clear-groups "$ctl" --control "$run-ctl/flowcutd.sock" "$@"
}


# ---- the tests: each returns 0 (ok), 1 (not ok) ----

# fail2ban in the host's namespace (lib.sh's f2b_conf: every file of its
# own in $run/f2b), one jail whose ban action is Debian's nftables action
# writing into inet filter f2b-flowcut (a set flowcutd is told to watch),
# with a rule of its own in the forward hook.
f2b_start() {
	f2b_conf
	: >"$run/f2b/auth.log"
	cat >"$run/f2b/conf/jail.local" <<-EOF
	[flowcut-lab]
	enabled = true
	filter = sshd
	logpath = $run/f2b/auth.log
	backend = polling
	maxretry = 1000
	bantime = 600
	protocol = tcp,udp
	banaction = nftables[type=allports, table=filter, table_family=inet, chain=f2b-chain, chain_hook=forward, blocktype=drop, addr_set=f2b-flowcut, actionstart_on_demand=false]
	EOF
	f2b_up flowcut-lab
}

# The seed's cut: a UDP flood at 400 Mbit/s offloaded, then a cut of one of
# its ends (the server, or with "client" the client).  In the ten seconds
# from one second after the cut: with "Cut in hardware" on, the host's
# front ports take in at most 10 frames while the coprocessor counts the
# flood as DROP_IPS_VERDICT; off, the connection is taken out and the host
# takes the flood in (its rule drops it there).  With "conn":
# `flowcutctl cut --conn ID` of the flood's connection (on flowcutd's
# control socket) instead of an address.  How the address is cut (VIA):
#   hand  `flowcutctl cut ADDR --for 60` (flowcutd's cut4/cut6)
#   set   `nft add element inet filter blocked4 { ADDR }` (a watched set)
#   list  ADDR appended to a watched list file
#   f2b   `fail2ban-client set flowcut-lab banip ADDR` (a real fail2ban whose
#         nftables action writes a watched set)
t_cut() { # family on|off [client|server|conn] [hand|set|list|f2b]
	local dst=198.18.1.2 src=198.18.0.2 fam=$1 hw=$2 who=${3:-server} via=${4:-hand} far out a0 a1 b0 b1 d0 d1 host drop counted set trig=hand
	[ "$fam" = 6 ] && dst=2001:2:0:1::2 src=2001:2::2
	far=$dst
	[ "$who" = client ] && far=$src
	[ "$who" = conn ] && trig=conn via=conn
	[ "$via" = set ] || [ "$via" = f2b ] && trig=set
	[ "$via" = list ] && trig=list
	if [ "$hw" = off ]; then
		"$ctl" --settings "$run/settings.conf" settings set cut_in_hardware off >/dev/null || return 1
		wait_for 50 grep -q "cut in hardware off" "$run/flowcutd.log" || { say "setting not applied"; return 1; }
	fi
	if [ "$via" = list ]; then
		printf '# the lab'"'"'s block list\n198.19.255.1\n' >"$run/block.txt"
		"$ctl" --settings "$run/settings.conf" settings set watched_list "$run/block.txt" >/dev/null || return 1
		wait_for 50 grep -q "list $run/block.txt: 1 ranges read" "$run/flowcutd.log" ||
			{ say "the list was not read"; return 1; }
	fi
	if [ "$via" = f2b ]; then
		command -v fail2ban-client >/dev/null || { say "fail2ban-client is not installed (make deps)"; return 1; }
		"$ctl" --settings "$run/settings.conf" settings set watched_set inet filter f2b-flowcut >/dev/null || return 1
		wait_for 50 grep -q "watched set inet filter f2b-flowcut: not watched: no such table or set" "$run/flowcutd.log" ||
			{ say "flowcutd did not say the set is missing"; return 1; }
		f2b_start || { say "fail2ban did not start"; cat "$run/f2b/fail2ban.log"; return 1; }
		wait_for 50 grep -q "watched set inet filter f2b-flowcut: followed" "$run/flowcutd.log" ||
			{ say "flowcutd does not follow fail2ban's set"; f2b_stop; return 1; }
		say "$(grep 'watched set inet filter f2b-flowcut' "$run/flowcutd.log" | tail -1)"
	fi
	udp_stream "$dst" 400M 18
	if [ "$hw" = on ]; then
		wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	else
		wait_for 60 bash -c "$(declare -f ex conns); L=$L lab=$lab ctl=$ctl; conns | grep -q ' FWD  [46] udp '" ||
			{ say "never offloaded"; conns; return 1; }
	fi
	sleep 0.5
	case "$who/$via" in
	conn/*)
		far=$(conns | awk '/^[0-9]/ { id = $1 } / udp / && id != "" { print id; exit }')
		[ -n "$far" ] || { say "no UDP connection in the table"; conns; return 1; }
		ctl_as_nobody daemon >/dev/null 2>&1 &&
			{ say "nobody read flowcutd's state with no control_read_group"; return 1; }
		"$ctl" --settings "$run/settings.conf" settings set control_read_group nogroup >/dev/null ||
			return 1
		wait_for 50 bash -c "[ \"\$(stat -c %G '$run-ctl/flowcutd.sock')\" = nogroup ]" ||
			{ say "the socket not given to nogroup"; ls -l "$run-ctl/flowcutd.sock"; return 1; }
		out=$(ctl_as_nobody daemon) || { say "nobody, in nogroup, cannot read flowcutd's state"; return 1; }
		grep -q '^programmed   yes' <<<"$out" || { say "flowcutctl daemon: $out"; return 1; }
		out=$(ctl_as_nobody cut --conn "$far" 2>&1) && { say "nobody cut a connection"; return 1; }
		say "nobody: $out"
		grep -q 'refused: uid 65534 is not root' <<<"$out" || return 1
		out=$(ex host "$ctl" --control "$run-ctl/flowcutd.sock" cut --conn "$far") ||
			{ say "flowcutctl cut --conn failed"; return 1; }
		say "flowcutctl: $out"
		out=$(ctl_as_nobody --json daemon) || return 1
		say "flowcutctl daemon (as nobody): $(tr -d ' \n' <<<"$out")"
		grep -q '"cuts_in_hardware": [1-9]' <<<"$out" ||
			{ say "the cut not in flowcutd's status"; return 1; } ;;
	*/hand) ex host "$ctl" cut "$far" --for 60 >/dev/null || { say "flowcutctl cut failed"; return 1; } ;;
	*/set)
		set=blocked4; [ "$fam" = 6 ] && set=blocked6
		ex host nft add element inet filter "$set" "{ $far }" || { say "nft add element failed"; return 1; } ;;
	*/list) echo "$far" >>"$run/block.txt" ;;
	*/f2b) f2b set flowcut-lab banip "$far" >/dev/null || { say "fail2ban-client banip failed"; f2b_stop; return 1; } ;;
	esac
	sleep 1
	a0=$(rx fp0) b0=$(rx fp1) d0=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	sleep 10
	a1=$(rx fp0) b1=$(rx fp1) d1=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	host=$(( a1 - a0 + b1 - b0 )) drop=$(( d1 - d0 ))
	kill "$stream" 2>/dev/null; stream_end
	say "UDP/IPv$fam 400 Mbit/s, cut of the $who ($far) by $via, Cut in hardware $hw:" \
	    "the host took in $host frames in the 10 s from 1 s after the cut," \
	    "the coprocessor dropped $drop (DROP_IPS_VERDICT)"
	grep 'cut (' "$run/flowcutd.log" | while read -r line; do say "  $line"; done
	grep -q "cut ($trig) udp .* $( [ "$hw" = on ] && echo 'in hardware' || echo 'on the host')" "$run/flowcutd.log" ||
		{ say "no cut ($trig) logged"; [ "$via" = f2b ] && f2b_stop; return 1; }
	case "$via" in
	hand)
		# the element is in the cut set with its timeout, and uncut takes it out
		set=cut4; [ "$fam" = 6 ] && set=cut6
		ex host nft list set inet flowcut "$set" | grep -q "$far timeout 1m" ||
			{ say "$far not in $set with a timeout"; ex host nft list set inet flowcut "$set"; return 1; }
		ex host "$ctl" uncut "$far" >/dev/null || { say "flowcutctl uncut failed"; return 1; }
		! ex host nft list set inet flowcut "$set" | grep -q "$far" ||
			{ say "$far still in $set after uncut"; return 1; } ;;
	list)
		ex host nft list set inet flowcut list4 | grep -q "$far" ||
			{ say "$far not in inet flowcut list4"; return 1; }
		say "$(grep "list $run/block.txt: 2 ranges read" "$run/flowcutd.log")"
		say "$(grep "lists: the list sets hold 2 ranges" "$run/flowcutd.log")" ;;
	f2b)
		say "$(grep 'Ban ' "$run/f2b/fail2ban.log" | tail -1)"
		f2b_stop ;;
	esac
	# flowcutd's stats count it by trigger, where it was cut
	sleep 1.2	# written once a second
	counted=$(python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["cuts"][sys.argv[2]]
print(c["in_hardware"], c["on_host"])' "$run/flowcutd.json" "$trig") ||
		{ say "no cuts in flowcutd's stats"; return 1; }
	say "flowcutd's stats: cuts ($trig) in hardware, on the host: $counted"
	if [ "$hw" = on ]; then
		[ "${counted%% *}" -ge 1 ] || { say "the cut not counted in hardware"; return 1; }
		[ "$host" -le 10 ] && [ "$drop" -ge 10000 ]
	else
		[ "${counted##* }" -ge 1 ] || { say "the cut not counted on the host"; return 1; }
		[ "$host" -ge 10000 ] && [ "$drop" -eq 0 ]
	fi
}

# a UDP connection in the fast path that forwards (its verdict not DROP)
udp_forwarding() {
	conns | awk '/^[0-9]/ { v = $2 } / udp / && v != "DROP" { f = 1 } END { exit !f }'
}

# An uncut releases what it cut: a UDP flow that never stops sending, both
# ways, as a WireGuard peer's or a call's (tests/lab/real.py: one socket
# sending a datagram every millisecond for 25 s, the server echoing each),
# its server cut in hardware through VIA - set: added to the lab ruleset's
# watched set, then `nft delete element`; hand: `flowcutctl cut`, then
# `flowcutctl uncut`.  While cut the server takes in nothing; within 1 s
# of the removal its datagrams reach the server again (the connection
# taken out of the fast path, judged by the host's rules as a new one),
# and it is offloaded again, forwarding.
t_uncut() { # family set|hand
	local dst=198.18.1.2 fam=$1 rc
	[ "$fam" = 6 ] && dst=2001:2:0:1::2
	ex server python3 "$top/tests/lab/real.py" udp-echo "$dst" 7001 "$run/echo.pid" >/dev/null 2>&1 &
	sleep 0.3
	ex client timeout 30 python3 "$top/tests/lab/real.py" udp-many "$dst" 7001 1 25 0.001 \
		>"$run/flow.out" 2>&1 &
	stream=$!
	uncut_run "$dst" "$@"
	rc=$?
	kill "$(cat "$run/echo.pid")" "$stream" 2>/dev/null; stream_end
	return $rc
}
uncut_run() { # server family set|hand
	local dst=$1 fam=$2 via=$3 set=blocked4 trig=set s0 s1 t0 ms
	[ "$fam" = 6 ] && set=blocked6
	[ "$via" = hand ] && trig=hand
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	case "$via" in
	set) ex host nft add element inet filter "$set" "{ $dst }" || { say "nft add element failed"; return 1; } ;;
	hand) ex host "$ctl" cut "$dst" >/dev/null || { say "flowcutctl cut failed"; return 1; } ;;
	esac
	wait_for 30 grep -q "cut ($trig) udp .* in hardware" "$run/flowcutd.log" || { say "no cut ($trig) logged"; return 1; }
	sleep 1
	s0=$(srv_rx); sleep 1; s1=$(srv_rx)
	[ $(( s1 - s0 )) -le 5 ] || { say "the server took in $(( s1 - s0 )) frames in 1 s while cut"; return 1; }
	conns | grep -q DROP || { say "no connection dropping in the fast path"; conns; return 1; }
	s0=$(srv_rx) t0=$(date +%s%N)
	case "$via" in
	set) ex host nft delete element inet filter "$set" "{ $dst }" || { say "nft delete element failed"; return 1; } ;;
	hand) ex host "$ctl" uncut "$dst" >/dev/null || { say "flowcutctl uncut failed"; return 1; } ;;
	esac
	while [ $(( $(srv_rx) - s0 )) -lt 100 ]; do
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ "$ms" -le 1000 ] || { say "the server took in $(( $(srv_rx) - s0 )) frames in the 1 s after the uncut"; conns; return 1; }
		sleep 0.02
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	say "UDP/IPv$fam flow cut by $via: 100 datagrams reached the server again $ms ms after the uncut"
	grep 'release' "$run/flowcutd.log" | while read -r line; do say "  $line"; done
	wait_for 50 udp_forwarding || { say "not offloaded again after the release"; conns; return 1; }
	say "offloaded again: $(conns | awk '/^[0-9]/ { l = $0 } / udp / { print l; exit }')"
}

# An uncut by time: a ban that runs out releases what it cut.  A table as a
# CrowdSec bouncer makes one (`ip crowdsec`, set crowdsec-blacklists with
# `flags timeout`, dropped in the forward hook; `ip6 crowdsec6` for IPv6),
# watched by flowcutd; the UDP flow of t_uncut, its server banned with
# `timeout 3s`.  The kernel says nothing when the element goes: within 1 s
# of its end the server takes the flow's datagrams in again (released,
# judged by the host's rules as a new connection), not before, and it is
# offloaded again, forwarding.
t_uncut_expiry() { # family
	local dst=198.18.1.2 fam=$1 tbl="ip crowdsec" set=crowdsec-blacklists key="ip saddr" rc
	[ "$fam" = 6 ] && dst=2001:2:0:1::2 tbl="ip6 crowdsec6" set=crowdsec6-blacklists key="ip6 saddr"
	# shellcheck disable=SC2086
	ex host nft "add table $tbl; add set $tbl $set { type ipv${fam}_addr; flags timeout; }; " \
		"add chain $tbl forward { type filter hook forward priority -10; policy accept; }; " \
		"add rule $tbl forward $key @$set drop; add rule $tbl forward ${key/saddr/daddr} @$set drop" ||
		{ say "the bouncer's table not made"; return 1; }
	# shellcheck disable=SC2086
	"$ctl" --settings "$run/settings.conf" settings set watched_set $tbl "$set" >/dev/null || return 1
	wait_for 50 grep -q "watched set $tbl $set: followed" "$run/flowcutd.log" ||
		{ say "flowcutd does not follow $tbl $set"; return 1; }
	ex server python3 "$top/tests/lab/real.py" udp-echo "$dst" 7001 "$run/echo.pid" >/dev/null 2>&1 &
	sleep 0.3
	ex client timeout 30 python3 "$top/tests/lab/real.py" udp-many "$dst" 7001 1 25 0.001 \
		>"$run/flow.out" 2>&1 &
	stream=$!
	uncut_expiry_run "$dst" "$fam" "$tbl" "$set"
	rc=$?
	kill "$(cat "$run/echo.pid")" "$stream" 2>/dev/null; stream_end
	return $rc
}
uncut_expiry_run() { # server family table set
	local dst=$1 fam=$2 tbl=$3 set=$4 s0 s1 t0 ms
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	ex host nft add element $tbl "$set" "{ $dst timeout 3s }" || { say "nft add element failed"; return 1; }
	wait_for 30 grep -q "cut (set) udp .* in hardware" "$run/flowcutd.log" || { say "no cut (set) logged"; return 1; }
	sleep 1
	s0=$(srv_rx); sleep 1; s1=$(srv_rx)
	[ $(( s1 - s0 )) -le 5 ] || { say "the server took in $(( s1 - s0 )) frames in 1 s while cut"; return 1; }
	conns | grep -q DROP || { say "no connection dropping in the fast path"; conns; return 1; }
	while [ $(( $(srv_rx) - s1 )) -lt 100 ]; do
		ms=$(( ($(date +%s%N) - t0) / 1000000 ))
		[ "$ms" -le 4000 ] || { say "the server took in $(( $(srv_rx) - s1 )) frames in the 1 s after the ban ran out"; conns; return 1; }
		sleep 0.02
	done
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	say "UDP/IPv$fam flow, its server banned for 3 s in $tbl $set: 100 datagrams reached the server again $ms ms after the ban"
	grep 'release' "$run/flowcutd.log" | while read -r line; do say "  $line"; done
	[ "$ms" -ge 3000 ] || { say "released before the ban ran out"; return 1; }
	wait_for 50 udp_forwarding || { say "not offloaded again after the release"; conns; return 1; }
	say "offloaded again: $(conns | awk '/^[0-9]/ { l = $0 } / udp / { print l; exit }')"
}

# A TCP stream (iperf3) in hardware, its server added to the watched set:
# the sender's retransmissions, FIN and RST stay on the coprocessor (dropped
# there, none given back to the host), and the host takes in at most 10
# frames in the ten seconds from one second after the cut.
t_cut_tcp() { # family
	local dst=198.18.1.2 set=blocked4 fam=$1 h0 h1 d0 d1 g0 g1 host drop
	[ "$fam" = 6 ] && dst=2001:2:0:1::2 set=blocked6
	ex server iperf3 -s -D -1 -p 5203 >/dev/null 2>&1
	sleep 0.3
	ex client timeout 30 iperf3 -c "$dst" -p 5203 -t 18 >"$run/tcp.out" 2>&1 &
	stream=$!
	wait_for 60 stream_offloaded tcp || { say "never offloaded"; conns; return 1; }
	sleep 0.5
	ex host nft add element inet filter "$set" "{ $dst }" || { say "nft add element failed"; return 1; }
	sleep 1
	h0=$(( $(rx fp0) + $(rx fp1) )) d0=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	g0=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST)
	sleep 10
	h1=$(( $(rx fp0) + $(rx fp1) )) d1=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	g1=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST)
	host=$(( h1 - h0 )) drop=$(( d1 - d0 ))
	kill "$stream" 2>/dev/null; stream_end
	ex host nft delete element inet filter "$set" "{ $dst }" >/dev/null 2>&1
	say "TCP/IPv$fam, its server added to the watched set: the host took in $host frames in" \
	    "the 10 s from 1 s after the cut; the coprocessor dropped $drop" \
	    "(DROP_IPS_VERDICT: the sender's retransmissions), gave back $(( g1 - g0 )) (TCP_FIN_SYN_RST)"
	say "$(grep 'cut (set) tcp' "$run/flowcutd.log" | head -1)"
	grep -q "cut (set) tcp .* in hardware" "$run/flowcutd.log" || { say "no cut (set) tcp in hardware logged"; return 1; }
	[ "$host" -le 10 ] && [ "$drop" -ge 1 ] && [ $(( g1 - g0 )) -eq 0 ]
}

# A spoofed RST into a live offloaded TCP stream (tests/lab/tcp_spoof.py:
# 1,000 bytes every 10 ms from client port 40204), sent from the client's
# namespace on a raw socket with the stream's 5-tuple.  far: its sequence
# number 2^30 past the stream's, outside any window: the fast path hands
# it to the host alone (TCP_FIN_SYN_RST_OUT_OF_WINDOW 1, TCP_FIN_SYN_RST
# unchanged) and the connection stays offloaded, the same one, forwarding
# the stream on; the server reads every byte sent, and the stream's own
# FIN (in the window) gives the connection back at the end.  near: one
# byte behind a segment just sent, inside the fast path's window (which
# cannot tell it from a real reset): the connection is given back
# (TCP_FIN_SYN_RST 1), the server ignores it (RFC 5961) and reads every
# byte through the host.
t_spoof_rst() { # family far|near
	local dst=198.18.1.2 fam=$1 how=$2 py=$top/tests/lab/tcp_spoof.py srv id0 id1 w0 w1 w2 g0 g1 g2 c0 c1 out sent got
	[ "$fam" = 6 ] && dst=2001:2:0:1::2
	ex server timeout 30 python3 "$py" serve 5204 "$run/spoof.got" >"$run/spoof.srv" 2>&1 &
	srv=$!
	sleep 0.3
	ex client timeout 30 python3 "$py" send "$dst" 5204 40204 8 >"$run/spoof.sent" 2>&1 &
	stream=$!
	wait_for 60 stream_offloaded tcp || { say "never offloaded"; conns; return 1; }
	sleep 0.5
	# the stream's connection: its id, on the line before its tuples
	conn_id() { conns | awk '/^[0-9]/ { id = $1 } /40204/ && id != "" { print id; exit }'; }
	id0=$(conn_id)
	[ -n "$id0" ] || { say "the stream's connection not in the table"; conns; return 1; }
	w0=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW) g0=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST)
	out=$(ex client python3 "$py" rst c0 "$dst" 5204 40204 "$how") || { say "no RST sent: $out"; return 1; }
	say "$out"
	sleep 0.5
	w1=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW) g1=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST)
	id1=$(conn_id)
	c0=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	sleep 1
	c1=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	wait "$stream" 2>/dev/null || { say "the client failed: $(cat "$run/spoof.sent")"; return 1; }
	wait "$srv" 2>/dev/null || { say "the server failed: $(cat "$run/spoof.srv")"; return 1; }
	sent=$(sed -n 's/^sent //p' "$run/spoof.sent") got=$(cat "$run/spoof.got")
	sleep 0.2	# the counters window: every 50 ms
	w2=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST_OUT_OF_WINDOW) g2=$(counter FROM_WIRE_TO_KN_TCP_FIN_SYN_RST)
	say "TCP/IPv$fam, an RST $how: OUT_OF_WINDOW +$(( w1 - w0 )), FIN_SYN_RST +$(( g1 - g0 )), "\
	    "connection $id0 before, '${id1:-none}' after, forwarded $(( c1 - c0 )) frames in the next" \
	    "second; the client sent $sent bytes, the server read $got; at the stream's close" \
	    "OUT_OF_WINDOW +$(( w2 - w1 )), FIN_SYN_RST +$(( g2 - g1 ))"
	if [ -z "$sent" ] || [ "$got" != "$sent" ]; then say "the server did not read every byte"; return 1; fi
	if [ "$how" = far ]; then
		# and the stream's own FIN, in the window, gave it back
		[ $(( w1 - w0 )) -eq 1 ] && [ "$g1" = "$g0" ] && [ "$id1" = "$id0" ] && [ $(( c1 - c0 )) -ge 50 ] &&
			[ "$w2" = "$w1" ] && [ $(( g2 - g1 )) -ge 1 ]
	else
		[ "$w1" = "$w0" ] && [ $(( g1 - g0 )) -eq 1 ]
	fi
}

# A watched list of 1,000,000 lines: 999,000 IPv6 addresses (every other
# one, so none merge) and 1,000 IPv4 prefixes with Spamhaus-style
# comments, 3 bad lines among them.  flowcutd loads it into its list sets
# (list6 and listnet4) and says each bad line by its number; printed: its
# time to read the file and to apply it into the sets, beside `nft -f` of
# the same elements into a table of the test's own (the peer).  Then one
# line appended - the server's address - under a UDP flood: the change is
# applied as a difference of one element and the flood is cut in hardware.
t_list_million() {
	local f=$run/million.txt t0 t1 p0 read_s apply_s peer a0 b0 d0 a1 b1 d1
	python3 - "$f" <<-'EOF' || return 1
	import sys
	with open(sys.argv[1], "w") as f:
	    f.write("# 1,000,000 entries: flowcut's lab\n")
	    for i in range(999000):
	        if i == 250000:
	            f.write("2001:2:0:ff::zz\n")
	        if i == 500000:
	            f.write("198.19.0.0/33\n")
	        v = 2 * i + 2
	        f.write("2001:2:0:ff::%x:%x\n" % (v >> 16, v & 0xffff))
	    for i in range(1000):
	        if i == 500:
	            f.write("198.19.250.9-198.19.250.1\n")
	        f.write("198.19.%d.%d/30 ; SBL%d\n" % (192 + i * 8 // 256, i * 8 % 256, i))
	EOF
	say "$(wc -l <"$f") lines, $(du -m "$f" | cut -f1) MB"
	t0=$(date +%s.%N)
	"$ctl" --settings "$run/settings.conf" settings set watched_list "$f" >/dev/null || return 1
	wait_for 1200 grep -q "lists: the list sets hold 1000000 ranges" "$run/flowcutd.log" ||
		{ say "not applied within 120 s"; tail -5 "$run/flowcutd.log"; return 1; }
	t1=$(date +%s.%N)
	grep -q "list $f: 1000000 ranges read in .* 3 bad lines" "$run/flowcutd.log" ||
		{ say "not 1,000,000 ranges and 3 bad lines"; grep "list $f" "$run/flowcutd.log"; return 1; }
	for n in "250002: not an address" "500003: the prefix length is not 0 to 32" \
		 "999504: a range whose first address is above its last"; do
		grep -q "list $f line $n" "$run/flowcutd.log" || { say "bad line $n not said"; return 1; }
	done
	grep -q "list sets hold 1000000 ranges (1000000 added, 0 removed" "$run/flowcutd.log" ||
		{ say "the sets do not hold 1,000,000 ranges"; grep "list sets hold" "$run/flowcutd.log"; return 1; }
	[ "$(ex host nft list set inet flowcut listnet4 | grep -o '198\.19\.[0-9]*\.[0-9]*/30' | wc -l)" = 1000 ] ||
		{ say "listnet4 does not hold the 1,000 prefixes"; return 1; }
	read_s=$(sed -n "s|.*list $f: 1000000 ranges read in \([0-9.]*\) s.*|\1|p" "$run/flowcutd.log")
	apply_s=$(sed -n "s|.*list sets hold 1000000 ranges .* after \([0-9.]*\) s, \([0-9]*\) trans.*|\1 s (\2 transactions)|p" "$run/flowcutd.log")
	# the peer: the same elements through nft -f, into a table of the test's own
	python3 - "$f" "$run/million.nft" <<-'EOF' || return 1
	import sys
	a, p = [], []
	for line in open(sys.argv[1]):
	    e = line.split(";")[0].split("#")[0].strip()
	    if not e or "zz" in e or "/33" in e or e.startswith("198.19.250.9-"):
	        continue
	    (p if "/" in e else a).append(e)
	with open(sys.argv[2], "w") as f:
	    f.write("add table inet peer\n")
	    f.write("add set inet peer a6 { type ipv6_addr; }\n")
	    f.write("add set inet peer n4 { type ipv4_addr; flags interval; }\n")
	    f.write("add element inet peer a6 { %s }\n" % ", ".join(a))
	    f.write("add element inet peer n4 { %s }\n" % ", ".join(p))
	EOF
	p0=$(date +%s.%N)
	ex host nft -f "$run/million.nft" || { say "nft -f of the peer failed"; return 1; }
	peer=$(echo "$(date +%s.%N) - $p0" | bc | cut -c1-5)
	ex host nft delete table inet peer
	say "1,000,000 lines: flowcutd read them in $read_s s and put them into its sets in $apply_s" \
	    "($(echo "$t1 - $t0" | bc | cut -c1-5) s from the settings' save to the sets' line in its log);" \
	    "nft -f of the same elements into a table of its own: $peer s"
	# one line appended under a flood: a difference of one element, and the cut
	udp_stream 198.18.1.2 100M 25
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	t0=$(date +%s.%N)
	echo "198.18.1.2 ; the lab's server" >>"$f"
	wait_for 300 grep -q "cut (list) udp" "$run/flowcutd.log" || { say "no cut within 30 s"; return 1; }
	t1=$(date +%s.%N)
	grep -q "list sets hold 1000001 ranges (1 added, 0 removed) after" "$run/flowcutd.log" ||
		{ say "not applied as a difference of one"; grep "list sets hold" "$run/flowcutd.log"; return 1; }
	say "one line appended to the 1,000,000: $(grep "list sets hold 1000001" "$run/flowcutd.log" | sed 's/.*after/applied after/')" \
	    "(read again: $(grep "list $f: 1000001 ranges read" "$run/flowcutd.log" | sed 's/.*read in/in/; s/,.*//'));" \
	    "its cut logged $(echo "$t1 - $t0" | bc | cut -c1-5) s after the write"
	sleep 1
	a0=$(rx fp0) b0=$(rx fp1) d0=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	sleep 5
	a1=$(rx fp0) b1=$(rx fp1) d1=$(counter FROM_WIRE_DROP_IPS_VERDICT)
	kill "$stream" 2>/dev/null; stream_end
	say "then in 5 s the host took in $((a1 - a0 + b1 - b0)) frames, the coprocessor dropped $((d1 - d0))"
	[ $((a1 - a0 + b1 - b0)) -le 10 ] && [ $((d1 - d0)) -ge 1000 ]
}

# A watched set that is not an address set, or is not there, is said by
# name and not watched; flowcutd runs on.
t_watched_set_refused() {
	ex host nft add set inet filter ports '{ type inet_service; }' || return 1
	"$ctl" --settings "$run/settings.conf" settings set watched_set inet filter ports >/dev/null || return 1
	"$ctl" --settings "$run/settings.conf" settings set watched_set ip nosuch blocked >/dev/null || return 1
	wait_for 50 grep -q "watched set inet filter ports: not watched: its type is not ipv4_addr or ipv6_addr" "$run/flowcutd.log" ||
		{ say "the set of ports not refused by name"; tail -5 "$run/flowcutd.log"; return 1; }
	wait_for 50 grep -q "watched set ip nosuch blocked: not watched: no such table or set" "$run/flowcutd.log" ||
		{ say "the missing set not said"; return 1; }
	grep "not watched" "$run/flowcutd.log" | while read -r line; do say "$line"; done
	grep -q "watched set inet filter blocked4: followed (ipv4_addr, interval)" "$run/flowcutd.log" &&
		"$lab" alive "$L" "$(cat "$run/flowcutd.pid")"
}

# A stream, offloaded: after the first frames the host's counters stop
# climbing while the stream goes on, and the coprocessor carries the rest.
t_stream() { # proto family
	local dst=198.18.1.2 fam=$2 a b c d flag=""
	[ "$fam" = 6 ] && dst=2001:2:0:1::2
	[ "$1" = udp ] && flag="-u -b 200M -l 1000"
	ex server iperf3 -s -D -1 >/dev/null 2>&1
	sleep 0.3
	# shellcheck disable=SC2086
	ex client timeout 15 iperf3 -c "$dst" -t 8 $flag >"$run/stream.out" 2>&1 &
	stream=$!
	# UDP is assured (seen both ways) once it has lasted 2 s: conntrack's rule
	wait_for 50 stream_offloaded "$1" || { say "never offloaded"; conns; return 1; }
	sleep 0.2
	a=$(rx fp0) c=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	sleep 2
	b=$(rx fp0) d=$(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU)
	stream_end
	say "$1/IPv$fam: host took in $((b - a)) frames on fp0 in 2 s of the stream," \
	    "the coprocessor forwarded $((d - c))"
	say "$(grep -E 'sender|receiver' "$run/stream.out" | tail -1)"
	conns | grep -q " IPS " || { say "not action IPS"; return 1; }
	[ $((b - a)) -le 20 ] && [ $((d - c)) -ge 1000 ]
}

# A unit's capabilities (CapabilityBoundingSet= of deploy/UNIT), as names:
# "cap_net_admin,cap_net_raw" (sorted, capsh's spelling)
unit_caps() { # unit [drop-in]
	cat "$top/deploy/$1" ${2:+"$top/deploy/$2"} | sed -n 's/^CapabilityBoundingSet=//p' |
		tr ' ' '\n' | tr 'A-Z' 'a-z' | sed '/^$/d' | sort -u | paste -sd,
}
# the capabilities a process may have, and whether it may gain any by exec
proc_caps() { # pid
	local bnd
	bnd=$(sed -n 's/^CapBnd:\t//p' "/proc/$1/status")
	echo "$(capsh --decode="$bnd" | sed 's/^[^=]*=//' | tr ',' '\n' | sort | paste -sd,)" \
		"nnp=$(sed -n 's/^NoNewPrivs:\t//p' "/proc/$1/status")"
}

# Both programs started again with only their systemd units' capabilities
# (deploy/*.service's CapabilityBoundingSet, no new privileges: setpriv,
# as systemd would; this machine has no systemd to start the units): the
# streams are offloaded both families and a cut drops a flood on the
# coprocessor.  The units' other restrictions need systemd
# (tests/deploy/test_units.sh checks them as systemd reads them).
t_units_caps() {
	local npu fd want got
	# AF_XDP ports need the drop-in deploy/af_xdp.conf's too
	npu=$(unit_caps flowcut-npu.service "$([ "$(cat "$run/wire")" = af_xdp ] && echo af_xdp.conf)")
	fd=$(unit_caps flowcutd.service)
	[ -n "$npu" ] && [ -n "$fd" ] || { say "a unit names no CapabilityBoundingSet"; return 1; }
	"$lab" stop "$L"
	# setpriv's spelling: -all,+net_admin,+net_raw
	export FLOWCUT_NPU_WRAP="setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all$(sed 's/cap_/+/g; s/^/,/' <<<"$npu") --"
	export FLOWCUTD_WRAP="setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all --bounding-set=-all$(sed 's/cap_/+/g; s/^/,/' <<<"$fd") --"
	"$lab" start "$L" >/dev/null || { say "the lab did not start under the units' capabilities"; return 1; }
	for p in npu:"$npu" flowcutd:"$fd"; do
		want="${p#*:} nnp=1" got=$(proc_caps "$(cat "$run/${p%%:*}.pid")")
		[ "$got" = "$want" ] || { say "${p%%:*}: $got, not $want"; return 1; }
		say "${p%%:*}: $got"
	done
	t_stream tcp 4 && t_stream udp 6 && t_cut 6 on client
}

# conntrack -D on a live offloaded stream: the next frames reach the host.
# The delay is read from conntrack's own event timestamps: the state's
# DESTROY, then the NEW that the next frame reaching the host makes.
t_conntrack_delete() {
	local before ev d
	udp_stream 198.18.1.2 20M 8
	wait_for 50 stream_offloaded udp || { say "never offloaded"; return 1; }
	ex host conntrack -E -o timestamp -p udp --dport 5202 >"$run/ct-events" 2>/dev/null &
	ev=$!
	sleep 0.3
	before=$(rx fp0)
	ex host conntrack -D -p udp --dport 5202 >/dev/null 2>&1
	wait_for 50 bash -c "[ \$($lab exec $L host cat /sys/class/net/fp0/statistics/rx_packets) -gt $((before + 10)) ]" ||
		{ say "the host saw nothing after the delete"; kill $ev; return 1; }
	sleep 0.2
	kill "$ev" 2>/dev/null
	d=$(awk -F'[][]' '/DESTROY/ && !t0 { t0 = $2 } /NEW/ && t0 && !t1 { t1 = $2 }
		END { if (t0 && t1) printf "%.2f", (t1 - t0) * 1000 }' "$run/ct-events")
	say "the stream's frames at the host again ${d:-?} ms after its state was deleted" \
	    "(conntrack's DESTROY to the NEW the next frame made)"
	wait_for 10 no_udp_conn || { say "the connection outlived its state"; conns; return 1; }
	[ -n "$d" ] || { say "no DESTROY and NEW events seen"; return 1; }
	stream_end
}

# A UDP stream offloaded, then a ruleset reload that blocks the server:
# the stream must stop (5 frames at most reach the server in 2 s), and
# flowcutd, reading the watched set blocked4 whole after the change, cuts
# it in hardware.
reload_blocks_stream() {
	local a b
	udp_stream 198.18.1.2 20M 10
	wait_for 50 stream_offloaded udp || { say "never offloaded"; return 1; }
	{ cat "$top/lab/ruleset.nft"; echo "add element inet filter blocked4 { 198.18.1.2 }"; } >"$run/blocked.nft"
	ex host nft -f "$run/blocked.nft"
	sleep 0.5
	a=$(srv_rx)
	sleep 2
	b=$(srv_rx)
	say "after the reload the server took in $((b - a)) frames in 2 s"
	stream_end
	# blocked4 is watched: read whole after the ruleset change, its member cut
	grep -q "cut (set) udp .*198.18.1.2:5202 .* in hardware" "$run/flowcutd.log" ||
		{ say "the reload's blocked4 element not cut"; return 1; }
	say "$(grep "watched sets hold" "$run/flowcutd.log" | tail -1)"
	[ $((b - a)) -le 5 ]
}


# A ruleset reload that newly forbids a live stream stops it.
t_ruleset_reload() {
	reload_blocks_stream
}

# The same after flowcutd was restarted (it must not reuse a revision the
# coprocessor already had).
t_ruleset_reload_after_restart() {
	ex host nft -f "$top/lab/ruleset.nft"	# a change: the revision climbs
	sleep 0.3
	kill_and_wait "$run/flowcutd.pid" || return 1
	"$lab" start-flowcutd "$L"
	reprogrammed || return 1
	reload_blocks_stream
}

# The coprocessor killed and restarted mid-stream: on through the host, then
# offloaded again, with the settings applied again.
t_npu_restart() {
	udp_stream 198.18.1.2 20M 14
	wait_for 50 stream_offloaded udp || { say "never offloaded"; return 1; }
	kill_and_wait "$run/npu.pid" || return 1
	"$lab" start-npu "$L"
	reprogrammed || { say "flowcutd did not program the new coprocessor"; return 1; }
	[ "$(cfg)" = 7 ] || { say "fw_cfg $(cfg) after the restart, not 0x007"; return 1; }
	say "$(grep programmed "$run/flowcutd.log" | tail -1)"
	# the stream's state lives on: it is offloaded again once it passes the rules
	wait_for 80 stream_offloaded udp || { say "not offloaded again"; conns; return 1; }
	say "offloaded again on the new coprocessor: $(counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU) frames forwarded"
	stream_end
}

# flowcutd killed and restarted: nothing in the fast path outlives its state.
t_flowcutd_restart() {
	udp_stream 198.18.1.2 5M 8
	wait_for 50 stream_offloaded udp || { say "never offloaded"; return 1; }
	kill_and_wait "$run/flowcutd.pid" || return 1
	ex host conntrack -F >/dev/null 2>&1	# the states go while nobody follows them
	"$lab" start-flowcutd "$L"
	reprogrammed || return 1
	# the old connection is gone at once (its state was flushed)
	local n
	n=$(njson)
	[ "$n" = 0 ] || { say "$n connections outlived their state"; conns; return 1; }
	stream_end
}

# ---- the host's lease: flowcutd stopped, or stopped cleanly ----

lease_state() { "$ctl" --link "/run/flowcut-lab/$L/link" --json status | sed -n 's/.*"state": "\([a-z]*\)".*/\1/p'; }

# flowcutd stopped (SIGSTOP) under two live streams (UDP to 5202, TCP to
# 5203), then a rule that forbids the UDP one added while it is stopped:
# once the lease is over (3 s) the coprocessor fails closed on its own and
# no frame of the forbidden stream reaches the server; SIGCONT: the allowed
# one is back in the fast path within 1 s of its sender's first frame, the
# forbidden one stays stopped (the host's rule drops it).  The allowed one
# is TCP: its ACKs make the host resolve the client again (its neighbour
# entry failed while nothing was relayed), as any two-way connection does.
# Its sender has been retransmitting into the outage with its timer backed
# off (rto 0.4 to 1.6 s by then), so its first frame after SIGCONT comes
# when that timer fires, anywhere up to an rto later: that wait is the
# client kernel's, not flowcut's, and is printed, not bounded.  tcpdump in
# the client's namespace stamps the frame.
t_lease_stop() { # family
	local dst=198.18.1.2 fam=$1 pid a0 a1 b0 b1 t0 tf t1 p s1 s2
	[ "$fam" = 6 ] && dst=2001:2:0:1::2
	port_counters || return 1
	for p in 5202 5203; do ex server iperf3 -s -D -1 -p $p >/dev/null 2>&1; done
	sleep 0.3
	ex client timeout 30 iperf3 -u -c "$dst" -p 5202 -b 5M -t 22 -l 500 >"$run/udp.out" 2>&1 &
	ex client timeout 30 iperf3 -c "$dst" -p 5203 -b 5M -t 22 >"$run/tcp.out" 2>&1 &
	wait_for 80 forwarding "$fam udp" 5202 && wait_for 80 forwarding "$fam" 5203 ||
		{ say "the streams were never offloaded"; conns; return 1; }
	[ "$(lease_state)" = held ] || { say "lease $(lease_state), not held"; return 1; }
	pid=$(cat "$run/flowcutd.pid")
	kill -STOP "$pid"
	ex host nft insert rule inet filter forward udp dport 5202 drop
	sleep 3.2	# the lease, and a turn of the coprocessor's loop
	s1=$(lease_state)
	a0=$(port_rx 5202) b0=$(port_rx 5203)
	sleep 2
	a1=$(port_rx 5202) b1=$(port_rx 5203)
	say "IPv$fam, flowcutd stopped: lease $s1; in the 2 s after it the server took in" \
	    "$((a1 - a0)) frames of the forbidden stream, $((b1 - b0)) of the allowed one" \
	    "(flowcutd relays the host path: nothing reaches it either)"
	# the sender's first data segment from now on (longer than any bare ACK)
	ex client timeout 10 tcpdump --immediate-mode -l -U -nn -tt -c 1 -i c0 \
	    "tcp dst port 5203 and greater 200" >"$run/first.txt" 2>"$run/first.err" &
	wait_for 50 grep -q listening "$run/first.err" || { say "tcpdump did not start: $(cat "$run/first.err")"; return 1; }
	kill -CONT "$pid"
	t0=$(date +%s.%N)
	wait_for 50 test -s "$run/first.txt" || { say "the allowed stream's sender sent nothing after SIGCONT"; return 1; }
	tf=$(cut -d' ' -f1 "$run/first.txt")
	t1=$(forwarding_since "$fam" 5203 30) ||
		{ say "the allowed stream not back in the fast path"; conns; return 1; }
	s2=$(lease_state)
	a0=$(port_rx 5202)
	sleep 1
	a1=$(port_rx 5202)
	say "SIGCONT: the allowed stream's sender sent its first frame after" \
	    "$(echo "$tf - $t0" | bc | cut -c1-5) s (its retransmission timer), forwarding in the" \
	    "fast path again $(echo "$t1 - $tf" | bc | cut -c1-5) s after that frame (lease $s2);" \
	    "the forbidden one: $((a1 - a0)) frames at the server in 1 s"
	grep -q "lease on the coprocessor had lapsed" "$run/flowcutd.log" || { say "flowcutd did not see the lapse"; return 1; }
	floods_stop; wait	# the senders ended now: nothing below needs the rest of their run
	[ "$s1" = lapsed ] && [ "$s2" = held ] && [ $((a1 - a0)) -eq 0 ] &&
		[ "$(echo "$t1 - $tf <= 1" | bc)" = 1 ]
}

# A clean stop (SIGTERM) releases the lease: the coprocessor fails closed at
# once - a live stream's frames stop reaching the server within 0.3 s - and
# flowcutd started again takes the lease and the stream is back in the fast
# path within 3 s.  The stream is one way (UDP, client to server): the host
# sends nothing towards the client, whose neighbour entry went with the
# TAPs' carrier when flowcutd closed them, so the state waits for it and
# flowcutd must ask the host to resolve it (it stayed with the host until
# the stream ended, before).
t_lease_release() {
	local a0 a1 b0 b1 d0 d1 t0 t1
	port_counters || return 1
	ex server iperf3 -s -D -1 -p 5202 >/dev/null 2>&1
	sleep 0.3
	ex client timeout 30 iperf3 -u -c 198.18.1.2 -p 5202 -b 5M -t 15 -l 500 >"$run/udp.out" 2>&1 &
	wait_for 80 forwarding "4 udp" 5202 || { say "never offloaded"; conns; return 1; }
	kill -TERM "$(cat "$run/flowcutd.pid")"
	wait_for 30 bash -c "! $lab alive $L $(cat "$run/flowcutd.pid")"
	sleep 0.3
	[ "$(lease_state)" = lapsed ] || { say "lease $(lease_state) after a clean stop"; return 1; }
	a0=$(port_rx 5202) d0=$(counter FROM_WIRE_TO_KN_LEASE_LAPSED)
	sleep 1
	a1=$(port_rx 5202) d1=$(counter FROM_WIRE_TO_KN_LEASE_LAPSED)
	say "after a clean stop: $((a1 - a0)) frames at the server in 1 s," \
	    "$((d1 - d0)) to the host (TO_KN_LEASE_LAPSED)"
	grep -q "lease released" "$run/flowcutd.log" || { say "no release said"; return 1; }
	"$lab" start-flowcutd "$L"
	wait_for 50 bash -c "[ \"\$($(declare -f lease_state); L=$L ctl=$ctl; lease_state)\" = held ]" ||
		{ say "the lease not taken again"; return 1; }
	t0=$(date +%s.%N)
	t1=$(forwarding_since "4 udp" 5202 30) ||
		{ say "the stream not back in the fast path 3 s after the lease; the host's" \
		      "neighbours: $(ex host ip neigh show dev fp0 | tr '\n' ' ')"; conns; return 1; }
	b0=$(port_rx 5202)
	sleep 1
	b1=$(port_rx 5202)
	say "started again: the lease held, the stream in the fast path after" \
	    "$(echo "($t1 - $t0) * 1000 / 1" | bc) ms, $((b1 - b0)) frames at the server in 1 s"
	floods_stop; wait	# the senders ended now: nothing below needs the rest of their run
	[ $((a1 - a0)) -eq 0 ] && [ $((d1 - d0)) -gt 100 ] && [ $((b1 - b0)) -gt 100 ]
}

# A settings file with an error is refused and changes nothing.
t_settings_refused() {
	local before
	before=$(cfg)
	printf 'offload = on\ncut_in_hardware = maybe\n' >"$run/settings.conf.new"
	mv "$run/settings.conf.new" "$run/settings.conf"
	wait_for 20 grep -q "settings refused.*line 2: cut_in_hardware is not on or off" "$run/flowcutd.log" ||
		{ say "no refusal naming the line"; return 1; }
	say "$(grep 'settings refused' "$run/flowcutd.log" | tail -1)"
	[ "$(cfg)" = "$before" ] || return 1
	# a good save applies at once: the IPS switch off
	"$ctl" --settings "$run/settings.conf" settings set cut_in_hardware maybe 2>/dev/null && return 1
	printf 'offload = on\n' >"$run/settings.conf"
	"$ctl" --settings "$run/settings.conf" settings set cut_in_hardware off >/dev/null || return 1
	wait_for 20 bash -c "[ \$($ctl --link /run/flowcut-lab/$L/link --json cfg | sed -n 's/.*\"fw_cfg\": \([0-9]*\).*/\1/p') = 3 ]" ||
		{ say "fw_cfg $(cfg) after the save, not 0x003"; return 1; }
}

# In the 5 s from 1 s on: the frames the host's front ports took in (into
# the caller's $host) and the climb of the coprocessor's counters named,
# summed (into $drop).
window5() { # counter...
	local c h0 d0=0 d1=0
	sleep 1
	h0=$(( $(rx fp0) + $(rx fp1) ))
	for c in "$@"; do d0=$(( d0 + $(counter "$c") )); done
	sleep 5
	host=$(( $(rx fp0) + $(rx fp1) - h0 ))
	for c in "$@"; do d1=$(( d1 + $(counter "$c") )); done
	drop=$(( d1 - d0 ))
}

# A UDP flood from a sender the host cannot resolve (198.18.0.77 on the
# client, which answers no ARP: a spoofed or gone source) to a closed port:
# never answered, so never offloaded, the host taking it in.  A cut of its
# server makes it dropping on the coprocessor all the same (a cut
# connection's frames drop before any next hop is read): from 1 s after
# the cut the host takes in at most 10 frames in 5 s.  Before, the state
# was killed and not made dropping, and the flood went on to the host.
t_cut_unresolved() {
	local host drop line gw
	# the client asks no ARP (its gateway's MAC made permanent) and answers none
	ex client ping -c 1 -W 2 198.18.0.1 >/dev/null || { say "the client cannot ping its gateway"; return 1; }
	gw=$(ex client ip neigh show 198.18.0.1 dev c0 | awk '/lladdr/ { print $3 }')
	[ -n "$gw" ] || { say "the client has no neighbour entry of its gateway"; return 1; }
	ex client ip neigh replace 198.18.0.1 lladdr "$gw" dev c0 nud permanent || return 1
	ex client sysctl -qw net.ipv4.conf.c0.arp_ignore=8 || return 1
	ex client ip addr add 198.18.0.77/24 dev c0 || return 1
	ex client timeout 20 python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("198.18.0.77", 40077))
d, end = b"x" * 1000, time.monotonic() + 15
while time.monotonic() < end:
    for _ in range(64):
        try: s.sendto(d, ("198.18.1.2", 5300))
        except OSError: pass
' &
	wait_for 50 bash -c "$(declare -f ex); L=$L lab=$lab; ex host conntrack -L -s 198.18.0.77 2>/dev/null | grep -q 'dport=5300'" ||
		{ say "no state of the flood"; return 1; }
	sleep 1
	[ "$(counter FROM_WIRE_TO_KN_NON_ACCEL)" -gt 1000 ] || { say "the host is not taking the flood"; return 1; }
	! ex host ip neigh show 198.18.0.77 | grep -q lladdr ||
		{ say "the host resolved the sender: $(ex host ip neigh show 198.18.0.77)"; return 1; }
	ex host "$ctl" cut 198.18.1.2 --for 60 >/dev/null || { say "flowcutctl cut failed"; return 1; }
	wait_for 50 grep -q "cut (hand) of" "$run/flowcutd.log" || { say "no cut"; return 1; }
	line=$(grep "cut (hand) of" "$run/flowcutd.log" | tail -1)
	say "${line#flowcutd: }"
	window5 FROM_WIRE_DROP_IPS_VERDICT
	say "the host took in $host frames in the 5 s from 1 s after the cut, the coprocessor" \
	    "dropped $drop (DROP_IPS_VERDICT); the host's neighbour of the sender:" \
	    "$(ex host ip neigh show 198.18.0.77 | tr '\n' ' ')"
	floods_stop; wait	# the senders ended now: nothing below needs the rest of their run
	[ "$host" -le 10 ] && [ "$drop" -ge 10000 ]
}

# A cut flood, then the whole ruleset reloaded (`flush ruleset`: a new
# revision, and flowcutd's table taken with the rest): the table is made
# again with its cut set as it was, and the cut connection is made again
# at the new revision and keeps dropping on the coprocessor.
t_cut_reload() {
	local host drop
	udp_stream 198.18.1.2 400M 16
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	ex host "$ctl" cut 198.18.1.2 --for 60 >/dev/null || { say "flowcutctl cut failed"; return 1; }
	wait_for 50 grep -q "cut (hand) of" "$run/flowcutd.log" || { say "no cut"; return 1; }
	ex host nft -f "$top/lab/ruleset.nft" || return 1
	wait_for 50 grep -q "cut sets put back" "$run/flowcutd.log" ||
		{ say "the cut set was not put back"; return 1; }
	say "$(grep 'cut sets put back' "$run/flowcutd.log" | tail -1)"
	ex host nft list set inet flowcut cut4 | grep -q '198.18.1.2 timeout' ||
		{ say "cut4 does not hold 198.18.1.2 with its timeout"; return 1; }
	window5 FROM_WIRE_DROP_MFLOW_ACTION
	kill "$stream" 2>/dev/null; stream_end
	say "after the reload: the host took in $host frames in 5 s, the coprocessor dropped" \
	    "$drop (DROP_MFLOW_ACTION: the connection made again, dropping)"
	[ "$host" -le 10 ] && [ "$drop" -ge 100000 ]
}

# A cut flood, then flowcutd stopped (SIGTERM: it exits cleanly) and
# started again: its table, the cut set with it, outlives it, and the new
# flowcutd takes the dropping connection up from the coprocessor instead of
# taking it out (its state is dead): the flood stays dropped there.
t_cut_restart() {
	local host drop pid
	udp_stream 198.18.1.2 400M 16
	wait_for 60 stream_offloaded udp || { say "never offloaded"; conns; return 1; }
	ex host "$ctl" cut 198.18.1.2 --for 60 >/dev/null || { say "flowcutctl cut failed"; return 1; }
	wait_for 50 grep -q "cut (hand) of" "$run/flowcutd.log" || { say "no cut"; return 1; }
	pid=$(cat "$run/flowcutd.pid")
	kill -TERM "$pid"
	wait_for 50 bash -c "! $lab alive $L $pid" || { say "flowcutd did not stop"; return 1; }
	ex host nft list set inet flowcut cut4 | grep -q '198.18.1.2' ||
		{ say "the cut set went with flowcutd"; return 1; }
	"$lab" start-flowcutd "$L"
	reprogrammed || { say "flowcutd did not program the coprocessor again"; return 1; }
	wait_for 50 grep -q "taken up, dropping on" "$run/flowcutd.log" ||
		{ say "the cut connection was not taken up"; conns; return 1; }
	say "$(grep 'taken up' "$run/flowcutd.log" | tail -1)"
	window5 FROM_WIRE_DROP_IPS_VERDICT FROM_WIRE_DROP_MFLOW_ACTION
	kill "$stream" 2>/dev/null; stream_end
	say "after the restart: the host took in $host frames in 5 s, the coprocessor dropped $drop"
	[ "$host" -le 10 ] && [ "$drop" -ge 100000 ]
}

# A thousand live UDP connections (tests/lab/real.py udp-many, 5,000
# datagrams a second in all, each echoed) offloaded, then one change of the
# cut set cuts them all: flowcutd's line of the cut's figures (first and last
# connection dropping, from the change), and the frames the host takes in
# from one second after it.
t_cut_many() {
	local py=$top/tests/lab/real.py n=1000 line host drop got
	ex server python3 "$py" udp-echo 198.18.1.2 7000 "$run/echo.pid" >/dev/null 2>&1 &
	sleep 0.3
	ex client timeout 60 python3 "$py" udp-many 198.18.1.2 7000 "$n" 40 0.2 >"$run/many.out" 2>&1 &
	many_ok() { [ "$(conns | grep -c ' IPS  4 udp ')" -ge "$n" ]; }
	wait_for 300 many_ok || { say "only $(conns | grep -c ' IPS  4 udp ') of $n offloaded"; return 1; }
	ex host nft add element inet flowcut cut4 "{ 198.18.1.2 timeout 60s }" ||
		{ say "nft add element failed"; return 1; }
	wait_for 100 grep -q "cut (hand) of" "$run/flowcutd.log" || { say "no cut"; return 1; }
	line=$(grep "cut (hand) of" "$run/flowcutd.log" | tail -1)
	say "${line#flowcutd: }"
	window5 FROM_WIRE_DROP_IPS_VERDICT
	say "the host took in $host frames in the 5 s from 1 s after the cut; the coprocessor dropped $drop"
	kill "$(cat "$run/echo.pid")" 2>/dev/null
	got=$(sed -n 's/.* of \([0-9]*\) connections: \([0-9]*\) dropping.*/\1 \2/p' <<<"$line")
	[ "${got% *}" -ge "$n" ] && [ "${got#* }" -ge "$n" ] ||
		{ say "not every connection dropping on the coprocessor: $got"; return 1; }
	[ "$host" -le 50 ] || { say "the host took in $host frames"; return 1; }
	[ "$drop" -ge 10000 ] || { say "the coprocessor did not drop the senders' datagrams"; return 1; }
}

tests=(
	"TCP over IPv4 offloaded|t_stream tcp 4"
	"UDP over IPv4 offloaded|t_stream udp 4"
	"TCP over IPv6 offloaded|t_stream tcp 6"
	"UDP over IPv6 offloaded|t_stream udp 6"
	"conntrack -D takes a live stream out of the fast path|t_conntrack_delete"
	"a ruleset reload that forbids a live stream stops it|t_ruleset_reload"
	"a ruleset reload after a flowcutd restart stops a live stream|t_ruleset_reload_after_restart"
	"the coprocessor restarted mid-stream|t_npu_restart"
	"flowcutd restarted: no connection outlives its state|t_flowcutd_restart"
	"flowcutd stopped: past the lease the coprocessor fails closed, a rule added meanwhile holds at once (IPv4)|60|t_lease_stop 4"
	"flowcutd stopped: past the lease the coprocessor fails closed, a rule added meanwhile holds at once (IPv6)|60|t_lease_stop 6"
	"flowcutd stopped cleanly: the lease released, the coprocessor fails closed at once|60|t_lease_release"
	"a settings file with an error is refused|t_settings_refused"
	"flowcut-npu and flowcutd with only their systemd units' capabilities: streams offloaded, a flood cut|120|t_units_caps"
	"a cut by hand of a 400 Mbit/s UDP flood drops it on the coprocessor (IPv4)|60|t_cut 4 on"
	"a cut by hand of a 400 Mbit/s UDP flood drops it on the coprocessor (IPv6, the client)|60|t_cut 6 on client"
	"a cut by hand with Cut in hardware off: the host takes the flood|60|t_cut 4 off"
	"flowcutctl cut --conn of a 400 Mbit/s UDP flood drops it on the coprocessor|60|t_cut 4 on conn"
	"one change of a cut set cuts 1,000 live UDP connections on the coprocessor|90|t_cut_many"
	"a cut of a flood whose sender the host cannot resolve drops it on the coprocessor|60|t_cut_unresolved"
	"a cut flood stays dropped on the coprocessor across a ruleset reload|60|t_cut_reload"
	"a cut flood stays dropped on the coprocessor across a flowcutd restart|90|t_cut_restart"
	"a watched set: nft add element of a 400 Mbit/s UDP flood's server cuts it on the coprocessor (IPv4)|60|t_cut 4 on server set"
	"a watched set: nft add element of a 400 Mbit/s UDP flood's client cuts it on the coprocessor (IPv6)|60|t_cut 6 on client set"
	"a watched set with Cut in hardware off: the host takes the flood|60|t_cut 4 off server set"
	"an uncut releases: nft delete element of a cut UDP flow's server forwards it again within 1 s (IPv4)|60|t_uncut 4 set"
	"an uncut releases: nft delete element of a cut UDP flow's server forwards it again within 1 s (IPv6)|60|t_uncut 6 set"
	"an uncut releases: flowcutctl uncut after flowcutctl cut forwards a UDP flow again within 1 s (IPv4)|60|t_uncut 4 hand"
	"an uncut releases: flowcutctl uncut after flowcutctl cut forwards a UDP flow again within 1 s (IPv6)|60|t_uncut 6 hand"
	"an uncut releases: a watched set's ban that runs out (timeout 3s) forwards a UDP flow again within 1 s of it (IPv4)|60|t_uncut_expiry 4"
	"an uncut releases: a watched set's ban that runs out (timeout 3s) forwards a UDP flow again within 1 s of it (IPv6)|60|t_uncut_expiry 6"
	"a watched set: a TCP stream's retransmissions, FIN and RST stay on the coprocessor (IPv4)|60|t_cut_tcp 4"
	"a watched set: a TCP stream's retransmissions, FIN and RST stay on the coprocessor (IPv6)|60|t_cut_tcp 6"
	"a watched list: a line appended cuts a 400 Mbit/s UDP flood on the coprocessor|60|t_cut 4 on server list"
	"fail2ban: banip of a 400 Mbit/s UDP flood's client cuts it on the coprocessor|90|t_cut 4 on client f2b"
	"a spoofed RST outside the window leaves a TCP stream in the fast path (IPv4)|t_spoof_rst 4 far"
	"a spoofed RST outside the window leaves a TCP stream in the fast path (IPv6)|t_spoof_rst 6 far"
	"a spoofed RST inside the window gives the stream back, the server reads it whole (IPv4)|t_spoof_rst 4 near"
	"a spoofed RST inside the window gives the stream back, the server reads it whole (IPv6)|t_spoof_rst 6 near"
	"a watched set that is not an address set, or not there, is said by name|t_watched_set_refused"
	"a watched list of 1,000,000 lines loads; one line appended cuts a flood|240|t_list_million"
)

lab_suite fct
