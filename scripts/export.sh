#!/usr/bin/env bash
# Export the commits of build/linux after tag "base" as git format-patch
# files, one directory of kernel/patches per series of kernel/series.conf
# (the base, then the follow-ups, cut by their counts), and the series
# file that lists them all in order under "# series NAME" lines; then write
# the cover letters again (NAME/0000-cover-letter.patch, kept out of the
# series file: make tree applies only what it lists).
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
require_clean_tree
total=$(git -C "$KTREE" rev-list --count base..HEAD)
want=$(awk '!/^#/ && NF { n += $2 } END { print n + 0 }' "$SERIES_CONF")
[ "$total" = "$want" ] ||
	die "$KTREE has $total commits after base, $SERIES_CONF counts $want: fix the counts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/series"
for s in $(series_names); do
	git -C "$KTREE" format-patch -q --no-signature --zero-commit -N \
		-o "$tmp/$s" "$(series_range "$s")"
	echo "# series $s: $(series_title "$s")" >>"$tmp/series"
	(cd "$tmp/$s" && ls -1 -- *.patch) | sed "s|^|$s/|" >>"$tmp/series"
done
# What is not a series of series.conf any more goes, with its letter.
find "$PATCHES" -mindepth 1 -maxdepth 1 ! -name series -exec rm -rf -- {} +
for s in $(series_names); do
	mkdir -p "$PATCHES/$s"
	cp "$tmp/$s"/*.patch "$PATCHES/$s/"
done
cp "$tmp/series" "$PATCHES/series"
log "exported $total patches in $(series_names | wc -l) series to $PATCHES"
"$TOP/scripts/cover-letter.sh" ||
	die "the patches are exported, but not the cover letters (above)"
