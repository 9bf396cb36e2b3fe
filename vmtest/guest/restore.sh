# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The chip loses its state under a live session, for stage 3 (sourced after
# lib.sh and removal.sh): a function reset through sysfs (the kernel's "pm"
# method: D3hot and back, which resets apexsim's chip), then system sleep,
# s2idle (the chip goes to D3hot) and S3 (QEMU resets every device at
# wakeup), each woken by the RTC. apex-restore holds the session and checks
# that it works afterwards without mapping anything again.

# sleep_and_wake STATE: suspend to STATE (freeze or mem), woken by an RTC
# alarm 3 s later. Returns once the system has resumed.
sleep_and_wake() {
	local alarm=/sys/class/rtc/rtc0/wakealarm
	[ -w "$alarm" ] || fail "$alarm is missing: $(ls /sys/class/rtc/ 2>&1)"
	if ! { echo 0 >"$alarm" && echo +3 >"$alarm"; }; then
		fail "cannot set the RTC alarm"
		return
	fi
	echo "$1" >/sys/power/state || fail "echo $1 >/sys/power/state failed"
}

# s3_offered: the machine offers S3 ("deep"), and it is selected.
s3_offered() {
	grep -qw deep /sys/power/mem_sleep && echo deep >/sys/power/mem_sleep
}

# after_restore: the session is gone; the chip is healthy and empty.
after_restore() {
	node_is apex_0 ALIVE
	expect_eq "apex_0 node_0_num_mapped_pages" \
		"$(node_attr apex_0 node_0_num_mapped_pages)" 0
	"$APEX_TESTS/apex-demo" /dev/apex_0 >/dev/null || fail "apex-demo failed"
}

export -f sleep_and_wake s3_offered after_restore

# run_restore_checks: the three events, each with its own session.
run_restore_checks() {
	local addr reset
	if [ ! -c /dev/apex_0 ]; then
		tap_deps_fail "/dev/apex_0 exists" "function reset with a live session" \
			"s2idle with a live session" "S3 with a live session" \
			"after the resets and sleeps: apex_0 ALIVE, nothing mapped"
		return 0
	fi
	addr=$(node_attr apex_0 pci_address)
	reset=/sys/bus/pci/devices/$addr/reset
	if [ -w "$reset" ]; then
		tap_prog -t 120 "function reset" "$APEX_TESTS/apex-restore" /dev/apex_0 \
			sh -c "echo 1 >$reset"
	else
		tap_check "function reset: $reset exists" fail "$(ls "/sys/bus/pci/devices/$addr/")"
	fi
	tap_prog -t 180 s2idle "$APEX_TESTS/apex-restore" /dev/apex_0 \
		bash -c "sleep_and_wake freeze"
	if s3_offered; then
		tap_prog -t 180 S3 "$APEX_TESTS/apex-restore" /dev/apex_0 \
			bash -c "sleep_and_wake mem"
	else
		tap_skip "S3 with a live session" \
			"the machine offers no S3: /sys/power/mem_sleep is '$(cat /sys/power/mem_sleep)'"
	fi
	tap_check -t 90 "after the resets and sleeps: apex_0 ALIVE, nothing mapped, a test-engine round trip" \
		after_restore
}
