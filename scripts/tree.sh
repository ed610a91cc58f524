#!/usr/bin/env bash
# Regenerate build/linux: Debian's linux-source-6.12 as a git repository
# whose base commit is the pristine source (tag "base") and whose later
# commits are kernel/patches/series, applied with git am.
#
# An existing tree is never thrown away silently: uncommitted edits stop the
# script, and commits are kept on a backup branch before the reset.
set -euo pipefail
. "$(dirname "$0")/common.sh"

TARBALL=/usr/src/linux-source-6.12.tar.xz

check_source() {
	local have
	have=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || true)
	[ -f "$TARBALL" ] || die "$TARBALL missing: run 'make deps'"
	if [ "$have" != "$PINNED" ]; then
		log "WARNING: linux-source-6.12 is $have, not the pinned $PINNED"
		log "WARNING: the series may not apply or behave as tested"
	fi
	echo "$have"
}

unpack_base() {
	local version=$1
	log "unpacking $TARBALL into $KTREE"
	rm -rf "$KTREE.tmp"
	mkdir -p "$KTREE.tmp"
	tar -xf "$TARBALL" -C "$KTREE.tmp" --strip-components=1
	git -C "$KTREE.tmp" init -q -b main
	git -C "$KTREE.tmp" config core.autocrlf false
	# Debian's .gitignore ignores every top-level path of the source
	# package; drop that block so that new files can be committed.
	sed -i '/^# Debian packaging: ignore everything/,$d' "$KTREE.tmp/.gitignore"
	git -C "$KTREE.tmp" add -A -f .
	git -C "$KTREE.tmp" commit -q -m "Debian linux-source-6.12 $version"
	git -C "$KTREE.tmp" tag base
	echo "$version" >"$KTREE.tmp/.git/msharefs-source-version"
	mv "$KTREE.tmp" "$KTREE"
}

reset_to_base() {
	require_clean_tree
	if [ "$(git -C "$KTREE" rev-parse HEAD)" != "$(git -C "$KTREE" rev-parse base)" ]; then
		local backup
		backup=backup/$(date +%Y%m%d-%H%M%S)
		git -C "$KTREE" branch -f "$backup" HEAD
		log "previous commits kept on branch $backup"
	fi
	git -C "$KTREE" checkout -q main
	git -C "$KTREE" reset -q --hard base
}

# SERIES=<name> stops after that series (make tree SERIES=base: the base
# alone); by default every series applies.
apply_series() {
	local p n=0 cur= stop=${SERIES:-}
	[ -z "$stop" ] || series_names | grep -qx "$stop" ||
		die "no series '$stop' in $SERIES_CONF"
	while read -r p; do
		case "$p" in
		'# series '*)
			[ -n "$stop" ] && [ "$cur" = "$stop" ] && break
			cur=${p#\# series }
			cur=${cur%%:*}
			continue
			;;
		''|'#'*) continue ;;
		esac
		git -C "$KTREE" am -q --keep-cr "$PATCHES/$p" ||
			die "$p does not apply; fix it in $KTREE (git am --continue) and run 'make export'"
		n=$((n + 1))
	done <"$PATCHES/series"
	log "applied $n patches${stop:+ (series up to $stop)} on $(cat "$KTREE/.git/msharefs-source-version")"
}

version=$(check_source)
if [ -d "$KTREE/.git" ]; then
	[ "$(cat "$KTREE/.git/msharefs-source-version")" = "$version" ] ||
		die "$KTREE was made from another source version: move it away first"
	reset_to_base
else
	unpack_base "$version"
fi
apply_series
