#!/usr/bin/env bash
# Build the bzImage of one flavour (fast or debug) out of tree in
# build/obj-FLAVOUR from build/linux. The .config is allnoconfig plus
# kernel/configs/base.config plus kernel/configs/FLAVOUR.config, and every
# symbol the fragments ask for is checked in the result: merge_config.sh
# silently drops symbols whose dependencies are missing.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:?usage: build-kernel.sh fast|debug}
frag=$CONFIGS/$flavour.config
obj=${BUILD_OBJ:-$BUILD/obj-$flavour}
[ -f "$frag" ] || die "no config fragment $frag"
[ -e "$KTREE/.git" ] || die "no kernel tree at $KTREE: run 'make tree'"

# The fragments; BASELINE=1 (a tree without the series) drops MSHARE.
fragments() {
	if [ "${BASELINE:-0}" = 1 ]; then
		grep -hv '^CONFIG_MSHARE=' "$CONFIGS/base.config" "$frag"
	else
		cat "$CONFIGS/base.config" "$frag"
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
		if [ "$got" != "$want" ]; then
			log "config: $sym wanted '${want:-n}', got '${got:-n}'"
			bad=1
		fi
	done < <(fragments)
	[ "$bad" = 0 ] || die "the $flavour config lost requested symbols (missing dependencies?)"
}

configure() {
	mkdir -p "$obj"
	make -s -C "$KTREE" O="$obj" allnoconfig >/dev/null
	fragments >"$obj/.fragments.new"
	"$KTREE/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" \
		"$obj/.fragments.new" >"$obj/merge_config.log"
	make -s -C "$KTREE" O="$obj" olddefconfig >/dev/null
	check_config
	mv "$obj/.fragments.new" "$obj/.fragments"
}

if ! cmp -s <(fragments) "$obj/.fragments" 2>/dev/null ||
	[ ! -f "$obj/.config" ]; then
	log "configuring $flavour kernel"
	configure
fi
# TARGET=prepare (check-warnings.sh) stops at what single objects need.
start=$(date +%s)
if [ "${TARGET:-bzImage}" = prepare ]; then
	make -s -C "$KTREE" O="$obj" -j"$JOBS" prepare
	exit 0
fi
# KCC="ccache gcc" (make check-series) caches objects across commits.
make -s -C "$KTREE" O="$obj" -j"$JOBS" ${KCC:+CC="$KCC"} bzImage
log "$flavour bzImage built in $(($(date +%s) - start)) s: $obj/arch/x86/boot/bzImage"
