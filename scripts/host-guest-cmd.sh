#!/usr/bin/env bash
# make guest: copy a host directory (or nothing) into the guest as /add,
# run a command there as root (msharefs mounted on /sys/fs/mshare), print
# its output and exit with its status.
#   host-guest-cmd.sh FLAVOUR DIR|"" CMD
# With GUEST_ROOT=host the command runs in the host's root file system
# (read-only, under a tmpfs overlay), so installed programs work; without,
# in the initramfs, where programs must be static or busybox.
set -euo pipefail
. "$(dirname "$0")/common.sh"

flavour=${1:?} dir=${2-} cmd=${3:?}
logs=${LOGS:-$BUILD/logs}
extra=$logs/guest-add.cpio.gz
mkdir -p "$logs"
empty=
if [ -z "$dir" ]; then
	empty=$(mktemp -d)
	trap 'rm -rf "$empty"' EXIT
	dir=$empty
fi
"$TOP/scripts/mkinitramfs.sh" --add "$dir" "$cmd" "$extra"
rc=0
"$TOP/scripts/host-boot-guest.sh" "$flavour" guest "$extra" || rc=$?
out=$logs/$flavour-guest.out
grep -v '^# msharefs-guest-\(exit=\|done\)' "$out" || true
"$TOP/scripts/check-log.sh" "$logs/$flavour-guest.console" || rc=1
[ "$rc" = 0 ] || exit "$rc"
grep -q '^# msharefs-guest-done' "$out" || die "the guest did not finish"
status=$(sed -n 's/^# msharefs-guest-exit=//p' "$out" | tr -d '\r')
exit "${status:-1}"
