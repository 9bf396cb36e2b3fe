#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Host-side checks of the guest test plumbing, runnable anywhere (nothing
# here opens an apex device or loads a module): the TAP helpers renumber
# and account correctly, hung steps are cut off, every test program fails
# cleanly with complete TAP when there is no device, and the control
# channel client talks the line protocol and times out.
#
#   check.sh BUILD_DIR      (make -C vmtest/guest check)
set -euo pipefail
build=${1:?usage: check.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../../lib/checks.sh
source "$here/../../lib/checks.sh"

check() {
	local name=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	result "$rc" "$name" "$out"
}

# --- tap.sh ----------------------------------------------------------------
cat >"$work/stage" <<EOS
#!/bin/bash
set -euo pipefail
source "$build/tap.sh"
tap_check "passes" true
tap_check "fails" false
tap_passed && echo "tap_passed after a failure" >&2
tap_check -t 1 "hangs" sleep 20
mine() { echo "from a function"; [ "\$1" = yes ]; }
export -f mine
tap_check "function" mine yes
tap_dep_fail "later" "fails"
tap_prog good "$here/fake-prog.sh" good
tap_prog bad "$here/fake-prog.sh" bad
tap_prog crash "$here/fake-prog.sh" crash
tap_prog short "$here/fake-prog.sh" short
tap_prog -t 1 hang "$here/fake-prog.sh" hang
tap_end
EOS
chmod +x "$work/stage"
rc=0
SECONDS=0
"$work/stage" >"$work/out" 2>"$work/err" || rc=$?
secs=$SECONDS
grep -v '^#' "$work/out" >"$work/tap"
cat >"$work/want" <<'EOW'
ok 1 - passes
not ok 2 - fails # exit status 1
not ok 3 - hangs # timed out after 1s
ok 4 - function
not ok 5 - later # skipped because fails failed
ok 6 - good: first
ok 7 - good: second # SKIP no such thing
ok 8 - bad: first
not ok 9 - bad: second # why
ok 10 - crash: first
not ok 11 - crash completes # exit status 139
ok 12 - short: first
not ok 13 - short completes # planned 3, ran 1
ok 14 - hang: first
not ok 15 - hang completes # timed out after 1s
1..15
7 passed, 7 failed
EOW
check "tap.sh: renumbered stream, results and closing line" diff -u "$work/want" "$work/tap"
result "$([ "$rc" = 1 ] && echo 0 || echo 1)" "tap.sh: tap_end exits 1 when a test failed" \
	"exit $rc"
result "$(grep -q 'tap_passed after a failure' "$work/err" && echo 1 || echo 0)" \
	"tap.sh: tap_passed is false after a failure"
result "$([ "$secs" -lt 25 ] && echo 0 || echo 1)" "tap.sh: hung steps are cut off (${secs}s)"
check "tap.sh: stray program output becomes a diagnostic" grep -qx '# stray output' "$work/out"
out=$(bash -c "source '$build/tap.sh'; tap_deps_fail 'the install' 'a' 'b c'; tap_end" \
	2>&1) || true
result "$([ "$(grep -v '^#' <<<"$out")" = "$(printf '%s\n' \
	'not ok 1 - a # skipped because the install failed' \
	'not ok 2 - b c # skipped because the install failed' '1..2' '0 passed, 2 failed')" ] &&
	echo 0 || echo 1)" \
	"tap.sh: tap_deps_fail fails each name, naming the dependency" "$out"
out=$(bash -c "source '$build/tap.sh'; tap_skip 'not here' 'no chip'; tap_end" 2>&1) || true
result "$([ "$out" = "$(printf \
	'ok 1 - not here # SKIP no chip\n1..1\n# 1 skipped\n0 passed, 0 failed')" ] &&
	echo 0 || echo 1)" \
	"tap.sh: tap_skip is a SKIP line, not counted as passed" "$out"
check "tap.sh: a passing stage exits 0" \
	bash -c "source '$build/tap.sh'; tap_check ok true >/dev/null; tap_end >/dev/null"

# --- the C programs without a device ----------------------------------------
# complete_tap FILE: numbered lines, a plan that matches, the closing line.
complete_tap() {
	local n plan
	n=$(grep -cE '^(not )?ok [0-9]+ - ' "$1")
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$1")
	[ "$n" -gt 0 ] && [ "$plan" = "$n" ] &&
		tail -n 1 "$1" | grep -qE '^[0-9]+ passed, [0-9]+ failed$' &&
		grep -q '^not ok' "$1"
}
for prog in apex-ioctl apex-mmap apex-owner apex-power apex-hostile "apex-demo --tap" \
	apex-exit; do
	rc=0
	# shellcheck disable=SC2086
	APEX_CTL_PATH=$work/no-ctl timeout 20 "$build"/$prog /nonexistent/apex_0 \
		>"$work/prog" 2>&1 || rc=$?
	result "$([ "$rc" = 1 ] && complete_tap "$work/prog" && echo 0 || echo 1)" \
		"$prog without a device: complete TAP, failures, exit 1" \
		"exit $rc; $(cat "$work/prog")"
done
for prog in apex-unbind apex-restore; do
	rc=0
	timeout 20 "$build/$prog" /nonexistent/apex_0 true >"$work/prog" 2>&1 || rc=$?
	result "$([ "$rc" = 1 ] && complete_tap "$work/prog" && echo 0 || echo 1)" \
		"$prog without a device: complete TAP, failures, exit 1" \
		"exit $rc; $(cat "$work/prog")"
done
rc=0
timeout 20 "$build/apex-unbind" --remove /nonexistent/apex_0 true >"$work/prog" 2>&1 || rc=$?
result "$([ "$rc" = 1 ] && complete_tap "$work/prog" && echo 0 || echo 1)" \
	"apex-unbind --remove without a device: complete TAP, failures, exit 1" \
	"exit $rc; $(cat "$work/prog")"
rc=0
"$build/apex-unbind" --remove not-a-path >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 2 ] && echo 0 || echo 1)" "apex-unbind --remove: usage error exits 2" "exit $rc"
rc=0
timeout 20 "$build/apex-demo" /nonexistent/apex_0 >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 1 ] && echo 0 || echo 1)" "apex-demo without a device exits 1" "exit $rc"
# Paths that do not exist: it fails at open(), before any module syscall.
rc=0
timeout 20 "$build/apex-cycles" 1 /nonexistent/gasket.ko /nonexistent/apex.ko \
	/nonexistent/apex_0 >"$work/prog" 2>&1 || rc=$?
result "$([ "$rc" = 1 ] && complete_tap "$work/prog" &&
	grep -q 'cycle 1: loading gasket.ko: ENOENT' "$work/prog" && echo 0 || echo 1)" \
	"apex-cycles without the module files: complete TAP naming cycle and step, exit 1" \
	"exit $rc; $(cat "$work/prog")"
for prog in apex-ioctl apex-mmap apex-owner apex-power apex-hostile apex-memlock apex-demo \
	apex-unbind apex-restore apex-cycles apex-exit; do
	rc=0
	"$build/$prog" not-a-path >/dev/null 2>&1 || rc=$?
	result "$([ "$rc" = 2 ] && echo 0 || echo 1)" "$prog: usage error exits 2" "exit $rc"
done

# --- apex-open ------------------------------------------------------------------
check "apex-open: expected errno matches" "$build/apex-open" /nonexistent rw ENOENT
check "apex-open: success matches ok" "$build/apex-open" /dev/null ro ok
rc=0
"$build/apex-open" /nonexistent rw ok >/dev/null || rc=$?
result "$([ "$rc" = 1 ] && echo 0 || echo 1)" "apex-open: a mismatch exits 1" "exit $rc"
rc=0
"$build/apex-open" /dev/null sideways ok >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 2 ] && echo 0 || echo 1)" "apex-open: bad mode exits 2" "exit $rc"

# --- apex-ctl against a fake control socket ---------------------------------------
gcc -O2 -Wall -Wextra -Werror -o "$work/fake-ctl" "$here/fake-ctl.c"
sock=$work/ctl.sock
"$work/fake-ctl" "$sock" reply 2 &
fake=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
out=$(APEX_CTL_PATH=$sock timeout 10 "$build/apex-ctl" get scu3 2>&1) || true
result "$([ "$out" = "ok get scu3" ] && echo 0 || echo 1)" \
	"apex-ctl: sends one line, prints the reply line" "$out"
out=$(APEX_CTL_PATH=$sock timeout 10 "$build/apex-ctl" -d 3 -t 5 state 2>&1) || true
result "$([ "$out" = "ok state" ] && echo 0 || echo 1)" "apex-ctl: options before the command" \
	"$out"
wait "$fake" || true
"$work/fake-ctl" "$sock" silent 1 &
fake=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
rc=0
SECONDS=0
APEX_CTL_PATH=$sock timeout 10 "$build/apex-ctl" -t 1 state >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 1 ] && [ "$SECONDS" -le 3 ] && echo 0 || echo 1)" \
	"apex-ctl: no reply -> exit 1 after the timeout" "exit $rc after ${SECONDS}s"
wait "$fake" || true
rc=0
APEX_CTL_PATH=$work/none timeout 10 "$build/apex-ctl" state >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 1 ] && echo 0 || echo 1)" "apex-ctl: missing channel -> exit 1" "exit $rc"
rc=0
"$build/apex-ctl" -t 0 state >/dev/null 2>&1 || rc=$?
result "$([ "$rc" = 2 ] && echo 0 || echo 1)" "apex-ctl: bad timeout is a usage error" "exit $rc"

# --- stage helpers -------------------------------------------------------------
out=$(bash -c "source '$build/lib.sh'; source '$build/pkg.sh'; re_escape '1.0.0+up(x)'" \
	2>&1) || true
result "$([ "$out" = '1\.0\.0\+up\(x\)' ] && echo 0 || echo 1)" \
	"pkg.sh: re_escape quotes ERE metacharacters" "$out"
out=$(bash -c "source '$build/lib.sh'; source '$build/pkg.sh'
	status_entries \"\$(printf '%s\\n' \
'/usr/sbin/dkms: line 2497: echo: write error: Broken pipe' \
		'apex/1.0.0+up, 6.1.0-50-amd64, x86_64: installed')\"
	status_entries 'apex, 1.0.0, 5.10.0-32-amd64, x86_64: installed'
	status_entries \"\$(printf '%s\\n' 'apex/1.0.0, 6.1, x86_64: installed' \
'apex/1.0.1, 6.1, x86_64: installed')\"
	status_entries ''" 2>&1 | tr '\n' ' ') || true
desc="pkg.sh: status_entries counts dkms status entries (2.8 and 3.x forms),"
result "$([ "$out" = '1 1 2 0 ' ] && echo 0 || echo 1)" \
	"$desc not its stray errors" "$out"

# --- run-stages: which stages run in a boot, and how the boot ends --------------
# boot DISK: one boot of a guest whose test disk is DISK (stage scripts and
# run-stages); the fake systemctl records the target in $work/target.
printf '#!/bin/sh\necho "$*" >"%s/target"\n' "$work" >"$work/systemctl"
chmod +x "$work/systemctl"
boot() {
	rm -f "$work/target"
	APEX_STATE_DIR=$1/state APEX_RESULTS_PORT=$1/port APEX_SYSTEMCTL=$work/systemctl \
		timeout 20 "$1/run-stages" || echo "run-stages exited $?" >>"$1/port"
	sed -n 's/.* start \([a-z]*\)\.target$/\1/p' "$work/target" 2>/dev/null || true
}
# stage DISK N [NEXT [STATUS]]: stageN prints its name, asks for NEXT, exits STATUS.
stage() {
	printf '#!/bin/sh\necho "ran stage%s"\n%sexit %s\n' "$2" \
		"${3:+echo $3 >\"\$APEX_STATE_DIR/next\"
}" "${4:-0}" >"$1/stage$2"
	chmod +x "$1/stage$2"
}
ran() {
	grep '^ran ' "$1/port" | tr '\n' ' ' | sed 's/ $//'
}
disk=$work/disk
mkdir -p "$disk"
: >"$disk/port"
install -m 0755 "$here/../run-stages.sh" "$disk/run-stages"
stage "$disk" 1 '' 1
stage "$disk" 2 continue
stage "$disk" 3
stage "$disk" 4
t=$(boot "$disk")
result "$([ "$t" = reboot ] && [ "$(ran "$disk")" = "ran stage1" ] && echo 0 || echo 1)" \
	"run-stages: boot 1 runs stage1 only, then reboots" "target '$t'; $(cat "$disk/port")"
result "$(grep -qx '# apex-vmtest: stage1 start (kernel .*)' "$disk/port" &&
	grep -qx '# apex-vmtest: stage1 exit 1' "$disk/port" && echo 0 || echo 1)" \
	"run-stages: frames a stage with start and its exit status" "$(cat "$disk/port")"
result "$([ "$(tail -n 1 "$disk/port")" = '# apex-vmtest: boot ends: reboot' ] &&
	echo 0 || echo 1)" \
	"run-stages: the boot's last line on the port says how it ends" "$(cat "$disk/port")"
: >"$disk/port"
t=$(boot "$disk")
result "$([ "$t" = reboot ] && [ "$(ran "$disk")" = "ran stage2 ran stage3" ] &&
	echo 0 || echo 1)" \
	"run-stages: 'continue' runs the next stage in the same boot" \
	"target '$t'; $(cat "$disk/port")"
: >"$disk/port"
t=$(boot "$disk")
result "$([ "$t" = poweroff ] && [ "$(ran "$disk")" = "ran stage4" ] && echo 0 || echo 1)" \
	"run-stages: the last stage powers off" "target '$t'; $(cat "$disk/port")"
: >"$disk/port"
t=$(boot "$disk")
result "$([ "$t" = poweroff ] && [ -z "$(ran "$disk")" ] && echo 0 || echo 1)" \
	"run-stages: a boot after the last stage runs nothing and powers off" \
	"target '$t'; $(cat "$disk/port")"
rm -rf "$disk/state" "$disk/stage4"
: >"$disk/port"
stage "$disk" 2 kexec
boot "$disk" >/dev/null
t=$(boot "$disk")
result "$([ "$t" = kexec ] && [ "$(ran "$disk")" = "ran stage1 ran stage2" ] &&
	echo 0 || echo 1)" \
	"run-stages: 'kexec' ends the boot with kexec.target before the next stage" \
	"target '$t'; $(cat "$disk/port")"
rm -rf "$disk/state"
: >"$disk/port"
stage "$disk" 1 sideways
t=$(boot "$disk")
result "$([ "$t" = poweroff ] && grep -q "stage1 asked for 'sideways' next" "$disk/port" &&
	echo 0 || echo 1)" \
	"run-stages: an unknown request is reported and powers off" \
	"target '$t'; $(cat "$disk/port")"
rm -rf "$disk/state" "$disk"/stage[2-9]
: >"$disk/port"
stage "$disk" 1
t=$(boot "$disk")
result "$([ "$t" = poweroff ] && [ "$(ran "$disk")" = "ran stage1" ] && echo 0 || echo 1)" \
	"run-stages: a disk with stage1 only (the demo) powers off after it" \
	"target '$t'; $(cat "$disk/port")"

# --- shell syntax -------------------------------------------------------------------
for f in stage1 stage2 stage3 stage4 debug-kernel-stage tap.sh lib.sh pkg.sh thermal.sh \
	tunables.sh faults.sh removal.sh restore.sh doctor.sh; do
	check "bash -n $f" bash -n "$build/$f"
done
check "sh -n run-stages" sh -n "$here/../run-stages.sh"

checks_done
