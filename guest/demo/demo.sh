#!/bin/sh
# make run: what msharefs does, step by step.
set -eu
step() { echo; echo "\$ $*"; "$@"; }

step mount -t msharefs
step cat /sys/fs/mshare/mshare_info
step stat -f -c 'type=%T magic=0x%t' /sys/fs/mshare
step touch /sys/fs/mshare/buffers
step truncate -s 512G /sys/fs/mshare/buffers
step ls -l /sys/fs/mshare
echo "read(2) of the region: struct mshare_info { start; size; }"
step od -A d -t u8 /sys/fs/mshare/buffers
! step truncate -s 1099511627776 /sys/fs/mshare/buffers
echo "(a region's size is set once: the second change fails)"
step rm /sys/fs/mshare/buffers
step ls -l /sys/fs/mshare
echo
echo "Sharing: workers attach a region holding 64 MiB and read all of it."
step /demo/share_demo 4
