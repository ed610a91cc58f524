#!/usr/bin/env bash
# msharefs on arm64 (4 KiB pages, 48-bit virtual addresses), cross-built
# on this x86_64 host and booted in qemu-system-aarch64 (TCG, 4 vCPUs):
#   arm64.sh deps                 the cross compiler, QEMU, arm64 busybox
#   arm64.sh kernel fast|debug    build/obj-arm64-FLAVOUR/arch/arm64/boot/Image
#   arm64.sh initramfs            the suite's programs, static, and the
#                                 guest's init: build/arm64/initramfs.cpio.gz
#   arm64.sh test fast|debug...   the suite on those kernels (test.sh)
#   arm64.sh all                  make test-arm64: all of the above, each
#                                 phase timed; the output is kept in
#                                 tests/results/make-test-arm64.log and
#                                 the README's arm64 section made from it
#   arm64.sh readme               that section alone, from the log
# Everything of arm64's lives under build/arm64 and build/obj-arm64-*:
# the x86_64 build is left alone.
set -euo pipefail
. "$(dirname "$0")/common.sh"

A=$BUILD/arm64
CROSS=aarch64-linux-gnu-
HDRS=$A/obj-headers/usr/include

deps() {
	local need=() deb

	command -v ${CROSS}gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
	command -v qemu-system-aarch64 >/dev/null || need+=(qemu-system-arm)
	command -v numfmt >/dev/null || need+=(coreutils)
	if [ ${#need[@]} -gt 0 ]; then
		[ "$(id -u)" = 0 ] || die "missing ${need[*]}: install as root"
		log "installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}" >/dev/null
	fi
	# Debian's arm64 busybox-static, unpacked, not installed: installing
	# it would replace the host's busybox, which the x86_64 guest needs.
	[ -x "$A/busybox/bin/busybox" ] && return 0
	[ "$(id -u)" = 0 ] || die "no arm64 busybox: run 'scripts/arm64.sh deps' as root"
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		dpkg --add-architecture arm64
		apt-get update -q >/dev/null
	fi
	mkdir -p "$A/deb"
	rm -f "$A"/deb/busybox-static_*_arm64.deb
	(cd "$A/deb" && apt-get download -q busybox-static:arm64 >/dev/null 2>&1) ||
		{ apt-get update -q >/dev/null &&
			(cd "$A/deb" && apt-get download -q busybox-static:arm64 >/dev/null); }
	deb=$(ls "$A"/deb/busybox-static_*_arm64.deb)
	rm -rf "$A/busybox"
	dpkg-deb -x "$deb" "$A/busybox"
	log "arm64 busybox from $(basename "$deb")"
}

kernel() {
	"$TOP/scripts/build-kernel.sh" "arm64-${1:?usage: arm64.sh kernel fast|debug}"
}

# The UAPI headers of arm64, libmshare and the static programs of the
# suite, cross-compiled, then the initramfs as mkinitramfs.sh makes it
# for x86_64, with the arm64 busybox.
initramfs() {
	local mk=(make -s "CC=${CROSS}gcc" "AR=${CROSS}ar")

	[ -x "$A/busybox/bin/busybox" ] || die "no arm64 busybox: run 'scripts/arm64.sh deps'"
	make -s -C "$KTREE" O="$A/obj-headers" ARCH=arm64 headers_install >/dev/null
	"${mk[@]}" -C "$TOP/lib" HDRS="$HDRS" OUT="$A/lib" UAPI_CHECK=
	"${mk[@]}" -C "$TOP/tests" KTREE="$KTREE" HDRS="$HDRS" \
		LIBOUT="$A/lib" OUT="$A/tests"
	"${mk[@]}" -C "$TOP/tools" HDRS="$HDRS" KTREE="$KTREE" \
		LIBOUT="$A/lib" OUT="$A/tools"
	mkdir -p "$A/examples"
	for c in "$TOP"/examples/*.c; do
		${CROSS}gcc -static -O2 -Wall -Wextra -isystem "$HDRS" \
			-o "$A/examples/$(basename "$c" .c)" "$c"
	done
	BUILD=$A KTREE=$KTREE BUSYBOX=$A/busybox/bin/busybox \
		"$TOP/scripts/mkinitramfs.sh" "$A/initramfs.cpio.gz"
}

run_tests() {
	local f args=()

	[ $# -gt 0 ] || set -- fast debug
	for f in "$@"; do args+=("arm64-$f"); done
	"$TOP/scripts/test.sh" "${args[@]}"
}

# The README's section between <!-- arm64:begin --> and <!-- arm64:end -->:
# the last make test-arm64's closing line, phase times and skips.
readme() {
	local res=$TOP/tests/results/make-test-arm64.log sec

	[ -f "$res" ] || die "no $res: run 'make test-arm64'"
	sec=$(mktemp)
	awk -v res="tests/results/make-test-arm64.log" '
		/^# make test-arm64,/ { sub(/^# /, ""); head = $0 }
		/^  .*  +[0-9]+ s +[0-9.]+ min$/ {
			line = $0; sub(/^ +/, "", line)
			split(line, f, /  +/)
			rows = rows sprintf("| %s | %s |\n", f[1], f[3]) }
		/^ktap: SKIP/ {
			k = $0; sub(/^ktap: SKIP [^:]*: ok [0-9]+ /, "", k)
			if (!(k in nskip)) order[++ns] = k
			nskip[k]++ }
		/^[0-9]+ passed, [0-9]+ failed/ { closing = $0 }
		END {
			print "<!-- arm64:begin -->"
			sub(/^make test-arm64, /, "", head)
			printf "Last `make test-arm64` (%s), from `%s`:\n\n", head, res
			printf "    %s\n\n", closing
			print "| phase | time |"
			print "| --- | --- |"
			printf "%s", rows
			if (ns) {
				print ""
				print "Skipped on arm64 (the count: kernels), each allowed by `tests/allowed-skips` only with a reason starting `x86-only:`:"
				print ""
				for (i = 1; i <= ns; i++)
					printf "- %s (%d)\n", order[i], nskip[order[i]]
			}
			print "<!-- arm64:end -->"
		}' "$res" >"$sec"
	replace_section arm64 "$TOP/README.md" "$sec"
	rm -f "$sec"
	log "README arm64 section written"
}

# make test-arm64: everything from the packages on, each phase timed. The
# debug kernel builds at low priority while the fast kernel's suite runs.
all() {
	local logs=$BUILD/logs res=$TOP/tests/results/make-test-arm64.log
	local out rc=0 t0 bpid

	mkdir -p "$logs"
	export MSHAREFS_PHASES=$logs/arm64-phases.tsv MSHAREFS_TEST_START
	MSHAREFS_TEST_START=$(date +%s)
	: >"$MSHAREFS_PHASES"
	step() {
		local name=$1 t
		shift
		t=$(date +%s)
		"$@"
		phase_time "$name" $(($(date +%s) - t))
	}
	step "packages" deps
	[ -e "$KTREE/.git" ] || step "kernel tree" "$TOP/scripts/tree.sh"
	step "arm64-fast kernel" kernel fast
	step "user space, initramfs" initramfs
	t0=$(date +%s)
	nice -n 10 "$TOP/scripts/build-kernel.sh" arm64-debug >"$logs/arm64-debug-build.log" 2>&1 &
	bpid=$!
	out=$(mktemp)
	"$TOP/scripts/test.sh" --save "$logs/arm64-fast.part" arm64-fast 2>&1 | tee "$out" || rc=1
	wait "$bpid" || { tail -20 "$logs/arm64-debug-build.log" >&2; die "the arm64-debug kernel did not build"; }
	phase_time "arm64-debug kernel (beside the fast suite)" $(($(date +%s) - t0))
	"$TOP/scripts/test.sh" --add "$logs/arm64-fast.part" arm64-debug 2>&1 | tee -a "$out" || rc=1
	{
		echo "# make test-arm64, $(date -u +%F), series $(git -C "$KTREE" rev-parse --short=9 HEAD), $(git -C "$KTREE" rev-list --count base..HEAD 2>/dev/null || echo '?') commits"
		grep -E '^(ktap: SKIP|failed:|phase times|  |[0-9]+ passed, [0-9]+ failed)' "$out" || true
	} >"$res"
	rm -f "$out"
	readme
	return "$rc"
}

cmd=${1:-}
shift || true
case "$cmd" in
deps) deps ;;
kernel) kernel "$@" ;;
initramfs) initramfs ;;
test) run_tests "$@" ;;
all) all ;;
readme) readme ;;
*) die "usage: arm64.sh deps|kernel FLAVOUR|initramfs|test [FLAVOUR...]|all|readme" ;;
esac
