# SPDX-License-Identifier: GPL-2.0-only
# Shared helpers for the vmtest and compile-matrix scripts (sourced, not run).
#
# Environment that every script honours:
#   APEX_CACHE           cache root (default: $XDG_CACHE_HOME or ~/.cache, + /apex-dkms)
#   APEX_MIRROR          Debian mirror URL (default: the host's apt configuration)
#   APEX_ALLOW_EXPIRED   1 = accept Release files past their Valid-Until date

apex_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
apex_cache=${APEX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/apex-dkms}

apex_die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

# Loops that poll every second (each guest's launch.sh, run-matrix.sh) tell
# the time with bash's EPOCHSECONDS (bash 5) and sleep with apex_sleep,
# starting no process: with a `date`, a `sleep` and a `tail` per poll, those
# shells and their processes took 10-16 % of the two cores while a make
# check's guests ran (perf, 2026-12-07).
[ -n "${EPOCHSECONDS:-}" ] || apex_die "bash 5 or newer is needed (EPOCHSECONDS)"
apex_t0=${apex_t0:-$EPOCHSECONDS}

# apex_sleep SECONDS: sleep without starting a process: a read that times
# out on a pipe nobody writes to (opened once per shell, read-write so that
# it never sees end-of-file). A trapped signal ends it at once.
apex_sleep() {
	[ -n "${apex_sleep_fd:-}" ] || exec {apex_sleep_fd}<> <(:)
	read -r -t "$1" -u "$apex_sleep_fd" _ || true
}

# apex_last_line FILE: set last_line to FILE's last line ("" if it has none),
# without a process.
# shellcheck disable=SC2034 # last_line is this function's result
apex_last_line() {
	local lines=()
	last_line=
	[ -f "$1" ] || return 0
	mapfile -t lines <"$1" || return 0
	[ ${#lines[@]} -eq 0 ] || last_line=${lines[-1]}
}

# apex_stage TEXT: one progress line with the seconds since the script started.
apex_stage() {
	printf '[%4ds] %s\n' "$((EPOCHSECONDS - apex_t0))" "$*" >&2
}

# apex_timeline RUN_DIR EVENT...: one line "EPOCH EVENT" of a guest run's
# timeline (vmtest/phase-table.sh reads it).
apex_timeline() {
	local dir=$1
	shift
	printf '%s %s\n' "$EPOCHSECONDS" "$*" >>"$dir/timeline"
}

# apex_wait_slot RUN_DIR NAME: in a run-matrix.sh lane, a prepared guest
# boots only once the matrix grants it a slot by creating the file
# APEX_SLOT; the wait is a phase of its timeline. The preparation runs at
# the priority of what the guests wait for; the guest itself, from here
# on, at nice APEX_GUEST_NICE (if set), its whole session with it.
apex_wait_slot() {
	if [ -n "${APEX_SLOT:-}" ] && [ ! -e "$APEX_SLOT" ]; then
		apex_timeline "$1" "waiting for a guest slot"
		apex_stage "$2: prepared, waiting for a guest slot"
		while [ ! -e "$APEX_SLOT" ]; do apex_sleep 1; done
	fi
	# session-nice sets the group of this shell's session, then renices this
	# shell, whose nice the guest's processes inherit.
	[ -z "${APEX_GUEST_NICE:-}" ] ||
		"$apex_top/vmtest/lib/session-nice" "$APEX_GUEST_NICE" \
			renice -n "$APEX_GUEST_NICE" -p "$$" >/dev/null
}

# apex_write_summary RUN_DIR NAME KERNEL DKMS START: the line run-matrix.sh
# reads from RUN_DIR/summary: name kernel dkms passed failed seconds, the
# counts from check-run.sh's RUN_DIR/counts.
apex_write_summary() {
	# The counts file sets all three; only two are printed.
	# shellcheck disable=SC2034
	local passed failed skipped
	# shellcheck source=/dev/null
	source "$1/counts"
	printf '%s %s %s %s %s %s\n' "$2" "$3" "$4" "$passed" "$failed" \
		"$((EPOCHSECONDS - $5))" >"$1/summary"
}

# apex_build LOG WHAT CMD...: a build step of a run script, its output
# appended to LOG; on failure the log's tail and an error naming WHAT.
apex_build() {
	local log=$1 what=$2
	shift 2
	apex_stage "$what"
	if ! "$@" >>"$log" 2>&1; then
		tail -n 30 "$log" >&2
		apex_die "$what failed (log: $log)"
	fi
}

# apex_upgrade_deb [OUTDIR]: the package once more under version
# <version>+upgradetest into OUTDIR (default build/deb-upgrade/), for the
# guest's upgrade test.
apex_upgrade_deb() {
	"$apex_top/tests/build-deb.sh" --outdir "${1:-$apex_top/build/deb-upgrade}" \
		--version \
		"$(dpkg-parsechangelog -l "$apex_top/debian/changelog" -S Version)+upgradetest"
}

# apex_need CMD PACKAGE: fail with the package that provides a missing command.
apex_need() {
	local how="install it with 'apt-get install $2' (or run 'make host-deps')"
	command -v "$1" >/dev/null 2>&1 || apex_die "'$1' not found: $how"
}

# apex_mirror: the Debian archive URL, from APEX_MIRROR or the host's apt sources.
apex_mirror() {
	if [ -n "${APEX_MIRROR:-}" ]; then
		printf '%s\n' "${APEX_MIRROR%/}"
		return
	fi
	local url
	# shellcheck disable=SC2016 # an awk program: its $ are awk's fields
	local sel='$1 == "deb" && $3 !~ /security/ && $2 ~ /debian\/?$/ { print $2; exit }'
	url=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2>/dev/null |
		awk '$2 !~ /security/ && $1 ~ /debian\/?$/ { print $1; exit }')
	if [ -z "$url" ]; then
		url=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
			awk "$sel")
	fi
	if [ -z "$url" ]; then
		url=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
			awk '/^URIs:/ && $2 !~ /security/ && $2 ~ /debian\/?$/ { print $2; exit }')
	fi
	[ -n "$url" ] ||
		apex_die "no Debian mirror in the host's apt configuration; set APEX_MIRROR=URL"
	printf '%s\n' "${url%/}"
}

# apex_apt_opts: extra mmdebstrap options (expired Release files, if allowed).
apex_apt_opts() {
	if [ "${APEX_ALLOW_EXPIRED:-0}" = 1 ]; then
		printf '%s\n' '--aptopt=Acquire::Check-Valid-Until "false"'
	fi
}

# apex_private_apt ROOT WORK ARCHIVES SUITE...: set the array apex_apt to an
# apt-get that sees ROOT's installed packages and only SUITE... of the
# mirror, keeps its state in WORK and downloads into ARCHIVES: what a guest
# made from ROOT would fetch, with nothing from the host's sources or pins.
# Packages are for amd64, or for the architecture in apex_apt_arch.
apex_private_apt() {
	local root=$1 work=$2 archives=$3 mirror s
	shift 3
	mirror=$(apex_mirror)
	mkdir -p "$work/lists/partial" "$work/cache" "$work/parts" "$archives/partial"
	for s in "$@"; do
		printf 'deb %s %s main\n' "$mirror" "$s"
	done >"$work/sources.list"
	apex_apt=(apt-get -q -o Dir::Etc::SourceList="$work/sources.list"
		-o Dir::Etc::SourceParts="$work/parts" -o Dir::Etc::PreferencesParts="$work/parts"
		-o Dir::Etc::Preferences="$work/parts/none" -o Dir::State::Lists="$work/lists"
		-o Dir::Cache="$work/cache" -o Dir::Cache::Archives="$archives"
		-o Dir::State::status="$root/var/lib/dpkg/status" -o Debug::NoLocking=1
		-o APT::Architecture="${apex_apt_arch:-amd64}"
		-o APT::Architectures::="${apex_apt_arch:-amd64}")
	[ "${APEX_ALLOW_EXPIRED:-0}" != 1 ] || apex_apt+=(-o Acquire::Check-Valid-Until=false)
}

# apex_in_overlay [--bind DIR AT]... ROOT OV DIR AT CMD...: run CMD with a
# throwaway overlay of ROOT at OV/merged, with /dev, /proc and DIR (at AT) in
# it, and each --bind DIR at its AT. The private mount namespace takes the
# overlay and its mounts with it when CMD ends.
apex_in_overlay() {
	local binds=()
	while [ "$1" = --bind ]; do
		binds+=("$2" "$3")
		shift 3
	done
	local root=$1 ov=$2
	binds+=("$3" "$4")
	shift 4
	mkdir -p "$ov/upper" "$ov/work" "$ov/merged"
	unshare --mount --propagation private bash -euc '
		root=$1 ov=$2 n=$3
		shift 3
		mount -t overlay overlay \
			-o "lowerdir=$root,upperdir=$ov/upper,workdir=$ov/work" "$ov/merged"
		mount --rbind /dev "$ov/merged/dev"
		mount -t proc proc "$ov/merged/proc"
		while [ "$n" -gt 0 ]; do
			mkdir -p "$ov/merged$2"
			mount --bind "$1" "$ov/merged$2"
			shift 2
			n=$((n - 1))
		done
		"$@"
	' sh "$root" "$ov" $((${#binds[@]} / 2)) "${binds[@]}" "$@"
}

# apex_in_compile_overlay CCACHE_DEBS [--bind DIR AT]... ROOT OV DIR AT CMD...:
# apex_in_overlay with ROOT's compile cache under /ccache: ccache's packages
# (CCACHE_DEBS, from vmtest/image/fetch-ccache.sh) in /ccache/debs, the
# store kept across runs (apex_compile_store) in /ccache/store, and
# /ccache/lib/chroot-ccache.sh, which a shell in the overlay sources to send
# its compiles, and the DKMS builds apt and dkms run, through ccache.
apex_in_compile_overlay() {
	local debs=$1 binds=() store
	shift
	while [ "$1" = --bind ]; do
		binds+=("$1" "$2" "$3")
		shift 3
	done
	store=$(apex_compile_store "$1")
	apex_in_overlay "${binds[@]}" --bind "$debs" /ccache/debs \
		--bind "$store" /ccache/store --bind "$apex_top/vmtest/lib" /ccache/lib "$@"
}

# apex_compile_store ROOT: the compile cache kept across runs for the DKMS
# builds done in overlays of ROOT (vmtest/ccache-seed.sh and
# tests/packaging-chroot.sh): the same compiler on the same headers and
# sources gives the same objects, so a run compiles only what changed
# since the last one. ccache drops the least recently used entries.
apex_compile_store() {
	local store
	store=$apex_cache/compile-cache/$(basename "$1")
	mkdir -p "$store"
	# Build steps create headers (the compat probes' result) and sources
	# (modpost's .mod.c) just before compiling them, which would otherwise
	# send ccache to its slower preprocessor mode; nothing changes them
	# during a build.
	[ -f "$store/ccache.conf" ] || cat >"$store/ccache.conf" <<-'CONF'
		compiler_check = content
		sloppiness = include_file_mtime,include_file_ctime
		max_size = 1G
	CONF
	printf '%s\n' "$store"
}

# apex_suite_arch SUITE: the Debian architecture of SUITE's guests and root
# (vmtest/mkroot): arm64 for SUITE-arm64 and SUITE-arm64-16k, else amd64.
apex_suite_arch() {
	case $1 in
	*-arm64 | *-arm64-16k) echo arm64 ;;
	*) echo amd64 ;;
	esac
}

# apex_hash FILE...: short hash of a recipe, for cache keys.
apex_hash() {
	cat "$@" | sha256sum | cut -c1-12
}

# apex_copy_tree DEST: copy the source tree into DEST without build output or
# anything git ignores (tracked and new files of a checkout; else all but
# build/, results/ and VCS data), so package builds leave the tree untouched.
apex_copy_tree() {
	mkdir -p "$1"
	if git -C "$apex_top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		local f
		while IFS= read -r -d '' f; do
			if [ -e "$apex_top/$f" ]; then printf '%s\0' "$f"; fi
		done < <(git -C "$apex_top" ls-files -z --cached --others --exclude-standard) |
			tar -C "$apex_top" --null -T - -cf - | tar -C "$1" -xf -
	else
		tar -C "$apex_top" --exclude=./build --exclude=./results --exclude-vcs -cf - . |
			tar -C "$1" -xf -
	fi
}
