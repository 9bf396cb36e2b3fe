#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/arm64/run.sh [FLAVOUR...]: boot trixie's arm64 FLAVOUR kernel (arm64
# or arm64-16k; default both, one after the other) in qemu-system-aarch64
# (virt machine, TCG) with one emulated Apex served by apexsim, and run the
# initramfs of vmtest/arm64/build.sh, which builds them all at once:
# the modules load, vmtest/guest/apex-pages checks the BAR windows and the
# page tables with that kernel's pages, the modules unload.
#
# Prints the guest's TAP and "N passed, N failed"; fails if any check
# failed, the guest did not finish in time, or the kernel logged a warning,
# BUG, oops or lockdep report. The builds land in
# results/<time>-trixie-arm64-build/, each guest's logs in
# results/<time>-trixie-FLAVOUR/.
# Environment: APEX_ARM64_TIMEOUT (seconds, default 900).
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

[ $# -gt 0 ] || set -- arm64-16k arm64
timeout=${APEX_ARM64_TIMEOUT:-900}
stamp=$(date +%Y%m%d-%H%M%S)
build_dir=$apex_top/results/$stamp-trixie-arm64-build
mkdir -p "$build_dir"
apexsim=$apex_top/build/apexsim/apexsim
apex_build "$build_dir/apexsim.log" "arm64: building apexsim" make -C "$apex_top/vmtest/apexsim"
"$apex_top/vmtest/arm64/build.sh" "$build_dir" "$@"
qroot=$("$apex_top/vmtest/qemu/provision.sh")

sim_pid= qemu_pid= sock_dir=
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
stop_guest() {
	stop "$qemu_pid"
	stop "$sim_pid"
	qemu_pid= sim_pid=
	[ -z "$sock_dir" ] || rm -rf "$sock_dir"
	sock_dir=
}
cleanup() {
	local rc=$?
	stop_guest
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# boot_guest FLAVOUR: one guest, its TAP on stdout; adds to passed/failed.
boot_guest() {
	local flavour=$1 run_dir guest t0 secs console bad p f
	local problems=() n_passed=0 n_failed=0
	run_dir=$apex_top/results/$stamp-trixie-$flavour
	guest=$build_dir/$flavour
	mkdir -p "$run_dir"
	sock_dir=$(mktemp -d /tmp/apex-arm64-sock.XXXXXX)
	"$apexsim" --socket "$sock_dir/sim.sock" --control "$sock_dir/ctl.sock" \
		--log "$run_dir/apexsim.log" >>"$run_dir/apexsim.log" 2>&1 &
	sim_pid=$!
	for _ in $(seq 100); do
		[ -S "$sock_dir/sim.sock" ] && break
		sleep 0.1
	done
	[ -S "$sock_dir/sim.sock" ] || apex_die "apexsim did not start (log: $run_dir/apexsim.log)"

	# QEMU runs in its root (provision.sh) with the run, guest and socket
	# directories bound in; without KVM for aarch64 guests here, TCG with
	# -cpu max, whose MMU offers 4, 16 and 64 KiB pages.
	local qemu=(qemu-system-aarch64 -machine virt,gic-version=3,memory-backend=mem
		-accel tcg -cpu max -smp 2 -m 1024M
		-object memory-backend-memfd,id=mem,size=1024M,share=on
		-nodefaults -no-user-config -display none -no-reboot
		-serial file:/apexmnt/run/console.log
		-kernel /apexmnt/guest/vmlinuz -initrd /apexmnt/guest/initramfs.gz
		-append "console=ttyAMA0 rdinit=/init panic=-1 loglevel=4"
		-device '{"driver":"vfio-user-pci","id":"apex0","socket":{"type":"unix","path":"/apexmnt/sock/sim.sock"}}')
	apex_stage "arm64: booting $(cat "$guest/kernel-version") (TCG, timeout ${timeout}s)"
	if [ "$qroot" = / ]; then
		qemu=("${qemu[@]//\/apexmnt\/run/$run_dir}")
		qemu=("${qemu[@]//\/apexmnt\/guest/$guest}")
		qemu=("${qemu[@]//\/apexmnt\/sock/$sock_dir}")
		"${qemu[@]}" >"$run_dir/qemu.log" 2>&1 &
	else
		mkdir -p "$qroot/apexmnt/run" "$qroot/apexmnt/guest" "$qroot/apexmnt/sock"
		unshare --mount --propagation private -- bash -euc '
			root=$1 run=$2 guest=$3 sock=$4
			shift 4
			mount --bind /dev "$root/dev"
			mount -t proc proc "$root/proc"
			mount --bind "$run" "$root/apexmnt/run"
			mount --bind "$guest" "$root/apexmnt/guest"
			mount --bind "$sock" "$root/apexmnt/sock"
			exec chroot "$root" "$@"' _ "$qroot" "$run_dir" "$guest" "$sock_dir" \
			"${qemu[@]}" >"$run_dir/qemu.log" 2>&1 &
	fi
	qemu_pid=$!

	t0=$EPOCHSECONDS
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [ $((EPOCHSECONDS - t0)) -ge "$timeout" ]; then
			echo "not ok - the guest did not power off within ${timeout}s" \
				>>"$run_dir/console.log"
			stop "$qemu_pid"
			break
		fi
		apex_sleep 1
	done
	wait "$qemu_pid" 2>/dev/null || true
	qemu_pid=
	secs=$((EPOCHSECONDS - t0))
	stop_guest

	console=$run_dir/console.log
	touch "$console"
	grep -E '^( *)(not )?ok |^ *# |passed, .*failed' "$console" || true
	while read -r p f; do
		n_passed=$((n_passed + p)) n_failed=$((n_failed + f))
	done < <(sed -n 's/^ *\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$console")
	grep -q '^# apex-arm64: done' "$console" || problems+=("the guest did not finish its checks")
	bad=$(grep -E 'WARNING:|BUG:|Oops|Call trace:|possible circular locking|KASAN|UBSAN' \
		"$console" | head -n 5 || true)
	[ -z "$bad" ] || problems+=("kernel report: $bad")
	[ "$n_passed" -gt 0 ] || problems+=("no check passed")
	n_failed=$((n_failed + ${#problems[@]}))
	for p in "${problems[@]}"; do
		echo "not ok - $p"
	done
	echo "# trixie-$flavour: ${secs}s in the guest, console: $console"
	echo "$n_passed passed, $n_failed failed"
	passed=$((passed + n_passed)) failed=$((failed + n_failed))
}

passed=0 failed=0
for flavour in "$@"; do
	boot_guest "$flavour"
done
[ $# -eq 1 ] || echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
