# SPDX-License-Identifier: GPL-2.0-only
# Counting for the host-side check scripts (sourced): one "ok - NAME" or
# "not ok - NAME" line per check, and the closing "N passed, N failed".
pass=0 failn=0

# result STATUS NAME [DETAILS]: count a check that ended with STATUS (0 = ok);
# DETAILS are shown under a failure.
result() {
	if [ "$1" = 0 ]; then
		pass=$((pass + 1))
		echo "ok - $2"
	else
		failn=$((failn + 1))
		echo "not ok - $2"
		[ -z "${3:-}" ] || sed 's/^/#   /' <<<"$3"
	fi
}

# checks_done: the closing line; fails if any check failed.
checks_done() {
	echo "$pass passed, $failn failed"
	[ "$failn" = 0 ]
}
