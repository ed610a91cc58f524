#!/usr/bin/env bash
# make bench-postgres: PostgreSQL 15 from Debian, unmodified, with its
# shared buffers in plain shared memory and in an msharefs region (the
# preload shim), under pgbench's select-only load at several client
# counts, in one boot on the host's root (bench/in-guest-postgres.sh says
# what is measured and how). Writes bench/results/bench-postgres.csv and
# the README section between <!-- bench-postgres --> and
# <!-- /bench-postgres -->.
#   bench-postgres.sh [FLAVOUR]     boot, measure, write CSV and README
#   bench-postgres.sh --report      the README section again, from the CSV
# Knobs (environment): FLAVOUR (fast: the kernel of build/obj-FLAVOUR),
# PG_CLIENTS ("16 64 256 1000"), PG_RUNS (3), PG_SECS (20),
# PG_SHARED_BUFFERS (1GB), PG_SCALE (50), PG_TOUCH_STRIDE (64), PG_JOBS
# (4), PG_MODES ("plain shim"), GUEST_MEM (10G), GUEST_TIMEOUT (3600),
# LOGS (build/logs).
set -euo pipefail
. "$(dirname "$0")/common.sh"

csv=$TOP/bench/results/bench-postgres.csv
readme=$TOP/README.md

# The README section from the CSV: medians of the runs per point.
report() {
	local sec
	[ -f "$csv" ] || die "no $csv: run 'make bench-postgres' first"
	sec=$(mktemp)
	awk -F, '
	function med(k, n,   i, j, t, a) {
		n = split(k, a, " ")
		for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		if (n == 0) return 0
		return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function lo(k,   n, i, a, m) { n = split(k, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
	function hi(k,   n, i, a, m) { n = split(k, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
	function commas(x,   s, neg) {
		x = sprintf("%.0f", x) + 0; neg = x < 0; if (neg) x = -x; s = ""
		while (x >= 1000) { s = sprintf(",%03d", x % 1000) s; x = int(x / 1000) }
		return (neg ? "-" : "") x s
	}
	/^# meta,/ { sub(/^# meta,/, ""); k = $1; sub(/^[^,]*,/, ""); meta[k] = $0; next }
	/^#/ || $1 == "mode" { next }
	{
		key = $2 SUBSEP $1
		if (!($2 in seenc)) { seenc[$2] = 1; cl[++ncl] = $2 }
		if ($17 != "ok") { bad[key]++; badst[key] = $17; next }
		tps[key] = tps[key] " " $4; conn[key] = conn[key] " " $7; ready[key] = ready[key] " " $8
		pt[key] = pt[key] " " $11; vm[key] = vm[key] " " $12; mem[key] = mem[key] " " $15
		inr[key] = inr[key] " " $16; win[key] = win[key] " " $5; runs[key]++
		avail[key] = avail[key] " " $18; flt[key] = flt[key] " " $19; hint[key] = hint[key] " " $20; tlb[key] = tlb[key] " " $21
	}
	END {
		print "<!-- bench-postgres -->"
		printf "Measured by `make bench-postgres` on %s, kernel `%s` (`%s`, flavour `%s`), ", meta["date"], meta["kernel"], meta["describe"], meta["flavour"]
		printf "guest with %s vCPUs and %s MiB, software emulation on a shared 2-core host: ", meta["vcpus"], commas(meta["guest_mem_mib"])
		printf "compare plain with shim at the same point, not with real machines. "
		printf "PostgreSQL %s, `shared_buffers = %s`, pgbench scale %s (a %s MiB database, prewarmed: %s blocks in each server'\''s pool); ", meta["postgres"], meta["shared_buffers"], meta["scale"], commas(meta["db_mib"]), commas(meta["prewarmed_blocks_plain"])
		printf "each client first reads one row of every %s-th of the %s heap blocks of `pgbench_accounts`, so that its backend maps every 2 MiB of the table'\''s buffers as a long-lived backend would, then waits until all are ready; ", meta["touch_stride_blocks"], commas(meta["accounts_blocks"])
		printf "then pgbench -S'\''s transaction runs for %s s (%s pgbench threads), %s runs per point, plain and shim alternating. ", meta["secs"], meta["jobs"], meta["runs"]
		printf "The whole `make bench-postgres` took %s s (%.1f min), the guest'\''s part %s s. ", meta["host_seconds"], meta["host_seconds"] / 60, meta["guest_seconds"]
		printf "CSV (every run): `bench/results/bench-postgres.csv`.\n\n"
		print "| clients | mode | tps median | tps min-max | shim/plain tps | connect s | ready s | PageTables rise MiB | VmPTE per backend kB | memory of the connections MiB | processes in a region |"
		print "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= ncl; i++) {
			c = cl[i]
			for (m = 0; m < 2; m++) {
				mode = m ? "shim" : "plain"; key = c SUBSEP mode
				if (!runs[key]) { printf "| %s | %s | failed: %s (%d runs) | | | | | | | | |\n", commas(c), mode, badst[key], bad[key]; continue }
				ratio = ""
				if (m && runs[c SUBSEP "plain"] && med(tps[c SUBSEP "plain"]) > 0)
					ratio = sprintf("%.2f", med(tps[key]) / med(tps[c SUBSEP "plain"]))
				printf "| %s | %s | %s | %s-%s | %s | %.1f | %.1f | %.1f | %s | %s | %s |\n", commas(c), mode,
					commas(med(tps[key])), commas(lo(tps[key])), commas(hi(tps[key])), ratio,
					med(conn[key]) / 1000, med(ready[key]), med(pt[key]) / 1024, commas(med(vm[key])),
					commas(med(mem[key]) / 1024), med(inr[key])
				if (bad[key]) printf "| | %s | %d more runs failed: %s | | | | | | | | |\n", mode, bad[key], badst[key]
			}
		}
		print ""
		# What the shim changed, point by point, in numbers of the table.
		for (i = 1; i <= ncl; i++) {
			c = cl[i]; p = c SUBSEP "plain"; h = c SUBSEP "shim"
			if (!runs[p] || !runs[h]) continue
			printf "At %s clients the shim cut the PageTables rise from %.1f to %.1f MiB (%.0f%% less) and the memory of the connections from %s to %s MiB; ", commas(c), med(pt[p]) / 1024, med(pt[h]) / 1024, 100 * (1 - med(pt[h]) / med(pt[p])), commas(med(mem[p]) / 1024), commas(med(mem[h]) / 1024)
			printf "all clients connected in %.1f s against %.1f s; ", med(conn[h]) / 1000, med(conn[p]) / 1000
			tp = med(tps[p]); th = med(tps[h])
			printf "tps %s against %s", commas(th), commas(tp)
			if (lo(tps[h]) + 0 > hi(tps[p]) + 0) printf " (every shim run above every plain run)"
			else if (hi(tps[h]) + 0 < lo(tps[p]) + 0) printf " (every shim run below every plain run)"
			else printf " (the ranges of the runs overlap)"
			printf ".\n"
		}
		print ""
		print "During the load, per second (medians of the runs; the whole guest, pgbench included): page faults, NUMA hinting faults (the guest has two fake NUMA nodes and NUMA balancing on), TLB shootdown interrupts."
		print ""
		print "| clients | plain: faults/s | hinting faults/s | shootdowns/s | shim: faults/s | hinting faults/s | shootdowns/s |"
		print "|---:|---:|---:|---:|---:|---:|---:|"
		for (i = 1; i <= ncl; i++) {
			c = cl[i]; p = c SUBSEP "plain"; h = c SUBSEP "shim"
			if (!runs[p] || !runs[h]) continue
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", commas(c), commas(med(flt[p])), commas(med(hint[p])), commas(med(tlb[p])), commas(med(flt[h])), commas(med(hint[h])), commas(med(tlb[h]))
		}
		print ""
		c = cl[ncl]; p = c SUBSEP "plain"; h = c SUBSEP "shim"
		if (runs[p] && runs[h]) {
			printf "The largest point, %s clients, was chosen for the run time, not for memory: connecting and touching takes most of a run there under emulation. ", commas(c)
			printf "With all %s connected the guest still had %s MiB available with plain shared memory and %s MiB with the shim; ", commas(c), commas(med(avail[p]) / 1024), commas(med(avail[h]) / 1024)
			printf "at the memory these connections cost (%.2f and %.2f MiB each), that is room for about %s more plain or %s more shim connections before the guest runs out of memory, which is what would stop it first.\n", med(mem[p]) / 1024 / c, med(mem[h]) / 1024 / c, commas(med(avail[p]) / (med(mem[p]) / c)), commas(med(avail[h]) / (med(mem[h]) / c))
			print ""
		}
		print "*tps*: select-only transactions per second in the measured window, median of the runs, and their range. *connect*: pgbench'\''s initial connection time, all clients connected (median). *ready*: from pgbench'\''s start until every client had connected and read its blocks. *PageTables rise*: `/proc/meminfo` with every client ready, against the idle server just before (so the region'\''s own tables, built by the prewarm, are not in it: they are a few MiB once). *VmPTE per backend*: median over the clients'\'' backends, then over the runs. *Memory of the connections*: the fall of `MemFree` over the same span, everything N connections cost the guest: the backends'\'' private memory, their page tables, their kernel stacks and structures, and pgbench'\''s side (the same in both runs); the shared buffers were resident before and are not in it. A sum of `Pss` would count the buffers a backend maps, which is what msharefs changes the accounting of, not the memory used, and reading `smaps` of a thousand processes mapping 1 GiB takes minutes under emulation. *processes in a region*: server processes with the buffers in an msharefs region (the postmaster, its helpers and the backends)."
		print "<!-- /bench-postgres -->"
	}' "$csv" >"$sec"
	grep -q '^<!-- bench-postgres -->$' "$readme" || die "$readme has no <!-- bench-postgres --> marker"
	local out
	out=$(mktemp)
	awk -v f="$sec" '
		$0 == "<!-- bench-postgres -->" { while ((getline l < f) > 0) print l; skip = 1; next }
		$0 == "<!-- /bench-postgres -->" { skip = 0; next }
		!skip { print }' "$readme" >"$out"
	cat "$out" >"$readme"
	rm -f "$out" "$sec"
	log "README bench-postgres section written from $csv"
}

if [ "${1:-}" = --report ]; then
	report
	exit 0
fi

flavour=${1:-${FLAVOUR:-fast}}
t_start=$(date +%s)
export LOGS=${LOGS:-$BUILD/logs}
export GUEST_MEM=${GUEST_MEM:-10G} GUEST_TIMEOUT=${GUEST_TIMEOUT:-3600}
stage=$BUILD/bench/stage-postgres
out_dir=$BUILD/bench
rm -rf "$stage"
mkdir -p "$stage" "$out_dir" "$LOGS"
cp "$TOP/bench/in-guest-postgres.sh" "$stage/"

# The knobs that are set go to the guest's command line.
env_args=
for v in PG_CLIENTS PG_RUNS PG_SECS PG_SHARED_BUFFERS PG_SCALE PG_TOUCH_STRIDE \
	PG_JOBS PG_MODES; do
	[ -z "${!v:-}" ] || env_args+="$v=$(printf '%q' "${!v}") "
done

# Boot, print the guest's output live (without csv lines), keep it all.
GUEST_ROOT=host "$TOP/scripts/mkinitramfs.sh" --add "$stage" \
	"cd /add && ${env_args}bash ./in-guest-postgres.sh" "$LOGS/bench-postgres-add.cpio.gz"
out=$LOGS/$flavour-guest.out
rm -f "$out"
rc=0
GUEST_ROOT=host "$TOP/scripts/host-boot-guest.sh" "$flavour" guest \
	"$LOGS/bench-postgres-add.cpio.gz" &
pid=$!
tail -n +1 -F --pid="$pid" "$out" 2>/dev/null |
	sed -u 's/\r$//; /^csv/d; /^meta,/d; /^# msharefs-guest-/d' || true
wait "$pid" || rc=$?
"$TOP/scripts/check-log.sh" "$LOGS/$flavour-guest.console" || rc=1
tr -d '\r' <"$out" >"$out_dir/postgres.out"
grep -q '^# msharefs-guest-done' "$out_dir/postgres.out" ||
	{ log "the guest did not finish"; rc=1; }
status=$(sed -n 's/^# msharefs-guest-exit=//p' "$out_dir/postgres.out")
[ "${status:-1}" = 0 ] || { log "the guest script failed"; rc=1; }
[ "$rc" = 0 ] || die "bench-postgres failed; output in $out_dir/postgres.out, logs in $LOGS"

# The series the kernel was built from: obj-FLAVOUR/series-head if the
# kernel was kept from an earlier build, else the tree's HEAD now.
series_head() {
	local f=$BUILD/obj-$flavour/series-head
	if [ -f "$f" ]; then
		tr -d '[:space:]' <"$f"
	else
		git -C "$KTREE" describe --always HEAD 2>/dev/null || echo unknown
	fi
}

secs=$(($(date +%s) - t_start))
{
	echo "# make bench-postgres: one row per run; the # meta lines say how it ran"
	echo "# meta,date,$(date -u +%F)"
	echo "# meta,flavour,$flavour"
	echo "# meta,describe,$(series_head)"
	echo "# meta,host_seconds,$secs"
	sed -n 's/^meta,/# meta,/p' "$out_dir/postgres.out"
	sed -n 's/^csvhead,//p' "$out_dir/postgres.out"
	sed -n 's/^csv,//p' "$out_dir/postgres.out"
} >"$csv"
log "wrote $csv ($(grep -c '^[a-z]' "$csv") rows) after $secs s"
report
