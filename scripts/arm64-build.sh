#!/usr/bin/env bash
# Cross-build an arm64 kernel of the series (make check-arm64): allnoconfig
# plus kernel/configs/arm64-probe.config, with Debian's gcc-aarch64-linux-gnu
# (installed if missing), in build/obj-arm64-probe, with msharefs off: this
# shows that the series' generic hooks and stubs build on arm64 without it
# (make test-arm64 builds and tests it on), and lists the warnings of the
# build and the series' files it compiled. The result goes to tests/results/arm64-build.txt.
set -euo pipefail
. "$(dirname "$0")/common.sh"

obj=$BUILD/obj-arm64-probe
frag=$CONFIGS/arm64-probe.config
result=$TOP/tests/results/arm64-build.txt
cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)

[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	[ "$(id -u)" = 0 ] || die "gcc-aarch64-linux-gnu is missing: install it as root"
	log "installing gcc-aarch64-linux-gnu"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc-aarch64-linux-gnu >/dev/null
fi

mkdir -p "$obj"
make -s -C "$KTREE" O="$obj" "${cross[@]}" allnoconfig >/dev/null
"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
	>"$obj/merge_config.log"
make -s -C "$KTREE" O="$obj" "${cross[@]}" olddefconfig >/dev/null
bad=0
while read -r line; do
	case "$line" in CONFIG_*=*) ;; *) continue ;; esac
	grep -qx -- "$line" "$obj/.config" || { log "config: $line lost"; bad=1; }
done <"$frag"
[ "$bad" = 0 ] || die "the arm64 config lost requested symbols"

start=$(date +%s)
make -s -C "$KTREE" O="$obj" "${cross[@]}" -j"$JOBS" Image 2>"$obj/build.log" ||
	{ tail -20 "$obj/build.log" >&2; die "the arm64 build failed"; }
secs=$(($(date +%s) - start))
# The files of the series this config compiled.
files=$(git -C "$KTREE" diff --name-only base HEAD -- '*.c' |
	while read -r f; do [ -f "$obj/${f%.c}.o" ] && echo "$f"; done || true)
warnings=$(grep -c 'warning:' "$obj/build.log" || true)
{
	echo "# make check-arm64 (scripts/arm64-build.sh), $(date -u +%Y-%m-%dT%H:%MZ)"
	echo "series at $(git -C "$KTREE" rev-parse --short HEAD) ($(git -C "$KTREE" rev-list --count base..HEAD) commits)"
	echo "config: allnoconfig + kernel/configs/arm64-probe.config; CONFIG_MSHARE=$(sed -n 's/^CONFIG_MSHARE=//p' "$obj/.config")"
	echo "Image built in $secs s on $JOBS CPUs ($(aarch64-linux-gnu-gcc --version | head -n 1))"
	echo "warnings in the build: $warnings"
	[ "$warnings" = 0 ] || grep 'warning:' "$obj/build.log"
	echo "files of the series compiled: $(echo "$files" | grep -c . || true)"
	for f in $files; do echo "  $f"; done
} >"$result"
cat "$result"
