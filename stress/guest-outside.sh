#!/bin/sh
# Runs in a guest with the host's root file system (make guest ROOT=host),
# from the directory holding mshare_stress:
#   sh guest-outside.sh SECONDS
# For SECONDS, Debian's stress-ng (mmap, madvise, fork, hugetlb,
# userfaultfd and memory stressors) and trinity (the syscall fuzzer, as
# nobody, with msharefs files among its victims) run while mshare_stress
# keeps regions attached and in use: creating, attaching, forking,
# killing, and checking every byte it reads. Prints what each did and
# exits non-zero if mshare_stress found corruption or a hang, or if
# stress-ng or trinity could not run. The host fails the run on any kernel
# report in the console log.
set -u
secs=${1:-60}
tmp=$(mktemp -d /tmp/outside.XXXXXX)
chmod 0755 "$tmp"
rc=0

setk() { [ ! -w "/proc/sys/kernel/$1" ] || echo "$2" >"/proc/sys/kernel/$1"; }
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
		{ echo "# outside: mshare create failed"; rc=1; }
done
mshare create /sys/fs/mshare/victims/empty --mode 0666 || rc=1

start=$(date +%s)
./mshare_stress -s "$secs" -m 60 >"$tmp/mshare_stress.log" 2>&1 &
ms=$!

stress-ng --timeout "${secs}s" --metrics-brief --verify \
	--mmap 1 --mmap-bytes 32M --madvise 1 --fork 1 --mmaphuge 1 \
	--userfaultfd 1 --memfd 1 --mremap 1 --vm 1 --vm-bytes 64M \
	--shm 1 --mlock 1 --msync 1 --mprotect 1 \
	>"$tmp/stress-ng.log" 2>&1 &
sng=$!

# trinity as nobody in a scratch directory; it counts what it did.
mkdir -p "$tmp/trinity"
chown 65534:65534 "$tmp/trinity"
(cd "$tmp/trinity" && timeout -s INT -k 20 "$secs" \
	setpriv --reuid=65534 --regid=65534 --clear-groups \
	trinity -q -C 2 -V /sys/fs/mshare/victims -V /dev/shm >trinity.log 2>&1)
trc=$?
wait "$sng"
sngrc=$?
wait "$ms"
msrc=$?
end=$(date +%s)

echo "# outside: ran $((end - start)) s"
echo "# outside: stress-ng exit $sngrc"
grep -E 'stress-ng: (info|fail|error).*(passed|failed|skipped|successful|stressor|bogo)' \
	"$tmp/stress-ng.log" | sed 's/^/#   /' | tail -n 25
grep -iE 'fail|error' "$tmp/stress-ng.log" | grep -v ' 0 failed' | sed 's/^/#   /' | head -n 10
echo "# outside: trinity exit $trc (124: stopped at the time limit)"
grep -E 'Ran [0-9]+ syscalls|syscalls.*successes|Successes' "$tmp/trinity/trinity.log" |
	tail -n 3 | sed 's/^/#   /'
iters=$(grep -oE 'Ran [0-9]+ syscalls' "$tmp/trinity/trinity.log" | tail -n 1 | grep -oE '[0-9]+')
echo "# outside: trinity syscalls: ${iters:-unknown}"
echo "# outside: mshare_stress exit $msrc"
tail -n 12 "$tmp/mshare_stress.log" | sed 's/^/#   /'

[ "$msrc" = 0 ] || { echo "# outside: FAIL: mshare_stress"; rc=1; }
# stress-ng exits 2 when a stressor failed and 3 when one could not run.
[ "$sngrc" = 0 ] || { echo "# outside: FAIL: stress-ng exit $sngrc"; rc=1; }
[ "$trc" = 124 ] || [ "$trc" = 0 ] || { echo "# outside: FAIL: trinity exit $trc"; rc=1; }
[ -n "${iters:-}" ] || echo "# outside: trinity printed no count"
for f in /sys/fs/mshare/victims/*; do
	[ -e "$f" ] && mshare stat "$f" >/dev/null 2>&1
done
mshare ls 2>&1 | sed 's/^/#   /' | head -n 10
rm -rf /sys/fs/mshare/victims "$tmp"
exit "$rc"
