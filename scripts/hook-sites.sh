#!/usr/bin/env bash
# Where msharefs reaches into the rest of the kernel, counted in the tree
# of the series (build/linux, or $KTREE): the feature lives in
# mm/mshare.c and include/linux/mshare.h, and core code only asks
# vma_is_mshare()/mm_is_mshare() and calls the hooks that header declares.
#   hook-sites.sh            the call sites, one per line, then the counts
#   hook-sites.sh --counts   "tests calls files" only (for the cover letter)
#   hook-sites.sh --check    fail if CONFIG_MSHARE is tested outside
#                            mm/mshare.c, include/linux/mshare.h, the
#                            per-mm fields of include/linux/mm_types.h
#                            and the reclaim batch's field of
#                            include/linux/mm_types_task.h
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
cd "$KTREE"

own='^(mm/mshare\.c|include/linux/mshare\.h):'
tests='\b(vma_is_mshare|mm_is_mshare)\('
calls='\b(mm_mshare_memcg|mshare_[a-z_]+)\('

# Code lines of the kernel only: comments name the hooks too, mm.h
# defines one, and the selftests' helpers are named mshare_*() too.
sites() {
	git grep -nE "$1" -- '*.c' '*.h' ':!tools/' | grep -Ev "$own" |
		grep -Ev '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' |
		grep -Ev '^[^:]+:[0-9]+:static inline'
}
count() { sites "$1" | grep -oE "$1" | wc -l; }

case ${1:-} in
--counts)
	echo "$(count "$tests") $(count "$calls")" \
		"$( (sites "$tests"; sites "$calls") | cut -d: -f1 | sort -u | wc -l)"
	;;
--check)
	cond='(#[[:space:]]*(if|elif)|IS_ENABLED|IS_BUILTIN).*CONFIG_MSHARE\b'
	bad=$(git grep -nE "$cond" -- '*.c' '*.h' | grep -Ev "$own" |
		grep -Ev '^include/linux/mm_types(_task)?\.h:' || true)
	[ -z "$bad" ] || die "CONFIG_MSHARE tested outside mm/mshare.c and include/linux/mshare.h:
$bad"
	for f in mm_types.h:"the per-mm fields" \
		 mm_types_task.h:"the region of a reclaim batch"; do
		n=$(git grep -cE "$cond" -- "include/linux/${f%%:*}" | cut -d: -f2)
		[ "${n:-0}" -le 1 ] ||
			die "include/linux/${f%%:*} tests CONFIG_MSHARE $n times (1 allowed: ${f#*:})"
	done
	log "CONFIG_MSHARE is tested only in mm/mshare.c, include/linux/mshare.h, mm_types.h's per-mm fields and mm_types_task.h's batch field"
	;;
'')
	(sites "$tests"; sites "$calls") | sort -t: -k1,1 -k2,2n -u
	read -r t c f < <("$TOP/scripts/hook-sites.sh" --counts)
	echo "$t tests of vma_is_mshare()/mm_is_mshare(), $c hook calls, in $f files"
	;;
*)
	die "usage: hook-sites.sh [--counts|--check]"
	;;
esac
