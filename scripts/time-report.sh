#!/usr/bin/env bash
# Where make test's time went, from the logs of the last run: the phase
# table (build/logs/phases.tsv), each test program's time in the suite's
# guests (the exit lines of guest/in-guest-init) and the slowest mm selftests runs
# (mm-selftests.sh). The README's numbers on make test's time come from
# such a report kept in tests/results/, through --readme.
#   time-report.sh [LOGS]
#   time-report.sh --readme REPORT   (rewrites the README's times section)
set -euo pipefail
. "$(dirname "$0")/common.sh"

# The README section between <!-- times:begin --> and <!-- times:end -->,
# made from a committed report: the phase table, the total, and the
# slowest programs and mm selftests runs of each kernel.
readme_section() {
	local report=$1 rel=${1#"$TOP"/}

	awk -v rel="$rel" '
	function flush() {
		if (list != "") printf "- %s: %s.\n", what, list
		list = ""
	}
	/^# make test phases, / {
		sub(/^# make test phases, /, "")
		print "<!-- times:begin -->"
		printf "A fresh clone'"'"'s `make test` on this 2-core machine, %s (`%s`, written by `scripts/time-report.sh`; this section by its `--readme`):\n\n", $0, rel
		print "| phase | seconds | minutes |"
		print "|---|---:|---:|"
		section = "phases"
		next
	}
	/^# / {
		flush()
		if (section == "phases") print ""
		section = "list"; n = 0
		what = $0; sub(/^# /, "", what); sub(/:.*/, "", what)
		if (what ~ /suite$/) what = what ", the slowest programs"
		next
	}
	section == "phases" {
		sec = $(NF - 3); min = $(NF - 1)
		name = $0; sub(/[ \t]+[0-9]+ s[ \t]+[0-9.]+ min[ \t]*$/, "", name)
		if (name == "total (wall clock)") {
			total = min
			printf "| **%s** | **%d** | **%s** |\n", name, sec, min
		} else {
			printf "| %s | %d | %s |\n", name, sec, min
		}
		next
	}
	section == "list" && n < 3 && /[0-9.]+ s/ {
		line = $0
		if (line ~ /^ *[0-9.]+ s  /) {
			# mm-selftests.sh: "   12.3 s  ./name args"
			t = $1; sub(/^ *[0-9.]+ s  /, "", line)
			if (line ~ /^\(/) next
			item = sprintf("`%s` %d s", line, t + 0.5)
		} else {
			if (line ~ /^all programs/) next
			t = $(NF - 1); sub(/[ \t]+[0-9]+ s[ \t]*$/, "", line)
			item = sprintf("`%s` %d s", line, t)
		}
		list = list (list == "" ? "" : ", ") item
		n++
	}
	END {
		flush()
		if (total == "") print "\n(That run printed no total.)"
		print "<!-- times:end -->"
	}' "$report"
}

if [ "${1:-}" = --readme ]; then
	report=${2:?usage: time-report.sh --readme REPORT}
	[ -s "$report" ] || die "no report $report"
	sec=$(mktemp)
	trap 'rm -f "$sec"' EXIT
	readme_section "$report" >"$sec"
	replace_section times "$TOP/README.md" "$sec"
	log "README times section from $report"
	exit 0
fi

logs=${1:-$BUILD/logs}
[ -s "$logs/phases.tsv" ] || die "no $logs/phases.tsv: run make test"
echo "# make test phases, $(date -u -r "$logs/phases.tsv" '+%Y-%m-%d %H:%M UTC')"
awk -F'\t' '{ printf "%-48s %6d s %6.1f min\n", $2, $1, $1 / 60 }' "$logs/phases.tsv"
if [ -s "$logs/phases.tsv.total" ]; then
	awk '{ printf "%-48s %6d s %6.1f min\n", "total (wall clock)", $1, $1 / 60 }' "$logs/phases.tsv.total"
fi
for k in fast debug; do
	f=$logs/$k-test.out
	[ -f "$f" ] || continue
	echo "# $k suite: seconds per program (guest/in-guest-init)"
	tr -d '\r' <"$f" | sed -nE 's/^# msharefs-runner: (.*) exit=[0-9]+ after ([0-9]+) s$/\2 \1/p' |
		sort -rn | awk '{ printf "%-48s %6d s\n", $2, $1; t += $1 } END { printf "%-48s %6d s\n", "all programs", t }'
done
for k in fast debug; do
	f=$logs/mm-$k.times
	[ -s "$f" ] || continue
	echo "# $k mm selftests: the slowest runs (guest uptime, mm-selftests.sh)"
	cat "$f"
done
