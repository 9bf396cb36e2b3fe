#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# fetch-ccache.sh SUITE: the .deb files of ccache and of what SUITE's guest
# root lacks for it, from the suite's own archive (see vmtest/ccache-seed.sh
# for why a guest gets them). Prints the directory holding them; progress
# on stderr. Cached per guest root in $apex_cache/ccache-debs/.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -eq 1 ] || apex_die "usage: $0 SUITE"
suite=$1
apex_need apt-get apt

root=$("$apex_top/vmtest/mkroot" "$suite")
out=$apex_cache/ccache-debs/$(basename "$root")
mkdir -p "$apex_cache/ccache-debs"
exec 9>"$out.lock"
flock 9
if compgen -G "$out/ccache_*.deb" >/dev/null; then
	printf '%s\n' "$out"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work" "$out.tmp"' EXIT
# trixie-backports and trixie-arm64[-16k] are trixie's userland: their
# ccache comes from trixie, for the root's architecture.
dist=${suite%-backports}
dist=${dist%-arm64*}
apex_apt_arch=$(apex_suite_arch "$suite")
apex_private_apt "$root" "$work" "$out.tmp" "$dist"
apex_stage "ccache: downloading it for $suite"
{ "${apex_apt[@]}" update && "${apex_apt[@]}" install -y -d --no-install-recommends ccache; } \
	>"$work/log" 2>&1 || {
	tail -n 20 "$work/log" >&2
	apex_die "cannot download ccache for $suite" \
		"(is the mirror reachable? APEX_MIRROR=URL to choose one)"
}
rm -rf "$out.tmp/partial" "$out.tmp/lock"
rm -rf "$out"
mv "$out.tmp" "$out"
printf '%s\n' "$out"
