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
top=$apex_top

version=
outdir=$top/build/rpm
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=${2:?--version needs a value}; shift 2 ;;
	--outdir) outdir=${2:?--outdir needs a directory}; shift 2 ;;
	*) apex_die "usage: $0 [--version VERSION] [--outdir DIR]" ;;
	esac
done

apex_need rpmbuild rpm

# debian/changelog's top entry, read with sed so RPM systems need no dpkg:
# "apex-dkms (VERSION) ..." and " -- NAME <MAIL>  DATE".
changelog=$top/debian/changelog
[ -n "$version" ] || version=$(sed -n '1s/^[^ ]* (\([^)]*\)).*/\1/p' "$changelog")
packager=$(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$changelog" | head -n 1)
[ -n "$version" ] && [ -n "$packager" ] ||
	apex_die "cannot read the version and maintainer from $changelog"
name=apex-dkms-$version

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/SOURCES" "$work/BUILD" "$work/RPMS" "$work/SRPMS"

apex_stage "rpm: tarball of the tree ($name.tar.gz)"
apex_copy_tree "$work/$name"
tar -C "$work" -czf "$work/SOURCES/$name.tar.gz" "$name"

apex_stage "rpm: rpmbuild -bb rpm/apex-dkms.spec"
log=$work/build.log
if ! rpmbuild -bb \
	--define "_topdir $work" \
	--define "apex_version $version" \
	--define "packager $packager" \
	"$work/$name/rpm/apex-dkms.spec" >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	apex_die "rpmbuild failed (last 40 lines above)"
fi

rpm=$work/RPMS/noarch/$name-1.noarch.rpm
[ -f "$rpm" ] || apex_die "rpmbuild did not produce $(basename "$rpm")"
rm -rf "$outdir"
mkdir -p "$outdir"
cp "$rpm" "$outdir/"
apex_stage "rpm: $outdir/$(basename "$rpm")"
