# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2154
# Sourced (POSIX sh) in an overlay of a suite's root by vmtest/ccache-seed.sh
# and tests/packaging-chroot.sh, with ccache_debs set to ccache's .deb files
# and CCACHE_DIR to the cache: the DKMS builds that follow go through ccache.
dpkg -i "$ccache_debs"/*.deb >/dev/null
export CCACHE_DIR PATH="/usr/lib/ccache:$PATH"
# apt runs dpkg, and so the dkms hooks, with its own PATH.
echo 'DPkg::Path "/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin";' \
	>/etc/apt/apt.conf.d/00apex-compile-cache
# dkms 2.x sets its own PATH too, then sources framework.conf.
if grep -q '^PATH="/bin:' /usr/sbin/dkms; then
	echo 'PATH=/usr/lib/ccache:$PATH' >>/etc/dkms/framework.conf
fi
