#!/usr/bin/env bash
# Write the README section between <!-- series-checks:begin --> and
# <!-- series-checks:end --> from the results of the last runs of
# make check-series, make check-warnings and scripts/hook-sites.sh, as
# they are committed in tests/results/ (hook-sites.txt is written anew
# here). 'make check-series' and
# 'make check-warnings' run it; nothing in the section is typed by hand.
set -euo pipefail
. "$(dirname "$0")/common.sh"

res=$TOP/tests/results
# The call sites are counted anew: they change with every series edit.
"$TOP/scripts/hook-sites.sh" >"$res/hook-sites.txt"
get() { sed -n "s/^$2: //p" "$res/$1" | head -1; }
sec=$(mktemp)
trap 'rm -f "$sec"' EXIT
{
	echo "<!-- series-checks:begin -->"
	if [ -f "$res/check-series.txt" ]; then
		s=$(get check-series.txt seconds)
		printf -- '- `make check-series`, %s: %s at %s; %s s (%s min) on %s CPUs, through ccache (`tests/results/check-series.txt`).\n' \
			"$(get check-series.txt date)" "$(get check-series.txt result)" \
			"$(get check-series.txt series)" "$s" "$((s / 60))" "$(get check-series.txt cpus)"
	fi
	# A run that has not finished yet (it resumes: CHECK_SERIES_RESUME=1).
	if [ -f "$res/check-series.progress" ] && [ -e "$KTREE/.git" ]; then
		total=$(git -C "$KTREE" rev-list --count base..HEAD)
		built=$(grep -c . "$res/check-series.progress" || true)
		if [ "$built" -lt "$total" ]; then
			printf -- '- `make check-series` of the current series (%s commits at %s) is not finished: %s commits built so far, all of them without error (`tests/results/check-series.progress`; `CHECK_SERIES_RESUME=1 make check-series` goes on). The line above is of the last complete run.\n' \
				"$total" "$(git -C "$KTREE" rev-parse --short HEAD)" "$built"
		fi
	fi
	# make check-series-quick: a finished run, or how far one got.
	if [ -f "$res/check-series-quick.txt.new" ]; then
		q=$res/check-series-quick.txt.new
		printf -- '- `make check-series-quick` (compiles what each commit changes, `-Werror`, no link) had reached commit %s of %s when it was stopped: %s compiled, %s failed (`tests/results/check-series-quick.txt.new`; the commits before were checked in earlier runs).\n' \
			"$(tail -1 "$q" | awk '{ print $1 }')" "$(git -C "$KTREE" rev-list --count base..HEAD)" \
			"$(grep -c ': compiled\|: nothing to compile' "$q" || true)" "$(grep -c ': FAILED' "$q" || true)"
	elif [ -f "$res/check-series-quick.txt" ]; then
		printf -- '- `make check-series-quick`, %s: %s at %s (`tests/results/check-series-quick.txt`).\n' \
			"$(get check-series-quick.txt date)" "$(get check-series-quick.txt result)" \
			"$(get check-series-quick.txt series)"
	fi
	if [ -f "$res/check-warnings.txt" ]; then
		nom=$(get check-warnings.txt 'warnings at HEAD without MSHARE')
		printf -- '- `make check-warnings`, %s, at %s: %s files with `W=1` and sparse, %s warnings at `base` and %s at `HEAD`%s, %s new (`tests/results/check-warnings.txt`).\n' \
			"$(get check-warnings.txt date)" "$(get check-warnings.txt series)" \
			"$(get check-warnings.txt files)" "$(get check-warnings.txt 'warnings at base')" \
			"$(get check-warnings.txt 'warnings at HEAD')" \
			"${nom:+ ($nom without \`MSHARE\`)}" "$(get check-warnings.txt 'new at HEAD')"
	fi
	if [ -f "$res/hook-sites.txt" ]; then
		printf -- '- `scripts/hook-sites.sh`: %s (`tests/results/hook-sites.txt`).\n' \
			"$(tail -1 "$res/hook-sites.txt")"
	fi
	echo "<!-- series-checks:end -->"
} >"$sec"
replace_section series-checks "$TOP/README.md" "$sec"
log "README series-checks section written"
