#!/usr/bin/env bash
# Build the fast kernel at every commit of the series, one after another,
# in a separate worktree, so that each patch is known to build on its own.
set -euo pipefail
. "$(dirname "$0")/common.sh"

wt=$BUILD/series-check
obj=$BUILD/obj-series
if [ ! -d "$wt" ]; then
	git -C "$KTREE" worktree add -q --detach "$wt" base
fi
for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
	git -C "$wt" checkout -q --detach "$c"
	log "building $(git -C "$wt" log --oneline -1)"
	KTREE=$wt BUILD_OBJ=$obj "$TOP/scripts/build-kernel.sh" fast >/dev/null ||
		die "the series does not build at $(git -C "$KTREE" log --oneline -1 "$c")"
done
log "every commit of the series builds"
