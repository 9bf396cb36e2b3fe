#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Guest stage 2 (root, from cloud-init, after the reboot): the modules must
# have autoloaded for the chip, the node must carry the package's
# permissions, a user in group apex runs the test engine. Then the tunables
# and thermal checks against the chip's state, the injected faults (they
# may leave the chip dead), the upgrade to a newer apex-dkms and a new
# kernel (where the test disk has one: the guest then boots it with kexec
# and stage3 runs there; otherwise stage3 follows in this boot). TAP on
# stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=pkg.sh
source "$here/pkg.sh"
# shellcheck source=thermal.sh
source "$here/thermal.sh"
# shellcheck source=tunables.sh
source "$here/tunables.sh"
# shellcheck source=faults.sh
source "$here/faults.sh"

tap_diag "stage2 on $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"

# --- autoload after the reboot (before anything here loads a module) --------
tap_phase "autoload after the reboot"
udevadm settle -t 60 >/dev/null 2>&1 || true
tap_check "apex and gasket autoloaded at boot" wait_until 30 modules_loaded
autoloaded=0
tap_passed && autoloaded=1
tap_check "lspci -k: kernel driver in use: apex" driver_in_use
tap_check -v "lspci -nn shows the Coral Edge TPU [$APEX_PCI_ID]" lspci_shows_chip
have_dev=0
tap_check "$APEX_DEV exists, root:apex 0660" wait_until 30 node_ok
tap_passed && have_dev=1
tap_check "/dev/apex/by-path/ names the chip" by_path_ok
tap_check "no world-accessible apex node" no_world_nodes
tap_check "sysfs attributes of apex_0 read sensibly" sysfs_sane
tap_check "tpuuser (group apex) opens $APEX_DEV read-write" open_as tpuuser rw ok
tap_check "otheruser gets EACCES opening $APEX_DEV read-write" open_as otheruser rw EACCES
if [ "$have_dev" = 1 ]; then
	tap_check -v "tpuuser runs a test-engine round trip (apex-demo)" \
		runuser -u tpuuser -- "$here/apex-demo" "$APEX_DEV"
else
	tap_dep_fail "tpuuser runs a test-engine round trip" "$APEX_DEV exists"
fi
[ "$autoloaded" = 1 ] || tap_diag "the rest runs on whatever the boot left"

# --- tunables, thermal, faults: each checked in the chip through apexsim --------
if [ "$have_dev" = 1 ]; then
	tap_phase "power and clock tunables"
	kmsg_mark power
	tap_prog -t 300 apex-power "$here/apex-power" "$APEX_DEV"
	tap_check "the clamped module parameter allow_power_save=7 was warned about" \
		dmesg_logged power 'allow_power_save=7 is outside 0..1, using the default 1'
	tap_check "per-device bypass_top_level=1 with allow_sw_clock_gating=1 was warned about" \
		dmesg_logged power 'allow_sw_clock_gating=1 has no effect with bypass_top_level=1'
	tap_phase thermal
	run_thermal_checks
	tap_phase "modprobe.d tunables"
	run_modprobe_d_checks
	desc="dmesg before the fault injection: no WARNING, BUG, Oops, lockdep,"
	tap_check "$desc UBSAN or Call Trace" dmesg_clean
	tap_phase "fault injection"
	run_fault_checks
else
	tap_deps_fail "$APEX_DEV exists" "power and clock tunables" "thermal" \
		"modprobe.d tunables" "faults"
fi

# --- upgrade: a newer apex-dkms over the installed one ------------------------
tap_phase "upgrade + DKMS build"
if pkg_installed >/dev/null && [ -n "$(upgrade_deb)" ]; then
	old=$(pkg_version)
	new=$(dpkg-deb -f "$(upgrade_deb)" Version)
	tap_check -t 1200 "apt-get install of apex-dkms $new over $old" pkg_upgrade
	if tap_passed; then
		tap_check "upgrade: apt and dpkg report no error" no_dpkg_errors
		tap_check -v "upgrade: dkms has only $new, installed for $(uname -r)" \
			upgraded_dkms_ok "$old" "$new"
		tap_check -v \
			"upgrade: the modules under /lib/modules/$(uname -r) are $new's build" \
			modules_rebuilt "$new"
		tap_check "upgrade: group, udev rule, modprobe.d and sysusers files in place" \
			config_kept
		desc="upgrade: reloaded, the running modules are the new build,"
		tap_check -t 120 "$desc $APEX_DEV root:apex 0660" \
			loaded_is_on_disk
		if tap_passed; then
			tap_check -v "upgrade: tpuuser runs a test-engine round trip (apex-demo)" \
				runuser -u tpuuser -- "$here/apex-demo" "$APEX_DEV"
		else
			tap_dep_fail "upgrade: test-engine round trip" "the reload"
		fi
	else
		tap_deps_fail "the upgrade" "upgrade: no dpkg error" \
			"upgrade: dkms has only the new version" "upgrade: modules rebuilt" \
			"upgrade: configuration in place" "upgrade: reload" \
			"upgrade: test-engine round trip"
	fi
elif pkg_installed >/dev/null; then
	tap_dep_fail "upgrade to a newer apex-dkms" "a newer apex-dkms in $APEX_UPGRADE_DIR"
else
	tap_dep_fail "upgrade to a newer apex-dkms" "the install in stage1"
fi

# --- a kernel installed after the package (dkms autoinstall) ------------------
# Only where the test disk carries one (the trixie guest: the trixie-backports
# kernel). QEMU boots the image's kernel directly (-kernel), so the guest
# boots the new one with kexec, as far as a reboot can take it here; stage3
# then checks that the modules dkms built for it load and work.
kexec=0
if [ -f "$APEX_NEW_KERNEL_FILE" ] && pkg_installed >/dev/null; then
	tap_phase "new kernel: install + DKMS build + kexec -l"
	tap_check -t 1500 "apt-get install of the $(new_kernel) kernel and headers" kernel_install
	if tap_passed; then
		tap_check "new kernel: apt and dpkg report no error" no_dpkg_errors
		tap_check -v "new kernel: dkms status: apex installed for $(new_kernel)" \
			new_kernel_dkms_ok
		desc="new kernel: modinfo -k"
		tap_check -v "$desc $(new_kernel): both modules, vermagic $(new_kernel)" \
			new_kernel_modinfo_ok
		tap_check -t 600 -v \
			"new kernel: kexec -l $(new_kernel) with this boot's command line" \
			kexec_load
		tap_passed && kexec=1
	else
		tap_deps_fail "the kernel install" "new kernel: no dpkg error" \
			"new kernel: dkms status" "new kernel: modinfo -k" "new kernel: kexec -l"
	fi
elif [ -f "$APEX_NEW_KERNEL_FILE" ]; then
	tap_dep_fail "a new kernel gets the modules (dkms autoinstall)" "the install in stage1"
else
	tap_diag "no new kernel on the test disk: dkms autoinstall is tested in the trixie guest"
fi

tap_check "dmesg: no WARNING, BUG, Oops, lockdep, UBSAN or Call Trace" dmesg_clean
if [ "$kexec" = 1 ]; then
	new_kernel >"$APEX_STATE_DIR/kexec-kernel"
	stage_next kexec
else
	stage_next continue
fi
tap_end
