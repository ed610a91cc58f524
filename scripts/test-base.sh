#!/usr/bin/env bash
# make test-base: the suite on the fast kernel of the base series alone.
# A second kernel tree, build/base/linux, is a worktree of build/linux at
# the base's last commit; its kernel, UAPI headers, tests and initramfs
# are built under build/base, as make test-fast builds them under build.
# The tests are those that tree carries (tools/testing/selftests/msharefs
# as the base leaves it) and the project's own: the follow-up series bring
# their tests with them, so none of theirs runs here, by construction.
set -euo pipefail
. "$(dirname "$0")/common.sh"

require_clean_tree
range=$(series_range base)
end=${range#*..}
wt=$BUILD/base/linux
if [ -e "$wt/.git" ]; then
	KTREE=$wt require_clean_tree
	git -C "$wt" checkout -q --detach "$end"
else
	mkdir -p "$BUILD/base"
	git -C "$KTREE" worktree add -q --detach "$wt" "$end"
fi
# What does not depend on the kernel tree is shared with build/.
ln -sfn ../deb-user "$BUILD/base/deb-user"
log "the base series alone: $(git -C "$wt" log --oneline -1) ($(git -C "$wt" rev-list --count base..HEAD) patches)"
# The closing line, with the tree it is of, goes to tests/results.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
rc=0
make --no-print-directory -C "$TOP" BUILD="$(realpath --relative-to="$TOP" "$BUILD/base")" test-fast 2>&1 |
	tee "$out" || rc=$?
{
	echo "# make test-base, $(date -u +%Y-%m-%dT%H:%MZ): the fast kernel of the base series alone ($(git -C "$wt" log --oneline -1 | cut -c1-60)), with the tests it carries"
	grep -E '^(fast: |failed: |[0-9]+ passed)|ran [0-9]+ s' "$out" || true
} >"$TOP/tests/results/test-base.txt"
exit "$rc"
