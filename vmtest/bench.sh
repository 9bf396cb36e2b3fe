#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# bench.sh [SUITE]: make bench. Boots one guest (default bookworm) with the
# emulated Apex, installs apex-dkms in it and runs vmtest/bench/ there, then
# prints the table and keeps the raw rows as CSV and JSON in
# results/bench/<timestamp>-<suite>/.
#
# Environment: APEX_BENCH_REPS (repetitions per figure, default 11),
# APEX_BENCH_ITERS (test-engine round trips, default 1000), APEX_TIMEOUT.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/common.sh"
export apex_t0

suite=${1:-bookworm}
run_dir=$apex_top/results/bench/$(date +%Y%m%d-%H%M%S)-$suite
mkdir -p "$run_dir"
host_csv=$run_dir/host.csv
echo "name,variant,bytes,median,min,max,unit,reps" >"$host_csv"

# timed NAME CMD...: run a host step, log its output, record its seconds.
timed() {
	local name=$1 t0
	shift
	t0=$(date +%s.%N)
	apex_build "$run_dir/build.log" "$name" "$@"
	awk -v n="$name" -v a="$t0" -v b="$(date +%s.%N)" \
		'BEGIN { printf "host,%s,0,%.1f,%.1f,%.1f,s,1\n", n, b - a, b - a, b - a }' \
		>>"$host_csv"
}
timed build-apexsim make -C "$apex_top/vmtest/apexsim"
timed build-bench-programs make -C "$apex_top/vmtest/bench"
timed build-deb make -C "$apex_top" deb
# A cached image records the seconds it took to find it.
timed image-build-or-cache-lookup "$here/image/build-image.sh" "$suite"
image=$("$here/image/build-image.sh" "$suite" 2>/dev/null)

# What building the image costs without its cache: mmdebstrap logged how
# long the root took; the ext4 image made from it is timed here, into a
# scratch file the same way build-image.sh makes it.
root=$("$apex_top/vmtest/mkroot" "$suite" 2>/dev/null)
secs=$(sed -n 's/^I: success in \([0-9.]*\) seconds$/\1/p' "$root.log" 2>/dev/null | tail -n 1)
[ -z "$secs" ] ||
	echo "host,image-root-mmdebstrap-when-cached,0,$secs,$secs,$secs,s,1" >>"$host_csv"
size_mib=$(($(du -s --block-size=1M --one-file-system "$root" | cut -f1) + 2048))
timed "image-mkfs-ext4-from-root" \
	mkfs.ext4 -q -F -L root -d "$root" "$run_dir/scratch.ext4" "${size_mib}M"
rm -f "$run_dir/scratch.ext4"

# The latest complete vmtest run of this suite (make vmtest): its total and
# the guest's apt-get install, the test it timed ("(took N s)").
last=
for d in "$apex_top"/results/*-"$suite"; do
	[ ! -f "$d/summary" ] || last=$d
done
if [ -n "$last" ]; then
	read -r _ _ _ passed failed total <"$last/summary"
	echo "# latest vmtest run: $last ($passed passed, $failed failed)" >>"$run_dir/notes"
	echo "vmtest,run-suite-total,0,$total,$total,$total,s,1" >>"$host_csv"
	awk '/^(not )?ok [0-9]+ - / { t = $0 }
	     /^# \(took [0-9]+ s\)$/ && t ~ /apt-get install -y apex-dkms$/ {
		printf "vmtest,guest-apt-get-install,0,%s,%s,%s,s,1\n", $3, $3, $3; exit }' \
		"$last/results.tap" >>"$host_csv"
fi

# The guest reads its settings from the test disk.
printf 'APEX_BENCH_REPS=%d APEX_BENCH_ITERS=%d\n' "${APEX_BENCH_REPS:-11}" \
	"${APEX_BENCH_ITERS:-1000}" >"$apex_top/build/bench/params"

"$here/image/build-testdisk.sh" "$run_dir/apextest.img" \
	"$apex_top/build/deb" "$apex_top/build/bench"
"$here/cloud-init/make-seed.sh" "$run_dir/seed.img"
status=0
t0=$(date +%s.%N)
apex_stage "$suite: guest running the benchmarks (several minutes under TCG)"
"$here/qemu/launch.sh" --run-dir "$run_dir" --base "$image/root.ext4" \
	--kernel "$image/vmlinuz" --initrd "$image/initrd.img" \
	--seed "$run_dir/seed.img" --test-disk "$run_dir/apextest.img" \
	--timeout "${APEX_TIMEOUT:-1500}" || status=$?
awk -v a="$t0" -v b="$(date +%s.%N)" \
	'BEGIN { printf "host,guest-run-boot-to-poweroff,0,%.1f,%.1f,%.1f,s,1\n",
		b - a, b - a, b - a }' >>"$host_csv"
rm -f "$run_dir/overlay.qcow2" "$run_dir/seed.img" "$run_dir/apextest.img"

csv=$run_dir/bench.csv
{
	echo "name,variant,bytes,median,min,max,unit,reps"
	grep -a -E '^[a-z_]+,[^,]*,[0-9]+,' "$run_dir/results.tap" || true
	tail -n +2 "$host_csv"
} >"$csv"
grep -a '^# ' "$run_dir/results.tap" | grep -v '^# apex-vmtest' >&2 || true

if [ "$status" -ne 0 ] || ! grep -aq '^# apex-vmtest: stage1 exit 0$' "$run_dir/results.tap"; then
	tail -n 40 "$run_dir/console.log" >&2 || true
	apex_die "the benchmark guest failed (status $status, logs in $run_dir)"
fi

# JSON beside the CSV, for tools.
awk -F, 'NR > 1 {
	f = "%s{\"name\":\"%s\",\"variant\":\"%s\",\"bytes\":%s,\"median\":%s,"
	f = f "\"min\":%s,\"max\":%s,\"unit\":\"%s\",\"reps\":%s}"
	printf f, (n++ ? ",\n " : "[\n "), $1, $2, $3, $4, $5, $6, $7, $8
}
END { print "\n]" }' "$csv" >"$run_dir/bench.json"

echo
echo "apex-dkms benchmarks, $suite guest, kernel $(cat "$image/kernel-version")," \
	"TCG, emulated Apex"
echo "(median of reps, with min and max; sizes are buffer bytes; see vmtest/bench/README.md)"
# Mapping figures as one row per variant and size, the rest as they come.
awk -F, '
function size(b) {
	return b >= 1048576 ? sprintf("%d MiB", b / 1048576) : \
		b >= 1024 ? sprintf("%d KiB", b / 1024) : (b > 0 ? b " B" : "-")
}
function cell(k) { return k in med ? sprintf("%.0f (%.0f-%.0f)", med[k], lo[k], hi[k]) : "-" }
NR == 1 { next }
$1 == "map" || $1 == "unmap" || $1 == "bar_writes" {
	v = $2; sub(/^(first|last)-(map|unmap)-/, "", v)
	key = v SUBSEP $3
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	k = $1 SUBSEP $7 SUBSEP key
	if ($1 == "bar_writes") { w = $2; sub(/-[^-]*-[^-]*$/, "", w); k = w SUBSEP key }
	med[k] = $4; lo[k] = $5; hi[k] = $6; reps = $8
	next
}
{ other[++m] = sprintf("%-11s %-34s %6s %10s %10s %10s %-6s %s",
	$1, $2, size($3), $4, $5, $6, $7, $8) }
END {
	printf "MAP_BUFFER / UNMAP_BUFFER: median (min-max) of %s repetitions;\n", reps
	printf "BAR writes of map/unmap in the first repetition and in the last\n"
	printf "%-18s %7s %22s %26s %22s %26s %18s\n", "range-memory", "size",
		"map MiB/s", "map pages/s", "unmap MiB/s", "unmap pages/s", "BAR writes"
	for (i = 1; i <= n; i++) {
		split(order[i], p, SUBSEP)
		printf "%-18s %7s %22s %26s %22s %26s %18s\n", p[1], size(p[2]),
			cell("map" SUBSEP "MiB/s" SUBSEP order[i]),
			cell("map" SUBSEP "pages/s" SUBSEP order[i]),
			cell("unmap" SUBSEP "MiB/s" SUBSEP order[i]),
			cell("unmap" SUBSEP "pages/s" SUBSEP order[i]),
			med["first-map" SUBSEP order[i]] "/" \
			med["first-unmap" SUBSEP order[i]] "; " \
			med["last-map" SUBSEP order[i]] "/" med["last-unmap" SUBSEP order[i]]
	}
	printf "\n%-11s %-34s %6s %10s %10s %10s %-6s %s\n", "figure", "variant", "size",
		"median", "min", "max", "unit", "reps"
	for (i = 1; i <= m; i++)
		print other[i]
}' "$csv"
echo
[ ! -f "$run_dir/notes" ] || cat "$run_dir/notes"
echo "raw results: $csv and bench.json"
