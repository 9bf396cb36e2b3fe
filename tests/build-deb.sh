#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make deb: build apex-dkms_<version>_all.deb from a clean copy of the tree
# (the work tree stays untouched) into a flat apt repository:
#   OUTDIR/apex-dkms_<version>_all.deb  OUTDIR/Packages
# Usable as `deb [trusted=yes] file:OUTDIR ./`.
#
#   tests/build-deb.sh [--version VERSION] [--outdir DIR]
#     --version  build under another version (e.g. 1.0.0+upgradetest for
#                upgrade tests): a changelog entry is added to the copy only
#     --outdir   default build/deb; its previous contents are replaced
set -euo pipefail

source "$(dirname "$0")/../vmtest/lib/common.sh"
source "$(dirname "$0")/lib/pkg-build.sh"
top=$apex_top

pkg_args "$top/build/deb" "$@"
[ ${#pkg_rest[@]} -eq 0 ] ||
	apex_die "usage: $0 [--version VERSION] [--outdir DIR]"

apex_need dpkg-buildpackage dpkg-dev
apex_need dpkg-scanpackages dpkg-dev
apex_need dh debhelper
apex_need dh_dkms dh-dkms

pkg_workdir

apex_stage "deb: copying the tree"
apex_copy_tree "$work/apex-dkms"
cd "$work/apex-dkms"
if [ -n "$version" ]; then
	maint=$(dpkg-parsechangelog -S Maintainer)
	dist=$(dpkg-parsechangelog -S Distribution)
	{
		printf 'apex-dkms (%s) %s; urgency=medium\n\n' "$version" "$dist"
		printf '  * Rebuild of %s under another version.\n\n' \
			"$(dpkg-parsechangelog -S Version)"
		printf ' -- %s  %s\n\n' "$maint" "$(date -R)"
		cat debian/changelog
	} >debian/changelog.new
	mv debian/changelog.new debian/changelog
fi
version=$(dpkg-parsechangelog -S Version)

apex_stage "deb: dpkg-buildpackage -us -uc -b (apex-dkms $version)"
pkg_build dpkg-buildpackage dpkg-buildpackage -us -uc -b

deb=apex-dkms_${version}_all.deb
pkg_publish dpkg-buildpackage "$work/$deb"
(cd "$outdir" && dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null)
grep -q "^Package: apex-dkms$" "$outdir/Packages" ||
	apex_die "dpkg-scanpackages wrote no entry for $deb"
apex_stage "deb: $outdir/$deb"
