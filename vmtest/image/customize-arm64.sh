#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# mmdebstrap customize hook for the arm64 roots (vmtest/mkroot runs it after
# customize.sh): what differs on QEMU's virt machine. Usage:
# customize-arm64.sh ROOT
set -euo pipefail

root=${1:?usage: customize-arm64.sh ROOT}

# The login prompt goes to the virt machine's serial port, a PL011
# (the kernel gets console=ttyAMA0), not to a PC's ttyS0.
wants=$root/etc/systemd/system/getty.target.wants
rm -f "$wants/serial-getty@ttyS0.service"
ln -sf /lib/systemd/system/serial-getty@.service "$wants/serial-getty@ttyAMA0.service"
