#!/bin/sh
# In the guest (host's root, make bench-pt): one region, then idle and
# sharer processes in turns, each exec'd afresh (own ASLR layout).
set -eu
n=${BENCH_PT_PROCS:-16}
region=/sys/fs/mshare/pt-account
./pt_account create "$region"
i=0
while [ "$i" -lt "$n" ]; do
	./pt_account idle "$region"
	./pt_account sharer "$region"
	i=$((i + 1))
done
rm -f "$region"
