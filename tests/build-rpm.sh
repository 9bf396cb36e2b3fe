#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make rpm: build build/rpm/apex-dkms-<version>-1.noarch.rpm with rpmbuild
# from rpm/apex-dkms.spec and a tarball of a clean copy of the tree. The
# version is the one in debian/changelog, as for the .deb.
#   tests/build-rpm.sh [--version VERSION] [--outdir DIR]
#     --version  build under another version (upgrade tests)
#     --outdir   default build/rpm; its previous contents are replaced
set -euo pipefail

source "$(dirname "$0")/../vmtest/lib/common.sh"
source "$(dirname "$0")/lib/pkg-build.sh"
top=$apex_top

pkg_args "$top/build/rpm" "$@"
[ ${#pkg_rest[@]} -eq 0 ] ||
	apex_die "usage: $0 [--version VERSION] [--outdir DIR]"

apex_need rpmbuild rpm

# debian/changelog's top entry, read with sed so RPM systems need no dpkg:
# "apex-dkms (VERSION) ..." and " -- NAME <MAIL>  DATE".
changelog=$top/debian/changelog
[ -n "$version" ] || version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$changelog")
packager=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$changelog" | head -n 1)
[ -n "$version" ] && [ -n "$packager" ] ||
	apex_die "cannot read the version and maintainer from $changelog"
name=apex-dkms-$version

pkg_workdir
mkdir -p "$work/SOURCES" "$work/BUILD" "$work/RPMS" "$work/SRPMS"

apex_stage "rpm: tarball of the tree ($name.tar.gz)"
apex_copy_tree "$work/$name"
tar -C "$work" -czf "$work/SOURCES/$name.tar.gz" "$name"

apex_stage "rpm: rpmbuild -bb rpm/apex-dkms.spec"
pkg_build rpmbuild rpmbuild -bb \
	--define "_topdir $work" \
	--define "apex_version $version" \
	--define "packager $packager" \
	"$work/$name/rpm/apex-dkms.spec"

rpm=$work/RPMS/noarch/$name-1.noarch.rpm
pkg_publish rpmbuild "$rpm"
apex_stage "rpm: $outdir/$(basename "$rpm")"
