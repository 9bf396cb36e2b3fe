#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# run-matrix.sh SUITE...: guest runs of several suites (make vmtest-matrix).
# The name debug-kernel stands for the guest on the debug kernel
# (vmtest/debug-kernel/run.sh), which takes a slot like the others.
#
# Builds apexsim, the guest tests and this run's own copy of the packages
# once, starts every suite's image build at once (cached ones are found in a
# second; on a fresh machine the roots are built side by side), and boots
# the guests once every image is ready, each when one of APEX_JOBS guest
# slots is free. Suites that took longest last time go first. A guest
# that must wait for a slot is prepared meanwhile (its compile cache and
# test disk, vmtest/run-suite.sh): while images are built, every ready
# guest at once; later one at a time and only once the running guests
# have booted, so that it boots the moment a slot frees. Each
# guest logs to its own results directory (run.log there holds what
# run-suite.sh printed); here one line per guest event, then for each guest
# its result and its time per phase, and a table: suite, kernel, dkms,
# passed, failed, seconds queued (waiting for image and slot), seconds run.
#
# Environment:
#   APEX_JOBS   guests at once (default 3)
#   APEX_GUEST_NICE  nice level of the guests once they boot (default 5)
#   APEX_SMP    vCPUs per guest (default: the host's cores / APEX_JOBS, 1 to 4)
# Measured on 2 cores (vmtest/qemu/README.md): three guests at once, so
# that they fill the cores while one waits (driver timeouts, reboots, a
# kexec), took make check from 3265 s to 2702 s. A starved guest once got
# its TSC rate wrong and hung; the guests are now told the rate
# (vmtest/qemu/launch.sh).
# Priorities: what the guests wait for (roots, images, the debug kernel,
# each guest's compile cache and test disk) runs at nice 0, ahead of the
# booted guests (APEX_GUEST_NICE), and the roots of the first guests ahead
# of the others' (nice 5). Each guest runs in a session of its own, whose
# group takes the guest's nice when it boots (lib/session-nice says why).
# The longest guest's slot is kept for it while its image is built, so
# that it boots first although the others were prepared before it: on a
# fresh machine that is the debug-kernel guest, whose kernel is built from
# source first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

[ $# -gt 0 ] || set -- bullseye bookworm trixie trixie-backports forky
jobs=${APEX_JOBS:-3}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || apex_die "APEX_JOBS must be a positive number, not '$jobs'"
guest_nice=${APEX_GUEST_NICE:-5}
[[ $guest_nice =~ ^[0-9]+$ ]] && [ "$guest_nice" -le 19 ] ||
	apex_die "APEX_GUEST_NICE must be a number from 0 to 19, not '$guest_nice'"
smp=$(($(nproc) / jobs))
[ "$smp" -ge 1 ] || smp=1
[ "$smp" -le 4 ] || smp=4
export APEX_SMP=${APEX_SMP:-$smp}
stamp=$(date +%Y%m%d-%H%M%S)
mkdir -p "$apex_top/results"
log=$apex_top/results/$stamp-matrix-build.log
# The guests' packages: their own copy, so that a `make deb` elsewhere (make
# check builds packages for its host checks meanwhile) cannot change them.
pkgs=$apex_top/build/vmtest-matrix

apex_build "$log" "matrix: building apexsim" make -C "$apex_top/vmtest/apexsim"
apex_build "$log" "matrix: building the guest tests" make -C "$apex_top/vmtest/guest"
for s in "$@"; do
	[ "$(apex_suite_arch "$s")" = arm64 ] || continue
	apex_build "$log" "matrix: building the guest tests for arm64" \
		"$here/arm64/guest-tests.sh" "$apex_top/build/guest-arm64"
	break
done
apex_build "$log" "matrix: building the package" "$apex_top/tests/build-deb.sh" \
	--outdir "$pkgs/deb"
apex_build "$log" "matrix: building the upgrade package" apex_upgrade_deb "$pkgs/deb-upgrade"

# Longest first, by the seconds each suite's guest ran last time; suites
# never timed keep their order, ahead of the timed ones.
durations=$apex_cache/guest-seconds
mkdir -p "$apex_cache"
touch "$durations"
mapfile -t order < <(
	i=0
	for s in "$@"; do
		secs=$(awk -v s="$s" '$1 == s { t = $2 } END { print t + 0 }' "$durations")
		[ "$secs" -gt 0 ] || secs=999999
		printf '%s %s %s\n' "$secs" "$i" "$s"
		i=$((i + 1))
	done | sort -k1,1nr -k2,2n | cut -d' ' -f3
)

declare -A run_of lane_pid image_pid image_rc queued_at started_at last_event
lanes=()	# started guests: being prepared, waiting for a slot, or running
pending=("${order[@]}")
done_suites=()

# stop_all: each guest is a process group of its own (start_guest), so its
# launch.sh, QEMU and apexsims stop with it.
stop_all() {
	local p
	for p in "${lane_pid[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || true
	done
	for p in "${image_pid[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap 'stop_all; exit 130' INT
trap 'stop_all; exit 143' TERM

# root_of SUITE: the root (vmtest/mkroot) SUITE's image is made from.
root_of() {
	if [ "$1" = debug-kernel ]; then echo bookworm; else echo "$1"; fi
}

# build_image SUITE: what SUITE's guest boots; for debug-kernel, its kernel
# (cached, or built from source) and the bookworm image.
build_image() {
	if [ "$1" = debug-kernel ]; then
		"$here/debug-kernel/build.sh" || return
	fi
	"$here/image/build-image.sh" "$(root_of "$1")"
}

# Every image at once; the trixie guest's extra kernel as well. The roots
# of the first APEX_JOBS guests are built ahead of the others' (a suite's
# root is built once, by whichever build takes its lock first).
declare -A first_roots
for s in "${order[@]:0:jobs}"; do
	first_roots[$(root_of "$s")]=1
done
for s in "${order[@]}"; do
	run_of[$s]=$apex_top/results/$stamp-$s
	mkdir -p "${run_of[$s]}"
	queued_at[$s]=$EPOCHSECONDS
	prio=5
	[ -z "${first_roots[$(root_of "$s")]:-}" ] || prio=0
	(
		renice -n "$prio" -p "$BASHPID" >/dev/null || true
		build_image "$s"
	) >"${run_of[$s]}/image.log" 2>&1 &
	image_pid[$s]=$!
	[ "$s" != trixie ] ||
		"$here/image/fetch-kernel.sh" trixie trixie-backports \
			>"${run_of[$s]}/kernel.log" 2>&1 &
done
plan="$jobs at a time with $APEX_SMP vCPUs each"
apex_stage "matrix: ${#order[@]} guests, $plan, in this order: ${order[*]}"

# check_image SUITE: set image to building, ready or failed (not in a
# $(subshell): only this shell can reap the build).
check_image() {
	local s=$1 rc=0
	if [ -n "${image_pid[$s]:-}" ]; then
		if kill -0 "${image_pid[$s]}" 2>/dev/null; then
			image=building
			return
		fi
		wait "${image_pid[$s]}" || rc=$?
		unset "image_pid[$s]"
		image_rc[$s]=$rc
	fi
	if [ "${image_rc[$s]}" = 0 ]; then image=ready; else image=failed; fi
}

# start_guest SUITE: in a session of its own, so that stop_all can stop it
# whole. run-suite.sh prepares the guest, then boots it once grant_slot has
# run, at nice APEX_GUEST_NICE.
start_guest() {
	local s=$1 run=("$here/run-suite.sh" "$1")
	[ "$s" != debug-kernel ] || run=("$here/debug-kernel/run.sh")
	started_at[$s]=$EPOCHSECONDS
	setsid env APEX_PREBUILT=1 APEX_RUN_DIR="${run_of[$s]}" APEX_GUEST_NICE="$guest_nice" \
		APEX_DEBS="$pkgs/deb" APEX_UPGRADE_DEBS="$pkgs/deb-upgrade" \
		APEX_SLOT="${run_of[$s]}/slot" apex_t0="${started_at[$s]}" \
		"${run[@]}" >"${run_of[$s]}/run.log" 2>&1 &
	lane_pid[$s]=$!
	lanes+=("$s")
	apex_stage "$s: guest started (logs: ${run_of[$s]})"
}

# grant_slot SUITE / has_slot SUITE: the file run-suite.sh waits for.
grant_slot() {
	touch "${run_of[$1]}/slot"
}

has_slot() {
	[ -e "${run_of[$1]}/slot" ]
}

# guest_event SUITE: set event to the last event of its timeline.
guest_event() {
	apex_last_line "${run_of[$1]}/timeline"
	event=${last_line#* }
}

# has_booted SUITE: its QEMU has started.
has_booted() {
	local lines=() line
	[ -f "${run_of[$1]}/timeline" ] || return 1
	mapfile -t lines <"${run_of[$1]}/timeline"
	for line in "${lines[@]}"; do
		[[ $line != *" qemu start" ]] || return 0
	done
	return 1
}

# may_prepare_early: a queued guest may be prepared now if no other queued
# guest is being prepared and every running guest has booted, so that the
# preparation does not delay a guest that holds a slot.
may_prepare_early() {
	local s event
	for s in "${lanes[@]}"; do
		if ! has_slot "$s"; then
			guest_event "$s"
			[ "$event" = "waiting for a guest slot" ] || return 1
		elif ! has_booted "$s"; then
			return 1
		fi
	done
}

# phase_secs SUITE PHASE: the seconds of PHASE in the guest's phase table.
phase_secs() {
	local phases=${run_of[$1]}/phases
	if [ -f "$phases" ]; then
		awk -v p="$2" 'index($0, p) == 1 { s += $NF } END { print s + 0 }' "$phases"
	else
		echo 0
	fi
}

# finish_guest SUITE: its result and phases here, its summary line kept.
finish_guest() {
	local s=$1 run=${run_of[$1]} secs
	wait "${lane_pid[$s]}" || true
	unset "lane_pid[$s]"
	secs=$((EPOCHSECONDS - started_at[$s] - $(phase_secs "$s" "waiting for a guest slot")))
	if [ ! -f "$run/summary" ]; then
		echo "$s ? ? 0 1 $secs" >"$run/summary"
		apex_stage "$s: the guest run ended without a result (log: $run/run.log)"
		tail -n 20 "$run/run.log" >&2 || true
	fi
	read -r _ _ _ passed failed _ <"$run/summary"
	apex_stage "$s: done in ${secs}s: $passed passed, $failed failed"
	grep '^  FAIL' "$run/checks" 2>/dev/null | head -n 20 >&2 || true
	# The next matrix orders by this, so only a run that went through: a
	# guest cut short (a failure, or make check interrupted) would be
	# queued last next time, as a debug-kernel guest stopped after 42 s
	# was, and its 13 minutes then set the end of the run.
	if [ "$failed" = 0 ] && [ "$passed" -gt 0 ]; then
		{ grep -v "^$s " "$durations" || true; echo "$s $secs"; } >"$durations.tmp"
		mv "$durations.tmp" "$durations"
	fi
	done_suites+=("$s")
}

# report_events: a line for each guest event and each image build step
# (mmdebstrap's progress on a fresh machine) since the last call.
report_events() {
	local s ev event
	for s in "${!image_pid[@]}"; do
		apex_last_line "${run_of[$s]}/image.log"
		ev=$last_line
		[[ ! $ev =~ ^\[\ *[0-9]*s\]\ (.*)$ ]] || ev=${BASH_REMATCH[1]}
		[ -n "$ev" ] && [ "$ev" != "${last_event[$s]:-}" ] || continue
		last_event[$s]=$ev
		apex_stage "image: $ev"
	done
	for s in "${lanes[@]}"; do
		guest_event "$s"
		[ -n "$event" ] && [ "$event" != "${last_event[$s]:-}" ] || continue
		last_event[$s]=$event
		apex_stage "$s: $event"
	done
}

while [ ${#pending[@]} -gt 0 ] || [ ${#lanes[@]} -gt 0 ]; do
	still=()
	for s in "${lanes[@]}"; do
		if kill -0 "${lane_pid[$s]}" 2>/dev/null; then
			still+=("$s")
		else
			finish_guest "$s"
		fi
	done
	lanes=("${still[@]}")
	# While any image is still being built (a fresh machine's roots, the
	# debug kernel), no guest boots: a TCG guest beside those builds took
	# 30-40 % more CPU for the same run than beside other guests, and
	# the two cores are the limit. The ready guests are prepared meanwhile.
	building=0
	for s in "${pending[@]}"; do
		check_image "$s"
		[ "$image" != building ] || building=$((building + 1))
	done
	if [ "$building" -gt 0 ] && [ -z "${gate_noted:-}" ]; then
		gate_noted=1
		apex_stage "matrix: images are being built; guests boot when all are ready"
	fi
	holding=0
	for s in "${lanes[@]}"; do
		! has_slot "$s" || holding=$((holding + 1))
	done
	# The longest guest's slot waits while its image is built (pending
	# keeps the order of order, so it comes first while it waits).
	reserved=0
	[ "${pending[0]:-}" != "${order[0]}" ] || reserved=1
	for s in "${order[@]}"; do
		[ "$building" -eq 0 ] && [ -n "${lane_pid[$s]:-}" ] && ! has_slot "$s" &&
			[ $((holding + reserved)) -lt "$jobs" ] || continue
		grant_slot "$s"
		holding=$((holding + 1))
	done
	waiting=()
	for s in "${pending[@]}"; do
		free=$((jobs - holding))
		[ "$s" = "${order[0]}" ] || free=$((free - reserved))
		[ "$building" -eq 0 ] || free=0
		check_image "$s"
		if [ "$image" = failed ]; then
			why="counted as one failure (log: ${run_of[$s]}/image.log)"
			apex_stage "$s: no image, $why"
			tail -n 10 "${run_of[$s]}/image.log" >&2 || true
			echo "$s ? ? 0 1 0" >"${run_of[$s]}/summary"
			started_at[$s]=$EPOCHSECONDS
			done_suites+=("$s")
		elif [ "$image" = ready ] && [ "$free" -gt 0 ]; then
			start_guest "$s"
			grant_slot "$s"
			holding=$((holding + 1))
		elif [ "$image" = ready ] && { [ "$building" -gt 0 ] || may_prepare_early; }; then
			start_guest "$s"
		else
			waiting+=("$s")
		fi
	done
	pending=("${waiting[@]}")
	report_events
	apex_sleep 1
done
trap - INT TERM

echo
for s in "${order[@]}"; do
	echo "=== $s: $(tail -n 1 "${run_of[$s]}/run.log" 2>/dev/null)"
	[ ! -f "${run_of[$s]}/phases" ] || cat "${run_of[$s]}/phases"
done
echo
summary=$apex_top/results/$stamp-matrix-summary
{
	printf '%-18s %-24s %-18s %7s %7s %7s %7s\n' suite kernel dkms passed failed queued run
	for s in "${order[@]}"; do
		read -r suite kernel dkms passed failed _ <"${run_of[$s]}/summary"
		wait_secs=$(phase_secs "$s" "waiting for a guest slot")
		printf '%-18s %-24s %-18s %7s %7s %7s %7s\n' "$suite" "$kernel" "$dkms" "$passed" \
			"$failed" "$((started_at[$s] - queued_at[$s] + wait_secs))" \
			"$(($(phase_secs "$s" total) - wait_secs))"
	done
} | tee "$summary"
total_pass=0 total_fail=0
for s in "${order[@]}"; do
	read -r _ _ _ passed failed _ <"${run_of[$s]}/summary"
	total_pass=$((total_pass + passed))
	total_fail=$((total_fail + failed))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ] && [ "$total_pass" -gt 0 ]
