# Shared settings for the msharefs scripts; sourced, not run.
# shellcheck shell=bash
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# An absolute path: make BUILD=build/base (a second tree) passes it relative.
BUILD=$(realpath -m "${BUILD:-$TOP/build}")
KTREE=${KTREE:-$BUILD/linux}
PATCHES=$TOP/kernel/patches
# The series, their sizes and titles (kernel/series.conf): the base, then
# the follow-ups. Each has a directory in $PATCHES with its patches and a
# cover letter, 0000-cover-letter.patch, which is never in the series file.
SERIES_CONF=$TOP/kernel/series.conf
series_names() { awk '!/^#/ && NF { print $1 }' "$SERIES_CONF"; }
series_count() { awk -v s="$1" '!/^#/ && $1 == s { print $2 }' "$SERIES_CONF"; }
series_title() {
	awk -F'\t' -v s="$1" '!/^#/ && $1 == s { print $3 }' "$SERIES_CONF"
}
# The commits of series @1 in $KTREE (base..HEAD), as a revision range.
series_range() {
	local s n=0 c first last
	for s in $(series_names); do
		c=$(series_count "$s")
		if [ "$s" = "$1" ]; then
			first=$n
			last=$((n + c))
			break
		fi
		n=$((n + c))
	done
	[ -n "${last:-}" ] || die "no series $1 in $SERIES_CONF"
	mapfile -t commits < <(git -C "$KTREE" rev-list --reverse base..HEAD)
	[ "$last" -le "${#commits[@]}" ] ||
		die "$SERIES_CONF counts more patches than $KTREE has (base..HEAD)"
	if [ "$first" = 0 ]; then
		echo "base..${commits[$((last - 1))]}"
	else
		echo "${commits[$((first - 1))]}..${commits[$((last - 1))]}"
	fi
}
CONFIGS=$TOP/kernel/configs
PINNED=$(tr -d '[:space:]' <"$TOP/kernel/VERSION")
JOBS=${JOBS:-$(nproc)}

log() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# Refuse to touch a kernel tree holding edits that are not committed.
require_clean_tree() {
	if [ -n "$(git -C "$KTREE" status --porcelain --untracked-files=no)" ]; then
		git -C "$KTREE" status --short --untracked-files=no >&2
		die "$KTREE has uncommitted edits: commit them (git -C $KTREE commit -s) or stash them first"
	fi
}

# make test's phase times: scripts/make-test.sh sets MSHAREFS_PHASES to a
# file of "seconds<TAB>phase" lines; test.sh prints them as a table.
phase_time() {
	[ -z "${MSHAREFS_PHASES:-}" ] || printf '%s\t%s\n' "$2" "$1" >>"$MSHAREFS_PHASES"
}

phase_table() {
	[ -n "${MSHAREFS_PHASES:-}" ] && [ -s "$MSHAREFS_PHASES" ] || return 0
	echo "phase times (make test):"
	echo $(($(date +%s) - ${MSHAREFS_TEST_START:-$(date +%s)})) >"$MSHAREFS_PHASES.total"
	awk -F'\t' -v wall=$(($(date +%s) - ${MSHAREFS_TEST_START:-$(date +%s)})) '
		{ printf "  %-40s %5d s  %5.1f min\n", $2, $1, $1 / 60 }
		END { printf "  %-40s %5d s  %5.1f min\n", "total (wall clock)", wall, wall / 60 }' \
		"$MSHAREFS_PHASES"
}

# Replace the lines of @file from "<!-- @name:begin -->" to
# "<!-- @name:end -->" with the file @section, which holds both markers.
# The README's generated sections (bench, mm, times) go through here.
replace_section() {
	local name=$1 file=$2 section=$3 out

	grep -q "^<!-- $name:begin -->" "$file" || die "$file has no <!-- $name:begin --> marker"
	out=$(mktemp)
	awk -v f="$section" -v b="<!-- $name:begin -->" -v e="<!-- $name:end -->" '
		$0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
		$0 == e { skip = 0; next }
		!skip { print }' "$file" >"$out"
	cat "$out" >"$file"
	rm -f "$out"
}
