#!/usr/bin/env bash
# make deb: Debian packages of the patched kernel for a real x86_64
# machine, built by the kernel's own bindeb-pkg in build/obj-deb from
# x86_64_defconfig plus kernel/configs/deb.config. The packages end up in
# build/deb. Takes tens of minutes on two cores.
set -euo pipefail
. "$(dirname "$0")/common.sh"

obj=$BUILD/obj-deb
frag=$CONFIGS/deb.config
[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"

# bindeb-pkg runs dpkg-buildpackage, which checks these.
need=()
for p in debhelper dpkg-dev fakeroot; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	[ "$(id -u)" = 0 ] || die "need root to apt-get install: ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"${need[@]}" >/dev/null
fi

if ! cmp -s "$frag" "$obj/.fragments" 2>/dev/null || [ ! -f "$obj/.config" ]; then
	log "configuring the packaged kernel: x86_64_defconfig + $frag"
	mkdir -p "$obj"
	make -s -C "$KTREE" O="$obj" x86_64_defconfig >/dev/null
	"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
		>"$obj/merge_config.log"
	make -s -C "$KTREE" O="$obj" olddefconfig >/dev/null
	bad=0
	while IFS='=' read -r sym want; do
		case "$sym" in CONFIG_*) ;; *) continue ;; esac
		got=$(sed -n "s/^$sym=//p" "$obj/.config")
		[ "$want" = n ] && want=""
		[ "$got" = "$want" ] || { log "config: $sym wanted '${want:-n}', got '${got:-n}'"; bad=1; }
	done <"$frag"
	[ "$bad" = 0 ] || die "the packaged kernel's config lost requested symbols"
	cp "$frag" "$obj/.fragments"
fi

start=$(date +%s)
rm -f "$BUILD"/linux-*.deb "$BUILD"/linux-*.buildinfo "$BUILD"/linux-*.changes
make -s -C "$KTREE" O="$obj" -j"$JOBS" bindeb-pkg \
	KDEB_PKGVERSION="$(make -s -C "$KTREE" O="$obj" kernelversion)-mshare-1"
mkdir -p "$BUILD/deb"
rm -f "$BUILD"/deb/*
mv "$BUILD"/linux-*.deb "$BUILD"/linux-*.buildinfo "$BUILD"/linux-*.changes "$BUILD/deb/" 2>/dev/null || true
log "built in $(($(date +%s) - start)) s:"
ls -l "$BUILD/deb" >&2
compgen -G "$BUILD/deb/linux-image-*.deb" >/dev/null || die "no linux-image package was made"
