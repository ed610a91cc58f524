#!/usr/bin/env bash
# Build the kernels without the series, for comparing the mm selftests:
# build/obj-base-FLAVOUR from a worktree of build/linux at tag "base" (the
# pristine Debian source), with the same config fragments less MSHARE.
#   baseline-kernel.sh [fast] [debug]
set -euo pipefail
. "$(dirname "$0")/common.sh"

wt=$BUILD/linux-base
[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
if [ ! -e "$wt/.git" ]; then
	git -C "$KTREE" worktree prune
	git -C "$KTREE" worktree add -q --detach "$wt" base
fi
[ $# -gt 0 ] || set -- fast debug
for flavour in "$@"; do
	KTREE=$wt BUILD_OBJ=$BUILD/obj-base-$flavour BASELINE=1 \
		"$TOP/scripts/build-kernel.sh" "$flavour"
done
