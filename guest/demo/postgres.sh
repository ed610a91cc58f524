#!/bin/sh
# PostgreSQL from Debian's package, unmodified, with and without its
# shared buffers in an msharefs region (the preload shim). Runs in the
# guest on the host's root file system:
#   make guest CMD='sh /opt/msharefs/demo/postgres.sh [CLIENTS] [SECONDS]'
# For each mode it starts a server with 256 MiB of shared buffers, runs
# pgbench's select-only load with CLIENTS connections (one backend process
# each), SECONDS after they all connected measures the page tables (the
# PageTables rise in /proc/meminfo, the VmPTE of the server processes:
# the postmaster, its helpers and one backend per client) and how many have
# the buffers in an msharefs region, and stops the load. Prints one line per mode and
# "# postgres: ok" when the shim put the buffers of every server process
# in a region and the run with it used less page-table memory.
set -eu
clients=${1:-16}
secs=${2:-20}
scale=${PG_SCALE:-4}
shim=/usr/local/lib/libmshare-preload.so
data=/tmp/pgdata
log=/tmp/postgres.log

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -x "$bin/postgres" ] || { echo "# postgres: not installed on the host (make deps)"; exit 1; }
[ -f "$shim" ] || { echo "# postgres: no $shim"; exit 1; }

as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
stat_refresh() { echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null || true; }

cd /tmp
rm -rf "$data" "$log"
mkdir -p "$data"
chown postgres:postgres "$data"
as_pg "$bin/initdb" -D "$data" -A trust -U postgres >/dev/null
cat >>"$data/postgresql.conf" <<EOF
shared_buffers = 256MB
huge_pages = off
max_connections = $((clients + 10))
autovacuum = off
listen_addresses = ''
unix_socket_directories = '/tmp'
fsync = off
synchronous_commit = off
EOF

start() {
	as_pg env ${1:+LD_PRELOAD=$1} "$bin/pg_ctl" -D "$data" -l "$log" -w start >/dev/null
}
stop() { as_pg "$bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null; }
bench() { as_pg "$bin/pgbench" -h /tmp -U postgres "$@" postgres; }

# On any failure: the server's log, and no server left running.
trap 'st=$?; if [ "$st" != 0 ]; then sed "s/^/# server log: /" "$log" 2>/dev/null | tail -n 20; fi
	as_pg "$bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true; exit "$st"' EXIT

start ""
bench -i -q -s "$scale" 2>&1 | grep -iE 'error|fatal' | sed 's/^/# pgbench -i: /' || true
stop
echo "# postgres: $("$bin/postgres" --version), scale $scale, $clients clients," \
	"measured after $secs s of load"

plain_pt=0
ok=1
for mode in plain shim; do
	lib=
	[ "$mode" = plain ] || lib=$shim
	stat_refresh
	pt0=$(kb PageTables)
	start "$lib"
	bench -S -n -c "$clients" -j 2 -T 900 -P 1 >/tmp/pgbench.out 2>&1 &
	pgb=$!
	# Once every client has its backend (connecting is slow under
	# emulation: up to 120 s on a loaded host), let them work for
	# SECONDS, then measure, then stop pgbench. It is started for far
	# longer than that (its clock runs while the clients connect, and a
	# run that ended early took its backends with it before they were
	# counted); its rate is that of its last progress report.
	pm=$(head -n 1 "$data/postmaster.pid")
	backends() { ps -e -o ppid=,args= | awk -v pm="$pm" '$1 == pm && /\[local\]/' | wc -l; }
	i=0
	while [ "$(backends)" -lt "$clients" ] && [ "$i" -lt 240 ]; do
		sleep 0.5
		i=$((i + 1))
	done
	sleep "$secs"
	stat_refresh
	pt=$(($(kb PageTables) - pt0))
	# The postmaster and its children; one awk and one grep for all of
	# them, as starting programs is slow under emulation.
	pids="$pm $(ps -e -o pid=,ppid= | awk -v pm="$pm" '$2 == pm { print $1 }')"
	clientsnow=$(backends)
	set -- $(cat $(printf '/proc/%s/status ' $pids) 2>/dev/null |
		awk '/^VmPTE:/ { n++; kb += $2 } END { print n + 0, kb + 0 }')
	backends=$1 vmpte=$2
	# A process that exits meanwhile is in neither list.
	inregion=$(grep -l '/sys/fs/mshare/' $(printf '/proc/%s/maps ' $pids) 2>/dev/null | wc -l)
	outside=$(grep -L '/sys/fs/mshare/' $(printf '/proc/%s/maps ' $pids) 2>/dev/null | wc -l)
	# mshare ls lists the region the shim made and unlinked at once, the
	# postmaster among the processes attached (the first: the lowest PID).
	listed=$(mshare ls -n -o path,attached,pids 2>/dev/null |
		awk -v pm="$pm" '/ \(deleted\) / { split($NF, p, ","); if (p[1] == pm) { n++; a = $(NF - 1) } }
			END { print n + 0, a + 0 }')
	pkill -TERM -x pgbench || true
	wait "$pgb" || true
	if grep -qiE 'error|fatal|abort' /tmp/pgbench.out; then
		echo "# postgres: pgbench failed:"
		sed 's/^/# /' /tmp/pgbench.out
		ok=0
	fi
	tps=$(awk '/^progress:/ { t = $4 } END { if (t != "") printf "%d", t }' /tmp/pgbench.out)
	stop
	echo "# postgres: $mode: ${tps:-?} tps, PageTables +$pt kB, server processes $backends," \
		"their VmPTE $vmpte kB, with the buffers in a region $inregion"
	# Sampled while every client had its backend.
	[ "$clientsnow" = "$clients" ] || { echo "# postgres: $clientsnow backends, not $clients"; ok=0; }
	if [ "$mode" = plain ]; then
		plain_pt=$pt
		[ "$inregion" = 0 ] || ok=0
	else
		[ "$inregion" -gt "$clients" ] && [ "$outside" = 0 ] || ok=0
		[ "$pt" -lt "$plain_pt" ] || ok=0
		set -- $listed
		echo "# postgres: mshare ls: $1 unlinked region(s) of the postmaster, $2 attachments"
		[ "$1" -ge 1 ] && [ "$2" -gt "$clients" ] || ok=0
	fi
done
grep -i 'mshare' "$log" | head -n 3 | sed 's/^/# postgres: server log: /'
if [ "$ok" = 1 ]; then
	echo "# postgres: ok"
else
	echo "# postgres: FAILED"
	exit 1
fi
