#!/usr/bin/env bash
# The user space as Debian packages: libmshare0, libmshare-dev and
# msharefs-tools, built by dpkg-buildpackage from lib/, tools/, man/ and
# packaging/debian, against the patched kernel's UAPI headers, then
# checked by lintian (any error fails). They end up in build/deb-user;
# a copy goes to build/tools/hostroot/debs for the host-root guest's test
# (install, use, remove).
set -euo pipefail
. "$(dirname "$0")/common.sh"

version=$(dpkg-parsechangelog -l "$TOP/packaging/debian/changelog" -S Version)
src=$BUILD/pkg/msharefs-user-$version
out=$BUILD/deb-user
hdrs=$BUILD/obj-headers/usr/include
[ -f "$hdrs/linux/msharefs.h" ] || die "no UAPI headers in $hdrs: run 'make headers'"

rm -rf "$BUILD/pkg"
mkdir -p "$src" "$out"
cp -a "$TOP/lib" "$TOP/tools" "$TOP/man" "$src/"
cp -a "$TOP/packaging/debian" "$src/debian"
log "building $(sed -n 's/^Package: //p' "$src/debian/control" | xargs) $version"
(cd "$src" && MSHAREFS_HDRS=$hdrs dpkg-buildpackage -b -us -uc \
	>"$BUILD/pkg/build.log" 2>&1) ||
	{ tail -n 30 "$BUILD/pkg/build.log" >&2; die "dpkg-buildpackage failed (build/pkg/build.log)"; }
rm -f "$out"/*
mv "$BUILD"/pkg/*.deb "$BUILD"/pkg/*.changes "$BUILD"/pkg/*.buildinfo "$out/"

changes=$(echo "$out"/*.changes)
lintian --fail-on error --tag-display-limit 0 "$changes" >"$out/lintian.log" 2>&1 ||
	{ cat "$out/lintian.log" >&2; die "lintian found errors ($out/lintian.log)"; }
log "lintian: $(grep -c '^E:' "$out/lintian.log" || true) errors," \
	"$(grep -c '^W:' "$out/lintian.log" || true) warnings ($out/lintian.log)"

mkdir -p "$BUILD/tools/hostroot/debs"
rm -f "$BUILD"/tools/hostroot/debs/*
cp "$out"/*.deb "$BUILD/tools/hostroot/debs/"
ls "$out"/*.deb | sed 's|.*/|  |' >&2
