#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Install the host packages that building, packaging and the QEMU guests need.
# QEMU itself is not among them: vmtest provisions a new enough one (>= 10.1.1)
# into its own cached root.
set -euo pipefail

packages=(
	build-essential	# apexsim, guest test programs
	mmdebstrap	# suite roots for guests and the compile matrix
	cloud-image-utils	# cloud-localds: NoCloud seeds
	e2fsprogs	# mkfs.ext4 -d: disk images from directories
	dpkg-dev debhelper dh-dkms	# make deb
	lintian		# package checks
	rpm rpmlint	# make rpm
	cpio		# package-check unpacks the .rpm
	sparse		# the compile matrix's sparse run
	util-linux	# flock, mount
	xz-utils curl ca-certificates
)
names=("${packages[@]}")

missing=()
for p in "${names[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
		missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
	echo "host-deps: all ${#names[@]} host packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "error: missing host packages: ${missing[*]}" >&2
	echo "       run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "host-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
