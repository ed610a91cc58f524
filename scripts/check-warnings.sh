#!/usr/bin/env bash
# The series adds no compiler or sparse warning: compile every .c file it
# changes with W=1 and sparse (C=2), on the fast config, at base (without
# CONFIG_MSHARE) and at HEAD, and fail on any warning HEAD has that base
# has not. Warnings are compared without line numbers, which the series
# shifts; mm/mshare.c, new, must have none. Files the fast config does
# not build (mm/hmm.c) are named and skipped. Log: $BUILD/check-warnings/.
set -euo pipefail
. "$(dirname "$0")/common.sh"

command -v sparse >/dev/null || die "no sparse: run 'make deps'"
out=$BUILD/check-warnings
wt=$BUILD/warn-base
mkdir -p "$out"
if [ ! -d "$wt" ]; then
	git -C "$KTREE" worktree add -q --detach "$wt" base
fi
git -C "$wt" checkout -q --detach base

files=$(git -C "$KTREE" diff --name-only base..HEAD -- '*.c' | grep -v '^tools/' || true)
[ -n "$files" ] || die "the series changes no .c file?"

# warnings TREE OBJ NAME: one "file: message" line per warning.
warnings() {
	local tree=$1 obj=$2 name=$3 f
	: >"$out/$name.txt"
	for f in $files; do
		[ -f "$tree/$f" ] || continue
		if ! make -C "$tree" O="$obj" W=1 C=2 "${f%.c}.o" \
				>"$out/$name.$(basename "$f").log" 2>&1; then
			if grep -q "No rule to make target" "$out/$name.$(basename "$f").log"; then
				echo "skip $f (not in the fast config)" >>"$out/skipped.txt"
				continue
			fi
			cat "$out/$name.$(basename "$f").log" >&2
			die "$f does not compile at $name"
		fi
		grep -E '(warning|error):' "$out/$name.$(basename "$f").log" |
			sed -E 's/^[^ ]*\/([^/ ]+\/[^/ ]+):[0-9]+:[0-9]+:/\1:/;
				s/^([^ :]+):[0-9]+:[0-9]+:/\1:/' >>"$out/$name.txt" || true
	done
	sort -o "$out/$name.txt" "$out/$name.txt"
}

: >"$out/skipped.txt"
log "base: preparing $BUILD/obj-warn-base"
KTREE=$wt BUILD_OBJ=$BUILD/obj-warn-base BASELINE=1 TARGET=prepare \
	"$TOP/scripts/build-kernel.sh" fast >/dev/null
warnings "$wt" "$BUILD/obj-warn-base" base
log "HEAD: preparing $BUILD/obj-warn-head"
BUILD_OBJ=$BUILD/obj-warn-head TARGET=prepare \
	"$TOP/scripts/build-kernel.sh" fast >/dev/null
warnings "$KTREE" "$BUILD/obj-warn-head" head

new=$(comm -13 "$out/base.txt" "$out/head.txt")
sort -u "$out/skipped.txt"
if [ -n "$new" ]; then
	printf '%s\n' "$new"
	die "the series adds $(printf '%s\n' "$new" | wc -l) warnings (W=1, sparse)"
fi
log "W=1 and sparse: no new warning in $(echo "$files" | wc -w) files ($(wc -l <"$out/base.txt") at base, $(wc -l <"$out/head.txt") at HEAD)"
