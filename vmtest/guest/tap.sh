# SPDX-License-Identifier: GPL-2.0-only OR MIT
# TAP for the stage scripts (sourced): one numbered stream made of shell
# checks and of the C test programs' own TAP, renumbered. Every check runs
# under a timeout in its own process group, so a hung step is killed and
# reported instead of hanging the guest.
#
#   tap_check [-t SECONDS] [-v] NAME CMD...   ok when CMD exits 0 (-v: show
#                                             its output even then)
#   tap_prog [-t SECONDS] NAME CMD...         run a TAP-producing program
#   tap_ok NAME / tap_not_ok NAME REASON      record a result directly
#   tap_dep_fail NAME DEP                     not run because DEP failed
#   tap_deps_fail DEP NAME...                 each NAME not run because DEP failed
#   tap_skip NAME REASON                      not run here: a SKIP, not a pass
#   tap_diag TEXT                             a "# TEXT" line
#   tap_phase NAME                            the host times the test group
#                                             NAME from here to the next
#                                             (vmtest/phase-table.sh)
#   tap_passed                                true if the last result passed
#   tap_end                                   plan and "N passed, N failed"
#
# CMD may be an exported shell function (export -f); it runs in
# "bash -euo pipefail". Helpers always return 0 so the stage scripts can
# keep set -e; branch on tap_passed.

shopt -s lastpipe

tap_n=0
tap_npass=0
tap_nfail=0
tap_nskip=0
tap_last=ok
tap_default_timeout=${TAP_TIMEOUT:-60}

# Names and reasons must stay on one line and not start a TAP directive.
tap_flat() {
	local s=${*//$'\n'/ }
	printf '%s' "${s//#/_}"
}

tap_diag() {
	local line
	[ -n "$*" ] || return 0
	printf '%s\n' "$*" | while IFS= read -r line; do
		printf '# %s\n' "$line"
	done
}

tap_phase() {
	tap_diag "apex-vmtest: phase $*"
}

tap_ok() {
	tap_n=$((tap_n + 1))
	tap_npass=$((tap_npass + 1))
	tap_last=ok
	printf 'ok %d - %s\n' "$tap_n" "$(tap_flat "$1")"
}

tap_not_ok() {
	tap_n=$((tap_n + 1))
	tap_nfail=$((tap_nfail + 1))
	tap_last=fail
	printf 'not ok %d - %s # %s\n' "$tap_n" "$(tap_flat "$1")" "$(tap_flat "${2:-failed}")"
}

tap_dep_fail() {
	tap_not_ok "$1" "skipped because $2 failed"
}

tap_deps_fail() {
	local dep=$1 name
	shift
	for name in "$@"; do
		tap_dep_fail "$name" "$dep"
	done
}

tap_skip() {
	tap_n=$((tap_n + 1))
	tap_nskip=$((tap_nskip + 1))
	tap_last=skip
	printf 'ok %d - %s # SKIP %s\n' "$tap_n" "$(tap_flat "$1")" "$(tap_flat "$2")"
}

tap_passed() {
	[ "$tap_last" = ok ]
}

# tap_run SECONDS OUTFILE CMD...: run CMD with a hard timeout; returns its status.
tap_run() {
	local t=$1 out=$2
	shift 2
	local rc=0
	timeout -k 10 "$t" bash -euo pipefail -c '"$@"' tap "$@" >"$out" 2>&1 </dev/null || rc=$?
	return "$rc"
}

tap_why_status() {
	local rc=$1 t=$2
	case $rc in
	124 | 137) printf 'timed out after %ss' "$t" ;;
	*) printf 'exit status %s' "$rc" ;;
	esac
}

tap_check() {
	local t=$tap_default_timeout verbose=0 out rc=0 start
	while [ $# -gt 0 ]; do
		case $1 in
		-t) t=$2; shift 2 ;;
		-v) verbose=1; shift ;;
		*) break ;;
		esac
	done
	local name=$1
	shift
	out=$(mktemp)
	start=$SECONDS
	tap_run "$t" "$out" "$@" || rc=$?
	if [ $((SECONDS - start)) -ge 10 ]; then
		printf '\n(took %d s)\n' $((SECONDS - start)) >>"$out"
		verbose=1
	fi
	if [ "$rc" = 0 ]; then
		tap_ok "$name"
		[ "$verbose" = 0 ] || tap_diag "$(tail -n 20 "$out")"
	else
		tap_not_ok "$name" "$(tap_why_status "$rc" "$t")"
		tap_diag "$(tail -n 30 "$out")"
	fi
	rm -f "$out"
}

# One line of a program's TAP, renumbered into ours with @tag in front.
tap_prog_line() {
	local tag=$1 line=$2 rest
	local re='^(not )?ok($|[[:space:]]+([0-9]+)?[[:space:]]*(- )?(.*)$)'
	if [[ $line =~ $re ]]; then
		rest=${BASH_REMATCH[5]}
		tap_n=$((tap_n + 1))
		tap_prog_seen=$((tap_prog_seen + 1))
		if [ -n "${BASH_REMATCH[1]}" ]; then
			tap_nfail=$((tap_nfail + 1))
			tap_prog_failed=1
			printf 'not ok %d - %s: %s\n' "$tap_n" "$tag" "$rest"
		else
			if [[ ${rest,,} == *"# skip"* ]]; then
				tap_nskip=$((tap_nskip + 1))
			else
				tap_npass=$((tap_npass + 1))
			fi
			printf 'ok %d - %s: %s\n' "$tap_n" "$tag" "$rest"
		fi
	elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
		tap_prog_plan=${BASH_REMATCH[1]}
	elif [[ $line =~ ^[0-9]+\ passed,\ [0-9]+\ failed$ ]]; then
		:
	elif [[ $line == \#* ]]; then
		printf '%s\n' "$line"
	elif [ -n "$line" ]; then
		printf '# %s\n' "$line"
	fi
}

tap_prog() {
	local t=$tap_default_timeout line rc err rcf start=$SECONDS
	if [ "$1" = -t ]; then
		t=$2
		shift 2
	fi
	local tag=$1
	shift
	err=$(mktemp)
	rcf=$(mktemp)
	tap_prog_seen=0 tap_prog_failed=0 tap_prog_plan=
	# Streamed, so a guest killed mid-run still leaves the lines so far.
	{
		rc=0
		timeout -k 10 "$t" "$@" 2>"$err" </dev/null || rc=$?
		echo "$rc" >"$rcf"
	} | while IFS= read -r line; do
		tap_prog_line "$tag" "$line"
	done
	rc=$(cat "$rcf")
	[ ! -s "$err" ] || tap_diag "$tag stderr: $(tail -n 20 "$err")"
	tap_diag "$tag took $((SECONDS - start)) s"
	rm -f "$err" "$rcf"
	# The program's own failures are already counted; report only the rest.
	if [ "$rc" != 0 ] && [ "$tap_prog_failed" = 0 ]; then
		tap_not_ok "$tag completes" "$(tap_why_status "$rc" "$t")"
	elif [ "$tap_prog_plan" != "$tap_prog_seen" ]; then
		tap_not_ok "$tag completes" "planned ${tap_prog_plan:-no plan}, ran $tap_prog_seen"
	elif [ "$tap_prog_failed" = 0 ]; then
		tap_last=ok
		return 0
	fi
	tap_last=fail
}

tap_end() {
	printf '1..%d\n' "$tap_n"
	[ "$tap_nskip" = 0 ] || printf '# %d skipped\n' "$tap_nskip"
	printf '%d passed, %d failed\n' "$tap_npass" "$tap_nfail"
	[ "$tap_nfail" = 0 ] && [ "$tap_n" -gt 0 ]
}
