#!/bin/sh
# Unmodified programs of the host on msharefs: runs in the guest on the
# host's root file system (make guest ROOT=host) and prints KTAP.
#   sh hostroot_test.sh [--quick]
# --quick leaves out PostgreSQL (it takes minutes on the debug kernel).
#
# First the setup it needs: the host's Debian root under a writable
# overlay, stress-ng and trinity (for make outside). Any of it missing is
# "Bail out!" and exit 1, before the plan: a run that fails, not a test.
# Then the tests: the tools and man pages, the Debian packages of the
# user space, Python with the preload shim,
# the shim's own tests against the .so (mshare_preload_so_test, a dynamic
# kselftest program, each of its results one of ours) and PostgreSQL.
set -eu
quick=0
[ "${1:-}" = --quick ] && quick=1
here=$(dirname "$0")
shim=/usr/local/lib/libmshare-preload.so
sotest=$here/mshare_preload_so_test
# Another LD_PRELOAD library after the shim, which must keep working.
interposer=$here/libinterposer.so
n=0 failed=0
last=$(cut -d. -f1 /proc/uptime)

# Where the time goes, in make test's log (test.sh prints these lines):
# the guest's seconds since the last result, and its uptime.
took() {
	local now
	now=$(cut -d. -f1 /proc/uptime)
	echo "# hostroot: $((now - last)) s (uptime $now s): $1"
	last=$now
}

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
	took "$2"
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

bail() {
	echo "Bail out! setup: $*"
	exit 1
}

echo "TAP version 13"

# ---- setup --------------------------------------------------------------

# The root is the host's, read-only under a writable tmpfs overlay.
awk '$2 == "/" && $3 == "overlay"' /proc/mounts | grep -q . ||
	bail "the root is not an overlay (not make guest ROOT=host?)"
[ -x /usr/bin/dpkg ] && [ -f /etc/debian_version ] ||
	bail "the root is not the host's Debian system"
# Only on the overlay: QEMU exports the host read-only anyway.
probe=/usr/msharefs-overlay-probe.$$
{ echo written >"$probe" && [ "$(cat "$probe")" = written ] &&
	rm "$probe"; } 2>/dev/null ||
	bail "writes do not land in the overlay"
stress-ng --version >/dev/null 2>&1 ||
	bail "stress-ng is not installed (make deps)"
command -v trinity >/dev/null || bail "trinity is not installed (make deps)"
echo "# setup: the host's Debian root under a writable overlay, stress-ng and trinity"

# The shim's tests run first, their output kept, so that the plan can
# count their results: it is theirs plus our three.
[ -f "$shim" ] || bail "$shim is missing (make tools initramfs)"
[ -x "$sotest" ] || bail "$sotest is missing (make tools initramfs)"
[ -f "$interposer" ] || bail "$interposer is missing (make tools initramfs)"
sout=/tmp/mshare_preload_so_test.$$
LD_PRELOAD="$shim $interposer" "$sotest" >"$sout" 2>&1 && src=0 || src=$?
took "mshare_preload_so_test"
splan=$(sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' "$sout" | head -n 1)
if [ -z "$splan" ]; then
	sed 's/^/# /' "$sout"
	bail "mshare_preload_so_test printed no plan (exit $src)"
fi

# ---- tests --------------------------------------------------------------

echo "1..$((4 + splan))"

mshare ls >/dev/null && man -w msharefs >/dev/null 2>&1 && rc=0 || rc=$?
result $rc "mshare and the man pages are installed"

# The user space's Debian packages (make deb-user): dpkg installs them,
# the command runs on the shared library, the manual pages are found, a
# program built against libmshare with pkg-config makes, fills, attaches
# and removes a region; dpkg removes them and nothing of them is left.
debs=$here/debs
pkg_test() {
	local f prog=/tmp/pkg-test.$$ r
	set -- "$debs"/libmshare0_*.deb "$debs"/libmshare-dev_*.deb \
		"$debs"/msharefs-tools_*.deb
	for f; do [ -f "$f" ] || { echo "# no $f"; return 1; }; done
	# man-db's trigger would index all of the host's manual pages
	# (22,000 here) over 9p under emulation, on install and again on
	# purge: 900 s of the test's 903. Off in the overlay, as in a build
	# chroot; man -w below finds the pages without an index.
	rm -f /var/lib/man-db/auto-update
	dpkg -i "$@" >/tmp/dpkg.log 2>&1 ||
		{ sed 's/^/# dpkg: /' /tmp/dpkg.log; return 1; }
	/usr/bin/mshare ls >/dev/null || return 1
	ldd /usr/bin/mshare | grep -q 'libmshare\.so\.0 => /' ||
		{ echo "# /usr/bin/mshare does not use the shared libmshare"; return 1; }
	for f in mshare msharefs libmshare mshare_region_create mshare_attach \
		mshare_unmap ioctl_msharefs; do
		man -w "$f" >/dev/null 2>&1 || { echo "# no manual page $f"; return 1; }
	done
	dpkg -L msharefs-tools | grep -q '/sys-fs-mshare\.mount$' ||
		{ echo "# no mount unit"; return 1; }
	cat >"$prog.c" <<'PROG'
#include <fcntl.h>
#include <mshare.h>
#include <stdio.h>
#include <sys/mman.h>

int main(void)
{
	int fd = mshare_region_create(AT_FDCWD, "/sys/fs/mshare/pkg-test",
				      0600, mshare_alignment(NULL));
	char *p;

	if (fd < 0 || mshare_map_anon(fd, 0, 1 << 20))
		return perror("region"), 1;
	p = mshare_attach(fd, NULL, PROT_READ | PROT_WRITE, 0);
	if (p == MAP_FAILED)
		return perror("attach"), 1;
	p[0] = 42;
	printf("%lld\n", (long long)mshare_fdinfo_value(fd, "rss"));
	return mshare_region_remove(AT_FDCWD, "/sys/fs/mshare/pkg-test");
}
PROG
	cc -Wall -Werror -o "$prog" "$prog.c" $(pkg-config --cflags --libs libmshare) ||
		return 1
	r=$("$prog") || return 1
	[ "$r" -ge 4096 ] || { echo "# rss $r after touching a page"; return 1; }
	[ ! -e /sys/fs/mshare/pkg-test ] || return 1
	dpkg --purge msharefs-tools libmshare-dev libmshare0 >/tmp/dpkg.log 2>&1 ||
		{ sed 's/^/# dpkg: /' /tmp/dpkg.log; return 1; }
	for f in /usr/bin/mshare /usr/include/mshare.h \
		"/usr/lib/$(cc -print-multiarch)/libmshare.so.0" \
		"/usr/lib/$(cc -print-multiarch)/msharefs"; do
		[ ! -e "$f" ] || { echo "# $f left after purge"; return 1; }
	done
	rm -f "$prog" "$prog.c"
}
if pkg_test; then rc=0; else rc=1; fi
result $rc "the Debian packages install, work and purge"

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
' 2>&1) || true
[ "$out" = "hello True" ] && rc=0 || rc=$?
result $rc "python3 with the preload shim shares a region with its child ($out)"

# The shim's results as ours, renumbered; the rest of its output as
# diagnostics. Fewer results than its plan (a crash) leaves ours short.
while IFS= read -r line; do
	case "$line" in
	"ok "[0-9]*)
		n=$((n + 1))
		echo "ok $n preload.so: ${line#ok [0-9]* }" ;;
	"not ok "[0-9]*)
		n=$((n + 1))
		failed=$((failed + 1))
		echo "not ok $n preload.so: ${line#not ok [0-9]* }" ;;
	"#"*)	echo "$line" ;;
	*)	echo "# $line" ;;
	esac
done <"$sout"
rm -f "$sout"
if [ "$src" != 0 ]; then
	echo "# mshare_preload_so_test exited $src"
	failed=$((failed + 1))
fi

if [ "$quick" = 1 ]; then
	skip "postgresql with its shared buffers in a region" "--quick"
else
	sh /opt/msharefs/demo/postgres.sh 8 10 && rc=0 || rc=$?
	result $rc "postgresql with its shared buffers in a region"
fi
exit $((failed > 0))
