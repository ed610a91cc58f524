#!/usr/bin/env bash
# Replace what one commit of build/linux's series holds of some files,
# keeping the tree of every later commit as it was:
#   retree.sh COMMIT FILE=NEWCONTENT...
# COMMIT's FILE becomes the content of NEWCONTENT (a path on the host);
# the commits after it are made again on top with their own trees,
# messages and authors, so their patches change by exactly what moved
# into COMMIT, and the last tree (what was tested) does not change. For a
# line that a resplit put into the wrong patch: give the earlier patch
# the line, and the later one stops adding it.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

target=$(git -C "$KTREE" rev-parse "${1:?usage: retree.sh COMMIT FILE=NEW...}")
shift
cd "$KTREE"
require_clean_tree
git merge-base --is-ancestor "$target" HEAD || die "$target is not in HEAD's history"
idx=$(mktemp)
trap 'rm -f "$idx"' EXIT
GIT_INDEX_FILE=$idx git read-tree "$target"
for spec in "$@"; do
	f=${spec%%=*} new=${spec#*=}
	[ -f "$new" ] || die "no file $new"
	blob=$(git hash-object -w "$new")
	GIT_INDEX_FILE=$idx git update-index --add --cacheinfo 100644,"$blob","$f"
done
remake() {	# remake COMMIT TREE PARENT: COMMIT's metadata on TREE
	GIT_AUTHOR_NAME=$(git log -1 --format=%an "$1") \
	GIT_AUTHOR_EMAIL=$(git log -1 --format=%ae "$1") \
	GIT_AUTHOR_DATE=$(git log -1 --format=%ad "$1") \
		git commit-tree "$2" -p "$3" -F <(git log -1 --format=%B "$1" | git stripspace)
}
new=$(remake "$target" "$(GIT_INDEX_FILE=$idx git write-tree)" "$target^")
for c in $(git rev-list --reverse "$target..HEAD"); do
	new=$(remake "$c" "$c^{tree}" "$new")
done
[ "$(git rev-parse "$new^{tree}")" = "$(git rev-parse "HEAD^{tree}")" ] ||
	die "the last tree changed"
git update-ref -m "retree $target" HEAD "$new"
log "$(git log --oneline -1 "$target") holds the new content; $(git rev-list --count "$target..HEAD") later commits remade, the last tree unchanged"
