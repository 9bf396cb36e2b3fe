# SPDX-License-Identifier: GPL-2.0-only OR MIT
# apex-doctor in the guest (sourced after lib.sh and removal.sh): the
# machine is put into each broken state, apex-doctor (the package's
# /usr/bin copy) must print the diagnosis line and exit with the right
# status, and the state is undone -- where the doctor prints a fixing
# command, with that command, so the fix is checked too.
# run_doctor_checks runs in stage3 before the removal checks, with both
# chips alive; run_doctor_gone_checks after them, when the chips are
# dead, and takes them off the bus.
# The states the guest cannot reach cheaply (another kernel, Secure Boot)
# are checked on fake machines on the host (tests/doctor-check.sh).

export APEX_DOCTOR=/usr/bin/apex-doctor
# The output of the last doctor run, for the checks' messages.
export APEX_DOCTOR_OUT=/tmp/apex-doctor.out
# Present on the test disk of the guests that induce every broken state
# (each costs TCG time; the healthy check runs in every guest).
export APEX_DOCTOR_STATES_FILE=/mnt/apextest/doctor-states

# doctor_says WANT_RC ERE CMD...: CMD (which runs apex-doctor) exits WANT_RC
# and prints a line matching ERE.
doctor_says() {
	local want=$1 re=$2 rc=0
	shift 2
	"$@" >"$APEX_DOCTOR_OUT" 2>&1 || rc=$?
	if [ "$rc" != "$want" ] || ! grep -Eq "$re" "$APEX_DOCTOR_OUT"; then
		cat "$APEX_DOCTOR_OUT"
		fail "exit status $rc (want $want); want a line matching /$re/"
	fi
	grep -E "$re|^result:" "$APEX_DOCTOR_OUT"
}

as_user() {
	runuser -u "$1" -- "${@:2}"
}

# The healthy machine, as tpuuser and as root; the full output is shown.
doctor_healthy() {
	doctor_says 0 '^result: the Edge TPU is usable by tpuuser' as_user tpuuser "$APEX_DOCTOR"
	cat "$APEX_DOCTOR_OUT"
	! grep -q 'FAIL' "$APEX_DOCTOR_OUT" || fail "a FAIL line on a healthy machine"
	doctor_says 0 '"usable":true' as_user tpuuser "$APEX_DOCTOR" --json
	doctor_says 0 '^secureboot +ok: ' "$APEX_DOCTOR" --verbose
}

# Headers removed (the /lib/modules/K/build link dkms uses), the modules
# still built: a warning with the install command, the device usable.
doctor_no_headers() {
	local k b re rc=0
	set +e # undo the state whatever fails
	k=$(uname -r) b=/lib/modules/$(uname -r)/build
	[ -e "$b" ] || { fail "$b is missing before the test"; return 1; }
	mv "$b" "$b.apex-doctor-test" || return 1
	re="^headers +WARNING: no kernel headers for $k.* "
	doctor_says 0 "${re}Fix: sudo apt install linux-headers-$k" \
		as_user tpuuser "$APEX_DOCTOR" || rc=1
	mv "$b.apex-doctor-test" "$b"
	return $rc
}

# A build that fails: the running kernel's build removed and the source
# given a compile error, so dkms build fails; the doctor must name the
# failure and the log's first compiler error. The error is a missing
# header, as when a new kernel drops one, at the top of the first file
# compiled: the compiler stops there instead of reading the whole file
# under TCG. Its fix (fix the source, dkms autoinstall) is a whole build
# under TCG, so the dkms tree and the modules are put back from a copy
# instead; doctor_not_loaded, next, loads them.
doctor_build_failed() {
	local k v f keep mods re rc=0
	set +e # undo the state whatever fails
	k=$(uname -r) v=$(pkg_version)
	f=/usr/src/apex-$v/gasket_core.c mods=/lib/modules/$k/updates/dkms
	keep=/var/tmp/apex-doctor-build
	if [ ! -f "$f" ] || [ ! -d "$mods" ]; then
		fail "no $f or $mods before the test"
		return 1
	fi
	rm -rf "$keep" && mkdir "$keep" && cp -p "$f" "$keep/" &&
		cp -a /var/lib/dkms/apex "$keep/dkms" && cp -a "$mods" "$keep/modules" ||
		{ fail "saving the dkms tree failed"; return 1; }
	dkms remove -m apex -v "$v" -k "$k" >"$keep/dkms.out" 2>&1
	# dkms 3 drops a module version with its last kernel.
	dkms status -m apex -v "$v" 2>/dev/null | grep -q . ||
		dkms add -m apex -v "$v" >>"$keep/dkms.out" 2>&1
	sed -i '1i #include <apex-doctor-test-missing.h>' "$f"
	if with_compile_cache dkms build -m apex -v "$v" -k "$k" >>"$keep/dkms.out" 2>&1; then
		fail "dkms build succeeded with a missing header in the source"
		rc=1
	fi
	re="^dkms +FAIL: the build of apex for $(re_escape "$k") failed; first error in "
	doctor_says 1 "$re[^ ]*make\.log: .*fatal error: apex-doctor-test-missing\.h: No such file" \
		as_user tpuuser "$APEX_DOCTOR" || { cat "$keep/dkms.out"; rc=1; }
	cp -p "$keep/${f##*/}" "$f"
	rm -rf /var/lib/dkms/apex "$mods"
	# dkms remove took the emptied updates/ directory with it.
	mkdir -p "${mods%/*}" && cp -a "$keep/dkms" /var/lib/dkms/apex &&
		cp -a "$keep/modules" "$mods" && depmod -a "$k" ||
		{ fail "restoring the dkms tree failed"; rc=1; }
	status_says_installed "$(dkms status -m apex -v "$v" -k "$k" 2>&1)" "$v" "$k" ||
		{ fail "dkms status after restoring: $(dkms status -m apex 2>&1)"; rc=1; }
	rm -rf "$keep"
	return $rc
}

# Not loaded: modprobe -r; the doctor's fix (modprobe apex) brings it back.
doctor_not_loaded() {
	local rc=0
	set +e # undo the state whatever fails
	modprobe -r apex gasket || { fail "modprobe -r apex gasket failed"; return 1; }
	doctor_says 1 '^loaded +FAIL: the apex module is not loaded\. Fix: modprobe apex' \
		"$APEX_DOCTOR" || rc=1
	modprobe apex || rc=1
	udevadm settle -t 30
	wait_until 20 test -c /dev/apex_1
	wait_until 20 node_ok || node_ok || rc=1
	return $rc
}

# Chip 0 bound to pci-stub (driver_override); undone with the commands the
# doctor prints.
doctor_other_driver() {
	local a fix rc=0
	set +e # undo the state whatever fails
	a=$(node_attr apex_0 pci_address)
	modprobe pci-stub || { fail "modprobe pci-stub failed"; return 1; }
	echo pci-stub >"/sys/bus/pci/devices/$a/driver_override"
	echo "$a" >/sys/bus/pci/drivers/apex/unbind
	echo "$a" >/sys/bus/pci/drivers_probe
	expect_eq "driver of $a" "$(basename "$(readlink "/sys/bus/pci/devices/$a/driver")")" \
		pci-stub || rc=1
	doctor_says 1 "^driver +FAIL: $a is bound to pci-stub, not apex\\. Fix: " \
		"$APEX_DOCTOR" || rc=1
	fix=$(sed -n \
		"s/^driver .*bound to pci-stub.* Fix: \\(.*\\) (and remove what binds.*/\\1/p" \
		"$APEX_DOCTOR_OUT")
	echo "fix: $fix"
	if [ -n "$fix" ]; then
		bash -c "$fix" >/dev/null || rc=1
	fi
	# Whatever the fix did, leave chip 0 to apex for the later stages.
	if [ "$(basename "$(readlink "/sys/bus/pci/devices/$a/driver" 2>/dev/null)")" != apex ]
	then
		echo "the doctor's fix did not rebind $a to apex"
		rc=1
		echo "$a" >/sys/bus/pci/drivers/pci-stub/unbind 2>/dev/null || true
		echo >"/sys/bus/pci/devices/$a/driver_override"
		echo "$a" >/sys/bus/pci/drivers_probe
	fi
	udevadm settle -t 30
	wait_until 20 node_ok || node_ok || rc=1
	expect_eq "apex_0 is chip $a again" "$(node_attr apex_0 pci_address)" "$a" || rc=1
	return $rc
}

doctor_not_member() {
	local re='^member +FAIL: otheruser is not a member of group apex\. '
	doctor_says 1 "${re}Fix: sudo usermod -aG apex otheruser" \
		as_user otheruser "$APEX_DOCTOR"
}

# In the group database, but the process's groups are those of a login
# from before (setpriv keeps otheruser's own group only).
doctor_not_in_login() {
	local rc=0
	set +e # undo the state whatever fails
	usermod -aG apex otheruser || return 1
	doctor_says 1 \
		'^login +FAIL: otheruser is in group apex, but this login is older than that' \
		setpriv --reuid=otheruser --regid=otheruser --groups="$(id -g otheruser)" \
		"$APEX_DOCTOR" || rc=1
	# A fresh login (runuser reads the database) has it.
	doctor_says 0 '^login +ok: this login has group apex' \
		as_user otheruser "$APEX_DOCTOR" || rc=1
	gpasswd -d otheruser apex >/dev/null
	! grep -qw apex <<<"$(id -nG otheruser)" || { fail "otheruser still in group apex"; rc=1; }
	return $rc
}

# Mode 0666: the doctor's fix (udevadm trigger) restores 0660.
doctor_node_mode() {
	local rc=0 re
	set +e # undo the state whatever fails
	chmod 0666 /dev/apex_0
	re='^node +FAIL: /dev/apex_0 is root:apex 666 .* Fix: '
	doctor_says 1 "${re}udevadm trigger --action=add --subsystem-match=apex" \
		"$APEX_DOCTOR" || rc=1
	udevadm trigger --action=add --subsystem-match=apex
	udevadm settle -t 30
	node_ok || {
		chmod 0660 /dev/apex_0
		fail "udevadm trigger did not restore the mode"
		rc=1
	}
	return $rc
}

# ulimit -l 64 (the 5.10 default): a warning, and, as the doctor says,
# maps beyond it fail: apex-demo's 128 KiB do; with 8192 KiB it works.
doctor_memlock() {
	doctor_says 0 '^memlock +WARNING: the memory-lock limit is 64 KiB.*ENOMEM' \
		as_user tpuuser bash -c "ulimit -l 64 && exec $APEX_DOCTOR" || return 1
	if as_user tpuuser bash -c "ulimit -l 64 && exec $APEX_TESTS/apex-demo /dev/apex_0" \
		>/dev/null 2>&1; then
		fail "apex-demo maps 128 KiB under ulimit -l 64"
		return 1
	fi
	as_user tpuuser bash -c "ulimit -l 8192 && exec $APEX_TESTS/apex-demo /dev/apex_0" \
		>/dev/null ||
		fail "apex-demo fails under ulimit -l 8192"
}

# A fatal-error interrupt (apexsim's control channel) while this process
# holds the device: DEAD, and owned by this process; the close resets it.
doctor_dead() {
	local rc=0 before
	set +e # undo the state whatever fails
	before=$(irq_count 12)
	exec 3<>/dev/apex_0 || return 1
	chip_cmd raise fatal || rc=1
	wait_until 10 irq_count_above 12 "$before" ||
		{ echo "interrupt 12 count stayed $before"; rc=1; }
	doctor_says 1 '^status +FAIL: apex_0 is DEAD' "$APEX_DOCTOR" || rc=1
	grep -Eq "^owner +FAIL: process $$ \\(bash\\) has /dev/apex_0 open for writing" \
		"$APEX_DOCTOR_OUT" ||
		{ echo "no owner line for pid $$"; rc=1; }
	exec 3>&-
	# The last close resets the chip; the next session finds it ALIVE.
	"$APEX_TESTS/apex-open" /dev/apex_0 rw ok || rc=1
	node_is apex_0 ALIVE || rc=1
	return $rc
}

# After the removal checks: both chips dead, apex loaded, no chip bound.
doctor_dead_chips() {
	doctor_says 1 '^driver +FAIL: .* has no driver although apex is loaded: its probe failed' \
		"$APEX_DOCTOR"
}

# The chips taken off the bus (PCI hot-remove): "no chip", exit 1, also
# in JSON.
doctor_no_chip() {
	local d
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1ac1 ] && echo 1 >"$d/remove"
	done
	[ -z "$(lspci -n -d "$APEX_PCI_ID")" ] ||
		fail "chips still listed: $(lspci -nn -d "$APEX_PCI_ID")"
	doctor_says 1 '^pci +FAIL: no Coral Edge TPU \(PCI 1ac1:089a\) on the PCI bus' \
		as_user tpuuser "$APEX_DOCTOR"
	doctor_says 1 '^\{"tool":"apex-doctor","usable":false,.*"check":"pci","result":"fail"' \
		as_user tpuuser "$APEX_DOCTOR" --json
}

# A kernel with pages larger than 4 KiB (arm64-16k): the machine is healthy
# for the driver, but the Coral runtime cannot run; apex-doctor must say
# so, name the 4 KiB kernel, and find nothing else wrong.
doctor_large_pages() {
	local kib=$(($(getconf PAGESIZE) / 1024))
	doctor_says 1 "^pagesize +FAIL: the kernel uses $kib KiB pages.*linux-image-arm64 \\(not -16k\\)" \
		as_user tpuuser "$APEX_DOCTOR"
	cat "$APEX_DOCTOR_OUT"
	grep -q '^result: NOT usable by tpuuser: 1 problem(s)' "$APEX_DOCTOR_OUT" ||
		fail "a problem besides the page size"
	doctor_says 1 '"usable":false' as_user tpuuser "$APEX_DOCTOR" --json
}

export -f doctor_says as_user doctor_healthy doctor_large_pages doctor_no_headers doctor_build_failed \
	doctor_not_loaded doctor_other_driver doctor_not_member doctor_not_in_login \
	doctor_node_mode doctor_memlock doctor_dead doctor_dead_chips doctor_no_chip

# run_doctor_checks: the states that are undone, as TAP lines (chips alive).
run_doctor_checks() {
	local start=$SECONDS d
	if [ ! -x "$APEX_DOCTOR" ] || ! node_ok >/dev/null; then
		tap_dep_fail "apex-doctor checks" "$APEX_DOCTOR installed and $APEX_DEV usable"
		return 0
	fi
	if [ "$(getconf PAGESIZE)" = 4096 ]; then
		d="apex-doctor on a healthy machine: all ok, exit 0 (tpuuser, --json, root)"
		tap_check -t 120 -v "$d" doctor_healthy
	else
		d="apex-doctor with $(($(getconf PAGESIZE) / 1024)) KiB pages: pagesize FAIL"
		tap_check -t 120 -v "$d naming the 4 KiB kernel, nothing else, exit 1" \
			doctor_large_pages
	fi
	if [ ! -e "$APEX_DOCTOR_STATES_FILE" ]; then
		d="the broken states for apex-doctor are induced in the guests"
		tap_diag "$d whose test disk says so (APEX_DOCTOR_SUITES)"
		return 0
	fi
	d="apex-doctor, headers removed: WARNING with apt install linux-headers, exit 0"
	tap_check -t 120 "$d" doctor_no_headers
	d="apex-doctor, a DKMS build that fails: FAIL with its first compiler error, exit 1"
	# Two DKMS builds (the failing one and the restore): in a make check
	# where bookworm ran beside trixie and forky they took over 300 s, and
	# the kill left no module behind for the checks after it.
	tap_check -t 900 "$d" doctor_build_failed
	tap_check -t 120 "apex-doctor, module not loaded: FAIL with modprobe apex, exit 1" \
		doctor_not_loaded
	d="apex-doctor, chip bound to pci-stub: FAIL, exit 1; its fix rebinds apex"
	tap_check -t 120 "$d" doctor_other_driver
	tap_check "apex-doctor, otheruser not in group apex: FAIL with usermod, exit 1" \
		doctor_not_member
	tap_check -t 120 "apex-doctor, group added but not in this login: FAIL, exit 1" \
		doctor_not_in_login
	d="apex-doctor, node mode 0666: FAIL, exit 1; its fix (udevadm trigger) restores 0660"
	tap_check -t 120 "$d" doctor_node_mode
	d="apex-doctor, ulimit -l 64: WARNING, exit 0; apex-demo fails under it,"
	tap_check -t 120 "$d works under 8192" doctor_memlock
	d="apex-doctor, chip DEAD (fatal-error interrupt), held open:"
	tap_check -t 120 "$d status and owner FAIL, exit 1" doctor_dead
	tap_diag "apex-doctor checks took $((SECONDS - start)) s"
}

# run_doctor_gone_checks: after run_removal_checks (the chips are dead).
run_doctor_gone_checks() {
	local start=$SECONDS d
	[ -e "$APEX_DOCTOR_STATES_FILE" ] || return 0
	if [ ! -x "$APEX_DOCTOR" ]; then
		tap_dep_fail "apex-doctor with dead and removed chips" "$APEX_DOCTOR installed"
		return 0
	fi
	d="apex-doctor, chips dead after the removal checks: driver FAIL (probe failed), exit 1"
	tap_check "$d" doctor_dead_chips
	d="apex-doctor, chips removed from the PCI bus: 'no Coral Edge TPU', exit 1 (text, --json)"
	tap_check "$d" doctor_no_chip
	tap_diag "apex-doctor checks with dead chips took $((SECONDS - start)) s"
}
