#!/usr/bin/env bash
# Turn the KTAP a guest printed into counts. Every test binary prints a
# plan ("1..N") and N result lines; guest/init adds an exit line per
# binary and a final marker. A binary that crashed, stopped early or exited
# non-zero without a failing result counts as one more failure.
#   ktap-summary.sh OUT_LOG [LABEL]
# prints "[LABEL: ]N passed, N failed, N skipped" last; exits 1 on any
# failure or if the guest did not finish.
set -euo pipefail

out=${1:?usage: ktap-summary.sh OUT_LOG [LABEL]}
label=${2:+$2: }

awk -v label="$label" '
function finish_binary() {
	if (bin == "")
		return
	if (planned < 0 || results != planned) {
		printf "ktap: %s planned %d tests, reported %d\n", bin, planned, results
		failed++
	} else if (code != 0 && !binfail) {
		printf "ktap: %s exited %d without a failing test\n", bin, code
		failed++
	}
	bin = ""
}
/^# msharefs-runner: start / {
	finish_binary(); bin = $4; planned = -1; results = 0; binfail = 0; code = 0
	binaries++; next
}
/^# msharefs-runner: .* exit=/ {
	code = $0; sub(/.*exit=/, "", code); code += 0; finish_binary(); next
}
/^# msharefs-guest-done/ { done = 1; next }
/^1\.\.[0-9]+/ { if (bin != "") { planned = substr($1, 4) + 0 } next }
/^not ok [0-9]+/ {
	results++
	if ($0 ~ /# (SKIP|skip)/) { skipped++; next }
	failed++; binfail = 1; print "ktap: FAIL " bin ": " $0; next
}
/^ok [0-9]+/ {
	results++
	if ($0 ~ /# (SKIP|skip)/) { skipped++; print "ktap: SKIP " bin ": " $0 }
	else passed++
	next
}
END {
	finish_binary()
	if (!done) { print "ktap: the guest did not finish (crash, panic or timeout)"; failed++ }
	if (binaries == 0) { print "ktap: no test binary ran"; failed++ }
	printf "%s%d passed, %d failed, %d skipped\n", label, passed, failed, skipped
	exit(failed ? 1 : 0)
}' "$out"
