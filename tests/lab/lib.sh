# shellcheck shell=bash
# What the lab suites (tests/lab/test_lab.sh, tests/lab/test_real.sh) share:
# sourced, never run.  The suite then defines its tests as functions, lists
# them in the array `tests`, and calls lab_suite:
#
#   tests=("NAME|CMD" "NAME|SECS|CMD" ...)   SECS: the test's hard time limit
#                                            (default LAB_TIMEOUT, 60)
#   lab_suite PREFIX [per-test]
#
# Each test runs in a lab of its own (lab/lab.sh up + start), in a child
# bash under `timeout`, and the lab is torn down after it whether it passed,
# failed or was killed.  The lab is named PREFIX<pid>, or with "per-test"
# PREFIX<pid>-<n> (a name of its own for every test).  Output: one
# "ok - NAME", "not ok - NAME" or "ok - NAME # SKIP why" line per test
# (tests/run.sh counts them), "# ..." lines for figures.  ONLY=pattern runs
# the tests whose name matches; TRACE=1 runs them under bash -x.
#
# The child bash gets every function defined so far and the variables named
# in LAB_VARS (L run lab ctl top BUILD, plus any the suite adds).  A suite
# may define lab_on_fail (run in the lab of a test that failed, before it is
# torn down) and lab_at_exit (run once at the end, also when interrupted),
# redefine lab_down, and set LAB_TIMES=1 (each test's duration as a "#" line).
set -u
lib_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$lib_here/../.." && pwd)
export BUILD=${BUILD:-$top/build}
case "$BUILD" in /*) ;; *) BUILD=$top/$BUILD ;; esac
lab=$top/lab/lab.sh
ctl=$BUILD/flowcutctl
LAB_VARS=${LAB_VARS:-}

say() { echo "# $*"; }
ex() { "$lab" exec "$L" "$@"; }
rx() { ex host cat "/sys/class/net/$1/statistics/rx_packets"; }	# frames the host took in
srv_rx() { ex server cat /sys/class/net/s0/statistics/rx_packets; }
counter() { "$ctl" --link "/run/flowcut-lab/$L/link" --json counters --all | sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p"; }
conns() { "$ctl" --link "/run/flowcut-lab/$L/link" conns; }
cfg() { "$ctl" --link "/run/flowcut-lab/$L/link" --json cfg | sed -n 's/.*"fw_cfg": \([0-9]*\).*/\1/p'; }

lab_up() { "$lab" down "$L" >/dev/null 2>&1; "$lab" up "$L" && "$lab" start "$L"; }
lab_down() { "$lab" down "$L" >/dev/null 2>&1; }
lab_at_exit() { :; }

# waits (at most $1 tenths of a second) until "$2..." succeeds
wait_for() {
	local n=$1
	shift
	for _ in $(seq "$n"); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
	return 1
}

# kills a daemon (its pid file) and waits until it is gone, its TAPs free
kill_and_wait() {
	local pid
	pid=$(cat "$1")
	kill -9 "$pid"
	wait_for 50 bash -c "! kill -0 $pid"
}

# flowcutd has programmed a coprocessor a second time
reprogrammed() { wait_for 50 bash -c "[ \$(grep -c programmed $run/flowcutd.log) -ge 2 ]"; }

# runs "${tests[@]}" (see the top of this file), which the suite sets
# shellcheck disable=SC2154
lab_suite() { # prefix [per-test]
	local base=$1$$ per=${2:-} t name cmd secs n=0 t0
	L=$base
	run=/run/flowcut-lab/$L
	if [ "$(id -u)" -ne 0 ] || ! ip netns add "$L-probe" 2>/dev/null; then
		for t in "${tests[@]}"; do echo "ok - ${t%%|*} # SKIP needs root and network namespaces"; done
		exit 0
	fi
	ip netns del "$L-probe"
	trap 'lab_down; lab_at_exit' EXIT
	for t in "${tests[@]}"; do
		n=$((n + 1))
		name=${t%%|*}
		cmd=${t#*|}
		secs=${LAB_TIMEOUT:-60}
		case "$cmd" in [0-9]*"|"*) secs=${cmd%%|*}; cmd=${cmd#*|} ;; esac
		# ONLY=pattern runs the tests whose name matches (for debugging)
		case "$name" in *${ONLY:-}*) ;; *) continue ;; esac
		if [ "$per" = per-test ]; then
			L=$base-$n
			run=/run/flowcut-lab/$L
		fi
		t0=$SECONDS
		# shellcheck disable=SC2086
		if lab_up >"/tmp/$base.up.log" 2>&1; then
			if timeout "$secs" bash ${TRACE:+-x} -c "$(declare -f); $(declare -p L run lab ctl top BUILD $LAB_VARS); $cmd"; then
				echo "ok - $name"
			else
				echo "not ok - $name"
				if declare -F lab_on_fail >/dev/null; then lab_on_fail 2>&1 | sed 's/^/#   /'; fi
				sed 's/^/#   /' "$run/flowcutd.log" 2>/dev/null | tail -5
			fi
		else
			echo "not ok - $name"
			sed 's/^/#   /' "/tmp/$base.up.log" | tail -10
		fi
		lab_down
		[ -n "${LAB_TIMES:-}" ] && say "($name: $((SECONDS - t0)) s)"
	done
	rm -f "/tmp/$base.up.log"
}
