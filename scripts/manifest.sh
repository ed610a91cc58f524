#!/usr/bin/env bash
# The manifest of what make test must run: every test program, where it
# runs and how many tests it must plan, made from the sources.
#   manifest.sh          print it
#   manifest.sh --write  write tests/manifest
#   manifest.sh --check  fail if tests/manifest differs from the sources
#   manifest.sh --entry SET PROGRAM SOURCE   one line (make check-harness)
#
# A kselftest harness program plans one test per TEST(), TEST_SIGNAL(),
# TEST_F*() it registers, times the variants of its fixture. The source is
# run through the preprocessor with the harness's include guard set, so
# that #if blocks and comments are gone but the registering macros stay
# as text to count. A shell test plans what its plan line says.
# Lines: "SET PROGRAM TESTS SOURCE"; SET is suite (the guest's /tests,
# run by guest/in-guest-init) or hostroot (run in the host-root guest).
# A SOURCE under tools/testing/selftests is in the kernel tree: the
# kernel's msharefs selftests, which come with the series. So a tree of
# the base series alone (make test-base) has the base's tests, and the
# manifest scripts/test.sh runs by is made from the tree it tests;
# tests/manifest, checked by make test, is that of all series.
set -euo pipefail
. "$(dirname "$0")/common.sh"

hdrs=$BUILD/obj-headers/usr/include
manifest=$TOP/tests/manifest

# Number of tests a kselftest harness source registers.
harness_tests() {
	local src=$1
	[ -d "$hdrs" ] || die "no UAPI headers in $hdrs: run 'make headers'"
	grep -qE '^TEST_HARNESS_MAIN|test_harness_run\(' "$src" ||
		die "$src: not a kselftest harness program"
	${CC:-cc} -E -P -D_GNU_SOURCE -D__KSELFTEST_HARNESS_H \
		-I"$KTREE/tools/testing/selftests/msharefs" \
		-I"$KTREE/tools/testing/selftests" -I"$KTREE" \
		-I"$TOP/lib" -isystem "$hdrs" "$src" |
		tr '\n' ' ' |
		grep -oE '\<(TEST|TEST_SIGNAL|TEST_F|TEST_F_SIGNAL|TEST_F_TIMEOUT|FIXTURE_VARIANT_ADD)[[:space:]]*\([[:space:]]*[A-Za-z0-9_]+' |
		awk -F'(' '{
			m = $1; f = $2; gsub(/[[:space:]]/, "", m); gsub(/[[:space:]]/, "", f)
			if (m == "FIXTURE_VARIANT_ADD") variants[f]++
			else if (m == "TEST" || m == "TEST_SIGNAL") global++
			else tests[f]++
		}
		END {
			n = global
			for (f in tests) n += tests[f] * (f in variants ? variants[f] : 1)
			print n
		}'
}

# The plan of a shell test: its "1..N" or PLAN=N line. hostroot_test.sh
# plans N of its own plus what the preload shim's test, built from
# tests/preload/mshare_preload_test.c as mshare_preload_so_test, plans:
# "1..$((N + splan))".
script_tests() {
	local n own
	n=$(sed -nE 's/^PLAN=([0-9]+)$/\1/p; s/^echo "1\.\.([0-9]+)"$/\1/p' "$1" | head -n 1)
	own=$(sed -nE 's/^echo "1\.\.\$\(\(([0-9]+) \+ splan\)\)"$/\1/p' "$1" | head -n 1)
	if [ -n "$own" ]; then
		n=$((own + $(harness_tests "$TOP/tests/preload/mshare_preload_test.c")))
	fi
	[ -n "$n" ] || die "$1: no plan line (PLAN=N or echo \"1..N\")"
	echo "$n"
}

# Where a manifest's SOURCE is.
source_path() {
	case "$1" in
	tools/testing/selftests/*) echo "$KTREE/$1" ;;
	*) echo "$TOP/$1" ;;
	esac
}

entry() {
	local set=$1 prog=$2 src=$3 n
	case "$src" in
	*.c)	n=$(harness_tests "$(source_path "$src")") ;;
	*)	n=$(script_tests "$TOP/$src") ;;
	esac
	[ "$n" -gt 0 ] || die "$src: no tests"
	echo "$set $prog $n $src"
}

generate() {
	local src
	echo "# Made by scripts/manifest.sh from the sources: 'make manifest' rewrites it."
	echo "# set program tests source"
	for src in "$KTREE"/tools/testing/selftests/msharefs/*_test.c \
		"$TOP"/tests/*_test.c; do
		src=${src#"$KTREE/"}
		src=${src#"$TOP/"}
		entry suite "$(basename "$src" .c)" "$src"
	done
	entry suite mshare_cli_test tests/cli/mshare_cli_test.sh
	entry suite mshare_preload_test tests/preload/mshare_preload_test.c
	entry hostroot hostroot_test tests/hostroot/hostroot_test.sh
}

case "${1:-}" in
"")	generate ;;
--write) generate >"$manifest.new" && mv "$manifest.new" "$manifest"
	log "wrote $manifest: $(grep -c '^[a-z]' "$manifest") programs, $(awk '/^[a-z]/ { n += $3 } END { print n }' "$manifest") tests" ;;
--entry) shift; entry "$@" ;;
--check)
	if ! diff -u "$manifest" <(generate) >&2; then
		die "tests/manifest is not what the sources plan: check the change above, then 'make manifest'"
	fi ;;
*)	die "usage: manifest.sh [--write|--check|--entry SET PROGRAM SOURCE]" ;;
esac
