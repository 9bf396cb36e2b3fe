#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# vmtest/debug-kernel/run.sh (make vmtest-debug-kernel): the guest tests on
# the debug kernel (build.sh: KASAN, lockdep, DEBUG_ATOMIC_SLEEP, kmemleak,
# DMA-API debugging, UBSAN). Builds gasket.ko and apex.ko for that kernel
# in an overlay of the bookworm root, boots the bookworm image with it and
# two emulated Apex chips, and runs vmtest/guest/debug-kernel-stage there
# (through vmtest/debug-kernel/init). Judged like every guest
# (vmtest/check-run.sh): the TAP, the console free of kernel reports, each
# apexsim ending as it should. Prints "N passed, N failed" and the time of
# each phase; logs in results/<time>-debug-kernel/.
# Environment: APEX_DEBUG_CYCLES (module unload/load cycles, default 1000),
# APEX_TIMEOUT (seconds before the guest is killed, default 2400 s and 4 s
# a cycle: a cycle takes about 0.5 s alone, more beside other guests),
# APEX_PREBUILT=1 (apexsim and build/guest are up to date), APEX_RUN_DIR
# and APEX_SLOT (as for vmtest/run-suite.sh, in a run-matrix.sh lane).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/common.sh"
export apex_t0

start=$(date +%s)
cycles=${APEX_DEBUG_CYCLES:-1000}
[[ $cycles =~ ^[1-9][0-9]*$ ]] || apex_die "APEX_DEBUG_CYCLES must be a positive number"
run_dir=${APEX_RUN_DIR:-$apex_top/results/$(date +%Y%m%d-%H%M%S)-debug-kernel}
mkdir -p "$run_dir"
: >"$run_dir/timeline"
timeline() {
	apex_timeline "$run_dir" "$@"
}
log=$run_dir/build.log
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mount and chroot)"
apex_need mkfs.ext4 e2fsprogs
apex_need cpio cpio

timeline "debug kernel"
kernel=$("$here/build.sh")
kver=$(cat "$kernel/kernel-version")
if [ "${APEX_PREBUILT:-0}" != 1 ]; then
	apex_build "$log" "debug kernel: building apexsim" make -C "$apex_top/vmtest/apexsim"
	apex_build "$log" "debug kernel: building the guest tests" make -C "$apex_top/vmtest/guest"
fi

timeline "modules"
work=$(mktemp -d /tmp/apex-debug-guest.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT
mkdir -p "$work/tree" "$work/disk/tests" "$work/disk/debug-kernel"
(cd "$apex_top" && git ls-files -z -co --exclude-standard src |
	xargs -0 -r cp --parents -t "$work/tree")
root=$("$apex_top/vmtest/mkroot" bookworm)
apex_build "$log" "debug kernel: building gasket.ko and apex.ko for $kver" \
	apex_in_overlay --bind "$kernel" /debug-kernel --bind "$work/disk/debug-kernel" /out \
	"$root" "$work/overlay" "$work/tree" /tmp/apex chroot "$work/overlay/merged" \
	/usr/bin/env -i LC_ALL=C HOME=/tmp PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -euc '
		make -j"$(nproc)" -C /tmp/apex/src KDIR=/debug-kernel/kbuild UBSAN_SANITIZE=y
		cp /tmp/apex/src/gasket.ko /tmp/apex/src/apex.ko /out/'
# The kernel leaves UBSAN to the modules that ask for it (config): both
# modules must carry its checks, and KASAN's.
for ko in gasket.ko apex.ko; do
	for check in __ubsan_handle_ __asan_report_; do
		grep -q "$check" "$work/disk/debug-kernel/$ko" ||
			apex_die "debug kernel: $ko was built without $check (the UBSAN or KASAN checks)"
	done
done

timeline "test disk"
cp -a "$apex_top/build/guest/." "$work/disk/tests/"
cp "$apex_top/udev/60-apex.rules" "$apex_top/modprobe.d/apex.conf" "$work/disk/debug-kernel/"
echo "$cycles" >"$work/disk/debug-kernel/cycles"
truncate -s 256M "$run_dir/apextest.img"
mkfs.ext4 -q -F -L APEXTEST -d "$work/disk" "$run_dir/apextest.img"
ramfs=$work/initramfs
mkdir -p "$ramfs"/{bin,dev,proc,sys,newroot}
cp "$kernel/busybox" "$ramfs/bin/busybox"
cp "$here/init" "$ramfs/init"
chmod 755 "$ramfs/init"
(cd "$ramfs" && find . | cpio -o -H newc --quiet | gzip -1) >"$run_dir/initramfs.gz"
"$apex_top/vmtest/cloud-init/make-seed.sh" "$run_dir/seed.img"
image=$("$apex_top/vmtest/image/build-image.sh" bookworm)

apex_wait_slot "$run_dir" debug-kernel

# The DMA-API checker keeps one entry per mapped page: enough for every
# page the tests map at once, or it stops checking. Expedited RCU grace
# periods: module removal waits for several, and with them a load/unload
# cycle took 910 ms instead of 1245 ms (50 cycles, one chip, outline KASAN).
status=0
"$apex_top/vmtest/qemu/launch.sh" --run-dir "$run_dir" --base "$image/root.ext4" \
	--kernel "$kernel/bzImage" --initrd "$run_dir/initramfs.gz" \
	--append "dma_debug_entries=262144 rcupdate.rcu_expedited=1" \
	--seed "$run_dir/seed.img" --test-disk "$run_dir/apextest.img" \
	--devices 2 --timeout "${APEX_TIMEOUT:-$((2400 + 4 * cycles))}" || status=$?
[ "${APEX_KEEP:-0}" = 1 ] ||
	rm -f "$run_dir/overlay.qcow2" "$run_dir/seed.img" "$run_dir/apextest.img"

timeline "host checks"
echo "== debug-kernel: kernel $kver ($(cat "$kernel/build-seconds") s to build when cold)"
rc=0
"$apex_top/vmtest/check-run.sh" "$run_dir" "$status" 1 || rc=$?
timeline end
echo "== debug-kernel: time per phase (wall clock)"
"$apex_top/vmtest/phase-table.sh" "$run_dir" | tee "$run_dir/phases"
apex_write_summary "$run_dir" debug-kernel "$kver" - "$start"
apex_stage "debug-kernel: done in $(($(date +%s) - start))s (logs: $run_dir)"
exit "$rc"
