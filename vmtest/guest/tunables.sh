# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Module parameters from /etc/modprobe.d for stage 2 (sourced after
# lib.sh): options written there reach /sys/module/*/parameters and the
# chip when the modules load, bad values load with a warning and the
# default, and a combination that cannot work falls back with one warning
# naming both options. Each check reloads the modules.

export APEX_TEST_CONF=/etc/modprobe.d/apex-test.conf

# param MODULE NAME: its value in /sys/module, booleans as 0/1.
param() {
	local v
	v=$(cat "/sys/module/$1/parameters/$2")
	case $v in
	Y) echo 1 ;;
	N) echo 0 ;;
	*) echo "$v" ;;
	esac
}

# with_conf TEXT: write the test's modprobe.d file and reload.
with_conf() {
	printf '%s\n' "$1" >"$APEX_TEST_CONF"
	reload_modules
}

modprobe_d_applied() {
	local conf='options apex allow_power_save=0 allow_hw_clock_gating=0'
	conf+=' trip_point0_temp=80000 temp_poll_interval=1000 hw_temp_warn1_en=1
options gasket dma_bit_mask=40'
	with_conf "$conf"
	expect_eq allow_power_save "$(param apex allow_power_save)" 0
	expect_eq allow_hw_clock_gating "$(param apex allow_hw_clock_gating)" 0
	expect_eq trip_point0_temp "$(param apex trip_point0_temp)" 80000
	expect_eq temp_poll_interval "$(param apex temp_poll_interval)" 1000
	expect_eq hw_temp_warn1_en "$(param apex hw_temp_warn1_en)" 1
	expect_eq dma_bit_mask "$(param gasket dma_bit_mask)" 40
}

# The same load, seen in the chip and the device's view.
modprobe_d_chip() {
	local h
	# allow_power_save=0: probe leaves the chip running.
	chip_is gcb_reset 0
	chip_is warn1_en 1
	h=$(hwmon_dir)
	expect_eq "hwmon temp1_max" "$(cat "$h/temp1_max")" 80000
	expect_eq "per-device trip_point0_temp" "$(sysattr trip_point0_temp)" 80000
	# allow_hw_clock_gating=0 takes effect at open.
	exec 3<>"$APEX_DEV"
	chip_is pwr_state_ovr 3
	exec 3>&-
}

modprobe_d_bad_values() {
	kmsg_mark badconf
	with_conf 'options apex trip_point0_temp=999999 temp_poll_interval=-5 allow_power_save=abc
options gasket dma_bit_mask=16'
	expect_eq trip_point0_temp "$(param apex trip_point0_temp)" 85000
	expect_eq temp_poll_interval "$(param apex temp_poll_interval)" 5000
	expect_eq allow_power_save "$(param apex allow_power_save)" 1
	expect_eq dma_bit_mask "$(param gasket dma_bit_mask)" 64
	expect_eq status "$(sysattr status)" ALIVE
	dmesg_logged badconf 'trip_point0_temp=999999 is outside'
	dmesg_logged badconf 'temp_poll_interval=-5 is outside'
	dmesg_logged badconf 'allow_power_save: "abc" is not a valid value'
	dmesg_logged badconf 'dma_bit_mask=16 out of range'
}

modprobe_d_conflict() {
	local n
	kmsg_mark conflict
	with_conf 'options apex bypass_top_level=1 allow_sw_clock_gating=1'
	# Each chip warns once at its probe: count chip 0's.
	n=$(dmesg_after conflict | grep -F "$(chip_addr): " |
		grep -c 'allow_sw_clock_gating=1 has no effect with bypass_top_level=1') || true
	expect_eq "warnings naming both options" "$n" 1
	expect_eq status "$(sysattr status)" ALIVE
}

modprobe_d_removed() {
	rm -f "$APEX_TEST_CONF"
	reload_modules
	expect_eq allow_power_save "$(param apex allow_power_save)" 1
	expect_eq bypass_top_level "$(param apex bypass_top_level)" 0
	expect_eq dma_bit_mask "$(param gasket dma_bit_mask)" 64
	wait_chip 10 gcb_reset 1
	expect_eq status "$(sysattr status)" ALIVE
}

export -f param with_conf modprobe_d_applied modprobe_d_chip modprobe_d_bad_values \
	modprobe_d_conflict modprobe_d_removed

# run_modprobe_d_checks: the whole sequence, as TAP lines.
run_modprobe_d_checks() {
	local d
	tap_check -t 120 "modprobe.d options reach /sys/module/apex and gasket parameters" \
		modprobe_d_applied
	if tap_passed; then
		d="modprobe.d options reach the chip: power save off, warn1 on,"
		tap_check "$d trip point in hwmon, hw gating off" modprobe_d_chip
		tap_check -v "a test-engine round trip with dma_bit_mask=40" \
			"$APEX_TESTS/apex-demo" "$APEX_DEV"
	else
		tap_dep_fail "modprobe.d options reach the chip" "modprobe.d reload"
		tap_dep_fail "round trip with dma_bit_mask=40" "modprobe.d reload"
	fi
	tap_check -t 120 "modprobe.d bad values: modules load, defaults used, each warned about" \
		modprobe_d_bad_values
	d="modprobe.d bypass_top_level=1 + allow_sw_clock_gating=1:"
	tap_check -t 120 "$d one warning naming both" modprobe_d_conflict
	tap_check -t 120 "without the modprobe.d file the defaults are back" modprobe_d_removed
}
