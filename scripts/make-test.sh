#!/usr/bin/env bash
# make test: everything from nothing, each phase timed. The table of
# phase times comes right above the closing line (test.sh prints both),
# or alone if an earlier phase fails; build/logs/phases.tsv keeps it.
# Knobs (from the Makefile): TEST_STRESS_SECONDS, TEST_OUTSIDE_SECONDS,
# MM_SUBSET.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -z "${MSHAREFS_TEST_ONLY:-}" ] ||
	die "make test runs the whole suite: unset MSHAREFS_TEST_ONLY (make test-fast narrows)"
mkdir -p "$BUILD/logs"
export MSHAREFS_PHASES=$BUILD/logs/phases.tsv
: >"$MSHAREFS_PHASES"
trap 'rc=$?; [ "$rc" = 0 ] || { phase_table; log "failed in phase: $current"; }' EXIT

# step NAME CMD...: run one phase and record its time.
step() {
	local name=$1 start
	shift
	current=$name
	start=$(date +%s)
	"$@"
	phase_time "$name" $(($(date +%s) - start))
}

mk() { make --no-print-directory -C "$TOP" "$@"; }

step "packages" mk deps
step "kernel tree" mk build/linux/.git
step "source checks" "$TOP/scripts/check-sources.sh"
step "fast kernel" mk kernel-fast
step "debug kernel" mk kernel-debug
step "user space, initramfs" mk tests initramfs mm-selftests
step "check-harness" "$TOP/scripts/check-harness.sh" fast
step "stress fast" env STRESS_SECONDS="$TEST_STRESS_SECONDS" "$TOP/scripts/stress.sh" fast
step "stress debug" env STRESS_SECONDS="$TEST_STRESS_SECONDS" "$TOP/scripts/stress.sh" debug
step "outside debug" env OUTSIDE_SECONDS="$TEST_OUTSIDE_SECONDS" "$TOP/scripts/outside.sh" debug
current="suites"
MM_SUBSET="$MM_SUBSET" HOSTROOT_TEST=fast "$TOP/scripts/test.sh" fast debug
