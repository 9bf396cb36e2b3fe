#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/debug-kernel/build.sh: the debug guest kernel, built from Debian's
# own linux-source package of the bookworm root's kernel (the same version),
# with vmtest/debug-kernel/config merged onto tinyconfig: KASAN, lockdep,
# DEBUG_ATOMIC_SLEEP, kmemleak, DMA-API debugging and UBSAN. Prints the
# directory; progress on stderr. In it:
#   bzImage         the kernel
#   busybox         bookworm's static busybox, for the guest's initramfs
#   kernel-version  its `uname -r`
#   source/ kbuild/ its source and build trees (objects removed): build
#                   modules for it with KDIR=/debug-kernel/kbuild in an
#                   overlay of the bookworm root with this directory bound
#                   at /debug-kernel (vmtest/debug-kernel/run.sh does)
#   build.log, build-seconds
# Cached in $apex_cache/debug-kernel/ by the hash of this script, the
# config and the source version: a cold build runs once per change of them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"

suite=bookworm
root=$("$apex_top/vmtest/mkroot" "$suite")
common=$(basename "$(compgen -G "$root/usr/src/linux-headers-*-common" | sort -V | tail -n 1)")
abi=${common#linux-headers-}
abi=${abi%-common}
[ -n "$abi" ] || apex_die "$root has no linux-headers-*-common"
version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' "$common")
series=linux-source-${abi%.*}

key=$( (cat "$here/build.sh" "$here/config"; echo "$series=$version") | sha256sum | cut -c1-12)
out=$apex_cache/debug-kernel/$key
mkdir -p "$apex_cache/debug-kernel"
exec 9>"$out.lock"
flock 9
if [ -f "$out/bzImage" ]; then
	printf '%s\n' "$out"
	exit 0
fi

work=$(mktemp -d /tmp/apex-debug-kernel.XXXXXX)
trap 'rm -rf --one-file-system "$work" "$out.tmp"' EXIT
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
apex_private_apt "$root" "$work/apt" "$work/debs" "$suite"
apex_stage "debug kernel: downloading $series $version and its build tools"
{
	"${apex_apt[@]}" update &&
		"${apex_apt[@]}" install -y -d --no-install-recommends "$series=$version" \
			bc bison flex libelf-dev &&
		"${apex_apt[@]}" install -y -d --no-install-recommends busybox-static
} >"$work/apt.log" 2>&1 || {
	tail -n 20 "$work/apt.log" >&2
	apex_die "cannot download $series=$version (is the mirror reachable? APEX_MIRROR=URL)"
}

dpkg-deb --fsys-tarfile "$(compgen -G "$work/debs/busybox-static_*.deb")" |
	tar -xO --wildcards './*bin/busybox' >"$out.tmp/busybox"
chmod 755 "$out.tmp/busybox"
rm -f "$work"/debs/busybox-static_*.deb

apex_stage "debug kernel: building $series $version (cold: about 10 min alone on 2 cores, 20 beside the guests)"
t0=$(date +%s)
apex_in_overlay --bind "$work/debs" /debs --bind "$out.tmp" /debug-kernel \
	"$root" "$work/overlay" "$here" /recipe chroot "$work/overlay/merged" \
	/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -euc '
		series=$1
		dpkg -i /debs/*.deb >/dev/null
		cd /debug-kernel
		tar -xf "/usr/src/$series.tar.xz"
		mv "$series" source
		make -s -C source O=/debug-kernel/kbuild tinyconfig
		source/scripts/kconfig/merge_config.sh -m -O kbuild kbuild/.config /recipe/config
		make -s -C source O=/debug-kernel/kbuild olddefconfig
		# Every option asked for, and none of those left out, or the
		# kernel is not the one described.
		missing=$(grep "^CONFIG_" /recipe/config | while read -r line; do
			grep -qx "$line" kbuild/.config || echo "$line"
		done)
		[ -z "$missing" ] || { echo "not in the final .config: $missing"; exit 1; }
		unwanted=$(sed -n "s/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p" /recipe/config |
			while read -r name; do
				grep -E "^$name=[ym]$" kbuild/.config || true
			done)
		[ -z "$unwanted" ] || { echo "left out, yet in the final .config: $unwanted"; exit 1; }
		make -C source O=/debug-kernel/kbuild -j"$(nproc)" bzImage modules_prepare
		make -s -C source O=/debug-kernel/kbuild kernelrelease >kernel-version
		cp kbuild/arch/x86/boot/bzImage bzImage
		find kbuild -name "*.o" -delete
	' sh "$series" >"$out.tmp/build.log" 2>&1 || {
	tail -n 30 "$out.tmp/build.log" >&2
	cp "$out.tmp/build.log" "$apex_cache/debug-kernel/$key-failed.log"
	apex_die "the debug kernel did not build (log: $apex_cache/debug-kernel/$key-failed.log)"
}
echo "$(($(date +%s) - t0))" >"$out.tmp/build-seconds"
apex_stage "debug kernel $(cat "$out.tmp/kernel-version") built in $(cat "$out.tmp/build-seconds") s"
rm -rf "$out"
mv "$out.tmp" "$out"
# Earlier builds of other configurations, their locks and logs: only the
# newest build is kept.
find "$apex_cache/debug-kernel" -mindepth 1 -maxdepth 1 ! -name "$key" ! -name "$key.lock" \
	-exec rm -rf --one-file-system {} +
printf '%s\n' "$out"
