#!/bin/sh
# make bench-1500, in the guest: 1,500 processes share 1 GiB in a guest
# too small for their page tables with plain shared memory. The processes
# are created inside a memory cgroup whose memory.max holds what is left
# after the shared data and a reserve, so the guest stays alive: with a
# memfd, page tables fill it, a process is OOM-killed inside the cgroup,
# the run stops there and reports how many processes got there; with
# msharefs all 1,500 complete in the same cgroup.
set -eu
cd "$(dirname "$0")"
procs=${BENCH_PROCS:-1500}
size=${BENCH_SIZE:-1G}
case $size in
*G) size_mib=$((${size%G} * 1024)) ;;
*M) size_mib=${size%M} ;;
*) size_mib=$((size >> 20)) ;;
esac

mib() { awk -v k="$1:" '$1 == k { print int($2 / 1024) }' /proc/meminfo; }
avail=$(mib MemAvailable)
limit=$((avail - size_mib - 256))
echo "# guest: $(mib MemTotal) MiB, MemAvailable $avail MiB: $size_mib MiB" \
	"of shared data, a 256 MiB reserve, and a memory cgroup of $limit MiB" \
	"for the $procs processes"
echo "# with plain shared memory each needs about $((size_mib / 512)) MiB" \
	"of page tables: $((procs * size_mib / 512)) MiB for all of them"
echo +memory >/sys/fs/cgroup/cgroup.subtree_control
for kind in memfd mshare; do
	cg=/sys/fs/cgroup/bench1500-$kind
	mkdir -p $cg
	echo $((limit * 1024 * 1024)) >$cg/memory.max
	echo 0 >$cg/memory.swap.max 2>/dev/null || true	# no swap accounting
	echo
	echo "== $kind: $procs processes attach $size and read every page =="
	./mshare_bench --kinds $kind --procs "$procs" --sizes "$size" \
		--guard-kb 32768 --oom --cgroup $cg --table | tee /tmp/$kind.out
	echo "# $kind: memory cgroup: peak $(($(cat $cg/memory.peak 2>/dev/null || echo 0) >> 20)) MiB," \
		"events: $(tr '\n' ' ' <$cg/memory.events)"
	echo "# $kind: MemAvailable after: $(mib MemAvailable) MiB"
	rmdir $cg || echo "# $kind: cgroup $cg still busy"
done
# msharefs must get all of them there; plain shared memory may not.
if ! grep -q "^csv,mshare,[0-9]*,$procs,$procs,0,.*,ok," /tmp/mshare.out; then
	echo "# bench-1500: msharefs did not complete $procs processes"
	exit 1
fi
