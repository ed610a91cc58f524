# Shared by the runners' awk programs (gawk -f allowed-skips.awk -e ...):
# skip_allowed(set, test, message) is 1 if tests/allowed-skips, given as
# -v allowed=FILE, lists the skip of TEST in SET with a reason matching
# its message.
function trim(s) {
	sub(/^[ \t]+/, "", s)
	sub(/[ \t]+$/, "", s)
	return s
}

function load_allowed(   line, f, n) {
	if (allowed_loaded++)
		return
	while ((getline line < allowed) > 0) {
		if (line ~ /^[ \t]*(#|$)/)
			continue
		if (split(line, f, "|") != 4) {
			printf "allowed-skips: bad line: %s\n", line > "/dev/stderr"
			exit 2
		}
		n = ++n_allowed
		a_set[n] = trim(f[1]); a_test[n] = trim(f[2]); a_msg[n] = trim(f[3])
	}
	close(allowed)
}

function skip_allowed(set, test, message,   i) {
	load_allowed()
	for (i = 1; i <= n_allowed; i++)
		if (a_set[i] == set && a_test[i] == test && message ~ a_msg[i])
			return 1
	return 0
}
