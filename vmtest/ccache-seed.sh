#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# ccache-seed.sh SUITE OUT DEB_DIR UPGRADE_DIR [KERNEL_DIR]: compile cache
# for a guest's DKMS builds, and ccache's .deb files for the guest:
#   OUT/debs/   ccache and what SUITE's root lacks for it
#   OUT/cache/  the cache entries of these builds, with ccache.conf
#
# Why: the guest image is made from SUITE's root (vmtest/mkroot), so a DKMS
# build in the guest runs the very compiler on the very headers and sources
# as one in that root here. Under TCG each compiler run is about twelve
# times slower than here and the builds were most of a guest's time. So the
# sources are compiled here, in a throwaway overlay of the root, by the
# same dkms steps the guest takes (the package's install, the upgrade to
# UPGRADE_DIR's package; with KERNEL_DIR also the new kernel's dkms hook),
# and the guest's builds take the compiler's output from the cache. Each
# step is seeded: a build in another directory (/var/lib/dkms/apex/VERSION)
# gives different objects, since the paths are in them. Here the builds
# use the root's store kept across runs (apex_compile_store), so a run
# compiles only what changed since the last one. Everything
# else of the build still runs in the guest: dkms, make, modpost, the
# linker, BTF, signing, depmod. A file the cache does not hold is compiled
# in the guest as before; the guest prints the cache's hit and miss counts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"

if [ $# -lt 4 ] || [ $# -gt 5 ]; then
	apex_die "usage: $0 SUITE OUT DEB_DIR UPGRADE_DIR [KERNEL_DIR]"
fi
suite=$1 out=$2 deb_dir=$3 upgrade_dir=$4 kernel_dir=${5:-}
apex_need unshare util-linux
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mount and chroot)"
# An arm64 root's compiler and dkms are arm64 programs: QEMU runs them here
# (user-mode emulation, several times slower than natively, but much faster
# than the guest's full emulation). Only the chroot runs where they can:
# the overlay must be mounted outside a user namespace, where overlayfs
# refuses to rename directories (EXDEV, which dpkg does not expect).
in_root=()
[ "$(apex_suite_arch "$suite")" = amd64 ] || in_root=("$here/lib/arm64-userns")

root=$("$apex_top/vmtest/mkroot" "$suite")
ccache_debs=$("$here/image/fetch-ccache.sh" "$suite")
rm -rf "$out"
mkdir -p "$out/debs" "$out/cache" "$out/pkgs/upgrade" "$out/pkgs/kernel"
cp "$ccache_debs"/*.deb "$out/debs/"
cp "$deb_dir"/apex-dkms_*.deb "$out/pkgs/"
cp "$upgrade_dir"/apex-dkms_*.deb "$out/pkgs/upgrade/"
# The new kernel's headers (and what they need) for its dkms hook; not the
# kernel itself (the image and its 107 MB of modules to unpack).
if [ -n "$kernel_dir" ]; then
	for deb in "$kernel_dir"/*.deb; do
		case ${deb##*/} in
		linux-image-* | linux-modules-* | linux-binary-*) ;;
		*) cp "$deb" "$out/pkgs/kernel/" ;;
		esac
	done
fi
work=$(mktemp -d /tmp/apex-ccache-seed.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

# The entries depend only on the inputs of the builds: the root, what the
# packages give dkms (their version and dependencies, the source tree
# under /usr/src with its dkms.conf, the maintainer scripts that run
# dkms), the new kernel's headers and these steps. An earlier seed of the
# same inputs is taken as it is, instead of repeating its dkms steps (35-150
# s of a loaded machine per guest), also when only the rest of the package
# changed (apex-doctor, udev rule, documentation).
seed_inputs() {
	local deb
	printf '%s\n' "$root" "$ccache_debs"
	sha256sum "$0" "$here/lib/chroot-ccache.sh" | cut -d' ' -f1
	for deb in "$deb_dir"/apex-dkms_*.deb "$upgrade_dir"/apex-dkms_*.deb; do
		dpkg-deb -f "$deb" Package Version Depends
		rm -rf "$work/deb" && dpkg-deb -x "$deb" "$work/deb" &&
			dpkg-deb -e "$deb" "$work/deb/DEBIAN"
		(cd "$work/deb" && rm -f DEBIAN/control DEBIAN/md5sums &&
			find usr/src DEBIAN \( -type f -o -type l \) -printf '%m %p %l\n' |
			LC_ALL=C sort &&
			find usr/src DEBIAN -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
	done
	rm -rf "$work/deb"
	[ -z "$kernel_dir" ] || (cd "$kernel_dir" && find . -maxdepth 1 -name '*.deb' -print0 |
		LC_ALL=C sort -z | xargs -0 sha256sum)
}
seeds=$apex_cache/compile-seeds
kept=$seeds/$suite-$(seed_inputs | sha256sum | cut -c1-16)
if [ -f "$kept/complete" ]; then
	touch "$kept"
	cp -a "$kept/cache/." "$out/cache/"
	echo "the entries of an earlier seed with the same inputs: $kept" >"$out/seed.log"
	rm -rf "$out/pkgs"
	printf '%s\n' "$out"
	exit 0
fi
# The builds run against the store kept across runs; the guest gets a copy
# of the entries they used (ccache updates an entry's time when it is hit).
store=$(apex_compile_store "$root")
touch "$work/since"
# In the root: ccache, then the package, the upgrade and the new kernel's
# headers, in the guest's order, with ccache in PATH (vmtest/guest/pkg.sh,
# with_compile_cache).
cat >"$out/pkgs/steps.sh" <<'STEPS'
set -eu
. /ccache/lib/chroot-ccache.sh
ccache -z
dpkg -i /seed/pkgs/apex-dkms_*.deb
dpkg -i /seed/pkgs/upgrade/apex-dkms_*.deb
if compgen -G "/seed/pkgs/kernel/*.deb" >/dev/null; then
	dpkg -i /seed/pkgs/kernel/*.deb
fi
ccache -s
STEPS
apex_in_compile_overlay "$ccache_debs" "$root" "$work" "$out" /seed \
	"${in_root[@]}" chroot "$work/merged" /usr/bin/env -i \
	HOME=/root LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
	bash /seed/pkgs/steps.sh >"$out/seed.log" 2>&1 || {
	tail -n 30 "$out/seed.log" >&2
	apex_die "$suite: seeding the compile cache failed (log: $out/seed.log)"
}
rm -rf "$out/pkgs"
cp "$store/ccache.conf" "$out/cache/"
# Entries only: not the store's statistics, locks or temporary files.
(cd "$store" && find . -path ./tmp -prune -o -type f -newer "$work/since" \
	! -name stats ! -name CACHEDIR.TAG ! -name 'inode-cache*' ! -name ccache.conf \
	! -name '*.lock' -print0 | tar --null -T - -cf -) | tar -C "$out/cache" -xf -

# Kept for the next run; only the newest two per suite.
mkdir -p "$seeds"
rm -rf "$kept.tmp.$$" && mkdir "$kept.tmp.$$"
cp -a "$out/cache" "$kept.tmp.$$/cache" && touch "$kept.tmp.$$/complete"
if ! mv -T "$kept.tmp.$$" "$kept" 2>/dev/null; then
	rm -rf "$kept.tmp.$$"
fi
ls -dt "$seeds/$suite"-???????????????? 2>/dev/null | tail -n +3 |
	xargs -r rm -rf
printf '%s\n' "$out"
