#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# run-stages: run the test disk's stages in order, one or more per boot, and
# end the boot the way the last one asked. cloud-init's per-boot script
# runs this on every boot (vmtest/cloud-init/user-data); the state directory
# remembers which stages are done.
#
# Each stageN (N = 1..9, in order) runs once, its output framed by
# "# apex-vmtest: stageN start (kernel K)" and "# apex-vmtest: stageN exit
# STATUS" on the results port; the boot's last line there is "# apex-vmtest:
# boot ends: TARGET". A stage may write what comes next into
# $state/next:
#   continue  run the next stage in this boot
#   reboot    reboot (a reset: QEMU boots its -kernel again; not after an
#             apexsim has gone, ask the host for a power cycle instead)
#   kexec     boot the kernel the stage loaded with `kexec -l`
#   poweroff  stop here
# Without it: reboot if another stage is left, else power off.
#
# For the host-side test: APEX_STATE_DIR, APEX_RESULTS_PORT and
# APEX_SYSTEMCTL replace the state directory, the port and systemctl.
set -u
tests=$(cd "$(dirname "$0")" && pwd)
state=${APEX_STATE_DIR:-/var/lib/apex-vmtest}
port=${APEX_RESULTS_PORT:-/dev/virtio-ports/org.apex.results}
systemctl=${APEX_SYSTEMCTL:-systemctl}
mkdir -p "$state"

# The port appears with the virtio console driver, early but not at once.
i=0
while [ ! -e "$port" ] && [ "$i" -lt 30 ]; do
	sleep 1
	i=$((i + 1))
done

next_stage() {
	for n in 1 2 3 4 5 6 7 8 9; do
		if [ -x "$tests/stage$n" ] && [ ! -e "$state/stage$n.done" ]; then
			echo "stage$n"
			return
		fi
	done
}

target=
while [ -z "$target" ]; do
	stage=$(next_stage)
	if [ -z "$stage" ]; then
		target=poweroff
		break
	fi
	rm -f "$state/next"
	{
		echo "# apex-vmtest: $stage start (kernel $(uname -r))"
		"$tests/$stage"
		echo "# apex-vmtest: $stage exit $?"
	} >>"$port"
	touch "$state/$stage.done"
	next=$(cat "$state/next" 2>/dev/null) || next=
	case $next in
	continue) ;;
	reboot | kexec | poweroff) target=$next ;;
	'')
		if [ -n "$(next_stage)" ]; then target=reboot; else target=poweroff; fi
		;;
	*)
		msg="which is not continue, reboot, kexec or poweroff: powering off"
		echo "# apex-vmtest: $stage asked for '$next' next, $msg" >>"$port"
		target=poweroff
		;;
	esac
done
# The host times the boot's end from this line (vmtest/phase-table.sh).
echo "# apex-vmtest: boot ends: $target" >>"$port"
sync

# Straight to systemd: "systemctl reboot" would ask logind over D-Bus, which
# the image does not have.
exec "$systemctl" --no-block --job-mode=replace-irreversibly start "$target.target"
