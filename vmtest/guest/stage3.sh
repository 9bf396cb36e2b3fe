#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Guest stage 3 (root): where stage2 installed a new kernel, this runs in
# that kernel (booted with kexec) and checks that the modules dkms built
# for it autoload and work; otherwise it follows stage2 in the same boot.
# Then a live session meets an unbind, a removal from the bus (removal.sh)
# and a function reset (restore.sh),
# the chips vanish (removal.sh) and `apt-get purge` must leave nothing
# behind. Then the guest asks the host for a power cycle, not a reboot:
# QEMU cannot reset a machine whose apexsims have gone (vmtest/qemu/
# launch.sh), and a cold boot with fresh chips is the fairer test of the
# machine after the purge (stage4). TAP on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=pkg.sh
source "$here/pkg.sh"
# shellcheck source=removal.sh
source "$here/removal.sh"
# shellcheck source=restore.sh
source "$here/restore.sh"
# shellcheck source=doctor.sh
source "$here/doctor.sh"

tap_diag "stage3 on $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"

# --- the new kernel, booted with kexec by stage2 --------------------------------
if [ -f "$APEX_STATE_DIR/kexec-kernel" ]; then
	tap_phase "new kernel: checks after kexec"
	k=$(cat "$APEX_STATE_DIR/kexec-kernel")
	tap_check "new kernel: the guest runs $k after kexec" \
		expect_eq "uname -r" "$(uname -r)" "$k"
	udevadm settle -t 60 >/dev/null 2>&1 || true
	tap_check "new kernel: apex and gasket autoloaded at boot" wait_until 30 modules_loaded
	tap_check -v "new kernel: the running modules are dkms's build for $k" \
		running_modules_are_dkms_build
	tap_check "new kernel: $APEX_DEV exists, root:apex 0660" wait_until 30 node_ok
	if tap_passed; then
		tap_check -v "new kernel: tpuuser runs a test-engine round trip (apex-demo)" \
			runuser -u tpuuser -- "$here/apex-demo" "$APEX_DEV"
	else
		tap_dep_fail "new kernel: test-engine round trip" "$APEX_DEV exists"
	fi
elif [ -f "$APEX_NEW_KERNEL_FILE" ]; then
	tap_dep_fail "new kernel: booted with kexec" "the kernel install and kexec -l in stage2"
fi

# --- apex-doctor: each broken state diagnosed, then undone ----------------------
tap_phase "apex-doctor diagnoses"
run_doctor_checks

# --- unbind with a live session: old mappings fault, old fds fail, rebind works
tap_phase "unbind with a live session"
run_unbind_checks

# --- removed from the bus with a live session, then found by a rescan
tap_phase "removal from the bus with a live session"
run_bus_removal_checks

# --- the chip loses its state under a live session: a function reset
tap_phase "reset with a live session"
run_restore_checks

# --- chips that vanish: surprise removal, a killed apexsim (the chips stay dead)
tap_phase "chips that vanish"
run_removal_checks
tap_check "dmesg: no WARNING, BUG, Oops, lockdep, UBSAN or Call Trace" dmesg_clean
# apex-doctor with the dead chips, then with the chips taken off the bus.
tap_phase "apex-doctor with the chips gone"
run_doctor_gone_checks

# --- removal ---------------------------------------------------------------------
tap_phase purge
if pkg_installed >/dev/null; then
	tap_check -t 600 -v "apt-get purge -y apex-dkms" pkg_purge
else
	tap_dep_fail "apt-get purge -y apex-dkms" "the install in stage1"
fi
if tap_passed; then
	tap_check "purge left no module, DKMS tree, udev rule, modprobe.d or sysusers file" \
		purged_clean
	tap_check "group apex stays after purge (system groups are not removed)" getent group apex
else
	tap_dep_fail "purge left nothing behind" "apt-get purge"
	tap_dep_fail "group apex stays after purge" "apt-get purge"
fi
tap_check "dmesg after purge: no WARNING, BUG, Oops, lockdep, UBSAN or Call Trace" dmesg_clean
tap_diag "apex-vmtest: request power-cycle"
stage_next poweroff
tap_end
