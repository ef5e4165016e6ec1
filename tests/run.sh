#!/usr/bin/env bash
# Runs every test; the last line is "N passed, N failed, N skipped".
# `tests/run.sh --fuzz` runs the fuzz targets alone (make fuzz: longer).
#
# A cmocka binary counts one test per case (TAP output); every other step
# counts as one test.  The fuzz run copies any crash it finds into
# tests/fuzz/regress/frame/ (commit it: the replay step then keeps it fixed)
# and fails.
set -u
export BUILD=${BUILD:-build}
FUZZ_SECS=${FUZZ_SECS:-10}
FUZZ_JOBS=${FUZZ_JOBS:-2}
pass=0 fail=0 skip=0
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

ok()   { pass=$((pass + 1)); echo "PASS $1"; }
bad()  { fail=$((fail + 1)); echo "FAIL $1"; [ -n "${2:-}" ] && sed "s/^/    /" "$2" | tail -"${3:-40}"; }
skipped() { skip=$((skip + 1)); echo "SKIP $1: $2"; }

# cmocka suite: one result per case
cmocka() { # name binary
	local name=$1 bin=$2 out n=0
	out=$(mktemp "$log/cmocka.XXXXXX")	# a name may hold any character: not the file's
	if [ ! -x "$bin" ]; then bad "$name (not built)"; return; fi
	local t0=$SECONDS
	CMOCKA_MESSAGE_OUTPUT=TAP "$bin" >"$out" 2>&1
	local rc=$?
	printf '%5d s  %s\n' $((SECONDS - t0)) "$name" >>"$log/times"
	local ln=0 from=1 own failed="" fstart=0 fend=0
	own=$(mktemp "$log/own.XXXXXX")
	# A failing case shows its own lines (from the case before it to its
	# "not ok": what it said) and those after it up to the next case (what
	# the suite found in its lab), not the tail of the whole output.
	shown() { # to
		[ -n "$failed" ] || return 0
		{ sed -n "${fstart},${fend}p" "$out" | tail -30
		  [ "$1" -gt "$fend" ] && sed -n "$((fend + 1)),$1p" "$out" | head -40; } >"$own"
		bad "$failed" "$own" 70
		failed=""
	}
	while read -r line; do
		ln=$((ln + 1))
		case "$line" in
		*"# SKIP "*) shown $((ln - 1))
			skipped "$name: ${line##*# SKIP }" "needs what this machine lacks (see the test)"
			n=$((n + 1)); from=$((ln + 1)) ;;
		"ok "*) shown $((ln - 1)); ok "$name: ${line#*- }"; n=$((n + 1)); from=$((ln + 1)) ;;
		"not ok "*) shown $((ln - 1))
			failed="$name: ${line#*- }" fstart=$from fend=$ln
			n=$((n + 1)); from=$((ln + 1)) ;;
		esac
	done <"$out"
	shown "$ln"
	if [ "$n" -eq 0 ] || { [ $rc -ne 0 ] && ! grep "^not ok" "$out" | grep -qv "# SKIP"; }; then
		bad "$name (exit $rc)" "$out"
	fi
}

# any command: one result
check() { # name command...
	local name=$1 out=$log/step.out
	shift
	local t0=$SECONDS
	if "$@" >"$out" 2>&1; then ok "$name"; else bad "$name" "$out"; fi
	printf '%5d s  %s\n' $((SECONDS - t0)) "$name" >>"$log/times"
}

# The unit tests ("program label" a line) and the fuzz targets: the
# Makefile's lists (its `unit` and `fuzz_target` lines), read once.
# MAKEFLAGS emptied: under `make test` the jobserver is not this make's.
units=$(MAKEFLAGS= make -s --no-print-directory print-units) && [ -n "$units" ] ||
	bad "the Makefile's unit tests (make print-units): none read"
fuzz_targets=$(MAKEFLAGS= make -s --no-print-directory print-fuzz) && [ -n "$fuzz_targets" ] ||
	bad "the Makefile's fuzz targets (make print-fuzz): none read"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

fuzz_only=''
[ "${1:-}" = --fuzz ] && fuzz_only=1
if [ -z "$fuzz_only" ]; then

for v in "" asan/ ubsan/; do
	tag=${v%/}; tag=${tag:-release}
	while read -r prog label <&3; do	# fd 3: the tests keep stdin
		[ -n "$prog" ] && cmocka "$label[$tag]" "$BUILD/${v}$prog"
	done 3<<<"$units"
	for t in $fuzz_targets; do
		check "fuzz $t: corpus and regressions replayed[$tag]" \
			"$BUILD/${v}fuzz_${t}_replay" tests/fuzz/corpus/$t tests/fuzz/regress/$t
	done
done

# the real coprocessor, in a network namespace of its own (root only)
cmocka "flowcut-npu on net_pcap" "$BUILD/test_npu"
# the binding against the real fast path and the real conntrack, in a namespace (root only)
cmocka "flowcutd binding" "$BUILD/test_driver"
# conntrack's posted I/O, the dump by mark, the event buffer, against the real conntrack (root only)
cmocka "fd_ct against conntrack" "$BUILD/test_ct"
# flowcut-ctgen's states made, counted and deleted in a namespace of its own (root only)
cmocka "flowcut-ctgen against conntrack" "$BUILD/test_ctgen_netns"
# the ruleset check against rulesets loaded in a namespace, listed by libnftables (root only)
cmocka "ruleset check on the real nftables" "$BUILD/test_rulecheck_nft"
# the appliance in the lab, with iperf3 streams (root only)
cmocka "lab" tests/lab/test_lab.sh
# issue 16's loop as a test: 60,000 offloaded, 10 s calm (no resync, under 1 % of a core) (root only)
cmocka "a many-connection lab, calm" tests/lab/test_scale.sh
# issue 16's SYN flood: offloaded streams kept, a cut in time, losses counted and reconciled (root only)
cmocka "calm under a SYN flood" tests/lab/test_flood.sh
# issue 19's wire on net_af_xdp: a flood past its rate, every frame accounted for at every stage (root only)
cmocka "the wire, accounted" tests/lab/test_wire.sh
# the same with real clients and servers: nginx, curl, dnsmasq, dig... (root only)
cmocka "real clients" tests/lab/test_real.sh
# TLS clients cut by a listed JA4 or JA3, through the inspector (root only)
cmocka "TLS fingerprints through the inspector" tests/lab/test_tls.sh
# a listed client that tries to slip past the inspector, each way, IPv4 and IPv6 (root only)
cmocka "the inspector holds against evasions" tests/lab/test_evade.sh
# spoofed segments aimed at others' connections, floods of segments, SYNs and listed hellos (root only)
cmocka "the inspector under spoofing and floods" tests/lab/test_ips_flood.sh
# issue 17's block lists as the tools write them: the real fail2ban's two jails by table and
# by pattern, a set made later, a never-cut address in a cut prefix (root only)
cmocka "block lists as the tools write them" tests/lab/test_lists.sh
# the operator's page in the lab: the real flowcut-web, headless Chromium, curl, Prometheus (root only)
cmocka "the page in the lab" tests/lab/test_web.sh
# the measurement scripts, run short: lab/cut.sh, lab/verdict.sh, lab/many.sh (root only)
cmocka "lab scripts" tests/lab/test_scripts.sh
export FC_PROGS=$BUILD/asan
cmocka "flowcut-npu on net_pcap[asan]" "$BUILD/test_npu"
unset FC_PROGS
# JA3 against tshark on hellos of real clients, in a namespace of its own (root only)
cmocka "tls fingerprints vs tshark" tests/tls/test_oracle.sh

# flowcut-web on a loopback port against a control-socket peer: curl, promtool, headless Chromium (no root)
cmocka "flowcut-web live" tests/web/test_web.sh
export FC_PROGS=$BUILD/asan
cmocka "flowcut-web live[asan]" tests/web/test_web.sh
unset FC_PROGS

# deploy/'s units: verify, exposure at most MEDIUM, restarts that never stop
cmocka "systemd units" tests/deploy/test_units.sh
# the man pages: no warning, lexgrog, their options the programs' getopt tables
cmocka "man pages" tests/pkg/test_man.sh
# flowcutctl web-secret [--make] on a secret file of the test's own folder (root)
cmocka "flowcutctl web-secret" tests/ctl/test_web_secret.sh
# the Debian package built, linted, installed, removed and purged here; make install/uninstall (root only)
cmocka "the Debian package and make install" tests/pkg/test_pkg.sh

check "every #include follows an arrow of the Makefile's table (make check-arrows)" make -s --no-print-directory check-arrows
check "check-arrows and the compiler refuse an include across a missing arrow" scripts/check-arrows.sh --self-test
check "flowcutd and flowcutctl link no DPDK" bash -c \
	'for p in flowcutd flowcutctl; do libs=$(ldd "$BUILD/$p") || exit 1
		! grep librte_ <<<"$libs" || { echo "$p links DPDK"; exit 1; }; done'
check "docs/counters.md names every counter and every wire figure" bash -c \
	'for c in $(sed -n "s/^\tX(\([A-Z_]*\), FC_CLS_.*/\1/p; s/^\tX(\([A-Z_]*\))\t.*/\1/p" include/flowcut/fc_defs.h); do
		grep -q "\`$c\`" docs/counters.md || { echo "missing: $c"; exit 1; }; done'
check "docs/counters.md has a row for every member of flowcutd's stats and of its inspector's, and no other" bash -c \
	'agree() { # what, the list, the sed of the rows of docs/counters.md that name it
		local list docs undocumented unknown
		list=$(sort <<<"$2")
		docs=$(sed -n "$3" docs/counters.md | grep -o "\`[a-z0-9_]*\`" | tr -d "\`" | sort)
		[ -n "$list" ] || { echo "$1: no list read"; return 1; }
		[ -n "$docs" ] || { echo "$1: no rows in docs/counters.md"; return 1; }
		undocumented=$(comm -23 <(echo "$list") <(echo "$docs"))
		unknown=$(comm -13 <(echo "$list") <(echo "$docs"))
		[ -z "$undocumented" ] || echo "$1: not in docs/counters.md:" $undocumented
		[ -z "$unknown" ] || echo "$1: in docs/counters.md, not in the list:" $unknown
		[ -z "$undocumented$unknown" ]
	}
	members="s/^\t\(COUNT\|OBJ\)(\([a-z0-9_]*\),.*/\2/p"
	rooms="s/^\tX([a-z]*, \([a-z0-9_]*\)).*/\1/p"	# each room'"'"'s list (fd_stats.h)
	agree "flowcutd (FLOWCUTD_STATS: its objects, the rooms'"'"' lists)" "$(sed -n "/^#define FLOWCUTD_STATS/,/^\$/$members" driver/report/fd_report.c
		sed -n "$rooms" driver/port/fd_relay.h driver/offload/fd_offload.h driver/cut/fd_cut.h \
			driver/cut/fd_watch.h driver/path/fd_rtcache.h driver/report/fd_report.h)" \
		"/^## flowcutd.s own/,/^### /s/^| \([^|]*\) |.*/\1/p"; top=$?
	agree "the inspector (FD_IPS_STATS, FD_INSPECT_WHYS, FD_INSPECT_FRAMES)" \
		"$(sed -n "$members" driver/ips/fd_ips.c
		   sed -n "s/^\tX([A-Z0-9_]*, \"\([a-z0-9_]*\)\"[,)].*/\1/p" driver/ips/fd_inspect.h)" \
		"/^### The inspector/,\$s/^| \([^|]*\) |.*/\1/p" && [ $top -eq 0 ]'
check "demo: the seed's truth table holds" "$BUILD/flowcut-fpdemo"
check "bench fastpath runs (small)" bash -c \
	"'$BUILD/flowcut-bench' fastpath --conns 5000 --frames 200000 | tee /dev/stderr | grep -q warning && exit 1 || exit 0"
check "bench cut runs (small): all 2,000 cut by one change, no state left" bash -c \
	"out=\$('$BUILD/flowcut-bench' cut --conns 2000) || exit 1; echo \"\$out\"
	grep -q 'cuts 2000 connections' <<<\"\$out\" && grep -q 'states left: 0' <<<\"\$out\""
check "bench ruleset runs (small): a ruleset change answered by a new revision first" bash -c \
	"out=\$('$BUILD/flowcut-bench' ruleset --conns 2000) || exit 1; echo \"\$out\"
	grep -q 'one ruleset change, 2000 connections offloaded' <<<\"\$out\" && grep -q 'new revision answered' <<<\"\$out\""

fi	# the fuzzers alone (--fuzz) from here

# The fuzzers last, FUZZ_JOBS at a time (2: this machine's cores; nothing
# timed runs beside them any more), each for FUZZ_SECS (10 in make test:
# every regression replayed above, shallow faults found; make fuzz runs
# them 300 s each); their results said in the Makefile's order.
fuzz_one() { # target: its run's exit status in $log/fuzz-$t.rc
	local t=$1 work=$log/fuzz-$1 maxlen=4096
	mkdir -p "$work/corpus" "$work/art"
	cp tests/fuzz/corpus/$t/* "$work/corpus/"
	[ $t = tls ] && maxlen=20000	# a hello of 16 KiB in records
	[ $t = rulecheck ] && maxlen=16384	# the fixtures' rulesets: 6 to 9 KiB
	"$BUILD/fuzz/fuzz_$t" -max_total_time="$FUZZ_SECS" -max_len=$maxlen \
		-artifact_prefix="$work/art/" "$work/corpus" >"$log/fuzz-$t.out" 2>&1
	echo $? >"$log/fuzz-$t.rc"
}
running=0 t0=$SECONDS
for t in $fuzz_targets; do
	[ -x "$BUILD/fuzz/fuzz_$t" ] || continue
	if [ "$running" -ge "$FUZZ_JOBS" ]; then wait -n; running=$((running - 1)); fi
	fuzz_one "$t" &
	running=$((running + 1))
done
wait
printf '%5d s  %s\n' $((SECONDS - t0)) "the fuzz targets, $FUZZ_JOBS at a time, ${FUZZ_SECS} s each" >>"$log/times"
for t in $fuzz_targets; do
	if [ ! -x "$BUILD/fuzz/fuzz_$t" ]; then
		skipped "fuzz $t" "no libFuzzer build (clang missing)"
	elif [ "$(cat "$log/fuzz-$t.rc" 2>/dev/null)" = 0 ]; then
		ok "fuzz $t for ${FUZZ_SECS}s ($(grep -o 'Done [0-9]* runs' "$log/fuzz-$t.out"))"
	else
		mkdir -p tests/fuzz/regress/$t
		cp "$log/fuzz-$t"/art/* tests/fuzz/regress/$t/ 2>/dev/null
		bad "fuzz $t: crash kept in tests/fuzz/regress/$t/" "$log/fuzz-$t.out"
	fi
done

# where the time went, the longest first (keep make test under 30 minutes)
echo "# the time each suite took, $SECONDS s in all:"
sort -rn "$log/times" 2>/dev/null | awk '$1 >= 5 { print "#  " $0; next }
	{ n++; s += $1 } END { if (n) printf "#  %5d s  %d steps of under 5 s each\n", s, n }'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
