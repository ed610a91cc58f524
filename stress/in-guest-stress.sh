#!/bin/sh
# Runs in the guest (busybox sh), from the directory holding mshare_stress:
#   sh in-guest-stress.sh [SECONDS] [mshare_stress options]
# Turns on the hung-task and soft-lockup detectors (CONFIG_DETECT_HUNG_TASK
# and CONFIG_SOFTLOCKUP_DETECTOR, from kernel/configs/base.config), lets the
# disk image grow to its full size before the baseline is taken, and runs
# the stress with its baseline check. The host fails the run on any kernel
# report in the console log (scripts/check-log.sh), kmemleak included.
set -eu
secs=${1:-${STRESS_SECONDS:-60}}
[ $# -eq 0 ] || shift

setk() {
	if [ -w "/proc/sys/kernel/$1" ]; then
		if echo "$2" >"/proc/sys/kernel/$1"; then
			echo "# stress: kernel.$1=$(cat "/proc/sys/kernel/$1")"
		else
			echo "# stress: kernel.$1 refused $2"
		fi
	else
		echo "# stress: no kernel.$1 in this kernel"
	fi
}

# A task blocked 60 s is reported, every time, with all CPUs' backtraces.
setk hung_task_timeout_secs "${HUNG_TASK_SECS:-60}"
setk hung_task_check_interval_secs 10
setk hung_task_warnings -1
setk hung_task_all_cpu_backtrace 1
setk hung_task_panic 0
# A CPU stuck in the kernel for 2 * watchdog_thresh s is a soft lockup.
setk watchdog 1
setk soft_watchdog 1
setk watchdog_thresh 10
setk softlockup_all_cpu_backtrace 1
setk softlockup_panic 0

# The ext4 image lives in tmpfs and only grows: fill it once, so objects
# backed by disk files later do not count as lost free memory.
if grep -q ' /mnt/disk ' /proc/mounts; then
	dd if=/dev/zero of=/mnt/disk/.fill bs=1M 2>/dev/null || true	# ENOSPC
	rm -f /mnt/disk/.fill
	sync
fi

echo "# stress: $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)," \
	"$(awk '/HugePages_Total/ { print $2 }' /proc/meminfo) huge pages, $secs s"
./mshare_stress -b -s "$secs" "$@"
