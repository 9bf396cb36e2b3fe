#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# build-image.sh SUITE: turn the suite's root (vmtest/mkroot) into a bootable
# guest and print the directory holding it:
#   root.ext4   read-only base disk (label "root"); each boot gets an overlay
#   vmlinuz, initrd.img, kernel-version, dkms-version
# Cached under $apex_cache/images/SUITE-HASH, HASH over this recipe and the
# root it came from.
set -euo pipefail
here=$(dirname "$0")
source "$here/../lib/common.sh"

[ $# -eq 1 ] || apex_die "usage: $0 SUITE"
suite=$1
apex_need mkfs.ext4 e2fsprogs
apex_need flock util-linux

# APEX_ROOT overrides mkroot with a root directory made some other way.
root=${APEX_ROOT:-$("$apex_top/vmtest/mkroot" "$suite")}
[ -d "$root/boot" ] || apex_die "$suite: $root is not a root directory (from vmtest/mkroot $suite)"

# The root's path carries mkroot's recipe hash; dpkg's status changes with
# anything installed into it later.
key=$( { cat "$0"; echo "$root"; stat -c %Y "$root/var/lib/dpkg/status"; } | sha256sum | cut -c1-12)
images=$apex_cache/images
out=$images/$suite-$key
mkdir -p "$images"
# One builder per suite at a time; the lock also guards removing old images.
exec 9>"$images/$suite.lock"
if ! flock -n 9; then
	apex_stage "$suite: waiting for another build of this image"
	flock 9
fi
if [ -f "$out/root.ext4" ]; then
	apex_stage "$suite: cached image $out"
	printf '%s\n' "$out"
	exit 0
fi

kver=$(ls "$root/lib/modules" | sort -V | tail -n 1)
[ -f "$root/boot/vmlinuz-$kver" ] && [ -f "$root/boot/initrd.img-$kver" ] ||
	apex_die "$suite: $root has no /boot/vmlinuz-$kver with its initrd.img (initramfs-tools missing from the root?)"

apex_stage "$suite: making the base image from $root (kernel $kver)"
tmp=$images/.$suite-$key.tmp
trap 'rm -rf "$tmp"' EXIT
rm -rf "$tmp"
mkdir "$tmp"

# Room for what the guest adds: the package, a DKMS build, logs.
used_mib=$(du -s --block-size=1M --one-file-system "$root" | cut -f1)
size_mib=$((used_mib + 2048))
mkfs.ext4 -q -F -L root -d "$root" "$tmp/root.ext4" "${size_mib}M" >/dev/null ||
	apex_die "$suite: mkfs.ext4 -d failed (e2fsprogs >= 1.43 needed for -d)"
chmod 0444 "$tmp/root.ext4"
cp "$root/boot/vmlinuz-$kver" "$tmp/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$tmp/initrd.img"
echo "$kver" >"$tmp/kernel-version"
dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}\n' dkms >"$tmp/dkms-version"
mv "$tmp" "$out"
trap - EXIT

# Images of this suite from older recipes or roots are dead weight now.
for old in "$images/$suite"-*; do
	[[ ${old##*/} =~ ^$suite-[0-9a-f]{12}$ ]] && [ "$old" != "$out" ] || continue
	rm -rf "$old"
done
apex_stage "$suite: image ready ($size_mib MiB, sparse)"
printf '%s\n' "$out"
