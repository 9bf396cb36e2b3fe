#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Find a QEMU that can attach vfio-user devices (>= 10.1.1) and print the root
# directory it runs in: "/" for the host's own QEMU, otherwise a cached Debian
# root with trixie-backports' QEMU (x86_64 and aarch64 machines), built here
# with mmdebstrap on first use.
#
# A QEMU from such a root runs inside it with chroot (see launch.sh): started
# from outside through its loader it also scans the host's own QEMU module
# directory and aborts when another QEMU version is installed there.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

min_version=10.1.1

# version_ok VERSION: true if VERSION >= min_version.
version_ok() {
	[ "$(printf '%s\n%s\n' "$min_version" "$1" | sort -V | head -n1)" = "$min_version" ]
}

# QEMU_ROOT=/ (or any root with its own QEMU) skips the search.
if [ -n "${QEMU_ROOT:-}" ]; then
	printf '%s\n' "$QEMU_ROOT"
	exit 0
fi

if command -v qemu-system-x86_64 >/dev/null 2>&1 &&
	command -v qemu-system-aarch64 >/dev/null 2>&1; then
	host_version=$(qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }')
	if version_ok "$host_version"; then
		printf '/\n'
		exit 0
	fi
	apex_stage "host QEMU $host_version is older than $min_version: using a provisioned one"
fi

apex_need mmdebstrap mmdebstrap
mirror=$(apex_mirror)
root=$apex_cache/qemu-$(apex_hash "$0")

mkdir -p "$apex_cache"
exec 9>"$root.lock"
flock 9
if [ ! -x "$root/usr/bin/qemu-system-aarch64" ]; then
	apex_stage "provisioning QEMU from trixie-backports into $root (about 1 min)"
	tmp=$root.tmp
	log=$root.log
	rm -rf "$tmp"
	# Default-Release makes apt take qemu and whatever it needs from
	# backports, everything else from trixie.
	mapfile -t apt_opts < <(apex_apt_opts)
	if ! mmdebstrap --variant=apt --include=qemu-system-x86,qemu-system-arm,qemu-utils \
		--aptopt='APT::Default-Release "trixie-backports"' \
		--aptopt='APT::Install-Recommends "false"' \
		"${apt_opts[@]}" \
		trixie "$tmp" \
		"deb $mirror trixie main" \
		"deb $mirror trixie-backports main" >"$log" 2>&1; then
		tail -n 20 "$log" >&2
		rm -rf "$tmp"
		apex_die "mmdebstrap of the QEMU root failed (full log: $log)"
	fi
	mv "$tmp" "$root"
fi

version=$(chroot "$root" /usr/bin/qemu-system-x86_64 --version | awk 'NR == 1 { print $4 }')
version_ok "$version" ||
	apex_die "provisioned QEMU $version in $root is older than $min_version (is trixie-backports on the mirror?)"
printf '%s\n' "$root"
