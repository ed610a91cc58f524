#!/usr/bin/env bash
# Checks of the repository itself that make test runs first:
#  - no build product is tracked (an ELF file committed by mistake once);
#  - tests/manifest is what the sources plan (scripts/manifest.sh), and
#    the README's table of test programs gives its counts.
set -euo pipefail
. "$(dirname "$0")/common.sh"

elves=$(git -C "$TOP" ls-files -z | (cd "$TOP" && xargs -0 -r sh -c '
	for f; do
		[ -f "$f" ] || continue
		[ "$(od -An -tx1 -N4 "$f" | tr -d " ")" = 7f454c46 ] && echo "$f"
	done; true' sh))
[ -z "$elves" ] || die "ELF files are tracked (build products?): $elves"

make --no-print-directory -s -C "$TOP" headers
"$TOP/scripts/manifest.sh" --check

# The README's table of test programs must give the manifest's counts,
# and its total for the suite the manifest's sum.
readme_count() {
	sed -nE "s/^\| \`$1(\.sh)?\` \| ([0-9]+) \|.*/\2/p" "$TOP/README.md"
}
bad=0
while read -r set prog n _; do
	case "$set" in '#'* | '') continue ;; esac
	got=$(readme_count "$prog")
	[ "$got" = "$n" ] || { log "README.md: $prog has ${got:-no} tests in the table, the manifest $n"; bad=1; }
done <"$TOP/tests/manifest"
suite=$(awk '$1 == "suite" { n += $3 } END { print n }' "$TOP/tests/manifest")
grep -q "; $suite tests per kernel" "$TOP/README.md" ||
	{ log "README.md: the suite has $suite tests per kernel (tests/manifest)"; bad=1; }
[ "$bad" = 0 ] || die "README.md disagrees with tests/manifest"
log "no tracked ELF files; tests/manifest matches the sources ($(awk '/^[a-z]/ { n += $3 } END { print n }' "$TOP/tests/manifest") tests)"
