#!/usr/bin/env bash
# What the series' shape is, from kernel/patches and the tree: patches per
# series, the patches that touch msharefs.rst, the lines of the series'
# own files that later patches remove again, the generic test lines and
# hook calls (hook-sites.sh), and x86 TLB internals left in mm/mshare.c.
# Written to tests/results/series-layout.txt.
set -euo pipefail
. "$(dirname "$0")/common.sh"

{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	for s in $(series_names); do
		echo "series $s: $(grep -c "^$s/" "$PATCHES/series") patches"
	done
	echo "all series: $(grep -c '^[^#]' "$PATCHES/series") patches"
	echo "patches touching Documentation/filesystems/msharefs.rst:" \
		"$(grep -l '^diff --git a/Documentation/filesystems/msharefs.rst' \
			"$PATCHES"/*/0[0-9]*.patch | grep -vc 0000-cover-letter)"
	# The series creates these files, so every line a patch removes from
	# them is one an earlier patch of the series added.
	echo "lines added and removed again in mm/mshare.c, include/linux/mshare.h, msharefs.rst:" \
		"$(git -C "$KTREE" log --numstat --format= base..HEAD -- mm/mshare.c \
			include/linux/mshare.h Documentation/filesystems/msharefs.rst |
			awk '{ d += $2 } END { print d + 0 }')"
	read -r t c f < <("$TOP/scripts/hook-sites.sh" --counts)
	echo "generic vma_is_mshare()/mm_is_mshare() test lines: $t; hook calls: $c; files: $f"
	echo "x86 TLB internals in mm/mshare.c (cpu_tlbstate, leave_mm, inc_mm_tlb_gen, tlb_gen):" \
		"$(git -C "$KTREE" grep -cE 'cpu_tlbstate|leave_mm|inc_mm_tlb_gen|\.tlb_gen' HEAD -- mm/mshare.c | cut -d: -f3 || echo 0)"
} | tee "$TOP/tests/results/series-layout.txt"
