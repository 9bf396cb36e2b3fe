#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# phase-table.sh RUN_DIR: the wall-clock time of each phase of one guest run,
# from RUN_DIR/timeline. Every line there is "EPOCH EVENT", stamped by the
# host when it happened or when the guest's line arrived (within a second):
# run-suite.sh's own steps, QEMU's starts and exits (launch.sh), and the
# guest's "# apex-vmtest:" lines: stage starts and exits, "phase NAME"
# (tap_phase in a stage script) and "boot ends: TARGET" (run-stages).
# A phase lasts from its event to the next one.
set -euo pipefail
timeline=${1:?usage: phase-table.sh RUN_DIR}/timeline
[ -s "$timeline" ] || { echo "no timeline in $1" >&2; exit 1; }

awk '
function close_phase(t) {
	if (name != "" && t >= since) {
		n++
		names[n] = name
		starts[n] = since - t0
		secs[n] = t - since
	}
	name = ""
}
function open_phase(t, what) {
	close_phase(t)
	name = what
	since = t
}
{
	t = $1
	ev = $0
	sub(/^[0-9]+ /, "", ev)
	if (NR == 1)
		t0 = t
	last = t
}
ev ~ /^request / { next }		# a request is not a phase boundary
ev == "image" || ev == "compile cache" || ev == "test disk" ||
	ev == "waiting for a guest slot" || ev == "host checks" { open_phase(t, ev); next }
ev == "qemu start" {
	boots++
	open_phase(t, boots == 1 ? "boot" : "cold boot (power cycle)")
	next
}
ev ~ /^qemu exit/ { open_phase(t, "QEMU exit, apexsims ended"); next }
ev ~ /^qemu killed/ { close_phase(t); next }
ev ~ /^stage[0-9]+ start/ {
	stage = $2
	open_phase(t, stage ": start")
	next
}
ev ~ /^phase / { open_phase(t, stage ": " substr(ev, 7)); next }
ev ~ /^stage[0-9]+ exit/ { open_phase(t, stage ": end"); next }
ev ~ /^boot ends: / {
	target = substr(ev, 12)
	if (target == "reboot") what = "reboot"
	else if (target == "kexec") what = "kexec into the new kernel"
	else if (target == "poweroff") what = "power off"
	else what = target
	open_phase(t, what)
	next
}
ev == "end" { close_phase(t); next }
END {
	close_phase(last)
	printf "%-52s %6s %6s\n", "phase", "at", "secs"
	for (i = 1; i <= n; i++)
		if (secs[i] > 0 || names[i] !~ /: (start|end)$/)
			printf "%-52s %6d %6d\n", names[i], starts[i], secs[i]
	printf "%-52s %6s %6d\n", "total", "", last - t0
}' "$timeline"
