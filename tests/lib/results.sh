# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The "PASS name" / "FAIL name: why" lines and the closing "N passed, N
# failed" of the host checks (doctor-check, probe-check, packaging-check).

passed=0
failed=0

# result NAME STATUS [WHY]: PASS if STATUS is 0, else FAIL with WHY (its
# later lines indented under the first).
result() {
	if [ "$2" = 0 ]; then
		echo "PASS $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1: $3" | sed '2,$s/^/    /'
		failed=$((failed + 1))
	fi
}

# results_end: the closing line; the status is non-zero if anything failed.
results_end() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
}
