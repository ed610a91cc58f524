#!/bin/bash
# In the guest on the host's root (make bench-postgres): PostgreSQL from
# Debian, unmodified, with its shared buffers in plain shared memory and
# in an msharefs region (the preload shim), under pgbench's select-only
# load at several client counts. Prints "csv,..." lines (one per run) and
# "meta,KEY,VALUE" lines; scripts/bench-postgres.sh collects them.
#
# Knobs (environment):
#   PG_CLIENTS          client counts (default "16 64 256 1000")
#   PG_RUNS             runs per point and mode (3): tps is their median
#   PG_SECS             seconds of measured load per run (20)
#   PG_SHARED_BUFFERS   shared_buffers (1GB)
#   PG_SCALE            pgbench scale (50, about 750 MiB: see below)
#   PG_TOUCH_STRIDE     blocks between the heap blocks each client reads
#                       once after connecting (64; 0: none; see below)
#   PG_JOBS             pgbench threads (4)
#   PG_MODES            "plain shim"
#
# Two servers run side by side from copies of one database, "plain" on
# port 5432 and "shim" (LD_PRELOAD of the shim, buffers in a region) on
# 5433, both prewarmed (pg_prewarm, contrib, in Debian's server package),
# and idle while the other is measured. The runs of one client count
# alternate between them (plain first in odd runs, shim first in even
# ones), so that the load of a shared, noisy host falls on both alike.
#
# What the buffers hold, and who touches them. A select-only transaction
# reads one random row: a backend that lives for a run of seconds under
# emulation reads only a few hundred of the 131,072 pages of 1 GiB, and
# its page tables stay small, unlike those of a real server's backends,
# which live for hours and end up mapping most of the buffers (2 MiB of
# page tables per GiB each: the cost msharefs removes). So that every
# backend maps what a long-lived one would, without hours of load:
# - the database (pgbench scale 50: about 750 MiB of tables and indexes,
#   most of a 1 GiB pool) is prewarmed into the buffers of both servers,
#   so the pool is populated and every read is a buffer hit;
# - each client's first transaction reads one row of every
#   PG_TOUCH_STRIDE-th heap block of pgbench_accounts (a TID scan; 64
#   blocks = 512 KiB, four per 2 MiB a page-table page covers), so that
#   its backend maps part of every 2 MiB of the table's buffers (the
#   prewarm filled them in block order) and has a page-table page for each,
#   as a backend that has served many queries does; with the shim the
#   region's tables, built once by the prewarm, serve every backend;
# - then it waits on an advisory lock held by this script: when every
#   client waits, all are connected and have touched the buffers, and the
#   memory is measured (quietly: nobody runs); then the lock goes and the
#   select-only load (pgbench -S's own script) runs for PG_SECS, the
#   only part timed: tps is from pgbench's per-transaction log, counting
#   the transactions that ended after the release.
# Scale 50 rather than a database as large as the pool: pgbench -i takes
# minutes per 10 of scale under emulation, and every guest holds two
# copies of the data (one per server) besides the two pools.
set -euo pipefail
clients_list=${PG_CLIENTS:-"16 64 256 1000"}
runs=${PG_RUNS:-3}
secs=${PG_SECS:-20}
sb=${PG_SHARED_BUFFERS:-1GB}
scale=${PG_SCALE:-50}
stride=${PG_TOUCH_STRIDE:-64}
jobs=${PG_JOBS:-4}
modes=${PG_MODES:-"plain shim"}
shim=/usr/local/lib/libmshare-preload.so
lock=4242

bin=/usr/lib/postgresql/15/bin
[ -x "$bin/postgres" ] || bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/postgres" ] || { echo "# bench-postgres: PostgreSQL is not installed on the host (make deps)"; exit 1; }
[ -f "$shim" ] || { echo "# bench-postgres: no $shim"; exit 1; }
maxc=0
for c in $clients_list; do [ "$c" -le "$maxc" ] || maxc=$c; done

now() { date +%s.%N; }
t_begin=$(now)
calc() { awk "BEGIN { print $* }"; }
say() { printf '# bench-postgres: [%4.0f s] %s\n' "$(calc "$(now) - $t_begin")" "$*"; }
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
stat_refresh() { echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null || true; }
port() { if [ "$1" = plain ]; then echo 5432; else echo 5433; fi; }
data() { echo "/tmp/pg-$1"; }
q() { as_pg "$bin/psql" -X -q -At -h /tmp -p "$(port "$1")" -U postgres -d postgres -c "$2"; }
postmaster() { head -n 1 "$(data "$1")/postmaster.pid"; }
vmstat_pick() { awk '$1 == "pgfault" { f = $2 } $1 == "numa_hint_faults" { h = $2 } END { print f + 0, h + 0 }' /proc/vmstat; }
tlb_shootdowns() { awk '$1 == "TLB:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) n += $i } END { print n + 0 }' /proc/interrupts; }

# pgbench needs a socket per client, and runs as postgres: raise the
# descriptor limit before dropping privileges.
ulimit -n 65536

cd /tmp
rm -rf /tmp/pg-* /tmp/pgb
mkdir -p /tmp/pgb
chown postgres:postgres /tmp/pgb

start() {
	local mode=$1 lib=
	[ "$mode" = plain ] || lib=$shim
	as_pg env ${lib:+LD_PRELOAD=$lib} "$bin/pg_ctl" -D "$(data "$mode")" \
		-l "/tmp/pg-$mode.log" -o "-p $(port "$mode")" -w -t 900 start >/dev/null
}
stop() { as_pg "$bin/pg_ctl" -D "$(data "$1")" -m fast -w -t 900 stop >/dev/null; }

trap 'st=$?
	for m in plain shim; do
		if [ "$st" != 0 ] && [ -f /tmp/pg-$m.log ]; then
			tail -n 20 /tmp/pg-$m.log | sed "s/^/# server log ($m): /"; fi
		as_pg "$bin/pg_ctl" -D /tmp/pg-$m -m immediate stop >/dev/null 2>&1 || true
	done; exit "$st"' EXIT

# One database, copied for the second server.
mkdir -p "$(data plain)"
chown postgres:postgres "$(data plain)"
as_pg "$bin/initdb" -D "$(data plain)" -A trust -U postgres >/dev/null
cat >>"$(data plain)/postgresql.conf" <<EOF
shared_buffers = $sb
huge_pages = off
max_connections = $((maxc + 20))
listen_addresses = ''
unix_socket_directories = '/tmp'
autovacuum = off
fsync = off
synchronous_commit = off
full_page_writes = off
max_parallel_workers_per_gather = 0
checkpoint_timeout = 1d
max_wal_size = 10GB
EOF
start plain
# Server-side generation (G): much faster than COPY from pgbench under
# emulation.
as_pg "$bin/pgbench" -h /tmp -p 5432 -U postgres -i -q -I dtGvp -s "$scale" postgres \
	2>&1 | grep -iE 'error|fatal' | sed 's/^/# pgbench -i: /' || true
q plain "CREATE EXTENSION pg_prewarm" >/dev/null
q plain "CHECKPOINT"
nblk=$(q plain "SELECT pg_relation_size('pgbench_accounts') / 8192")
dbmb=$(q plain "SELECT pg_database_size('postgres') / 1048576")
stop plain
say "database made: scale $scale, $dbmb MiB, pgbench_accounts $nblk blocks"
cp -a "$(data plain)" "$(data shim)"

prewarm="SELECT sum(pg_prewarm(c.oid::regclass)) FROM pg_class c
	JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i')"
for m in $modes; do
	start "$m"
	pw=$(q "$m" "$prewarm")
	pm=$(postmaster "$m")
	inr=$(grep -c '/sys/fs/mshare/' "/proc/$pm/maps" || true)
	say "$m server: postmaster $pm, $pw blocks prewarmed, region mappings of the postmaster: $inr"
	echo "meta,prewarmed_blocks_$m,$pw"
	echo "meta,postmaster_regions_$m,$inr"
done

# The pgbench script: the first transaction of each client touches the
# buffers and waits at the barrier; the others are pgbench -S's.
cat >/tmp/pgb/script.sql <<'EOF'
\if :touched = 0
\if :stride > 0
SELECT count(*) FROM pgbench_accounts WHERE ctid = ANY (ARRAY(
	SELECT format('(%s,1)', b)::tid FROM generate_series(0, :nblk - 1, :stride) b));
\endif
SELECT pg_advisory_lock_shared(:lock);
SELECT pg_advisory_unlock_shared(:lock);
\set touched 1
\else
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\endif
EOF
chown postgres:postgres /tmp/pgb/script.sql
plan=$(q plain "EXPLAIN SELECT count(*) FROM pgbench_accounts WHERE ctid = ANY (ARRAY(
	SELECT format('(%s,1)', b)::tid FROM generate_series(0, $nblk - 1, 64) b))" 2>/dev/null || true)
grep -q 'Tid Scan' <<<"$plan" || say "warning: the touch is not a TID scan: $plan"

{
	echo "meta,postgres,$("$bin/postgres" --version | awk '{ print $3 }')"
	echo "meta,kernel,$(uname -r)"
	echo "meta,vcpus,$(nproc)"
	echo "meta,guest_mem_mib,$(($(kb MemTotal) / 1024))"
	echo "meta,shared_buffers,$sb"
	echo "meta,scale,$scale"
	echo "meta,db_mib,$dbmb"
	echo "meta,accounts_blocks,$nblk"
	echo "meta,touch_stride_blocks,$stride"
	echo "meta,runs,$runs"
	echo "meta,secs,$secs"
	echo "meta,jobs,$jobs"
	echo "meta,clients,${clients_list// /;}"
}

# Estimated seconds from pgbench's start to the release, per mode and
# client count (connecting and touching), from the last run; the -T of
# a run is that plus PG_SECS plus a margin, so that the measured window
# is about PG_SECS long whatever the client count.
declare -A warm_est warm_any

# One run of MODE with CLIENTS, number RUN: prints a csv line.
run_one() {
	local mode=$1 c=$2 r=$3 p pm ctl ctlpid i n pt0 free0 pt1 free1 t0 t_rel
	local est dur out logp pids backends ready avail1 st=ok
	p=$(port "$mode")
	pm=$(postmaster "$mode")
	# The barrier: a session holding the advisory lock, fed by a FIFO.
	ctl=/tmp/pgb/ctl
	rm -f "$ctl" "$ctl.out"
	mkfifo "$ctl"
	chown postgres:postgres "$ctl"
	as_pg "$bin/psql" -X -q -At -h /tmp -p "$p" -U postgres -d postgres \
		<"$ctl" >"$ctl.out" 2>&1 &
	exec 3>"$ctl"
	echo "SELECT pg_backend_pid(); SELECT pg_advisory_lock($lock); SELECT 'locked';" >&3
	i=0
	until grep -q '^locked' "$ctl.out" 2>/dev/null; do
		sleep 0.2
		i=$((i + 1))
		[ "$i" -lt 600 ] || { say "the barrier session did not start"; cat "$ctl.out"; return 1; }
	done
	ctlpid=$(head -n 1 "$ctl.out")
	stat_refresh
	pt0=$(kb PageTables) free0=$(kb MemFree)
	# The first run at a client count: the last count's, scaled.
	est=${warm_est[$mode,$c]:-${warm_any[$c]:-}}
	[ -n "$est" ] || est=$(calc "${last_warm:-5} * $c / ${last_c:-16}")
	dur=$(printf '%.0f' "$(calc "$est * 1.2 + $secs + 5")")
	out=/tmp/pgb/out-$mode-$c-$r
	logp=/tmp/pgb/log-$mode-$c-$r
	t0=$(now)
	as_pg "$bin/pgbench" -h /tmp -p "$p" -U postgres -n -c "$c" -j "$jobs" \
		-T "$dur" -f /tmp/pgb/script.sql -D touched=0 -D stride="$stride" \
		-D nblk="$nblk" -D lock="$lock" -D scale="$scale" \
		-l --log-prefix="$logp" postgres >"$out" 2>&1 &
	local pgb=$!
	# Every client waits at the barrier: connected and done touching.
	while :; do
		n=$(q "$mode" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted" 2>/dev/null || echo 0)
		[ "$n" -lt "$c" ] || break
		kill -0 "$pgb" 2>/dev/null || { st=pgbench-exited; break; }
		sleep 1
	done
	ready=$(printf '%.1f' "$(calc "$(now) - $t0")")
	stat_refresh
	pt1=$(kb PageTables) free1=$(kb MemFree) avail1=$(kb MemAvailable)
	# The server's processes (the postmaster and its children) and the
	# clients' backends among them (not the barrier's session).
	pids="$pm $(ps -e -o pid=,ppid= | awk -v pm="$pm" '$2 == pm { print $1 }')"
	backends=$(ps -e -o pid=,ppid=,args= | awk -v pm="$pm" -v x="$ctlpid" \
		'$2 == pm && $1 != x && /\[local\]/ { print $1 }')
	local nb vmed vsum anon inr
	nb=$(wc -w <<<"$backends")
	# Median VmPTE of the clients' backends.
	# (xargs fails when a process went meanwhile, grep -l when none matches.)
	vmed=$(for b in $backends; do echo "/proc/$b/status"; done | { xargs -r cat 2>/dev/null || true; } |
		awk '/^VmPTE:/ { print $2 }' | sort -n |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; else print 0 }')
	set -- $(printf '/proc/%s/status\n' $pids | { xargs -r cat 2>/dev/null || true; } |
		awk '/^VmPTE:/ { pte += $2 } /^RssAnon:/ { anon += $2 } END { print pte + 0, anon + 0 }')
	vsum=$1 anon=$2
	inr=$(printf '/proc/%s/maps\n' $pids | { xargs -r grep -l '/sys/fs/mshare/' 2>/dev/null || true; } | wc -l)
	# Release: the measured load starts.
	echo "SELECT pg_advisory_unlock($lock);" >&3
	t_rel=$(now)
	local vs0 tlb0
	vs0=$(vmstat_pick) tlb0=$(tlb_shootdowns)
	warm_est[$mode,$c]=$(calc "$t_rel - $t0")
	warm_any[$c]=${warm_est[$mode,$c]}
	last_warm=${warm_est[$mode,$c]} last_c=$c
	exec 3>&-
	wait "$pgb" || st=pgbench-failed
	# Page faults, NUMA hinting faults and TLB shootdowns per second of
	# load, the whole guest, from the release until pgbench stopped.
	local rates
	rates=$(printf '%s %s %s %s\n' "$vs0" "$tlb0" "$(vmstat_pick)" "$(tlb_shootdowns)" |
		awk -v t="$(calc "$(now) - $t_rel")" '{ printf "%.0f,%.0f,%.0f", ($4 - $1) / t, ($5 - $2) / t, ($6 - $3) / t }')
	wait || true
	local conn tps_line
	conn=$(awk '/^initial connection time/ { print $5 }' "$out")
	# The select-only transactions (not a client's first, which touched
	# and waited) that ended in the PG_SECS after the release (or until
	# pgbench stopped, if sooner): count / window.
	tps_line=$(cat "$logp".* 2>/dev/null | awk -v t="$t_rel" -v s="$secs" '
		seen[$1]++ == 0 { next }
		{ e = $5 + $6 / 1e6; if (e > t && e <= t + s) { n++; if (e > last) last = e } }
		END { if (last - t < s - 1) w = last - t; else w = s
			if (n && w > 0) printf "%.1f %.2f %d", n / w, w, n; else print "0 0 0" }')
	if [ "$st" = ok ] && grep -qiE 'error|fatal|abort' "$out"; then st=pgbench-error; fi
	[ "$st" = ok ] || sed 's/^/# pgbench: /' "$out" | tail -n 5
	[ "$nb" = "$c" ] || { [ "$st" != ok ] || st="backends-$nb"; }
	set -- $tps_line
	# Released too late for pgbench's -T: too short a window to count.
	[ "$st" != ok ] || [ "$(calc "$2 >= $secs / 2")" = 1 ] || st=short-window
	echo "csv,$mode,$c,$r,$1,$2,$3,${conn:-0},$ready,$nb,$pt0,$((pt1 - pt0)),${vmed:-0},$vsum,$anon,$((free0 - free1)),$inr,$st,$avail1,$rates"
	say "$mode c=$c run $r: $1 tps over $2 s, connect ${conn:-?} ms, ready after $ready s, released after $(printf '%.1f' "${warm_est[$mode,$c]}") s, PageTables +$((pt1 - pt0)) kB, VmPTE median $vmed kB, MemFree -$((free0 - free1)) kB, faults/hint faults/TLB shootdowns per s $rates, $inr of $(wc -w <<<"$pids") in a region, $st"
	rm -f "$logp".* "$ctl" "$ctl.out"
}

echo "csvhead,mode,clients,run,tps,window_s,txns,conn_ms,ready_s,backends,pt_before_kb,pt_rise_kb,vmpte_med_kb,vmpte_sum_kb,anon_sum_kb,memfree_drop_kb,in_region,status,memavail_ready_kb,faults_per_s,numa_hint_faults_per_s,tlb_shootdowns_per_s"
for c in $clients_list; do
	for r in $(seq 1 "$runs"); do
		order=$modes
		[ $((r % 2)) = 1 ] || order=$(echo "$modes" | tr ' ' '\n' | tac | tr '\n' ' ')
		for m in $order; do
			run_one "$m" "$c" "$r"
		done
	done
done
for m in $modes; do stop "$m"; done
grep -ih 'mshare' /tmp/pg-shim.log 2>/dev/null | sort | uniq -c | head -n 3 | sed 's/^/# bench-postgres: shim server log: /' || true
echo "meta,guest_seconds,$(printf '%.0f' "$(calc "$(now) - $t_begin")")"
say "done"
