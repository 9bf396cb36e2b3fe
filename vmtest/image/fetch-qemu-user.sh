#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# fetch-qemu-user.sh: trixie's static qemu-aarch64 (package qemu-user), which
# runs arm64 programs on an x86-64 host (vmtest/lib/arm64-userns). Prints
# its path; progress on stderr. Cached in $apex_cache/qemu-user/. Only the
# one program is kept, unpacked from the package: installing qemu-user on
# the host would register it with the host kernel for every process.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 0 ] || apex_die "usage: $0"
apex_need apt-get apt
dir=$apex_cache/qemu-user
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9
if [ -x "$dir/qemu-aarch64" ]; then
	printf '%s\n' "$dir/qemu-aarch64"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/var/lib/dpkg"
: >"$work/root/var/lib/dpkg/status"
apex_private_apt "$work/root" "$work/apt" "$work/debs" trixie
apex_stage "qemu-user: downloading trixie's qemu-user for qemu-aarch64 (71 MB, once)"
{ "${apex_apt[@]}" update && "${apex_apt[@]}" install -y -d --no-install-recommends qemu-user; } \
	>"$work/log" 2>&1 || {
	tail -n 20 "$work/log" >&2
	apex_die "cannot download qemu-user (is the mirror reachable? APEX_MIRROR=URL to choose one)"
}
dpkg-deb --fsys-tarfile "$(compgen -G "$work/debs/qemu-user_*.deb")" |
	tar -x -C "$work" ./usr/bin/qemu-aarch64
file_type=$(od -An -tx1 -j 18 -N 2 "$work/usr/bin/qemu-aarch64" | tr -d ' ')
[ "$file_type" = 3e00 ] || apex_die "qemu-user's qemu-aarch64 is not an x86-64 program"
mv "$work/usr/bin/qemu-aarch64" "$dir/qemu-aarch64"
printf '%s\n' "$dir/qemu-aarch64"
