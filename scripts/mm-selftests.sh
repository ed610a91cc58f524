#!/usr/bin/env bash
# The kernel's own mm selftests (tools/testing/selftests/mm), built from
# the patched tree and run by their run_vmtests.sh in a guest that has the
# host's root file system (run_vmtests.sh needs bash and procps).
#
#   mm-selftests.sh build
#   mm-selftests.sh run [--all] [--quick] KERNEL [CATEGORIES]
#   mm-selftests.sh categories
#
# KERNEL is a build/obj-KERNEL: fast, debug, or base-fast and base-debug
# (the same configs without the series, see baseline-kernel.sh).
# CATEGORIES are run_vmtests.sh's (-t); the default is all of them.
# Tests in tests/mm-selftests/excluded (too slow under emulation, need
# hardware) never run; those in tests/mm-selftests/known-failures (they
# fail the same way without the series) run only with --all, which
# make mm-baseline uses for its table; those in tests/mm-selftests/slow
# are left out with --quick, which make test uses.
#
# run writes $LOGS/mm-KERNEL.tap, prints each failure and then
# "KERNEL mm: N passed, N failed, N skipped", and fails if a test failed,
# none passed, or the kernel log is not clean.
set -euo pipefail
. "$(dirname "$0")/common.sh"

out=$BUILD/mm-selftests
src=$KTREE/tools/testing/selftests/mm
lists=$TOP/tests/mm-selftests
logs=${LOGS:-$BUILD/logs}

# Each test binary gets a wrapper that runs it with a time limit
# (MM_TEST_TIMEOUT, default 300 s) unless ./skip-list names the run
# ("binary args", or just "binary" for every run of it): then it prints
# the reason and exits with KSFT_SKIP, which run_vmtests.sh reports.
wrap() {
	local bin=$1 name=${1##*/}

	mv "$bin" "$bin.real"
	cat >"$bin" <<EOF
#!/bin/sh
# Made by scripts/mm-selftests.sh: $name.real with a time limit.
run="$name\${*:+ \$*}"
if [ -f ./skip-list ]; then
	why=\$(awk -F'|' -v run="\$run" -v bin="$name" '
	/^#/ { next }
	{ t = \$1; sub(/[ \\t]+\$/, "", t); r = \$NF; sub(/^[ \\t]+/, "", r) }
	t == run || t == bin { print r; exit }' ./skip-list)
	if [ -n "\$why" ]; then
		echo "excluded by msharefs: \$why"
		exit 4
	fi
fi
start=\$(date +%s)
timeout -k 5 "\${MM_TEST_TIMEOUT:-300}" ./$name.real "\$@"
rc=\$?
echo "msharefs: \$run: exit \$rc after \$((\$(date +%s) - start)) s"
exit \$rc
EOF
	chmod +x "$bin"
}

build() {
	local f listed

	mkdir -p "$out"
	# The Makefile writes local_config.{h,mk} next to its sources.
	# Upstream's own compiler warnings go to a log, not the terminal.
	# Debian's 6.12 khugepaged.c uses KSFT_SKIP without including
	# kselftest.h (a backport slip, not ours to fix in the series):
	# define it as kselftest.h does.
	make -s -C "$src" OUTPUT="$out" -j"$JOBS" \
		KHDR_INCLUDES="-isystem $BUILD/obj-headers/usr/include -DKSFT_SKIP=4" \
		>"$out/build.log" 2>&1 || { cat "$out/build.log" >&2; die "the mm selftests did not build"; }
	cp "$src"/*.sh "$out/"
	# Scripts are left as they are, but for those a list names (a
	# wrapper can leave them out only by taking their place).
	listed=" $(grep -hv '^#' "$lists/excluded" "$lists/slow" |
		sed -n 's/^\([^ |]*\.sh\).*/\1/p' | tr '\n' ' ')"
	for f in "$out"/*; do
		case "$listed" in *" ${f##*/} "*) wrap "$f"; continue ;; esac
		case "$f" in
		*.sh | *.real | *.log | */skip-list) continue ;;
		# Scripts start it and killall it by name: left as it is.
		*/write_to_hugetlbfs) continue ;;
		esac
		[ -f "$f" ] && [ -x "$f" ] || continue
		# A wrapper whose binary make left alone stays.
		if [ -e "$f.real" ] && [ "$(head -c 2 "$f")" = '#!' ]; then
			continue
		fi
		wrap "$f"
	done
}

# Every run_vmtests.sh category.
categories() {
	sed -n 's/^[[:space:]]*CATEGORY="\([a-z_]*\)".*/\1/p' "$src/run_vmtests.sh" |
		sort -u | tr '\n' ' '
}

# The runs left out, as "test | reason" lines: the excluded ones, unless
# @all those that fail without the series too, and if @quick the slow ones.
skip_list() {
	local all=$1 quick=$2

	grep -hv '^#' "$lists/excluded" || true
	if [ "$all" = 0 ]; then
		grep -hv '^#' "$lists/known-failures" |
			sed 's/|[[:space:]]*/| fails without the series too: /' || true
	fi
	if [ "$quick" = 1 ]; then
		grep -hv '^#' "$lists/slow" |
			sed 's/|[[:space:]]*/| too slow for make test (make test-mm runs it): /' || true
	fi
}

# The guest's side of run: run_vmtests.sh with the categories of its
# argument, the guest's uptime printed before each of its tests, so that
# the host can tell where the time went (slowest).
runner() {
	cat <<'EOF'
#!/bin/sh
# Made by scripts/mm-selftests.sh.
set -eu
mkdir -p /boot && cp kernel-config "/boot/config-$(uname -r)"
stamp() { echo "# msharefs: uptime $(cut -d' ' -f1 /proc/uptime)"; }
{
	stamp
	./run_vmtests.sh -t "$1" && rc=0 || rc=$?
	echo "# run_vmtests.sh exit $rc"
} 2>&1 | while IFS= read -r line; do
	case "$line" in "# running "*) stamp ;; esac
	printf '%s\n' "$line"
done
stamp
EOF
}

# The runs of @tap that took longest, and the time before the first,
# in seconds of the guest's uptime.
slowest() {
	awk '
	{ sub(/\r$/, "") }
	/^# msharefs: uptime / {
		t = $4
		if (name != "") printf "%8.1f s  %s\n", t - t0, name
		else if (!started) { printf "%8.1f s  (boot and host-root setup)\n", t; started = 1 }
		t0 = t; name = ""
		next
	}
	/^# running / { name = substr($0, 11); next }
	END { if (t0) printf "%8.1f s  (guest uptime at the end)\n", t0 }
	' "$1" | sort -rn | head -12
}

run() {
	local all=0 quick=0 kernel cats tap rc=0 timeout gtimeout

	while [ $# -gt 0 ]; do
		case "$1" in
		--all)	all=1 ;;
		--quick) quick=1 ;;
		*)	break ;;
		esac
		shift
	done
	kernel=${1:?usage: run [--all] [--quick] KERNEL [CATEGORIES]} cats=${2:-}
	[ -n "$cats" ] || cats=$(categories)
	[ -x "$out/run_vmtests.sh" ] || die "no mm selftests in $out: run '$0 build'"
	skip_list "$all" "$quick" | grep -v '^[[:space:]]*$' >"$out/skip-list" || true
	tap=$logs/mm-$kernel.tap
	mkdir -p "$logs"
	case "$kernel" in
	# Per test, and for the whole guest: the debug run took 23 min at
	# most so far (beside the suite's guest, on a loaded machine).
	*debug)	timeout=${MM_TEST_TIMEOUT:-900} gtimeout=3000 ;;
	*)	timeout=${MM_TEST_TIMEOUT:-300} gtimeout=1500 ;;
	esac
	# Every category, and the slow ones (make test-mm): twice that.
	[ "$all$quick" = 01 ] || gtimeout=$((gtimeout * 2))
	# va_high_addr_switch.sh reads the config from /proc/config.gz or
	# /boot (the host's, under the guest's overlay): give it the kernel's.
	cp "$BUILD/obj-$kernel/.config" "$out/kernel-config"
	runner >"$out/msharefs-run-vmtests"
	chmod +x "$out/msharefs-run-vmtests"
	log "$kernel: run_vmtests.sh -t \"$cats\""
	# The tests go in as the guest's /add, not by their host path: a
	# checkout under /tmp would be hidden by the guest's own /tmp. The
	# guest's logs go apart: other guests of the kernel may run beside.
	LOGS=$logs/mm-$kernel GUEST_ROOT=host GUEST_HUGEPAGES=${GUEST_HUGEPAGES:-128} \
		GUEST_TIMEOUT=${GUEST_TIMEOUT:-$gtimeout} \
		"$TOP/scripts/host-guest-cmd.sh" "$kernel" "$out" \
		"MM_TEST_TIMEOUT=$timeout ./msharefs-run-vmtests '$cats'" \
		>"$tap" 2>&1 || rc=$?
	slowest "$tap" >"$logs/mm-$kernel.times"
	# A skip passes only if tests/allowed-skips allows it with one of the
	# lines the test printed since run_vmtests.sh started it.
	gawk -v kernel="$kernel" -v allowed="$TOP/tests/allowed-skips" \
		-f "$TOP/scripts/allowed-skips.awk" -e '
	{ sub(/\r$/, "") }
	/^# running / { nblock = 0 }
	{ block[++nblock] = $0 }
	/^ok [0-9]+ .*# SKIP/ {
		name = $0; sub(/^ok [0-9]+ /, "", name); sub(/ # SKIP.*/, "", name)
		ok = 0
		for (i = 1; i <= nblock && !ok; i++)
			ok = skip_allowed("mm", name, block[i])
		if (ok) { skipped++; next }
		printf "mm: unexpected SKIP on %s: %s (not in tests/allowed-skips)\n", kernel, name
		failed++
		next
	}
	/^ok [0-9]+ / { passed++; next }
	/^not ok [0-9]+ / {
		name = $0; sub(/^not ok [0-9]+ /, "", name)
		printf "mm: FAIL on %s: %s\n", kernel, name
		failed++
		next
	}
	/SUMMARY: PASS=/ { summary = 1 }
	END {
		# run_vmtests.sh ends with its SUMMARY line: without it, it died.
		if (!summary) { printf "mm: run_vmtests.sh did not finish on %s\n", kernel; failed++ }
		printf "%s mm: %d passed, %d failed, %d skipped\n", kernel, passed, failed, skipped
		exit failed > 0 || passed == 0
	}' "$tap" || rc=1
	[ "$rc" = 0 ] || log "$kernel: guest output in $tap"
	return "$rc"
}

case "${1:-}" in
build)	build ;;
run)	shift; run "$@" ;;
categories) categories; echo ;;
*)	die "usage: $0 build | run [--all] [--quick] KERNEL [CATEGORIES] | categories" ;;
esac
