#!/usr/bin/env bash
# Install what building the kernels, the tests and the guest needs.
# Does nothing when everything is already there.
set -euo pipefail
. "$(dirname "$0")/common.sh"

packages=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
	xz-utils kmod python3 git qemu-system-x86 busybox-static e2fsprogs
	libcap-dev libnuma-dev gawk rsync mandoc groff-base man-db gnuplot-nox
	procps trinity stress-ng postgresql debhelper lintian pkgconf ccache sparse
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
if ! dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null | grep -qx "$PINNED"; then
	src=linux-source-6.12=$PINNED
else
	src=
fi
[ ${#missing[@]} -eq 0 ] && [ -z "$src" ] && exit 0

[ "$(id -u)" = 0 ] || die "need root to apt-get install: ${missing[*]} $src"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ -n "$src" ] && ! apt-get install -y -qq --no-install-recommends "$src" >/dev/null; then
	log "WARNING: linux-source-6.12 $PINNED is no longer served;"
	log "WARNING: falling back to the newest linux-source-6.12"
	src=linux-source-6.12
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" ${src:+"$src"} >/dev/null
