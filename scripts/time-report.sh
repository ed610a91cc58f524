#!/usr/bin/env bash
# Where make test's time went, from the logs of the last run: the phase
# table (build/logs/phases.tsv) and each test program's time in the
# suite's guests (the exit lines of guest/init). The README's numbers on
# make test's time come from its output, kept in tests/results/.
#   time-report.sh [LOGS]
set -euo pipefail
. "$(dirname "$0")/common.sh"

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
	echo "# $k suite: seconds per program (guest/init)"
	tr -d '\r' <"$f" | sed -nE 's/^# msharefs-runner: (.*) exit=[0-9]+ after ([0-9]+) s$/\2 \1/p' |
		sort -rn | awk '{ printf "%-48s %6d s\n", $2, $1; t += $1 } END { printf "%-48s %6d s\n", "all programs", t }'
done
for k in fast debug; do
	f=$logs/mm-$k.times
	[ -s "$f" ] || continue
	echo "# $k mm selftests: the slowest runs (guest uptime, mm-selftests.sh)"
	cat "$f"
done
