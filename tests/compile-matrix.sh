#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# tests/compile-matrix.sh [SUITE...]: build gasket.ko and apex.ko with W=1
# against each suite's kernel headers with that suite's own compiler, inside
# the suite's root from vmtest/mkroot, and run sparse (C=2) on one suite.
# SUITE-arm64 and SUITE-arm64-16k build for SUITE's arm64 kernels (4 KiB and
# 16 KiB pages) in the same root, with the cross compiler those kernels were
# built with (vmtest/image/fetch-arm64.sh).
# Each build also runs the compat probes one by one (GASKET_PROBE_EACH=1):
# they must decide as src/compat/probe.sh did compiling them together.
# Any warning, error or sparse report fails. Full logs: results/compile-matrix/.
#
# Environment: APEX_SPARSE_SUITE (default bookworm) picks the sparse suite;
# APEX_SRC builds another module tree instead of src/ (to test this script).
set -euo pipefail
source "$(dirname "$0")/../vmtest/lib/common.sh"
# mkroot's progress lines count from our start.
export apex_t0

suites=("$@")
[ ${#suites[@]} -gt 0 ] ||
	suites=(bullseye bookworm trixie trixie-backports forky trixie-arm64 trixie-arm64-16k)
sparse_suite=${APEX_SPARSE_SUITE:-bookworm}
src=${APEX_SRC:-$apex_top/src}
if [ ! -f "$src/Makefile" ]; then
	echo "error: $src/Makefile missing: no module source to build" >&2
	echo "0 passed, ${#suites[@]} failed"
	exit 1
fi
src=$(cd "$src" && pwd)
logdir=$apex_top/results/compile-matrix
mkdir -p "$logdir"
apex_need unshare util-linux

work=$(mktemp -d /tmp/apex-compile-matrix.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

# in_root ROOT LOG TREE CMD: run CMD (sh) as root in a throwaway overlay of
# ROOT (the image builder uses the same roots), in TREE, which is at
# /tmp/apex. Compiles go through the root's compile cache (apex_compile_store;
# ccache from $ccache_debs, the suite's packages): the same compiler, headers
# and source give the same objects and the same warnings, which ccache replays.
# For an arm64 flavour ($flavour set), the cross compiler is installed and
# that flavour's headers unpacked first, from $arm64_debs.
in_root() {
	local rc=0 binds=()
	[ -z "$flavour" ] || binds=(--bind "$arm64_debs" /arm64-debs)
	apex_in_compile_overlay "$ccache_debs" "${binds[@]}" \
		"$1" "$work/overlay" "$3" /tmp/apex chroot "$work/overlay/merged" \
		/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c '
			. /ccache/lib/chroot-ccache.sh
			if [ -n "$2" ]; then
				dpkg -i /arm64-debs/cross/*.deb >/dev/null
				dpkg-deb -x /arm64-debs/headers/linux-headers-*-"$2"_*.deb /
			fi
			cd /tmp/apex && eval "$1"' in_root "$4" "$flavour" >"$2" 2>&1 || rc=$?
	rm -rf --one-file-system "$work/overlay"
	return "$rc"
}

# fresh_tree SUITE: a clean copy of the module source (no build outputs).
fresh_tree() {
	local tree=$work/$1
	mkdir -p "$tree/src"
	if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$src" && git ls-files -z -co --exclude-standard . |
			xargs -0 -r cp --parents -t "$tree/src")
	else
		cp -a "$src/." "$tree/src"
	fi
	printf '%s\n' "$tree"
}

# timed_make ROOT LOG TREE KDIR [ARG]: the module's W=1 build (plus ARG)
# in ROOT; sets rc to its exit status and secs to how long it took.
timed_make() {
	local t0
	t0=$(date +%s)
	rc=0
	in_root "$1" "$2" "$3" "make -j$(nproc) -C src KDIR=$4 W=1${5:+ $5}" || rc=$?
	secs=$(($(date +%s) - t0))
}

count() {
	grep -c -E "$1" "$2" || true
}

# Diagnostics worth showing, as src/FILE:LINE: older Kbuild prints the
# in-root path, newer one the path relative to the module directory.
diagnostics() {
	grep -E 'warning:|error:' "$1" |
		sed -E 's#^/tmp/apex/##; t; s#^([^/. ][^: ]*\.[ch]:[0-9])#src/\1#' |
		head -n 20 || true
}

rows=()
details=()
passed=0
failed=0

record() { # suite kernel gcc result warnings errors seconds
	rows+=("$(printf '%-17s %-24s %-12s %-6s %8s %6s %7s' "$@")")
	if [ "$4" = PASS ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
}

for suite in "${suites[@]}"; do
	log=$logdir/$suite.log
	# SUITE-arm64[-16k]: SUITE's root, an arm64 flavour.
	base=${suite%-arm64*} flavour=
	[ "$base" = "$suite" ] || flavour=${suite#"$base"-}
	if ! root=$("$apex_top/vmtest/mkroot" "$base"); then
		record "$suite" - - FAIL - - 0
		details+=("$suite: no root (vmtest/mkroot $base failed)")
		continue
	fi
	if ! ccache_debs=$("$apex_top/vmtest/image/fetch-ccache.sh" "$base"); then
		record "$suite" - - FAIL - - 0
		details+=("$suite: no ccache packages (vmtest/image/fetch-ccache.sh $base failed)")
		continue
	fi
	if [ -n "$flavour" ]; then
		if ! arm64_debs=$("$apex_top/vmtest/image/fetch-arm64.sh" "$base"); then
			record "$suite" - - FAIL - - 0
			details+=("$suite: no arm64 packages (vmtest/image/fetch-arm64.sh $base failed)")
			continue
		fi
		kver=$(cat "$arm64_debs/abi")-$flavour
		kdir=/usr/src/linux-headers-$kver
		config=$(dpkg-deb --fsys-tarfile "$arm64_debs"/headers/linux-headers-*-"$flavour"_*.deb |
			tar -xO ".$kdir/.config")
	else
		kver=$(ls "$root/lib/modules" | sort -V | tail -n 1)
		# The build link is only valid inside the root.
		kdir=$(chroot "$root" readlink -f "/lib/modules/$kver/build")
		config=$(cat "$root$kdir/.config")
	fi
	# Debian's headers pin CC to the compiler the kernel was built with.
	cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\(.*\)"$/\1/p' <<<"$config")
	gcc_version=$(sed -E 's/^.*\) ([0-9][0-9.]*).*$/\1/' <<<"$cc")
	tree=$(fresh_tree "$suite")

	apex_stage "$suite: building against $kver with ${cc:-unknown compiler}"
	timed_make "$root" "$log" "$tree" "$kdir"
	warnings=$(count 'warning:' "$log")
	errors=$(count 'error:' "$log")
	missing=()
	for ko in gasket.ko apex.ko; do
		[ -n "$(find "$tree/src" -name "$ko" -print -quit)" ] || missing+=("$ko")
	done

	# W=1 adds -Wextra: a Makefile that dropped W=1 would pass silently.
	w1=$(cat "$tree"/src/.*.o.cmd 2>/dev/null | grep -c -e '-Wextra' || true)
	# Built for that very kernel (and so for its architecture and pages).
	vermagic=$(tr '\0' '\n' <"$tree/src/apex.ko" 2>/dev/null | sed -n 's/^vermagic=//p' | head -n 1)
	[ ${#missing[@]} -ne 0 ] || [ "${vermagic%% *}" = "$kver" ] ||
		missing+=("apex.ko for $kver (vermagic: ${vermagic:-none})")

	# compat/probe.sh compiles the probes together; each alone, they must
	# decide the same (the second make then rebuilds nothing).
	probed=$tree/src/compat/build/gasket_compat_probed.h probes_differ=
	if [ "$rc" -eq 0 ]; then
		cp "$probed" "$work/probed-together.h"
		alone_rc=0
		in_root "$root" "$logdir/$suite-probes-alone.log" "$tree" \
			"GASKET_PROBE_EACH=1 make -C src KDIR=$kdir W=1" || alone_rc=$?
		if [ "$alone_rc" -ne 0 ]; then
			probes_differ="make with the probes compiled one by one: exit $alone_rc"
		elif ! cmp -s "$work/probed-together.h" "$probed"; then
			probes_differ="the probes decide otherwise compiled one by one:"
			probes_differ+=" $(diff "$work/probed-together.h" "$probed" | grep '^[<>]' | tr '\n' ' ' || true)"
		fi
	fi

	result=PASS
	if [ "$rc" -ne 0 ] || [ "$warnings" -ne 0 ] || [ "$errors" -ne 0 ] ||
		[ ${#missing[@]} -ne 0 ] || [ "$w1" -eq 0 ] || [ -n "$probes_differ" ]; then
		result=FAIL
		why="make exit $rc, $warnings warnings, $errors errors"
		why+="${missing:+, not built: ${missing[*]}}"
		why+="$([ "$w1" -gt 0 ] || echo ', W=1 not in effect')"
		why+="${probes_differ:+, $probes_differ}"
		details+=("$suite: $why (log: $log)")
		mapfile -t -O ${#details[@]} details < <(diagnostics "$log" | sed 's/^/    /')
	fi
	record "$suite" "$kver" "$gcc_version" "$result" "$warnings" "$errors" "$secs"

	[ "$suite" = "$sparse_suite" ] || continue
	slog=$logdir/sparse-$suite.log
	if [ "$rc" -ne 0 ]; then
		record "sparse/$suite" "$kver" sparse FAIL - - 0
		details+=("sparse/$suite: not run, the build failed")
		continue
	fi
	# C=2 checks every file again on the built tree: only sparse speaks.
	apex_stage "$suite: sparse (C=2)"
	timed_make "$root" "$slog" "$tree" "$kdir" C=2
	reports=$(count 'warning:|error:' "$slog")
	checked=$(count '^ *CHECK ' "$slog")
	sparse_version=$(chroot "$root" sparse --version 2>/dev/null | cut -d' ' -f1)
	if [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ] && [ "$checked" -gt 0 ]; then
		result=PASS
	else
		result=FAIL
		why="make exit $rc, $checked files checked, $reports reports"
		details+=("sparse/$suite: $why (log: $slog)")
		mapfile -t -O ${#details[@]} details < <(diagnostics "$slog" | sed 's/^/    /')
	fi
	record "sparse/$suite" "$kver" "sparse-${sparse_version:-?}" "$result" "$reports" - "$secs"
done

echo
printf '%-17s %-24s %-12s %-6s %8s %6s %7s\n' suite kernel gcc result warnings errors seconds
printf '%s\n' "${rows[@]}"
if [ ${#details[@]} -gt 0 ]; then
	echo
	printf '%s\n' "${details[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
