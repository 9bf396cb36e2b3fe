# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Injected chip faults for stage 2 (sourced after lib.sh), run last because
# a failure here may leave the device dead: every fault must end in a clean
# error (a failed open or probe, status DEAD) within the driver's 12 s
# timeouts, never a hang or a kernel warning, and clearing the fault must
# bring the device back.

# open_fails ERRNO: opening for writing fails with ERRNO.
open_fails() {
	"$APEX_TESTS/apex-open" "$APEX_DEV" rw "$1"
}

open_works() {
	"$APEX_TESTS/apex-open" "$APEX_DEV" rw ok
}

reset_stuck() {
	kmsg_mark reset_stuck
	chip_cmd fault reset_stuck on
	open_fails ETIMEDOUT
	expect_eq status "$(sysattr status)" DEAD
	dmesg_logged reset_stuck 'GCB did not leave reset'
}

ram_stuck() {
	kmsg_mark ram_stuck
	chip_cmd fault ram_stuck on
	open_fails ETIMEDOUT
	expect_eq status "$(sysattr status)" DEAD
	dmesg_logged ram_stuck 'RAM did not power up'
}

# fault_cleared NAME: without the fault the device opens and is ALIVE.
fault_cleared() {
	chip_cmd fault "$1" off
	open_works
	expect_eq status "$(sysattr status)" ALIVE
}

# A DMA pause that never completes shows at the last close (power save).
dma_pause_stuck() {
	kmsg_mark dma_pause
	exec 3<>"$APEX_DEV"
	chip_cmd fault dma_pause_stuck on
	exec 3>&-
	expect_eq status "$(sysattr status)" DEAD
	dmesg_logged dma_pause 'DMA did not pause'
}

fatal_interrupt() {
	local before
	before=$(irq_count 12)
	kmsg_mark fatal
	exec 3<>"$APEX_DEV"
	chip_cmd raise fatal
	wait_until 10 irq_count_above 12 "$before" || fail "interrupt 12 count stayed $before"
	expect_eq status "$(sysattr status)" DEAD
	dmesg_logged fatal 'fatal error interrupt'
	exec 3>&-
}

# Closing resets the chip (last writer); the next session is healthy.
fatal_recovered() {
	open_works
	expect_eq status "$(sysattr status)" ALIVE
	"$APEX_TESTS/apex-demo" "$APEX_DEV" >/dev/null
}

# With a second chip, that one probes and takes the name apex_0: the
# failed chip is known by its PCI address.
probe_fails() {
	local addr
	addr=$(chip_addr)
	kmsg_mark probe
	chip_cmd fault reset_stuck on
	modprobe -r apex gasket
	modprobe apex
	udevadm settle -t 30 || true
	[ ! -e "/sys/bus/pci/devices/$addr/driver" ] ||
		fail "$addr is bound although the chip never left reset"
	! compgen -G "/dev/apex/by-path/*pci-$addr" >/dev/null ||
		fail "a /dev/apex/by-path/ link for $addr exists although the chip never left reset"
	! grep -qx "$addr" /sys/class/apex/apex_*/pci_address 2>/dev/null ||
		fail "an apex node belongs to $addr although the chip never left reset"
	dmesg_logged probe 'GCB did not leave reset'
	module_loaded apex || fail "apex unloaded itself"
}

probe_recovers() {
	chip_cmd fault reset_stuck off
	reload_modules
	expect_eq status "$(sysattr status)" ALIVE
	"$APEX_TESTS/apex-demo" "$APEX_DEV" >/dev/null
}

export -f open_fails open_works reset_stuck ram_stuck fault_cleared dma_pause_stuck \
	fatal_interrupt fatal_recovered probe_fails probe_recovers

# run_fault_checks: the whole sequence, as TAP lines. A fault that could
# not be cleared leaves the rest to report what they find.
run_fault_checks() {
	tap_check "fatal-error interrupt (raise fatal): status DEAD, logged" fatal_interrupt
	tap_check "after the fatal error a new session is ALIVE and copies" fatal_recovered
	tap_check "GCB never leaves reset: open fails with ETIMEDOUT, status DEAD" reset_stuck
	tap_check "reset_stuck cleared: open works, ALIVE" fault_cleared reset_stuck
	tap_check "RAM never powers up: open fails with ETIMEDOUT, status DEAD" ram_stuck
	tap_check "ram_stuck cleared: open works, ALIVE" fault_cleared ram_stuck
	tap_check -t 90 "DMA pause never completes: the last close reports it, status DEAD" \
		dma_pause_stuck
	tap_check "dma_pause_stuck cleared: open works, ALIVE" fault_cleared dma_pause_stuck
	tap_check -t 120 "chip stuck in reset at probe: probe fails cleanly, no device node" \
		probe_fails
	tap_check -t 120 "fault cleared and modules reloaded: the device is back" probe_recovers
	# Never leave a fault behind for the purge and the next run.
	local f
	for f in reset_stuck ram_stuck dma_pause_stuck; do
		ctl fault "$f" off >/dev/null 2>&1 || true
	done
}
