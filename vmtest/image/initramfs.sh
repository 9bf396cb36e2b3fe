#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# initramfs.sh defer|build ROOT: a suite root's initramfs, built once and
# small (vmtest/mkroot runs this as mmdebstrap hooks).
#
# Installing the kernel builds an initramfs, and packages installed after it
# (udev, kmod, busybox) build it again through initramfs-tools' trigger.
# Each build packed most of the kernel's drivers: 18-25 MB, and 15-65
# CPU-seconds of a loaded machine, five roots at a time on a fresh machine.
#   defer  (essential hook, before the kernel is installed): update-initramfs
#          is diverted to a stub that does nothing.
#   build  (customize hook, everything installed): the real one comes back
#          and builds one initramfs with what the guests boot from, a virtio
#          disk holding ext4 (MODULES=list). A guest that installs a kernel
#          later builds its own with MODULES=dep (vmtest/cloud-init/user-data).
set -euo pipefail
mode=${1:?usage: initramfs.sh defer|build ROOT}
root=${2:?usage: initramfs.sh defer|build ROOT}
tool=/usr/sbin/update-initramfs
deferred=$tool.apex-deferred

case $mode in
defer)
	chroot "$root" dpkg-divert --quiet --local --rename --divert "$deferred" --add "$tool"
	mkdir -p "$root/usr/sbin"
	printf '#!/bin/sh\n# vmtest/image/initramfs.sh: built once, when the root is complete\nexit 0\n' \
		>"$root$tool"
	chmod 755 "$root$tool"
	;;
build)
	rm -f "$root$tool"
	chroot "$root" dpkg-divert --quiet --local --rename --remove "$tool"
	echo MODULES=list >"$root/etc/initramfs-tools/conf.d/apex-vmtest-root"
	# ext4 asks for crc32c first (a softdep, which the list does not follow).
	printf '%s\n' virtio_pci virtio_blk ext4 crc32c_generic >>"$root/etc/initramfs-tools/modules"
	chroot "$root" update-initramfs -c -k all
	;;
*)
	echo "usage: initramfs.sh defer|build ROOT" >&2
	exit 2
	;;
esac
