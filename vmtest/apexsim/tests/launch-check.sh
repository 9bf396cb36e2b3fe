#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# launch-check.sh APEXSIM: host checks of how vmtest/qemu/launch.sh runs
# apexsim processes and how vmtest/check-run.sh judges their ends, with a
# fake QEMU (a script) in place of the real one: a kill the guest asks for
# on the results port is carried out with SIGKILL and passes, a crash
# nobody asked for fails, a kill of a chip that does not exist fails, and
# a run without requests passes with every apexsim ending with status 0,
# a request whose line the guest writes in two pieces, a poll apart, is
# carried out once, whole, and a power cycle the guest asks for boots QEMU
# again with fresh apexsims, even when the request and the power-off come
# in the same instant; --iommu puts the IOMMU before the devices.
set -euo pipefail
apexsim=$(realpath "${1:?usage: launch-check.sh APEXSIM}")
here=$(cd "$(dirname "$0")" && pwd)
vmtest=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source=../../lib/checks.sh
source "$vmtest/lib/checks.sh"

# The fake QEMU appends $FAKE_TAP to the results file ($FAKE_TAP_NEXT from
# the second boot on), then $FAKE_TAP_LATER 2.5 s later (launch.sh's polls
# see the text before it), optionally sends $FAKE_SIGNAL to the apexsim of
# control socket ctl-$FAKE_VICTIM.sock (found by its exact command line),
# waits $FAKE_SLEEP seconds (default 3: launch.sh reads the results every
# second while QEMU runs) and "powers off". Each boot first lists, in
# held-fds beside the results file, the descriptors above stdio that it and
# its apexsims hold.
mkdir -p "$work/bin"
cat >"$work/bin/qemu-img" <<'EOF'
#!/bin/bash
touch "${!#}"
EOF
cat >"$work/bin/qemu-system-x86_64" <<'EOF'
#!/bin/bash
set -euo pipefail
results= ctl= ctls=()
for a in "$@"; do
	case $a in
	file,id=results,*path=*) results=${a#*path=} ;;
	socket,id=ctl"${FAKE_VICTIM:-x}",path=*) ctl=${a#*path=} ;;
	esac
	case $a in
	socket,id=ctl*,path=*) ctls+=("${a#*path=}") ;;
	esac
done
# This boot's apexsims, found by the control sockets on their command
# lines (read without a process per entry of /proc: the machine may be busy).
sims=() victim=
for p in /proc/[0-9]*; do
	args=()
	mapfile -d '' -t args 2>/dev/null <"$p/cmdline" || continue
	for i in "${!args[@]}"; do
		[ "${args[$i]}" = --control ] || continue
		for c in "${ctls[@]}"; do
			[ "${args[$((i + 1))]:-}" != "$c" ] || sims+=("${p#/proc/}")
		done
		[ "${args[$((i + 1))]:-}" != "$ctl" ] || victim=${p#/proc/}
	done
done
held=${results%/*}/held-fds
for p in $$ "${sims[@]}"; do
	find "/proc/$p/fd" -mindepth 1 ! -name 0 ! -name 1 ! -name 2 -printf '%f %l\n' >>"$held"
done
if [ -s "$results" ] && [ -n "${FAKE_TAP_NEXT:-}" ]; then
	printf '%b' "$FAKE_TAP_NEXT" >>"$results"
else
	printf '%b' "${FAKE_TAP:-}" >>"$results"
fi
if [ -n "${FAKE_TAP_LATER:-}" ]; then
	sleep 2.5
	printf '%b' "$FAKE_TAP_LATER" >>"$results"
fi
[ -z "$victim" ] || kill "-${FAKE_SIGNAL}" "$victim"
sleep "${FAKE_SLEEP:-3}"
EOF
chmod +x "$work/bin/"*
ln -s qemu-system-x86_64 "$work/bin/qemu-system-aarch64"
: >"$work/base.img"
: >"$work/seed.img"

# launch CASE [OPTION...]: one fake guest with two chips, then check-run.sh
# on it; launch.sh's exit status goes to CASE.rc. launch.sh starts with
# stdio only (this shell's caller may have left others open; 255 is bash's
# own and closes on exec), so that held-fds shows only what it passes on.
launch() {
	local rc=0 name=$1
	shift
	(
		for fd in /proc/"$BASHPID"/fd/*; do
			fd=${fd##*/}
			[ "$fd" -le 2 ] || [ "$fd" -eq 255 ] || eval "exec $fd>&-"
		done
		PATH=$work/bin:$PATH QEMU_ROOT=/ APEXSIM=$apexsim exec \
			"$vmtest/qemu/launch.sh" --run-dir "$work/$name" --base "$work/base.img" \
			--seed "$work/seed.img" --devices 2 --timeout 60 "$@"
	) >"$work/$name.launch" 2>&1 || rc=$?
	echo "$rc" >"$work/$name.rc"
	"$vmtest/check-run.sh" "$work/$name" "$rc" >"$work/$name.checks" 2>&1 || true
}

# has CASE LINE: check-run.sh listed LINE (a regular expression).
has() {
	grep -Eq "$2" "$work/$1.checks"
}

# The guests run at once: most of their time is waiting.
FAKE_TAP='# apex-vmtest: stage2 start\n# apex-vmtest: request kill-apexsim 0\n' \
	FAKE_VICTIM=1 FAKE_SIGNAL=SEGV launch killed &
FAKE_TAP='# apex-vmtest: request kill-apexsim 7\n' launch nochip &
FAKE_TAP='# apex-vmtest: stage2 start\nok 1 - x\n' launch clean &
FAKE_TAP='# apex-vmtest: stage2 start\n# apex-vmtest: request kill-apex' \
	FAKE_TAP_LATER='sim 0\nok 1 - x\n' launch split &
cycle='# apex-vmtest: request power-cycle\n'
FAKE_TAP='# apex-vmtest: stage3 start\n# apex-vmtest: request kill-apexsim 1\n'"$cycle" \
	FAKE_TAP_NEXT='# apex-vmtest: stage4 start\nok 1 - y\n' launch cycled &
# The request is written and QEMU exits at once: no poll sees it running.
FAKE_TAP='# apex-vmtest: stage3 start\n# apex-vmtest: request power-cycle\n' \
	FAKE_TAP_NEXT='# apex-vmtest: stage4 start\nok 1 - y\n' FAKE_SLEEP=0 launch instant &
FAKE_TAP='ok 1 - x\n' FAKE_SLEEP=0 launch iommu --iommu --kernel "$work/base.img" &
FAKE_TAP='ok 1 - x\n' FAKE_SLEEP=0 launch arm64 --arch arm64 --kernel "$work/base.img" &
launch arm64-iommu --arch arm64 --iommu --kernel "$work/base.img" &
wait

result "$(cat "$work/killed.rc")" "launch.sh: the guest powered off (fake QEMU exit 0)" \
	"$(cat "$work/killed.launch")"
result "$(grep -q 'apexsim 0 killed as the guest asked: signal:KILL' "$work/killed.launch" &&
	echo 0 || echo 1)" \
	"launch.sh: reports the kill it carried out" "$(cat "$work/killed.launch")"
result "$([ "$(sort "$work/killed/apexsim.status")" = \
	"$(printf '0 signal:KILL signal:KILL\n1 signal:SEGV exit:0')" ] && echo 0 || echo 1)" \
	"launch.sh: apexsim.status has the requested kill and the crash" \
	"$(cat "$work/killed/apexsim.status")"
result "$(has killed '^  PASS host +apexsim 0 killed with SIGKILL as the guest asked$' &&
	echo 0 || echo 1)" \
	"check-run.sh: the requested kill passes" "$(cat "$work/killed.checks")"
result "$(has killed '^  FAIL host +apexsim 1 ended with exit:0 # it ended with signal:SEGV' &&
	echo 0 || echo 1)" \
	"check-run.sh: a crash nobody asked for fails" "$(cat "$work/killed.checks")"

result "$(has nochip \
	'^  FAIL host +apexsim 7 killed with SIGKILL as the guest asked # it ended with none' &&
	echo 0 || echo 1)" \
	"check-run.sh: a kill asked for a chip that does not exist fails" \
	"$(cat "$work/nochip.checks")"

result "$([ "$(sort "$work/clean/apexsim.status")" = \
	"$(printf '0 exit:0 exit:0\n1 exit:0 exit:0')" ] && echo 0 || echo 1)" \
	"launch.sh: without requests every apexsim ends with status 0" \
	"$(cat "$work/clean/apexsim.status")"
result "$(has clean 'FAIL host +apexsim' && echo 1 || echo 0)" \
	"check-run.sh: no apexsim failure without a crash or a request" \
	"$(cat "$work/clean.checks")"

result "$(grep -q 'apexsim 0 killed as the guest asked: signal:KILL' "$work/split.launch" &&
	[ "$(grep -c 'request kill' "$work/split/timeline")" = 1 ] &&
	grep -q '^[0-9]* request kill-apexsim 0$' "$work/split/timeline" && echo 0 || echo 1)" \
	"launch.sh: a request written in two pieces is carried out once, whole" \
	"$(cat "$work/split.launch" "$work/split/timeline")"

result "$(cat "$work/cycled.rc")" "launch.sh: power cycle: the guest powered off in the end" \
	"$(cat "$work/cycled.launch")"
result "$([ "$(grep -c 'guest booting\|on again with fresh chips' "$work/cycled.launch")" = 2 ] &&
	[ "$(grep -c 'apex-vmtest: stage[34] start' "$work/cycled/results.tap")" = 2 ] &&
	echo 0 || echo 1)" \
	"launch.sh: power cycle: QEMU boots twice, the results file goes on" \
	"$(cat "$work/cycled.launch" "$work/cycled/results.tap")"
result "$([ "$(cat "$work/cycled/apexsim.status")" = \
	"$(printf \
		'1 signal:KILL signal:KILL\n0 exit:0 exit:0\n0 exit:0 exit:0\n1 exit:0 exit:0')" \
	] && echo 0 || echo 1)" \
	"launch.sh: power cycle: fresh apexsims, each generation's end recorded" \
	"$(cat "$work/cycled/apexsim.status")"

result "$(grep -E 'results\.tap|pipe:' "$work/cycled/held-fds" && echo 1 || echo 0)" \
	"launch.sh: after a power cycle, QEMU and the apexsims hold none of its own descriptors" \
	"$(cat "$work/cycled/held-fds")"

at_once='launch.sh: request and power-off at once:'
result "$(cat "$work/instant.rc")" "$at_once the guest powered off in the end" \
	"$(cat "$work/instant.launch")"
result "$([ "$(grep -c 'guest booting\|on again with fresh chips' "$work/instant.launch")" = 2 ] &&
	[ "$(grep -c 'apex-vmtest: stage[34] start' "$work/instant/results.tap")" = 2 ] &&
	echo 0 || echo 1)" \
	"$at_once the request is read after QEMU's exit, QEMU boots again" \
	"$(cat "$work/instant.launch" "$work/instant/results.tap")"
result "$(awk \
	'$2 == "qemu" && $3 == "start" { s++ } $2 == "stage4" { f = (s == 2) } END { exit !f }' \
	"$work/instant/timeline" && echo 0 || echo 1)" \
	"launch.sh: the timeline has both boots and the guest's lines in order" \
	"$(cat "$work/instant/timeline")"

# --iommu: the IOMMU is created before every device behind it, and the
# guest kernel is told to use it, strictly.
result "$(awk '{
		gsub(/\\/, "")	# the printf %q quoting
		for (i = 1; i <= NF; i++) {
			if ($i == "intel-iommu,caching-mode=on") iommu = i
			if ($i ~ /^-drive$|vfio-user-pci/ && !first) first = i
		}
		exit !(iommu && iommu < first && /intel_iommu=on iommu\.strict=1/)
	}' "$work/iommu/qemu.cmdline" && echo 0 || echo 1)" \
	"launch.sh --iommu: intel-iommu before the devices, intel_iommu=on iommu.strict=1" \
	"$(cat "$work/iommu/qemu.cmdline")"
result "$(grep -q intel-iommu "$work/clean/qemu.cmdline" && echo 1 || echo 0)" \
	"launch.sh: no IOMMU without --iommu" "$(cat "$work/clean/qemu.cmdline")"

# --arch arm64: QEMU's virt machine, its CPU and console; nothing of the PC's.
result "$(cat "$work/arm64.rc")" "launch.sh --arch arm64: the guest powered off" \
	"$(cat "$work/arm64.launch")"
cmdline=$(tr -d '\\' <"$work/arm64/qemu.cmdline")	# without printf %q's quoting
result "$(grep -q '^qemu-system-aarch64 .*-machine virt,gic-version=3,memory-backend=mem ' \
	<<<"$cmdline" && grep -q -- '-cpu max,pauth-impdef=on ' <<<"$cmdline" &&
	grep -q 'console=ttyAMA0' <<<"$cmdline" &&
	! grep -Eq 'q35|qemu64|ttyS0|no_timer_check|tsc_early_khz' <<<"$cmdline" &&
	echo 0 || echo 1)" \
	"launch.sh --arch arm64: virt machine, max CPU with QEMU's pointer authentication, ttyAMA0" \
	"$(cat "$work/arm64/qemu.cmdline")"
result "$([ "$(cat "$work/arm64-iommu.rc")" != 0 ] &&
	grep -q 'for --arch amd64 only' "$work/arm64-iommu.launch" && echo 0 || echo 1)" \
	"launch.sh: --arch arm64 with --iommu is refused" "$(cat "$work/arm64-iommu.launch")"

rm -f "$work/clean/apexsim.status"
"$vmtest/check-run.sh" "$work/clean" 0 >"$work/clean.checks" 2>&1 || true
result "$(has clean '^  FAIL host +apexsim exit statuses recorded' && echo 0 || echo 1)" \
	"check-run.sh: a run without apexsim.status fails" "$(cat "$work/clean.checks")"

# console-check.sh: the kernel reports of the debug-kernel guest count,
# what a lockdep kernel prints at every boot does not.
console_finds() { # LINE: console-check.sh reports a console holding LINE
	printf '[    1.000000] booting\n%s\n' "$1" >"$work/console.log"
	! "$vmtest/console-check.sh" "$work/console.log" >/dev/null
}
for line in '[   12.345678] BUG: KASAN: slab-use-after-free in gasket_ioctl+0x10/0x20' \
	'[   12.345678] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)' \
	'[   12.345678] DMA-API: debugging out of memory - disabling' \
	'[   12.345678] WARNING: possible circular locking dependency detected'; do
	result "$(console_finds "$line" && echo 0 || echo 1)" "console-check.sh reports: ${line:15:40}" \
		"$(cat "$work/console.log")"
done
result "$(console_finds '[    2.265747] rcu: 	RCU lockdep checking is enabled.' && echo 1 || echo 0)" \
	"console-check.sh: the lockdep kernel's boot line is not a report" "$(cat "$work/console.log")"

checks_done
