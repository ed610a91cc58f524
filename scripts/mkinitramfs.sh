#!/usr/bin/env bash
# Build the guest's initramfs: busybox-static, guest/in-guest-init, the static test
# binaries from build/tests and the demo from guest/demo.
#   mkinitramfs.sh OUT                  the base image
#   mkinitramfs.sh --add DIR CMD OUT    a second archive holding DIR as
#                                       /add and CMD to run there; the
#                                       kernel unpacks it over the base
#   mkinitramfs.sh --overlay DIR OUT    a second archive holding DIR as /
set -euo pipefail
. "$(dirname "$0")/common.sh"

pack() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio --quiet -o -H newc -R 0:0) | gzip -1 >"$2"
}

if [ "${1:-}" = --overlay ]; then
	pack "${2:?}" "${3:?}"
	exit 0
fi

if [ "${1:-}" = --add ]; then
	dir=${2:?} cmd=${3:?} out=${4:?}
	[ -d "$dir" ] || die "ADD=$dir is not a directory"
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage/add"
	cp -a "$dir/." "$stage/add/"
	# Readable by the unprivileged users programs may switch to.
	chmod 0755 "$stage/add"
	printf '%s\n' "$cmd" >"$stage/add/.msharefs-cmd"
	pack "$stage" "$out"
	exit 0
fi

out=${1:?usage: mkinitramfs.sh OUT}
stage=$BUILD/initramfs
rm -rf "$stage"
mkdir -p "$stage"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,tests,demo,add}
cp "${BUSYBOX:-/bin/busybox}" "$stage/bin/busybox"
cp "$TOP/guest/in-guest-init" "$stage/init"
cp -a "$TOP/guest/demo/." "$stage/demo/"
if compgen -G "$BUILD/examples/*" >/dev/null; then
	cp -a "$BUILD/examples/." "$stage/demo/"
fi
if compgen -G "$BUILD/tests/*" >/dev/null; then
	cp -a "$BUILD/tests/." "$stage/tests/"
fi
# The mshare command, its tests and the preload shim's, and the man pages.
if [ -x "$BUILD/tools/mshare" ]; then
	cp "$BUILD/tools/mshare" "$stage/usr/bin/mshare"
fi
# Tests that run on the host's root file system (make guest ROOT=host),
# and the dynamic programs they run (the host's C library, not busybox's
# world: under /tests/hostroot, out of the */tests/*_test run).
mkdir -p "$stage/tests/hostroot"
cp "$TOP"/tests/hostroot/*.sh "$stage/tests/hostroot/"
if compgen -G "$BUILD/tools/hostroot/*" >/dev/null; then
	cp -a "$BUILD/tools/hostroot/." "$stage/tests/hostroot/"
fi
# The preload shim is dynamic: for programs of the host's root file system
# (make guest ROOT=host), which find it in /usr/local/lib.
if [ -f "$BUILD/tools/libmshare-preload.so" ]; then
	mkdir -p "$stage/usr/lib/msharefs"
	cp "$BUILD/tools/libmshare-preload.so" "$stage/usr/lib/msharefs/"
fi
if compgen -G "$BUILD/tools/test/*" >/dev/null; then
	cp -a "$BUILD/tools/test/." "$stage/tests/"
fi
for m in "$TOP"/man/*.[1-8]; do
	[ -f "$m" ] || continue
	mkdir -p "$stage/usr/share/man/man${m##*.}"
	cp "$m" "$stage/usr/share/man/man${m##*.}/"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$stage/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$stage/etc/group"
pack "$stage" "$out"
