# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Thermal checks for stage 2 (sourced after lib.sh): the emulated chip's
# temperature is set through apexsim's control channel and the driver must
# report it (sysfs, hwmon, sensors), throttle the GCB clock past each trip
# point and restore it below with hysteresis, and handle the chip's own
# warning and shutdown-alarm comparators. Checks run with the device open
# (a session starts at full speed) and a 200 ms poll interval.

APEX_PARAMS=/sys/module/apex/parameters
export APEX_PARAMS

# near A B: A is within one sensor step (250 m°C) of B.
near() {
	local d=$(($1 - $2))
	[ "${d#-}" -le 250 ] || fail "$1 is not within 250 of $2"
}

temp_follows_chip() {
	chip_cmd temp 50000
	near "$(sysattr temp)" 50000
	chip_cmd temp 30000
	near "$(sysattr temp)" 30000
}

hwmon_ok() {
	local h
	h=$(hwmon_dir)
	chip_cmd temp 50000
	near "$(cat "$h/temp1_input")" 50000
	expect_eq temp1_max "$(cat "$h/temp1_max")" 85000
	expect_eq temp1_max_hyst "$(cat "$h/temp1_max_hyst")" 83000
	expect_eq temp1_crit "$(cat "$h/temp1_crit")" 95000
	expect_eq temp1_emergency "$(cat "$h/temp1_emergency")" 110000
	expect_eq temp1_max_alarm "$(cat "$h/temp1_max_alarm")" 0
}

sensors_shows() {
	local out
	chip_cmd temp 50000
	out=$(sensors 2>&1) || true
	echo "$out"
	grep -q '^apex-' <<<"$out" || fail "sensors lists no apex chip"
	grep -Eq '^temp1: +\+(49\.[5-9]|50\.[0-4])' <<<"$out" ||
		fail "sensors shows no temp1 of about +50 C"
}

# throttle_to MILLIDEG CLKDIV: the driver settles on that divider.
throttle_to() {
	chip_cmd temp "$1"
	wait_chip 10 clk_div "$2"
}

# stays MILLIDEG CLKDIV: several polls later the divider has not moved.
stays() {
	chip_cmd temp "$1"
	sleep 1.5
	chip_is clk_div "$2"
}

alarms_are() {
	local h
	h=$(hwmon_dir)
	expect_eq temp1_max_alarm "$(cat "$h/temp1_max_alarm")" "$1"
	expect_eq temp1_crit_alarm "$(cat "$h/temp1_crit_alarm")" "$2"
}

throttle_max() {
	throttle_to 97000 3 && alarms_are 1 1
}

unthrottled() {
	throttle_to 30000 0 && alarms_are 0 0
}

ramp_cycle() {
	chip_cmd ramp 80000 100000 1000 100
	wait_chip 30 clk_div 3
	chip_cmd ramp 100000 40000 2000 100
	wait_chip 30 clk_div 0
}

param_trip_runtime() {
	echo 60000 >"$APEX_PARAMS/trip_point0_temp"
	expect_eq trip_point0_temp "$(sysattr trip_point0_temp)" 60000
	throttle_to 61000 1
	echo 85000 >"$APEX_PARAMS/trip_point0_temp"
	wait_chip 10 clk_div 0
}

device_trip_override() {
	local h
	h=$(hwmon_dir)
	echo 55000 >"$APEX_SYSFS/trip_point0_temp"
	expect_eq "hwmon temp1_max" "$(cat "$h/temp1_max")" 55000
	throttle_to 56000 1
	expect_eq "module parameter" "$(cat "$APEX_PARAMS/trip_point0_temp")" 85000
	echo default >"$APEX_SYSFS/trip_point0_temp"
	expect_eq trip_point0_temp "$(sysattr trip_point0_temp)" 85000
	wait_chip 10 clk_div 0
}

trips_not_ascending() {
	local h
	h=$(hwmon_dir)
	kmsg_mark trips
	echo 95000 >"$APEX_SYSFS/trip_point0_temp"
	echo 85000 >"$APEX_SYSFS/trip_point2_temp"
	throttle_to 87000 1
	expect_eq "hwmon temp1_max (built-in trip point 0)" "$(cat "$h/temp1_max")" 85000
	dmesg_logged trips 'do not ascend'
	echo default >"$APEX_SYSFS/trip_point0_temp"
	echo default >"$APEX_SYSFS/trip_point2_temp"
	throttle_to 30000 0
}

warn1_interrupt() {
	local before
	chip_cmd temp 30000
	echo 60000 >"$APEX_SYSFS/hw_temp_warn1"
	echo 1 >"$APEX_SYSFS/hw_temp_warn1_en"
	near "$(chip_get warn1)" 60000
	chip_is warn1_en 1
	before=$(irq_count 11)
	kmsg_mark warn1
	chip_cmd temp 61000
	wait_until 10 irq_count_above 11 "$before" ||
		fail "interrupt 11 count stayed $before"
	wait_chip 10 warn1_active 0
	dmesg_logged warn1 'temperature warning'
	chip_cmd temp 30000
	wait_chip 10 warn1_en 1
	echo default >"$APEX_SYSFS/hw_temp_warn1_en"
	echo default >"$APEX_SYSFS/hw_temp_warn1"
	chip_is warn1_en 0
}

warn2_interrupt() {
	local before
	chip_cmd temp 30000
	echo 65000 >"$APEX_SYSFS/hw_temp_warn2"
	echo 1 >"$APEX_SYSFS/hw_temp_warn2_en"
	near "$(chip_get warn2)" 65000
	chip_is warn2_en 1
	before=$(irq_count 8)
	kmsg_mark warn2
	chip_cmd temp 66000
	wait_until 10 irq_count_above 8 "$before" ||
		fail "interrupt 8 count stayed $before"
	wait_chip 10 warn2_active 0
	dmesg_logged warn2 'shutdown alarm'
	chip_cmd temp 30000
	echo default >"$APEX_SYSFS/hw_temp_warn2_en"
	echo default >"$APEX_SYSFS/hw_temp_warn2"
	chip_is warn2_en 0
}

bad_thermal_values() {
	kmsg_mark badtherm
	! echo 200000 2>/dev/null >"$APEX_SYSFS/trip_point0_temp" ||
		fail "per-device trip_point0_temp=200000 was accepted"
	! echo abc 2>/dev/null >"$APEX_SYSFS/temp_poll_interval" ||
		fail "per-device temp_poll_interval=abc was accepted"
	expect_eq trip_point0_temp "$(sysattr trip_point0_temp)" 85000
	echo 200000 >"$APEX_PARAMS/trip_point0_temp"
	expect_eq "clamped trip_point0_temp" "$(cat "$APEX_PARAMS/trip_point0_temp")" 85000
	echo -5 >"$APEX_PARAMS/temp_poll_interval"
	expect_eq "clamped temp_poll_interval" "$(cat "$APEX_PARAMS/temp_poll_interval")" 5000
	dmesg_logged badtherm 'trip_point0_temp=200000 is outside'
	dmesg_logged badtherm 'temp_poll_interval=-5 is outside'
}

thermal_restore() {
	local a
	chip_cmd temp 40050 || true
	for a in temp_poll_interval trip_point0_temp trip_point1_temp trip_point2_temp \
		hw_temp_warn1 hw_temp_warn1_en hw_temp_warn2 hw_temp_warn2_en; do
		echo default >"$APEX_SYSFS/$a" || true
	done
}

export -f near temp_follows_chip hwmon_ok sensors_shows throttle_to stays alarms_are \
	throttle_max unthrottled ramp_cycle param_trip_runtime device_trip_override \
	trips_not_ascending warn1_interrupt warn2_interrupt bad_thermal_values thermal_restore

# run_thermal_checks: the whole sequence, as TAP lines.
run_thermal_checks() {
	local d
	hold_device
	tap_check "per-device temp_poll_interval=200 ms" \
		bash -c "echo 200 >$APEX_SYSFS/temp_poll_interval"
	tap_check "sysfs temp follows the chip's sensor" temp_follows_chip
	tap_check "hwmon temp1: input, max/hyst/crit/emergency from the thresholds" hwmon_ok
	tap_check -v "sensors prints the chip temperature" sensors_shows
	kmsg_mark throttle
	tap_check "87 C, past trip_point0: GCB clock halved (clk_div 1)" throttle_to 87000 1
	tap_check "92 C, past trip_point1: a quarter (clk_div 2)" throttle_to 92000 2
	tap_check "97 C, past trip_point2: an eighth (clk_div 3), hwmon alarms set" throttle_max
	tap_check "94 C: stays at clk_div 3 (2 C hysteresis)" stays 94000 3
	tap_check "91 C: back to clk_div 2" throttle_to 91000 2
	tap_check "30 C: full speed again, hwmon alarms clear" unthrottled
	tap_check "the driver logged the throttling" \
		dmesg_logged throttle 'throttling, GCB clock divided by'
	tap_check -t 120 "ramp 80->100 C throttles to clk_div 3, ramp down restores 0" ramp_cycle
	tap_check "module parameter trip_point0_temp=60000 at run time: 61 C throttles" \
		param_trip_runtime
	tap_check "per-device trip_point0_temp=55000 overrides the module parameter" \
		device_trip_override
	tap_check "trip points that do not ascend: one warning, built-in ones used" \
		trips_not_ascending
	d="hw_temp_warn1: chip comparator set, crossing it raises interrupt 11,"
	tap_check "$d driver acknowledges" warn1_interrupt
	tap_check "hw_temp_warn2: crossing it raises the shutdown alarm (interrupt 8), logged" \
		warn2_interrupt
	d="bad thermal values: refused per device,"
	tap_check "$d clamped with a warning as module parameters" bad_thermal_values
	thermal_restore
	release_device
}
