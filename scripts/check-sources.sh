#!/usr/bin/env bash
# Checks of the repository itself that make test runs first:
#  - no build product is tracked (an ELF file committed by mistake once);
#  - tests/manifest is what the sources plan (scripts/manifest.sh).
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
log "no tracked ELF files; tests/manifest matches the sources ($(awk '/^[a-z]/ { n += $3 } END { print n }' "$TOP/tests/manifest") tests)"
