#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# make package-check: lintian, rpmlint and content checks of the packages that
# `make deb` and `make rpm` built, plus the packaging sources they come from.
# Each check prints "PASS name" or "FAIL name: why"; the last line is
# "N passed, N failed" and the exit status is non-zero if anything failed.
set -euo pipefail

source "$(dirname "$0")/../vmtest/lib/common.sh"
top=$apex_top
cd "$top"

apex_need dpkg-deb dpkg-dev
apex_need dpkg-parsechangelog dpkg-dev
apex_need lintian lintian
apex_need rpm rpm
apex_need rpm2cpio rpm
apex_need cpio cpio
apex_need rpmlint rpmlint

version=$(dpkg-parsechangelog -S Version)
deb=build/deb/apex-dkms_${version}_all.deb
rpmfile=build/rpm/apex-dkms-${version}-1.noarch.rpm
srcdir=usr/src/apex-$version

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck source-path=SCRIPTDIR source=lib/results.sh
source "$(dirname "$0")/lib/results.sh"
# check NAME FUNCTION: run FUNCTION; it prints why it failed and returns 1.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		result "$name" 0
	else
		result "$name" 1 "${out:-failed}"
	fi
}

# --- what the packages must contain, from the tree ------------------------

# The clean copy the packages were built from: src/ as shipped.
apex_copy_tree "$work/tree"

# Relative paths of the files under DIR as DIR/* reaches them (top-level
# dotfiles such as src/.gitignore are not shipped), sorted.
files_under() {
	(cd "$1" && find . -type f ! -path './.*' -printf '%P\n' | LC_ALL=C sort)
}

# --- the .deb ---------------------------------------------------------------

if [ -f "$deb" ]; then
	dpkg-deb -x "$deb" "$work/deb"
	dpkg-deb -e "$deb" "$work/deb-ctl"
fi

deb_built() {
	[ -f "$deb" ] || { echo "$deb is missing: run 'make deb'"; return 1; }
	grep -qx "Filename: ./$(basename "$deb")" build/deb/Packages ||
		{ echo "build/deb/Packages does not list $(basename "$deb")"; return 1; }
	local sum
	sum=$(sha256sum "$deb" | cut -d' ' -f1)
	grep -qx "SHA256: $sum" build/deb/Packages ||
		{
			echo "build/deb/Packages has a stale checksum for $(basename "$deb")"
			return 1
		}
}

deb_lintian() {
	[ -f "$deb" ] || { echo "no .deb"; return 1; }
	# Errors and warnings fail; overrides (none today) must say why in debian/.
	local out rc=0
	out=$(lintian --fail-on error,warning --display-info --pedantic --show-overrides \
		"$deb" 2>&1) || rc=$?
	grep -v '^running with root privileges' <<<"$out" || true
	return $rc
}

deb_control() {
	local f=$work/deb-ctl/control
	[ -f "$f" ] || { echo "no control file"; return 1; }
	grep -qx 'Architecture: all' "$f" || { echo "not Architecture: all"; return 1; }
	grep -q '^Depends:.*\bdkms\b' "$f" || { echo "Depends lacks dkms"; return 1; }
	grep -q '^Depends:.*systemd' "$f" ||
		{ echo "Depends lacks a systemd-sysusers provider"; return 1; }
	[ ! -e "$work/deb-ctl/conffiles" ] ||
		{
			echo "has conffiles (nothing may be installed under /etc):"
			cat "$work/deb-ctl/conffiles"
			return 1
		}
}

# dkms.conf as installed: version filled in, both modules, no deprecated keys.
dkms_conf_ok() {
	local f=$1
	[ -f "$f" ] || { echo "$f is missing"; return 1; }
	grep -qx 'PACKAGE_NAME="apex"' "$f" || { echo "PACKAGE_NAME is not \"apex\""; return 1; }
	grep -qx "PACKAGE_VERSION=\"$version\"" "$f" ||
		{ echo "PACKAGE_VERSION is not \"$version\" (debian/changelog)"; return 1; }
	grep -qx 'BUILT_MODULE_NAME\[0\]="gasket"' "$f" ||
		{ echo "module 0 is not gasket"; return 1; }
	grep -qx 'BUILT_MODULE_NAME\[1\]="apex"' "$f" || { echo "module 1 is not apex"; return 1; }
	grep -qx 'AUTOINSTALL="yes"' "$f" || { echo "AUTOINSTALL is not yes"; return 1; }
	grep -q '^[[:space:]]*MAKE\[0\]="make ' "$f" ||
		{
			echo "MAKE[0] must start with make (dkms adds -jN KERNELRELEASE= after it)"
			return 1
		}
	# CLEAN="true" is the form dkms(8) gives for keeping older dkms from
	# running a clean nobody needs; any other CLEAN is deprecated.
	if grep -nE '^[[:space:]]*(REMAKE_INITRD|CLEAN|MODULES_CONF[A-Z_]*)(\[[0-9]+\])?=' \
		"$f" | grep -vE '^[0-9]+:CLEAN="true"$'; then
		echo "deprecated dkms directives above"
		return 1
	fi
}

deb_dkms_conf() {
	dkms_conf_ok "$work/deb/$srcdir/dkms.conf"
}

# The regular expression must refuse < 5.10 and accept everything we test.
dkms_kernel_floor() {
	local re k bad=0
	re=$(kernel_source_dir=/nonexistent bash -c \
		'. "$1" >/dev/null 2>&1; printf %s "$BUILD_EXCLUSIVE_KERNEL"' \
		sh "$work/tree/dkms.conf")
	[ -n "$re" ] || { echo "dkms.conf sets no BUILD_EXCLUSIVE_KERNEL"; return 1; }
	for k in 5.10.0-28-amd64 5.15.0 6.1.0-18-amd64 6.12.9+bpo-amd64 7.2.0-1-amd64 \
		7.3.0-1-amd64 10.1.0; do
		[[ $k =~ $re ]] || { echo "refuses supported kernel $k"; bad=1; }
	done
	for k in 3.16.0-6-amd64 4.19.0-20-amd64 5.4.0 5.9.16; do
		[[ ! $k =~ $re ]] || { echo "accepts unsupported kernel $k"; bad=1; }
	done
	return $bad
}

# MAKE[0] as dkms.conf sets it for a kernel whose .config is $1.
dkms_make_for_config() {
	local k=$work/kernel
	rm -rf "$k"
	mkdir -p "$k"
	printf '%s\n' "$1" >"$k/.config"
	kernel_source_dir=$k kernelver=9.9.9-test bash -c \
		'. "$1" >/dev/null; printf %s "${MAKE[0]}"' sh "$work/tree/dkms.conf"
}

# With CONFIG_PCI the build runs make; without it, it fails saying why.
dkms_needs_pci() {
	local m
	m=$(dkms_make_for_config 'CONFIG_PCI=y')
	[[ $m == "make KDIR=$work/kernel" ]] ||
		{ echo "with CONFIG_PCI=y, MAKE[0] is: $m"; return 1; }
	m=$(dkms_make_for_config '# CONFIG_PCI is not set')
	[[ $m != make* ]] || { echo "without CONFIG_PCI, MAKE[0] still runs make: $m"; return 1; }
	if bash -c "$m" 2>"$work/nopci.err"; then
		echo "without CONFIG_PCI, MAKE[0] succeeds: $m"
		return 1
	fi
	grep -q 'without PCI support (CONFIG_PCI)' "$work/nopci.err" ||
		{ echo "without CONFIG_PCI, the message is: $(cat "$work/nopci.err")"; return 1; }
}

# Every file of src/ is shipped unchanged, and nothing else but dkms.conf.
sources_shipped() {
	local root=$1 diffs
	[ -d "$root" ] || { echo "$root is missing"; return 1; }
	diffs=$(diff <( (files_under "$work/tree/src"; echo dkms.conf) | LC_ALL=C sort) \
		<(files_under "$root") | grep '^[<>]' || true)
	[ -z "$diffs" ] ||
		{ echo "file lists differ (< src/, > package):"; echo "$diffs"; return 1; }
	local f
	while IFS= read -r f; do
		cmp -s "$work/tree/src/$f" "$root/$f" ||
			{ echo "$f differs from src/$f"; return 1; }
	done < <(files_under "$work/tree/src")
}

deb_sources() {
	sources_shipped "$work/deb/$srcdir"
}

# Same bytes as the tree's copy.
same_file() {
	[ -f "$2" ] || { echo "${2#"$work"/} is missing"; return 1; }
	local a=${1#"$work"/}
	cmp -s "$1" "$2" || { echo "${2#"$work"/} differs from ${a#tree/}"; return 1; }
}

deb_udev() {
	same_file "$work/tree/udev/60-apex.rules" "$work/deb/lib/udev/rules.d/60-apex.rules"
}

deb_modprobe() {
	same_file "$work/tree/modprobe.d/apex.conf" "$work/deb/lib/modprobe.d/apex.conf"
}

sysusers_ok() {
	[ -f "$1" ] || { echo "${1#"$work"/} is missing"; return 1; }
	grep -qE '^g[[:space:]]+apex[[:space:]]' "$1" ||
		{ echo "${1#"$work"/} does not create group apex"; return 1; }
}

deb_sysusers() {
	local p=$work/deb-ctl/postinst
	sysusers_ok "$work/deb/usr/lib/sysusers.d/apex-dkms.conf" || return 1
	grep -q 'systemd-sysusers .*apex-dkms.conf' "$p" ||
		{ echo "postinst does not run systemd-sysusers"; return 1; }
	# The group must exist before dkms builds and udev applies the rule.
	[ "$(grep -n 'systemd-sysusers' "$p" | head -n1 | cut -d: -f1)" -lt \
		"$(grep -n 'common.postinst' "$p" | head -n1 | cut -d: -f1)" ] ||
		{ echo "postinst creates the group after the dkms build"; return 1; }
}

deb_scripts() {
	local p=$work/deb-ctl
	grep -q '/usr/lib/dkms/common.postinst' "$p/postinst" ||
		{ echo "postinst lacks the dkms build"; return 1; }
	grep -q 'dkms remove -m $DKMS_NAME -v $DKMS_VERSION --all' "$p/prerm" ||
		{ echo "prerm lacks dkms remove"; return 1; }
	grep -q 'udevadm trigger' "$p/postinst" ||
		{ echo "postinst does not trigger udev"; return 1; }
	local s
	for s in "$p"/postinst "$p"/prerm "$p"/postrm "$p"/preinst; do
		[ -f "$s" ] || continue
		sh -n "$s" || { echo "$(basename "$s"): syntax error"; return 1; }
	done
}

# only_paths DIR ERE: every file below DIR, as a relative path, matches ERE.
only_paths() {
	local bad
	bad=$(cd "$1" && find . ! -type d -printf '%P\n' | grep -vE "^($2)$" || true)
	[ -z "$bad" ] || { echo "unexpected files:"; echo "$bad"; return 1; }
}

deb_paths() {
	local ere="$srcdir/.+|lib/udev/rules\.d/60-apex\.rules|lib/modprobe\.d/apex\.conf"
	ere+="|usr/lib/sysusers\.d/apex-dkms\.conf"
	ere+="|usr/share/doc/apex-dkms/(README\.md(\.gz)?|changelog\.gz|copyright)|$doctor_paths"
	only_paths "$work/deb" "$ere"
}

# apex-doctor and its manual page, in both packages.
doctor_paths='usr/bin/apex-doctor|usr/share/man/man1/apex-doctor\.1(\.gz)?'

# doctor_shipped ROOT: ROOT/usr/bin/apex-doctor is the tree's, executable,
# and the manual page is there.
doctor_shipped() {
	local f=$1/usr/bin/apex-doctor
	same_file "$work/tree/tools/apex-doctor" "$f" || return 1
	[ "$(stat -c %a "$f")" = 755 ] ||
		{ echo "${f#"$work"/} has mode $(stat -c %a "$f")"; return 1; }
	compgen -G "$1/usr/share/man/man1/apex-doctor.1*" >/dev/null ||
		{ echo "no apex-doctor.1 in ${1#"$work"/}/usr/share/man/man1"; return 1; }
}

deb_doctor() {
	doctor_shipped "$work/deb"
}

doctor_shellcheck() {
	apex_need shellcheck shellcheck
	shellcheck -x "$work/tree/tools/apex-doctor" "$work/tree/tests/doctor-check.sh"
}

# --- the packaging sources --------------------------------------------------

# resolve FILE TOKEN: the integer a token stands for (a literal, true/false,
# or a #define in FILE or the headers beside it), empty if it is anything else.
resolve() {
	local file=$1 tok=$2 depth re
	for depth in 1 2 3 4; do
		case $tok in
		true) echo 1; return ;;
		false) echo 0; return ;;
		[0-9]*) [[ $tok =~ ^[0-9]+[uUlL]*$ ]] && echo "${tok%%[uUlL]*}"; return ;;
		esac
		re="^#define[[:space:]]+$tok[[:space:]]+"
		re+="(\(?[A-Za-z0-9_]+\)?)[[:space:]]*(\/\*.*)?$"
		tok=$(sed -nE "s/$re/\1/p" "$file" "$(dirname "$file")"/*.h |
			head -n 1 | tr -d '()')
		[ -n "$tok" ] || return 0
	done
}

# The parameters in src/*.c, one "MODULE NAME DEFAULT MIN MAX" line each
# (gasket_*.c -> gasket, apex_*.c -> apex); MIN and MAX are "-" where the
# source does not state them, DEFAULT is empty if it cannot be worked out.
params_in_src() {
	local f mod name def min max rest re
	for f in "$work"/tree/src/*.c; do
		case "$(basename "$f")" in
		gasket_*) mod=gasket ;;
		apex_*) mod=apex ;;
		*) continue ;;
		esac
		# APEX_TUNABLE(name, id, default, min, max, is_bool, "description")
		awk '/^APEX_TUNABLE\(/ { s = "" } /^APEX_TUNABLE\(/, /\);/ { s = s $0 " " }
			/\);/ && s { print s; s = "" }' "$f" |
			sed -E 's/^APEX_TUNABLE\(//; s/[[:space:]]+//g' |
			while IFS=, read -r name _ def min max rest; do
				echo "$mod $name $(resolve "$f" "$def")" \
					"$(resolve "$f" "$min") $(resolve "$f" "$max")"
			done
		# module_param(name, type, perm) of "static TYPE name [= default];"
		grep -oE '^module_param(_named|_cb|_unsafe)?\([[:space:]]*[A-Za-z0-9_]+' "$f" |
			sed -E 's/.*\([[:space:]]*//' |
			while read -r name; do
				re="^static[^=;(]*[[:space:]]$name"
				re+="[[:space:]]*(=[[:space:]]*([^;]+))?;.*"
				def=$(sed -nE "s/$re/\2/p" "$f" | head -n 1)
				echo "$mod $name $(resolve "$f" "${def:-0}") - -"
			done
	done | LC_ALL=C sort
}

# The documented parameters: "MODULE NAME VALUE|comment block above it".
params_in_conf() {
	awk '/^#options (apex|gasket) [A-Za-z0-9_]+=/ {
			split(substr($0, 10), a, /[ =]/)
			print a[1] " " a[2] " " a[3] "|" block; block = ""; next }
		/^$/ { block = ""; next }
		/^#/ { block = block " " $0 }' "$work/tree/modprobe.d/apex.conf" | LC_ALL=C sort
}

# Every parameter documented with the source's default and range, none stale.
modprobe_documents_params() {
	local src conf bad=0 mod name def min max line value block
	src=$(params_in_src)
	[ -n "$src" ] || { echo "no module parameters found in src/*.c"; return 1; }
	conf=$(params_in_conf)
	while read -r mod name def min max; do
		line=$(grep -m1 "^$mod $name " <<<"$conf") ||
			{ echo "$mod $name: not in modprobe.d/apex.conf"; bad=1; continue; }
		value=${line#"$mod $name "}
		value=${value%%|*}
		block=${line#*|}
		case $value in Y | y) value=1 ;; N | n) value=0 ;; esac
		[ -n "$def" ] || { echo "$mod $name: cannot tell its default from src/"; bad=1; }
		[ -z "$def" ] || [ "$value" = "$def" ] ||
			{ echo "$mod $name: documented default $value, src/ says $def"; bad=1; }
		grep -q "Default $value\." <<<"$block" ||
			{ echo "$mod $name: comment does not say \"Default $value.\""; bad=1; }
		if [ "$min" = 0 ] && [ "$max" = 1 ]; then
			grep -q "0 or 1" <<<"$block" ||
				{ echo "$mod $name: comment does not say \"0 or 1\""; bad=1; }
		elif [ "$min" != - ]; then
			grep -q "$min\.\.$max" <<<"$block" ||
				{ echo "$mod $name: comment lacks the range $min..$max"; bad=1; }
		fi
	done <<<"$src"
	while read -r mod name _; do
		grep -q "^$mod $name " <<<"$src" ||
			{ echo "$mod $name: documented but not in src/"; bad=1; }
	done <<<"$conf"
	return $bad
}

modprobe_all_commented() {
	local live
	live=$(grep -vE '^[[:space:]]*(#|$)' "$work/tree/modprobe.d/apex.conf" || true)
	[ -z "$live" ] ||
		{
			echo "active lines (the shipped file must change nothing):"
			echo "$live"
			return 1
		}
}

# Every MODE= in the rules leaves "other" without access; the group is apex.
udev_modes() {
	local f=$work/tree/udev/60-apex.rules modes m
	modes=$(grep -oE 'MODE[:]?="[0-7]+"' "$f" | grep -oE '[0-7]+' || true)
	[ -n "$modes" ] ||
		{ echo "the rule sets no MODE (udev's default could be wider)"; return 1; }
	for m in $modes; do
		[ "${m: -1}" = 0 ] || { echo "MODE=\"$m\" grants access to everyone"; return 1; }
	done
	grep -q 'GROUP="apex"' "$f" || { echo "no GROUP=\"apex\""; return 1; }
	grep -qE 'SUBSYSTEM(==|!=)"apex"' "$f" || { echo "no SUBSYSTEM match on apex"; return 1; }
	if grep -nE 'MODE[+]?="[^0-7]|TAG\+="uaccess"|OPTIONS.*static_node' "$f"; then
		echo "symbolic modes, uaccess or static nodes above"
		return 1
	fi
}

# debian/copyright: the last Files paragraph matching each file (DEP-5) names
# the licence of the file's SPDX line ("A WITH B" = "A with B exception").
copyright_matches_spdx() {
	local - paras f id want got pat bad=0 n=0
	set -f # the patterns are DEP-5 globs, not for the shell to expand
	# One "pattern pattern ...|licence" line per Files paragraph.
	paras=$(awk '/^Files:/ { sub(/^Files:[[:space:]]*/, ""); files = $0; infiles = 1; next }
		infiles && /^[[:space:]]/ { files = files " " $1; next }
		{ infiles = 0 }
		/^License:/ && files != "" {
			sub(/^License:[[:space:]]*/, ""); print files "|" $0; files = ""
		}' \
		"$work/tree/debian/copyright")
	[ -n "$paras" ] || { echo "no Files paragraphs in debian/copyright"; return 1; }
	while IFS= read -r f; do
		id=$(grep -m1 -oE 'SPDX-License-Identifier: [A-Za-z0-9.+ -]+' "$work/tree/$f" |
			sed -E 's/^SPDX-License-Identifier: //; s/[[:space:]]+(--)?$//') ||
			continue
		n=$((n + 1))
		want=$(sed -E 's/ WITH ([^ ]+)/ with \1 exception/; s/ OR / or /g' <<<"$id")
		got=
		while IFS='|' read -r pats lic; do
			for pat in $pats; do
				# shellcheck disable=SC2053 # DEP-5 globs: * also matches /
				if [[ $f == $pat ]]; then got=$lic; break; fi
			done
		done <<<"$paras"
		[ "$got" = "$want" ] ||
			{ echo "$f: SPDX $id, debian/copyright says ${got:-nothing}"; bad=1; }
	done < <(files_under "$work/tree")
	[ "$n" -gt 0 ] || { echo "found no file with an SPDX line"; return 1; }
	return $bad
}

# --- the .rpm ---------------------------------------------------------------

if [ -f "$rpmfile" ]; then
	mkdir -p "$work/rpm"
	(cd "$work/rpm" && rpm2cpio "$top/$rpmfile" | cpio -idm --quiet)
fi

rpm_built() {
	[ -f "$rpmfile" ] || { echo "$rpmfile is missing: run 'make rpm'"; return 1; }
	local q
	q=$(rpm -qp --qf '%{NAME} %{VERSION} %{ARCH}\n' "$rpmfile" 2>/dev/null)
	[ "$q" = "apex-dkms $version noarch" ] ||
		{ echo "got '$q', want 'apex-dkms $version noarch'"; return 1; }
	rpm -qpR "$rpmfile" 2>/dev/null | grep -qx 'dkms' ||
		{ echo "does not require dkms"; return 1; }
}

rpm_lint() {
	[ -f "$rpmfile" ] || { echo "no .rpm"; return 1; }
	# rpmlint cannot pass --define: lint a copy of the spec with the version set.
	mkdir -p "$work/spec"
	{
		echo "%define apex_version $version"
		cat rpm/apex-dkms.spec
	} >"$work/spec/apex-dkms.spec"
	# Non-zero exit = errors (warnings alone exit 0).
	local out rc=0
	out=$(rpmlint -r rpm/apex-dkms.rpmlintrc \
		"$work/spec/apex-dkms.spec" "$rpmfile" 2>&1) || rc=$?
	grep -E ': (E|W): |errors,' <<<"$out" || true
	return $rc
}

rpm_dkms_conf() {
	dkms_conf_ok "$work/rpm/$srcdir/dkms.conf" || return 1
	same_file "$work/deb/$srcdir/dkms.conf" "$work/rpm/$srcdir/dkms.conf"
}

rpm_sources() {
	sources_shipped "$work/rpm/$srcdir"
}

rpm_config_files() {
	same_file "$work/tree/udev/60-apex.rules" "$work/rpm/usr/lib/udev/rules.d/60-apex.rules" &&
		same_file "$work/tree/modprobe.d/apex.conf" \
			"$work/rpm/usr/lib/modprobe.d/apex.conf" &&
		sysusers_ok "$work/rpm/usr/lib/sysusers.d/apex-dkms.conf"
}

rpm_paths() {
	local ere="$srcdir/.+|usr/lib/udev/rules\.d/60-apex\.rules|usr/lib/modprobe\.d/apex\.conf"
	ere+="|usr/lib/sysusers\.d/apex-dkms\.conf"
	ere+="|usr/share/doc/apex-dkms(-$version)?/README\.md|$doctor_paths"
	only_paths "$work/rpm" "$ere"
}

rpm_doctor() {
	doctor_shipped "$work/rpm"
}

rpm_scripts() {
	local s
	s=$(rpm -qp --scripts "$rpmfile" 2>/dev/null)
	grep -q 'getent group apex.*|| groupadd -r apex' <<<"$s" ||
		{ echo "%pre does not create group apex"; return 1; }
	grep -q "dkms add -m apex -v $version" <<<"$s" ||
		{ echo "%post lacks dkms add"; return 1; }
	grep -q "dkms install -m apex -v $version" <<<"$s" ||
		{ echo "%post lacks dkms install"; return 1; }
	# %preun: dkms remove only inside the erase branch.
	awk '/^preuninstall scriptlet/ { p = 1; next } /scriptlet/ { p = 0 }
		p && /if \[ "\$1" -eq 0 \]/ { e = 1 } p && /dkms remove/ && e { ok = 1 }
		p && /dkms remove/ && !e { bad = 1 } END { exit !(ok && !bad) }' <<<"$s" ||
		{
			echo "%preun removes the dkms module outside the \$1 -eq 0 (erase) branch"
			return 1
		}
}

check "deb: built, listed in build/deb/Packages" deb_built
check "deb: lintian (errors and warnings fail)" deb_lintian
check "deb: control (all, dkms, sysusers; no conffiles)" deb_control
check "deb: dkms.conf version $version, modules, no deprecated keys" deb_dkms_conf
check "deb: src/ shipped unchanged in /$srcdir" deb_sources
check "deb: udev rule /lib/udev/rules.d/60-apex.rules" deb_udev
check "deb: modprobe file /lib/modprobe.d/apex.conf" deb_modprobe
check "deb: sysusers.d group apex, created before the dkms build" deb_sysusers
check "deb: maintainer scripts (dkms, udev trigger, syntax)" deb_scripts
check "deb: no files outside the expected paths" deb_paths
check "deb: /usr/bin/apex-doctor (mode 0755) and its manual page" deb_doctor
check "dkms.conf: refuses kernels before 5.10 only" dkms_kernel_floor
check "dkms.conf: a kernel without CONFIG_PCI fails with that message" dkms_needs_pci
check "modprobe.d: every module parameter in src/ documented" modprobe_documents_params
check "modprobe.d: all lines commented out" modprobe_all_commented
check "udev: group apex, no world-accessible mode" udev_modes
check "debian/copyright: every file's SPDX licence" copyright_matches_spdx
check "rpm: built, version $version, noarch, requires dkms" rpm_built
check "rpm: rpmlint (errors fail)" rpm_lint
check "rpm: dkms.conf identical to the .deb's" rpm_dkms_conf
check "rpm: src/ shipped unchanged in /$srcdir" rpm_sources
check "rpm: udev, modprobe.d, sysusers.d files" rpm_config_files
check "rpm: no files outside the expected paths" rpm_paths
check "rpm: /usr/bin/apex-doctor (mode 0755) and its manual page" rpm_doctor
check "rpm: scriptlets (group, dkms add/install, remove on erase only)" rpm_scripts
check "apex-doctor: shellcheck clean" doctor_shellcheck

# apex-doctor as the .deb ships it, on this host (no chip) and on fake
# machines (tests/doctor-check.sh): each of its PASS/FAIL lines counts.
if [ -x "$work/deb/usr/bin/apex-doctor" ]; then
	while IFS= read -r line; do
		case $line in
		"PASS "*) echo "PASS apex-doctor: ${line#PASS }"; passed=$((passed + 1)) ;;
		"FAIL "*) echo "FAIL apex-doctor: ${line#FAIL }"; failed=$((failed + 1)) ;;
		[0-9]*" passed, "*) ;;
		*) echo "$line" ;;
		esac
	done < <(tests/doctor-check.sh "$work/deb/usr/bin/apex-doctor" 2>&1)
else
	result "apex-doctor" 1 "the host checks need the .deb's /usr/bin/apex-doctor"
fi

results_end
