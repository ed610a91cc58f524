#!/usr/bin/env bash
# Run the test suite in the guest on each kernel flavour given, and the
# mm selftests categories in MM_SUBSET if set, then print one closing line
# for all of them. Exits non-zero if any test failed, a
# guest timed out or crashed, or a kernel log holds a warning, BUG, Oops,
# lockdep, KASAN or kmemleak report.
set -euo pipefail
. "$(dirname "$0")/common.sh"

extra=
if [ "${1:-}" = --extra ]; then
	extra=$2
	shift 2
fi

# Where run-guest.sh writes the logs (LOGS, if set).
logs=${LOGS:-$BUILD/logs}
total_pass=0 total_fail=0 total_skip=0 bad=0
for flavour in "$@"; do
	rc=0
	"$TOP/scripts/run-guest.sh" "$flavour" test ${extra:+"$extra"} || rc=$?
	[ "$rc" = 0 ] || { log "$flavour: guest exited $rc"; bad=1; }
	line=$("$TOP/scripts/ktap-summary.sh" "$logs/$flavour-test.out" "$flavour" | tee /dev/stderr | tail -n 1) || bad=1
	if ! "$TOP/scripts/check-log.sh" "$logs/$flavour-test.console"; then
		log "$flavour: kernel log is not clean: $logs/$flavour-test.console"
		bad=1
	fi
	read -r p _ f _ s _ <<<"${line#*: }"
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
	# The kernel's own mm selftests, the categories in MM_SUBSET.
	[ -n "${MM_SUBSET:-}" ] || continue
	rc=0
	line=$("$TOP/scripts/mm-selftests.sh" run "$flavour" "$MM_SUBSET" | tee /dev/stderr | tail -n 1) || rc=$?
	[ "$rc" = 0 ] || { log "$flavour: mm selftests failed"; bad=1; }
	read -r p _ f _ s _ <<<"${line#*: }"
	total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
done
[ "$bad" = 0 ] || [ "$total_fail" -gt 0 ] || total_fail=1
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$bad" = 0 ] && [ "$total_fail" = 0 ]
