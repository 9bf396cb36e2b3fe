#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/arm64/build.sh OUT FLAVOUR...: an arm64 guest for each of trixie's
# FLAVOUR kernels (arm64: 4 KiB pages, arm64-16k: 16 KiB pages) in
# OUT/FLAVOUR:
#   vmlinuz          that kernel
#   initramfs.gz     busybox, gasket.ko and apex.ko cross-built for that
#                    kernel, the guest test program apex-pages cross-built
#                    static, and vmtest/arm64/init
# The builds run in one overlay of the trixie root with the cross compiler
# Debian built the kernels with (vmtest/image/fetch-arm64.sh), through the
# root's compile cache, which the compile matrix's same W=1 builds fill.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -ge 2 ] || apex_die "usage: $0 OUT arm64|arm64-16k..."
out=$1
shift
for flavour; do
	case $flavour in
	arm64 | arm64-16k) ;;
	*) apex_die "unknown flavour $flavour (arm64 or arm64-16k)" ;;
	esac
done
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mount and chroot)"
apex_need unshare util-linux
apex_need cpio cpio

root=$("$apex_top/vmtest/mkroot" trixie)
debs=$("$apex_top/vmtest/image/fetch-arm64.sh" trixie)
ccache_debs=$("$apex_top/vmtest/image/fetch-ccache.sh" trixie)
abi=$(cat "$debs/abi")
kvers=$abi-$(IFS=,; echo "{$*}")
gcc=$(basename "$(compgen -G "$debs/cross/gcc-*-aarch64-linux-gnu_*.deb")")
gcc=aarch64-linux-gnu-${gcc%%-aarch64-linux-gnu_*}

work=$(mktemp -d /tmp/apex-arm64.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/tree" "$work/out" "$out"
(cd "$apex_top" && git ls-files -z -co --exclude-standard src vmtest/guest |
	xargs -0 -r cp --parents -t "$work/tree")

apex_stage "arm64: building the modules for $kvers and apex-pages ($gcc)"
apex_in_compile_overlay "$ccache_debs" --bind "$debs" /arm64-debs --bind "$work/out" /out \
	"$root" "$work/overlay" "$work/tree" /tmp/apex chroot "$work/overlay/merged" \
	/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -euc '
		. /ccache/lib/chroot-ccache.sh
		abi=$1 gcc=$2
		shift 2
		dpkg -i /arm64-debs/cross/*.deb >/dev/null
		cd /tmp/apex
		make -C vmtest/guest CC="$gcc" OUT=/out/guest uapi /out/guest/apex-pages
		# As the compile matrix builds, so every compile is a cache hit.
		for flavour; do
			kdir=/usr/src/linux-headers-$abi-$flavour
			dpkg-deb -x /arm64-debs/headers/linux-headers-"$abi-$flavour"_*.deb /
			make -C src KDIR="$kdir" clean
			make -j"$(nproc)" -C src KDIR="$kdir" W=1
			mkdir -p "/out/$flavour"
			cp src/gasket.ko src/apex.ko "/out/$flavour/"
		done' sh "$abi" "$gcc" "$@" >"$out/build.log" 2>&1 || {
	tail -n 30 "$out/build.log" >&2
	apex_die "arm64: the build for $kvers failed (log: $out/build.log)"
}

busybox=$work/busybox
dpkg-deb --fsys-tarfile "$(compgen -G "$debs/images/busybox-static_*.deb")" |
	tar -xO ./usr/bin/busybox >"$busybox"
chmod 755 "$busybox"
for flavour; do
	kver=$abi-$flavour
	dir=$out/$flavour
	mkdir -p "$dir"
	# The kernel, busybox, and the initramfs around them.
	image=$(compgen -G "$debs/images/linux-image-$kver-unsigned_*.deb")
	dpkg-deb --fsys-tarfile "$image" | tar -x -C "$work" "./boot/vmlinuz-$kver"
	cp "$work/boot/vmlinuz-$kver" "$dir/vmlinuz"
	ramfs=$work/initramfs-$flavour
	mkdir -p "$ramfs"/{bin,dev,proc,sys,tmp,apex}
	cp "$busybox" "$ramfs/bin/busybox"
	cp "$apex_top/vmtest/arm64/init" "$ramfs/init"
	cp "$work/out/$flavour/gasket.ko" "$work/out/$flavour/apex.ko" \
		"$work/out/guest/apex-pages" "$ramfs/apex/"
	(cd "$ramfs" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initramfs.gz"
	printf '%s\n' "$kver" >"$dir/kernel-version"
	apex_stage "arm64: $dir/vmlinuz and initramfs.gz ($(du -k "$dir/initramfs.gz" | cut -f1) KiB)"
done
