#!/usr/bin/env bash
# Scan a guest console log for kernel reports that fail a run even when
# every test passed. Prints each report's kind and line; exits 1 if any.
set -euo pipefail

log=${1:?usage: check-log.sh CONSOLE_LOG}
[ -f "$log" ] || { echo "check-log: no console log $log" >&2; exit 1; }

# kind|extended regular expression
patterns=(
	'WARNING|WARNING:|WARN_ON|------------\[ cut here \]'
	'BUG|BUG:|kernel BUG at'
	'Oops|Oops:|general protection fault'
	'panic|Kernel panic'
	'lockdep|possible circular locking|possible recursive locking|inconsistent lock state|DEBUG_LOCKS_WARN_ON|suspicious RCU usage'
	'KASAN|KASAN:'
	'UBSAN|UBSAN:'
	'kmemleak|unreferenced object|kmemleak:.*new suspected'
	'hung task|blocked for more than [0-9]+ seconds'
	'soft lockup|soft lockup|rcu_sched self-detected stall|rcu: INFO:'
	'rss|Bad rss-counter|Bad page'
	'page table check|page_table_check'
)

found=0
for p in "${patterns[@]}"; do
	kind=${p%%|*}
	re=${p#*|}
	if grep -Eq -- "$re" "$log"; then
		found=1
		echo "guest log: kernel $kind report:" >&2
		grep -En -m 5 -- "$re" "$log" | sed 's/^/    /' >&2
	fi
done
exit "$found"
