#!/usr/bin/env bash
# Turn what 'make bench' measured (build/bench/bench-*.csv) into plots in
# bench/results/ (SVG, gnuplot) and the README's results section, between
# <!-- bench:begin --> and <!-- bench:end -->.
#   bench-report.sh [DIR]     (default build/bench)
set -euo pipefail
. "$(dirname "$0")/common.sh"

dir=${1:-$BUILD/bench}
res=$TOP/bench/results
readme=$TOP/README.md
share=$dir/bench-share.csv
[ -f "$share" ] || die "no $share: run 'make bench' first"
command -v gnuplot >/dev/null || die "gnuplot missing: run 'make deps'"
mkdir -p "$res"
cp "$dir"/bench-*.csv "$res/"

meta() { awk -F, -v k="$1" '$1 == k { print $2 }' "$dir/bench-meta.csv"; }
kernel=$(meta kernel)
date=$(meta date)
cpus=$(meta cpus)
mem=$(meta memtotal_mib)

# One data file per kind and size: procs, PT total MiB, attach s, teardown s.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sizes=$(awk -F, 'NR > 1 && $1 != "none" { print $2 }' "$share" | sort -nu)
for size in $sizes; do
	for kind in none mshare mshare-thp memfd hugetlb thp; do
		awk -F, -v k="$kind" -v s="$size" \
			'$1 == k && $2 == s && $16 == "ok" {
				print $3, $6 / 1024, $12, $13, $8 }' \
			"$share" >"$tmp/$kind-$size.dat"
	done
	label=$size
	[ "$size" -lt 1024 ] && label="${size} MiB" || label="$((size / 1024)) GiB"
	plots=()
	for kind in mshare mshare-thp memfd hugetlb thp none; do
		[ -s "$tmp/$kind-$size.dat" ] && plots+=("$kind")
	done
	[ ${#plots[@]} -gt 1 ] || continue
	gp=$tmp/plot-$size.gp
	{
		echo "set terminal svg size 1200,400 dynamic font 'sans,11'"
		echo "set output '$res/share-${size}m.svg'"
		echo "set multiplot layout 1,3 title 'N processes attach a populated $label region and read every page (kernel $kernel, QEMU TCG, $date)'"
		echo "set logscale x; set xrange [0.8:2500]; set xlabel 'processes'; set key top left; set grid"
		echo "set format y '%g'"
		for panel in "2:page tables (PageTables rise, MiB):1" \
			"3:attach + touch all (s):1" "4:teardown of all (s):1"; do
			col=${panel%%:*} rest=${panel#*:}
			title=${rest%:*}
			echo "set title '$title'; set logscale y"
			line="plot "
			for kind in "${plots[@]}"; do
				t=$kind
				[ "$kind" != none ] || t='idle processes (no mapping)'
				line+="'$tmp/$kind-$size.dat' using 1:(\$$col > 0 ? \$$col : 1e-3) with linespoints title '$t', "
			done
			echo "${line%, }"
		done
		echo "unset multiplot"
	} >"$gp"
	gnuplot "$gp"
done

# The README section.
sec=$tmp/section.md
{
	echo "<!-- bench:begin -->"
	echo "Measured by \`make bench\` on $date, kernel \`$kernel\`, guest with"
	echo "$cpus vCPUs and $mem MiB. **Times come from software emulation**"
	echo "(QEMU TCG on a shared 2-core machine, 20-50x slower than hardware):"
	echo "compare the kinds with each other, not with real machines. Page"
	echo "tables and fault counts are exact. CSV: \`bench/results/\`."
	echo
	echo "N processes attach a populated region and read one byte of every"
	echo "4 KiB page: *mshare* an msharefs region, *memfd* plain"
	echo "\`MAP_SHARED\` shared memory, *hugetlb* a hugetlbfs file of 2 MiB"
	echo "pages at a 1 GiB-aligned address (the kernel's PMD-table sharing,"
	echo "which needs whole 1 GiB ranges), *thp* a memfd in transparent huge"
	echo "pages (\`shmem_enabled=advise\`, \`MADV_HUGEPAGE\` on every mapping,"
	echo "the peer most users pick first), *mshare-thp* an msharefs region"
	echo "whose object is in transparent huge pages (\`MADV_HUGEPAGE\` through"
	echo "the attachment that populates it). *PT/proc* is the rise of"
	echo "\`PageTables\` per process beyond what as many idle processes cost."
	echo
	echo "| size | N | kind | PT total MiB | PT/proc KiB | faults/proc (max) | attach+touch s | teardown s | note |"
	echo "|---:|---:|---|---:|---:|---:|---:|---:|---|"
	awk -F, 'NR > 1 && $1 != "none" {
		note = $16 == "ok" ? "" : $16
		if ($16 == "skipped" || $16 == "setup-failed") {
			printf "| %d MiB | %d | %s | | | | | | %s |\n", $2, $3, $1, note
			next
		}
		if ($4 < $3) note = note " (" $4 " reached)"
		printf "| %d MiB | %d | %s | %.1f | %.1f | %d (%d) | %.2f | %.2f | %s |\n",
			$2, $3, $1, $6 / 1024, $8, $10, $11, $12, $13, note
	}' "$share"
	echo
	for size in $sizes; do
		[ -f "$res/share-${size}m.svg" ] &&
			echo "![$size MiB](bench/results/share-${size}m.svg)"
	done
	if [ -f "$dir/bench-touch.csv" ]; then
		echo
		echo "First touch: a fresh process writes every 4 KiB page of a fresh,"
		echo "unpopulated object (the price of redirecting faults to the region):"
		echo
		echo "| kind | size | ns per 4 KiB page | faults | vs memfd |"
		echo "|---|---:|---:|---:|---:|"
		awk -F, 'NR > 1 { printf "| %s | %d MiB | %d | %d | %.2fx |\n", $1, $2, $4, $5, $6 }' \
			"$dir/bench-touch.csv"
	fi
	if [ -f "$dir/bench-fork.csv" ]; then
		echo
		echo "fork + exit + wait of a process with the object populated and"
		echo "attached (median):"
		echo
		echo "| attachment | size | us |"
		echo "|---|---:|---:|"
		awk -F, 'NR > 1 { printf "| %s | %d MiB | %d |\n", $1 == "none" ? "nothing" : $1, $2, $4 }' \
			"$dir/bench-fork.csv"
	fi
	if [ -f "$dir/bench-tlb.csv" ]; then
		echo
		echo "TLB shootdowns (\`TLB\` line of \`/proc/interrupts\`, per CPU) while"
		echo "a process on CPU 0 removes and recreates an object"
		echo "(\`MSHAREFS_UNMAP\` + \`MSHAREFS_CREATE_MAPPING\` + touch) 200"
		echo "times; sharers spin reading the region on no CPU, on CPU 1 only,"
		echo "or one on each CPU; *idle*: the same time without rounds:"
		echo
		awk -F, 'NR == 1 {
			n = (NF - 3) / 2
			printf "| sharers | phase |"
			for (c = 0; c < n; c++) printf " CPU%d |", c
			printf "\n|---|---|"
			for (c = 0; c < n; c++) printf "---:|"
			printf "\n"
			next
		}
		{
			printf "| %s | %s |", $1 == "cpu1" ? "CPU 1 only" : $1 == "all" ? "CPUs 0-3" : "none", $2
			for (c = 0; c < n; c++) printf " %d |", $(4 + c)
			printf "\n"
		}' "$dir/bench-tlb.csv"
	fi
	echo "<!-- bench:end -->"
} >"$sec"

if ! grep -q '^<!-- bench:begin -->' "$readme"; then
	# First run: a section before "## CI" (or at the end).
	awk -v f="$sec" '
		/^## CI/ && !done {
			print "## Benchmarks\n"
			while ((getline l < f) > 0) print l
			print ""
			done = 1
		}
		{ print }
		END {
			if (!done) {
				print "\n## Benchmarks\n"
				while ((getline l < f) > 0) print l
			}
		}' "$readme" >"$tmp/readme"
	cat "$tmp/readme" >"$readme"
else
	replace_section bench "$readme" "$sec"
fi
log "plots in $res, README section updated ($kernel, $date)"
