# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# What tests/build-deb.sh and tests/build-rpm.sh share: their two common
# options, a scratch directory, the quiet build step and the replaced
# output directory. Sourced after vmtest/lib/common.sh.

# pkg_args DEFAULT_OUTDIR ARGS...: --version VERSION and --outdir DIR into
# $version ('' = the changelog's) and $outdir. Other arguments stay, in
# order, in the array pkg_rest for options of the script's own.
# shellcheck disable=SC2034 # the variables are the caller's
pkg_args() {
	outdir=$1
	shift
	version=
	pkg_rest=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--version) version=${2:?--version needs a value}; shift 2 ;;
		--outdir) outdir=${2:?--outdir needs a directory}; shift 2 ;;
		*) pkg_rest+=("$1"); shift ;;
		esac
	done
}

# pkg_workdir: a scratch directory in $work, removed when the script exits.
pkg_workdir() {
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
}

# pkg_build NAME CMD...: run the build with its output in $work/build.log,
# shown (the last 40 lines) only if it fails.
pkg_build() {
	local name=$1 log=$work/build.log
	shift
	if ! "$@" >"$log" 2>&1; then
		tail -n 40 "$log" >&2
		apex_die "$name failed (last 40 lines above)"
	fi
}

# pkg_publish NAME FILE: $outdir afterwards holds FILE, which the build NAME
# must have made, and nothing else.
pkg_publish() {
	[ -f "$2" ] || apex_die "$1 did not produce $(basename "$2")"
	rm -rf "$outdir"
	mkdir -p "$outdir"
	cp "$2" "$outdir/"
}
