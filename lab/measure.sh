# shellcheck shell=bash
# What lab/cut.sh, lab/verdict.sh and lab/many.sh share: sourced, never run.
# A lab of their own (lab.sh up + start, named PREFIX<pid>), torn down on
# exit whatever the exit (the trap), the settings set as `flowcutctl
# settings set` sets them and put back, the clock of a run (second N after
# its t0), and lab/measure.py's sampler around each stream.
#
#   m_init PREFIX          root check, names, the trap; sets L run lab ctl out
#   m_up                   the lab, up and started
#   m_setting KEY VALUE    set one setting, wait until flowcutd applied it,
#                          remember the old value (m_restore puts them back)
#   m_t0 [DELAY]           a run's t0: now + DELAY (default 0.5) seconds
#   m_at N                 sleep until second N of the run
#   m_record_start FILE SECS / m_record_stop   the sampler (measure.py record)
#   m_pids                 sets fcd_pid npu_pid srv_pid (an anchor process in
#                          the server's namespace, for its counters)
#   m_idle_floor [S]       flowcutd's and flowcut-npu's CPU with no traffic
#
# Environment: BUILD (default build), OUT (where the PNG and JSON go by
# default, default $BUILD/lab), M_KEEP=1 keeps the run's samples (its
# temporary folder, named at exit).
set -u
m_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$m_here/.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
lab=$m_here/lab.sh
ctl=$BUILD/flowcutctl
measure=$m_here/measure.py
OUT=${OUT:-$BUILD/lab}
m_saved=()
m_rec=

say() { echo "$*" >&2; }
ex() { "$lab" exec "$L" "$@"; }
fctl() { "$ctl" --link "/run/flowcut-lab/$L/link" "$@"; }
counter() { fctl --json counters --all | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"; }
now() { date +%s.%N; }
num() { sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$1"; }	# 1234567 -> 1,234,567

m_cleanup() {
	[ -n "$m_rec" ] && kill "$m_rec" 2>/dev/null
	"$lab" down "$L" >/dev/null 2>&1
	if [ -n "${M_KEEP:-}" ]; then say "kept: $m_tmp"; else rm -rf "$m_tmp"; fi
}

m_init() { # prefix
	if [ "$(id -u)" -ne 0 ]; then
		say "$1: the lab needs root (network namespaces)"
		exit 2
	fi
	for p in "$ctl" "$BUILD/flowcutd" "$BUILD/flowcut-npu"; do
		[ -x "$p" ] || { say "$1: $p is not built (make build)"; exit 2; }
	done
	command -v gnuplot >/dev/null || { say "$1: no gnuplot (scripts/deps.sh installs gnuplot-nox)"; exit 2; }
	L=$1$$
	run=/run/flowcut-lab/$L
	m_tmp=$(mktemp -d "/tmp/$L.XXXX")
	mkdir -p "$OUT"
	trap m_cleanup EXIT
	trap 'say "$1: interrupted"; exit 130' INT TERM
}

m_up() {
	if ! { "$lab" up "$L" && "$lab" start "$L"; } >"$m_tmp/up.log" 2>&1; then
		say "the lab did not come up:"
		tail -20 "$m_tmp/up.log" >&2
		return 1
	fi
}

# flowcutd's stats (written once a second): one member, read with python's json
fcd_stat() { python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): d = d[k]
print(str(d).lower() if isinstance(d, bool) else d)' "$run/flowcutd.json" "$1" 2>/dev/null; }
# cuts counted by flowcutd so far, whatever their trigger: "in_hardware on_host"
cuts() { python3 -c 'import json,sys; c = json.load(open(sys.argv[1]))["cuts"]
print(sum(v["in_hardware"] for v in c.values()), sum(v["on_host"] for v in c.values()))' "$run/flowcutd.json"; }

m_setting() { # key value
	local key=$1 want=$2 old got
	old=$("$ctl" --settings "$run/settings.conf" --json settings |
		python3 -c 'import json,sys; v = json.load(sys.stdin)[sys.argv[1]]
print(("on" if v else "off") if isinstance(v, bool) else v)' "$key") || return 1
	[ "$old" = "$want" ] && return 0	# a save would apply them all again
	m_saved+=("$key=$old")
	"$ctl" --settings "$run/settings.conf" settings set "$key" "$want" >/dev/null || return 1
	case "$want" in on) want=true ;; off) want=false ;; esac
	for _ in $(seq 50); do
		got=$(fcd_stat "settings.$key")
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	say "flowcutd did not apply $key = $2 (its stats say ${got:-nothing})"
	return 1
}

# puts back every setting m_setting changed, the first value each had
m_restore() {
	local i kv
	for ((i = ${#m_saved[@]} - 1; i >= 0; i--)); do
		kv=${m_saved[$i]}
		"$ctl" --settings "$run/settings.conf" settings set "${kv%%=*}" "${kv#*=}" >/dev/null ||
			say "could not put back ${kv%%=*} = ${kv#*=}"
	done
	m_saved=()
}

m_t0() { t0=$(awk -v n="$(now)" -v d="${1:-0.5}" 'BEGIN { printf "%.3f", n + d }'); }
m_at() { # second N of the run
	local d
	d=$(awk -v t="$t0" -v s="$1" -v n="$(now)" 'BEGIN { d = t + s - n; printf "%.3f", (d > 0 ? d : 0) }')
	sleep "$d"
}
m_elapsed() { awk -v t="$t0" -v n="$(now)" 'BEGIN { printf "%.1f", n - t }'; }

m_pids() {
	fcd_pid=$(cat "$run/flowcutd.pid") npu_pid=$(cat "$run/npu.pid")
	if [ -z "${srv_pid:-}" ] || ! kill -0 "$srv_pid" 2>/dev/null; then
		# an anchor in the server's namespace: its /proc/PID/net/dev is s0's
		"$lab" exec "$L" server sleep 86400 &
		srv_pid=$!
		disown "$srv_pid"	# lab.sh down ends it
		for _ in $(seq 50); do grep -q ' s0:' "/proc/$srv_pid/net/dev" 2>/dev/null && break; sleep 0.1; done
	fi
}

# flowcutd's and flowcut-npu's CPU with no traffic, over $1 seconds (default
# 5): the floor their figures under load stand on.  Sets idle_fcd idle_npu
# (% of the machine, as measure.py counts).
m_idle_floor() {
	local secs=${1:-5} a b
	m_pids
	ticks() { awk '{ sub(/.*\) /, ""); split($0, v, " "); print v[12] + v[13] }' "/proc/$1/stat"; }
	a="$(ticks "$fcd_pid") $(ticks "$npu_pid")"
	sleep "$secs"
	b="$(ticks "$fcd_pid") $(ticks "$npu_pid")"
	# shellcheck disable=SC2034	# for the caller
	read -r idle_fcd idle_npu < <(awk -v a="$a" -v b="$b" -v s="$secs" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" \
		'BEGIN { split(a, x); split(b, y); d = s * hz * n / 100
		         printf "%.2f %.2f\n", (y[1] - x[1]) / d, (y[2] - x[2]) / d }')
}

m_record_start() { # file secs
	m_pids
	python3 "$measure" record --out "$1" --t0 "$t0" --secs "$2" --ctl "$ctl" \
		--link "/run/flowcut-lab/$L/link" --host-pid "$fcd_pid" --server-pid "$srv_pid" \
		--flowcutd-pid "$fcd_pid" --npu-pid "$npu_pid" 2>>"$m_tmp/record.log" &
	m_rec=$!
}
m_record_stop() {
	[ -n "$m_rec" ] || return 0
	kill "$m_rec" 2>/dev/null
	wait "$m_rec" 2>/dev/null
	m_rec=
}
# the window's figures as shell variables (measure.py window's names)
m_window() { # file from to
	eval "$(python3 "$measure" window "$@")"
}

# the machine, for the JSON: "N cores, model, kernel"
m_machine() {
	echo "$(nproc) cores, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)," \
	     "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)"
}
