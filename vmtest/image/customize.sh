#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# mmdebstrap customize hook (vmtest/mkroot runs it): make a suite root bootable
# as an offline QEMU guest. Usage: customize.sh ROOT
#
# The guest gets everything from its image and from the APEXTEST disk: no
# network, no apt sources of its own, cloud-init reading only the NoCloud seed.
#
# cloud-init mounts the seed and creates the users with mount and useradd,
# which forky no longer installs as essential:
# mkroot-include: mount passwd
set -euo pipefail

root=${1:?usage: customize.sh ROOT}

# The base image is attached as /dev/vda with filesystem label "root".
cat >"$root/etc/fstab" <<'EOF'
LABEL=root	/	ext4	rw,errors=remount-ro	0	1
EOF
echo apex-guest >"$root/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tapex-guest\n' >"$root/etc/hosts"
mkdir -p "$root/mnt/apextest"

# Only the test disk's local repository may be an apt source (the seed adds
# it); the mirror used to build the root is unreachable from the guest.
rm -f "$root/etc/apt/sources.list.d/"*
echo '# vmtest guest: the seed adds the APEXTEST repository' >"$root/etc/apt/sources.list"

# cloud-init: the NoCloud seed only, no network configuration.
# Python is slow under TCG, so each stage runs only the modules the seed
# uses: users, files, the per-boot script. The config stage stays enabled
# (with no modules): the single-process cloud-init of trixie and later
# starts the final stage only after it.
mkdir -p "$root/etc/cloud/cloud.cfg.d"
cat >"$root/etc/cloud/cloud.cfg.d/90-apex-vmtest.cfg" <<'EOF'
datasource_list: [ NoCloud, None ]
network: {config: disabled}
cloud_init_modules: [ write-files, users-groups ]
cloud_config_modules: []
cloud_final_modules: [ scripts-per-boot ]
EOF

# Nothing may wait for a network that never comes or wake up mid-test:
# network-online waiters, and the periodic jobs that would compete for the
# two emulated CPUs.
for unit in systemd-networkd-wait-online.service NetworkManager-wait-online.service \
	ifupdown-wait-online.service apt-daily.timer apt-daily-upgrade.timer \
	man-db.timer e2scrub_all.timer fstrim.timer logrotate.timer \
	dpkg-db-backup.timer systemd-timesyncd.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# Nor may a boot start what no test uses: binfmt_misc, FUSE, configfs, the
# drm and efi_pstore modules (vgem loads drm when a test needs it), the
# gettys of virtual terminals the guest lacks, e2scrub's LVM clean-up and
# lm-sensors' limit setting (`sensors` itself works without it). Under TCG
# every unit started is a second or more of emulated CPU, at every boot.
for unit in systemd-binfmt.service proc-sys-fs-binfmt_misc.automount \
	proc-sys-fs-binfmt_misc.mount modprobe@fuse.service sys-fs-fuse-connections.mount \
	modprobe@configfs.service sys-kernel-config.mount modprobe@drm.service \
	modprobe@efi_pstore.service getty-static.service e2scrub_reap.service \
	lm-sensors.service; do
	ln -sf /dev/null "$root/etc/systemd/system/$unit"
done

# A login prompt on the serial console (the kernel gets console=ttyS0).
mkdir -p "$root/etc/systemd/system/getty.target.wants"
ln -sf /lib/systemd/system/serial-getty@.service \
	"$root/etc/systemd/system/getty.target.wants/serial-getty@ttyS0.service"

# Results and control ports: the vport devices get their
# /dev/virtio-ports/NAME links from udev's default rules; load
# virtio_console early so they exist when cloud-init's scripts run.
echo virtio_console >"$root/etc/modules-load.d/apex-vmtest.conf"
