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

extra=
if [ "${1:-}" = --extra ]; then
	extra=$2
	shift 2
fi

[ $# -gt 0 ] || die "usage: test.sh [--extra INITRD] FLAVOUR..."

# Where run-guest.sh writes the logs (LOGS, if set).
logs=${LOGS:-$BUILD/logs}
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

suite() {
	local flavour=$1 rc=0 out
	rm -f "$logs/$flavour-test.out" "$logs/$flavour-test.console"
	"$TOP/scripts/run-guest.sh" "$flavour" test ${extra:+"$extra"} || rc=$?
	[ "$rc" = 0 ] || problem "$flavour: guest exited $rc"
	out=$("$TOP/scripts/ktap-summary.sh" "$logs/$flavour-test.out" "$flavour") || bad=1
	summarise "$flavour" "$out"
	if ! "$TOP/scripts/check-log.sh" "$logs/$flavour-test.console"; then
		problem "$flavour: kernel log is not clean: $logs/$flavour-test.console"
	fi
	count "$(tail -n 1 <<<"$out")"
}

mm_subset() {
	local flavour=$1 rc=0 out
	out=$("$TOP/scripts/mm-selftests.sh" run --quick "$flavour" "$MM_SUBSET") || rc=$?
	summarise "$flavour mm" "$out"
	[ "$rc" = 0 ] || problem "$flavour: mm selftests failed"
	count "$(tail -n 1 <<<"$out")"
}

hostroot() {
	local flavour=$1 rc=0 out dir=$logs/hostroot
	mkdir -p "$dir"
	rm -f "$dir/$flavour-guest.out" "$dir/$flavour-guest.console"
	GUEST_ROOT=host LOGS=$dir "$TOP/scripts/guest.sh" "$flavour" "" \
		'echo "# msharefs-runner: start hostroot_test"
		sh /opt/msharefs/tests/hostroot/hostroot_test.sh
		echo "# msharefs-runner: hostroot_test exit=$?"' >/dev/null || rc=$?
	[ "$rc" = 0 ] || problem "$flavour: host-root guest exited $rc: $dir"
	out=$("$TOP/scripts/ktap-summary.sh" "$dir/$flavour-guest.out" "$flavour hostroot") || bad=1
	summarise "$flavour hostroot" "$out"
	grep '^# postgres:' "$dir/$flavour-guest.out" >&2 || true
	count "$(tail -n 1 <<<"$out")"
}

for flavour in "$@"; do
	suite "$flavour"
	[ -z "${MM_SUBSET:-}" ] || mm_subset "$flavour"
	case " ${HOSTROOT_TEST:-} " in
	*" $flavour "*) hostroot "$flavour" ;;
	esac
done
[ "$bad" = 0 ] || [ "$total_fail" -gt 0 ] || total_fail=1
[ "${#failures[@]}" = 0 ] || printf 'failed: %s\n' "${failures[@]}"
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$bad" = 0 ] && [ "$total_fail" = 0 ]
