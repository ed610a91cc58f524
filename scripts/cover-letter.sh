#!/usr/bin/env bash
# Write the cover letter of each series of kernel/series.conf,
# kernel/patches/NAME/0000-cover-letter.patch, in git format-patch form:
# the prose of its template (kernel/cover-letter.in for the base,
# kernel/cover-letters/NAME.in for a follow-up) with its @PLACEHOLDERS@
# filled in. Every measured number of the base's letter comes from the
# CSV files 'make bench' and 'make bench-1500' left in bench/results/,
# the test counts from tests/manifest; the shortlog and the diffstat of
# each come from its commits in build/linux (base..HEAD), which must
# hold exactly kernel/patches. A cover letter is not in
# kernel/patches/series, so 'make tree', 'make checkpatch' and
# 'make check-series' never see it. 'make export' runs this after
# exporting; 'make cover-letter' alone.
#   cover-letter.sh [NAME]    (default: every series)
set -euo pipefail
. "$(dirname "$0")/common.sh"

if [ $# = 0 ]; then
	for s in $(series_names); do
		"$0" "$s"
	done
	exit 0
fi
name=$1
if [ "$name" = base ]; then
	template=$TOP/kernel/cover-letter.in
else
	template=$TOP/kernel/cover-letters/$name.in
fi
res=$TOP/bench/results
out=$PATCHES/$name/0000-cover-letter.patch
from='Seed 1d800d67 maintainers <maintainers@users.noreply.a-seed-1d800d67.example>'
title=$(series_title "$name")
width=75

[ -f "$template" ] || die "no $template"
[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
git -C "$KTREE" rev-parse -q --verify base >/dev/null ||
	die "$KTREE has no tag 'base': run 'make tree'"
[ -f "$PATCHES/series" ] || die "no $PATCHES/series: run 'make export'"
range=$(series_range "$name")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The shortlog and diffstat describe build/linux, the numbers the series:
# they must be the same commits.
git -C "$KTREE" format-patch -q --no-signature --zero-commit -N -o "$tmp/fp" "$range"
(cd "$tmp/fp" 2>/dev/null && ls -1 -- *.patch 2>/dev/null || true) >"$tmp/names"
grep "^$name/" "$PATCHES/series" | sed "s|^$name/||" >"$tmp/series" || true
n=$(wc -l <"$tmp/series")
[ "$n" -gt 0 ] || die "$PATCHES/series lists no patches of $name"
cmp -s "$tmp/names" "$tmp/series" ||
	die "$KTREE ($name: $range) and $PATCHES/series differ: run 'make export' or 'make tree'"
while read -r p; do
	cmp -s "$tmp/fp/$p" "$PATCHES/$name/$p" ||
		die "$name/$p differs from $KTREE: run 'make export' or 'make tree'"
done <"$tmp/series"

# Values: "NAME<TAB>value" lines in $tmp/vars; blocks: files $tmp/blocks/NAME.
mkdir -p "$tmp/blocks"
: >"$tmp/vars"
val() {
	[ -n "$2" ] || die "no value for @$1@ (bench/results incomplete?)"
	printf '%s\t%s\n' "$1" "$2" >>"$tmp/vars"
}
block() {
	sed 's/[[:space:]]*$//' >"$tmp/blocks/$1"
	[ -s "$tmp/blocks/$1" ] || die "block @$1@ is empty (bench/results incomplete?)"
}
csv() {
	[ -f "$res/$1" ] || die "no $res/$1: run 'make ${2:-bench}' and commit bench/results"
	echo "$res/$1"
}
# "64 MiB", "1 GiB": a size in MiB for the text.
size_label() { awk -v m="$1" 'BEGIN { if (m % 1024) print m " MiB"; else print m / 1024 " GiB" }'; }
kind_label() {
	case $1 in
	mshare) echo msharefs ;;
	memfd) echo memfd ;;
	hugetlb) echo hugetlbfs ;;
	none) echo nothing ;;
	*) echo "$1" ;;
	esac
}

val NPATCHES "$n"
val KVERSION "$PINNED"

# The base's letter has the numbers; the follow-ups' only their own.
if [ "$name" = base ]; then
# The conditions of 'make bench'.
metaf=$(csv bench-meta.csv)
meta() { awk -F, -v k="$1" '$1 == k { print $2 }' "$metaf"; }
val BENCH_DATE "$(meta date)"
val BENCH_KERNEL "$(meta kernel)"
val BENCH_CPUS "$(meta cpus)"
val BENCH_MEM_MIB "$(meta memtotal_mib)"

# The sweep (bench-share.csv: kind,size_mib,procs,reached,killed,
# pt_total_kb,pt_per_proc_kb,pt_extra_per_proc_kb,vmpte_kb,minflt_avg,
# minflt_max,attach_touch_s,teardown_s,memfree_during_mib,
# memfree_after_mib,status,sys_ms_per_proc,idle_teardown_s), at 1 GiB:
# the largest N every kind completed, and the largest N msharefs did.
share=$(csv bench-share.csv)
size=1024
row() { # kind procs -> the CSV line, if it completed
	awk -F, -v k="$1" -v n="$2" -v s="$size" \
		'$1 == k && $2 == s && $3 == n && $16 == "ok"' "$share"
}
largest() { # kind... -> the largest N that all of them completed
	awk -F, -v s="$size" -v kinds="$*" '
		BEGIN { nk = split(kinds, want, " ") }
		$1 != "kind" && $2 == s && $16 == "ok" { done[$3, $1] = 1; ns[$3] = 1 }
		END {
			for (n in ns) {
				all = 1
				for (i = 1; i <= nk; i++) if (!((n, want[i]) in done)) all = 0
				if (all && n + 0 > best) best = n + 0
			}
			if (best) print best
		}' "$share"
}
ncmp=$(largest mshare memfd hugetlb)
[ -n "$ncmp" ] || die "$share: no N at $size MiB that mshare, memfd and hugetlb all completed"
nmax=$(largest mshare)
val SHARE_SIZE "$(size_label "$size")"
val SHARE_N "$ncmp"
val SHARE_NMAX "$nmax"
val MEMFD_NMAX "$(largest memfd)"
{
	printf '  %-9s %10s %14s %9s %9s %8s\n' \
		'' 'page' 'minor faults' 'kernel' 'attach +' 'teardown'
	printf '  %-9s %10s %14s %9s %9s %8s\n' \
		'' 'tables' 'avg (max)' 'CPU' 'touch' ''
	printf '  %-9s %10s %14s %9s %9s %8s\n' \
		'' 'per process' 'per process' 'per proc' 'all N' 'all N'
	for k in mshare memfd hugetlb; do
		row "$k" "$ncmp" | awk -F, -v l="$(kind_label "$k")" '{
			printf "  %-9s %6.1f KiB %14s %6.1f ms %7.2f s %6.2f s\n",
				l, $8, $10 " (" $11 ")", $17, $12, $13 }'
	done
} | block SHARE_TABLE
# Page tables beyond idle processes, all N together, in MiB.
pt_all() { row "$1" "$2" | awk -F, '{ printf "%.1f", $8 * $3 / 1024 }'; }
val MEMFD_PT_MIB "$(pt_all memfd "$ncmp")"
val MSHARE_PT_MIB "$(pt_all mshare "$ncmp")"
val MSHARE_NMAX_PT_KIB "$(row mshare "$nmax" | awk -F, '{ printf "%.1f", $8 }')"
val MSHARE_NMAX_FLT "$(row mshare "$nmax" | cut -d, -f10)"
val MSHARE_NMAX_FLT_MAX "$(row mshare "$nmax" | cut -d, -f11)"

# make bench-1500: the same columns, one run per kind (each with its
# own header line), memfd stopped by the OOM killer.
b1500=$(csv bench-1500-share.csv bench-1500)
b1500() { # kind column
	awk -F, -v k="$1" -v c="$2" '$1 == k { v = $c } END { print v }' "$b1500"
}
val B1500_N "$(b1500 mshare 3)"
val B1500_SIZE "$(size_label "$(b1500 mshare 2)")"
val B1500_MEMFD_REACHED "$(b1500 memfd 4)"
val B1500_MEMFD_KILLED "$(b1500 memfd 5)"
val B1500_MEMFD_PT_MIB "$(awk -v kb="$(b1500 memfd 6)" 'BEGIN { printf "%d", kb / 1024 }')"
val B1500_MSHARE_REACHED "$(b1500 mshare 4)"
val B1500_MSHARE_PT_KIB "$(b1500 mshare 8)"

# First touch (kind,size_mib,reps,ns_per_4k_page,faults,vs_memfd).
touch=$(csv bench-touch.csv)
{
	printf '  %-10s %8s %14s %8s %9s\n' '' 'object' 'ns per 4 KiB' 'faults' 'vs memfd'
	awk -F, 'NR > 1' "$touch" | while IFS=, read -r k s _ ns f r; do
		printf '  %-10s %8s %14d %8d %8.2fx\n' "$(kind_label "$k")" \
			"$(size_label "$s")" "$ns" "$f" "$r"
	done
} | block TOUCH_TABLE

# fork + exit + wait (kind,size_mib,reps,fork_exit_us).
fork=$(csv bench-fork.csv)
val FORK_SIZE "$(size_label "$(awk -F, 'NR == 2 { print $2 }' "$fork")")"
{
	printf '  %-10s %10s\n' 'attached' 'us'
	awk -F, 'NR > 1' "$fork" | while IFS=, read -r k _ _ us; do
		printf '  %-10s %10d\n' "$(kind_label "$k")" "$us"
	done
} | block FORK_TABLE

# TLB shootdowns (config,phase,rounds,tlb_cpu0..N,cal_cpu0..N).
tlb=$(csv bench-tlb.csv)
val TLB_ROUNDS "$(awk -F, '$2 == "rounds" { print $3; exit }' "$tlb")"
awk -F, '
	NR == 1 {
		n = (NF - 3) / 2
		printf "  %-18s %-7s", "sharers", "phase"
		for (c = 0; c < n; c++) printf " %6s", "CPU" c
		printf "\n"
		next
	}
	{
		who = $1 == "cpu1" ? "on CPU 1 only" : $1 == "all" ? "one on each CPU" : "none"
		printf "  %-18s %-7s", who, $2
		for (c = 0; c < n; c++) printf " %6d", $(4 + c)
		printf "\n"
	}' "$tlb" | block TLB_TABLE

# What runs (tests/manifest: set program tests source).
manifest=$TOP/tests/manifest
val SUITE_TESTS "$(awk '$1 == "suite" { n += $3 } END { print n }' "$manifest")"
val SUITE_PROGRAMS "$(awk '$1 == "suite" { n++ } END { print n }' "$manifest")"
val HOSTROOT_TESTS "$(awk '$1 == "hostroot" { n += $3 } END { print n }' "$manifest")"
read -r hook_tests hook_calls hook_files < <("$TOP/scripts/hook-sites.sh" --counts)
val HOOK_TESTS "$hook_tests"
val HOOK_CALLS "$hook_calls"
val HOOK_FILES "$hook_files"

fi

git -C "$KTREE" shortlog --no-merges -w72,6,9 "$range" | sed '${/^$/d}' | block SHORTLOG
git -C "$KTREE" diff --stat=72 --summary "${range%%..*}" "${range##*..}" | block DIFFSTAT

# Fill the template in: a line that is only @NAME@ becomes block NAME,
# @NAME@ inside a line becomes value NAME; "#:" lines are comments. A
# paragraph of prose (no line indented) that got a value is wrapped
# again at 72 columns, so that numbers of any width read well.
awk -v vars="$tmp/vars" -v blocks="$tmp/blocks" '
	BEGIN {
		while ((getline l < vars) > 0) {
			i = index(l, "\t")
			val[substr(l, 1, i - 1)] = substr(l, i + 1)
		}
	}
	function flush(   i, words, nw, out, w) {
		if (filled && !indented) {
			nw = split(para, words, / +/)
			out = ""
			for (i = 1; i <= nw; i++) {
				w = words[i]
				if (w == "")
					continue
				if (out != "" && length(out) + 1 + length(w) > 72) {
					print out
					out = w
				} else
					out = out == "" ? w : out " " w
			}
			if (out != "")
				print out
		} else if (np)
			printf "%s", raw
		para = raw = ""
		np = filled = indented = 0
	}
	/^#:/ { next }
	/^@[A-Z0-9_]+@$/ {
		f = blocks "/" substr($0, 2, length($0) - 2)
		if ((getline l < f) > 0) {
			flush()
			print l
			while ((getline l < f) > 0)
				print l
			close(f)
			next
		}
	}
	/^$/ { flush(); print; next }
	{
		line = $0
		s = ""
		while (match(line, /@[A-Z0-9_]+@/)) {
			name = substr(line, RSTART + 1, RLENGTH - 2)
			if (name in val)
				filled = 1
			s = s substr(line, 1, RSTART - 1) \
				(name in val ? val[name] : "@" name "@")
			line = substr(line, RSTART + RLENGTH)
		}
		s = s line
		if (s ~ /^[ \t]/)
			indented = 1
		para = para (np ? " " : "") s
		raw = raw s "\n"
		np++
	}
	END { flush() }' "$template" >"$tmp/body"

left=$(grep -o '@[A-Z0-9_]*@' "$tmp/body" | sort -u | tr '\n' ' ' || true)
[ -z "$left" ] || die "$template: no value for $left"
# git's own " create mode 100644 PATH" lines of the diffstat are as long
# as their paths.
long=$(expand "$tmp/body" | awk -v w="$width" 'length > w && !/^ (create|delete) mode [0-7]+ / { printf "%d: %s\n", NR, $0 }')
[ -z "$long" ] || die "lines over $width columns in the cover letter (fix $template):"$'\n'"$long"

width_nn=${#n}
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: $from"
	# The date of the series' last commit: the letter changes only
	# when the series or the numbers do.
	echo "Date: $(git -C "$KTREE" log -1 --format=%aD "${range##*..}")"
	printf 'Subject: [PATCH %0*d/%d] %s\n' "$width_nn" 0 "$n" "$title"
	echo
	cat "$tmp/body"
	echo
	echo "-- "
} >"$tmp/cover"
mkdir -p "$(dirname "$out")"
cp "$tmp/cover" "$out"
log "wrote $out ($n patches)"
