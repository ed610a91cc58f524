#!/usr/bin/env bash
# Run the kernel's checkpatch.pl --strict on every patch of the series;
# any error, warning or check fails, and so does a CONFIG_MSHARE
# conditional outside mm/mshare.c and include/linux/mshare.h.
set -euo pipefail
. "$(dirname "$0")/common.sh"

bad=0
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	if ! out=$("$KTREE/scripts/checkpatch.pl" --strict --no-tree --quiet \
			--ignore FILE_PATH_CHANGES "$PATCHES/$p" 2>&1) || [ -n "$out" ]; then
		printf '%s:\n%s\n' "$p" "$out"
		bad=1
	fi
done <"$PATCHES/series"
[ "$bad" = 0 ] && log "every patch passes checkpatch.pl --strict"
# The feature stays in mm/mshare.c and linux/mshare.h (hook-sites.sh).
"$TOP/scripts/hook-sites.sh" --check || bad=1
exit "$bad"
