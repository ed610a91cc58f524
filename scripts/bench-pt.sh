#!/usr/bin/env bash
# make bench-pt: where a sharer's page tables come from (bench/pt_account.c).
# Runs BENCH_PT_PROCS (16) idle and as many sharer processes in one boot
# of the fast kernel on the host's root (dynamically linked, as a
# database is), writes bench/results/pt-account.csv and the README
# section between <!-- pt-account:begin --> and <!-- pt-account:end -->.
set -euo pipefail
. "$(dirname "$0")/common.sh"

stage=$BUILD/bench/stage-pt
csv=$TOP/bench/results/pt-account.csv
rm -rf "$stage"
mkdir -p "$stage"
"${CC:-cc}" -O2 -Wall -Wextra -isystem "$BUILD/obj-headers/usr/include" \
	-I"$TOP/lib" -o "$stage/pt_account" "$TOP/bench/pt_account.c" \
	"$BUILD/lib/libmshare.a"
cp "$TOP/bench/in-guest-pt.sh" "$stage/"
out=$(GUEST_ROOT=host "$TOP/scripts/host-guest-cmd.sh" fast "$stage" \
	"cd /add && BENCH_PT_PROCS=${BENCH_PT_PROCS:-16} sh ./in-guest-pt.sh")
{
	echo "# make bench-pt, $(date -u +%F), kernel $(git -C "$BUILD/linux" describe --always HEAD)"
	echo "kind,before_kb,attached_kb,read_kb,detached_kb,spanned_kb,addr"
	sed -n 's/\r$//; s/^csv,//p' <<<"$out"
} >"$csv"
log "wrote $csv"

# The section: ranges and means per kind, and the sharers' changes.
sec=$(mktemp)
trap 'rm -f "$sec"' EXIT
awk -F, -v date="$(date -u +%F)" '
/^#/ || /^kind/ { next }
{
	k = $1; n[k]++; sum[k] += $4
	if (!(k in lo) || $4 < lo[k]) lo[k] = $4
	if (!(k in hi) || $4 > hi[k]) hi[k] = $4
	if ($5 == $6) match_[k]++
	else { d = $6 - $5; if (!xlo || d < xlo) xlo = d; if (d > xhi) xhi = d }
	if (k == "sharer") {
		d = $3 - $2; if (d != 0) att++
		d = $4 - $3; if (d != 0) rd++
		d = $5 - $4; if (d != 0) det++
	}
}
END {
	print "<!-- pt-account:begin -->"
	printf "Measured by `make bench-pt` on %s (`bench/results/pt-account.csv`): ", date
	printf "%d sharers, each exec'\''d afresh, dynamically linked, attaching a region read-only and reading every page of a populated 1 GiB object: ", n["sharer"]
	printf "VmPTE changed when attaching in %d of them, when reading the 1 GiB in %d, when detaching in %d. ", att, rd, det
	printf "Their VmPTE: %d to %d kB, mean %.1f; %d idle processes of the same program that attach nothing: %d to %d kB, mean %.1f. ", lo["sharer"], hi["sharer"], sum["sharer"] / n["sharer"], n["idle"], lo["idle"], hi["idle"], sum["idle"] / n["idle"]
	printf "In %d of %d processes VmPTE equals the PTE, PMD and PUD tables that the process'\''s own mappings span (attachment left out)", match_["sharer"] + match_["idle"], n["sharer"] + n["idle"]
	if (xhi) printf "; in the others the span counts %d to %d kB more: a mapping spans a unit it never touched", xlo, xhi
	print "."
	print "<!-- pt-account:end -->"
}' "$csv" >"$sec"
replace_section pt-account "$TOP/README.md" "$sec"
log "README pt-account section written"
