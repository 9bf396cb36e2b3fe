#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# launch.sh: boot one guest with emulated Apex chips and wait until it powers
# off (`launch.sh --help` for the options).
#
# The guest talks to the host through lines "# apex-vmtest: ..." on its
# results port (results.tap). Each one goes to RUN_DIR/timeline with the host
# time it was read ("EPOCH TEXT"), beside the host's own events (qemu start,
# qemu exit), so a run's phases can be timed on the wall clock
# (vmtest/phase-table.sh). Two of them are requests:
#   "request kill-apexsim N"  apexsim N is killed with SIGKILL at once (a chip
#                             that vanishes with its server)
#   "request power-cycle"     once the guest has powered off, fresh apexsims
#                             and a new QEMU boot the same overlay disk again
#                             (a reset inside QEMU is no substitute once an
#                             apexsim has gone: QEMU 11.1 aborts with "vfio:
#                             DMA mapping failed" when the firmware remaps
#                             memory after the reset)
# Every line the guest wrote before QEMU exited is read before the exit is
# acted on, so a request sent just before the power-off is never lost.
#
# How each apexsim ended goes to apexsim.status, one line "N ENDED EXPECTED"
# (exit:CODE, signal:NAME, or none for a chip that does not exist);
# vmtest/check-run.sh fails the run where ENDED differs from EXPECTED.
#
# Exit status: 0 when the guest powered off, 124 on timeout, else QEMU's.
# Every process started here is stopped on exit, including Ctrl-C.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

usage() {
	cat <<'EOF'
usage: launch.sh --run-dir DIR --base IMAGE --seed SEED [options]
  --run-dir DIR      outputs: console.log, results.tap, timeline, qemu.log,
                     apexsim-N.log, apexsim.status, overlay.qcow2 (created;
                     the base image stays untouched)
  --base IMAGE       base disk, raw ext4 (our images) or qcow2 (a cloud image)
  --seed SEED        NoCloud seed (cloud-localds)
  --test-disk DISK   APEXTEST disk, attached read-only
  --kernel F --initrd F   boot these directly with root=/dev/vda; without
                     them the firmware boots the base image's own loader
  --append ARGS      extra kernel arguments
  --devices N        emulated Apex chips, one apexsim each (default 1)
  --timeout SEC      kill the guest after SEC seconds (default 1200)
  --net              user-mode network (a cloud image fetches its own dkms)
  --iommu            an emulated Intel IOMMU (intel-iommu,caching-mode=on),
                     on in the guest (intel_iommu=on iommu.strict=1): the
                     chips reach only what their driver has mapped, and a
                     late DMA fails in apexsim (vmtest/apexsim/README.md)
  --arch A           amd64 (default: a q35 PC) or arm64 (QEMU's virt
                     machine; needs --kernel)
Environment:
  APEXSIM       the device server (default build/apexsim/apexsim)
  APEX_ACCEL    tcg (default) | kvm | auto (use KVM if a short probe boots)
  APEX_CPU      QEMU CPU model (default qemu64; arm64: max,pauth-impdef=on)
  APEX_SMP      vCPUs (default 2)
  APEX_MEM      guest memory in MiB (default 2048)
  APEX_TB_SIZE  TCG translation-block cache in MiB (default: QEMU's)
  APEX_KERNEL_ARGS  kernel arguments added to --append's (for make bench-tcg)
The TCG defaults were chosen by measurement (vmtest/qemu/README.md).
EOF
}

# --- options -------------------------------------------------------------------
run_dir='' base='' seed='' test_disk='' kernel='' initrd='' append='' net=0 iommu=0 arch=amd64
devices=1 timeout=1200
parse_args() {
	while [ $# -gt 0 ]; do
		case $1 in
		--run-dir) run_dir=$2; shift ;;
		--base) base=$2; shift ;;
		--seed) seed=$2; shift ;;
		--test-disk) test_disk=$2; shift ;;
		--kernel) kernel=$2; shift ;;
		--initrd) initrd=$2; shift ;;
		--append) append=$2; shift ;;
		--devices) devices=$2; shift ;;
		--timeout) timeout=$2; shift ;;
		--net) net=1 ;;
		--iommu) iommu=1 ;;
		--arch) arch=$2; shift ;;
		-h | --help) usage; exit 0 ;;
		*) usage >&2; apex_die "launch.sh: unknown argument '$1'" ;;
		esac
		shift
	done
	[ -n "$run_dir" ] && [ -n "$base" ] && [ -n "$seed" ] ||
		{ usage >&2; apex_die "launch.sh: --run-dir, --base and --seed are required"; }
	[ "$iommu" = 0 ] || [ -n "$kernel" ] ||
		apex_die "launch.sh: --iommu needs --kernel: the guest kernel is told to use it"
	case $arch in
	amd64) qemu_system=qemu-system-x86_64 ;;
	arm64) qemu_system=qemu-system-aarch64 ;;
	*) apex_die "launch.sh: --arch must be amd64 or arm64, not '$arch'" ;;
	esac
	[ "$arch" = amd64 ] || [ -n "$kernel" ] ||
		apex_die "launch.sh: --arch $arch needs --kernel: its machine has no firmware here"
	[ "$arch" = amd64 ] || [ "$iommu" = 0 ] ||
		apex_die "launch.sh: --iommu is an Intel IOMMU, for --arch amd64 only"
	local f
	for f in "$base" "$seed" $test_disk $kernel $initrd; do
		[ -f "$f" ] || apex_die "launch.sh: $f does not exist"
	done
	apexsim=${APEXSIM:-$apex_top/build/apexsim/apexsim}
	[ "$devices" -eq 0 ] || [ -x "$apexsim" ] ||
		apex_die "apexsim not found at $apexsim: build it with 'make -C vmtest/apexsim'"
}

# --- processes -------------------------------------------------------------------
sim_pids=()
sim_expect=()	# how apexsim N should end: exit:0, or signal:KILL once asked for
sim_ended=()
qemu_pid=
sock_dir=

# timeline EVENT: one line of the run's timeline, stamped with the host time.
timeline() {
	apex_timeline "$run_dir" "$@"
}

# wait_gone PID: give PID up to 5 s to exit.
wait_gone() {
	local i
	for i in $(seq 50); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
}
stop_pid() {
	local pid=$1
	kill "$pid" 2>/dev/null || return 0
	wait_gone "$pid"
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# end_sim N: reap apexsim N, which exits by itself once QEMU has gone
# (stopped with SIGTERM, then SIGKILL, if not), and record how it ended.
end_sim() {
	local n=$1 pid=${sim_pids[$1]} rc=0 ended
	[ -z "${sim_ended[$n]:-}" ] || return 0
	wait_gone "$pid"
	if kill "$pid" 2>/dev/null; then
		echo "launch.sh: apexsim $n still ran after QEMU, sent SIGTERM" \
			>>"$run_dir/apexsim-$n.log"
		wait_gone "$pid"
		kill -KILL "$pid" 2>/dev/null || true
	fi
	wait "$pid" 2>/dev/null || rc=$?
	# apexsim's own exit codes are below 128: above is a signal.
	if [ "$rc" -gt 128 ]; then
		ended=signal:$(kill -l $((rc - 128)))
	else
		ended=exit:$rc
	fi
	sim_ended[n]=$ended
	echo "$n $ended ${sim_expect[$n]}" >>"$run_dir/apexsim.status"
}

# kill_sim N: the guest asked for apexsim N to be killed.
kill_sim() {
	local n=$1
	if [ "$n" -ge "$devices" ]; then
		echo "$n none signal:KILL" >>"$run_dir/apexsim.status"
		apex_stage "the guest asked to kill apexsim $n, but there are only $devices"
		return
	fi
	if [ -z "${sim_ended[$n]:-}" ]; then
		sim_expect[n]=signal:KILL
		# Quiet: bash would report the death of its background job.
		{
			kill -KILL "${sim_pids[$n]}" || true
			end_sim "$n"
		} 2>/dev/null
	fi
	apex_stage "apexsim $n killed as the guest asked: ${sim_ended[$n]}"
}

# start_sims: one apexsim per chip, each a fresh chip; QEMU needs their
# sockets listening before it starts.
start_sims() {
	local n i
	sim_pids=() sim_expect=() sim_ended=()
	for n in $(seq 0 $((devices - 1))); do
		# A killed apexsim leaves its sockets behind.
		rm -f "$sock_dir/sim-$n.sock" "$sock_dir/ctl-$n.sock"
		(
			close_private_fds
			exec "$apexsim" --socket "$sock_dir/sim-$n.sock" \
				--control "$sock_dir/ctl-$n.sock" --log "$run_dir/apexsim-$n.log"
		) >>"$run_dir/apexsim-$n.log" 2>&1 &
		sim_pids+=($!)
		sim_expect+=(exit:0)
	done
	for n in $(seq 0 $((devices - 1))); do
		for i in $(seq 100); do
			[ -S "$sock_dir/sim-$n.sock" ] && [ -S "$sock_dir/ctl-$n.sock" ] && break
			kill -0 "${sim_pids[$n]}" 2>/dev/null ||
				apex_die "apexsim $n exited at start:" \
					"$(tail -n 5 "$run_dir/apexsim-$n.log")"
			sleep 0.1
		done
		[ -S "$sock_dir/sim-$n.sock" ] ||
			apex_die "apexsim $n did not create its sockets in 10 s" \
				"(log: $run_dir/apexsim-$n.log)"
	done
}

cleanup() {
	local rc=$? n
	[ -z "$qemu_pid" ] || stop_pid "$qemu_pid"
	for n in "${!sim_pids[@]}"; do
		end_sim "$n"
	done
	[ -z "$sock_dir" ] || rm -rf "$sock_dir"
	exit "$rc"
}

# close_private_fds: in a child about to exec, close the descriptors this
# shell keeps for itself (results.tap, apex_sleep's pipe), so that QEMU and
# the apexsims started after a power cycle do not hold them.
close_private_fds() {
	[ -z "$tap_fd" ] || exec {tap_fd}<&-
	[ -z "${apex_sleep_fd:-}" ] || exec {apex_sleep_fd}<&-
}

# --- QEMU's root -------------------------------------------------------------------
# QEMU from a provisioned root runs inside it, in a private mount namespace
# that holds the bind mounts: they vanish with QEMU however it ends, and
# several guests can share the root at once. Host directories QEMU needs
# appear as /apexmnt/N.
qroot=
binds=()
bind_dir() {
	local d i
	d=$(realpath "$1")
	for i in "${!binds[@]}"; do
		[ "${binds[$i]}" != "$d" ] || return 0
	done
	binds+=("$d")
	mkdir -p "$qroot/apexmnt/$((${#binds[@]} - 1))"
}
# qpath FILE: FILE as QEMU sees it (its directory must be bound).
qpath() {
	local f d i
	f=$(realpath -m "$1")
	[ "$qroot" != / ] || { printf '%s\n' "$f"; return; }
	d=${f%/*}
	for i in "${!binds[@]}"; do
		if [ "${binds[$i]}" = "$d" ]; then
			printf '/apexmnt/%s/%s\n' "$i" "${f##*/}"
			return
		fi
	done
	apex_die "launch.sh: internal error: $d is not bound into the QEMU root"
}
# in_root CMD...: exec CMD in QEMU's root; it replaces the calling shell,
# so call it in a ( subshell ) or as a background job, whose PID is then
# the command's own.
in_root() {
	close_private_fds
	[ "$qroot" != / ] || exec "$@"
	# shellcheck disable=SC2016
	exec unshare --mount --propagation private -- bash -euc '
		root=$1; shift
		mount --bind /dev "$root/dev"
		mount -t proc proc "$root/proc"
		i=0
		while [ "$1" != -- ]; do
			mount --bind "$1" "$root/apexmnt/$i"
			i=$((i + 1)); shift
		done
		shift
		exec chroot "$root" "$@"' _ "$qroot" "${binds[@]}" -- "$@"
}

# make_overlay: each boot writes to a fresh overlay; the base image is
# shared and read-only.
make_overlay() {
	local base_fmt=raw
	[ "$(head -c 4 "$base" | od -An -tx1 | tr -d ' ')" != 514649fb ] || base_fmt=qcow2
	(in_root qemu-img create -q -f qcow2 -F "$base_fmt" -b "$(qpath "$base")" \
		"$(qpath "$run_dir/overlay.qcow2")") >"$run_dir/qemu.log" 2>&1 ||
		apex_die "qemu-img could not create the overlay: $(cat "$run_dir/qemu.log")"
}

# machine_args: for --arch, the machine and the serial console its kernel
# writes to.
machine_args() {
	case $arch in
	amd64) machine=q35 console=ttyS0 ;;
	arm64) machine=virt,gic-version=3 console=ttyAMA0 ;;
	esac
}

# KVM hangs on some hosts instead of failing, so it is used only when asked
# for, or when a guest kernel boots under it within a short time. Only a
# guest of the host's own architecture can use it.
kvm_works() {
	local pid i log=$run_dir/kvm-probe.log cpu=()
	[ -n "$kernel" ] && [ -w /dev/kvm ] || return 1
	case $arch-$(uname -m) in
	amd64-x86_64) ;;
	arm64-aarch64) cpu=(-cpu host) ;;
	*) return 1 ;;
	esac
	# Without an initrd the kernel panics at once and -no-reboot ends QEMU.
	in_root "$qemu_system" -accel kvm -machine "$machine" "${cpu[@]}" -m 256 -nodefaults \
		-no-user-config -display none -no-reboot \
		-chardev "file,id=con,path=$(qpath "$log")" -serial chardev:con \
		-kernel "$(qpath "$kernel")" -append "console=$console panic=-1" >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 150); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid" || true
			grep -q 'Linux version' "$log"
			return
		fi
		sleep 0.2
	done
	stop_pid "$pid"
	return 1
}
choose_accel() {
	case ${APEX_ACCEL:-tcg} in
	tcg) accel=tcg ;;
	kvm) accel=kvm ;;
	auto)
		accel=tcg
		if kvm_works; then accel=kvm; fi
		apex_stage "accelerator: $accel"
		;;
	*) apex_die "APEX_ACCEL must be tcg, kvm or auto" ;;
	esac
}

# tcg_kernel_args: what the guest kernel must be told under TCG (nothing
# under KVM), each with a leading space.
# - no_timer_check: QEMU's timer interrupt works; the boot's check of it
#   allows it 40 ms, which a starved TCG guest can miss ("IO-APIC + timer
#   doesn't work!", a panic). KVM guests skip the check by themselves.
# - tsc_early_khz: under TCG the guest reads the host's TSC, so it ticks at
#   the host's rate. A guest kernel that calibrates it while its vCPU gets
#   little of the host's cores can be 65 times wrong (PIT against HPET:
#   32388 kHz against 2096039 kHz), and then its clock runs that much too
#   fast and it hangs in soft lockups. The host kernel knows the rate: with
#   a constant TSC it times its delays by the TSC, and its bogomips are then
#   the TSC's kHz / 500.
# Neither applies to an arm64 guest, whose timer is the CPU's own.
tcg_kernel_args() {
	[ "$accel" = tcg ] && [ "$arch" = amd64 ] || return 0
	printf ' no_timer_check'
	[ "$(uname -m)" = x86_64 ] || return 0
	grep -q -m 1 '^flags.* constant_tsc' /proc/cpuinfo || return 0
	awk -F': *' '/^bogomips/ { printf " tsc_early_khz=%d", $2 * 500; exit }' /proc/cpuinfo
}

# qemu_args: the machine. vCPUs, CPU model, memory and the translation-block
# cache were chosen by timing the guest's DKMS build (vmtest/qemu/README.md).
qemu_args() {
	local mem=${APEX_MEM:-2048} accel_opt=$accel n dev cmdline iommu_dev=() cpu
	[ "$accel" != tcg ] || [ -z "${APEX_TB_SIZE:-}" ] || accel_opt+=",tb-size=$APEX_TB_SIZE"
	# The IOMMU comes before the devices behind it. caching-mode: the
	# guest announces every mapping it makes, which is how QEMU learns
	# what to pass on to the chips' servers. Strict mode (below): an unmap
	# takes effect before the driver's dma_unmap returns, not in a later
	# batch, so memory a driver released is gone from the chip's view.
	[ "$iommu" = 0 ] || iommu_dev=(-device intel-iommu,caching-mode=on)
	# arm64 under TCG: the most capable CPU, whose MMU has 4, 16 and 64 KiB
	# pages, with QEMU's own pointer authentication, much cheaper to
	# emulate than the architected one.
	case $arch-$accel in
	amd64-*) cpu=${APEX_CPU:-qemu64} ;;
	arm64-tcg) cpu=${APEX_CPU:-max,pauth-impdef=on} ;;
	arm64-kvm) cpu=${APEX_CPU:-host} ;;
	esac
	args=(
		-machine "$machine,memory-backend=mem" -accel "$accel_opt"
		"${iommu_dev[@]}"
		-cpu "$cpu" -smp "${APEX_SMP:-2}" -m "${mem}M"
		-object "memory-backend-memfd,id=mem,size=${mem}M,share=on"
		-nodefaults -no-user-config -display none
		-chardev "file,id=con,append=on,path=$(qpath "$run_dir/console.log")"
		-serial chardev:con
		-drive "file=$(qpath "$run_dir/overlay.qcow2"),format=qcow2,if=virtio"
		-drive "file=$(qpath "$seed"),format=raw,if=virtio,readonly=on"
		-device virtio-rng-pci
		-device virtio-serial-pci,id=vser
		-chardev "file,id=results,append=on,path=$(qpath "$run_dir/results.tap")"
		-device virtserialport,bus=vser.0,chardev=results,name=org.apex.results
	)
	[ -z "$test_disk" ] ||
		args+=(-drive "file=$(qpath "$test_disk"),format=raw,if=virtio,readonly=on")
	if [ -n "$kernel" ]; then
		cmdline="root=/dev/vda rw console=$console$(tcg_kernel_args)"
		# reboot=force: the power-off skips machine_shutdown(), which
		# would turn the IOMMU's translation off. QEMU then maps all of
		# the guest's RAM for every chip at once, and one whose apexsim
		# is gone (stage3 kills one) makes it abort ("vfio: DMA mapping
		# failed"). Drivers' shutdown callbacks still run.
		[ "$iommu" = 0 ] || cmdline+=" intel_iommu=on iommu.strict=1 reboot=force"
		args+=(-kernel "$(qpath "$kernel")"
			-append "$cmdline $append${APEX_KERNEL_ARGS:+ $APEX_KERNEL_ARGS}")
		[ -z "$initrd" ] || args+=(-initrd "$(qpath "$initrd")")
	fi
	if [ "$net" = 1 ]; then
		args+=(-nic user,model=virtio-net-pci)
	else
		args+=(-nic none)
	fi
	for n in $(seq 0 $((devices - 1))); do
		dev="{\"driver\":\"vfio-user-pci\",\"id\":\"apex$n\",\"socket\":"
		dev+="{\"type\":\"unix\",\"path\":\"$(qpath "$sock_dir/sim-$n.sock")\"}}"
		args+=(
			-chardev "socket,id=ctl$n,path=$(qpath "$sock_dir/ctl-$n.sock")"
			-device "virtserialport,bus=vser.0,chardev=ctl$n,name=org.apex.ctl.$n"
			-device "$dev"
		)
	done
}

start_qemu() {
	in_root "$qemu_system" "${args[@]}" >>"$run_dir/qemu.log" 2>&1 &
	qemu_pid=$!
	timeline "qemu start"
}

# --- the guest's lines -------------------------------------------------------------
tap_fd=		# results.tap, open for reading from where the last call stopped
tap_partial=	# the guest's line in progress at the last call
cycles_asked=0	# power cycles asked for and not yet carried out

# read_guest_lines: handle the "# apex-vmtest: " lines the guest has
# completed since the last call, in order. Only complete lines count: the
# guest may be mid-line. QEMU appends to the one file across power cycles,
# so one open descriptor follows it, and no process is started per call.
read_guest_lines() {
	local tap=$run_dir/results.tap part line mark
	if [ -z "$tap_fd" ]; then
		[ -f "$tap" ] || return 0
		exec {tap_fd}<"$tap"
	fi
	while :; do
		part=
		if ! IFS= read -r -u "$tap_fd" part; then
			# End of what the guest has written: keep its unfinished line.
			tap_partial+=$part
			return 0
		fi
		line=${tap_partial}${part%$'\r'}
		tap_partial=
		[[ $line == "# apex-vmtest: "* ]] || continue
		mark=${line#\# apex-vmtest: }
		timeline "$mark"
		apex_stage "guest: $mark"
		if [[ $mark =~ ^request\ kill-apexsim\ ([0-9]{1,3})$ ]]; then
			kill_sim "$((10#${BASH_REMATCH[1]}))"
		elif [ "$mark" = "request power-cycle" ]; then
			cycles_asked=$((cycles_asked + 1))
		fi
	done
}

report_failure() {
	echo "--- $run_dir/qemu.log ---" >&2
	tail -n 20 "$run_dir/qemu.log" >&2
	echo "--- last 40 lines of $run_dir/console.log ---" >&2
	tail -n 40 "$run_dir/console.log" >&2 || true
}

# run_guest: wait for each power-off, acting on the guest's lines as they
# arrive; boot again while the guest has asked for a power cycle.
run_guest() {
	local start rc n
	start=$EPOCHSECONDS
	start_qemu
	apex_stage "guest booting ($accel, $devices emulated Apex, timeout ${timeout}s," \
		"console: $run_dir/console.log)"
	while :; do
		while kill -0 "$qemu_pid" 2>/dev/null; do
			if [ $((EPOCHSECONDS - start)) -ge "$timeout" ]; then
				stop_pid "$qemu_pid"
				qemu_pid=
				timeline "qemu killed at the timeout"
				echo "--- last 40 lines of $run_dir/console.log ---" >&2
				tail -n 40 "$run_dir/console.log" >&2 || true
				apex_stage "guest timed out after ${timeout}s and was killed"
				exit 124
			fi
			read_guest_lines
			apex_sleep 1
		done
		rc=0
		wait "$qemu_pid" || rc=$?
		qemu_pid=
		timeline "qemu exit $rc"
		# What the guest wrote before it powered off, a request included.
		read_guest_lines
		if [ "$rc" -ne 0 ]; then
			report_failure
			apex_stage "QEMU exited with status $rc"
			exit "$rc"
		fi
		[ "$cycles_asked" -gt 0 ] || break
		cycles_asked=$((cycles_asked - 1))
		for n in "${!sim_pids[@]}"; do
			end_sim "$n"
		done
		start_sims
		start_qemu
		apex_stage "guest powered off after $((EPOCHSECONDS - start))s and, as it asked," \
			"on again with fresh chips"
	done
	apex_stage "guest powered off after $((EPOCHSECONDS - start))s"
}

main() {
	local f
	parse_args "$@"
	qroot=$("$(dirname "$0")/provision.sh")
	mkdir -p "$run_dir"
	run_dir=$(realpath "$run_dir")
	rm -f "$run_dir/overlay.qcow2" "$run_dir/console.log" "$run_dir/results.tap" \
		"$run_dir/apexsim.status"
	sock_dir=$(mktemp -d /tmp/apex-vm.XXXXXX)	# short: UNIX socket paths are limited
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	for f in "$base" "$seed" $test_disk $kernel $initrd; do
		bind_dir "$(dirname "$f")"
	done
	bind_dir "$run_dir"
	bind_dir "$sock_dir"
	make_overlay
	machine_args
	choose_accel
	: >"$run_dir/apexsim.status"
	start_sims
	qemu_args
	printf '%q ' "$qemu_system" "${args[@]}" >"$run_dir/qemu.cmdline"
	run_guest
}

main "$@"
