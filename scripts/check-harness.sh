#!/usr/bin/env bash
# Prove that the runner catches what it must: a failing test and a kernel
# WARNING must each make a run fail, with the reason shown. Each case boots
# the kernel with one deliberate test laid over the suite and run alone.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-fast}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/root/tests"
${CC:-cc} -static -O2 -Wall -I"$KTREE/tools/testing/selftests" \
	-o "$stage/root/tests/deliberate_fail_test" \
	"$TOP/tests/harness/deliberate_fail_test.c"
cp "$TOP/tests/harness/deliberate_warn_test" "$stage/root/tests/"
"$TOP/scripts/mkinitramfs.sh" --overlay "$stage/root" "$stage/overlay.cpio.gz"

# Run one deliberate test; the run must fail and say $2.
expect_failure() {
	local name=$1 what=$2 out rc=0
	out=$(TESTS=$name "$TOP/scripts/test.sh" --extra "$stage/overlay.cpio.gz" "$flavour" 2>&1) || rc=$?
	if [ "$rc" = 0 ] || ! grep -q -- "$what" <<<"$out"; then
		printf '%s\n' "$out" >&2
		die "$name did not fail the run with '$what'"
	fi
	log "$name failed the run as it must:"
	grep -A 2 -- "$what" <<<"$out" | head -n 3 | sed 's/^/    /' >&2
}

expect_failure deliberate_fail_test "FAIL deliberate_fail_test"
expect_failure deliberate_warn_test "kernel WARNING report"
log "the runner catches failing tests and kernel warnings"
