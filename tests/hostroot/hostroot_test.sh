#!/bin/sh
# Unmodified programs of the host on msharefs: runs in the guest on the
# host's root file system (make guest ROOT=host) and prints KTAP.
#   sh hostroot_test.sh [--quick]
# --quick leaves out PostgreSQL (it takes minutes on the debug kernel).
set -u
quick=0
[ "${1:-}" = --quick ] && quick=1
shim=/usr/local/lib/libmshare-preload.so
n=0 failed=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

echo "TAP version 13"
echo "1..6"

# The root is the host's, read-only under a writable tmpfs overlay.
awk '$2 == "/" && $3 == "overlay"' /proc/mounts | grep -q . &&
	[ -x /usr/bin/dpkg ] && [ -f /etc/debian_version ]
overlay=$?
result $overlay "root is the host's Debian system under an overlay"

# Only on the overlay: QEMU exports the host read-only anyway.
if [ "$overlay" = 0 ]; then
	probe=/usr/msharefs-overlay-probe.$$
	echo written >"$probe" && [ "$(cat "$probe")" = written ] && rm "$probe"
	result $? "writes land in the overlay"
else
	result 1 "writes land in the overlay (no overlay)"
fi

mshare ls >/dev/null && man -w msharefs >/dev/null 2>&1
result $? "mshare and the man pages are installed"

# A dynamically linked host program (Python) with the preload shim: its
# MAP_SHARED|MAP_ANONYMOUS mapping becomes a region, a forked child shares it.
out=$(LD_PRELOAD=$shim MSHARE_PRELOAD_THRESHOLD=1M python3 -c '
import mmap, os
m = mmap.mmap(-1, 64 << 20, mmap.MAP_SHARED)
pid = os.fork()
if pid == 0:
    m[(32 << 20):(32 << 20) + 5] = b"hello"
    os._exit(0)
os.waitpid(pid, 0)
maps = open("/proc/self/maps").read()
print(m[(32 << 20):(32 << 20) + 5].decode(), "/sys/fs/mshare/" in maps)
' 2>&1)
[ "$out" = "hello True" ]
result $? "python3 with the preload shim shares a region with its child ($out)"

# stress-ng and trinity, for make outside, start at all.
stress-ng --version >/dev/null 2>&1 && command -v trinity >/dev/null
result $? "stress-ng and trinity are there"

if [ "$quick" = 1 ]; then
	skip "postgresql with its shared buffers in a region" "--quick"
else
	sh /opt/msharefs/demo/postgres.sh 8 10
	result $? "postgresql with its shared buffers in a region"
fi
exit $((failed > 0))
