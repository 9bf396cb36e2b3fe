#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# run-suite.sh [SUITE]: one guest run (make vmtest SUITE=...). Builds what
# is missing (guest image, apexsim, guest tests, the .deb and a second one of
# a higher version for the upgrade test), boots the guest with the emulated
# Apex, lets it install apex-dkms and run both test stages, then judges the
# TAP and the console (vmtest/check-run.sh).
#
# run-suite.sh --image CLOUD.qcow2 [NAME]: the same in an official cloud
# image (Debian genericcloud, Ubuntu; it needs cloud-init with NoCloud and
# about 1.5 GB free). Such a guest boots its own kernel and gets user-mode
# network, because apt fetches dkms and the kernel headers from its
# distribution's mirror; our local repository is added next to its sources.
#
# Logs stay in results/<timestamp>-<suite>/, with the wall-clock time of
# every phase in `phases` (vmtest/phase-table.sh). Environment:
#   APEX_TIMEOUT   seconds before the guest is killed (default 2400; trixie,
#                  which also installs and boots a second kernel: 3600). Sized
#                  for two guests at once beside make check's host steps,
#                  where a guest took up to 1716 s (bookworm) under load.
#   APEX_DEVICES   emulated Apex chips (default 2: stage2 unplugs one, kills the other)
#   APEX_PREBUILT  1 = apexsim, build/guest and the packages are up to date
#   APEX_DEBS      the package to test (default build/deb)
#   APEX_UPGRADE_DEBS  the newer one for the upgrade test (default build/deb-upgrade)
#   APEX_KEEP      1 = keep the guest's disks (overlay, seed, test disk)
#   APEX_RUN_DIR   the log directory instead of results/<timestamp>-<suite>
#   APEX_SLOT      start QEMU only once this file exists (run-matrix.sh)
#   APEX_COMPILE_CACHE  0 = the guest's DKMS builds compile every file
#                  themselves; default 1: they take the compiler's output from
#                  a cache seeded here in the same root (vmtest/ccache-seed.sh)
#   APEX_DOCTOR_SUITES  suites whose guest induces every state apex-doctor
#                  diagnoses (default "bullseye bookworm": the oldest dkms and
#                  the most common release; the others check a healthy machine)
#   APEX_IOMMU_SUITES  suites whose guest runs behind an emulated IOMMU
#                  (launch.sh --iommu; default "bullseye trixie-backports":
#                  the oldest and the newest kernel, so DMA after the driver
#                  released memory fails the run there; the others, 7.3 in
#                  trixie's later stages included, run without one)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

cloud_image=
if [ "${1:-}" = --image ]; then
	cloud_image=$(realpath "${2:?--image needs a qcow2 file}")
	[ -f "$cloud_image" ] || apex_die "no cloud image at $2"
	shift 2
	set -- "${1:-$(basename "$cloud_image" .qcow2)}"
fi
suite=${1:-bookworm}
start=$(date +%s)
run_dir=${APEX_RUN_DIR:-$apex_top/results/$(date +%Y%m%d-%H%M%S)-$suite}
mkdir -p "$run_dir"
apex_stage "$suite: logs in $run_dir"
debs=${APEX_DEBS:-$apex_top/build/deb}
# The arm64 suites (vmtest/mkroot) boot on QEMU's virt machine, with the
# guest tests cross-built for them.
arch=$(apex_suite_arch "$suite") guest_tests=$apex_top/build/guest
[ "$arch" = amd64 ] || guest_tests=$apex_top/build/guest-$arch
upgrade_debs=${APEX_UPGRADE_DEBS:-$apex_top/build/deb-upgrade}
# The run's timeline: its own steps here, QEMU's and the guest's from launch.sh.
timeline() {
	apex_timeline "$run_dir" "$@"
}
: >"$run_dir/timeline"

log=$run_dir/build.log
if [ "${APEX_PREBUILT:-0}" != 1 ]; then
	apex_build "$log" "$suite: building apexsim" make -C "$apex_top/vmtest/apexsim"
	if [ "$arch" = amd64 ]; then
		apex_build "$log" "$suite: building the guest tests" make -C "$apex_top/vmtest/guest"
	else
		apex_build "$log" "$suite: building the guest tests for arm64" \
			"$here/arm64/guest-tests.sh" "$guest_tests"
	fi
	apex_build "$log" "$suite: building the package" make -C "$apex_top" deb
	apex_build "$log" "$suite: building the upgrade package" apex_upgrade_deb
fi

# stage2 upgrades to the second package; in the trixie guest it also
# installs the trixie-backports kernel (a user's next step on trixie), which
# must get the modules built by dkms autoinstall.
timeline image
disk_opts=(--upgrade "$upgrade_debs")
[[ " ${APEX_DOCTOR_SUITES-bullseye bookworm} " != *" $suite "* ]] || disk_opts+=(--doctor-states)
# In make check a guest ran up to 2101 s (trixie's, two at a time) and
# 2542 s with three at a time (vmtest/run-matrix.sh).
timeout=3600
if [ "$suite" = trixie ] && [ -z "$cloud_image" ]; then
	kernel_debs=$("$here/image/fetch-kernel.sh" trixie trixie-backports 2>>"$log") ||
		apex_die "$suite: fetching the trixie-backports kernel failed (log: $log)"
	disk_opts+=(--kernel "$kernel_debs")
fi
if [ -n "$cloud_image" ]; then
	boot=(--base "$cloud_image" --net)
	kernel='?' dkms='?'
else
	image=$("$here/image/build-image.sh" "$suite")
	boot=(--base "$image/root.ext4" --kernel "$image/vmlinuz" --initrd "$image/initrd.img")
	kernel=$(cat "$image/kernel-version")
	dkms=$(cat "$image/dkms-version")
fi
if [ -z "$cloud_image" ] && [ "${APEX_COMPILE_CACHE:-1}" = 1 ]; then
	timeline "compile cache"
	apex_stage "$suite: seeding the compile cache for the guest's DKMS builds"
	"$here/ccache-seed.sh" "$suite" "$run_dir/ccache" "$debs" "$upgrade_debs" \
		${kernel_debs:+"$kernel_debs"} >/dev/null
	disk_opts+=(--ccache "$run_dir/ccache")
fi
timeline "test disk"
"$here/image/build-testdisk.sh" "${disk_opts[@]}" "$run_dir/apextest.img" \
	"$debs" "$guest_tests"
"$here/cloud-init/make-seed.sh" "$run_dir/seed.img"

# In a matrix a queued guest is prepared (image, compile cache, test disk)
# while it waits for its slot.
apex_wait_slot "$run_dir" "$suite"

[[ " ${APEX_IOMMU_SUITES-bullseye trixie-backports} " != *" $suite "* ]] || boot+=(--iommu)
[ "$arch" = amd64 ] || boot+=(--arch "$arch")
status=0
"$here/qemu/launch.sh" --run-dir "$run_dir" "${boot[@]}" \
	--seed "$run_dir/seed.img" --test-disk "$run_dir/apextest.img" \
	--devices "${APEX_DEVICES:-2}" --timeout "${APEX_TIMEOUT:-$timeout}" || status=$?
[ "${APEX_KEEP:-0}" = 1 ] ||
	rm -rf "$run_dir/overlay.qcow2" "$run_dir/seed.img" "$run_dir/apextest.img" \
		"$run_dir/ccache/cache" "$run_dir/ccache/debs"

[ "$kernel" != "?" ] || kernel=$(sed -n 's/^# apex-vmtest: stage1 start (kernel \(.*\))$/\1/p' \
	"$run_dir/results.tap" | head -n 1)
timeline "host checks"
echo "== $suite: kernel ${kernel:=?}, dkms $dkms"
rc=0
"$here/check-run.sh" "$run_dir" "$status" || rc=$?
timeline end
echo "== $suite: time per phase (wall clock)"
"$here/phase-table.sh" "$run_dir" | tee "$run_dir/phases"

apex_write_summary "$run_dir" "$suite" "$kernel" "$dkms" "$start"
apex_stage "$suite: done in $(($(date +%s) - start))s (logs: $run_dir)"
exit "$rc"
