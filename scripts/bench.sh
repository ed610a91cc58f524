#!/usr/bin/env bash
# The benchmarks of bench/: build them, boot the fast kernel once, show
# the guest's output as it comes, and collect what it measured.
#   bench.sh run          make run: the table demo (N=256, 1 GiB)
#   bench.sh bench        make bench: the sweep, fault, fork and TLB costs;
#                         CSV in build/bench/, plots in bench/results/,
#                         the README's results section regenerated
#   bench.sh bench-1500   make bench-1500: 1,500 processes x 1 GiB in a
#                         guest too small for plain page tables
#   bench.sh bench-change make bench-change: change, reclaim and fault
#                         costs with many sharers (issue 14); CSV in
#                         bench/results/bench-{change,reclaim,fault}.csv
#                         (-FLAVOUR.csv for another kernel than fast), the
#                         README's bench-change section regenerated
#   bench.sh bench-arch   make bench-arm64 (BENCH_FLAVOUR=arm64-fast): page
#                         tables and faults per sharer, CSV in
#                         bench/results/FLAVOUR-bench-*.csv, the README's
#                         bench-arch section regenerated
# Knobs (environment): BENCH_PROCS, BENCH_SIZES/BENCH_SIZE,
# BENCH_PLAIN_BUDGET_GIB, BENCH_BUDGET_GIB, BENCH_PARTS, BENCH_CHANGE_*,
# BENCH_RECLAIM_*, BENCH_FAULT_* (see bench/in-guest-*.sh), GUEST_MEM,
# LOGS (default build/logs), BENCH_FLAVOUR (default fast: the kernel of
# build/obj-FLAVOUR, e.g. before).
set -euo pipefail
. "$(dirname "$0")/common.sh"

mode=${1:?usage: bench.sh run|bench|bench-1500|bench-change}
flavour=${BENCH_FLAVOUR:-fast}
out_dir=$BUILD/bench
stage=$out_dir/stage-$mode
hdrs=$BUILD/obj-headers/usr/include
export LOGS=${LOGS:-$BUILD/logs}

# arm64-* flavours: the programs cross-built against arm64's headers and
# libmshare (scripts/arm64.sh initramfs makes those).
cc=${CC:-cc} lib=$BUILD/lib
case "$flavour" in
arm64-*) cc=aarch64-linux-gnu-gcc hdrs=$BUILD/arm64/obj-headers/usr/include
	lib=$BUILD/arm64/lib ;;
esac

build() {
	local p
	rm -rf "$stage"
	mkdir -p "$stage" "$out_dir"
	for p in mshare_bench fault_bench tlb_bench change_bench; do
		"$cc" -static -O2 -Wall -Wextra -pthread -isystem "$hdrs" \
			-I"$TOP/lib" -o "$stage/$p" "$TOP/bench/$p.c" \
			"$lib/libmshare.a"
	done
	cp "$TOP"/bench/in-guest-*.sh "$stage/"
}

# Pass the knobs that are set on to the guest's command line.
guest_env() {
	local v
	for v in BENCH_PROCS BENCH_SIZES BENCH_SIZE BENCH_PLAIN_BUDGET_GIB \
		BENCH_BUDGET_GIB BENCH_PARTS BENCH_CHANGE_PARTS \
		BENCH_CHANGE_PROCS BENCH_CHANGE_ROUNDS BENCH_CHANGE_STATES \
		BENCH_CHANGE_MAX_SEC \
		BENCH_RECLAIM_PROCS BENCH_RECLAIM_SIZE BENCH_RECLAIM_METHODS \
		BENCH_FAULT_SIZE BENCH_FAULT_REPS; do
		[ -z "${!v:-}" ] || printf '%s=%q ' "$v" "${!v}"
	done
}

# Boot, print the guest's output live (without csv lines), keep it all.
boot() {
	local script=$1 cmd out rc=0 pid status
	cmd="$(guest_env)sh ./$script"
	mkdir -p "$LOGS"
	"$TOP/scripts/mkinitramfs.sh" --add "$stage" "$cmd" \
		"$LOGS/bench-add.cpio.gz"
	out=$LOGS/$flavour-guest.out
	rm -f "$out"
	"$TOP/scripts/host-boot-guest.sh" "$flavour" guest "$LOGS/bench-add.cpio.gz" &
	pid=$!
	tail -n +1 -F --pid="$pid" "$out" 2>/dev/null |
		sed -u 's/\r$//; /^csv/d; /^# msharefs-guest-/d' || true
	wait "$pid" || rc=$?
	"$TOP/scripts/check-log.sh" "$LOGS/$flavour-guest.console" || rc=1
	grep -q '^# msharefs-guest-done' "$out" ||
		{ log "the guest did not finish"; rc=1; }
	status=$(sed -n 's/^# msharefs-guest-exit=//p' "$out" | tr -d '\r')
	[ "${status:-1}" = 0 ] || { log "the guest script failed"; rc=1; }
	tr -d '\r' <"$out" >"$out_dir/$mode.out"
	return "$rc"
}

# build/bench/MODE-KIND.csv from the "KIND,..." lines of the output.
extract() {
	local kind
	for kind in csv csv-touch csv-fork csv-tlb csv-meta; do
		grep "^$kind," "$out_dir/$mode.out" | cut -d, -f2- \
			>"$out_dir/$mode-${kind#csv-}.csv" || true
		[ -s "$out_dir/$mode-${kind#csv-}.csv" ] ||
			rm -f "$out_dir/$mode-${kind#csv-}.csv"
	done
	[ ! -f "$out_dir/$mode-csv.csv" ] ||
		mv "$out_dir/$mode-csv.csv" "$out_dir/$mode-share.csv"
}

# The series the kernel was built from: obj-FLAVOUR/series-head if the
# build left one, else the tree's HEAD now (the fast kernel's, normally).
series_head() {
	local f=$BUILD/obj-$flavour/series-head
	if [ -f "$f" ]; then
		tr -d '[:space:]' <"$f"
	else
		git -C "$KTREE" rev-parse --short=9 HEAD 2>/dev/null || echo unknown
	fi
}

# bench/results/bench-PART[-FLAVOUR].csv from the csv-PART lines, with
# the kernel (release + series head) as the first column.
extract_change() {
	local part kernel suffix= f
	[ "$flavour" = fast ] || suffix=-$flavour
	kernel="$(grep "^csv-meta,kernel," "$out_dir/$mode.out" | cut -d, -f3)@$(series_head)"
	mkdir -p "$TOP/bench/results"
	for part in change reclaim fault; do
		f=$TOP/bench/results/bench-$part$suffix.csv
		grep -q "^csv-$part," "$out_dir/$mode.out" || continue
		grep "^csv-$part," "$out_dir/$mode.out" | cut -d, -f2- |
			awk -v k="$kernel" 'NR == 1 { print "kernel," $0; next }
				{ print k "," $0 }' >"$f"
		log "wrote $f"
	done
}

case "$mode" in
run)
	build
	boot in-guest-run.sh
	extract
	;;
bench)
	build
	export GUEST_MEM=${GUEST_MEM:-6G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600}
	boot in-guest-bench.sh
	extract
	"$TOP/scripts/bench-report.sh" "$out_dir"
	;;
bench-1500)
	build
	export GUEST_MEM=${GUEST_MEM:-2G} GUEST_HUGEPAGES=${GUEST_HUGEPAGES:-0}
	export GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800}
	boot in-guest-1500.sh
	extract
	cp "$out_dir/$mode-share.csv" "$TOP/bench/results/bench-1500-share.csv"
	"$TOP/scripts/bench-1500-report.sh"
	;;
bench-change)
	build
	export GUEST_MEM=${GUEST_MEM:-4G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600}
	boot in-guest-change.sh
	extract_change
	"$TOP/scripts/bench-change-report.sh"
	;;
bench-arch)
	# Page tables and faults per sharer on another architecture's
	# kernel (make bench-arm64): the sweep of make bench, smaller, and
	# the first-touch costs, all kinds side by side in one boot.
	build
	export GUEST_MEM=${GUEST_MEM:-6G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600}
	export BENCH_PARTS=${BENCH_PARTS:-share,touch}
	export BENCH_PROCS=${BENCH_PROCS:-1,16,64,256}
	export BENCH_SIZES=${BENCH_SIZES:-64M,1G}
	boot in-guest-bench.sh
	extract
	for part in share touch meta; do
		[ -f "$out_dir/$mode-$part.csv" ] &&
			cp "$out_dir/$mode-$part.csv" "$TOP/bench/results/$flavour-bench-$part.csv"
	done
	"$TOP/scripts/bench-arch-report.sh" "$flavour"
	;;
*)
	die "unknown mode $mode"
	;;
esac
log "output and CSV in $out_dir/$mode*"
