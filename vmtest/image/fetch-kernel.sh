#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# fetch-kernel.sh SUITE FROM: the .deb files that `apt install -t FROM
# --no-install-recommends linux-image-amd64 linux-headers-amd64` would
# download in SUITE's guest
# root (the newer kernel, its headers and whatever the root lacks for them,
# e.g. linux-headers-*-common, linux-kbuild-*), for the guest's test of a
# kernel installed after apex-dkms, plus kexec-tools, with which the guest
# boots that kernel. Prints a directory holding the .deb files and
# kernel-version (the new `uname -r`); progress on stderr.
# Cached per guest root in $apex_cache/kernels/.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 2 ] || apex_die "usage: $0 SUITE FROM   (e.g. trixie trixie-backports)"
suite=$1 from=$2
apex_need apt-get apt

root=$("$apex_top/vmtest/mkroot" "$suite")
[ -f "$root/var/lib/dpkg/status" ] ||
	apex_die "$root has no dpkg status: rebuild it with vmtest/mkroot $suite"
out=$apex_cache/kernels/$(basename "$root")-$from+kexec-tools
mkdir -p "$apex_cache/kernels"
# One download at a time (run-matrix.sh fetches ahead while run-suite.sh may ask).
exec 9>"$out.lock"
flock 9
if [ -f "$out/kernel-version" ]; then
	printf '%s\n' "$out"
	exit 0
fi

# A private apt state: the root's package list as the installed set, only
# SUITE and FROM as sources, nothing from the host's sources or pins.
work=$(mktemp -d)
trap 'rm -rf "$work" "$out.tmp"' EXIT
apex_private_apt "$root" "$work" "$out.tmp" "$suite" "$from"
apt=("${apex_apt[@]}")

apex_stage "kernel: reading the $suite and $from indexes"
"${apt[@]}" update >"$work/log" 2>&1 || {
	tail -n 20 "$work/log" >&2
	apex_die "apt-get update for $suite and $from failed" \
		"(is the mirror reachable? APEX_MIRROR=URL to choose one)"
}
apex_stage "kernel: downloading linux-image-amd64, linux-headers-amd64 (from $from)" \
	"and kexec-tools"
"${apt[@]}" install -y -d --no-install-recommends -t "$from" \
	linux-image-amd64 linux-headers-amd64 kexec-tools >"$work/log" 2>&1 || {
	tail -n 20 "$work/log" >&2
	apex_die "cannot download the $from kernel for $suite"
}
rm -rf "$out.tmp/partial" "$out.tmp/lock"

# The new kernel: the linux-image-VERSION package among the downloads.
version=$(for d in "$out.tmp"/linux-image-*.deb; do dpkg-deb -f "$d" Package; done |
	sed -n 's/^linux-image-\([0-9].*\)$/\1/p' | head -n 1)
[ -n "$version" ] ||
	apex_die "no linux-image-VERSION package among the $from downloads: $(ls "$out.tmp")"
printf '%s\n' "$version" >"$out.tmp/kernel-version"
rm -rf "$out"
mv "$out.tmp" "$out"
apex_stage "kernel: $version, $(find "$out" -name '*.deb' | wc -l) packages in $out"
printf '%s\n' "$out"
