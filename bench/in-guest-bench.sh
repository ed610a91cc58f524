#!/bin/sh
# make bench, in the guest: the sweep of N and size for the five kinds,
# first-touch fault cost, fork+exit cost and TLB shootdowns. Every result
# is a csv line (csv, csv-touch, csv-fork, csv-tlb); the host collects them.
set -eu
cd "$(dirname "$0")"
procs=${BENCH_PROCS:-1,16,64,256,1000,1500}
sizes=${BENCH_SIZES:-64M,1G,4G}
budget=${BENCH_PLAIN_BUDGET_GIB:-256}
budget_all=${BENCH_BUDGET_GIB:-1600}
parts=${BENCH_PARTS:-share,touch,fork,tlb}

echo "# bench: kernel $(uname -r), $(nproc) CPUs," \
	"$(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
echo "csv-meta,kernel,$(uname -r)"
echo "csv-meta,date,$(date -u +%Y-%m-%d)"
echo "csv-meta,cpus,$(nproc)"
echo "csv-meta,memtotal_mib,$(awk '/MemTotal/ { printf "%d", $2 / 1024 }' /proc/meminfo)"
case ",$parts," in *,share,*)
	./mshare_bench --kinds hugetlb,mshare,mshare-thp,thp,memfd --procs "$procs" \
		--sizes "$sizes" --guard-kb 131072 --plain-budget-gib "$budget" \
		--budget-gib "$budget_all" --table ;;
esac
case ",$parts," in *,touch,*)
	./fault_bench touch --size 64M --reps 5 ;;
esac
case ",$parts," in *,fork,*)
	./fault_bench fork --size 1G --reps 20 ;;
esac
case ",$parts," in *,tlb,*)
	./tlb_bench --rounds 200 ;;
esac
# Shootdown and call IPIs: x86_64 counts TLB and CAL, arm64 numbers its IPIs.
grep -E '^ *(TLB|CAL|IPI[0-9]+):' /proc/interrupts || true
