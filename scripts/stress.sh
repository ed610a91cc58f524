#!/usr/bin/env bash
# The msharefs race and stress tester in the guest:
#   stress.sh [FLAVOUR]            FLAVOUR: debug (default) or fast
# STRESS_SECONDS (default 1800) sets the length, STRESS_ARGS passes options
# to mshare_stress (e.g. "-w 8 -t 2"); GUEST_TIMEOUT defaults to the
# length plus room for boot, the end margin, the baseline and kmemleak.
# Exits non-zero if the stress fails (corruption, hang, unexpected errno,
# baseline not restored) or the kernel log holds any report.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:-${FLAVOUR:-debug}}
secs=${STRESS_SECONDS:-1800}
out=$BUILD/stress
logs=${LOGS:-$BUILD/logs}
mkdir -p "$out" "$logs"

"${CC:-gcc}" -static -O2 -g -Wall -Wextra \
	-isystem "$BUILD/obj-headers/usr/include" -I"$TOP/lib" -iquote "$KTREE/lib" \
	-o "$out/mshare_stress" "$TOP/stress/mshare_stress.c" \
	"$BUILD/lib/libmshare.a" -lpthread
cp "$TOP/stress/in-guest-stress.sh" "$out/"

# The stress ends by itself after secs + its margin (120 s + secs/10);
# the debug kernel boots and scans for leaks about six times slower.
case "$flavour" in
debug)	extra=900 ;;
*)	extra=300 ;;
esac
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-$((secs + secs / 10 + 120 + extra))}
export LOGS=$logs

log "$flavour kernel, $secs s, guest timeout $GUEST_TIMEOUT s, logs in $logs"
set +e
"$TOP/scripts/host-guest-cmd.sh" "$flavour" "$out" \
	"sh ./in-guest-stress.sh $secs ${STRESS_ARGS:-}" 2>&1 |
	tee "$logs/$flavour-stress.log"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" = 0 ]; then
	log "$flavour: stress passed; full output $logs/$flavour-stress.log"
else
	log "$flavour: stress FAILED (exit $rc); output $logs/$flavour-stress.log," \
		"console $logs/$flavour-guest.console"
fi
exit "$rc"
