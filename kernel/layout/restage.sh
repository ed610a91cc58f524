#!/usr/bin/env bash
# Give a directory of build/linux new contents at chosen commits of the
# series, every other commit keeping what its parent has of it:
#   restage.sh DIR COMMIT=SRCDIR...
# For the selftests, which grow through the series: each commit named
# gets DIR exactly as SRCDIR (files added, changed and removed), the
# commits in between carry the last one forward, everything outside DIR
# stays as it was, messages and authors too.
set -euo pipefail
. "$(dirname "$0")/../../scripts/common.sh"

dir=${1:?usage: restage.sh DIR COMMIT=SRCDIR...}
shift
cd "$KTREE"
require_clean_tree
declare -A src
for spec in "$@"; do
	src[$(git rev-parse "${spec%%=*}")]=$(realpath "${spec#*=}")
done
idx=$(mktemp)
trap 'rm -f "$idx"' EXIT
remake() {	# remake COMMIT TREE PARENT
	GIT_AUTHOR_NAME=$(git log -1 --format=%an "$1") \
	GIT_AUTHOR_EMAIL=$(git log -1 --format=%ae "$1") \
	GIT_AUTHOR_DATE=$(git log -1 --format=%ad "$1") \
		git commit-tree "$2" -p "$3" -F <(git log -1 --format=%B "$1")
}
old=$(git rev-parse HEAD) new=base cur=
for c in $(git rev-list --reverse base..HEAD); do
	[ -z "${src[$c]:-}" ] || cur=${src[$c]}
	GIT_INDEX_FILE=$idx git read-tree "$c"
	if [ -n "$cur" ]; then
		GIT_INDEX_FILE=$idx git ls-files -z -- "$dir" |
			GIT_INDEX_FILE=$idx xargs -0 -r git update-index --force-remove --
		(cd "$cur" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) |
		while read -r f; do
			GIT_INDEX_FILE=$idx git update-index --add --cacheinfo \
				100644,"$(git hash-object -w "$cur/$f")","$dir/$f"
		done
	fi
	new=$(remake "$c" "$(GIT_INDEX_FILE=$idx git write-tree)" "$new")
done
git update-ref -m "restage $dir" HEAD "$new"
git read-tree -m -u "$old" HEAD
log "$dir restaged at $# commits; HEAD $(git rev-parse --short HEAD)"
