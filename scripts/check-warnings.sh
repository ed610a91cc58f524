#!/usr/bin/env bash
# The series adds no compiler or sparse warning: compile every .c file it
# changes with W=1 and sparse (C=2), on the fast config, at base (without
# CONFIG_MSHARE), at HEAD, and at HEAD without CONFIG_MSHARE (the stubs),
# and fail on any warning either HEAD build has that base has not.
# Warnings are compared without line numbers, which the series shifts;
# mm/mshare.c, new, must have none. Files the fast config does not build
# (mm/hmm.c; mm/mshare.c without MSHARE) are named and skipped. Logs in $BUILD/check-warnings/, the
# result in tests/results/check-warnings.txt.
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

# built TREE OBJ FILE: does the config build FILE? Its directory's
# Makefile names the symbol ("obj-$(CONFIG_HMM_MIRROR) += hmm.o").
built() {
	local o sym
	o=$(basename "${3%.c}").o
	sym=$(grep -E "[[:space:]]$o([[:space:]]|$)" "$1/$(dirname "$3")/Makefile" |
		sed -nE 's/^[a-z0-9_-]+-\$\((CONFIG_[A-Z0-9_]+)\).*/\1/p' | head -1)
	[ -z "$sym" ] || grep -q "^$sym=y" "$2/.config"
}

# warnings TREE OBJ NAME: one "file: message" line per warning.
warnings() {
	local tree=$1 obj=$2 name=$3 f
	: >"$out/$name.txt"
	for f in $files; do
		[ -f "$tree/$f" ] || continue
		if ! built "$tree" "$obj" "$f"; then
			echo "skip $f at $name (not in its config)" >>"$out/skipped.txt"
			continue
		fi
		if ! make -C "$tree" O="$obj" W=1 C=2 "${f%.c}.o" \
				>"$out/$name.$(basename "$f").log" 2>&1; then
			cat "$out/$name.$(basename "$f").log" >&2
			die "$f does not compile at $name"
		fi
		grep -E '(warning|error):' "$out/$name.$(basename "$f").log" |
			sed -E 's/^[^ ]*\/([^/ ]+\/[^/ ]+):[0-9]+:[0-9]+:/\1:/;
				s/^([^ :]+):[0-9]+:[0-9]+:/\1:/' >>"$out/$name.txt" || true
	done
	sort -o "$out/$name.txt" "$out/$name.txt"
}

# summary: compare, write tests/results/check-warnings.txt, fail on new.
summary() {
	local new
	new=$( (comm -13 "$out/base.txt" "$out/head.txt"
		if [ -f "$out/nomshare.txt" ]; then
			comm -13 "$out/base.txt" "$out/nomshare.txt" | sed 's/^/without MSHARE: /'
		fi) | sort)
	{
		echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
		echo "series: $(git -C "$KTREE" rev-parse --short HEAD) ($PINNED)"
		echo "files: $(echo "$files" | wc -w)"
		sort -u "$out/skipped.txt"
		echo "warnings at base: $(wc -l <"$out/base.txt")"
		echo "warnings at HEAD: $(wc -l <"$out/head.txt")"
		[ ! -f "$out/nomshare.txt" ] ||
			echo "warnings at HEAD without MSHARE: $(wc -l <"$out/nomshare.txt")"
		echo "new at HEAD: $(printf '%s' "$new" | grep -c . || true)"
		[ -z "$new" ] || printf '%s\n' "$new"
	} >"$TOP/tests/results/check-warnings.txt"
	cat "$TOP/tests/results/check-warnings.txt"
	[ -z "$new" ] ||
		die "the series adds $(printf '%s\n' "$new" | wc -l) warnings (W=1, sparse)"
	log "W=1 and sparse: no new warning"
}

# --summary: only compare the lists of the last run.
if [ "${1:-}" = --summary ]; then
	summary
	exit 0
fi

: >"$out/skipped.txt"
log "base: preparing $BUILD/obj-warn-base"
KTREE=$wt BUILD_OBJ=$BUILD/obj-warn-base BASELINE=1 TARGET=prepare \
	"$TOP/scripts/build-kernel.sh" fast >/dev/null
warnings "$wt" "$BUILD/obj-warn-base" base
log "HEAD: preparing $BUILD/obj-warn-head"
BUILD_OBJ=$BUILD/obj-warn-head TARGET=prepare \
	"$TOP/scripts/build-kernel.sh" fast >/dev/null
warnings "$KTREE" "$BUILD/obj-warn-head" head
# The !CONFIG_MSHARE stubs: HEAD without MSHARE compiles like base.
log "HEAD without MSHARE: preparing $BUILD/obj-warn-nomshare"
BUILD_OBJ=$BUILD/obj-warn-nomshare BASELINE=1 TARGET=prepare \
	"$TOP/scripts/build-kernel.sh" fast >/dev/null
warnings "$KTREE" "$BUILD/obj-warn-nomshare" nomshare
summary
