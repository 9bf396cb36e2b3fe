#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# run-matrix.sh SUITE...: guest runs of several suites (make vmtest-matrix).
# Builds apexsim, the guest tests, the package and every suite's image once,
# then boots the guests one after another (two cores do not fit two TCG
# guests) and prints a table: suite, kernel, dkms, passed, failed, seconds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

[ $# -gt 0 ] || set -- bullseye bookworm trixie trixie-backports forky
mkdir -p "$apex_top/results"
log=$apex_top/results/$(date +%Y%m%d-%H%M%S)-matrix-build.log

apex_build "$log" "matrix: building apexsim" make -C "$apex_top/vmtest/apexsim"
apex_build "$log" "matrix: building the guest tests" make -C "$apex_top/vmtest/guest"
apex_build "$log" "matrix: building the package" make -C "$apex_top" deb
apex_build "$log" "matrix: building the upgrade package" apex_upgrade_deb
# A suite whose image cannot be built fails alone; the others still run.
declare -A no_image
for suite in "$@"; do
	"$here/image/build-image.sh" "$suite" >/dev/null || no_image[$suite]=1
done

summaries=()
for suite in "$@"; do
	before=$(date +%s)
	run=$apex_top/results/$(date +%Y%m%d-%H%M%S)-$suite
	if [ -z "${no_image[$suite]:-}" ]; then
		APEX_PREBUILT=1 APEX_RUN_DIR=$run "$here/run-suite.sh" "$suite" || true
	else
		apex_stage "$suite: no image, counted as one failure"
	fi
	if [ -f "$run/summary" ]; then
		summaries+=("$(cat "$run/summary")")
	else
		summaries+=("$suite ? ? 0 1 $(($(date +%s) - before))")
	fi
done

echo
printf '%-18s %-24s %-18s %7s %7s %8s\n' suite kernel dkms passed failed seconds
total_pass=0 total_fail=0
for line in "${summaries[@]}"; do
	read -r suite kernel dkms passed failed seconds <<<"$line"
	printf '%-18s %-24s %-18s %7s %7s %8s\n' "$suite" "$kernel" "$dkms" "$passed" "$failed" "$seconds"
	total_pass=$((total_pass + passed))
	total_fail=$((total_fail + failed))
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ] && [ "$total_pass" -gt 0 ]
