#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# check-run.sh RUN_DIR [GUEST_STATUS [STAGES]]: judge one guest run from its
# files.
#   results.tap  the TAP of the guest's STAGES stages (default 4:
#                vmtest/guest/stage1..4; the debug-kernel guest has one),
#                each framed by run-stages' "# apex-vmtest: stageN start" /
#                "... exit STATUS" lines
#   console.log  the serial console, scanned by console-check.sh
#   apexsim.status  how each apexsim ended and how it should have (launch.sh):
#                exit 0, or SIGKILL where the guest asked the host for a kill
# GUEST_STATUS is launch.sh's exit status (124 = timed out).
#
# Prints one line per test (PASS/FAIL/SKIP), then "N passed, N failed", and
# writes the counts to RUN_DIR/counts. A skipped test is not a pass. Host
# checks (a stage's TAP complete, the console clean, the guest finished)
# count like tests. Exit status 1 if anything failed or nothing passed.
set -euo pipefail

run_dir=${1:?usage: check-run.sh RUN_DIR [GUEST_STATUS [STAGES]]}
guest_status=${2:-0}
tap=$run_dir/results.tap
console=$run_dir/console.log
[ -f "$tap" ] || : >"$tap"
# Every one of them must have run. In the package guests: install; after a
# reboot; (after kexec on trixie) up to the purge; the cold boot after the
# purge.
stages=${3:-4}

# One record per test and per stage check: "RESULT<TAB>WHERE<TAB>TEXT".
awk -v guest_status="$guest_status" -v stages="$stages" '
function finish(s,    n, i, missing) {
	if (!(s in started))
		return
	missing = ""
	for (i = 1; i <= plan[s]; i++)
		if (!((s, i) in seen))
			missing = missing " " i
	if (!(s in exited))
		why = "no exit line: the stage did not finish"
	else if (plan[s] == "")
		why = "no 1..N plan"
	else if (bailed[s])
		why = "Bail out!"
	else if (missing != "" || extra[s])
		why = sprintf("plan 1..%d, %d results, missing:%s", plan[s], count[s],
			missing == "" ? " none" : missing)
	else if (exited[s] != 0 && !failed[s])
		why = "exit status " exited[s] " with no failing test"
	else
		why = ""
	if (why == "")
		printf "PASS\thost\t%s TAP complete (%d tests)\n", s, plan[s]
	else
		printf "FAIL\thost\t%s TAP complete # %s\n", s, why
}
{ sub(/\r$/, "") }
/^# apex-vmtest: stage[0-9]+ start/ {
	stage = $3
	started[stage] = 1
	order[++nstages] = stage
	next
}
/^# apex-vmtest: stage[0-9]+ exit / {
	exited[$3] = $5
	next
}
stage == "" { next }
/^1\.\.[0-9]+/ {
	split($0, p, /\.\./)
	plan[stage] = p[2] + 0
	next
}
/^Bail out!/ { bailed[stage] = 1; next }
/^(not )?ok( |$)/ {
	ok = ($1 == "ok")
	num = ok ? $2 : $3
	text = $0
	sub(/^(not )?ok *[0-9]* *-? */, "", text)
	count[stage]++
	if ((stage, num) in seen || num + 0 < 1 || (plan[stage] != "" && num + 0 > plan[stage]))
		extra[stage] = 1
	seen[stage, num] = 1
	if (!ok || text ~ /# *[Tt][Oo][Dd][Oo]/) {
		result = "FAIL"
		failed[stage] = 1
	} else if (text ~ /# *[Ss][Kk][Ii][Pp]/)
		result = "SKIP"
	else
		result = "PASS"
	printf "%s\t%s %s\t%s\n", result, stage, num, text
}
END {
	for (i = 1; i <= nstages; i++)
		if (!done[order[i]]++)
			finish(order[i])
	for (s = 1; s <= stages; s++)
		if (!(("stage" s) in started))
			printf "FAIL\thost\tstage%d TAP complete # no output from stage%d\n", s, s
	if (guest_status == 124)
		printf "FAIL\thost\tguest powered off in time # killed at the timeout\n"
	else if (guest_status != 0)
		printf "FAIL\thost\tguest powered off in time # QEMU exited with status %s\n",
			guest_status
	else
		printf "PASS\thost\tguest powered off in time\n"
}' "$tap" >"$run_dir/checks"

# Each apexsim ended as it should: a crash or a kill nobody asked for is a
# failure, and so is a kill the guest asked for that did not happen.
sims=$run_dir/apexsim.status
if [ -f "$sims" ]; then
	while read -r n ended want; do
		if [ "$want" = signal:KILL ]; then
			what="apexsim $n killed with SIGKILL as the guest asked"
		else
			what="apexsim $n ended with $want"
		fi
		if [ "$ended" = "$want" ]; then
			printf 'PASS\thost\t%s\n' "$what"
		else
			printf 'FAIL\thost\t%s # it ended with %s (log: apexsim-%s.log)\n' \
				"$what" "$ended" "$n"
		fi
	done <"$sims" >>"$run_dir/checks"
	for n in $(sed -n 's/^# apex-vmtest: request kill-apexsim \([0-9]*\)\r*$/\1/p' "$tap"); do
		grep -q "^$n [^ ]* signal:KILL$" "$sims" ||
			printf 'FAIL\thost\tapexsim %s killed as the guest asked # %s\n' \
				"$n" "no kill in apexsim.status" >>"$run_dir/checks"
	done
else
	printf 'FAIL\thost\tapexsim exit statuses recorded # no %s\n' "$sims" >>"$run_dir/checks"
fi

problems=$("$(dirname "$0")/console-check.sh" "$console" || true)
console_test='console: no kernel WARNING/BUG/Oops/lockdep/UBSAN/GPF/DMA-API/kmemleak/Call Trace'
if [ -z "$problems" ]; then
	printf 'PASS\thost\t%s\n' "$console_test" >>"$run_dir/checks"
else
	printf 'FAIL\thost\t%s # %s\n' "$console_test" \
		"$(printf '%s\n' "$problems" | head -n 1)" >>"$run_dir/checks"
fi

awk -F '\t' '{ printf "  %-4s %-9s %s\n", $1, $2, $3 }' "$run_dir/checks"
if [ -n "$problems" ]; then
	echo "  kernel messages on the console:"
	printf '%s\n' "$problems" | head -n 20 | sed 's/^/    /'
fi
passed=$(grep -c '^PASS' "$run_dir/checks" || true)
failed=$(grep -c '^FAIL' "$run_dir/checks" || true)
skipped=$(grep -c '^SKIP' "$run_dir/checks" || true)
printf 'passed=%s failed=%s skipped=%s\n' "$passed" "$failed" "$skipped" >"$run_dir/counts"
[ "$skipped" -eq 0 ] || echo "($skipped skipped: not counted as passed)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
