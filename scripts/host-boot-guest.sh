#!/usr/bin/env bash
# Boot a kernel of build/obj-FLAVOUR in QEMU (software emulation, 4 vCPUs)
# with the initramfs, in one of the modes guest/in-guest-init knows:
#   host-boot-guest.sh FLAVOUR test|run|guest|shell [EXTRA_INITRD]
# The serial console (kernel log) goes to build/logs/FLAVOUR-MODE.console
# and what the guest reports to build/logs/FLAVOUR-MODE.out; in shell mode
# the console is this terminal.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:?usage: host-boot-guest.sh FLAVOUR MODE [EXTRA_INITRD]}
mode=${2:?usage: host-boot-guest.sh FLAVOUR MODE [EXTRA_INITRD]}
extra=${3:-}
# arm64-FLAVOUR: the arm64 kernel and initramfs (scripts/arm64.sh).
case "$flavour" in
arm64-*)
	karch=arm64
	bz=$BUILD/obj-$flavour/arch/arm64/boot/Image
	base=$BUILD/arm64/initramfs.cpio.gz
	[ -f "$bz" ] || die "no kernel $bz: run 'scripts/arm64.sh kernel ${flavour#arm64-}'"
	[ -f "$base" ] || die "no initramfs $base: run 'scripts/arm64.sh initramfs'"
	;;
*)
	karch=x86_64
	bz=$BUILD/obj-$flavour/arch/x86/boot/bzImage
	base=$BUILD/initramfs.cpio.gz
	[ -f "$bz" ] || die "no kernel $bz: run 'make kernel-$flavour'"
	[ -f "$base" ] || die "no initramfs $base: run 'make initramfs'"
	;;
esac

logs=${LOGS:-$BUILD/logs}
mkdir -p "$logs"
console=$logs/$flavour-$mode.console
out=$logs/$flavour-$mode.out
initrd=$base
if [ -n "$extra" ]; then
	initrd=$logs/$flavour-$mode.initrd
	cat "$base" "$extra" >"$initrd"
fi

if [ "$karch" = arm64 ]; then
	# Two NUMA nodes come from QEMU (below), the guest's output goes to
	# a virtio console: the virt machine has one serial port.
	cmdline="console=ttyAMA0 panic=-1 oops=panic MSHAREFS_OUT=/dev/hvc0"
else
	cmdline="console=ttyS0 panic=-1 oops=panic no5lvl numa=fake=2"
fi
cmdline+=" hugepagesz=2M hugepages=${GUEST_HUGEPAGES:-64} default_hugepagesz=2M"
# A vCPU thread of an emulated guest can wait long for the host's CPUs:
# a soft lockup is a CPU stuck for 2 x 30 s, not the default 2 x 10 s
# (a boot on a loaded host tripped that in stop_machine).
# Likewise an RCU stall report is a grace period waiting 60 s, not 21 s
# (a debug guest booting beside another stalled in the clocksource
# switch's stop_machine for about 40 s).
cmdline+=" hung_task_timeout_secs=120 watchdog_thresh=30"
cmdline+=" rcupdate.rcu_cpu_stall_timeout=60 MSHAREFS_MODE=$mode"
# Set by test.sh from MSHAREFS_TEST_ONLY: guest/in-guest-init runs only these.
[ -z "${MSHAREFS_TESTS:-}" ] || cmdline+=" MSHAREFS_TESTS=$MSHAREFS_TESTS"
[ -z "${GUEST_APPEND:-}" ] || cmdline+=" $GUEST_APPEND"
mem=${GUEST_MEM:-4G}
if [ "$karch" = arm64 ]; then
	# -cpu max, less pointer authentication, whose emulation (QARMA)
	# makes every function call slow under TCG; GICv3 for more than 8
	# CPUs' worth of interrupts and MSIs; two NUMA nodes of half the
	# memory each, as numa=fake=2 makes on x86_64.
	half=$(( $(numfmt --from=iec "$mem") / 2 ))
	cpus=${GUEST_CPUS:-4}
	qemu=(qemu-system-aarch64 -accel tcg,thread=multi
		-machine virt,gic-version=3 -cpu max,pauth=off
		-smp "$cpus" -m "$mem"
		-object "memory-backend-ram,id=m0,size=$half"
		-object "memory-backend-ram,id=m1,size=$half"
		-numa "node,nodeid=0,memdev=m0,cpus=0-$((cpus / 2 - 1))"
		-numa "node,nodeid=1,memdev=m1,cpus=$((cpus / 2))-$((cpus - 1))"
		-nodefaults -no-reboot -display none
		-device virtio-serial-device
		-kernel "$bz" -initrd "$initrd")
else
	qemu=(qemu-system-x86_64 -accel tcg,thread=multi -cpu max
		-smp "${GUEST_CPUS:-4}" -m "$mem"
		-nodefaults -no-reboot -display none
		-kernel "$bz" -initrd "$initrd")
fi
# GUEST_ROOT=host: the guest may run the host's programs. QEMU exports /
# read-only (the guest cannot change the host), remapping inode numbers
# of the mounts under it so that they cannot collide.
if [ "${GUEST_ROOT:-initramfs}" = host ]; then
	cmdline+=" MSHAREFS_ROOT=host"
	qemu+=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
fi
qemu+=(-append "$cmdline")

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -serial mon:stdio
fi

# The debug kernel runs about six times slower under emulation.
case "$flavour" in
*debug)	timeout=${GUEST_TIMEOUT:-2700} start_limit=${GUEST_START_TIMEOUT:-600} ;;
*)	timeout=${GUEST_TIMEOUT:-900} start_limit=${GUEST_START_TIMEOUT:-300} ;;
esac
[ "$start_limit" -lt "$timeout" ] || start_limit=$timeout

# The kernel log to $console, what the guest reports to $out.
if [ "$karch" = arm64 ]; then
	serial=(-serial "file:$console" -chardev "file,id=out,path=$out"
		-device "virtconsole,chardev=out")
else
	serial=(-serial "file:$console" -serial "file:$out")
fi

# One boot: 0, QEMU's status, 124 if it ran out of time, or 125 if the
# guest did not print "# guest: ready" within $start_limit s.
boot() {
	local pid rc=0 stuck=0 t0

	: >"$out"
	t0=$(date +%s)
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" "${serial[@]}" </dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ "$stuck" = 0 ] && ! grep -q '^# guest: ready' "$out" &&
		   [ $(($(date +%s) - t0)) -ge "$start_limit" ]; then
			stuck=1
			kill -TERM "$pid" 2>/dev/null || true
		fi
		sleep 2
	done
	wait "$pid" || rc=$?
	log "$flavour guest ($mode) ran $(($(date +%s) - t0)) s; logs: $console $out"
	if [ "$stuck" = 1 ]; then
		return 125
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		log "guest timed out after $timeout s"
		return 124
	fi
	return "$rc"
}

# A guest that hangs before it is ready (a boot or a 9p mount starved on
# a loaded host: seen once in a debug guest) has run nothing: boot it once
# more, and keep the first console for whoever wants to look.
rc=0
boot || rc=$?
if [ "$rc" = 125 ]; then
	mv "$console" "$console.stuck"
	log "the guest was not ready after $start_limit s (console kept in $console.stuck): booting it again"
	rc=0
	boot || rc=$?
	if [ "$rc" = 125 ]; then
		log "the guest was not ready after $start_limit s, twice"
		exit 124
	fi
fi
exit "$rc"
