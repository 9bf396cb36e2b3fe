# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Shared by the stage scripts (sourced after tap.sh): paths, the chip's
# control channel, and small checks. Checks print why they fail and return
# non-zero; they are exported so tap_check can run them under a timeout.
# They run with pipefail: grep a captured output (<<<"$(cmd)"), never
# "cmd | grep -q", whose early exit can kill cmd with SIGPIPE.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C
APEX_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export APEX_TESTS
export APEX_DEV=/dev/apex_0
export APEX_SYSFS=/sys/class/apex/apex_0
export APEX_PCI_ID=1ac1:089a
# run-stages' state directory (which stages are done, what comes next).
export APEX_STATE_DIR=${APEX_STATE_DIR:-/var/lib/apex-vmtest}

# The driver charges the buffers it maps to RLIMIT_MEMLOCK, which kernels
# before 5.16 set to 64 KiB: too little for apex-demo as tpuuser. Raise it
# (soft and hard) as README's "The memory-lock limit" tells users to. The
# host-side checks source this file too, where that may not be allowed;
# in a guest a failure shows up as apex-demo's ENOMEM.
if [ "$(ulimit -l)" != unlimited ] && [ "$(ulimit -l)" -lt 65536 ]; then
	ulimit -l 65536 2>/dev/null || true
fi

# stage_next continue|reboot|kexec|poweroff: how run-stages ends this stage.
stage_next() {
	mkdir -p "$APEX_STATE_DIR"
	echo "$1" >"$APEX_STATE_DIR/next"
}

# fail TEXT: explain a failed check (on stdout, shown as diagnostics).
fail() {
	printf '%s\n' "$*"
	return 1
}

# expect_eq WHAT GOT WANT
expect_eq() {
	[ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# ctl [-d N] COMMAND...: one request on apexsim's control channel (chip 0,
# or chip N).
ctl() {
	"$APEX_TESTS/apex-ctl" -t 10 "$@"
}

sysattr() {
	cat "$APEX_SYSFS/$1"
}

# chip_get KEY: the emulated chip's state KEY (apexsim `get KEY`).
chip_get() {
	local r
	r=$(ctl get "$1") || return 1
	[[ $r == "ok "* ]] || fail "apexsim: get $1: $r"
	printf '%s\n' "${r#ok }"
}

# chip_is KEY VALUE
chip_is() {
	local v
	v=$(chip_get "$1") || return 1
	[ "$v" = "$2" ] || fail "chip $1=$v, want $2"
}

# wait_chip SECONDS KEY VALUE: poll until the chip reports KEY=VALUE.
wait_chip() {
	wait_until "$1" chip_is "$2" "$3" || chip_is "$2" "$3"
}

# chip_cmd COMMAND...: a control request that must answer "ok".
chip_cmd() {
	local r
	r=$(ctl "$@") || return 1
	[ "$r" = ok ] || fail "apexsim: $*: $r"
}

# kmsg_mark NAME / dmesg_after NAME: the kernel log since a marker line.
kmsg_mark() {
	echo "apex-vmtest: mark $1" >/dev/kmsg
}

# shellcheck disable=SC2016 # prog is an awk program: awk expands its $0
dmesg_after() {
	local prog='index($0, m) { out = ""; seen = 1; next }'
	prog+=' seen { out = out $0 "\n" } END { printf "%s", out }'
	dmesg | awk -v m="apex-vmtest: mark $1" "$prog"
}

# dmesg_logged NAME REGEX: the kernel logged REGEX since mark NAME.
dmesg_logged() {
	local msg="no kernel message matching '$2' since mark $1"
	grep -Eq "$2" <<<"$(dmesg_after "$1")" || fail "$msg: $(dmesg_after "$1" | tail -n 5)"
}

irq_count() {
	sysattr interrupt_counts | awk -v k="$(printf '0x%02x:' "$1")" '$1 == k { print $2 }'
}

irq_count_above() {
	[ "$(irq_count "$1")" -gt "$2" ]
}

# hold_device / release_device: keep /dev/apex_0 open (fd 9) in the stage
# shell across several checks, so the chip stays in an open session.
hold_device() {
	exec 9<>"$APEX_DEV" || tap_diag "cannot hold $APEX_DEV open"
}

release_device() {
	exec 9>&-
}

# The hwmon directory the apex driver registered.
hwmon_dir() {
	local d
	for d in /sys/class/hwmon/hwmon*; do
		[ "$(cat "$d/name" 2>/dev/null)" = apex ] && { echo "$d"; return 0; }
	done
	fail "no hwmon device named apex"
}

module_loaded() {
	grep -q "^$1 " /proc/modules
}

modules_loaded() {
	module_loaded apex && module_loaded gasket
}

# The chip's PCI address (DDDD:BB:DD.F).
chip_addr() {
	lspci -D -n -d "$APEX_PCI_ID" | awk 'NR == 1 { print $1 }'
}

# iommu_as_booted: the chip sits behind a translating IOMMU exactly when
# the kernel was booted with one (vmtest/qemu/launch.sh --iommu).
iommu_as_booted() {
	local group
	group=/sys/bus/pci/devices/$(chip_addr)/iommu_group
	if ! grep -qw intel_iommu=on /proc/cmdline; then
		[ ! -e "$group" ] || fail "booted without an IOMMU, yet the chip is in an IOMMU group"
		echo "no IOMMU: the chip reaches guest memory directly"
		return
	fi
	[ -e "$group" ] || fail "booted with intel_iommu=on, but the chip has no IOMMU group"
	# 5.10 has no type file; its default domain translates.
	[ ! -e "$group/type" ] || grep -q '^DMA' "$group/type" ||
		fail "IOMMU group type $(cat "$group/type"), not a translating one"
	echo "the chip is in IOMMU group $(basename "$(readlink -f "$group")")," \
		"type $(cat "$group/type" 2>/dev/null || echo 'DMA (5.10)')"
}

node_ok() {
	[ -c "$APEX_DEV" ] || fail "$APEX_DEV is missing"
	expect_eq "stat $APEX_DEV" "$(stat -c '%U:%G %a' "$APEX_DEV")" "root:apex 660"
}

# by_path_link ADDR NODE: the one /dev/apex/by-path/ link of the chip at PCI
# ADDR leads to NODE. Its name is udev's ID_PATH of the slot: pci-ADDR on
# a PC, with the host bridge in front on arm64 boards and QEMU's virt
# machine (platform-4010000000.pcie-pci-ADDR).
by_path_link() {
	local addr=$1 node=$2 link found=()
	for link in /dev/apex/by-path/pci-"$addr" /dev/apex/by-path/*-pci-"$addr"; do
		[ ! -L "$link" ] || found+=("$link")
	done
	[ "${#found[@]}" = 1 ] ||
		fail "want one symlink ending in pci-$addr: $(ls -la /dev/apex/ /dev/apex/by-path/ 2>&1)"
	expect_eq "readlink -f ${found[0]}" "$(readlink -f "${found[0]}")" "$node"
}

by_path_ok() {
	local addr
	addr=$(chip_addr)
	[ -n "$addr" ] || fail "no $APEX_PCI_ID in lspci"
	by_path_link "$addr" "$APEX_DEV"
}

no_world_nodes() {
	local bad
	bad=$(find /dev -name 'apex*' -type c -perm /o=rwx)
	[ -z "$bad" ] || fail "world-accessible: $bad"
}

lspci_shows_chip() {
	local line
	line=$(lspci -nn -d "$APEX_PCI_ID")
	echo "$line"
	[[ $line == *"[$APEX_PCI_ID]"* ]] || fail "lspci -nn does not list [$APEX_PCI_ID]"
}

driver_in_use() {
	grep -q 'Kernel driver in use: apex' <<<"$(lspci -k -d "$APEX_PCI_ID")" ||
		fail "lspci -k: $(lspci -k -d "$APEX_PCI_ID")"
}

# chips_without_driver: lspci lists at least one chip, none bound to a driver.
chips_without_driver() {
	local out
	out=$(lspci -nn -k -d "$APEX_PCI_ID")
	echo "$out"
	grep -q "\[$APEX_PCI_ID\]" <<<"$out" || fail "lspci lists no $APEX_PCI_ID"
	! grep -q 'Kernel driver in use' <<<"$out" || fail "a driver is bound"
}

# The sysfs attributes of the class device, with the values an idle,
# freshly probed chip must show (names: src/Documentation/ABI).
sysfs_sane() {
	local a
	for a in status node_0_page_table_entries node_0_simple_page_table_entries \
		node_0_num_mapped_pages interrupt_counts unique_id temp driver_version \
		framework_version device_type pci_address is_device_owned device_owner \
		write_open_count reset_count user_mem_ranges bar_offsets bar_sizes; do
		[ -r "$APEX_SYSFS/$a" ] || fail "$APEX_SYSFS/$a is missing"
	done
	expect_eq status "$(sysattr status)" ALIVE
	expect_eq device_type "$(sysattr device_type)" apex
	expect_eq pci_address "$(sysattr pci_address)" "$(chip_addr)"
	expect_eq node_0_page_table_entries "$(sysattr node_0_page_table_entries)" 8192
	expect_eq node_0_num_mapped_pages "$(sysattr node_0_num_mapped_pages)" 0
	expect_eq is_device_owned "$(sysattr is_device_owned)" 0
	expect_eq write_open_count "$(sysattr write_open_count)" 0
	expect_eq user_mem_ranges "$(sysattr user_mem_ranges | xargs)" \
		"0x00040000-0x00041000 0x00044000-0x00045000 0x00048000-0x00049000"
	expect_eq bar_sizes "$(sysattr bar_sizes)" "2: 0x100000"
	[ "$(sysattr node_0_simple_page_table_entries)" -le 8192 ] ||
		fail "node_0_simple_page_table_entries $(sysattr node_0_simple_page_table_entries)"
	[ "$(sysattr interrupt_counts | grep -cE '^0x[0-9a-f]{2}: [0-9]+$')" = 13 ] ||
		fail "interrupt_counts: $(sysattr interrupt_counts)"
	[[ $(sysattr unique_id) =~ ^[0-9a-f]{32}$ ]] || fail "unique_id '$(sysattr unique_id)'"
	[[ $(sysattr temp) =~ ^-?[0-9]+$ ]] || fail "temp '$(sysattr temp)'"
	[[ $(sysattr driver_version) =~ ^[0-9]+\.[0-9]+ ]] ||
		fail "driver_version '$(sysattr driver_version)'"
}

# open_as USER MODE EXPECT: open /dev/apex_0 as USER (fresh group list).
open_as() {
	runuser -u "$1" -- "$APEX_TESTS/apex-open" "$APEX_DEV" "$2" "$3"
}

# dmesg_clean: no kernel warning, bug, oops, lockdep or UBSAN report, and
# in the debug-kernel guest no KASAN report (it begins with BUG:), no
# DMA-API error (a warning) or that checker out of entries, no kmemleak
# report.
dmesg_clean() {
	local bad pat='WARNING:|BUG:|Oops|lockdep|UBSAN|general protection fault|Call Trace'
	pat+="|DMA-API: debugging out of memory|suspected memory leak"
	# What a lockdep kernel prints at every boot.
	local benign='RCU lockdep checking is enabled'
	bad=$(dmesg | grep -E "$pat" | grep -vE "$benign" || true)
	[ -z "$bad" ] || fail "$(dmesg | grep -vE "$benign" | grep -E -B2 -A20 "$pat" | head -n 60)"
}

# no_failed_units: systemd reports no failed unit in this boot.
no_failed_units() {
	local failed
	failed=$(systemctl --failed --no-legend --plain 2>&1) || fail "systemctl --failed: $failed"
	[ -z "$failed" ] || fail "failed units: $failed"
}

# reload_modules [PARAM=VALUE...]: unload both modules, load apex (with
# PARAMs) and wait for udev to create the node again.
reload_modules() {
	if module_loaded apex || module_loaded gasket; then
		modprobe -r apex gasket || fail "modprobe -r apex gasket failed"
	fi
	! module_loaded apex || fail "apex still loaded after modprobe -r"
	! module_loaded gasket || fail "gasket still loaded after modprobe -r"
	modprobe apex "$@" || fail "modprobe apex $* failed"
	udevadm settle -t 30 || true
	wait_until 20 test -c "$APEX_DEV" || fail "$APEX_DEV did not appear after modprobe apex"
	wait_until 20 node_ok || node_ok
}

export -f fail expect_eq wait_until ctl sysattr chip_get chip_is wait_chip chip_cmd \
	kmsg_mark dmesg_after dmesg_logged irq_count irq_count_above hwmon_dir \
	module_loaded modules_loaded \
	chip_addr iommu_as_booted node_ok by_path_link by_path_ok no_world_nodes lspci_shows_chip driver_in_use \
	chips_without_driver \
	sysfs_sane open_as dmesg_clean no_failed_units reload_modules

# run_device_programs FACTOR: the device programs against $APEX_DEV, from
# the ioctl table to the fuzzer, each as a TAP check, with its timeout times
# FACTOR (the debug kernel runs them 4 to 10 times slower). Before
# apex-demo: vgem loaded where the kernel has it (the only dma-buf exporter
# 5.10 and 6.1 build) and debugfs mounted (dma_buf/bufinfo counts buffers).
run_device_programs() {
	local f=$1 ids page small_pages=1
	# apex-ioctl's table of bad input and apex-demo's walk through the
	# driver's calls use device addresses, sizes and dma-buf page counts of
	# 4 KiB, the Coral runtime's page, which a kernel with larger pages
	# refuses (gasket.h, "Pages"); apex-pages checks those calls there.
	page=$(getconf PAGESIZE)
	[ "$page" = 4096 ] || small_pages=0
	if [ "$small_pages" = 1 ]; then
		tap_prog -t $((300 * f)) apex-ioctl "$APEX_TESTS/apex-ioctl" "$APEX_DEV"
	else
		tap_skip apex-ioctl "its table is written for 4 KiB pages; this kernel's are $page bytes"
	fi
	tap_prog -t $((120 * f)) apex-mmap "$APEX_TESTS/apex-mmap" "$APEX_DEV"
	tap_prog -t $((120 * f)) apex-pages "$APEX_TESTS/apex-pages" "$APEX_DEV"
	if [ "$small_pages" = 0 ]; then
		# The kernel says which windows it refuses with these pages, and why.
		tap_check "probe logged that 0x44000 and 0x48000 cannot be mapped with these pages" \
			bash -c 'for w in 0x44000 0x48000; do
				dmesg | grep -q "window $w cannot be mapped with $1 KiB pages" || exit 1
			done' sh $((page / 1024))
		tap_check "the refused mmap() was logged with the process" bash -c \
			'dmesg | grep -Eq "apex-pages\[[0-9]+\]: mmap\(\) of BAR2 window 0x44000 refused"'
	fi
	modprobe vgem 2>/dev/null || tap_diag "no vgem module in this kernel"
	mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
	if [ "$small_pages" = 1 ]; then
		tap_prog -t $((300 * f)) apex-demo "$APEX_TESTS/apex-demo" --tap "$APEX_DEV"
	else
		tap_skip "apex-demo --tap" "its calls are written for 4 KiB pages; this kernel's are $page bytes"
	fi
	tap_prog -t $((120 * f)) apex-owner runuser -u tpuuser -- "$APEX_TESTS/apex-owner" "$APEX_DEV"
	tap_prog -t $((120 * f)) apex-exit "$APEX_TESTS/apex-exit" "$APEX_DEV"
	tap_prog -t $((180 * f)) apex-hostile "$APEX_TESTS/apex-hostile" "$APEX_DEV"
	# A hard limit of 1 MiB: apex-memlock sets its soft limit to that.
	tap_prog -t $((120 * f)) apex-memlock \
		bash -c 'ulimit -l 1024 && exec runuser -u tpuuser -- "$@"' \
		apex-memlock "$APEX_TESTS/apex-memlock" "$APEX_DEV"
	tap_check -v "dmesg: the refused map names RLIMIT_MEMLOCK and ulimit -l" \
		bash -c "dmesg | grep -E 'apex .*apex-memlock.*exceed RLIMIT_MEMLOCK .*ulimit -l'"
	# 10 s of random calls; the seed it prints repeats a run (--seed N).
	ids="$(id -u tpuuser):$(id -g tpuuser):$(getent group apex | cut -d: -f3)"
	tap_prog -t $((180 * f)) apex-fuzz "$APEX_TESTS/apex-fuzz" --secs 10 --user "$ids" \
		--outsider "$(id -u otheruser):$(id -g otheruser)" "$APEX_DEV"
}

# The names of run_device_programs' checks, for tap_deps_fail.
# shellcheck disable=SC2034 # used by the stages that source this file
APEX_DEVICE_PROGRAMS=(apex-ioctl apex-mmap apex-pages apex-demo apex-owner apex-exit
	apex-hostile apex-memlock "dmesg RLIMIT_MEMLOCK hint" apex-fuzz)
