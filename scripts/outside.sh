#!/usr/bin/env bash
# Debian's stress-ng and trinity in the guest, on the host's root file
# system, while mshare_stress keeps regions attached and in use:
#   outside.sh [FLAVOUR]          FLAVOUR: debug (default) or fast
# OUTSIDE_SECONDS (default 600) sets the length. Exits non-zero if
# mshare_stress found corruption or a hang, a tool could not run, or the
# kernel log holds any report.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-debug}
secs=${OUTSIDE_SECONDS:-600}
out=$BUILD/outside	# not stress.sh's: make test runs both at once
logs=${LOGS:-$BUILD/logs}
mkdir -p "$out" "$logs"
for t in stress-ng trinity setpriv; do
	command -v "$t" >/dev/null || die "no $t on the host: run 'make deps'"
done

"${CC:-gcc}" -static -O2 -g -Wall -Wextra \
	-isystem "$BUILD/obj-headers/usr/include" -I"$TOP/lib" -iquote "$KTREE/lib" \
	-o "$out/mshare_stress" "$TOP/stress/mshare_stress.c" \
	"$BUILD/lib/libmshare.a" -lpthread
cp "$TOP/stress/in-guest-outside.sh" "$out/"

case "$flavour" in
debug)	extra=900 ;;
*)	extra=300 ;;
esac
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-$((secs + 180 + extra))}
export GUEST_ROOT=host LOGS=$logs

log "$flavour kernel, $secs s, guest timeout $GUEST_TIMEOUT s, logs in $logs"
set +e
"$TOP/scripts/host-guest-cmd.sh" "$flavour" "$out" "sh ./in-guest-outside.sh $secs" 2>&1 |
	tee "$logs/$flavour-outside.log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" = 0 ]; then
	log "$flavour: stress-ng and trinity passed; output $logs/$flavour-outside.log"
else
	log "$flavour: FAILED (exit $rc); output $logs/$flavour-outside.log," \
		"console $logs/$flavour-guest.console"
fi
exit "$rc"
