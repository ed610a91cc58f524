#!/bin/sh
# make bench-change, in the guest (issue 14): what a region change, reclaim
# and first-touch faults cost with many sharers, against memfd and threads
# (bench/change_bench.c). Every result is a csv line (csv-change,
# csv-reclaim, csv-fault, csv-meta); the host collects them.
set -eu
cd "$(dirname "$0")"
parts=${BENCH_CHANGE_PARTS:-change,reclaim,fault}
procs=${BENCH_CHANGE_PROCS:-1,16,256,1000,1500}
rounds=${BENCH_CHANGE_ROUNDS:-200}
max_sec=${BENCH_CHANGE_MAX_SEC:-30}
states=${BENCH_CHANGE_STATES:-sleep,spin}
rprocs=${BENCH_RECLAIM_PROCS:-1,16,64,256}
rsize=${BENCH_RECLAIM_SIZE:-256M}
methods=${BENCH_RECLAIM_METHODS:-pageout,memcg}
fsize=${BENCH_FAULT_SIZE:-256M}
freps=${BENCH_FAULT_REPS:-3}

# Shmem pages (msharefs anonymous objects, memfd) are reclaimed only to
# swap and the guest has no disk: swap on zram (CONFIG_ZRAM=y), in memory.
swap_on() {
	[ -e /sys/block/zram0 ] || cat /sys/class/zram-control/hot_add \
		>/dev/null 2>&1 || return 1
	echo 2G >/sys/block/zram0/disksize &&
		mkswap /dev/zram0 >/dev/null && swapon /dev/zram0
}

echo "# bench-change: kernel $(uname -r), $(nproc) CPUs," \
	"$(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
echo "csv-meta,kernel,$(uname -r)"
echo "csv-meta,date,$(date -u +%Y-%m-%d)"
echo "csv-meta,cpus,$(nproc)"
echo "csv-meta,memtotal_mib,$(awk '/MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)"
t0=$(date +%s)
case ",$parts," in *,change,*)
	./change_bench change --procs "$procs" --rounds "$rounds" \
		--max-sec "$max_sec" --states "$states"
	echo "# change part took $(($(date +%s) - t0)) s" ;;
esac
t1=$(date +%s)
case ",$parts," in *,reclaim,*)
	if swap_on; then
		echo "# swap: zram0, $(awk '/SwapTotal/ { print $2 }' /proc/meminfo) kB"
	else
		echo "# swap: no zram device, shmem cannot be reclaimed"
	fi
	./change_bench reclaim --procs "$rprocs" --size "$rsize" \
		--methods "$methods"
	swapoff /dev/zram0 2>/dev/null || true
	echo "# reclaim part took $(($(date +%s) - t1)) s" ;;
esac
t2=$(date +%s)
case ",$parts," in *,fault,*)
	./change_bench fault --size "$fsize" --reps "$freps"
	echo "# fault part took $(($(date +%s) - t2)) s" ;;
esac
grep -E '^ *(TLB|CAL):' /proc/interrupts
