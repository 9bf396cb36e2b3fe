#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make check: every test of the project, each step's own "N passed, N
# failed" line summed into one. A step that ends without such a line, or
# exits non-zero, counts as failed.
#
# The guests take most of the time, so they start as soon as what they share
# with the host steps is built (apexsim, the guest programs), and run in the
# background while the host steps, unit tests first, run here one after
# another; their progress is shown as "guests|" lines. Every step's output
# stays in results/check/STEP.log. The end: a table of steps (when each started and
# how long it ran, wall clock), the guests' table and the closing line.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logdir=results/check
mkdir -p "$logdir"
t_start=$(date +%s)
total_pass=0
total_fail=0
table=()

# record NAME RC T0: add the step's counts from its log to the totals.
record() {
	local name=$1 rc=$2 t0=$3 counts pass=0 fail=0
	counts=$(grep -E '^([A-Za-z-]+: )?[0-9]+ passed, [0-9]+ failed' "$logdir/$name.log" |
		tail -n 1 | sed -E 's/^([A-Za-z-]+: )?([0-9]+) passed, ([0-9]+) failed.*/\2 \3/')
	[ -z "$counts" ] || read -r pass fail <<<"$counts"
	# A step that failed without reporting a failed test still failed.
	if [ "$rc" -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	table+=("$(printf '%-16s %6s %6s %7s %7s  exit %s' "$name" "$pass" "$fail" \
		"$((t0 - t_start))" "$(($(date +%s) - t0))" "$rc")")
}

# stop SIGNAL_EXIT: a TERM or INT stops the running step and the guests,
# each a process group of its own, with every QEMU and apexsim in them.
step_pid=
guests_pid=
stop() {
	local p
	for p in $step_pid $guests_pid; do
		kill -TERM -- "-$p" 2>/dev/null
	done
	wait
	exit "$1"
}
trap 'stop 143' TERM
trap 'stop 130' INT

# run_step NAME CMD...: one host step, waited for (a signal's trap runs at
# once, not after the step).
run_step() {
	local name=$1 t0 rc=0
	shift
	echo "=== $name: $*"
	t0=$(date +%s)
	setsid bash -c 'set -o pipefail; log=$1; shift; "$@" 2>&1 | tee "$log"' \
		run_step "$logdir/$name.log" "$@" &
	step_pid=$!
	wait "$step_pid" || rc=$?
	step_pid=
	record "$name" "$rc" "$t0"
}

if ! make --no-print-directory host-deps; then
	echo "check: installing host packages failed" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# What the guests share with the host steps (apexsim, the guest programs)
# is built first, so that the guests can start at once; a failed build
# fails the steps that need it.
make --no-print-directory -C vmtest/apexsim >/dev/null &&
	make --no-print-directory -C vmtest/guest >/dev/null ||
	echo "check: building apexsim or the guest programs failed" >&2

# The guests, in the background (their own package copies: the host steps
# below rebuild build/deb). The debug-kernel guest makes its 1000 module
# load/unload cycles here too (APEX_DEBUG_CYCLES=N for fewer).
debug_cycles=${APEX_DEBUG_CYCLES:-1000}
guests_log=$logdir/vmtest-matrix.log
guests_t0=$(date +%s)
echo "=== vmtest-matrix: make vmtest-matrix (in the background, log: $guests_log)"
setsid env APEX_DEBUG_CYCLES="$debug_cycles" make --no-print-directory vmtest-matrix \
	>"$guests_log" 2>&1 &
guests_pid=$!
tail -n +1 -F --pid="$guests_pid" "$guests_log" 2>/dev/null | sed -u 's/^/guests| /' &
tail_pid=$!

# Beside the guests, which take longest, these host steps yield the cores:
# each runs in a session of its own (run_step), with the session's nice.
host_nice=${APEX_HOST_NICE:-5}
niced=("$top/vmtest/lib/session-nice" "$host_nice")
run_step unit "${niced[@]}" make --no-print-directory unit
run_step probe-check "${niced[@]}" make --no-print-directory probe-check
run_step guest-tests "${niced[@]}" make --no-print-directory guest-tests
run_step package-check "${niced[@]}" make --no-print-directory package-check
run_step compile-matrix "${niced[@]}" make --no-print-directory compile-matrix
run_step packaging-chroot "${niced[@]}" make --no-print-directory packaging-chroot \
	PACKAGES_BUILT=1

guests_rc=0
wait "$guests_pid" || guests_rc=$?
guests_pid=
trap - TERM INT
wait "$tail_pid" 2>/dev/null
record vmtest-matrix "$guests_rc" "$guests_t0"

echo
echo "=== make check summary ($(($(date +%s) - t_start))s wall clock, logs in $logdir/)"
printf '%-16s %6s %6s %7s %7s\n' step passed failed "at (s)" "secs"
printf '%s\n' "${table[@]}"
echo
echo "guests (queued: seconds waiting for an image and a free slot; run: the rest, preparation and boot to verdict)"
sed -n '/^suite  *kernel  *dkms/,/^[0-9]* passed, [0-9]* failed$/p' "$guests_log" | sed '$d'
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
