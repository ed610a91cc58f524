#!/usr/bin/env bash
# Export the commits of build/linux after tag "base" as numbered
# git format-patch files in kernel/patches, plus the series file.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -d "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
require_clean_tree
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$KTREE" format-patch -q --no-signature --zero-commit -N -o "$tmp" base..HEAD
rm -f "$PATCHES"/*.patch
mkdir -p "$PATCHES"
if compgen -G "$tmp/*.patch" >/dev/null; then
	cp "$tmp"/*.patch "$PATCHES"/
fi
(cd "$PATCHES" && ls -1 -- *.patch 2>/dev/null || true) >"$PATCHES/series"
log "exported $(wc -l <"$PATCHES/series") patches to $PATCHES"
