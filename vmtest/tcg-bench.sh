#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# tcg-bench.sh [SUITE]: make bench-tcg. Times a guest's boot and its
# heaviest phase, `apt-get install apex-dkms` with the DKMS build, under the
# QEMU settings launch.sh can take (CPU model, memory, TCG translation-block
# cache), each beside a guest with the defaults; then N guests of S vCPUs
# at once, to choose how many guests `make check` runs side by side and with
# how many vCPUs. Prints two tables; raw timelines stay in
# results/bench-tcg/<timestamp>/.
#
# Environment: APEX_BENCH_CONFIGS (settings to try, each VAR=VALUE[,VAR=VALUE],
# separated by spaces), APEX_BENCH_JOBS (NxS specs, default "1x2 2x2 2x1 3x1").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

suite=${1:-bookworm}
out=$apex_top/results/bench-tcg/$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
log=$out/build.log

apex_build "$log" "building apexsim" make -C "$apex_top/vmtest/apexsim"
apex_build "$log" "building the package" make -C "$apex_top" deb
image=$("$here/image/build-image.sh" "$suite")

# The guest's only stage: install the package (DKMS builds both modules for
# the running kernel) and check that it did.
guest=$out/guest
mkdir -p "$guest"
cat >"$guest/stage1" <<'EOF'
#!/bin/sh
apt-get update >/var/log/apex-install.log 2>&1
echo "# apex-vmtest: phase apt install + DKMS build"
if DEBIAN_FRONTEND=noninteractive apt-get install -y apex-dkms >/var/log/apex-install.log 2>&1 &&
	modinfo -F vermagic apex >/dev/null; then
	echo "ok 1 - apt-get install -y apex-dkms"
else
	echo "not ok 1 - apt-get install -y apex-dkms"
	tail -n 20 /var/log/apex-install.log | sed 's/^/# /'
fi
echo "# apex-vmtest: phase done"
EOF
chmod +x "$guest/stage1"
disk=$out/apextest.img
"$here/image/build-testdisk.sh" "$disk" "$apex_top/build/deb" "$guest"
"$here/cloud-init/make-seed.sh" "$out/seed.img"

# guest NAME [VAR=VALUE...]: one guest with those settings; its boot and
# install seconds go to NAME/times ("boot install ok|fail").
guest() {
	local name=$1 dir=$out/$1 rc=0
	shift
	mkdir -p "$dir"
	: >"$dir/timeline"
	env "$@" "$here/qemu/launch.sh" --run-dir "$dir" --base "$image/root.ext4" \
		--kernel "$image/vmlinuz" --initrd "$image/initrd.img" --seed "$out/seed.img" \
		--test-disk "$disk" --devices 1 --timeout 2400 >"$dir/launch.log" 2>&1 || rc=$?
	rm -f "$dir/overlay.qcow2"
	awk -v rc="$rc" -v ok="$(grep -c '^ok 1 ' "$dir/results.tap" 2>/dev/null)" '
		$2 == "qemu" && $3 == "start" && !q { q = $1 }
		/ phase apt install/ { a = $1 }
		/ phase done/ { d = $1 }
		END { printf "%s %s %s\n", (a ? a - q : "-"), (d && a ? d - a : "-"),
			(rc == 0 && ok == 1 ? "ok" : "fail") }' "$dir/timeline" >"$dir/times"
}

# Each setting runs beside a guest with the defaults, started together, so
# that both see the same machine: their ratio is the setting's effect.
configs=${APEX_BENCH_CONFIGS:-APEX_CPU=max APEX_TB_SIZE=64 APEX_MEM=1024}
printf '%-22s %6s %8s %6s   %16s %6s   %s\n' \
	setting boot install result "default: install" result ratio >"$out/settings.txt"
for c in $configs; do
	name=${c//,/_}
	apex_stage "$c beside the defaults: booting and installing"
	guest "$name" ${c//,/ } &
	guest "default-beside-$name"
	wait
	read -r boot install result <"$out/$name/times"
	read -r _ dinstall dresult <"$out/default-beside-$name/times"
	printf '%-22s %6s %8s %6s   %16s %6s   %s\n' "$c" "$boot" "$install" "$result" \
		"$dinstall" "$dresult" "$(awk -v a="$install" -v b="$dinstall" \
		'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }')" |
		tee -a "$out/settings.txt" >&2
done

# N guests at once with S vCPUs each ("NxS"): the wall time for all of
# them, so guests per hour, is what decides APEX_JOBS and APEX_SMP.
printf '%-6s %8s %24s %12s\n' guests wall "install (each)" "guests/hour" >"$out/jobs.txt"
for spec in ${APEX_BENCH_JOBS:-1x2 2x2 2x1 3x1}; do
	n=${spec%x*} smp=${spec#*x}
	apex_stage "$n guests at once, $smp vCPUs each"
	t0=$(date +%s)
	for i in $(seq "$n"); do
		guest "jobs$spec-$i" APEX_SMP="$smp" &
	done
	wait
	wall=$(($(date +%s) - t0))
	each=$(cat "$out/jobs$spec"-*/times | awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }')
	printf '%-6s %8s %24s %12s\n' "$spec" "$wall" "$each" "$((n * 3600 / wall))" |
		tee -a "$out/jobs.txt" >&2
done
rm -f "$disk" "$out/seed.img"

echo
echo "$suite guest, kernel $(cat "$image/kernel-version"): seconds to boot and to apt-get install"
echo "apex-dkms (the DKMS build) with one QEMU setting changed, beside a guest with the"
echo "defaults started at the same time; ratio = install time / the default's:"
cat "$out/settings.txt"
echo
echo "N guests at once with S vCPUs each (NxS): wall seconds for all, each one's install:"
cat "$out/jobs.txt"
