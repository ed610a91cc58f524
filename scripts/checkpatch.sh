#!/usr/bin/env bash
# Run the kernel's checkpatch.pl --strict on every patch of the series
# (the commits of build/linux, which make export writes to kernel/patches
# byte for byte); any error, warning or check fails, and so does a
# CONFIG_MSHARE conditional outside mm/mshare.c and include/linux/mshare.h.
#
# A patch's kernel part and its selftests (tools/testing/selftests) are
# checked apart. The selftests are user space: the rules below are the
# kernel's alone and are not applied to them, each for its reason:
#   PREFER_KERNEL_TYPES  user space has no u64/s32, only uint64_t and __u64
#   VOLATILE             loads and stores that must really happen under
#                        test, memory polled across fork(), signal flags
#   SPACING              FIXTURE_DATA(x) *self, misparsed (ctx:WxV)
#   CAMELCASE            libc's and ELF's names (Elf64_Phdr, PRIu64)
#   ENOSYS               tests of system calls that must return ENOSYS
#   LONG_LINE_STRING     log formats kept whole, to be found with grep
#   EMBEDDED_FUNCTION_NAME  /proc paths that share a helper's name
#   MACRO_WITH_FLOW_CONTROL, MULTISTATEMENT_MACRO_USE_DO_WHILE,
#   MACRO_ARG_REUSE, BRACES  the kselftest harness's macros (SKIP(return),
#                        ASSERT_*() TH_LOG(), fixtures made by a macro)
#   PREFER_DEFINED_ATTRIBUTE_MACRO, BIT_MACRO  the definitions of the
#                        kernel's macros for user space, and UAPI values
#   NEW_TYPEDEFS         a scalar bit-set type of the fuzzer
set -euo pipefail
. "$(dirname "$0")/common.sh"

user_ignore=PREFER_KERNEL_TYPES,VOLATILE,SPACING,CAMELCASE,ENOSYS,LONG_LINE_STRING
user_ignore+=,EMBEDDED_FUNCTION_NAME,MACRO_WITH_FLOW_CONTROL
user_ignore+=,MULTISTATEMENT_MACRO_USE_DO_WHILE,MACRO_ARG_REUSE,BRACES
user_ignore+=,PREFER_DEFINED_ATTRIBUTE_MACRO,BIT_MACRO,NEW_TYPEDEFS
st=tools/testing/selftests

check() {	# check COMMIT IGNORE PATHSPEC...
	local c=$1 ignore=$2
	shift 2
	git -C "$KTREE" format-patch -1 --stdout "$c" -- "$@" |
		"$KTREE/scripts/checkpatch.pl" --strict --no-tree --quiet \
			--ignore "$ignore" - 2>&1
}

# From the tree: checkpatch finds its CamelCase include list there.
cd "$KTREE"
bad=0 n=0
for c in $(git -C "$KTREE" rev-list --reverse base..HEAD); do
	n=$((n + 1))
	name="$n $(git -C "$KTREE" log --format=%s -1 "$c")"
	files=$(git -C "$KTREE" diff --name-only "$c^" "$c")
	out=
	if grep -qv "^$st/" <<<"$files"; then
		out+=$(check "$c" FILE_PATH_CHANGES ":!$st") || true
	fi
	if grep -q "^$st/" <<<"$files"; then
		out+=$(check "$c" "FILE_PATH_CHANGES,$user_ignore" "$st") || true
	fi
	if [ -n "$out" ]; then
		printf '%s:\n%s\n' "$name" "$out"
		bad=1
	fi
done
[ "$bad" = 0 ] && log "all $n patches pass checkpatch.pl --strict (selftests: less the kernel-only rules above)"
# The feature stays in mm/mshare.c and linux/mshare.h (hook-sites.sh).
"$TOP/scripts/hook-sites.sh" --check || bad=1
exit "$bad"
