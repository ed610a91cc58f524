#!/usr/bin/env bash
# Turn the KTAP a guest printed into counts. Every test binary prints a
# plan ("1..N") and N result lines; guest/in-guest-init adds a start and an exit
# line per binary and a final marker.
#   ktap-summary.sh [--manifest FILE --set SET] OUT_LOG [LABEL]
# prints "[LABEL: ]N passed, N failed, N skipped" last; exits 1 on any
# failure or if the guest did not finish. Each of these counts as one
# more failure, with a "ktap:" line saying what happened:
#  - a binary that crashed or exited before its plan, stopped early or
#    exited non-zero without a failing result;
#  - with a manifest (scripts/manifest.sh): a binary of SET that did not
#    run, one that is not in it, or a plan other than the manifest's;
#  - a skip that tests/allowed-skips does not allow for SET.
set -euo pipefail
. "$(dirname "$0")/common.sh"

manifest=/dev/null set=suite
while [ $# -gt 0 ]; do
	case "$1" in
	--manifest) manifest=$2; shift 2 ;;
	--set) set=$2; shift 2 ;;
	*) break ;;
	esac
done
out=${1:?usage: ktap-summary.sh [--manifest FILE --set SET] OUT_LOG [LABEL]}
label=${2:+$2: }

gawk -v label="$label" -v manifest="$manifest" -v set="$set" \
	-v allowed="$TOP/tests/allowed-skips" -f "$TOP/scripts/allowed-skips.awk" -e '
BEGIN {
	while ((getline line < manifest) > 0) {
		split(line, f, " ")
		if (f[1] == set) { expect[f[2]] = f[3] + 0; expected++ }
	}
}
# Serial lines may end in CR.
{ sub(/\r$/, "") }
function fail(msg) { print "ktap: " msg; failed++ }
function finish_binary() {
	if (bin == "")
		return
	if (planned < 0)
		fail(sprintf("%s crashed or exited before its plan (exit %d)", bin, code))
	else if (results != planned)
		fail(sprintf("%s planned %d tests, reported %d", bin, planned, results))
	else if (code != 0 && !binfail)
		fail(sprintf("%s exited %d without a failing test", bin, code))
	if (expected && (bin in expect) && planned >= 0 && planned != expect[bin])
		fail(sprintf("%s planned %d tests, the manifest says %d", bin, planned, expect[bin]))
	bin = ""
}
/^# msharefs-runner: start / {
	finish_binary(); bin = $4; planned = -1; results = 0; binfail = 0; code = 0
	binaries++; ran[bin] = 1
	if (expected && !(bin in expect))
		fail(sprintf("%s ran but is not in the manifest (%s)", bin, set))
	next
}
/^# msharefs-runner: .* exit=/ {
	code = $0; sub(/.*exit=/, "", code); code += 0; finish_binary(); next
}
/^# msharefs-guest-done/ { done = 1; next }
# The diagnostics of a test (harness asserts and TH_LOG: "# file.c:LINE:..."),
# kept so that a failure line says why, also in the tail of a CI log.
/^#  RUN / { ndiag = 0; next }
/^# [^ ]+\.c:[0-9]+:/ { diag[++ndiag] = substr($0, 3); next }
function diagnosis(   s, i) {
	s = ""
	for (i = (ndiag > 3 ? ndiag - 2 : 1); i <= ndiag; i++)
		s = s " | " substr(diag[i], 1, 200)
	ndiag = 0
	return s
}
/^1\.\.[0-9]+/ { if (bin != "") { planned = substr($1, 4) + 0 } next }
/^(not )?ok [0-9]+/ && / # (SKIP|skip)/ {
	results++
	name = $0; sub(/^(not )?ok [0-9]+ /, "", name); sub(/ # (SKIP|skip).*/, "", name)
	why = $0; sub(/.* # (SKIP|skip) ?/, "", why)
	if (skip_allowed(set, name, why)) { skipped++; print "ktap: SKIP " bin ": " $0 " (allowed)" }
	else fail("unexpected SKIP " bin ": " $0 " (not in tests/allowed-skips)")
	next
}
/^not ok [0-9]+/ {
	results++
	failed++; binfail = 1; print "ktap: FAIL " bin ": " $0 diagnosis(); next
}
/^ok [0-9]+/ { results++; passed++; next }
END {
	finish_binary()
	if (!done) fail("the guest did not finish (crash, panic or timeout)")
	if (binaries == 0) fail("no test binary ran")
	for (b in expect)
		if (!(b in ran))
			fail(sprintf("%s did not run: the manifest (%s) plans %d tests", b, set, expect[b]))
	printf "%s%d passed, %d failed, %d skipped\n", label, passed, failed, skipped
	exit(failed ? 1 : 0)
}' "$out"
