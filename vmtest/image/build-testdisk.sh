#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# build-testdisk.sh [--upgrade DIR] [--kernel DIR] [--ccache DIR] OUT.img DEB_DIR GUEST_DIR:
# the APEXTEST disk a guest mounts read-only at /mnt/apextest:
#   repo/       the .deb files of DEB_DIR with Packages and Release (a flat
#               apt repo); with --kernel also the .deb files of that DIR
#   tests/      a copy of GUEST_DIR (stage1, stage2, ... and the test
#               programs) and run-stages, which the guest runs at each boot
#   upgrade/    --upgrade: DIR's .deb files (a newer apex-dkms, installed
#               over the first one by stage2; not in repo/, or stage1 would
#               install it right away)
#   new-kernel  --kernel: DIR/kernel-version, the `uname -r` of the kernel
#               whose packages stage2 installs after apex-dkms
#   ccache/     --ccache: DIR's compile cache and ccache packages for the
#               guest's DKMS builds (vmtest/ccache-seed.sh)
#   doctor-states  --doctor-states: stage3 puts the guest into every broken
#               state apex-doctor must diagnose (vmtest/guest/doctor.sh)
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

usage="usage: $0 [--upgrade DIR] [--kernel DIR] [--ccache DIR] [--doctor-states]"
usage+=" OUT.img DEB_DIR GUEST_DIR"
upgrade_dir="" kernel_dir="" ccache_dir="" doctor_states=0
while [ $# -gt 0 ]; do
	case "$1" in
	--upgrade) upgrade_dir=${2:?--upgrade needs a directory}; shift 2 ;;
	--kernel) kernel_dir=${2:?--kernel needs a directory}; shift 2 ;;
	--ccache) ccache_dir=${2:?--ccache needs a directory}; shift 2 ;;
	--doctor-states) doctor_states=1; shift ;;
	-*) apex_die "$usage" ;;
	*) break ;;
	esac
done
[ $# -eq 3 ] || apex_die "$usage"
out=$1 deb_dir=$2 guest_dir=$3
apex_need dpkg-scanpackages dpkg-dev
apex_need mkfs.ext4 e2fsprogs

debs=("$deb_dir"/*.deb)
[ -e "${debs[0]}" ] || apex_die "no .deb in $deb_dir: build it with 'make deb'"
# Only stage1 is required: the guest powers off after the last stage.
[ -x "$guest_dir/stage1" ] ||
	apex_die "no stage1 in $guest_dir: build the guest tests with 'make guest-tests'"

if [ -n "$upgrade_dir" ]; then
	compgen -G "$upgrade_dir/*.deb" >/dev/null ||
		apex_die "no .deb in $upgrade_dir: build it with" \
			"'tests/build-deb.sh --version V --outdir $upgrade_dir'"
fi
if [ -n "$kernel_dir" ]; then
	[ -f "$kernel_dir/kernel-version" ] ||
		apex_die "no kernel-version in $kernel_dir: fetch the kernel with" \
			"vmtest/image/fetch-kernel.sh"
fi

tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
mkdir "$tree/repo"
cp "${debs[@]}" "$tree/repo/"
if [ -n "$upgrade_dir" ]; then
	mkdir "$tree/upgrade"
	cp "$upgrade_dir"/*.deb "$tree/upgrade/"
fi
if [ -n "$kernel_dir" ]; then
	cp "$kernel_dir"/*.deb "$tree/repo/"
	cp "$kernel_dir/kernel-version" "$tree/new-kernel"
fi
# A Release file listing the index: without one, newer apt also asks the
# flat repository for Translation files and reports each as an error.
(
	cd "$tree/repo"
	dpkg-scanpackages --multiversion . >Packages 2>/dev/null
	{
		printf 'Origin: apex-dkms vmtest\nLabel: apex-dkms vmtest\n'
		printf 'Date: %s\nSHA256:\n %s %s Packages\n' "$(LC_ALL=C date -Ru)" \
			"$(sha256sum <Packages | cut -d' ' -f1)" "$(stat -c %s Packages)"
	} >Release
)
[ "$doctor_states" = 0 ] || : >"$tree/doctor-states"
if [ -n "$ccache_dir" ]; then
	mkdir "$tree/ccache"
	cp -a "$ccache_dir/debs" "$ccache_dir/cache" "$tree/ccache/"
fi
cp -a "$guest_dir" "$tree/tests"
install -m 0755 "$apex_top/vmtest/guest/run-stages.sh" "$tree/tests/run-stages"

size_mib=$(( $(du -s --block-size=1M "$tree" | cut -f1) + 32 ))
rm -f "$out"
mkfs.ext4 -q -F -L APEXTEST -d "$tree" "$out" "${size_mib}M" >/dev/null
