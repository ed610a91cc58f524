#!/usr/bin/env bash
# Prove that the runner fails a run for each way a run can go wrong, and
# says why. Each boot lays deliberate programs (tests/harness) over the
# suite and runs only them, against a manifest made for them:
#  1. in one boot, each adding exactly one failure of its own:
#     a failing test; a program that crashes before its plan; a skip no
#     list allows; a program planning fewer tests than the manifest (an
#     empty "1..0", as a test binary replaced by an empty one prints); a
#     program of the manifest that is not there; the leak check of
#     msharefs_fs_test built with a deliberate leak;
#  2. a kernel WARNING while every test passes;
#  3. a kernel panic;
#  4. a guest that hangs (stopped by a short time limit).
# Logs: build/logs/check-harness/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-fast}
# Its runs are the deliberate programs alone: no phases of make test, no
# mm selftests or host-root test after them.
unset MSHAREFS_PHASES MM_SUBSET HOSTROOT_TEST
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
export LOGS=$BUILD/logs/check-harness
rm -rf "$LOGS"
mkdir -p "$LOGS" "$stage/root/tests"

cflags=(-static -O2 -Wall -D_GNU_SOURCE -I"$KTREE/tools/testing/selftests"
	-I"$KTREE" -isystem "$BUILD/obj-headers/usr/include")
for t in fail skip crash; do
	${CC:-cc} "${cflags[@]}" -o "$stage/root/tests/deliberate_${t}_test" \
		"$TOP/tests/harness/deliberate_${t}_test.c"
done
${CC:-cc} "${cflags[@]}" -DMSHARE_DELIBERATE_LEAK \
	-o "$stage/root/tests/deliberate_leak_test.bin" \
	"$KTREE/tools/testing/selftests/msharefs/msharefs_fs_test.c" -lpthread
for t in empty leak warn panic hang; do
	cp "$TOP/tests/harness/deliberate_${t}_test" "$stage/root/tests/"
done
"$TOP/scripts/mkinitramfs.sh" --overlay "$stage/root" "$stage/overlay.cpio.gz"

# The manifest of the deliberate programs: counts from their sources where
# they have one, else what a correct program would plan.
{
	"$TOP/scripts/manifest.sh" --entry suite deliberate_fail_test tests/harness/deliberate_fail_test.c
	"$TOP/scripts/manifest.sh" --entry suite deliberate_skip_test tests/harness/deliberate_skip_test.c
	for t in crash empty leak missing warn panic hang; do
		echo "suite deliberate_${t}_test 1 tests/harness/deliberate_${t}_test"
	done
} >"$stage/manifest"

# run GLOB [TIMEOUT]: the suite narrowed to GLOB; its output in $out.
run() {
	rc=0
	out=$(MSHAREFS_MANIFEST=$stage/manifest MSHAREFS_TEST_ONLY=$1 \
		GUEST_TIMEOUT=${2:-} "$TOP/scripts/test.sh" --extra "$stage/overlay.cpio.gz" \
		"$flavour" 2>&1) || rc=$?
	[ "$rc" != 0 ] || { printf '%s\n' "$out" >&2; die "the run of $1 passed"; }
}

# expect WHAT: the run's output must say WHAT.
expect() {
	if ! grep -q -- "$1" <<<"$out"; then
		printf '%s\n' "$out" >&2
		die "the run did not say '$1'"
	fi
	log "failed as it must: $(grep -m 1 -- "$1" <<<"$out")"
}

run deliberate_fail_test,deliberate_crash_test,deliberate_skip_test,deliberate_empty_test,deliberate_missing_test,deliberate_leak_test
expect "FAIL deliberate_fail_test: not ok 2 global.fails_on_purpose"
expect "deliberate_crash_test crashed or exited before its plan"
expect "unexpected SKIP deliberate_skip_test"
expect "deliberate_empty_test planned 0 tests, the manifest says 1"
expect "deliberate_missing_test did not run"
expect "FAIL deliberate_leak_test"
grep -q "in all 3 windows" "$LOGS/$flavour-test.out" ||
	die "the leak check failed, but not on its bounds: $LOGS/$flavour-test.out"
expect "^2 passed, 6 failed, 0 skipped$"
cp "$LOGS/$flavour-test.out" "$LOGS/$flavour-deliberate.out"

run deliberate_warn_test
expect "kernel WARNING report"
expect "^1 passed, 1 failed, 0 skipped$"

run deliberate_panic_test
expect "kernel panic report"
expect "the guest did not finish"

run deliberate_hang_test 60
expect "guest exited 124"
expect "the guest did not finish"
log "the runner fails a run for each of the 9 ways a run can go wrong"
