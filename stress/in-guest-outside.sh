#!/bin/sh
# Runs in a guest with the host's root file system (make guest ROOT=host),
# from the directory holding mshare_stress:
#   sh in-guest-outside.sh SECONDS
# For SECONDS, Debian's stress-ng (mmap, madvise, fork, hugetlb,
# userfaultfd and memory stressors) and trinity (the syscall fuzzer, as
# nobody, with msharefs files among its victims) run while mshare_stress
# keeps regions attached and in use: creating, attaching, forking,
# killing, and checking every byte it reads. Prints what each did and
# exits non-zero if mshare_stress found corruption or a hang, or if
# stress-ng or trinity could not run. The host fails the run on any kernel
# report in the console log.
set -eu
secs=${1:-60}
for t in stress-ng trinity setpriv mshare; do
	command -v "$t" >/dev/null || { echo "# outside: FAIL: no $t"; exit 1; }
done
tmp=$(mktemp -d /tmp/outside.XXXXXX)
chmod 0755 "$tmp"
fail=

setk() {
	[ ! -w "/proc/sys/kernel/$1" ] || echo "$2" >"/proc/sys/kernel/$1" ||
		echo "# outside: kernel.$1 refused $2"
}
setk hung_task_timeout_secs 120
setk hung_task_warnings -1
setk softlockup_all_cpu_backtrace 1

echo "# outside: $(nproc) CPUs, kernel $(uname -r), $secs s;" \
	"$(stress-ng --version 2>&1 | head -n 1); trinity $(dpkg-query -W -f='${Version}' trinity 2>/dev/null)"

# Regions trinity may open, map, size and fill as nobody: its victims.
mkdir -p /sys/fs/mshare/victims
chmod 0777 /sys/fs/mshare/victims
for i in 1 2 3; do
	mshare create "/sys/fs/mshare/victims/r$i" --size 512G --anon 0:4M --mode 0666 ||
		fail="$fail create(r$i)"
done
mshare create /sys/fs/mshare/victims/empty --mode 0666 || fail="$fail create(empty)"

start=$(date +%s)
./mshare_stress -s "$secs" -m 60 >"$tmp/mshare_stress.log" 2>&1 &
ms=$!

# stress-ng as nobody: as root its madvise stressor poisons its own pages
# (MADV_HWPOISON) and dies of the SIGBUS it asked for. Sizes are small
# enough for a stressor to finish rounds under emulation.
[ ! -w /proc/sys/vm/unprivileged_userfaultfd ] ||
	echo 1 >/proc/sys/vm/unprivileged_userfaultfd
mkdir -p "$tmp/stress-ng"
chown 65534:65534 "$tmp/stress-ng"
(cd "$tmp/stress-ng" && setpriv --reuid=65534 --regid=65534 --clear-groups \
	stress-ng --timeout "${secs}s" --metrics-brief --verify \
	--mmap 1 --mmap-bytes 8M --madvise 1 --fork 1 --mmaphuge 1 \
	--userfaultfd 1 --memfd 1 --memfd-bytes 16M --mremap 1 \
	--mremap-bytes 16M --vm 1 --vm-bytes 64M \
	--shm 1 --mlock 1 --msync 1 --mprotect 1 \
	>"$tmp/stress-ng.log" 2>&1) &
sng=$!

# trinity as uid 65532 (not stress-ng's, so that its random kill(),
# ptrace() and process_vm_writev() calls cannot hit stress-ng and make it
# fail) in a scratch directory, run after run until the time
# is up (a run is 1,000 calls); each finished run prints what it did. Sockets are
# left out: building its socket cache sometimes crashes trinity itself.
mkdir -p "$tmp/trinity"
chown 65532:65532 "$tmp/trinity"
# It runs at least once, for 120 s or more: on a loaded host, starting
# the others from the host's root over 9p once took the whole time, and
# beside the stress run a debug guest's trinity has spent 45 s without a
# call. A run counts if it finished or ran until the time was up: SIGINT
# then, and 60 s later SIGKILL. One that ended earlier crashed (trinity's
# main process has been OOM-killed holding 2.8 GiB of private anonymous
# memory, not region memory: the console log's OOM report shows which).
# Whether it reached its children's system calls is reported.
end=$((start + secs))
runs=0 crashes=0 calls=0 okruns=0 reached=0
while [ "$runs" = 0 ] || [ "$(date +%s)" -lt "$end" ]; do
	runs=$((runs + 1))
	tlog=$tmp/trinity/run$runs.log
	left=$((end - $(date +%s)))
	[ "$runs" != 1 ] || [ "$left" -ge 120 ] || left=120
	[ "$left" -ge 1 ] || left=1
	t0=$(date +%s)
	(cd "$tmp/trinity" && timeout -s INT -k 60 "$left" \
		setpriv --reuid=65532 --regid=65532 --clear-groups \
		trinity -q -C 2 -N 1000 --disable-fds=sockets \
		-V /sys/fs/mshare/victims >"$tlog" 2>&1) && trc=0 || trc=$?
	took=$(($(date +%s) - t0))
	n=$(grep -oE 'Ran [0-9]+ syscalls' "$tlog" | tail -n 1 |
		grep -oE '[0-9]+' || true)
	calls=$((calls + ${n:-0}))
	echo "# outside: trinity run $runs: exit $trc after $took s, ${n:-no count of} calls"
	# 124: stopped by SIGINT at the time limit; 137 then: by SIGKILL.
	ok=
	case "$trc" in
	0 | 124) ok=1 ;;
	137) [ "$took" -lt "$left" ] || ok=1 ;;
	esac
	called=
	if grep -qE '^\[child[0-9]+:[0-9]+\]|Ran [0-9]+ syscalls' "$tlog"; then
		called=1
		reached=$((reached + 1))
	else
		echo "# outside: trinity run $runs made no call"
	fi
	if [ -n "$ok" ]; then
		okruns=$((okruns + 1))
	else
		crashes=$((crashes + 1))
	fi
	# The end of its log, once, for a run that crashed or made no call.
	[ -n "$ok" ] && [ -n "$called" ] ||
		tail -n 5 "$tlog" | sed 's/^/#   /'
	# A run that crashed at once will crash the next time too.
	[ -n "$ok" ] || [ "${n:-0}" -gt 0 ] || break
done
wait "$sng" && sngrc=0 || sngrc=$?
wait "$ms" && msrc=0 || msrc=$?
end=$(date +%s)

echo "# outside: ran $((end - start)) s"
echo "# outside: stress-ng exit $sngrc"
grep -E 'stress-ng: (info|fail|error).*(passed|failed|skipped|successful|stressor|bogo)' \
	"$tmp/stress-ng.log" | sed 's/^/#   /' | tail -n 25
sed "s/^/#   /" "$tmp/stress-ng.log" | tail -n 40
echo "# outside: trinity: $runs runs, $okruns ran their time ($reached reached their system calls)," \
	"$calls system calls counted in the runs that finished," \
	"$crashes runs ended early by trinity crashing or the OOM killer"
echo "# outside: mshare_stress exit $msrc"
tail -n 12 "$tmp/mshare_stress.log" | sed 's/^/#   /'

[ "$msrc" = 0 ] || fail="$fail mshare_stress(exit $msrc)"
# stress-ng exits 2 when a stressor failed and 3 when one could not run.
[ "$sngrc" = 0 ] || fail="$fail stress-ng(exit $sngrc)"
[ "$okruns" -gt 0 ] || fail="$fail trinity(every run crashed)"
# What trinity left of its victims.
mshare ls victims 2>&1 | sed 's/^/#   /' | head -n 10
# Last, so that a log's tail says why.
rc=0
if [ -n "$fail" ]; then
	echo "# outside: FAIL:$fail"
	rc=1
fi
rm -rf /sys/fs/mshare/victims "$tmp"
exit "$rc"
