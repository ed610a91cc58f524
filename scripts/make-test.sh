#!/usr/bin/env bash
# make test: everything from nothing, each phase timed. The table of
# phase times comes right above the closing line (test.sh prints both),
# or alone if an earlier phase fails; build/logs/phases.tsv keeps it.
#
# The debug kernel builds at low priority while the fast kernel's guests
# run (check-harness, stress, the suite, the mm selftests, the host-root
# test): the guests leave much of the two CPUs idle, and the build takes
# what they leave. On the debug kernel, the stress and outside runs, which
# last a set time each, run side by side, then the suite. The debug
# kernel's mm selftests are in make release-check, not here: beside the
# debug suite they made it 60 % slower and the run longer than an hour.
# Knobs (from the Makefile): TEST_STRESS_SECONDS, TEST_OUTSIDE_SECONDS,
# MM_SUBSET (the fast kernel's mm selftests).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -z "${MSHAREFS_TEST_ONLY:-}" ] ||
	die "make test runs the whole suite: unset MSHAREFS_TEST_ONLY (make test-fast narrows)"
logs=$BUILD/logs
mkdir -p "$logs"
export MSHAREFS_PHASES=$logs/phases.tsv MSHAREFS_TEST_START
MSHAREFS_TEST_START=$(date +%s)
: >"$MSHAREFS_PHASES"
current=start build_pid=
trap 'rc=$?; [ -z "$build_pid" ] || kill -- -"$build_pid" 2>/dev/null
	[ "$rc" = 0 ] || { phase_table; log "failed in phase: $current"; }' EXIT

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

# The debug kernel, niced, in a session of its own (so that a failure
# elsewhere can stop all of it), its output in a log and its time in a
# phase of its own, which overlaps the fast kernel's guests.
debug_build() {
	setsid -w bash -c 'start=$(date +%s)
		nice -n 10 make --no-print-directory -C "$1" kernel-debug >"$2/debug-build.log" 2>&1
		rc=$?
		echo $(($(date +%s) - start)) >"$2/debug-build.time"
		exit $rc' debug-build "$TOP" "$logs" &
	build_pid=$!
}

step "packages" mk deps
step "kernel tree" mk build/linux/.git
step "source checks" "$TOP/scripts/check-sources.sh"
step "user space, initramfs" mk tests initramfs mm-selftests
step "fast kernel" mk kernel-fast
debug_build

step "check-harness" "$TOP/scripts/check-harness.sh" fast
step "stress fast" env STRESS_SECONDS="$TEST_STRESS_SECONDS" "$TOP/scripts/stress.sh" fast
current="fast suites"
# Failures here are counted in the closing line, after the debug part.
MM_SUBSET="$MM_SUBSET" HOSTROOT_TEST=fast "$TOP/scripts/test.sh" \
	--save "$logs/fast-part" fast || true

current="debug kernel"
start=$(date +%s)
if ! wait "$build_pid"; then
	build_pid=
	tail -n 30 "$logs/debug-build.log" >&2
	die "the debug kernel did not build: $logs/debug-build.log"
fi
build_pid=
phase_time "debug kernel (niced, beside the fast guests)" "$(cat "$logs/debug-build.time")"
phase_time "waiting for the debug kernel after them" $(($(date +%s) - start))

# Both last a set time, not a set amount of work: side by side, each
# still stresses the kernel for its whole time. Their guests keep apart
# logs (the outside run's in logs/outside) and build directories.
both() {
	local srun=$logs/debug-stress.run orun=$logs/debug-outside.run s=0 o=0 sp op
	env STRESS_SECONDS="$TEST_STRESS_SECONDS" "$TOP/scripts/stress.sh" debug \
		>"$srun" 2>&1 &
	sp=$!
	env OUTSIDE_SECONDS="$TEST_OUTSIDE_SECONDS" LOGS="$logs/outside" \
		"$TOP/scripts/outside.sh" debug >"$orun" 2>&1 &
	op=$!
	wait "$sp" || s=$?
	wait "$op" || o=$?
	cat "$srun" "$orun"
	[ "$s" = 0 ] || log "stress debug failed (exit $s)"
	[ "$o" = 0 ] || log "outside debug failed (exit $o)"
	[ "$s" = 0 ] && [ "$o" = 0 ]
}
step "stress and outside debug (side by side)" both
current="debug suites"
trap - EXIT
MM_SUBSET= exec "$TOP/scripts/test.sh" --add "$logs/fast-part" debug
