# SPDX-License-Identifier: GPL-2.0-only OR MIT
# The chip loses its state under a live session, for stage 3 (sourced after
# lib.sh and removal.sh): a function reset through sysfs (the kernel's "pm"
# method: D3hot and back, which resets apexsim's chip), then system sleep:
# s2idle (the chip goes to D3hot) and S3 (QEMU resets every device at
# wakeup). apex-restore holds the session and checks that it works
# afterwards without mapping anything again.

# suspend_to_idle: s2idle as far as the devices go. QEMU has no wake
# source for a guest in s2idle (its RTC alarm wakes only a machine in S3),
# so the kernel's test mode ends it: pm_test=platform runs every device
# suspend step, D3hot included, then resumes instead of idling.
suspend_to_idle() {
	local test=/sys/power/pm_test delay=/sys/module/kernel/parameters/pm_test_delay rc=0
	[ -w "$test" ] || fail "$test is missing: a kernel without CONFIG_PM_DEBUG"
	[ ! -w "$delay" ] || echo 1 >"$delay"
	echo platform >"$test" || fail "echo platform >$test failed"
	echo freeze >/sys/power/state || rc=1
	echo none >"$test"
	[ "$rc" = 0 ] || fail "echo freeze >/sys/power/state failed"
}

# suspend_to_ram: S3, woken by an RTC alarm 3 s later; returns once the
# system has resumed.
suspend_to_ram() {
	local alarm=/sys/class/rtc/rtc0/wakealarm
	[ -w "$alarm" ] || fail "$alarm is missing: $(ls /sys/class/rtc/ 2>&1)"
	if ! { echo 0 >"$alarm" && echo +3 >"$alarm"; }; then
		fail "cannot set the RTC alarm"
		return
	fi
	echo mem >/sys/power/state || fail "echo mem >/sys/power/state failed"
}

# s3_offered: the machine offers S3 ("deep"), and it is selected.
s3_offered() {
	grep -qw deep /sys/power/mem_sleep && echo deep >/sys/power/mem_sleep
}

# sleep_silences_results: on trixie's 7.3 kernel the virtio console port
# that carries these results goes silent for good after s2idle, even with
# apex never loaded (QEMU 11.1.3; 5.10, 6.1 and 7.2 keep it), so the guest
# could report nothing after a sleep.
sleep_silences_results() {
	[[ $(uname -r) == 7.3.* ]]
}

# after_restore: the session is gone; the chip is healthy and empty.
after_restore() {
	node_is apex_0 ALIVE
	expect_eq "apex_0 node_0_num_mapped_pages" \
		"$(node_attr apex_0 node_0_num_mapped_pages)" 0
	"$APEX_TESTS/apex-demo" /dev/apex_0 >/dev/null || fail "apex-demo failed"
}

export -f suspend_to_idle suspend_to_ram s3_offered sleep_silences_results after_restore

# run_restore_checks: the three events, each with its own session.
run_restore_checks() {
	local addr reset why
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
	if sleep_silences_results; then
		why="on $(uname -r) the virtio console port of the results goes silent after s2idle"
		tap_skip "s2idle with a live session" "$why"
		tap_skip "S3 with a live session" "$why"
	else
		run_sleep_checks
	fi
	tap_check -t 90 "after the resets and sleeps: apex_0 ALIVE, nothing mapped, a test-engine round trip" \
		after_restore
}

# run_sleep_checks: s2idle, then S3 if the machine offers it.
run_sleep_checks() {
	tap_prog -t 180 s2idle "$APEX_TESTS/apex-restore" /dev/apex_0 \
		bash -c suspend_to_idle
	if s3_offered; then
		tap_prog -t 180 S3 "$APEX_TESTS/apex-restore" /dev/apex_0 \
			bash -c suspend_to_ram
	else
		tap_skip "S3 with a live session" \
			"the machine offers no S3: /sys/power/mem_sleep is '$(cat /sys/power/mem_sleep)'"
	fi
}
