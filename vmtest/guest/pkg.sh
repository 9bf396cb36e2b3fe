# SPDX-License-Identifier: GPL-2.0-only OR MIT
# Package checks for the stage scripts (sourced after lib.sh): what
# `apt-get install apex-dkms` must leave on the machine and what
# `apt-get purge` must take away again. The exact paths and values come
# from the packaging engineer (see vmtest/guest/README.md).

export APEX_UDEV_RULE=/lib/udev/rules.d/60-apex.rules
export APEX_MODPROBE_CONF=/lib/modprobe.d/apex.conf
export APEX_SYSUSERS=/usr/lib/sysusers.d/apex-dkms.conf

# re_escape TEXT: TEXT as a literal in an extended regular expression.
re_escape() {
	sed 's/[][\\.*^$+?(){}|/]/\\&/g' <<<"$1"
}

# status_says_installed OUT VERSION KERNEL: `dkms status` output OUT has apex
# VERSION installed for KERNEL (dkms 2.8 writes "apex, V, K", 3.x "apex/V, K")
# and this machine (x86_64, aarch64).
status_says_installed() {
	grep -Eq "^apex[/,] ?$(re_escape "$2"), $(re_escape "$3"), $(uname -m): installed( \(.*\))?$" \
		<<<"$1"
}

# status_entries OUT: how many apex entries `dkms status` output OUT lists.
# Only entry lines count: dkms 3.0 may also print a stray "echo: write
# error: Broken pipe" of its own (seen in a bookworm guest).
status_entries() {
	grep -cE '^apex[/,]' <<<"$1" || true
}

pkg_version() {
	dpkg-query -W -f='${Version}' apex-dkms 2>/dev/null
}

# The test disk's repository is the guest's only apt source; like a user
# who just added it, read its index first.
pkg_update() {
	apt-get update -q
	grep -q 'Candidate: [0-9]' <<<"$(apt-cache policy apex-dkms)" ||
		fail "apt knows no apex-dkms candidate: $(apt-cache policy apex-dkms)"
}

# The compile cache the host seeded for this guest (vmtest/ccache-seed.sh),
# with ccache's packages: the DKMS builds of the install, the upgrade and a
# new kernel take the compiler's output from it. dkms, make, modpost, the
# linker, BTF and signing still run here, and a file the cache lacks is
# compiled here.
export APEX_CCACHE_SEED=/mnt/apextest/ccache
export APEX_CCACHE_DIR=/var/cache/apex-ccache

# with_compile_cache CMD...: CMD with ccache in front of the compiler (when
# the test disk has a seeded cache), then the cache's hit and miss counts.
# The locale is the seed's: ccache hashes it into every entry.
with_compile_cache() {
	local rc=0
	if [ ! -d "$APEX_CCACHE_SEED/cache" ]; then
		"$@"
		return
	fi
	if ! command -v ccache >/dev/null; then
		dpkg -i "$APEX_CCACHE_SEED"/debs/*.deb >/dev/null ||
			fail "dpkg -i of ccache failed"
	fi
	[ -d "$APEX_CCACHE_DIR" ] || cp -a "$APEX_CCACHE_SEED/cache" "$APEX_CCACHE_DIR"
	CCACHE_DIR=$APEX_CCACHE_DIR ccache -z >/dev/null
	# apt runs dpkg, and so the dkms hooks, with its own PATH (DPkg::Path).
	echo 'DPkg::Path "/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin";' \
		>/etc/apt/apt.conf.d/00apex-compile-cache
	# dkms 2.x sets its own PATH too, then sources framework.conf.
	if grep -q '^PATH="/bin:' /usr/sbin/dkms; then
		cp -p /etc/dkms/framework.conf /etc/dkms/framework.conf.apex-saved
		echo 'PATH=/usr/lib/ccache:$PATH' >>/etc/dkms/framework.conf
	fi
	(
		unset LANG LC_CTYPE LC_MESSAGES
		export LC_ALL=C CCACHE_DIR=$APEX_CCACHE_DIR PATH=/usr/lib/ccache:$PATH
		"$@"
	) || rc=$?
	rm -f /etc/apt/apt.conf.d/00apex-compile-cache
	[ ! -e /etc/dkms/framework.conf.apex-saved ] ||
		mv /etc/dkms/framework.conf.apex-saved /etc/dkms/framework.conf
	CCACHE_DIR=$APEX_CCACHE_DIR ccache --print-stats | awk -F '\t' '
		$1 ~ /^(direct|preprocessed)_cache_hit$/ { hits += $2 }
		$1 == "cache_miss" { misses = $2 }
		END { printf "compile cache: %d hits, %d misses\n", hits, misses }'
	return "$rc"
}

pkg_install() {
	with_compile_cache env DEBIAN_FRONTEND=noninteractive apt-get install -y -q apex-dkms
}

pkg_installed() {
	expect_eq "dpkg status" "$(dpkg-query -W -f='${Status}' apex-dkms)" "install ok installed"
}

group_is_system() {
	local gid
	gid=$(getent group apex | cut -d: -f3) || fail "group apex does not exist"
	[ -n "$gid" ] && [ "$gid" -lt 1000 ] || fail "group apex has gid '$gid', not a system gid"
}

dkms_installed() {
	local v k out
	v=$(pkg_version) k=$(uname -r)
	out=$(dkms status -m apex -v "$v" -k "$k" 2>&1)
	echo "$out"
	[ "$(status_entries "$out")" = 1 ] || fail "want one dkms status entry"
	status_says_installed "$out" "$v" "$k" ||
		fail "dkms status does not say installed for $k"
}

module_files_installed() {
	local k m n path
	k=$(uname -r)
	for m in gasket apex; do
		n=$(compgen -G "/lib/modules/$k/updates/dkms/$m.ko*" | wc -l)
		[ "$n" = 1 ] || fail "$n files /lib/modules/$k/updates/dkms/$m.ko*"
		path=$(modinfo -n "$m") || fail "modinfo -n $m failed"
		[[ $path == /lib/modules/$k/updates/dkms/$m.ko* ||
			$path == /usr/lib/modules/$k/updates/dkms/$m.ko* ]] ||
			fail "modinfo -n $m: $path"
	done
}

module_alias_ok() {
	grep -qxF 'pci:v00001AC1d0000089Asv*sd*bc*sc*i*' <<<"$(modinfo -F alias apex)" ||
		fail "modinfo -F alias apex: $(modinfo -F alias apex)"
}

# Every parameter has a description (text before its "(type)"), and
# modinfo lists exactly the parameters the loaded module has.
params_described() {
	local m line name desc listed loaded
	for m in apex gasket; do
		listed=
		while IFS= read -r line; do
			name=${line%%:*}
			desc=${line#*:}
			desc=${desc% (*)}
			desc=${desc%(*)}
			[ -n "${desc// /}" ] || fail "$m parameter $name has no description"
			listed+="$name "
		done < <(modinfo -F parm "$m")
		[ -n "$listed" ] || fail "modinfo lists no parameters for $m"
		if [ -d "/sys/module/$m/parameters" ]; then
			loaded=$(ls "/sys/module/$m/parameters" | tr '\n' ' ')
			expect_eq "$m parameters (modinfo vs /sys/module)" \
				"$(tr ' ' '\n' <<<"$listed" | sort | xargs)" \
				"$(tr ' ' '\n' <<<"$loaded" | sort | xargs)"
		fi
		echo "$m: $listed"
	done
}

# The shipped modprobe.d file documents every parameter, all commented out.
modprobe_conf_complete() {
	local m p
	[ -f "$APEX_MODPROBE_CONF" ] || fail "$APEX_MODPROBE_CONF missing"
	! modprobe -c | grep -E '^options (apex|gasket) ' ||
		fail "the shipped configuration sets options"
	for m in apex gasket; do
		for p in $(modinfo -F parm "$m" | cut -d: -f1); do
			grep -q "$p" "$APEX_MODPROBE_CONF" ||
				fail "$APEX_MODPROBE_CONF does not mention $m parameter $p"
		done
	done
}

pkg_files_ok() {
	local v files f
	v=$(pkg_version)
	files=$(dpkg -L apex-dkms)
	for f in "/usr/src/apex-$v/dkms.conf" "$APEX_UDEV_RULE" "$APEX_MODPROBE_CONF" \
		"$APEX_SYSUSERS"; do
		grep -qxF "$f" <<<"$files" || fail "dpkg -L apex-dkms lacks $f"
		[ -f "$f" ] || fail "$f is not on disk"
	done
	grep -q "^PACKAGE_VERSION=\"$v\"" "/usr/src/apex-$v/dkms.conf" ||
		fail "dkms.conf does not say PACKAGE_VERSION=\"$v\""
	! grep -q '^/etc/' <<<"$files" || fail "files under /etc: $(grep '^/etc/' <<<"$files")"
}

# An administrator's /etc/modprobe.d/apex.conf masks the packaged file.
modprobe_override_ok() {
	local f=/etc/modprobe.d/apex.conf rc=0
	[ ! -e "$f" ] || fail "$f exists before the test"
	echo 'options apex allow_power_save=1' >"$f"
	grep -qx 'options apex allow_power_save=1' <<<"$(modprobe -c)" || rc=1
	rm -f "$f"
	[ "$rc" = 0 ] || fail "modprobe -c ignores $f"
}

# A newer apex-dkms for the upgrade test (upgrade/ beside repo/; the host
# builds it with tests/build-deb.sh --version V+upgradetest).
export APEX_UPGRADE_DIR=/mnt/apextest/upgrade
# The `uname -r` of a kernel whose packages the test disk's repository holds,
# to be installed after apex-dkms (only on some suites).
export APEX_NEW_KERNEL_FILE=/mnt/apextest/new-kernel
# The output of the last apt_logged command.
export APEX_APT_LOG=/tmp/apex-apt.log

upgrade_deb() {
	compgen -G "$APEX_UPGRADE_DIR/apex-dkms_*_all.deb" | head -n 1
}

# apt_logged APT-GET-ARGS...: apt-get as a user runs it, its output also kept
# in $APEX_APT_LOG for no_dpkg_errors.
apt_logged() {
	DEBIAN_FRONTEND=noninteractive apt-get "$@" 2>&1 | tee "$APEX_APT_LOG"
}

# no_dpkg_errors: the last apt_logged run reported no error, and dpkg knows
# no half-installed or half-configured package.
no_dpkg_errors() {
	local errors audit
	errors=$(grep -E '^(dpkg: error|E: |Error!)' "$APEX_APT_LOG") || true
	[ -z "$errors" ] || fail "apt-get reported: $errors"
	audit=$(dpkg --audit 2>&1)
	[ -z "$audit" ] || fail "dpkg --audit: $audit"
}

# pkg_upgrade: install the newer .deb over the installed one, as a user
# would, noting the module files' times first.
pkg_upgrade() {
	stat -c %Y /lib/modules/"$(uname -r)"/updates/dkms/{gasket,apex}.ko* >/tmp/apex-ko-mtimes
	sleep 1
	with_compile_cache apt_logged install -y -q "$(upgrade_deb)"
}

# upgraded_dkms_ok OLD NEW: dkms knows only NEW, installed for the running
# kernel; OLD's sources and DKMS tree are gone.
upgraded_dkms_ok() {
	local old=$1 new=$2 k out
	k=$(uname -r)
	expect_eq "installed version" "$(pkg_version)" "$new"
	out=$(dkms status -m apex 2>&1)
	echo "$out"
	[ "$(status_entries "$out")" = 1 ] || fail "want one apex in dkms status"
	status_says_installed "$out" "$new" "$k" ||
		fail "dkms status does not show $new installed for $k"
	[ ! -e "/usr/src/apex-$old" ] || fail "/usr/src/apex-$old is still there"
	[ ! -e "/var/lib/dkms/apex/$old" ] || fail "/var/lib/dkms/apex/$old is still there"
	[ -f "/usr/src/apex-$new/dkms.conf" ] || fail "/usr/src/apex-$new/dkms.conf is missing"
}

# modules_rebuilt NEW: the module files under /lib/modules/K are newer than
# before the upgrade and are the ones dkms built for NEW. (Their srcversion
# stays: the sources are the same, only the package version differs.)
modules_rebuilt() {
	local new=$1 k m f built before
	k=$(uname -r)
	before=$(sort -n /tmp/apex-ko-mtimes | tail -n 1)
	for m in gasket apex; do
		f=$(compgen -G "/lib/modules/$k/updates/dkms/$m.ko*") || fail "no $m.ko* for $k"
		[ "$(stat -c %Y "$f")" -gt "$before" ] ||
			fail "$f is not newer than before the upgrade"
		built=/var/lib/dkms/apex/$new/$k/$(uname -m)/module/$(basename "$f")
		[ -f "$built" ] ||
			fail "dkms kept no $built: $(ls -R "/var/lib/dkms/apex/$new" 2>&1)"
		cmp -s "$f" "$built" || fail "$f differs from $new's build $built"
		echo "$m: $f = $built, srcversion $(modinfo -F srcversion "$f")"
	done
}

# loaded_is_on_disk: after a reload the running apex and gasket are the files
# modinfo finds (the new build), and the node is back with its permissions.
loaded_is_on_disk() {
	reload_modules
	running_is_on_disk
	udevadm settle -t 30 || true
	node_ok
}

# running_is_on_disk: the loaded gasket and apex are the files modinfo finds
# for the running kernel (same srcversion).
running_is_on_disk() {
	local m
	for m in gasket apex; do
		expect_eq "$m srcversion (loaded vs $(modinfo -n "$m"))" \
			"$(cat "/sys/module/$m/srcversion")" "$(modinfo -F srcversion "$m")"
	done
}

# config_kept: what the package set up outside DKMS is still in place.
config_kept() {
	local f
	getent group apex >/dev/null || fail "group apex is gone"
	grep -qw apex <<<"$(id -nG tpuuser)" || fail "tpuuser is no longer in group apex"
	for f in "$APEX_UDEV_RULE" "$APEX_MODPROBE_CONF" "$APEX_SYSUSERS"; do
		[ -f "$f" ] || fail "$f is gone"
		grep -qxF "$f" <<<"$(dpkg -L apex-dkms)" ||
			fail "$f no longer belongs to apex-dkms"
	done
	by_path_ok
}

new_kernel() {
	cat "$APEX_NEW_KERNEL_FILE"
}

# kernel_install: the new kernel and its headers, the way a trixie user
# takes the backports kernel (the test disk's repository holds them).
kernel_install() {
	local v
	v=$(new_kernel)
	with_compile_cache apt_logged install -y -q --no-install-recommends \
		linux-image-amd64 linux-headers-amd64
	expect_eq "linux-image-$v" "$(dpkg-query -W -f='${Status}' "linux-image-$v" 2>&1)" \
		"install ok installed"
}

# new_kernel_dkms_ok: dkms autoinstall built apex for the new kernel.
new_kernel_dkms_ok() {
	local v k out
	v=$(pkg_version) k=$(new_kernel)
	out=$(dkms status -m apex -v "$v" -k "$k" 2>&1)
	echo "$out"
	status_says_installed "$out" "$v" "$k" ||
		fail "dkms status does not say installed for $k"
}

# dkms_modules_for KERNEL: modinfo -k KERNEL finds both modules under
# /lib/modules/KERNEL/updates/dkms, with KERNEL's vermagic.
dkms_modules_for() {
	local k=$1 m path magic
	for m in gasket apex; do
		path=$(modinfo -k "$k" -n "$m") || fail "modinfo -k $k $m failed"
		[[ $path == /lib/modules/$k/updates/dkms/$m.ko* ]] ||
			fail "modinfo -k $k -n $m: $path"
		magic=$(modinfo -k "$k" -F vermagic "$m")
		echo "$m: $path, vermagic $magic"
		expect_eq "$m vermagic's kernel" "${magic%% *}" "$k"
	done
}

# new_kernel_modinfo_ok: both modules built for the new kernel.
new_kernel_modinfo_ok() {
	dkms_modules_for "$(new_kernel)"
}

# kexec_load: kexec-tools from the test disk's repository (a test tool, not
# something the package needs), then the new kernel loaded with this
# boot's command line, for run-stages to boot with kexec.
kexec_load() {
	local k
	k=$(new_kernel)
	apt_logged install -y -q --no-install-recommends kexec-tools
	command -v kexec >/dev/null || fail "no kexec after apt-get install kexec-tools"
	[ -f "/boot/vmlinuz-$k" ] && [ -f "/boot/initrd.img-$k" ] ||
		fail "no /boot/vmlinuz-$k or initrd.img-$k: $(ls /boot)"
	kexec -l "/boot/vmlinuz-$k" --initrd="/boot/initrd.img-$k" --reuse-cmdline ||
		fail "kexec -l $k failed"
	expect_eq /sys/kernel/kexec_loaded "$(cat /sys/kernel/kexec_loaded)" 1
}

# running_modules_are_dkms_build: the loaded gasket and apex are the files
# dkms installed for the running kernel.
running_modules_are_dkms_build() {
	dkms_modules_for "$(uname -r)"
	running_is_on_disk
}

pkg_purge() {
	DEBIAN_FRONTEND=noninteractive apt-get purge -y -q apex-dkms
}

purged_clean() {
	local left
	[ "$(dpkg-query -W -f='${Status}' apex-dkms 2>/dev/null)" != "install ok installed" ] ||
		fail "apex-dkms is still installed"
	left=$(compgen -G '/usr/src/apex-*'; compgen -G '/var/lib/dkms/apex';
		compgen -G '/lib/modules/*/updates/dkms/apex.ko*';
		compgen -G '/lib/modules/*/updates/dkms/gasket.ko*';
		compgen -G "$APEX_UDEV_RULE"; compgen -G "$APEX_MODPROBE_CONF";
		compgen -G "$APEX_SYSUSERS") || true
	[ -z "$left" ] || fail "left behind: $left"
	! modinfo apex >/dev/null 2>&1 || fail "modinfo still finds apex: $(modinfo -n apex)"
	! modinfo gasket >/dev/null 2>&1 || fail "modinfo still finds gasket: $(modinfo -n gasket)"
}

export -f with_compile_cache re_escape status_says_installed status_entries pkg_version \
	pkg_update pkg_install pkg_installed group_is_system dkms_installed \
	module_files_installed module_alias_ok params_described modprobe_conf_complete \
	upgrade_deb apt_logged no_dpkg_errors pkg_upgrade upgraded_dkms_ok modules_rebuilt \
	loaded_is_on_disk running_is_on_disk config_kept new_kernel kernel_install \
	new_kernel_dkms_ok \
	dkms_modules_for new_kernel_modinfo_ok kexec_load running_modules_are_dkms_build \
	pkg_files_ok modprobe_override_ok pkg_purge purged_clean
