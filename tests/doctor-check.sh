#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Host checks of apex-doctor (tests/packaging-check.sh runs them on the
# packaged copy): on this machine, which has no chip, it says so and exits
# non-zero; then, on fake machines (a sysfs/proc/dev tree through
# APEX_DOCTOR_SYSROOT, and stand-ins for uname, dmesg, dkms, modinfo,
# mokutil, getconf, id and getent first in PATH), each state gives its
# diagnosis line and exit status, in text and in JSON. Needs root (mknod
# for the fake /dev/apex_0).
#
#   tests/doctor-check.sh [PATH-TO-apex-doctor]
#
# Prints "PASS name" or "FAIL name: why" per check, then "N passed, N failed".
set -uo pipefail

doctor=$(realpath "${1:-$(dirname "$0")/../tools/apex-doctor}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# shellcheck source-path=SCRIPTDIR source=lib/results.sh
source "$(dirname "$0")/lib/results.sh"

KERNEL=6.1.0-28-amd64
APEX_GID=4242
ADDR=0000:01:00.0

# stub NAME BODY: a stand-in command in the fake machine's bin/.
stub() {
	printf '#!/bin/bash\n%s\n' "$2" >"$m/bin/$1"
	chmod +x "$m/bin/$1"
}

# healthy: a fake machine where everything is right, in $m; the states
# below break one thing each.
healthy() {
	m=$work/m$((++nmachine))
	mkdir -p "$m"/bin "$m"/sys/bus/pci/devices/$ADDR/apex/apex_0 \
		"$m"/sys/bus/pci/drivers/apex \
		"$m"/sys/class/apex/apex_0 "$m"/sys/module/apex "$m"/sys/module/gasket "$m"/proc \
		"$m"/dev "$m"/lib/modules/$KERNEL/build "$m"/var/lib/dkms/apex/1.0.0/build
	local d=$m/sys/bus/pci/devices/$ADDR c=$m/sys/class/apex/apex_0 denied sv ids
	echo 0x1ac1 >"$d/vendor"
	echo 0x089a >"$d/device"
	echo '(null)' >"$d/driver_override"
	ln -s ../../../bus/pci/drivers/apex "$d/driver"
	echo ALIVE >"$c/status"
	echo 41250 >"$c/temp"
	echo 85000 >"$c/trip_point0_temp"
	echo 90000 >"$c/trip_point1_temp"
	echo 95000 >"$c/trip_point2_temp"
	echo 0 >"$c/is_device_owned"
	echo 0 >"$c/device_owner"
	echo ABC123 >"$m/sys/module/apex/srcversion"
	echo DEF456 >"$m/sys/module/gasket/srcversion"
	printf 'apex 16384 0 - Live 0x0\ngasket 40960 1 apex, Live 0x0\n' >"$m/proc/modules"
	echo 'BOOT_IMAGE=/vmlinuz root=/dev/vda ro' >"$m/proc/cmdline"
	touch "$m/lib/modules/$KERNEL/build/Makefile"
	mknod "$m/dev/apex_0" c 1 3 || return 1
	chown 0:$APEX_GID "$m/dev/apex_0"
	chmod 660 "$m/dev/apex_0"
	# The user alice (uid 1000), in group apex in the database and this login.
	echo "alice apex" >"$m/groups-db"
	echo "1000 $APEX_GID" >"$m/groups-login"
	echo "apex:x:$APEX_GID:alice" >"$m/group"
	echo "[    1.0] pci 0000:01:00.0: [1ac1:089a] type 00 class 0x0880ff" >"$m/klog"
	echo "apex/1.0.0, $KERNEL, x86_64: installed" >"$m/dkms-status"
	echo "SecureBoot disabled" >"$m/sb-state"
	echo 4096 >"$m/pagesize"
	stub uname "case \$1 in -r) echo $KERNEL ;; -m) echo x86_64 ;; *) echo Linux ;; esac"
	denied='dmesg: read kernel buffer failed: Operation not permitted'
	stub dmesg "[ -f $m/klog-denied ] && { echo '$denied' >&2; exit 1; }; cat $m/klog"
	stub dkms "echo \"\$*\" >>$m/dkms-calls; cat $m/dkms-status"
	sv="$m/sys/module/\$a/srcversion"
	stub modinfo "for a; do :; done; cat $sv.disk 2>/dev/null || cat $sv"
	stub mokutil "cat $m/sb-state"
	stub getconf "cat $m/pagesize"
	stub getent "[ \"\$2\" = apex ] && [ -s $m/group ] && cat $m/group"
	ids="-u) echo 1000 ;; -un) echo alice ;; -G) cat $m/groups-login ;;"
	stub id "case \$1 in $ids -nG) cut -d' ' -f2- $m/groups-db ;; esac"
}
nmachine=0

# doctor_on [ARGS...]: run apex-doctor on the fake machine; output in $out,
# exit status in $rc.
doctor_on() {
	rc=0
	out=$(PATH="$m/bin:$PATH" APEX_DOCTOR_SYSROOT=$m \
		bash -c 'ulimit -l 65536 2>/dev/null || ulimit -l "$(ulimit -H -l)"; exec "$@"' \
		doctor "$doctor" "$@" 2>&1) || rc=$?
}

# expect NAME RC ERE: the exit status is RC and a line matches ERE.
expect() {
	local name=$1 want=$2 re=$3
	doctor_on
	if [ "$rc" != "$want" ]; then
		result "$name" 1 "exit status $rc, want $want; output:
$out"
	elif ! grep -Eq "$re" <<<"$out"; then
		result "$name" 1 "no line matches /$re/; output:
$out"
	else
		result "$name" 0
	fi
}

# --- this machine: no chip ---------------------------------------------------
rc=0
out=$("$doctor" 2>&1) || rc=$?
if compgen -G '/sys/bus/pci/devices/*' >/dev/null &&
	! grep -qx 0x1ac1 /sys/bus/pci/devices/*/vendor 2>/dev/null; then
	[ "$rc" = 1 ] &&
		grep -q '^pci  *FAIL: no Coral Edge TPU (PCI 1ac1:089a) on the PCI bus' \
			<<<"$out" &&
		grep -q '^result: NOT usable' <<<"$out"
	result "apex-doctor on this host (no chip): says so, exits 1" $? "exit $rc, output:
$out"
else
	result "apex-doctor on this host (no chip)" 1 \
		"this host has a chip or no PCI sysfs; cannot check"
fi

rc=0
"$doctor" --help >"$work/help" 2>&1 || rc=$?
[ "$rc" = 0 ] && grep -q -- '--json' "$work/help" && grep -q 'Exit status' "$work/help"
result "apex-doctor --help: usage, options, exit status; exits 0" $? \
	"exit $rc: $(cat "$work/help")"
rc=0
"$doctor" --bogus >/dev/null 2>"$work/err" || rc=$?
[ "$rc" = 2 ] && grep -q '^Usage:' "$work/err"
result "apex-doctor --bogus: usage on stderr, exit 2" $? "exit $rc"

# --- fake machines -------------------------------------------------------------
healthy || {
	result "fake machine (mknod needs root)" 1 "mknod failed"
	results_end
	exit 1
}
doctor_on
if [ "$rc" = 0 ] && ! grep -q FAIL <<<"$out" &&
	grep -q '^result: the Edge TPU is usable by alice' <<<"$out" &&
	[ "$(grep -c ' ok: ' <<<"$out")" = 18 ]; then
	result "healthy machine: 18 checks ok, exit 0" 0
else
	result "healthy machine: 18 checks ok, exit 0" 1 "exit $rc:
$out"
fi
doctor_on --json
python3 - "$out" <<'EOF' >"$work/json" 2>&1
import json, sys
d = json.loads(sys.argv[1])
assert d["usable"] is True and d["failed"] == 0, d
assert [c["check"] for c in d["checks"]][:3] == ["pci", "kernel", "headers"], d
assert all(c["result"] == "ok" for c in d["checks"]), d
EOF
result "healthy machine: --json says usable, every check ok, exit 0" $(( $? + rc )) \
	"exit $rc: $(cat "$work/json")"

# dkms_tree [LINK-TARGET]: DKMS's tree on the fake machine as `dkms install`
# leaves it: the built modules, and kernel-KERNEL-ARCH linked to them (to
# LINK-TARGET if given). `dkms status` then has nothing to say (an empty
# answer would be a FAIL), so a passing doctor did not ask it.
dkms_tree() {
	local v=$m/var/lib/dkms/apex/1.0.0/$KERNEL/x86_64/module
	mkdir -p "$v"
	touch "$v/apex.ko" "$v/gasket.ko.xz"
	ln -s "${1:-1.0.0/$KERNEL/x86_64}" "$m/var/lib/dkms/apex/kernel-$KERNEL-x86_64"
	: >"$m/dkms-status"
}
re="^dkms +ok: apex 1\.0\.0 installed for $KERNEL \(x86_64\)$"
for target in "1.0.0/$KERNEL/x86_64" "/var/lib/dkms/apex/1.0.0/$KERNEL/x86_64"; do
	healthy
	dkms_tree "$target"
	expect "installed per DKMS's tree (kernel-K-ARCH -> $target): ok, exit 0" 0 "$re"
	[ ! -e "$m/dkms-calls" ]
	result "installed per DKMS's tree ($target): dkms status not run" $? \
		"it ran: dkms $(head -n 1 "$m/dkms-calls" 2>/dev/null)"
done
doctor_on --verbose
grep -qx 'status -m apex' "$m/dkms-calls" 2>/dev/null
result "--verbose: dkms status is run for its detail even so" $? "no dkms status call"
healthy
dkms_tree
rm "$m/var/lib/dkms/apex/1.0.0/$KERNEL/x86_64/module/gasket.ko.xz"
echo "apex/1.0.0: added" >"$m/dkms-status"
expect "the link without the built gasket module: dkms status decides, FAIL, exit 1" 1 \
	"^dkms +FAIL: apex is not built for $KERNEL \(dkms status: apex/1\.0\.0: added\)"
healthy
dkms_tree "1.0.0/6.1.0-27-amd64/x86_64"
expect "a link to another kernel's build: dkms status decides, FAIL, exit 1" 1 \
	'^dkms +FAIL: DKMS knows no apex module'

healthy
rm "$m/sys/bus/pci/devices/$ADDR/vendor"
mkdir -p "$m/sys/bus/usb/devices/1-1"
echo 18d1 >"$m/sys/bus/usb/devices/1-1/idVendor"
echo 9302 >"$m/sys/bus/usb/devices/1-1/idProduct"
expect "only a USB Coral: the hint, exit 1" 1 \
	'^pci +FAIL: no Coral PCIe chip .* but a USB Coral \(18d1:9302\)'

healthy
stub uname "case \$1 in -r) echo 4.19.0-20-amd64 ;; *) echo x86_64 ;; esac"
expect "kernel 4.19: older than 5.10, exit 1" 1 \
	'^kernel +FAIL: kernel 4\.19\.0-20-amd64 is older than 5\.10'

healthy
rm -r "$m/lib/modules/$KERNEL/build"
re="^headers +WARNING: no kernel headers for $KERNEL.* "
re+="Fix: sudo apt install linux-headers-$KERNEL"
expect "headers missing, module still built: warning with the apt command, exit 0" 0 "$re"
healthy
rm -r "$m/lib/modules/$KERNEL/build"
echo "apex/1.0.0: added" >"$m/dkms-status"
re="^dkms +FAIL: apex is not built for $KERNEL: its headers are missing\. "
re+="Fix: sudo apt install linux-headers-$KERNEL && sudo dkms autoinstall -k $KERNEL"
expect "headers missing, not built: dkms FAIL with headers + autoinstall, exit 1" 1 "$re"

healthy
echo "apex/1.0.0: added" >"$m/dkms-status"
printf '%s\n' 'DKMS make.log' "make -C /lib/modules/$KERNEL/build" '  CC [M]  gasket_core.o' \
	'gasket_core.c:12:2: error: #error broken' 'make: *** Error 1' \
	>"$m/var/lib/dkms/apex/1.0.0/build/make.log"
re='^dkms +FAIL: the build of apex for .* failed; first error in '
re+='/var/lib/dkms/apex/1\.0\.0/build/make\.log: gasket_core\.c:12:2: error: #error broken'
expect "build failed: the first compiler error of make.log, exit 1" 1 "$re"

healthy
echo "" >"$m/dkms-status"
expect "package not installed: dkms FAIL, install apex-dkms, exit 1" 1 \
	'^dkms +FAIL: DKMS knows no apex module.* Fix: sudo apt install apex-dkms'

healthy
echo "SecureBoot enabled" >"$m/sb-state"
msg='Lockdown: modprobe: unsigned module loading is restricted; see man kernel_lockdown.7'
printf '%s\n' '[ 5.1] Loading of unsigned module is rejected' "[ 5.2] $msg" >>"$m/klog"
: >"$m/proc/modules"
re='^secureboot +FAIL: the kernel refused .*unsigned module.* '
re+='Fix: sudo mokutil --import /var/lib/dkms/mok\.pub'
expect "Secure Boot refused the module: the log line and mokutil --import, exit 1" 1 "$re"

healthy
msg='signature and/or required key missing - tainting kernel'
echo "[ 4.0] gasket: module verification failed: $msg" >>"$m/klog"
expect "a tainting (not refused) unsigned module: secureboot ok, exit 0" 0 \
	'^secureboot +ok: SecureBoot disabled; no module key rejected'
healthy
printf '[ 5.1] Loading of unsigned module is rejected\n' >>"$m/klog"
expect "an old refusal, apex loaded now: secureboot ok, exit 0" 0 \
	'^secureboot +ok: .*older refusal.*apex is loaded now'

healthy
touch "$m/klog-denied"
expect "kernel log for root only: secureboot skipped, says run with sudo, exit 0" 0 \
	'^secureboot +skipped: SecureBoot disabled; the kernel log is for root only'

healthy
: >"$m/proc/modules"
rm "$m/sys/bus/pci/devices/$ADDR/driver"
rm -r "$m/sys/bus/pci/devices/$ADDR/apex"
expect "module not loaded: loaded FAIL with modprobe, exit 1" 1 \
	'^loaded +FAIL: the apex module is not loaded\. Fix: sudo modprobe apex'

healthy
echo OLD999 >"$m/sys/module/apex/srcversion.disk"
re='^srcversion +FAIL: .*apex \(loaded ABC123, on disk OLD999\).* '
re+='Fix: sudo modprobe -r apex gasket && sudo modprobe apex'
expect "loaded module is not the file on disk: reload, exit 1" 1 "$re"

healthy
rm "$m/sys/bus/pci/devices/$ADDR/driver"
mkdir -p "$m/sys/bus/pci/drivers/pci-stub"
ln -s ../../../bus/pci/drivers/pci-stub "$m/sys/bus/pci/devices/$ADDR/driver"
re="^driver +FAIL: $ADDR is bound to pci-stub, not apex\. "
re+="Fix: echo $ADDR \| sudo tee /sys/bus/pci/drivers/pci-stub/unbind"
expect "another driver bound: unbind and reprobe commands, exit 1" 1 "$re"

healthy
echo 'BOOT_IMAGE=/vmlinuz ro pci=nomsi' >"$m/proc/cmdline"
expect "pci=nomsi on the command line: interrupts FAIL, exit 1" 1 \
	'^interrupts +FAIL: the kernel command line disables MSI \(pci=nomsi\)'
healthy
echo "[ 3.0] apex 0000:01:00.0: cannot get 13 MSI-X vectors: -28" >>"$m/klog"
expect "MSI-X failure of a chip bound now (an old probe): interrupts ok, exit 0" 0 \
	'^interrupts +ok: '
rm "$m/sys/bus/pci/devices/$ADDR/driver"
re='^interrupts +FAIL: interrupt setup failed: '
re+='apex 0000:01:00\.0: cannot get 13 MSI-X vectors'
expect "MSI-X setup failed, chip unbound: the log line, exit 1" 1 "$re"

healthy
echo 16384 >"$m/pagesize"
expect "16 KiB pages: pagesize FAIL with the 4 KiB kernel, exit 1" 1 \
	'^pagesize +FAIL: the kernel uses 16 KiB pages.*linux-image-arm64'

healthy
: >"$m/group"
expect "no group apex: systemd-sysusers, exit 1" 1 \
	'^group +FAIL: the group apex does not exist.* Fix: sudo systemd-sysusers apex-dkms\.conf'

healthy
chmod 666 "$m/dev/apex_0"
expect "node with mode 0666: udevadm trigger, exit 1" 1 \
	'^node +FAIL: /dev/apex_0 is .*666 .*not root:apex 660\. Fix: sudo udevadm trigger'
healthy
rm "$m/dev/apex_0"
expect "node missing although registered: exit 1" 1 '^node +FAIL: /dev/apex_0 is missing'

healthy
echo "alice alice" >"$m/groups-db"
echo "1000" >"$m/groups-login"
expect "user not in group apex: usermod -aG apex alice, exit 1" 1 \
	'^member +FAIL: alice is not a member of group apex\. Fix: sudo usermod -aG apex alice'

healthy
echo "1000" >"$m/groups-login"
re='^login +FAIL: alice is in group apex, but this login is older than that\. '
re+='Fix: log out and in again'
expect "in the group database, not in this login: log in again, exit 1" 1 "$re"

healthy
echo DEAD >"$m/sys/class/apex/apex_0/status"
expect "device DEAD: status FAIL, exit 1" 1 '^status +FAIL: apex_0 is DEAD'

healthy
echo 91000 >"$m/sys/class/apex/apex_0/temp"
expect "91 C: throttled at level 2 (a warning), exit 0" 0 \
	'^temp +WARNING: apex_0 at 91 C, throttled at level 2 of 3'

healthy
echo 1 >"$m/sys/class/apex/apex_0/is_device_owned"
echo $$ >"$m/sys/class/apex/apex_0/device_owner"
mkdir -p "$m/proc/$$"
echo python3 >"$m/proc/$$/comm"
expect "another process owns the device: its pid and name, exit 1" 1 \
	"^owner +FAIL: process $$ \(python3\) has /dev/apex_0 open for writing"

healthy
rc=0
out=$(PATH="$m/bin:$PATH" APEX_DOCTOR_SYSROOT=$m bash -c 'ulimit -l 64; exec "$@"' \
	doctor "$doctor" 2>&1) || rc=$?
re='^memlock +WARNING: the memory-lock limit is 64 KiB, less than the 8192 KiB.*\(ENOMEM\)'
[ "$rc" = 0 ] && grep -Eq "$re" <<<"$out"
result "ulimit -l 64: memlock WARNING (maps beyond it fail with ENOMEM), exit 0" $? "exit $rc:
$out"

healthy
rm -r "$m/sys/bus/pci/devices/$ADDR"
rc=0
out=$(PATH="$m/bin:$PATH" APEX_DOCTOR_SYSROOT=$m "$doctor" --json 2>&1) || rc=$?
python3 - "$out" <<'EOF' >"$work/json" 2>&1
import json, sys
d = json.loads(sys.argv[1])
assert d["usable"] is False, d
c = d["checks"][0]
assert c["check"] == "pci" and c["result"] == "fail" and "no Coral Edge TPU" in c["message"], c
assert c["fix"].endswith("lspci -nn -d 1ac1:"), c
EOF
result "chip removed, --json: usable false, pci fail with its fix, exit 1" $(( $? + (rc != 1) )) \
	"exit $rc: $(cat "$work/json")"

results_end
