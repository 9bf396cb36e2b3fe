#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/arm64/run.sh [FLAVOUR...]: boot trixie's arm64 FLAVOUR kernel (arm64
# or arm64-16k; default both, one after the other) in qemu-system-aarch64 (virt machine, TCG) with one emulated
# Apex served by apexsim, and run the initramfs of vmtest/arm64/build.sh:
# the modules load, vmtest/guest/apex-pages checks the BAR windows and the
# page tables with that kernel's pages, the modules unload.
#
# Prints the guest's TAP and "N passed, N failed"; fails if any check
# failed, the guest did not finish in time, or the kernel logged a warning,
# BUG, oops or lockdep report. Everything lands in results/<time>-FLAVOUR/.
# Environment: APEX_ARM64_TIMEOUT (seconds, default 900).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -gt 0 ] || set -- arm64-16k arm64
if [ $# -gt 1 ]; then
	passed=0 failed=0
	for flavour in "$@"; do
		counts=$("$0" "$flavour" | tee /dev/stderr | tail -n 1)
		if [[ $counts =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=$((passed + BASH_REMATCH[1])) failed=$((failed + BASH_REMATCH[2]))
		else
			failed=$((failed + 1))
		fi
	done 2>&1
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
fi
flavour=$1
timeout=${APEX_ARM64_TIMEOUT:-900}
run_dir=$apex_top/results/$(date +%Y%m%d-%H%M%S)-trixie-$flavour
mkdir -p "$run_dir"
apexsim=$apex_top/build/apexsim/apexsim
apex_build "$run_dir/build.log" "arm64: building apexsim" make -C "$apex_top/vmtest/apexsim"
"$apex_top/vmtest/arm64/build.sh" "$flavour" "$run_dir/guest"
qroot=$("$apex_top/vmtest/qemu/provision.sh")

sock_dir=$(mktemp -d /tmp/apex-arm64-sock.XXXXXX)
sim_pid= qemu_pid=
stop() { # PID: SIGTERM, then SIGKILL after 5 s
	local i
	[ -n "$1" ] && kill "$1" 2>/dev/null || return 0
	for i in $(seq 50); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}
cleanup() {
	local rc=$?
	stop "$qemu_pid"
	stop "$sim_pid"
	rm -rf "$sock_dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

"$apexsim" --socket "$sock_dir/sim.sock" --control "$sock_dir/ctl.sock" \
	--log "$run_dir/apexsim.log" >>"$run_dir/apexsim.log" 2>&1 &
sim_pid=$!
for _ in $(seq 100); do
	[ -S "$sock_dir/sim.sock" ] && break
	sleep 0.1
done
[ -S "$sock_dir/sim.sock" ] || apex_die "apexsim did not start (log: $run_dir/apexsim.log)"

# QEMU runs in its root (provision.sh) with the run and socket directories
# bound in; without KVM for aarch64 guests here, TCG with -cpu max, whose
# MMU offers 4, 16 and 64 KiB pages.
qemu=(qemu-system-aarch64 -machine virt,gic-version=3,memory-backend=mem
	-accel tcg -cpu max -smp 2 -m 1024M
	-object memory-backend-memfd,id=mem,size=1024M,share=on
	-nodefaults -no-user-config -display none -no-reboot
	-serial file:/apexmnt/run/console.log
	-kernel /apexmnt/run/guest/vmlinuz -initrd /apexmnt/run/guest/initramfs.gz
	-append "console=ttyAMA0 rdinit=/init panic=-1 loglevel=4"
	-device '{"driver":"vfio-user-pci","id":"apex0","socket":{"type":"unix","path":"/apexmnt/sock/sim.sock"}}')
apex_stage "arm64: booting $(cat "$run_dir/guest/kernel-version") (TCG, timeout ${timeout}s)"
if [ "$qroot" = / ]; then
	mkdir -p /apexmnt
	qemu=("${qemu[@]//\/apexmnt\/run/$run_dir}")
	qemu=("${qemu[@]//\/apexmnt\/sock/$sock_dir}")
	"${qemu[@]}" >"$run_dir/qemu.log" 2>&1 &
else
	mkdir -p "$qroot/apexmnt/run" "$qroot/apexmnt/sock"
	unshare --mount --propagation private -- bash -euc '
		root=$1 run=$2 sock=$3
		shift 3
		mount --bind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		mount --bind "$run" "$root/apexmnt/run"
		mount --bind "$sock" "$root/apexmnt/sock"
		exec chroot "$root" "$@"' _ "$qroot" "$run_dir" "$sock_dir" "${qemu[@]}" \
		>"$run_dir/qemu.log" 2>&1 &
fi
qemu_pid=$!

t0=$(date +%s)
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [ $(($(date +%s) - t0)) -ge "$timeout" ]; then
		echo "not ok - the guest did not power off within ${timeout}s" >>"$run_dir/console.log"
		stop "$qemu_pid"
		break
	fi
	sleep 1
done
wait "$qemu_pid" 2>/dev/null || true
qemu_pid=
secs=$(($(date +%s) - t0))

console=$run_dir/console.log
touch "$console"
grep -E '^( *)(not )?ok |^ *# |passed, .*failed' "$console" || true
passed=0 failed=0
while read -r p f; do
	passed=$((passed + p)) failed=$((failed + f))
done < <(sed -n 's/^ *\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$console")
problems=()
grep -q '^# apex-arm64: done' "$console" || problems+=("the guest did not finish its checks")
bad=$(grep -E 'WARNING:|BUG:|Oops|Call trace:|possible circular locking|KASAN|UBSAN' "$console" | head -n 5 || true)
[ -z "$bad" ] || problems+=("kernel report: $bad")
[ "$passed" -gt 0 ] || problems+=("no check passed")
failed=$((failed + ${#problems[@]}))
for p in "${problems[@]}"; do
	echo "not ok - $p"
done
echo "# trixie-$flavour: ${secs}s in the guest, console: $console"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
