#!/usr/bin/env bash
# Run the test suite in the guest on each kernel flavour given, then
#  - the categories of the kernel's mm selftests in MM_SUBSET, if set, and
#  - on the flavours listed in HOSTROOT_TEST, tests/hostroot/hostroot_test.sh
#    in a guest on the host's root file system (unmodified Debian programs),
# and print one closing line for all of them. Exits non-zero if any test
# failed, a guest timed out or crashed, or a kernel log holds a warning,
# BUG, Oops, lockdep, KASAN or kmemleak report.
set -euo pipefail
. "$(dirname "$0")/common.sh"

# --save FILE: keep this run's counts and failures in FILE and print them
# as a part, not as the closing line; --add FILE (repeatable): count a
# saved part in, as make test does with the fast kernel's part.
# --mm-start FLAVOUR: only start FLAVOUR's mm selftests (MM_SUBSET) in
# the background and return; --mm-started FLAVOUR: they were, wait for
# them instead of starting them.
extra= save= adds=() started= mm_only=
while [ $# -gt 0 ]; do
	case "$1" in
	--mm-start) mm_only=$2; shift 2 ;;
	--mm-started) started="$started $2"; shift 2 ;;
	--extra) extra=$2; shift 2 ;;
	--save) save=$2; shift 2 ;;
	--add) adds+=("$2"); shift 2 ;;
	*) break ;;
	esac
done

[ $# -gt 0 ] || [ ${#adds[@]} -gt 0 ] || [ -n "$mm_only" ] ||
	die "usage: test.sh [--extra INITRD] [--save FILE] [--add FILE]... [--mm-start|--mm-started FLAVOUR] FLAVOUR..."

# Where host-boot-guest.sh writes the logs (LOGS, if set).
logs=${LOGS:-$BUILD/logs}
mkdir -p "$logs"

# What must run: the manifest of the tree under test, made from its
# sources (scripts/manifest.sh; tests/manifest for all series, a smaller
# one for the base alone), or MSHAREFS_MANIFEST (make check-harness),
# narrowed to the programs matching MSHAREFS_TEST_ONLY, comma-separated
# globs, if set.
manifest=$logs/manifest
narrowed=
if [ -n "${TESTS:-}" ]; then
	log "TESTS=$TESTS is not read: MSHAREFS_TEST_ONLY narrows the suite"
fi
only=${MSHAREFS_TEST_ONLY:-}
selected() {
	local - g
	set -f
	for g in ${only//,/ }; do
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $1 == $g ]] && return 0
	done
	return 1
}
# Made first, into a file of its own: a manifest.sh that fails stops the
# run here, with its own message, not as an empty manifest.
if [ -n "${MSHAREFS_MANIFEST:-}" ]; then
	cp "$MSHAREFS_MANIFEST" "$manifest.all"
else
	"$TOP/scripts/manifest.sh" >"$manifest.all" ||
		die "scripts/manifest.sh failed: no manifest of the tree under test"
fi
while read -r set prog n src; do
	case "$set" in '#'* | '') continue ;; esac
	[ -z "$only" ] || [ "$set" != suite ] || selected "$prog" || continue
	echo "$set $prog $n $src"
done <"$manifest.all" >"$manifest"
if [ -n "$only" ]; then
	narrowed="MSHAREFS_TEST_ONLY=$only narrows the suite to $(awk '$1 == "suite" { printf "%s%s", sep, $2; sep = " " }' "$manifest")"
	log "$narrowed"
	grep -q '^suite ' "$manifest" || die "MSHAREFS_TEST_ONLY=$only matches no program of the manifest"
fi

# Seconds since the last call, as a phase of make test's table.
phase_start=$(date +%s)
phase() {
	local now
	now=$(date +%s)
	phase_time "$1" $((now - phase_start))
	phase_start=$now
}
total_pass=0 total_fail=0 total_skip=0 bad=0
# What went wrong, repeated just above the closing line so that the tail
# of a CI log names the failing tests.
failures=()

# Show a summary's output and remember its failure lines, labelled.
summarise() {
	local label=$1 out=$2 line
	printf '%s\n' "$out" >&2
	while IFS= read -r line; do
		failures+=("$label: $line")
	done < <(grep -E '^(ktap|mm): ' <<<"$out" | grep -v '^ktap: SKIP' || true)
}

# Record a problem that is not a test result (guest exit, dirty log).
problem() {
	log "$*"
	failures+=("$*")
	bad=1
}

# Add the counts of a "[label: ]N passed, N failed, N skipped" line.
count() {
	local p f s
	read -r p _ f _ s _ <<<"${1#*: }"
	total_pass=$((total_pass + ${p:-0}))
	total_fail=$((total_fail + ${f:-0}))
	total_skip=$((total_skip + ${s:-0}))
}

# The suite in one guest, or with SUITE_GUESTS=2 in two guests side by
# side: one runs the programs tests/suite-split names, the other the rest
# of the manifest's. Their outputs are joined for the summary, which
# checks the manifest; each guest must finish and have a clean log on its
# own. make test does not split: on a CI host, two debug guests of four
# vCPUs each on two CPUs took 2,059 s against one guest's 1,568 s, and a
# test of 64 processes ran past its 900 s limit (a vCPU that holds a
# spinlock is preempted by the host while the others spin on it).
suite() {
	local flavour=$1 rc=0 out part
	local -a parts=("$only")
	rm -f "$logs/$flavour-test.out" "$logs/$flavour-test.console"
	if [ "${SUITE_GUESTS:-1}" = 2 ] && [ -z "$only" ]; then
		parts=("$(split_programs in)" "$(split_programs out)")
	fi
	if [ ${#parts[@]} = 1 ]; then
		MSHAREFS_TESTS=$only "$TOP/scripts/host-boot-guest.sh" "$flavour" test ${extra:+"$extra"} || rc=$?
		[ "$rc" = 0 ] || problem "$flavour: guest exited $rc"
	else
		for part in 1 2; do
			rm -rf "$logs/suite-$part"
			LOGS=$logs/suite-$part MSHAREFS_TESTS=${parts[part - 1]} \
				"$TOP/scripts/host-boot-guest.sh" "$flavour" test ${extra:+"$extra"} &
			eval "pid_$part=$!"
		done
		for part in 1 2; do
			rc=0
			eval "wait \$pid_$part" || rc=$?
			[ "$rc" = 0 ] || problem "$flavour: suite guest $part exited $rc"
			grep -q '^# msharefs-guest-done' "$logs/suite-$part/$flavour-test.out" ||
				problem "$flavour: suite guest $part did not finish"
			cat "$logs/suite-$part/$flavour-test.out" >>"$logs/$flavour-test.out"
			cat "$logs/suite-$part/$flavour-test.console" >>"$logs/$flavour-test.console"
			if ! "$TOP/scripts/check-log.sh" "$logs/suite-$part/$flavour-test.console"; then
				problem "$flavour: kernel log is not clean: $logs/suite-$part/$flavour-test.console"
			fi
		done
	fi
	out=$("$TOP/scripts/ktap-summary.sh" --manifest "$manifest" --set suite \
		"$logs/$flavour-test.out" "$flavour") || bad=1
	summarise "$flavour" "$out"
	if [ ${#parts[@]} = 1 ] && ! "$TOP/scripts/check-log.sh" "$logs/$flavour-test.console"; then
		problem "$flavour: kernel log is not clean: $logs/$flavour-test.console"
	fi
	count "$(tail -n 1 <<<"$out")"
}

# split_programs in|out: the manifest's suite programs that
# tests/suite-split names, or those it does not, comma-separated.
split_programs() {
	awk -v want="$1" 'NR == FNR { if ($1 !~ /^#/ && NF) named[$1] = 1; next }
		$1 == "suite" && !seen[$2]++ && ((want == "in") == ($2 in named)) {
			printf "%s%s", sep, $2; sep = ","
		}' "$TOP/tests/suite-split" "$manifest"
}

# The mm selftests run in a guest of their own beside the suite's: each
# guest leaves most of a CPU idle (measured: the two in sequence took 23
# of make test's minutes on the debug kernel), and their logs are apart.
mm_start() {
	local k=$1
	rm -f "$logs/$k-mm.rc"
	date +%s >"$logs/$k-mm.start"
	{
		rc=0
		"$TOP/scripts/mm-selftests.sh" run --quick "$k" "$MM_SUBSET" \
			>"$logs/$k-mm.summary" 2>"$logs/$k-mm.log" || rc=$?
		echo "$rc" >"$logs/$k-mm.rc"
	} &
}

# Wait for the mm selftests of @flavour, started here or, with
# --mm-started, by the caller (make test starts the debug kernel's before
# its stress and outside tests): their .rc file says they are done.
mm_finish() {
	local flavour=$1 rc out
	while [ ! -s "$logs/$flavour-mm.rc" ]; do
		sleep 5
	done
	rc=$(cat "$logs/$flavour-mm.rc")
	phase_time "mm selftests $flavour (beside the other guests)" \
		$(($(date +%s) - $(cat "$logs/$flavour-mm.start")))
	cat "$logs/$flavour-mm.log" >&2
	out=$(cat "$logs/$flavour-mm.summary")
	summarise "$flavour mm" "$out"
	[ "$rc" = 0 ] || problem "$flavour: mm selftests failed"
	count "$(tail -n 1 <<<"$out")"
}

if [ -n "$mm_only" ]; then
	[ -n "${MM_SUBSET:-}" ] || die "--mm-start needs MM_SUBSET"
	mm_start "$mm_only"
	exit 0
fi

hostroot() {
	local flavour=$1 rc=0 out dir=$logs/hostroot
	mkdir -p "$dir"
	rm -f "$dir/$flavour-guest.out" "$dir/$flavour-guest.console"
	# PostgreSQL, dpkg and a compiler under emulation: a slow host has
	# taken 900 s, the fast kernel's usual limit.
	GUEST_TIMEOUT=${GUEST_TIMEOUT:-1500} GUEST_ROOT=host LOGS=$dir \
		"$TOP/scripts/host-guest-cmd.sh" "$flavour" "" \
		'echo "# msharefs-runner: start hostroot_test"
		sh /opt/msharefs/tests/hostroot/hostroot_test.sh
		echo "# msharefs-runner: hostroot_test exit=$?"' >/dev/null || rc=$?
	[ "$rc" = 0 ] || problem "$flavour: host-root guest exited $rc: $dir"
	out=$("$TOP/scripts/ktap-summary.sh" --manifest "$manifest" --set hostroot \
		"$dir/$flavour-guest.out" "$flavour hostroot") || bad=1
	summarise "$flavour hostroot" "$out"
	grep '^# \(postgres\|hostroot\):' "$dir/$flavour-guest.out" >&2 || true
	count "$(tail -n 1 <<<"$out")"
}

for f in ${adds[@]+"${adds[@]}"}; do
	while IFS= read -r line; do
		case "$line" in
		"counts "*) read -r _ p fl sk b <<<"$line"
			total_pass=$((total_pass + p)) total_fail=$((total_fail + fl))
			total_skip=$((total_skip + sk))
			[ "$b" = 0 ] || bad=1 ;;
		"failure "*) failures+=("${line#failure }") ;;
		esac
	done <"$f"
done

for flavour in "$@"; do
	case " $started " in
	*" $flavour "*) ;;
	*) [ -z "${MM_SUBSET:-}" ] || mm_start "$flavour" ;;
	esac
	suite "$flavour"
	phase "suite $flavour"
	if [ -n "${MM_SUBSET:-}" ]; then
		mm_finish "$flavour"
		phase "waiting for the mm selftests $flavour"
	fi
	case " ${HOSTROOT_TEST:-} " in
	*" $flavour "*) hostroot "$flavour"; phase "host-root $flavour" ;;
	esac
done
if [ -n "$save" ]; then
	{
		echo "counts $total_pass $total_fail $total_skip $bad"
		[ ${#failures[@]} = 0 ] || printf 'failure %s\n' "${failures[@]}"
	} >"$save"
	echo "part ($*), counted in at the end: $total_pass passed, $total_fail failed, $total_skip skipped"
	[ "$bad" = 0 ] && [ "$total_fail" = 0 ]
	exit
fi
[ "$bad" = 0 ] || [ "$total_fail" -gt 0 ] || total_fail=1
phase_table
[ -z "$narrowed" ] || echo "narrowed: $narrowed"
[ "${#failures[@]}" = 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$bad" = 0 ] && [ "$total_fail" = 0 ]
