#!/usr/bin/env bash
# The appliance in the lab (lab/lab.sh) with real clients and servers at
# both ends: nginx, curl, python3 (http.server, tests/lab/real.py), nc,
# openssl, iperf3, dnsmasq, dig.  Every transfer compares the byte count and
# sha256 of what was sent with what arrived, is bounded by a timeout far
# above its normal time, and says what it took ("# ..." lines: bytes,
# seconds, frames the host took in); a large one must be carried by the fast
# path (the host takes in few frames, the coprocessor forwards about all).
# Each test builds a lab of its own, is bounded in time, and tears it down
# even when it fails (tests/lab/lib.sh); a test that fails also prints the
# fast path's counters and connections.  Servers run in the lab's server
# namespace, every file of theirs in the lab's run folder.  Output: one
# "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line per test.
#
# Root only (namespaces).  BUILD names the build folder; ONLY=pattern runs
# the tests whose name matches.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lab/lib.sh
. "$here/lib.sh"

# read as ${!v} by addr
S4=198.18.1.2 S6=2001:2:0:1::2	# the server
# shellcheck disable=SC2034
C4=198.18.0.2 C6=2001:2::2	# the client
# shellcheck disable=SC2034
H4=198.18.1.1 H6=2001:2:0:1::1	# the host, on the server's side
MB=1048576
DATA=/run/flowcut-lab/fcr$$-data	# the random files, made once for every test
LAB_VARS="S4 S6 C4 C6 H4 H6 MB DATA"
LAB_TIMES=1
lab_at_exit() { rm -rf "$DATA"; }
# the daemons are killed at once, not waited for (their own shutdown takes
# 3 s or so, and nothing here tests it); the lab is removed as always
lab_down() {
	# shellcheck disable=SC2046
	kill -9 $(cat "$run/flowcutd.pid" "$run/npu.pid" 2>/dev/null) 2>/dev/null
	"$lab" down "$L" >/dev/null 2>&1
}

# ---- helpers ----

addr() { local v=$1$2; echo "${!v}"; }	# addr S 6: the server's IPv6 address
bracket() { if [ "$1" = 6 ]; then echo "[$2]"; else echo "$2"; fi; }	# as in a URL or a key
url() { echo "${4:-http}://$(bracket "$1" "$(addr S "$1")")${3:+:$3}$2"; }	# fam path [port] [scheme]
real_py() { echo "$top/tests/lab/real.py"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }	# $1 <= $2, decimals
mbit() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? b * 8 / s / 1e6 : 0) }'; }
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
# a file's sha256 (a file mkfile made has it beside it)
sha() { if [ -f "$1.sha256" ]; then cat "$1.sha256"; else sha256sum <"$1" | cut -c1-64; fi; }
host_rx() { echo $(( $(rx fp0) + $(rx fp1) )); }	# frames the host took in, both ports
cut_thru() { counter FROM_WIRE_TO_WIRE_VERDICT_CUT_THRU; }
listening() { ex server ss -Htuln "sport = :$1" | grep -q .; }

# N MB of random bytes as $run/DIR/NAME (and its sha256 as NAME.sha256):
# each NAME and size made once in $DATA, linked into the lab
mkfile() { # dir name MB
	local d=$DATA/$2-$3M
	if [ ! -f "$d" ]; then
		mkdir -p "$DATA" && head -c $(($3 * MB)) /dev/urandom >"$d.new" &&
			sha256sum <"$d.new" | cut -c1-64 >"$d.sha256" && mv "$d.new" "$d" || return 1
	fi
	mkdir -p "$run/$1" && cp "$d.sha256" "$run/$1/$2.sha256" &&
		{ ln -f "$d" "$run/$1/$2" 2>/dev/null || cp "$d" "$run/$1/$2"; }
}

# the fast path's table, a connection a line: "ID VERDICT STATE idle Ns | orig ... | reply ..."
conn_lines() {
	conns | tr -s ' ' | awk '/^[0-9]/ { if (l != "") print l; l = $0; next }
		/^ (orig|reply) / { l = l " |" $0 } END { if (l != "") print l }'
}
# the connections in the fast path (state valid) whose line holds every string given
fp_conns() {
	local l s
	l=$(conn_lines | grep -E '^[0-9]+ [A-Z_]+ valid ') || return 1
	for s; do l=$(printf '%s\n' "$l" | grep -F -- "$s") || return 1; done
	printf '%s\n' "$l"
}
fp_absent() { ! fp_conns "$@" >/dev/null; }
pkts() { awk '{ for (i = 2; i <= NF; i++) if ($i == "pkts") s += $(i - 1) } END { print s + 0 }'; }
# ... and frames went through it
fp_busy() { [ "$(fp_conns "$@" | pkts)" -gt 0 ]; }
fp_bytes() { awk '{ for (i = 2; i <= NF; i++) if ($i == "bytes") s += $(i - 1) } END { print s + 0 }'; }

# from xfer_begin to xfer_end: XS seconds, XH frames the host took in, XC
# frames the fast path forwarded
xfer_begin() { X0H=$(host_rx) X0C=$(cut_thru) X0T=$(now); }
xfer_end() { XS=$(since "$X0T") XH=$(( $(host_rx) - X0H )) XC=$(( $(cut_thru) - X0C )); }
# CMD..., counted so
xfer() {
	local rc
	xfer_begin
	"$@"
	rc=$?
	xfer_end
	return $rc
}
figures() { # what bytes
	say "$1: $2 bytes in $XS s ($(mbit "$2" "$XS") Mbit/s), the host took in $XH frames," \
	    "the fast path forwarded $XC"
}
# byte count and sha256 of what was sent and of what arrived
same() { # what sent received
	local a b=""
	a="$(size "$2") bytes sha256 $(sha "$2")"
	[ -f "$3" ] && b="$(size "$3") bytes sha256 $(sha "$3")"
	[ "$a" = "$b" ] && return 0
	say "$1: sent $a, received ${b:-nothing}"
	return 1
}
# the fast path carried BYTES (XH, XC of the transfer): the host took in 1 %
# of its frames at most (300 for a small one), the coprocessor forwarded the
# rest (a frame carries 1460 bytes at most).  The host's share is the
# frames before the offload: its time (p99 3-5 ms here, lab/first.sh's
# figure) at the link's rate (3 Gbit/s: 250 frames a ms) - a fixed 300 made
# the clean clones fail at 342 and 345; a connection the fast path did not
# carry sends every frame through the host, 100 times the bound
carried() { # bytes [most frames the host may take in, 1 % (300 at least) unless said]
	local want=$(( $1 / 1460 - XH )) most=${2:-$(( $1 / 1460 / 100 > 300 ? $1 / 1460 / 100 : 300 ))}
	[ "$XH" -le "$most" ] || { say "the host took in $XH frames, more than $most"; return 1; }
	[ "$XC" -ge "$want" ] || { say "the fast path forwarded $XC frames, fewer than $want"; return 1; }
}
# a stall (under 1 kB/s for 15 s) fails at once, whatever the --max-time
curl_() { ex client curl -fsS -g --speed-limit 1000 --speed-time 15 "$@"; }

# a failed test: what the fast path says
lab_on_fail() {
	echo "flowcutctl counters:"
	"$ctl" --link "/run/flowcut-lab/$L/link" counters
	echo "flowcutctl conns:"
	conns | tail -30
	[ -f "$run/flowcutd.json" ] && { echo "flowcutd.json:"; cat "$run/flowcutd.json"; echo; }
	[ -f "$run/npu.log" ] && { echo "npu.log:"; tail -20 "$run/npu.log"; }
}

# nginx in the server namespace: every file in $run/nginx, content in
# $run/www, PUT into $run/up, HTTPS too once $run/tls holds a certificate
nginx_up() {
	local d=$run/nginx tls=""
	mkdir -p "$d" "$run/www" "$run/up"
	[ -f "$run/tls/cert.pem" ] && tls="listen $S4:443 ssl; listen [$S6]:443 ssl;
		ssl_certificate $run/tls/cert.pem; ssl_certificate_key $run/tls/key.pem;"
	cat >"$d/nginx.conf" <<-EOF
	daemon on;
	user root;
	worker_processes 1;
	pid $d/nginx.pid;
	error_log $d/error.log;
	events { worker_connections 512; }
	http {
		log_format lab '\$remote_addr \$remote_port \$connection \$connection_requests \$status \$request \$body_bytes_sent';
		access_log $d/access.log lab;
		client_body_temp_path $d/body;
		proxy_temp_path $d/proxy;
		fastcgi_temp_path $d/fastcgi;
		uwsgi_temp_path $d/uwsgi;
		scgi_temp_path $d/scgi;
		default_type application/octet-stream;
		sendfile on;
		keepalive_timeout 300s;
		keepalive_requests 10000;
		client_max_body_size 0;
		server {
			listen $S4:80;
			listen [$S6]:80;
			$tls
			root $run/www;
			location /up/ { root $run; dav_methods PUT; create_full_put_path on; }
		}
	}
	EOF
	ex server nginx -p "$d/" -c "$d/nginx.conf" -e "$d/error.log" || return 1
	wait_for 50 listening 80 || { say "nginx is not listening"; cat "$d/error.log"; return 1; }
}

# python3's http.server in the server namespace, on port 8000 (HTTP/1.0:
# it answers whole whether or not the client has shut its side)
pyhttp_up() { # fam
	ex server python3 -m http.server 8000 --bind "$(addr S "$1")" --directory "$run/www" \
		>"$run/pyhttp.log" 2>&1 &
	wait_for 50 listening 8000 || { say "http.server is not listening"; return 1; }
}

# the server's iperf3 for one test, its per-second report in $run/iperf-s.out
iperf_server() {
	ex server iperf3 -s -1 -i 1 --forceflush >"$run/iperf-s.out" 2>&1 &
	wait_for 50 listening 5201 || { say "iperf3 is not listening"; return 1; }
}
# the rates of an iperf3 report's one-second intervals, in Mbit/s
iperf_rates() { # file
	awk '/^\[ *[0-9]+\] +[0-9.]+-[0-9.]+ +sec/ && !/sender|receiver/ {
		split($3, t, "-"); if (t[2] - t[1] < 0.9) next
		for (i = 4; i <= NF; i++) if ($i ~ /bits\/sec$/) break
		r = $(i - 1); u = $i
		if (u ~ /^Gbits/) r *= 1000; else if (u ~ /^Kbits/) r /= 1000; else if (u ~ /^bits/) r /= 1e6
		printf "%.0f ", r }' "$1"
}
# every second of the report delivered something (>= 1 Mbit/s), N seconds at least
every_second() { # file n
	local r
	r=$(iperf_rates "$1")
	say "per second, Mbit/s: $r"
	[ "$(echo "$r" | wc -w)" -ge "$2" ] || { say "fewer than $2 one-second reports"; return 1; }
	for x in $r; do [ "$x" -ge 1 ] || { say "a second with nothing delivered"; return 1; }; done
}

# the port of iperf3's data stream (its "local ... port N connected" line)
iperf_port() { # file
	wait_for 50 grep -q 'local .* port [0-9]* connected' "$1" || return 1
	sed -n 's/.*local .* port \([0-9]*\) connected.*/\1/p' "$1" | head -1
}

# The unchanged ruleset loaded again while the connection (the strings
# fp_conns takes) is in the fast path: its entry is replaced, and it must be
# back in the fast path (a new entry, frames through it) within 1 s.
reload_and_back() {
	local old line t d
	old=" $(fp_conns "$@" | awk '{ print $1 }' | tr '\n' ' ')"
	[ "$old" != " " ] || { say "not in the fast path before the reload"; return 1; }
	ex host nft -f "$top/lab/ruleset.nft" || { say "nft -f failed"; return 1; }
	t=$(now)
	for _ in $(seq 40); do	# polled every 0.1 s, 4 s at most
		line=$(fp_conns "$@" | awk -v old="$old" 'index(old, " " $1 " ") == 0' | head -1)
		[ -n "$line" ] && [ "$(echo "$line" | pkts)" -gt 0 ] && break
		line=""
		sleep 0.1
	done
	d=$(since "$t")
	if [ -z "$line" ]; then
		say "not back in the fast path $d s after the reload (the entry was${old% })"
		return 1
	fi
	say "back in the fast path $d s after the reload: entry${old% } replaced by ${line%% *}"
	le "$d" 1.0 || { say "more than 1 s"; return 1; }
}

# ---- the tests: each returns 0 (ok), 1 (not ok) ----

# 1. A download of 200 MB, offloaded.
t_download() { # fam
	nginx_up && mkfile www big 200 || return 1
	xfer curl_ --max-time 90 -o "$run/got" "$(url "$1" /big)" || { say "curl failed"; return 1; }
	figures "HTTP download over IPv$1" "$(size "$run/got")"
	same "download" "$run/www/big" "$run/got" && carried "$(size "$run/www/big")"
}

# 2. An upload of 200 MB (PUT, nginx's dav module), offloaded.
t_upload() { # fam
	nginx_up && mkfile client big 200 || return 1
	xfer curl_ --max-time 90 -T "$run/client/big" -o /dev/null "$(url "$1" /up/big)" ||
		{ say "curl failed"; return 1; }
	figures "HTTP upload over IPv$1" "$(size "$run/up/big")"
	same "upload" "$run/client/big" "$run/up/big" && carried "$(size "$run/client/big")"
}

# 3. N downloads of 1 MB one after the other, one curl (one connection) each.
seq_downloads() { # url n
	local want i
	want="$(size "$run/www/m1") $(sha "$run/www/m1")"
	bad=0
	for i in $(seq "$2"); do
		rm -f "$run/got"
		if ! curl_ --max-time 20 -o "$run/got" "$1"; then
			bad=$((bad + 1)); say "download $i: curl failed"; continue
		fi
		[ "$(size "$run/got") $(sha "$run/got")" = "$want" ] ||
			{ bad=$((bad + 1)); say "download $i: $(size "$run/got") bytes, not what was served"; }
	done
}
t_sequential() { # fam n
	local bad n=$2 reqs
	nginx_up && mkfile www m1 1 || return 1
	xfer seq_downloads "$(url "$1" /m1)" "$n"
	figures "$n downloads of 1 MB one after the other over IPv$1" $((n * MB))
	reqs=$(grep -c ' 200 GET /m1 ' "$run/nginx/access.log")
	say "$((n - bad)) of $n whole; nginx answered $reqs requests"
	[ "$bad" -eq 0 ] && [ "$reqs" -eq "$n" ]
}

# 4. 32 downloads at once, 4 to 8 MB each.
par_downloads() {
	local i pids=()
	for i in $(seq 32); do
		curl_ --max-time 60 -o "$run/par.$i" "$(url 4 "/p$((i % 4))")" &
		pids+=($!)
	done
	bad=0
	for i in "${pids[@]}"; do wait "$i" || bad=$((bad + 1)); done
}
t_parallel() {
	local bad i sizes=(4 5 6 8) total=0
	nginx_up || return 1
	for i in 0 1 2 3; do mkfile www "p$i" "${sizes[i]}" || return 1; done
	xfer par_downloads
	[ "$bad" -eq 0 ] || say "$bad curls failed"
	for i in $(seq 32); do
		same "download $i" "$run/www/p$((i % 4))" "$run/par.$i" || bad=$((bad + 1))
		total=$((total + $(size "$run/par.$i")))
	done
	figures "32 downloads at once over IPv4" "$total"
	[ "$bad" -eq 0 ]
}

# 5. Keep-alive: 5 requests on one connection, each body whole.
t_keepalive() {
	local i args=() connects n bad=0
	nginx_up || return 1
	for i in 1 2 3 4 5; do
		mkfile www "k$i" 20 || return 1
		args+=(-o "$run/got.$i" "$(url 4 "/k$i")")
	done
	xfer curl_ --max-time 60 -w '%{num_connects}\n' "${args[@]}" >"$run/connects" ||
		{ say "curl failed"; return 1; }
	connects=$(awk '{ s += $1 } END { print s + 0 }' "$run/connects")
	n=$(wc -l <"$run/connects")
	figures "5 downloads of 20 MB on one connection" $((100 * MB))
	say "curl made $connects connection(s) for $n transfers;" \
	    "nginx: $(awk '{ print $3 }' "$run/nginx/access.log" | sort -u | wc -l) connection(s)," \
	    "requests $(awk '{ printf "%s ", $4 }' "$run/nginx/access.log")"
	for i in 1 2 3 4 5; do same "request $i" "$run/www/k$i" "$run/got.$i" || bad=1; done
	[ "$bad" -eq 0 ] && [ "$n" -eq 5 ] && [ "$connects" -eq 1 ] && carried $((100 * MB))
}

# 6. A client that shuts its sending side at once (nc -N) and reads on.
t_halfclose_now() { # fam
	local status
	pyhttp_up "$1" && mkfile www h60 60 || return 1
	printf 'GET /h60 HTTP/1.0\r\nHost: lab\r\n\r\n' >"$run/request"
	xfer ex client timeout 60 nc -N "$(addr S "$1")" 8000 <"$run/request" >"$run/got.raw" ||
		{ say "nc failed"; return 1; }
	status=$(python3 "$(real_py)" body "$run/got.raw" "$run/got")
	figures "a 60 MB answer to a client that had shut its side (IPv$1, $status)" "$(size "$run/got")"
	same "download" "$run/www/h60" "$run/got"
}

# 6. The same once the connection is in the fast path: the client reads
# 1 MB, shuts its side, and reads on to the end.
t_halfclose_offloaded() { # fam
	local p
	pyhttp_up "$1" && mkfile www h60 60 || return 1
	ex client timeout 60 python3 "$(real_py)" halfclose "$(addr S "$1")" 8000 /h60 "$run/got" \
		"$run/gate" >"$run/client.out" 2>&1 &
	p=$!
	wait_for 100 test -f "$run/gate.reading" || { say "the client read nothing"; return 1; }
	wait_for 50 fp_conns "tcp $(bracket "$1" "$(addr C "$1")"):" "> $(bracket "$1" "$(addr S "$1")"):8000 " ||
		{ say "the connection never reached the fast path"; return 1; }
	xfer_begin
	touch "$run/gate"
	wait "$p" || { say "the client failed: $(cat "$run/client.out")"; return 1; }
	xfer_end
	figures "the rest of a 60 MB answer after the client shut its side (IPv$1, $(cat "$run/client.out"))" \
		"$(size "$run/got")"
	same "download" "$run/www/h60" "$run/got"
}

# 7. Through the host's NAT: masquerade toward the server, or a port forward.
t_nat() { # masquerade|forward fam
	local how=$1 fam=$2 t=ip u want w rc=0 S C H
	[ "$fam" = 6 ] && t=ip6
	S=$(bracket "$fam" "$(addr S "$fam")") C=$(bracket "$fam" "$(addr C "$fam")")
	H=$(bracket "$fam" "$(addr H "$fam")")
	if [ "$how" = masquerade ]; then
		printf 'table %s labnat {\n chain post {\n  type nat hook postrouting priority srcnat; policy accept;\n  oifname "fp1" masquerade\n }\n}\n' \
			"$t" >"$run/nat.nft"
		u=$(url "$fam" /big) want=$(addr H "$fam")
		set -- "tcp $C:" "> $S:80 " "$S:80 > $H:" nat
	else
		printf 'table %s labnat {\n chain pre {\n  type nat hook prerouting priority dstnat; policy accept;\n  iifname "fp0" %s daddr %s tcp dport 8080 dnat to %s:80\n }\n}\n' \
			"$t" "$t" "$(addr H "$fam")" "$S" >"$run/nat.nft"
		u="http://$H:8080/big" want=$(addr C "$fam")
		set -- "tcp $C:" "> $H:8080 " "$S:80 > $C:" nat
	fi
	ex host nft -f "$run/nat.nft" || { say "nft refused the NAT table"; return 1; }
	nginx_up && mkfile www big 200 || return 1
	# the connection in the fast path, seen while the transfer goes on
	(for _ in $(seq 600); do fp_busy "$@" && { fp_conns "$@" >"$run/seen"; break; }; sleep 0.1; done) &
	w=$!
	xfer curl_ --max-time 90 -o "$run/got" "$u" || { say "curl failed"; rc=1; }
	kill "$w" 2>/dev/null
	figures "HTTP download through $how over IPv$fam" "$(size "$run/got")"
	if [ -s "$run/seen" ]; then
		say "in the fast path: $(head -1 "$run/seen")"
	else
		say "the connection was never seen in the fast path"; rc=1
	fi
	w=$(tail -1 "$run/nginx/access.log" | awk '{ print $1 }')
	say "the server saw the client as $w"
	[ "$w" = "$want" ] || { say "not $want"; rc=1; }
	same "download" "$run/www/big" "$run/got" && carried "$(size "$run/www/big")" && [ $rc -eq 0 ]
}

# 8. HTTPS with a certificate of the test's own, checked by curl.
t_https() { # fam
	mkdir -p "$run/tls"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=flowcut-lab.test -addext "subjectAltName=IP:$S4,IP:$S6" \
		-keyout "$run/tls/key.pem" -out "$run/tls/cert.pem" 2>"$run/tls/openssl.log" ||
		{ say "openssl failed"; cat "$run/tls/openssl.log"; return 1; }
	nginx_up && mkfile www big 120 || return 1
	xfer curl_ --max-time 90 --cacert "$run/tls/cert.pem" -o "$run/got" "$(url "$1" /big "" https)" ||
		{ say "curl failed"; return 1; }
	figures "HTTPS download over IPv$1" "$(size "$run/got")"
	same "download" "$run/www/big" "$run/got" && carried "$(size "$run/www/big")"
}

# 9. A keep-alive connection idle past the fast path's idle timeout (2 s)
# leaves the fast path and stays out while idle; its next request, 200 MB
# on the same connection, goes whole and back through the fast path.
t_idle() {
	local p key t s line ids="" left="" back="" id0 rc=0 h port mark=""
	"$ctl" --settings "$run/settings.conf" settings set idle_timeout 2 >/dev/null || return 1
	wait_for 50 grep -q '"idle_timeout":2' "$run/flowcutd.json" ||
		{ say "flowcutd did not apply idle_timeout 2"; return 1; }
	nginx_up && mkfile www k1 4 && mkfile www big 200 || return 1
	ex client timeout 60 python3 "$(real_py)" keepidle "$S4" 80 /k1 /big "$run/got" 8 "$run/port" \
		>"$run/client.out" 2>&1 &
	p=$!
	wait_for 100 test -s "$run/port" || { say "no first answer"; cat "$run/client.out"; return 1; }
	t=$(now)
	port=$(cat "$run/port")
	key="tcp $C4:$port >"
	id0=$(fp_conns "$key" | awk '{ print $1 }')
	[ -n "$id0" ] || { say "not in the fast path after the first request"; return 1; }
	h=$(host_rx)
	# the 8 s the client sleeps: out of the fast path within the idle timeout
	# and some slack (4.5 s), and out until it speaks again
	while le "$(since "$t")" 6.5; do
		line=$(fp_conns "$key")
		s=$(since "$t")
		if [ -z "$line" ] || [ "${line%% *}" != "$id0" ]; then
			[ -n "$left" ] || left=$s
		fi
		if [ -n "$line" ] && [ -n "$left" ]; then
			case " $ids " in *" ${line%% *} "*) ;; *)
				ids="$ids ${line%% *}"
				# what the host's state says meanwhile: the rules' mark
				[ -n "$mark" ] || mark=$(ex host conntrack -L -p tcp --sport "$port" 2>/dev/null |
					grep -o 'mark=[0-9]*' | head -1)
			esac
		fi
		sleep 0.1
	done
	h=$(( $(host_rx) - h ))
	say "connection $id0 in the fast path after the first request; left it ${left:-never} s into" \
	    "the idle time; the host took in $h frames in the first 6.5 s idle"
	if [ -z "$left" ] || ! le "$left" 4.5; then say "not out of the fast path 4.5 s after it went idle"; rc=1; fi
	[ -z "$ids" ] || { say "while idle it came back into the fast path (entries$ids; conntrack: ${mark:-?})"; rc=1; }
	# the second request: 200 MB on the same connection, back in the fast path
	xfer_begin
	wait_for 50 fp_busy "$key" && back=$(since "$t")
	wait "$p" || { say "the client failed: $(cat "$run/client.out")"; return 1; }
	xfer_end
	say "$(tr '\n' ';' <"$run/client.out")"
	figures "200 MB on the connection after 8 s idle (from 1.5 s before the request)" "$(size "$run/got")"
	say "back in the fast path ${back:-never} s into the idle time (the request went at 8 s)"
	sleep 1.1	# flowcutd.json is written once a second
	say "flowcutd, qualify to FLOW_CREATE_FP answered: $(tr ',' '\n' <"$run/flowcutd.json" |
		grep -E '"offload_us_p(50|99)"' | tr '\n' ' ')(2 offloads: the first, and this one)"
	say "nginx: $(awk '{ printf "connection %s request %s; ", $3, $4 }' "$run/nginx/access.log")"
	[ -n "$back" ] || { say "not back in the fast path for the second request"; rc=1; }
	[ "$(awk '{ print $3 }' "$run/nginx/access.log" | sort -u | wc -l)" -eq 1 ] ||
		{ say "nginx saw more than one connection"; rc=1; }
	# The server restarts slow start after 8 s idle and its window doubles
	# every round trip through the host (a tenth of a millisecond here)
	# until the fast path has the connection again: 4 frames with the
	# offload answered at 0.2 ms, 300-600 at 0.7-4.6 ms (2-core machine,
	# the host path busy).  A connection not taken back would send its
	# 143,640 frames through the host; 2 % of them says "back, and the fast
	# path carried the rest", the offload's time is the benchmark's.
	same "download" "$run/www/big" "$run/got" &&
		carried "$(size "$run/www/big")" $(( $(size "$run/www/big") / 1460 / 50 )) && [ $rc -eq 0 ]
}

# 10. The unchanged ruleset reloaded in the middle of a rate-limited 200 MB
# download (~5 s): whole, and back in the fast path within 1 s.
t_reload_download() { # fam
	local p rc=0 C S
	C=$(bracket "$1" "$(addr C "$1")") S=$(bracket "$1" "$(addr S "$1")")
	nginx_up && mkfile www big 200 || return 1
	curl_ --max-time 60 --limit-rate 40M -o "$run/got" "$(url "$1" /big)" &
	p=$!
	wait_for 50 fp_busy "tcp $C:" "> $S:80 " || { say "never in the fast path"; return 1; }
	sleep 1.5
	reload_and_back "tcp $C:" "> $S:80 " || rc=1
	wait "$p" || { say "curl failed"; return 1; }
	say "the download took $(size "$run/got") bytes, at 40 MB/s"
	same "download" "$run/www/big" "$run/got" && [ $rc -eq 0 ]
}

# 10. The same in the middle of an iperf3 TCP stream (10 s, reload at 4 s):
# it delivers every second.
t_reload_iperf() { # tcp|udp fam
	local p rc=0 port t C flags=""
	C=$(bracket "$2" "$(addr C "$2")")
	[ "$1" = udp ] && flags="-u -b 50M -l 1000"
	iperf_server || return 1
	# shellcheck disable=SC2086
	ex client timeout 30 iperf3 -c "$(addr S "$2")" -t 10 -i 1 --forceflush $flags >"$run/iperf-c.out" 2>&1 &
	p=$!
	t=$(now)
	port=$(iperf_port "$run/iperf-c.out") || { say "iperf3 did not start"; cat "$run/iperf-c.out"; return 1; }
	# UDP is offloaded once conntrack calls it a stream (seen both ways, 2 s)
	wait_for 40 fp_busy "$1 $C:$port >" || { say "the stream never reached the fast path"; return 1; }
	while ! le 4 "$(since "$t")"; do sleep 0.1; done
	reload_and_back "$1 $C:$port >" || rc=1
	wait "$p" || { say "iperf3 failed"; tail -5 "$run/iperf-c.out" | sed 's/^/#   /'; rc=1; }
	sleep 0.5
	say "$(grep -E 'receiver' "$run/iperf-s.out" | tail -1 | tr -s ' ')"
	every_second "$run/iperf-s.out" 9 && [ $rc -eq 0 ]
}

# 11. A next hop with a smaller MTU (1400, the host's route toward the
# server) than both ends (1500): the fast path gives the too-big frames of
# an upload to the host, the host answers with ICMP (fragmentation needed,
# packet too big), the client sends smaller ones, the rest flows in the
# fast path.
icmp_too_big() { # fam: what the host has sent
	if [ "$1" = 4 ]; then
		ex host awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "OutDestUnreachs") c = i; h = 1 }
			else print $c }' /proc/net/snmp
	else
		ex host awk '$1 == "Icmp6OutPktTooBigs" { print $2 }' /proc/net/snmp6
	fi
}
too_big_since() { [ "$(icmp_too_big "$1")" -gt "$2" ]; }	# fam count
t_mtu() { # fam
	local e i rc=0
	if [ "$1" = 4 ]; then
		ex host ip route replace 198.18.1.0/24 dev fp1 proto kernel scope link src "$H4" mtu 1400
	else
		ex host ip -6 route replace 2001:2:0:1::/64 dev fp1 proto kernel metric 256 mtu 1400
	fi || { say "ip route replace failed"; return 1; }
	say "the host's route: $(ex host ip -"$1" route show dev fp1 | grep "mtu" | tr -s ' ')"
	nginx_up && mkfile www m4 4 && mkfile client big 100 || return 1
	e=$(counter FROM_WIRE_TO_KN_MTU_EXCEEDED) i=$(icmp_too_big "$1")
	# a download of 4 MB first, on the same connection: the upload's
	# full-size frames meet the fast path, not the host before the offload.
	# At 10 MB/s (0.4 s): the offload, answered within 0.2-5 ms, comes while
	# few frames go (the clean clone's 5.2 ms at the link's 2.6 Gbit/s let
	# 345 through the host, past the 300 carried() allows, both families)
	xfer curl_ --max-time 90 --limit-rate 10M -w '%{num_connects}\n' -o /dev/null "$(url "$1" /m4)" \
		--next -fsS -g --speed-limit 1000 --speed-time 15 --max-time 90 -w '%{num_connects}\n' -T "$run/client/big" -o /dev/null \
		"$(url "$1" /up/big)" >"$run/connects" || { say "curl failed"; rc=1; }
	[ "$(awk '{ s += $1 } END { print s + 0 }' "$run/connects")" -eq 1 ] ||
		{ say "the download and the upload were not on one connection"; rc=1; }
	e=$(( $(counter FROM_WIRE_TO_KN_MTU_EXCEEDED) - e )) i=$(( $(icmp_too_big "$1") - i ))
	figures "HTTP upload over IPv$1 toward a 1400-byte next hop" "$(size "$run/up/big")"
	say "frames too big for the next hop given to the host: $e; ICMP too-big sent by the host: $i;" \
	    "the client's path: $(ex client ip -"$1" route get "$(addr S "$1")" | grep -o 'mtu [0-9]*' || echo 'mtu not lowered')"
	[ "$e" -ge 1 ] || { say "the fast path gave the host no frame too big for the next hop"; rc=1; }
	[ "$i" -ge 1 ] || { say "the host sent no ICMP too-big"; rc=1; }
	same "upload" "$run/client/big" "$run/up/big" && carried "$(size "$run/client/big")" && [ $rc -eq 0 ]
}

# 12. The server's MAC changes in the middle of a rate-limited download
# (the host's neighbour entries updated by hand): whole, and still in the
# fast path afterwards.
t_mac() { # fam
	local p h0 b0 hs want new=02:00:00:00:01:99 rc=0 C S
	C=$(bracket "$1" "$(addr C "$1")") S=$(bracket "$1" "$(addr S "$1")")
	nginx_up && mkfile www big 200 || return 1
	h0=$(host_rx)
	curl_ --max-time 60 --limit-rate 40M -o "$run/got" "$(url "$1" /big)" &
	p=$!
	wait_for 50 fp_busy "tcp $C:" "> $S:80 " || { say "never in the fast path"; return 1; }
	sleep 1
	xfer_begin
	# what the fast path has forwarded of it so far (both ways, headers and
	# all: at least the payload); the rest must cross after the change
	b0=$(fp_conns "tcp $C:" "> $S:80 " | fp_bytes)
	if ! { ex server ip link set s0 address "$new" &&
		ex host ip neigh replace "$S4" lladdr "$new" dev fp1 nud reachable &&
		ex host ip -6 neigh replace "$S6" lladdr "$new" dev fp1 nud reachable; }; then
		say "could not change the MAC"; return 1
	fi
	say "the server's MAC is now $new; the fast path had forwarded $b0 bytes of the connection"
	wait "$p" || { say "curl failed"; rc=1; }
	xfer_end
	# frames of 1460 bytes at most, less those the host took in (from the start)
	hs=$(( $(host_rx) - h0 ))
	want=$(( ($(size "$run/www/big") - b0) / 1460 - hs ))
	say "after the change the host took in $XH frames, the fast path forwarded $XC" \
	    "(the rest of the download: $want at least)"
	same "download" "$run/www/big" "$run/got" || rc=1
	[ "$XH" -le 300 ] || { say "the host took in more than 300 frames"; rc=1; }
	[ "$XC" -ge "$want" ] || { say "the fast path forwarded fewer than $want frames"; rc=1; }
	[ $rc -eq 0 ]
}

# 16. Routes change under a download: the route toward the client gets a
# smaller MTU (the connection leaves the fast path and comes back over a
# next hop of that MTU; the too-big frames, whichever side of the move they
# meet, are answered by the host), then leaves by an interface that is
# not a front port (the connection leaves the fast path), then comes back
# (the connection is offloaded again).  The download ends whole.
t_route() { # fam
	local p C S icmp0 icmp1 rc=0
	C=$(bracket "$1" "$(addr C "$1")") S=$(bracket "$1" "$(addr S "$1")")
	nginx_up && mkfile www big 200 || return 1
	ex host ip link add hx0 type veth peer name hx1 && ex host ip link set hx0 up &&
		ex host ip link set hx1 up || { say "no veth in the host"; return 1; }
	curl_ --max-time 60 --limit-rate 25M -o "$run/got" "$(url "$1" /big)" &
	p=$!
	wait_for 50 fp_busy "tcp $C:" "> $S:80 " || { say "never in the fast path"; return 1; }
	icmp0=$(icmp_too_big "$1")
	if [ "$1" = 4 ]; then
		ex host ip route replace 198.18.0.0/24 dev fp0 proto kernel scope link src 198.18.0.1 mtu 1400
	else
		ex host ip -6 route replace 2001:2::/64 dev fp0 proto kernel metric 256 mtu 1400
	fi || { say "could not change the route"; return 1; }
	wait_for 30 too_big_since "$1" "$icmp0" || { say "the host sent no too-big error"; rc=1; }
	wait_for 30 fp_busy "tcp $C:" "> $S:80 " || { say "not back in the fast path after the MTU change"; rc=1; }
	icmp1=$(icmp_too_big "$1")
	say "route MTU 1400: $((icmp1 - icmp0)) too-big errors from the host, the connection in the fast path again"
	ex host ip -"$1" route add "$(addr C "$1")" dev hx0 || { say "could not add the route"; return 1; }
	wait_for 30 fp_absent "tcp $C:" "> $S:80 " ||
		{ say "still in the fast path with the route out of hx0"; rc=1; }
	say "route out of hx0 (not a front port): the connection left the fast path"
	ex host ip -"$1" route del "$(addr C "$1")" dev hx0
	wait_for 50 fp_busy "tcp $C:" "> $S:80 " || { say "not offloaded again once the route came back"; rc=1; }
	say "route back: the connection in the fast path again"
	wait "$p" || { say "curl failed"; rc=1; }
	same "download" "$run/www/big" "$run/got" || rc=1
	say "flowcutd: $(tr ',' '\n' <"$run/flowcutd.json" | grep -E 'rerouted|nhop_followed' | tr '\n' ' ')"
	[ $rc -eq 0 ]
}

# 15. A download goes on, whole, while the coprocessor or flowcutd is
# killed and started again: the host carries it meanwhile (its state was
# made liberal when it was offloaded), then it is offloaded again.
t_restart() { # npu|flowcutd fam
	local p t0 C S rc=0
	C=$(bracket "$2" "$(addr C "$2")") S=$(bracket "$2" "$(addr S "$2")")
	nginx_up && mkfile www big 200 || return 1
	xfer_begin
	curl_ --max-time 60 --limit-rate 40M -o "$run/got" "$(url "$2" /big)" &
	p=$!
	wait_for 50 fp_busy "tcp $C:" "> $S:80 " || { say "never in the fast path"; return 1; }
	sleep 1
	kill_and_wait "$run/$1.pid" || { say "$1 did not die"; return 1; }
	t0=$(now)
	"$lab" start-"$1" "$L"
	reprogrammed || { say "flowcutd did not program the coprocessor again"; return 1; }
	wait_for 100 fp_busy "tcp $C:" "> $S:80 " || { say "not offloaded again"; rc=1; }
	say "$1 killed and started again: the download back in the fast path $(since "$t0") s later"
	wait "$p" || { say "curl failed"; rc=1; }
	xfer_end
	figures "the download across the restart" "$(size "$run/got")"
	same "download" "$run/www/big" "$run/got" || rc=1
	# the host carries the gap, not the rest (143,000 frames in all)
	[ "$XH" -le 5000 ] || { say "the host took in more than 5,000 frames"; rc=1; }
	[ $rc -eq 0 ]
}

# 13. DNS over UDP: dnsmasq on the server answers a name of its own, dig
# asks 200 times (A and AAAA) from one source port (so the flow is
# offloaded once it has lasted 2 s).
dig_loop() { # fam
	local sport
	sport="$(addr C "$1")#53535"
	ex client bash -c 'for i in $(seq 100); do
		for t in A AAAA; do echo "$t $(dig +short +tries=1 +time=2 -b "$1" "@$2" www.flowcut-lab.test $t)"; done
	done' _ "$sport" "$(addr S "$1")" >"$run/answers"
}
t_dns() { # fam
	local good
	ex server dnsmasq --conf-file=/dev/null --no-resolv --no-hosts --bind-interfaces \
		--listen-address="$S4" --listen-address="$S6" --port=53 --user=root \
		--pid-file="$run/dnsmasq.pid" --log-facility="$run/dnsmasq.log" \
		--local=/flowcut-lab.test/ --host-record=www.flowcut-lab.test,198.18.1.80,2001:2:0:1::80 ||
		{ say "dnsmasq failed"; return 1; }
	wait_for 50 listening 53 || { say "dnsmasq is not listening"; return 1; }
	xfer dig_loop "$1"
	good=$(grep -cxE 'A 198\.18\.1\.80|AAAA 2001:2:0:1::80' "$run/answers")
	say "200 queries over IPv$1 in $XS s: $good answered right; the host took in $XH frames," \
	    "the fast path forwarded $XC"
	[ "$good" -eq 200 ] || { say "wrong: $(grep -vxE 'A 198\.18\.1\.80|AAAA 2001:2:0:1::80' "$run/answers" | head -3 | tr '\n' ';')"; return 1; }
}

# 14. An ICMP error about an offloaded UDP flow reaches its end: the server
# stops listening, its port unreachable refuses the client's connected
# socket within 2 s.
t_icmp() { # fam
	local p t d C S
	C=$(bracket "$1" "$(addr C "$1")") S=$(bracket "$1" "$(addr S "$1")")
	ex server python3 "$(real_py)" udp-echo "$(addr S "$1")" 7777 "$run/echo.pid" >"$run/echo.log" 2>&1 &
	wait_for 50 test -s "$run/echo.pid" || { say "the echo server did not start"; return 1; }
	ex client timeout 40 python3 "$(real_py)" udp-client "$(addr S "$1")" 7777 30 >"$run/client.out" 2>&1 &
	p=$!
	wait_for 60 fp_busy "udp $C:" "> $S:7777 " || { say "the flow never reached the fast path"; return 1; }
	sleep 0.5
	t=$(now)
	kill "$(cat "$run/echo.pid")"
	wait "$p" || { say "the client: $(cat "$run/client.out")"; return 1; }
	d=$(awk -v a="$t" '$1 == "refused" { printf "%.2f", $2 - a }' "$run/client.out")
	say "the client's socket refused ${d:-?} s after the server stopped ($(cat "$run/client.out"))"
	[ -n "$d" ] && le "$d" 2.0
}

tests=(
	"HTTP download of 200 MB over IPv4|120|t_download 4"
	"HTTP download of 200 MB over IPv6|120|t_download 6"
	"HTTP upload of 200 MB over IPv4|120|t_upload 4"
	"HTTP upload of 200 MB over IPv6|120|t_upload 6"
	"200 downloads of 1 MB one after the other over IPv4|120|t_sequential 4 200"
	"50 downloads of 1 MB one after the other over IPv6|120|t_sequential 6 50"
	"32 downloads at once|120|t_parallel"
	"keep-alive: 5 requests on one connection|120|t_keepalive"
	"a client that shuts its side at once reads the answer whole (IPv4)|90|t_halfclose_now 4"
	"a client that shuts its side in the fast path reads on (IPv4)|90|t_halfclose_offloaded 4"
	"a client that shuts its side in the fast path reads on (IPv6)|90|t_halfclose_offloaded 6"
	"200 MB through the host's masquerade over IPv4|120|t_nat masquerade 4"
	"200 MB through the host's masquerade over IPv6|120|t_nat masquerade 6"
	"200 MB through a port forward over IPv4|120|t_nat forward 4"
	"200 MB through a port forward over IPv6|120|t_nat forward 6"
	"HTTPS download of 120 MB over IPv4|120|t_https 4"
	"HTTPS download of 120 MB over IPv6|120|t_https 6"
	"a keep-alive connection idle past the fast path's timeout|90|t_idle"
	"a ruleset reload in the middle of a download|90|t_reload_download 4"
	"a ruleset reload in the middle of an iperf3 TCP stream|90|t_reload_iperf tcp 4"
	"a ruleset reload in the middle of a UDP stream over IPv4|90|t_reload_iperf udp 4"
	"a ruleset reload in the middle of a UDP stream over IPv6|90|t_reload_iperf udp 6"
	"an upload toward a smaller next-hop MTU over IPv4|120|t_mtu 4"
	"an upload toward a smaller next-hop MTU over IPv6|120|t_mtu 6"
	"the server's MAC changes mid-download over IPv4|90|t_mac 4"
	"the server's MAC changes mid-download over IPv6|90|t_mac 6"
	"200 DNS queries over IPv4|90|t_dns 4"
	"200 DNS queries over IPv6|90|t_dns 6"
	"an ICMP port unreachable reaches the end of an offloaded UDP flow (IPv4)|60|t_icmp 4"
	"an ICMP port unreachable reaches the end of an offloaded UDP flow (IPv6)|60|t_icmp 6"
	"routes change under a download over IPv4|90|t_route 4"
	"routes change under a download over IPv6|90|t_route 6"
	"a download across a coprocessor restart over IPv4|90|t_restart npu 4"
	"a download across a flowcutd restart over IPv6|90|t_restart flowcutd 6"
)

lab_suite fcr per-test
