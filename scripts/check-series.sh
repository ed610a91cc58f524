#!/usr/bin/env bash
# Build the fast kernel at every commit of the series, one after another,
# in a separate worktree, so that each patch is known to build on its own,
# through ccache (build/ccache): a header change still recompiles every
# includer (its line markers shift), but a second run after a change of
# the series compiles only what the change touched. Commits that change
# only documentation or selftests are not built again. The result, the
# time it took and each commit's time go to tests/results/check-series.txt
# (build/check-series.progress while it runs). CHECK_SERIES_RESUME=1
# keeps the commits that progress file lists as built (same position, same
# hash) and builds the rest: after a run that was stopped, or after a
# patch was added at the end of the series.
set -euo pipefail
. "$(dirname "$0")/common.sh"

wt=$BUILD/series-check
obj=$BUILD/obj-series
if [ ! -d "$wt" ]; then
	git -C "$KTREE" worktree add -q --detach "$wt" base
fi
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}
export CCACHE_BASEDIR=$wt CCACHE_NOHASHDIR=1
command -v ccache >/dev/null || die "no ccache: run 'make deps'"
n=0
progress=$BUILD/check-series.progress
if [ -n "${CHECK_SERIES_RESUME:-}" ] && [ -f "$progress" ]; then
	# Keep only what still holds: the same commit at the same position.
	keep=$(mktemp)
	i=0
	for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
		i=$((i + 1))
		grep "^$i $(git -C "$KTREE" rev-parse --short "$c") " "$progress" >>"$keep" || true
	done
	mv "$keep" "$progress"
else
	: >"$progress"
fi
for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	if grep -q "^$n $(git -C "$KTREE" rev-parse --short "$c") " "$progress"; then
		log "built in an earlier run: $(git -C "$KTREE" log --oneline -1 "$c")"
		continue
	fi
	git -C "$wt" checkout -q --detach "$c"
	# A commit that changes only documentation or selftests builds what
	# its parent built.
	if ! git -C "$wt" diff --name-only "$c^" "$c" |
			grep -qvE '^(Documentation|tools/testing)/'; then
		log "no build input changed: $(git -C "$wt" log --oneline -1)"
		echo "$n $(git -C "$wt" log --format='%h %s' -1) (no build input)" >>"$progress"
		continue
	fi
	log "building $(git -C "$wt" log --oneline -1)"
	t=$(date +%s)
	KCONFIG_ALLOW_UNDEFINED=1 KTREE=$wt BUILD_OBJ=$obj KCC="ccache gcc" "$TOP/scripts/build-kernel.sh" fast >/dev/null ||
		die "the series does not build at $(git -C "$KTREE" log --oneline -1 "$c")"
	echo "$n $(git -C "$wt" log --format='%h %s' -1) ($(($(date +%s) - t)) s)" >>"$progress"
done
# The build time of every commit, also of those built in an earlier run.
secs=$(sed -n 's/.*(\([0-9]*\) s)$/\1/p' "$progress" | awk '{ s += $1 } END { print s + 0 }')
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "series: $(git -C "$KTREE" rev-parse --short HEAD) ($n commits on $PINNED)"
	echo "result: every commit builds (fast config)"
	echo "seconds: $secs"
	echo "cpus: $(nproc)"
	ccache -s 2>/dev/null | grep -iE '^ *(hits|misses)|cache hit|cache miss' | sed 's/^ */ccache: /' || true
	sort -n -k1,1 "$progress" | sed 's/^/commit /'
} >"$TOP/tests/results/check-series.txt"
log "every commit of the series builds ($n commits, $secs s)"
