#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Guest stage 1 (root, from cloud-init, before the reboot): install
# apex-dkms from the test disk's repository exactly as a user would, check
# what the package installed, that the chip works at once (the postinst
# triggers udev), run the ioctl, mmap, test-engine, ownership and hostile
# user space programs, and load/unload the modules 20 times. TAP on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=pkg.sh
source "$here/pkg.sh"

tap_diag "stage1 on $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), dkms $(
	dkms --version 2>/dev/null | tr -d '\n')"

# --- the package -----------------------------------------------------------
tap_phase "apt install + DKMS build"
tap_check -t 300 "apt-get update reads the local repository, apex-dkms is a candidate" pkg_update
tap_check -t 1800 "apt-get install -y apex-dkms" pkg_install
tap_phase "package checks"
if tap_passed; then
	tap_check "dpkg reports apex-dkms $(pkg_version) installed" pkg_installed
	tap_check "the package created the system group apex" group_is_system
	tap_check -v "dkms status: apex installed for $(uname -r)" dkms_installed
	tap_check "gasket.ko and apex.ko under /lib/modules/$(uname -r)/updates/dkms" \
		module_files_installed
	tap_check "modinfo apex has the PCI alias of 1ac1:089a" module_alias_ok
	desc="package files: dkms.conf, udev rule, modprobe.d file, sysusers entry,"
	tap_check "$desc nothing in /etc" pkg_files_ok
	tap_check "modprobe.d file documents every parameter, sets none" modprobe_conf_complete
	tap_check "/etc/modprobe.d/apex.conf overrides the packaged file" modprobe_override_ok
	installed=1
else
	tap_deps_fail "apt-get install" "package status" "group apex" "dkms status" \
		"module files" "module alias" "package files" "modprobe.d file" \
		"modprobe.d override"
	installed=0
fi

# shellcheck disable=SC2016 # cmd is a script for bash -c, which expands it
cmd='usermod -aG apex tpuuser && grep -qw apex <<<"$(id -nG tpuuser)"'
# shellcheck disable=SC2016
cmd+=' && ! grep -qw apex <<<"$(id -nG otheruser)"'
tap_check "add tpuuser to group apex (otheruser stays out)" bash -c "$cmd"

# --- the chip, right after the install ---------------------------------------
tap_phase "chip after the install"
udevadm settle -t 60 >/dev/null 2>&1 || true
tap_check "apex and gasket loaded for the present chip without modprobe or reboot" \
	wait_until 30 modules_loaded
if ! tap_passed && [ "$installed" = 1 ]; then
	# Report the missing autoload above, then load by hand so the device
	# tests below still say something about the driver.
	tap_check "modprobe apex (by hand, after the failed autoload)" reload_modules
fi
have_dev=0
tap_check "$APEX_DEV exists, root:apex 0660" wait_until 30 node_ok
tap_passed && have_dev=1
tap_check "/dev/apex/by-path/ names the chip" by_path_ok
tap_check "no world-accessible apex node" no_world_nodes
tap_check -v "lspci -nn shows the Coral Edge TPU [$APEX_PCI_ID]" lspci_shows_chip
tap_check -v "the chip is behind a translating IOMMU exactly when booted with one" \
	iommu_as_booted
tap_check "lspci -k: kernel driver in use: apex" driver_in_use
tap_check -v "modinfo describes every parameter of apex and gasket" params_described
tap_check "sysfs attributes of apex_0 read sensibly" sysfs_sane
tap_check "tpuuser (group apex) opens $APEX_DEV read-write" open_as tpuuser rw ok
tap_check "otheruser gets EACCES opening $APEX_DEV read-write" open_as otheruser rw EACCES
tap_check "otheruser gets EACCES opening $APEX_DEV read-only" open_as otheruser ro EACCES

# --- the driver through its ioctls, mmap and the test engine -------------------
tap_phase "ioctl, mmap, test engine, ownership"
if [ "$have_dev" = 1 ]; then
	run_device_programs 1
else
	tap_deps_fail "$APEX_DEV exists" "${APEX_DEVICE_PROGRAMS[@]}"
fi

# --- unload and reload ---------------------------------------------------------
tap_phase "unload and reload x20"
reload_20() {
	local i
	for i in $(seq 20); do
		reload_modules || fail "reload $i failed"
		expect_eq "status after reload $i" "$(sysattr status)" ALIVE
	done
	expect_eq "gasket users" "$(cat /sys/module/gasket/refcnt)" 1
}
export -f reload_20
if [ "$installed" = 1 ]; then
	tap_check -t 900 "rmmod apex gasket + modprobe apex, 20 times, device back each time" \
		reload_20
	if [ -w /sys/kernel/debug/kmemleak ]; then
		cmd='echo scan >/sys/kernel/debug/kmemleak && sleep 5'
		cmd+=' && echo scan >/sys/kernel/debug/kmemleak'
		cmd+=' && ! grep -q . /sys/kernel/debug/kmemleak'
		cmd+=' || { cat /sys/kernel/debug/kmemleak; false; }'
		tap_check -t 300 -v "kmemleak finds no leak" bash -c "$cmd"
	else
		desc="kmemleak is not enabled in this kernel:"
		tap_diag "$desc leaks are checked through dmesg only"
	fi
else
	tap_dep_fail "rmmod/modprobe 20 times" "apt-get install"
fi

tap_check "dmesg: no WARNING, BUG, Oops, lockdep, UBSAN or Call Trace" dmesg_clean
tap_end
