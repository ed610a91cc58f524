#!/usr/bin/env bash
# Build the fast kernel at every commit of the series, one after another,
# in a separate worktree, so that each patch is known to build on its own,
# through ccache (build/ccache): a header change still recompiles every
# includer (its line markers shift), but a second run after a change of
# the series compiles only what the change touched. Commits that change
# only documentation or selftests are not built again. The result, the
# time it took and each commit's time go to tests/results/check-series.txt
# (build/check-series.progress while it runs). CHECK_SERIES_RESUME=1
# keeps the commits that progress file lists as built and builds the rest:
# after a run that was stopped, after a patch was added at the end, or
# after only selftests or documentation changed. A commit is known by its
# build input, the hash of its tree without Documentation/ and
# tools/testing/: what a kernel build reads and nothing else.
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
# The hash of what a kernel build of commit $1 reads.
build_input() {
	git -C "$KTREE" ls-tree -r "$1" |
		grep -vE $'\t(Documentation|tools/testing)/' | sha1sum | cut -c1-12
}

n=0
progress=$BUILD/check-series.progress
# A copy of the progress is kept with the results, so that a run stopped
# on one machine resumes on another (commits are known by build input).
saved=$TOP/tests/results/check-series.progress
keep=$(mktemp)
if [ -n "${CHECK_SERIES_RESUME:-}" ]; then
	cat "$progress" "$saved" 2>/dev/null | sort -u >"$keep" || true
fi
: >"$progress"
for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	in=$(build_input "$c")
	line="$n $(git -C "$KTREE" log --format='%h %s' -1 "$c")"
	git -C "$wt" checkout -q --detach "$c"
	if ! git -C "$wt" diff --name-only "$c^" "$c" |
			grep -qvE '^(Documentation|tools/testing)/'; then
		# Only documentation or selftests: it builds what its
		# parent built.
		log "no build input changed: $(git -C "$wt" log --oneline -1)"
		echo "$line (no build input) [$in]" >>"$progress"
		continue
	fi
	old=$(grep -F "[$in]" "$keep" | grep -v 'no build input' | head -1 || true)
	if [ -n "$old" ]; then
		log "built in an earlier run: $(git -C "$KTREE" log --oneline -1 "$c")"
		echo "$line (${old##*(}" >>"$progress"
		continue
	fi
	log "building $(git -C "$wt" log --oneline -1)"
	t=$(date +%s)
	KCONFIG_ALLOW_UNDEFINED=1 KTREE=$wt BUILD_OBJ=$obj KCC="ccache gcc" "$TOP/scripts/build-kernel.sh" fast >/dev/null ||
		die "the series does not build at $(git -C "$KTREE" log --oneline -1 "$c")"
	echo "$line ($(($(date +%s) - t)) s) [$in]" >>"$progress"
	sort -u "$progress" "$saved" 2>/dev/null >"$saved.new" || true
	mv "$saved.new" "$saved"
done
rm -f "$keep"
# The build time of every commit, also of those built in an earlier run.
secs=$(sed -n 's/.*(\([0-9]*\) s) \[.*$/\1/p' "$progress" | awk '{ s += $1 } END { print s + 0 }')
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "series: $(git -C "$KTREE" rev-parse --short HEAD) ($n commits on $PINNED)"
	echo "result: every commit builds (fast config)"
	echo "seconds: $secs"
	echo "cpus: $(nproc)"
	ccache -s 2>/dev/null | grep -iE '^ *(hits|misses)|cache hit|cache miss' | sed 's/^ */ccache: /' || true
	sort -n -k1,1 "$progress" | sed 's/ \[[0-9a-f]*\]$//; s/^/commit /'
} >"$TOP/tests/results/check-series.txt"
log "every commit of the series builds ($n commits, $secs s)"
