#!/usr/bin/env bash
# Export the commits of build/linux after tag "base" as numbered
# git format-patch files in kernel/patches, plus the series file, then
# write the cover letter again (0000-cover-letter.patch, which is kept
# out of the series file: make tree applies only what series lists).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -d "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
require_clean_tree
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$KTREE" format-patch -q --no-signature --zero-commit -N -o "$tmp" base..HEAD
mkdir -p "$PATCHES"
for p in "$PATCHES"/*.patch; do
	[ "$p" = "$COVER_LETTER" ] || rm -f -- "$p"
done
if compgen -G "$tmp/*.patch" >/dev/null; then
	cp "$tmp"/*.patch "$PATCHES"/
fi
(cd "$tmp" && ls -1 -- *.patch 2>/dev/null || true) >"$PATCHES/series"
log "exported $(wc -l <"$PATCHES/series") patches to $PATCHES"
if [ -s "$PATCHES/series" ]; then
	"$TOP/scripts/cover-letter.sh" ||
		die "the patches are exported, but not the cover letter (above)"
else
	rm -f -- "$COVER_LETTER"
fi
