#!/usr/bin/env bash
# Build the kernel of one flavour out of tree from build/linux:
#   build-kernel.sh fast|debug           x86_64 bzImage in build/obj-FLAVOUR
#   build-kernel.sh arm64-fast|arm64-debug
#                                        arm64 Image, cross-built with
#                                        Debian's gcc-aarch64-linux-gnu, in
#                                        build/obj-arm64-FLAVOUR
# The .config is allnoconfig plus kernel/configs/base.config, the
# architecture's fragment (x86_64.config or arm64.config) and
# FLAVOUR.config, and every symbol the fragments ask for is checked in the
# result: merge_config.sh silently drops symbols whose dependencies are
# missing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

name=${1:?usage: build-kernel.sh [arm64-]fast|debug}
karch=x86_64 flavour=$name
case "$name" in arm64-*) karch=arm64 flavour=${name#arm64-} ;; esac
frag=$CONFIGS/$flavour.config
obj=${BUILD_OBJ:-$BUILD/obj-$name}
[ -f "$frag" ] || die "no config fragment $frag"
[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"
cross=() image=arch/x86/boot/bzImage target=bzImage
if [ "$karch" = arm64 ]; then
	cross=(ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-)
	image=arch/arm64/boot/Image target=Image
	command -v aarch64-linux-gnu-gcc >/dev/null ||
		die "no aarch64-linux-gnu-gcc: run scripts/arm64.sh deps"
fi

# The fragments; BASELINE=1 (a tree without the series) drops MSHARE.
fragments() {
	if [ "${BASELINE:-0}" = 1 ]; then
		grep -hv '^CONFIG_MSHARE=' "$CONFIGS/base.config" \
			"$CONFIGS/$karch.config" "$frag"
	else
		cat "$CONFIGS/base.config" "$CONFIGS/$karch.config" "$frag"
	fi
}

check_config() {
	local line sym want got bad=0
	while read -r line; do
		case "$line" in CONFIG_*=*) ;; *) continue ;; esac
		sym=${line%%=*}
		want=${line#*=}
		got=$(sed -n "s/^$sym=//p" "$obj/.config")
		[ "$want" = n ] && want=""
		# make check-series builds commits that come before the one
		# adding a symbol (CONFIG_MSHARE): those may lack it.
		if [ -n "${KCONFIG_ALLOW_UNDEFINED:-}" ] && [ "$got" != "$want" ] &&
			! grep -rqs --include='Kconfig*' "^config ${sym#CONFIG_}\$" "$KTREE"; then
			continue
		fi
		if [ "$got" != "$want" ]; then
			log "config: $sym wanted '${want:-n}', got '${got:-n}'"
			bad=1
		fi
	done < <(fragments)
	[ "$bad" = 0 ] || die "the $name config lost requested symbols (missing dependencies?)"
}

configure() {
	mkdir -p "$obj"
	make -s -C "$KTREE" O="$obj" "${cross[@]}" allnoconfig >/dev/null
	fragments >"$obj/.fragments.cfg"
	config_input >"$obj/.fragments.new"
	"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$obj/.fragments.cfg" >"$obj/merge_config.log"
	make -s -C "$KTREE" O="$obj" "${cross[@]}" olddefconfig >/dev/null
	check_config
	mv "$obj/.fragments.new" "$obj/.fragments"
}

# What the configuration is made from: the fragments and, for a commit
# of the series that comes before some symbol (make check-series), which
# of their symbols the tree defines, so that the commit adding one
# configures again and builds with it.
config_input() {
	fragments
	if [ -n "${KCONFIG_ALLOW_UNDEFINED:-}" ]; then
		comm -12 <(fragments | sed -n 's/^CONFIG_\([A-Z0-9_]*\)=.*/\1/p' | sort -u) \
			<(grep -rhos --include='Kconfig*' '^config [A-Z0-9_]*' "$KTREE" |
				sed 's/^config //' | sort -u) | sed 's/^/# defined: /'
	fi
}

if ! cmp -s <(config_input) "$obj/.fragments" 2>/dev/null ||
	[ ! -f "$obj/.config" ]; then
	log "configuring $name kernel"
	configure
fi
# TARGET=prepare (check-warnings.sh) stops at what single objects need.
start=$(date +%s)
if [ "${TARGET:-bzImage}" = prepare ]; then
	make -s -C "$KTREE" O="$obj" "${cross[@]}" -j"$JOBS" prepare
	exit 0
fi
# KCC="ccache gcc" (make check-series) caches objects across commits.
make -s -C "$KTREE" O="$obj" "${cross[@]}" -j"$JOBS" ${KCC:+CC="$KCC"} $target
log "$name $target built in $(($(date +%s) - start)) s: $obj/$image"
