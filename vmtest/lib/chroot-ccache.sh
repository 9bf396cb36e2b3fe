# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
# Sourced (POSIX sh) as /ccache/lib/chroot-ccache.sh in an overlay of a
# suite's root made by apex_in_compile_overlay (common.sh): installs ccache
# from /ccache/debs with /ccache/store as its cache, so that the compiles
# and DKMS builds that follow go through it.
dpkg -i /ccache/debs/*.deb >/dev/null
export CCACHE_DIR=/ccache/store PATH="/usr/lib/ccache:$PATH"
# apt runs dpkg, and so the dkms hooks, with its own PATH.
echo 'DPkg::Path "/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin";' \
	>/etc/apt/apt.conf.d/00apex-compile-cache
# dkms 2.x sets its own PATH too, then sources framework.conf.
if grep -q '^PATH="/bin:' /usr/sbin/dkms; then
	echo 'PATH=/usr/lib/ccache:$PATH' >>/etc/dkms/framework.conf
fi
