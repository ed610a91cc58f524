#!/usr/bin/env bash
# The README's bench-arch section: page tables and faults per sharer on
# another architecture (bench/results/FLAVOUR-bench-share.csv, made by
# make bench-arm64) beside x86_64's (bench/results/bench-share.csv, made
# by make bench), for 1 GiB shared by 1 to 256 processes, and the first
# touch of a page, as a ratio to memfd in the same boot.
#   bench-arch-report.sh FLAVOUR        (arm64-fast)
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:?usage: bench-arch-report.sh FLAVOUR}
R=$TOP/bench/results
arch=$R/$flavour-bench-share.csv
x86=$R/bench-share.csv
touch=$R/$flavour-bench-touch.csv
x86touch=$R/bench-touch.csv
for f in "$arch" "$x86"; do
	[ -f "$f" ] || die "no $f"
done
# The guest may have no clock: the date the CSV was written.
date=$(date -u -r "$arch" +%F)

sec=$(mktemp)
trap 'rm -f "$sec"' EXIT
{
	echo "<!-- bench-arch:begin -->"
	echo "Measured by \`make bench-arm64\` on ${date:-?} (\`bench/results/$flavour-bench-share.csv\`, the $flavour kernel under qemu-system-aarch64) beside \`make bench\` on x86_64 (\`bench/results/bench-share.csv\`): 1 GiB of shared memory, every process touching all of it. Page-table kB per process and minor faults per process are deterministic counts, the same on every run."
	echo
	echo "| kind | processes | arm64 PT kB/process | x86_64 PT kB/process | arm64 faults/process | x86_64 faults/process |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
	awk -F, '
		FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
		$col[FILENAME, "size_mib"] == 1024 && $col[FILENAME, "status"] == "ok" {
			k = $col[FILENAME, "kind"] "," $col[FILENAME, "procs"]
			pt[FILENAME, k] = $col[FILENAME, "pt_per_proc_kb"]
			fl[FILENAME, k] = $col[FILENAME, "minflt_avg"]
			if (FILENAME == ARGV[1] && !(k in seen)) { seen[k] = 1; order[++n] = k }
		}
		END {
			for (i = 1; i <= n; i++) {
				k = order[i]; split(k, kp, ",")
				if (kp[1] == "none") continue
				x = ((ARGV[2], k) in pt) ? pt[ARGV[2], k] : "-"
				xf = ((ARGV[2], k) in fl) ? fl[ARGV[2], k] : "-"
				printf "| %s | %s | %s | %s | %s | %s |\n", kp[1], kp[2],
					pt[ARGV[1], k], x, fl[ARGV[1], k], xf
			}
		}' "$arch" "$x86"
	if [ -f "$touch" ] && [ -f "$x86touch" ]; then
		echo
		echo "First touch of a 4 KiB page, as a ratio to memfd in the same boot (emulated CPUs: times are noisy, ratios less so):"
		echo
		echo "| kind | arm64 vs memfd | x86_64 vs memfd |"
		echo "| --- | ---: | ---: |"
		awk -F, 'FNR == 1 { next }
			{ v[FILENAME, $1] = $6; if (FILENAME == ARGV[1]) order[++n] = $1 }
			END { for (i = 1; i <= n; i++)
				printf "| %s | %s | %s |\n", order[i], v[ARGV[1], order[i]],
					((ARGV[2], order[i]) in v) ? v[ARGV[2], order[i]] : "-" }' \
			"$touch" "$x86touch"
	fi
	echo "<!-- bench-arch:end -->"
} >"$sec"
replace_section bench-arch "$TOP/README.md" "$sec"
log "README bench-arch section written"
