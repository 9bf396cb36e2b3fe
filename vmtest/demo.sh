#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# demo.sh [SUITE]: make demo. Build the package, boot a guest (default
# bookworm) with an emulated Apex, `apt install apex-dkms` in it and show the
# chip at work: lspci, dkms status, /dev/apex_0, a test-engine round trip.
# Logs stay in results/<timestamp>-demo-<suite>/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

suite=${1:-bookworm}
run_dir=$apex_top/results/$(date +%Y%m%d-%H%M%S)-demo-$suite
mkdir -p "$run_dir"

log=$run_dir/build.log
apex_build "$log" "building apexsim (the emulated Apex)" make -C "$apex_top/vmtest/apexsim"
apex_build "$log" "building the guest programs" make -C "$apex_top/vmtest/guest"
apex_build "$log" "building the apex-dkms package" make -C "$apex_top" deb
apex_stage "preparing the $suite guest image (first time: a few minutes)"
image=$("$here/image/build-image.sh" "$suite")

# The demo's test disk: the guest programs with the demo as its only stage.
guest=$(mktemp -d)
trap 'rm -rf "$guest"' EXIT
cp -a "$apex_top/build/guest/." "$guest/"
rm -f "$guest"/stage[2-9]
install -m 0755 "$here/demo-guest.sh" "$guest/stage1"
"$here/image/build-testdisk.sh" "$run_dir/apextest.img" "$apex_top/build/deb" "$guest"
"$here/cloud-init/make-seed.sh" "$run_dir/seed.img"

status=0
"$here/qemu/launch.sh" --run-dir "$run_dir" --base "$image/root.ext4" \
	--kernel "$image/vmlinuz" --initrd "$image/initrd.img" \
	--seed "$run_dir/seed.img" --test-disk "$run_dir/apextest.img" \
	--timeout "${APEX_TIMEOUT:-900}" || status=$?
rm -f "$run_dir/overlay.qcow2" "$run_dir/seed.img" "$run_dir/apextest.img"

echo
echo "===== inside the $suite guest ====="
grep -av '^# apex-vmtest: ' "$run_dir/results.tap" || true
echo "==================================="
echo

ok=1
if [ "$status" -ne 0 ]; then
	echo "the guest did not power off cleanly (status $status; console: $run_dir/console.log)"
	ok=0
fi
if ! grep -aq '^# apex-vmtest: stage1 exit 0$' "$run_dir/results.tap"; then
	echo "a demo step failed inside the guest (see above)"
	ok=0
fi
if ! problems=$("$here/console-check.sh" "$run_dir/console.log"); then
	echo "the guest kernel reported problems:"
	printf '%s\n' "$problems" | head -n 20 | sed 's/^/    /'
	ok=0
fi
[ "$ok" = 1 ] || apex_die "demo failed (logs: $run_dir)"
apex_stage "demo done: apex-dkms works in a $suite guest (logs: $run_dir)"
