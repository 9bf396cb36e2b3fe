#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The guest tests on the debug kernel (KASAN, lockdep, kmemleak, DMA-API
# debugging, UBSAN; vmtest/debug-kernel/), run by that guest's /init in the
# bookworm image. No package install: the host built the modules for this
# kernel, and they come with the package's udev rule and modprobe.d file
# on the test disk under debug-kernel/. Then the device tests of stages 1
# to 3, the fuzzer, 1000 unload/load cycles with a test-engine copy each,
# and a kmemleak scan. Any kernel report fails the run (here and in the
# host's check of the console). TAP on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=thermal.sh
source "$here/thermal.sh"
# shellcheck source=tunables.sh
source "$here/tunables.sh"
# shellcheck source=faults.sh
source "$here/faults.sh"
# shellcheck source=removal.sh
source "$here/removal.sh"
# shellcheck source=restore.sh
source "$here/restore.sh"

tap_diag "debug-kernel stage on $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"

# --- what the package would have installed, and udev ---------------------------
tap_phase "set-up: modules, udev rule, users"
install_driver() {
	local dir=/lib/modules/$(uname -r)/updates files=$APEX_TESTS/../debug-kernel
	mkdir -p "$dir" &&
		cp "$files/gasket.ko" "$files/apex.ko" "$dir/" &&
		depmod -a &&
		cp "$files/60-apex.rules" /lib/udev/rules.d/ &&
		cp "$files/apex.conf" /lib/modprobe.d/ &&
		{ getent group apex >/dev/null || groupadd --system apex; } &&
		{ id tpuuser >/dev/null 2>&1 || useradd -m tpuuser; } &&
		{ id otheruser >/dev/null 2>&1 || useradd -m otheruser; } &&
		usermod -aG apex tpuuser
}
export -f install_driver
tap_check "modules, udev rule and modprobe.d file installed, group apex, users" install_driver
# udevd loads the modules for the chips, as at a boot. Only the PCI
# devices are replayed: the rest of the machine is not under test, and
# under this kernel each event costs seconds.
start_udev() {
	/lib/systemd/systemd-udevd --daemon &&
		udevadm trigger --action=add --subsystem-match=pci &&
		udevadm settle -t 120
}
export -f start_udev
tap_check -t 180 "systemd-udevd started, devices triggered" start_udev
tap_check "apex and gasket loaded for the present chips by udev" wait_until 60 modules_loaded
have_dev=0
tap_check "$APEX_DEV exists, root:apex 0660" wait_until 60 node_ok
tap_passed && have_dev=1
tap_check "sysfs attributes of apex_0 read sensibly" sysfs_sane
tap_check "tpuuser (group apex) opens $APEX_DEV read-write" open_as tpuuser rw ok
tap_check "otheruser gets EACCES opening $APEX_DEV read-write" open_as otheruser rw EACCES

# --- stage1's device tests ----------------------------------------------------------
tap_phase "ioctl, mmap, test engine, ownership, hostile callers, fuzzer"
# The debug kernel runs them 4 to 10 times slower than the package guests.
if [ "$have_dev" = 1 ]; then
	run_device_programs 3
else
	tap_deps_fail "$APEX_DEV exists" "${APEX_DEVICE_PROGRAMS[@]}"
fi

# --- stage2's device tests ----------------------------------------------------------
if [ "$have_dev" = 1 ]; then
	tap_phase "power and clock tunables"
	tap_prog -t 600 apex-power "$here/apex-power" "$APEX_DEV"
	tap_phase thermal
	run_thermal_checks
	tap_phase "modprobe.d tunables"
	run_modprobe_d_checks
	tap_phase "fault injection"
	run_fault_checks
else
	tap_deps_fail "$APEX_DEV exists" "power and clock tunables" "thermal" \
		"modprobe.d tunables" "faults"
fi

# --- unload/load cycles (1000), each with a test-engine copy ----------------------------
# The host may ask for fewer (make vmtest-debug-kernel APEX_DEBUG_CYCLES=N).
# The first 300 run as on any machine, with systemd-udevd handling the
# uevents of every probe and removal (its sysfs reads race them); the rest
# without it, for the leaks and references they are there to find: under
# TCG udevd's work made a cycle cost 707 ms instead of 513 (150 cycles each,
# two guests side by side, 2026-12-07).
cycles=$(cat "$APEX_TESTS/../debug-kernel/cycles")
with_udevd=$((cycles < 300 ? cycles : 300))
tap_phase "unload and load x$cycles"
# Chip 0 only: the driver's probe and removal cost most of a cycle on this
# kernel, and the second chip's are tested before and after.
chip1=/sys/bus/pci/devices/$(lspci -D -n -d "$APEX_PCI_ID" | awk 'NR == 2 { print $1 }')
mods=/lib/modules/$(uname -r)/updates
# run_cycles N TAG: N cycles of apex-cycles, as TAP lines tagged TAG.
run_cycles() {
	tap_prog -t $((300 + 4 * $1)) "$2" "$here/apex-cycles" "$1" "$mods/gasket.ko" \
		"$mods/apex.ko" "$APEX_DEV"
}
if modprobe -r apex gasket && echo none >"$chip1/driver_override"; then
	run_cycles "$with_udevd" "apex-cycles, udevd running"
	if [ "$cycles" -gt "$with_udevd" ]; then
		tap_check "systemd-udevd stopped for the remaining cycles" udevadm control --exit
		tap_passed && run_cycles $((cycles - with_udevd)) "apex-cycles, no udevd"
		tap_check "systemd-udevd started again" /lib/systemd/systemd-udevd --daemon
	fi
else
	tap_dep_fail "$cycles load/unload cycles" "modprobe -r apex gasket, chip 1 set aside"
fi
echo >"$chip1/driver_override" || true
both_chips_back() {
	reload_modules && test -c /dev/apex_1
}
export -f both_chips_back
tap_check -t 120 "modprobe apex after the cycles: both chips back, $APEX_DEV root:apex 0660" \
	both_chips_back

# --- stage3's device tests ----------------------------------------------------------
tap_phase "unbind with a live session"
run_unbind_checks
tap_phase "removal from the bus with a live session"
run_bus_removal_checks
tap_phase "reset with a live session"
run_restore_checks
tap_phase "chips that vanish"
run_removal_checks

# --- leaks ----------------------------------------------------------------------------
tap_phase kmemleak
# Two scans: kmemleak reports an object only once it has looked
# unreferenced in two of them.
leaks() {
	echo scan >/sys/kernel/debug/kmemleak &&
		sleep 5 &&
		echo scan >/sys/kernel/debug/kmemleak || fail "kmemleak scan failed"
	[ -z "$(cat /sys/kernel/debug/kmemleak)" ] ||
		fail "$(head -n 60 /sys/kernel/debug/kmemleak)"
}
export -f leaks
tap_check -t 600 -v "kmemleak: no unreferenced object after two scans" leaks
tap_check "dmesg: no WARNING, BUG, Oops, lockdep, KASAN, UBSAN, DMA-API or kmemleak report" \
	dmesg_clean
tap_end
