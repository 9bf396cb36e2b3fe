#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make check: every test of the project, in order, each step's own
# "N passed, N failed" line summed into one. A step that ends without such a
# line, or exits non-zero, counts as failed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logdir=results/check
mkdir -p "$logdir"

steps=(
	"unit:make unit"
	"package-check:make package-check"
	"guest-tests:make guest-tests"
	"compile-matrix:make compile-matrix"
	"packaging-chroot:make packaging-chroot"
	"vmtest-matrix:make vmtest-matrix"
)

total_pass=0
total_fail=0
table=()
t_start=$(date +%s)

if ! make --no-print-directory host-deps; then
	echo "check: installing host packages failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

for step in "${steps[@]}"; do
	name=${step%%:*}
	cmd=${step#*:}
	log=$logdir/$name.log
	echo "=== $name: $cmd"
	t0=$(date +%s)
	$cmd 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$(( $(date +%s) - t0 ))
	counts=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1 |
		sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2 \3/')
	pass=0
	fail=0
	[ -n "$counts" ] && read -r pass fail <<<"$counts"
	# A step that failed without reporting a failed test still failed.
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	table+=("$(printf '%-16s %6s %6s %6ss  exit %s' "$name" "$pass" "$fail" "$secs" "$rc")")
done

echo
echo "=== make check summary ($(( $(date +%s) - t_start ))s, logs in $logdir/)"
printf '%-16s %6s %6s %7s\n' step passed failed time
printf '%s\n' "${table[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
