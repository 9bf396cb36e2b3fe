#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/arm64/build.sh FLAVOUR OUT: an arm64 guest for trixie's FLAVOUR
# kernel (arm64: 4 KiB pages, arm64-16k: 16 KiB pages) in OUT:
#   vmlinuz          that kernel
#   initramfs.gz     busybox, gasket.ko and apex.ko cross-built for that
#                    kernel, the guest test program apex-pages cross-built
#                    static, and vmtest/arm64/init
# The builds run in an overlay of the trixie root with the cross compiler
# Debian built the kernel with (vmtest/image/fetch-arm64.sh), through the
# root's compile cache, which the compile matrix's same builds fill.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 2 ] || apex_die "usage: $0 arm64|arm64-16k OUT"
flavour=$1 out=$2
case $flavour in
arm64 | arm64-16k) ;;
*) apex_die "unknown flavour $flavour (arm64 or arm64-16k)" ;;
esac
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mount and chroot)"
apex_need unshare util-linux
apex_need cpio cpio

root=$("$apex_top/vmtest/mkroot" trixie)
debs=$("$apex_top/vmtest/image/fetch-arm64.sh" trixie)
ccache_debs=$("$apex_top/vmtest/image/fetch-ccache.sh" trixie)
kver=$(cat "$debs/abi")-$flavour
gcc=$(basename "$(compgen -G "$debs/cross/gcc-*-aarch64-linux-gnu_*.deb")")
gcc=aarch64-linux-gnu-${gcc%%-aarch64-linux-gnu_*}

work=$(mktemp -d /tmp/apex-arm64.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/tree" "$work/out" "$out"
(cd "$apex_top" && git ls-files -z -co --exclude-standard src vmtest/guest |
	xargs -0 -r cp --parents -t "$work/tree")

apex_stage "arm64: building the modules for $kver and the test programs ($gcc)"
apex_in_compile_overlay "$ccache_debs" --bind "$debs" /arm64-debs --bind "$work/out" /out \
	"$root" "$work/overlay" "$work/tree" /tmp/apex chroot "$work/overlay/merged" \
	/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -euc '
		. /ccache/lib/chroot-ccache.sh
		dpkg -i /arm64-debs/cross/*.deb >/dev/null
		dpkg-deb -x /arm64-debs/headers/linux-headers-*-"$1"_*.deb /
		cd /tmp/apex
		make -C src KDIR=/usr/src/linux-headers-"$2"
		make -C vmtest/guest CC="$3" OUT=/out/guest uapi /out/guest/apex-pages
		cp src/gasket.ko src/apex.ko /out/' sh "$flavour" "$kver" "$gcc" \
	>"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	apex_die "arm64: the build for $kver failed (log: $out/build.log)"
}

# The kernel, busybox, and the initramfs around them.
image=$(compgen -G "$debs/images/linux-image-$kver-unsigned_*.deb")
dpkg-deb --fsys-tarfile "$image" | tar -x -C "$work" "./boot/vmlinuz-$kver"
cp "$work/boot/vmlinuz-$kver" "$out/vmlinuz"
ramfs=$work/initramfs
mkdir -p "$ramfs"/{bin,dev,proc,sys,tmp,apex}
dpkg-deb --fsys-tarfile "$(compgen -G "$debs/images/busybox-static_*.deb")" |
	tar -xO ./usr/bin/busybox >"$ramfs/bin/busybox"
chmod 755 "$ramfs/bin/busybox"
cp "$apex_top/vmtest/arm64/init" "$ramfs/init"
cp "$work/out/gasket.ko" "$work/out/apex.ko" "$work/out/guest/apex-pages" "$ramfs/apex/"
(cd "$ramfs" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.gz"
printf '%s\n' "$kver" >"$out/kernel-version"
apex_stage "arm64: $out/vmlinuz and initramfs.gz ($(du -k "$out/initramfs.gz" | cut -f1) KiB)"
