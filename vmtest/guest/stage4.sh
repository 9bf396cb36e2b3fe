#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Guest stage 4 (root, the cold boot after the purge, with fresh chips):
# the machine still boots cleanly without the package, the chips are there
# with no driver, and nothing of the package came back: no module loaded or
# found, no node, no file. TAP on stdout; the guest powers off.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tap.sh
source "$here/tap.sh"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=pkg.sh
source "$here/pkg.sh"

tap_diag "stage4 on $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"

tap_phase "checks after the purge"
tap_check -v "booted after the purge: no failed systemd unit" no_failed_units
udevadm settle -t 60 >/dev/null 2>&1 || true
tap_check -v "lspci lists the chips, no driver in use" chips_without_driver
tap_check "neither apex nor gasket loaded" bash -c '! module_loaded apex && ! module_loaded gasket'
tap_check "modprobe apex finds no module" \
	bash -c '! modprobe apex 2>/dev/null && ! module_loaded apex'
tap_check "no apex node or /dev/apex directory" \
	bash -c 'left=$(compgen -G "/dev/apex*") || true; [ -z "$left" ] || fail "left: $left"'
tap_check "the purge still left no module, DKMS tree, udev rule, modprobe.d or sysusers file" \
	purged_clean
tap_check "dmesg: no WARNING, BUG, Oops, lockdep, UBSAN or Call Trace" dmesg_clean
tap_end
