#!/usr/bin/env bash
# make check-series-quick: at every commit of the series, compile with
# -Werror the objects of the C files it changes, and when it changes a
# header, mm/mshare.o and a few of that header's users, in the worktree
# and object directory of make check-series (which builds everything and
# links: this is the quick look between its runs, not a replacement; it
# cannot see a link error). Result: tests/results/check-series-quick.txt
# (.new while it runs).
set -euo pipefail
. "$(dirname "$0")/common.sh"

wt=$BUILD/series-check
obj=$BUILD/obj-series
[ -d "$wt" ] || git -C "$KTREE" worktree add -q --detach "$wt" base
export CCACHE_DIR=${CCACHE_DIR:-$BUILD/ccache} CCACHE_BASEDIR=$wt CCACHE_NOHASHDIR=1
out=$TOP/tests/results/check-series-quick.txt
headers_users="mm/memory.o mm/mmap.o mm/rmap.o kernel/fork.o fs/proc/task_mmu.o"
n=0 failed=0 start=$(date +%s)
: >"$out.new"
# CHECK_FROM=N starts at the Nth commit (the ones before were checked).
for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	[ "$n" -ge "${CHECK_FROM:-1}" ] || continue
	git -C "$wt" checkout -q --detach "$c"
	files=$(git -C "$wt" diff --name-only "$c^" "$c" |
		grep -vE '^(Documentation|tools|scripts|arch/arm64)/' || true)
	objs=$(grep -E '\.c$' <<<"$files" | sed 's/\.c$/.o/' | tr '\n' ' ' || true)
	if grep -qE '\.h$' <<<"$files"; then
		objs+=" $headers_users"
	fi
	[ -f "$wt/mm/mshare.c" ] && objs+=" mm/mshare.o"
	objs=$(tr ' ' '\n' <<<"$objs" | sed '/^$/d' | sort -u | tr '\n' ' ')
	line="$n $(git -C "$wt" log --format='%h %s' -1)"
	if [ -z "$objs" ]; then
		echo "$line: nothing to compile" >>"$out.new"
		continue
	fi
	log "$line: $objs"
	# The commit's configuration (a new symbol configures again), then
	# its objects.
	# shellcheck disable=SC2086 # a list of targets
	if ! { KCONFIG_ALLOW_UNDEFINED=1 KTREE=$wt BUILD_OBJ=$obj TARGET=prepare \
			"$TOP/scripts/build-kernel.sh" fast &&
		make -s -C "$wt" O="$obj" -j"$JOBS" CC="ccache gcc" KCFLAGS=-Werror \
			$objs; } >"$BUILD/check-series-quick.log" 2>&1; then
		{ grep -E 'error:' "$BUILD/check-series-quick.log" || true; } | head -5 >&2
		echo "$line: FAILED ($objs)" >>"$out.new"
		{ grep -E 'error:' "$BUILD/check-series-quick.log" || true; } |
			head -5 | sed 's/^/    /' >>"$out.new"
		failed=$((failed + 1))
		continue
	fi
	echo "$line: compiled $objs" >>"$out.new"
done
{
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "series: $(git -C "$KTREE" rev-parse --short HEAD) ($n commits)"
	if [ "$failed" = 0 ]; then
		echo "result: every commit compiles what it changes with -Werror (no link)"
	else
		echo "result: $failed commits do not compile what they change"
	fi
	echo "seconds: $(($(date +%s) - start))"
	cat "$out.new"
} >"$out"
rm -f "$out.new"
[ "$failed" = 0 ] || die "$failed of $n commits do not compile what they change: $out"
log "every commit compiles what it changes ($n commits)"
