#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# fetch-arm64.sh SUITE: what building for and booting SUITE's arm64 kernels
# takes, for SUITE's (amd64) root, the way Debian supports cross builds of
# modules. Prints the directory; progress on stderr. In it:
#   cross/    the cross compiler the arm64 kernels were built with
#             (gcc-N-aarch64-linux-gnu), the arm64 C library to build static
#             test programs, and whatever the root lacks for them
#   headers/  the arm64 and arm64-16k headers of the root's own kernel
#             version, to unpack with dpkg-deb -x (their scripts are the
#             root's amd64 linux-kbuild of that version)
#   images/   those two kernels (-unsigned: the same build without the
#             Secure Boot signature), and busybox-static for arm64
#   abi, flavours
# Cached per root in $apex_cache/arm64/.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || apex_die "usage: $0 SUITE"
suite=$1
apex_need apt-get apt

root=$("$apex_top/vmtest/mkroot" "$suite")
out=$apex_cache/arm64/$(basename "$root")
mkdir -p "$apex_cache/arm64"
exec 9>"$out.lock"
flock 9
if [ -f "$out/flavours" ]; then
	printf '%s\n' "$out"
	exit 0
fi

# The root's amd64 headers name the version (ABI) and the compiler.
common=$(basename "$(compgen -G "$root/usr/src/linux-headers-*-common" | sort -V | tail -n 1)")
abi=${common#linux-headers-}
abi=${abi%-common}
[ -n "$abi" ] || apex_die "$root has no linux-headers-*-common"
version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' "$common")
# e.g. CONFIG_CC_VERSION_TEXT="x86_64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0"
gcc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*-\)\{0,1\}\(gcc-[0-9]*\) .*$/\2/p' \
	"$root/usr/src/linux-headers-$abi-amd64/.config")
[ -n "$gcc" ] || apex_die "cannot tell the compiler of $root's kernel headers"

work=$(mktemp -d)
trap 'rm -rf "$work" "$out.tmp"' EXIT
apex_private_apt "$root" "$work" "$out.tmp/cross" "${suite%-backports}"
apt=("${apex_apt[@]}" -o APT::Architectures::=arm64)
apex_stage "arm64: downloading $gcc-aarch64-linux-gnu, the arm64 kernels $abi" \
	"and their headers"
{
	"${apt[@]}" update &&
		"${apt[@]}" install -y -d --no-install-recommends "$gcc-aarch64-linux-gnu" \
			libc6-dev-arm64-cross &&
		mkdir -p "$out.tmp/headers" && cd "$out.tmp/headers" &&
		"${apt[@]}" download "linux-headers-$abi-arm64:arm64=$version" \
			"linux-headers-$abi-arm64-16k:arm64=$version" &&
		mkdir -p "$out.tmp/images" && cd "$out.tmp/images" &&
		"${apt[@]}" download "linux-image-$abi-arm64-unsigned:arm64=$version" \
			"linux-image-$abi-arm64-16k-unsigned:arm64=$version" busybox-static:arm64
} >"$work/log" 2>&1 || {
	tail -n 20 "$work/log" >&2
	apex_die "cannot download the arm64 build packages for $suite" \
		"(is the mirror reachable? APEX_MIRROR=URL to choose one)"
}
rm -rf "$out.tmp/cross/partial" "$out.tmp/cross/lock"
printf '%s\n' arm64 arm64-16k >"$out.tmp/flavours"
printf '%s\n' "$abi" >"$out.tmp/abi"
rm -rf "$out"
mv "$out.tmp" "$out"
printf '%s\n' "$out"
