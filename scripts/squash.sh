#!/usr/bin/env bash
# make squash: fold "fixup!" commits of build/linux into the commits they
# fix (git rebase --autosquash), then give every file whose content did
# not change its old modification time back, so that the next kernel
# build stays incremental instead of rebuilding after every header the
# rebase rewrote.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
cd "$KTREE"
git diff --quiet HEAD || die "uncommitted changes in $KTREE: commit them first"
saved=$(mktemp)
trap 'rm -f "$saved"' EXIT
git diff --name-only base HEAD | while read -r f; do
	[ -f "$f" ] && printf '%s %s %s\n' "$(git hash-object "$f")" \
		"$(stat -c %Y "$f")" "$f"
done >"$saved"
GIT_SEQUENCE_EDITOR=true git rebase -q -i --autosquash base
kept=0
while read -r hash mtime f; do
	if [ -f "$f" ] && [ "$(git hash-object "$f")" = "$hash" ]; then
		touch -m -d "@$mtime" "$f"
		kept=$((kept + 1))
	fi
done <"$saved"
log "squashed; $kept unchanged files keep their modification times"
