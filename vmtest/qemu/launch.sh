#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Boot one guest with emulated Apex chips and wait until it powers off.
#
# usage: launch.sh --run-dir DIR --base IMAGE --seed SEED [options]
#   --run-dir DIR      outputs: console.log, results.tap, qemu.log, apexsim-N.log,
#                      apexsim.status, overlay.qcow2 (created, the base image
#                      stays untouched)
#   --base IMAGE       base disk, raw ext4 (our images) or qcow2 (a cloud image)
#   --seed SEED        NoCloud seed (cloud-localds)
#   --test-disk DISK   APEXTEST disk, attached read-only
#   --kernel F --initrd F   boot these directly with root=/dev/vda; without
#                      them the firmware boots the base image's own loader
#   --append ARGS      extra kernel arguments
#   --devices N        emulated Apex chips, one apexsim each (default 1)
#   --timeout SEC      kill the guest after SEC seconds (default 1200)
#   --net              user-mode network (a cloud image fetches its own dkms)
# Environment:
#   APEXSIM     the device server (default build/apexsim/apexsim)
#   APEX_ACCEL  tcg (default) | kvm | auto (use KVM if a short probe boots)
#
# The guest may ask for apexsim N to be killed (a chip that vanishes with
# its server) by sending the line "# apex-vmtest: request kill-apexsim N"
# on the results port; it is killed with SIGKILL at once. How each apexsim
# ended goes to apexsim.status, one line "N ENDED EXPECTED" (exit:CODE,
# signal:NAME, or none for a chip that does not exist); vmtest/check-run.sh
# fails the run where ENDED differs from EXPECTED.
#
# The guest may also ask for a power cycle ("# apex-vmtest: request
# power-cycle"): once it has powered off, fresh apexsims and a new QEMU boot
# the same overlay disk again, and the logs go on. (A reset inside QEMU is
# no substitute once an apexsim has gone: QEMU 11.1 aborts with "vfio: DMA
# mapping failed" when the firmware remaps memory after the reset.)
#
# Exit status: 0 when the guest powered off, 124 on timeout, else QEMU's.
# Every process started here is stopped on exit, including Ctrl-C.
set -euo pipefail
source "$(dirname "$0")/../lib/common.sh"

run_dir='' base='' seed='' test_disk='' kernel='' initrd='' append='' net=0
devices=1 timeout=1200
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
	*) apex_die "launch.sh: unknown argument '$1' (see the usage at the top of $0)" ;;
	esac
	shift
done
[ -n "$run_dir" ] && [ -n "$base" ] && [ -n "$seed" ] ||
	apex_die "launch.sh: --run-dir, --base and --seed are required"
for f in "$base" "$seed" $test_disk $kernel $initrd; do
	[ -f "$f" ] || apex_die "launch.sh: $f does not exist"
done
apexsim=${APEXSIM:-$apex_top/build/apexsim/apexsim}
[ "$devices" -eq 0 ] || [ -x "$apexsim" ] ||
	apex_die "apexsim not found at $apexsim: build it with 'make -C vmtest/apexsim'"

qroot=$("$(dirname "$0")/provision.sh")
mkdir -p "$run_dir"
run_dir=$(realpath "$run_dir")
sock_dir=$(mktemp -d /tmp/apex-vm.XXXXXX)	# short: UNIX socket paths are limited

sim_pids=()
sim_expect=()	# how apexsim N should end: exit:0, or signal:KILL once asked for
sim_ended=()
qemu_pid=
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
		echo "launch.sh: apexsim $n still ran after QEMU, sent SIGTERM" >>"$run_dir/apexsim-$n.log"
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
cleanup() {
	local rc=$? n
	[ -z "$qemu_pid" ] || stop_pid "$qemu_pid"
	for n in "${!sim_pids[@]}"; do
		end_sim "$n"
	done
	rm -rf "$sock_dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# QEMU from a provisioned root runs inside it, in a private mount namespace
# that holds the bind mounts: they vanish with QEMU however it ends, and
# several guests can share the root at once. Host directories QEMU needs
# appear as /apexmnt/N.
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

for f in "$base" "$seed" $test_disk $kernel $initrd; do
	bind_dir "$(dirname "$f")"
done
bind_dir "$run_dir"
bind_dir "$sock_dir"

# Each boot writes to a fresh overlay; the base image is shared and read-only.
base_fmt=raw
[ "$(head -c 4 "$base" | od -An -tx1 | tr -d ' ')" != 514649fb ] || base_fmt=qcow2
rm -f "$run_dir/overlay.qcow2" "$run_dir/console.log" "$run_dir/results.tap" \
	"$run_dir/apexsim.status"
(in_root qemu-img create -q -f qcow2 -F "$base_fmt" -b "$(qpath "$base")" \
	"$(qpath "$run_dir/overlay.qcow2")") >"$run_dir/qemu.log" 2>&1 ||
	apex_die "qemu-img could not create the overlay: $(cat "$run_dir/qemu.log")"

# KVM hangs on some hosts instead of failing, so it is used only when asked
# for, or when a guest kernel boots under it within a short time.
kvm_works() {
	local pid i log=$run_dir/kvm-probe.log
	[ -n "$kernel" ] && [ -w /dev/kvm ] || return 1
	# Without an initrd the kernel panics at once and -no-reboot ends QEMU.
	in_root qemu-system-x86_64 -accel kvm -machine q35 -m 256 -nodefaults \
		-no-user-config -display none -no-reboot \
		-chardev "file,id=con,path=$(qpath "$log")" -serial chardev:con \
		-kernel "$(qpath "$kernel")" -append 'console=ttyS0 panic=-1' >/dev/null 2>&1 &
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

# start_sims: one apexsim per chip, each a fresh chip; QEMU needs their
# sockets listening before it starts.
start_sims() {
	local n i
	sim_pids=() sim_expect=() sim_ended=()
	for n in $(seq 0 $((devices - 1))); do
		# A killed apexsim leaves its sockets behind.
		rm -f "$sock_dir/sim-$n.sock" "$sock_dir/ctl-$n.sock"
		"$apexsim" --socket "$sock_dir/sim-$n.sock" --control "$sock_dir/ctl-$n.sock" \
			--log "$run_dir/apexsim-$n.log" >>"$run_dir/apexsim-$n.log" 2>&1 &
		sim_pids+=($!)
		sim_expect+=(exit:0)
	done
	for n in $(seq 0 $((devices - 1))); do
		for i in $(seq 100); do
			[ -S "$sock_dir/sim-$n.sock" ] && [ -S "$sock_dir/ctl-$n.sock" ] && break
			kill -0 "${sim_pids[$n]}" 2>/dev/null ||
				apex_die "apexsim $n exited at start: $(tail -n 5 "$run_dir/apexsim-$n.log")"
			sleep 0.1
		done
		[ -S "$sock_dir/sim-$n.sock" ] ||
			apex_die "apexsim $n did not create its sockets in 10 s (log: $run_dir/apexsim-$n.log)"
	done
}
: >"$run_dir/apexsim.status"
start_sims

args=(
	-machine q35,memory-backend=mem -accel "$accel" -smp 2 -m 2G
	-object memory-backend-memfd,id=mem,size=2G,share=on
	-nodefaults -no-user-config -display none
	-chardev "file,id=con,append=on,path=$(qpath "$run_dir/console.log")" -serial chardev:con
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
	args+=(-kernel "$(qpath "$kernel")" -append "root=/dev/vda rw console=ttyS0 $append")
	[ -z "$initrd" ] || args+=(-initrd "$(qpath "$initrd")")
fi
if [ "$net" = 1 ]; then
	args+=(-nic user,model=virtio-net-pci)
else
	args+=(-nic none)
fi
for n in $(seq 0 $((devices - 1))); do
	args+=(
		-chardev "socket,id=ctl$n,path=$(qpath "$sock_dir/ctl-$n.sock")"
		-device "virtserialport,bus=vser.0,chardev=ctl$n,name=org.apex.ctl.$n"
		-device "{\"driver\":\"vfio-user-pci\",\"id\":\"apex$n\",\"socket\":{\"type\":\"unix\",\"path\":\"$(qpath "$sock_dir/sim-$n.sock")\"}}"
	)
done

printf '%q ' qemu-system-x86_64 "${args[@]}" >"$run_dir/qemu.cmdline"
start_qemu() {
	in_root qemu-system-x86_64 "${args[@]}" >>"$run_dir/qemu.log" 2>&1 &
	qemu_pid=$!
}
start_qemu
apex_stage "guest booting ($accel, $devices emulated Apex, timeout ${timeout}s, console: $run_dir/console.log)"

# Wait for power-off; report the guest's stage markers as they arrive and
# act on its requests. Only complete lines count: the guest may be mid-line.
start=$(date +%s)
seen=0
cycles=0
while :; do
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if [ $(($(date +%s) - start)) -ge "$timeout" ]; then
			stop_pid "$qemu_pid"
			qemu_pid=
			echo "--- last 40 lines of $run_dir/console.log ---" >&2
			tail -n 40 "$run_dir/console.log" >&2 || true
			apex_stage "guest timed out after ${timeout}s and was killed"
			exit 124
		fi
		if [ -f "$run_dir/results.tap" ]; then
			lines=$(wc -l <"$run_dir/results.tap")
			mapfile -t marks < <(head -n "$lines" "$run_dir/results.tap" |
				grep -a '^# apex-vmtest: ' || true)
			while [ "$seen" -lt "${#marks[@]}" ]; do
				mark=${marks[$seen]#\# apex-vmtest: }
				seen=$((seen + 1))
				apex_stage "guest: $mark"
				if [[ $mark =~ ^request\ kill-apexsim\ ([0-9]{1,3})$ ]]; then
					kill_sim "$((10#${BASH_REMATCH[1]}))"
				elif [ "$mark" = "request power-cycle" ]; then
					cycles=$((cycles + 1))
				fi
			done
		fi
		sleep 2
	done
	rc=0
	wait "$qemu_pid" || rc=$?
	qemu_pid=
	if [ "$rc" -ne 0 ]; then
		echo "--- $run_dir/qemu.log ---" >&2
		tail -n 20 "$run_dir/qemu.log" >&2
		echo "--- last 40 lines of $run_dir/console.log ---" >&2
		tail -n 40 "$run_dir/console.log" >&2 || true
		apex_stage "QEMU exited with status $rc"
		exit "$rc"
	fi
	[ "$cycles" -gt 0 ] || break
	cycles=$((cycles - 1))
	for n in "${!sim_pids[@]}"; do
		end_sim "$n"
	done
	start_sims
	start_qemu
	apex_stage "guest powered off after $(($(date +%s) - start))s and, as it asked, on again with fresh chips"
done
apex_stage "guest powered off after $(($(date +%s) - start))s"
