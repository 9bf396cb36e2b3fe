# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Chips that vanish, for stage 2 (sourced after lib.sh), run just before the
# purge because the chips stay dead. Chip 1 is unplugged through its
# control channel (apexsim `remove`); then the host kills chip 0's apexsim
# with SIGKILL, asked for by a "# apex-vmtest: request kill-apexsim 0" line
# on the results port (vmtest/qemu/README.md). Each must end in a clean
# error -- status DEAD, an open failing with ENODEV at once (the chip reads
# all ones), a probe that fails and says so -- never a hang or a kernel
# warning, and a chip must not be affected by the other one's removal.

# node_attr NODE ATTR: a sysfs attribute of /dev/NODE.
node_attr() {
	cat "/sys/class/apex/$1/$2"
}

node_is() {
	expect_eq "$1 status" "$(node_attr "$1" status)" "$2"
}

# node_is_chip N: apex_N is the chip apexsim N serves (same unique id).
node_is_chip() {
	local sim
	sim=$(ctl -d "$1" get unique_id) || return 1
	expect_eq "apex_$1 unique_id" "ok $(node_attr "apex_$1" unique_id)" "$sim"
}

# two_chips: both nodes, each with its by-path link, each its own apexsim.
two_chips() {
	local n
	for n in 0 1; do
		[ -c "/dev/apex_$n" ] || fail "/dev/apex_$n is missing"
		expect_eq "stat /dev/apex_$n" "$(stat -c '%U:%G %a' "/dev/apex_$n")" \
			"root:apex 660"
		by_path_link "$(node_attr "apex_$n" pci_address)" "/dev/apex_$n"
		node_is_chip "$n"
	done
	[ "$(lspci -n -d "$APEX_PCI_ID" | wc -l)" = 2 ] ||
		fail "lspci: $(lspci -nn -d "$APEX_PCI_ID")"
}

# chip_gone N NODE MARK: chip N vanished: NODE turns DEAD at once, an open
# fails with ENODEV without waiting out the reset timeout, and the kernel
# names the chip that does not answer.
chip_gone() {
	local addr
	addr=$(node_attr "$2" pci_address)
	wait_until 30 node_is "$2" DEAD || node_is "$2" DEAD
	"$APEX_TESTS/apex-open" "/dev/$2" rw ENODEV
	node_is "$2" DEAD
	dmesg_logged "$3" "$addr: .*the chip does not answer \\(reads all ones\\)"
}

remove_chip1() {
	kmsg_mark remove
	expect_eq "apexsim 1: remove" "$(ctl -d 1 remove)" ok
	expect_eq "apexsim 1: get removed" "$(ctl -d 1 get removed)" "ok 1"
	chip_gone 1 apex_1 remove
}

# The other chip did not notice: its own apexsim, a full session, a copy.
chip0_unaffected() {
	expect_eq "apexsim 0: get removed" "$(ctl -d 0 get removed)" "ok 0"
	node_is apex_0 ALIVE
	"$APEX_TESTS/apex-demo" /dev/apex_0 >/dev/null
	node_is apex_0 ALIVE
}

# ctl_port_closed N: the host side of chip N's control port has closed,
# as it does when apexsim N exits (virtio_console's view of the port).
ctl_port_closed() {
	local port
	for port in /sys/kernel/debug/virtio-ports/*; do
		grep -qx "name: org.apex.ctl.$1" "$port" || continue
		grep -qx "host_connected: 0" "$port"
		return
	done
	return 1
}

# killed_chip0: the host has been asked to kill apexsim 0 (no control
# channel is left to ask it anything). Chip 0 is left alone until apexsim 0
# is gone: QEMU 11.1's vfio-user client can abort when its server dies with
# a request in flight (vmtest/apexsim/README.md), and that is QEMU's
# failure, not one this test is after.
killed_chip0() {
	kmsg_mark kill
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	wait_until 60 ctl_port_closed 0 || fail "the control port of apexsim 0 is still open"
	wait_until 60 node_is apex_0 DEAD || node_is apex_0 DEAD
	chip_gone 0 apex_0 kill
}

unload_dead() {
	modprobe -r apex gasket || fail "modprobe -r apex gasket failed"
	! module_loaded apex || fail "apex still loaded"
	! module_loaded gasket || fail "gasket still loaded"
	! compgen -G '/dev/apex_*' >/dev/null || fail "nodes left: $(ls /dev/apex_*)"
}

# reprobe_dead ADDR...: loading apex again probes none of the dead chips,
# each probe fails with a kernel message naming the chip.
reprobe_dead() {
	local addr
	kmsg_mark reprobe
	modprobe apex || fail "modprobe apex failed"
	udevadm settle -t 30 || true
	module_loaded apex || fail "apex is not loaded"
	! compgen -G '/dev/apex_*' >/dev/null || fail "nodes of dead chips: $(ls /dev/apex_*)"
	! compgen -G '/sys/class/apex/apex_*' >/dev/null ||
		fail "class devices of dead chips: $(ls /sys/class/apex/)"
	for addr in "$@"; do
		[ ! -e "/sys/bus/pci/devices/$addr/driver" ] || fail "$addr is bound to a driver"
		dmesg_logged reprobe "$addr: .*(does not answer|failed|error)"
	done
}

# apex0_back ADDR: apex_0 is the chip at ADDR again, working and empty.
apex0_back() {
	udevadm settle -t 30 || true
	wait_until 20 test -c /dev/apex_0 || fail "/dev/apex_0 did not come back"
	expect_eq "apex_0 pci_address" "$(node_attr apex_0 pci_address)" "$1"
	node_ok
	node_is apex_0 ALIVE
	"$APEX_TESTS/apex-demo" /dev/apex_0 >/dev/null || fail "apex-demo failed on apex_0"
	expect_eq "apex_0 node_0_num_mapped_pages" \
		"$(node_attr apex_0 node_0_num_mapped_pages)" 0
}

# rebind_chip ADDR: after the unbind with a live session (apex-unbind),
# binding the driver again gives a working, empty apex_0.
rebind_chip() {
	[ ! -e "/sys/bus/pci/devices/$1/driver" ] || fail "$1 is still bound"
	echo "$1" >/sys/bus/pci/drivers/apex/bind || fail "bind $1 failed"
	apex0_back "$1"
}

# rescan_chip ADDR: after the removal from the bus with a live session
# (apex-unbind --remove), a rescan of the bus finds the chip again and
# gives a working, empty apex_0.
rescan_chip() {
	[ ! -e "/sys/bus/pci/devices/$1" ] || fail "$1 is still on the bus"
	echo 1 >/sys/bus/pci/rescan || fail "echo 1 > /sys/bus/pci/rescan failed"
	wait_until 30 test -e "/sys/bus/pci/devices/$1/driver" ||
		fail "no driver bound to $1 30 s after the rescan"
	apex0_back "$1"
}

# reload_after_unbind: both modules unload and come back with every chip.
reload_after_unbind() {
	local chips
	chips=$(lspci -n -d "$APEX_PCI_ID" | wc -l)
	reload_modules
	wait_until 20 test "$(compgen -G '/dev/apex_*' | wc -l)" = "$chips" ||
		fail "nodes: $(ls /dev/apex_*), chips: $chips"
}

export -f node_attr node_is node_is_chip two_chips \
	chip_gone remove_chip1 chip0_unaffected ctl_port_closed killed_chip0 unload_dead \
	reprobe_dead apex0_back rebind_chip rescan_chip reload_after_unbind

# run_unbind_checks: apex_0's driver unbound through sysfs while a process
# holds a live session on it (apex-unbind checks what that session sees),
# bound again, then both modules reloaded. The chips stay healthy.
run_unbind_checks() {
	local addr
	if [ ! -c /dev/apex_0 ]; then
		tap_deps_fail "/dev/apex_0 exists" "unbind with a live session" \
			"bind again after the unbind" "modules reload after the unbind"
		return 0
	fi
	addr=$(node_attr apex_0 pci_address)
	tap_prog -t 120 apex-unbind "$APEX_TESTS/apex-unbind" /dev/apex_0 \
		sh -c "echo $addr >/sys/bus/pci/drivers/apex/unbind"
	tap_check -t 90 "bind $addr again: apex_0 ALIVE, test-engine round trip, nothing mapped" \
		rebind_chip "$addr"
	tap_check -t 120 \
		"modprobe -r apex gasket after the unbind, modprobe apex brings every chip back" \
		reload_after_unbind
}

# run_bus_removal_checks: apex_0 taken off the bus through sysfs while a
# process holds a live session on it: the kernel's removal path of a
# hot-unplug, the PCI device deleted under the open file (QEMU's own
# unplug, device_del, aborts QEMU 11.1.3 for a vfio-user device:
# vmtest/qemu/README.md). Then a rescan brings it back.
run_bus_removal_checks() {
	local addr
	if [ ! -c /dev/apex_0 ]; then
		tap_deps_fail "/dev/apex_0 exists" "removal from the bus with a live session" \
			"rescan after the removal"
		return 0
	fi
	addr=$(node_attr apex_0 pci_address)
	tap_prog -t 120 apex-unbind "$APEX_TESTS/apex-unbind" --remove /dev/apex_0 \
		sh -c "echo 1 >/sys/bus/pci/devices/$addr/remove"
	tap_check -t 90 "rescan finds $addr again: apex_0 ALIVE, test-engine round trip, nothing mapped" \
		rescan_chip "$addr"
}

# run_removal_checks: the whole sequence, as TAP lines. With one chip (run
# with APEX_DEVICES=1) the removal of chip 1 is reported as skipped.
run_removal_checks() {
	local addrs d
	if [ ! -c /dev/apex_0 ]; then
		tap_deps_fail "/dev/apex_0 exists" "surprise removal of chip 1" \
			"apexsim 0 killed by the host" \
			"modules unload and reprobe after the chips died"
		return 0
	fi
	addrs=$(lspci -D -n -d "$APEX_PCI_ID" | awk '{ print $1 }' | xargs)
	if [ -e /dev/virtio-ports/org.apex.ctl.1 ]; then
		tap_check "two chips: apex_0 and apex_1, by-path links, each its own apexsim" \
			two_chips
		d="surprise removal of chip 1 (apexsim remove): apex_1 DEAD,"
		tap_check -t 90 "$d open fails with ENODEV, logged" remove_chip1
		tap_check -t 90 "apex_0 unaffected by the removal: ALIVE, test-engine round trip" \
			chip0_unaffected
	else
		tap_skip "surprise removal of chip 1" "one emulated chip only (APEX_DEVICES=1)"
	fi
	tap_diag "apex-vmtest: request kill-apexsim 0"
	d="apexsim 0 killed by the host (SIGKILL): apex_0 DEAD,"
	tap_check -t 120 "$d open fails with ENODEV, logged" killed_chip0
	tap_check -t 120 "modprobe -r apex gasket with dead chips" unload_dead
	# shellcheck disable=SC2086	# one address per word
	tap_check -t 180 \
		"modprobe apex again: the dead chips are not probed, each failure logged" \
		reprobe_dead $addrs
}
