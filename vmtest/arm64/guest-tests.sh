#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/arm64/guest-tests.sh OUT: the guest tests (vmtest/guest) for arm64
# guests in OUT, as `make -C vmtest/guest` builds them for x86-64 in
# build/guest: static test programs, cross-built in an overlay of the trixie
# root with the cross compiler Debian built trixie's arm64 kernels with
# (vmtest/image/fetch-arm64.sh), and the stage scripts.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || apex_die "usage: $0 OUT"
out=$1
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mount and chroot)"
apex_need unshare util-linux

root=$("$apex_top/vmtest/mkroot" trixie)
debs=$("$apex_top/vmtest/image/fetch-arm64.sh" trixie)
gcc=$(basename "$(compgen -G "$debs/cross/gcc-*-aarch64-linux-gnu_*.deb")")
gcc=aarch64-linux-gnu-${gcc%%-aarch64-linux-gnu_*}

work=$(mktemp -d /tmp/apex-arm64-guest.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/tree" "$work/out" "$out"
(cd "$apex_top" && git ls-files -z -co --exclude-standard src/uapi vmtest/guest |
	xargs -0 -r cp --parents -t "$work/tree")
apex_in_overlay --bind "$debs" /arm64-debs --bind "$work/out" /out \
	"$root" "$work/overlay" "$work/tree" /tmp/apex chroot "$work/overlay/merged" \
	/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -euc '
		dpkg -i /arm64-debs/cross/*.deb >/dev/null
		make -j"$(nproc)" -C /tmp/apex/vmtest/guest CC="$1" OUT=/out/guest
	' sh "$gcc" >"$work/build.log" 2>&1 || {
	tail -n 30 "$work/build.log" >&2
	apex_die "arm64: building the guest tests failed"
}
rm -rf "$out.new"
cp -a "$work/out/guest" "$out.new"
rm -rf "$out"
mv "$out.new" "$out"
