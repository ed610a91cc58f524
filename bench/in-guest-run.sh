#!/bin/sh
# make run, in the guest: msharefs in a few commands, then the seeds'
# scenario scaled to the guest: BENCH_PROCS processes (256) attach a
# populated BENCH_SIZE region (1G) and read all of it, with an msharefs
# region, a plain MAP_SHARED memfd and a hugetlbfs file at a 1 GiB-aligned
# address (the kernel's PMD-table sharing), in one table.
set -eu
cd "$(dirname "$0")"
procs=${BENCH_PROCS:-256}
size=${BENCH_SIZE:-1G}

step() { echo "\$ $*"; "$@"; }
echo "== msharefs =="
step cat /sys/fs/mshare/mshare_info
step touch /sys/fs/mshare/buffers
step truncate -s 512G /sys/fs/mshare/buffers
step ls -l /sys/fs/mshare
step rm /sys/fs/mshare/buffers
echo
echo "== $procs processes attach a populated $size region and read every page =="
echo "(mshare: an msharefs region; memfd: plain MAP_SHARED shared memory;"
echo " hugetlb: 2 MiB pages at a 1 GiB-aligned address, PMD tables shared)"
echo "page tables: the rise of PageTables in /proc/meminfo while all are"
echo "attached; 'beyond idle' subtracts what as many idle processes cost."
echo "Times come from software emulation (QEMU TCG): compare ratios."
./mshare_bench --kinds mshare,memfd,hugetlb --procs "$procs" \
	--sizes "$size" --guard-kb 65536 --table
