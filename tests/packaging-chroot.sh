#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/packaging-chroot.sh [SUITE...]: `apt install apex-dkms` from build/deb
# (the flat repository) in a throwaway overlay of each suite's root
# (vmtest/mkroot), with that suite's own dkms, and check what the package
# promises short of loading the module and what the guests do not reach:
# group apex, dkms builds and installs both modules for the root's kernel,
# the kernel hook rebuilds them as for a newly installed kernel (the guests
# install a second kernel in trixie only), a kernel without CONFIG_PCI fails
# with that message, the udev rule passes udevadm verify (where udev has
# it). Then the RPM's scriptlets against the same dkms: install, reinstall,
# upgrade, erase.
# The upgrade and the purge of the .deb are not repeated here: every
# suite's guest does both, with the same dkms (vmtest/guest/stage2.sh,
# stage3.sh). Nothing is loaded: chroots have no udev, no modprobe runs.
# As in the guests, ccache is installed in the overlay and the DKMS builds go
# through it, with the root's cache kept across runs (apex_compile_store).
set -euo pipefail
source "$(dirname "$0")/../vmtest/lib/common.sh"

suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(bullseye bookworm trixie trixie-backports forky)

apex_need unshare util-linux
apex_need dpkg-parsechangelog dpkg-dev
[ "$(id -u)" = 0 ] || apex_die "needs root (overlay mounts and chroot)"

version=$(dpkg-parsechangelog -l "$apex_top/debian/changelog" -S Version)
deb=$apex_top/build/deb/apex-dkms_${version}_all.deb
[ -f "$deb" ] || apex_die "$deb is missing: run 'make deb'"

work=$(mktemp -d /tmp/apex-pkg-chroot.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

# build/deb is the flat repository users add.
mkdir -p "$work/pkgs/repo"
cp "$deb" "$apex_top/build/deb/Packages" "$work/pkgs/repo/"
echo 'deb [trusted=yes] file:/pkgs/repo ./' >"$work/pkgs/repo.list"
# The RPMs, whose scriptlets run against each suite's dkms too (see below);
# the upgrade target has the same sources and a higher version.
upversion=$version+upgradetest
rpm=$apex_top/build/rpm/apex-dkms-$version-1.noarch.rpm
[ -f "$rpm" ] || apex_die "$rpm is missing: run 'make rpm'"
"$apex_top/tests/build-rpm.sh" --version "$upversion" --outdir "$work/uprpm" 2>/dev/null
cp "$rpm" "$work/uprpm/apex-dkms-$upversion-1.noarch.rpm" "$work/pkgs/"

# The checks, run by sh inside the chroot: "ok NAME" / "not ok NAME: why".
cat >"$work/pkgs/checks.sh" <<'EOF'
set -u
V=$1
# The DKMS builds go through the root's compile cache (apex_compile_store).
. /ccache/lib/chroot-ccache.sh
pass() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; }
# Only the local repository: the root's own sources would need the network.
apt_get() {
	DEBIAN_FRONTEND=noninteractive apt-get -o Dpkg::Use-Pty=0 -q -y \
		-o Dir::Etc::SourceList=/pkgs/repo.list -o Dir::Etc::SourceParts=/nonexistent "$@"
}
K=$(ls /lib/modules | head -n 1)
dk_installed() { # version: the module is installed for K (dkms 2 and 3 formats)
	dkms status -m apex -v "$1" -k "$K" |
		grep -Fq -e "apex/$1, $K, x86_64: installed" -e "apex, $1, $K, x86_64: installed"
}

if apt_get update >/pkgs/install.log 2>&1 && apt_get install apex-dkms >>/pkgs/install.log 2>&1 &&
	[ "$(dpkg-query -W -f='${Version}' apex-dkms)" = "$V" ]; then
	pass "apt install apex-dkms ($V) from the flat repository"
else
	fail "apt install apex-dkms ($V) from the flat repository" \
		"$(tail -n 30 /pkgs/install.log)"
fi
gid=$(getent group apex | cut -d: -f3)
if [ -n "$gid" ] && [ "$gid" -lt 1000 ]; then
	pass "system group apex ($gid)"
else
	fail "system group apex" "gid '$gid'"
fi
if dk_installed "$V"; then
	pass "dkms: installed for $K"
else
	fail "dkms: installed for $K" \
		"$(dkms status -m apex; cat /var/lib/dkms/apex/$V/build/make.log 2>/dev/null |
			tail -n 20)"
fi
n=$(ls /lib/modules/"$K"/updates/dkms/gasket.ko* \
	/lib/modules/"$K"/updates/dkms/apex.ko* 2>/dev/null | wc -l)
if [ "$n" = 2 ]; then
	pass "gasket.ko and apex.ko in updates/dkms"
else
	fail "gasket.ko and apex.ko in updates/dkms" "$n files"
fi
# A kernel installed later: apt runs the kernel's postinst hook, which runs
# dkms autoinstall for it. Recreate that state for K (apex added to dkms,
# not built for K; removing the last kernel drops the version, so re-add it)
# and run the hook.
dkms remove -m apex -v "$V" -k "$K" >/dev/null 2>&1
dkms add -m apex -v "$V" >/dev/null 2>&1
if /etc/kernel/postinst.d/dkms "$K" >/pkgs/hook.log 2>&1 && dk_installed "$V" &&
	ls /lib/modules/"$K"/updates/dkms/apex.ko* >/dev/null 2>&1; then
	pass "new kernel: /etc/kernel/postinst.d/dkms builds and installs apex"
else
	fail "new kernel: /etc/kernel/postinst.d/dkms builds and installs apex" \
		"$(tail -n 20 /pkgs/hook.log)"
fi
# udev's own parser (systemd >= 254); older udevadm has no verify, no check.
if udevadm verify --help >/dev/null 2>&1; then
	if out=$(udevadm verify --resolve-names=never /lib/udev/rules.d/60-apex.rules 2>&1); then
		pass "udevadm verify 60-apex.rules"
	else
		fail "udevadm verify 60-apex.rules" "$out"
	fi
fi
if modinfo -k "$K" -F alias apex 2>/dev/null | grep -qi 'pci:v00001AC1d0000089A'; then
	pass "modinfo: PCI alias 1ac1:089a"
else
	fail "modinfo: PCI alias 1ac1:089a" "$(modinfo -k "$K" apex 2>&1 | head -n 5)"
fi

# A kernel without PCI support: the root's headers with CONFIG_PCI off.
nopci=/lib/modules/9.9.9-nopci/build
B=$(readlink -f "/lib/modules/$K/build")
mkdir -p "$nopci"
for e in $(ls -A "$B"); do ln -s "$B/$e" "$nopci/$e"; done
rm "$nopci/.config"
sed 's/^CONFIG_PCI=y/# CONFIG_PCI is not set/' "$B/.config" >"$nopci/.config"
if dkms build -m apex -v "$V" -k 9.9.9-nopci >/pkgs/nopci.log 2>&1; then
	fail "no CONFIG_PCI: the build fails with that message" "dkms build succeeded"
elif grep -q 'built without PCI support (CONFIG_PCI)' \
	"/var/lib/dkms/apex/$V/build/make.log" 2>/dev/null; then
	pass "no CONFIG_PCI: the build fails with that message"
else
	fail "no CONFIG_PCI: the build fails with that message" \
		"$(tail -n 8 /pkgs/nopci.log; \
			tail -n 8 "/var/lib/dkms/apex/$V/build/make.log" 2>&1)"
fi
dkms remove -m apex -v "$V" -k 9.9.9-nopci >/dev/null 2>&1
rm -rf /lib/modules/9.9.9-nopci

EOF

# The RPM's scriptlets (group, dkms add/install, other versions on upgrade,
# remove on erase only), run by the host's rpm --root: each runs chrooted
# in the root with its dkms. The chroot has no headers for the running
# kernel, so "added" (registered) is what %post can reach here.
cat >"$work/rpm-checks.sh" <<'EOF'
set -u
m=$1 V=$2 UV=$3 pkgs=$4
pass() { echo "ok $1"; }
fail() { echo "not ok $1: $2"; }
in_root() {
	chroot "$m" /usr/bin/env -i LC_ALL=C HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
# Debian's rpm warns on every call that dpkg owns the system; drop that.
rpm() {
	local o rc=0
	o=$(command rpm "$@" 2>&1) || rc=$?
	[ -z "$o" ] ||
		grep -v 'use Alien instead\|assuming you know what you are doing' <<<"$o" || true
	return $rc
}
registered() { [ -n "$(in_root dkms status -m apex -v "$1")" ]; }
rpm --root="$m" --initdb
# --nodeps: the root's packages are in dpkg's database, not rpm's.
if out=$(rpm --root="$m" -i --nodeps "$pkgs/apex-dkms-$V-1.noarch.rpm" 2>&1) &&
	in_root getent group apex >/dev/null && registered "$V"; then
	pass "rpm -i: group apex, dkms has apex/$V"
else
	fail "rpm -i: group apex, dkms has apex/$V" "$out"
fi
if out=$(rpm --root="$m" -U --replacepkgs --nodeps "$pkgs/apex-dkms-$V-1.noarch.rpm" 2>&1) &&
	registered "$V"; then
	pass "rpm reinstall of $V keeps it registered"
else
	fail "rpm reinstall of $V keeps it registered" "$out"
fi
if out=$(rpm --root="$m" -U --nodeps "$pkgs/apex-dkms-$UV-1.noarch.rpm" 2>&1) &&
	registered "$UV" && ! registered "$V" && [ ! -e "$m/usr/src/apex-$V" ]; then
	pass "rpm -U to $UV: only $UV registered"
else
	fail "rpm -U to $UV: only $UV registered" "$out $(in_root dkms status)"
fi
left=
if out=$(rpm --root="$m" -e apex-dkms 2>&1); then
	left=$(cd "$m" && ls -d usr/src/apex-* var/lib/dkms/apex \
		usr/lib/udev/rules.d/60-apex.rules usr/lib/modprobe.d/apex.conf \
		usr/lib/sysusers.d/apex-dkms.conf 2>/dev/null)
fi
if [ -z "$left" ] && ! registered "$UV"; then
	pass "rpm -e leaves nothing"
else
	fail "rpm -e leaves nothing" "$out $left"
fi
EOF

# tally SUITE WHAT LAST OUT: count the "ok"/"not ok" lines of OUT, the
# output of the checks WHAT; no LAST check means they stopped early.
tally() {
	local suite=$1 what=$2 last=$3 out=$4 line
	while IFS= read -r line; do
		case $line in
		"ok "*) passed=$((passed + 1)); echo "PASS $suite: ${line#ok }" ;;
		"not ok "*) failed=$((failed + 1)); echo "FAIL $suite: ${line#not ok }" ;;
		*) echo "    $line" ;;
		esac
	done <<<"$out"
	if ! grep -Eq "^(not )?ok $last" <<<"$out"; then
		failed=$((failed + 1))
		echo "FAIL $suite: the $what did not run to the end"
	fi
}

passed=0
failed=0
for suite in "${suites[@]}"; do
	if ! root=$("$apex_top/vmtest/mkroot" "$suite"); then
		failed=$((failed + 1))
		echo "FAIL $suite: no root (vmtest/mkroot $suite failed)"
		continue
	fi
	apex_stage "$suite: install and kernel hook in an overlay of $root"
	ov=$work/$suite
	if ! ccache_debs=$("$apex_top/vmtest/image/fetch-ccache.sh" "$suite"); then
		failed=$((failed + 1))
		echo "FAIL $suite: no ccache packages (vmtest/image/fetch-ccache.sh $suite failed)"
		continue
	fi
	out=$(apex_in_compile_overlay "$ccache_debs" "$root" "$ov" "$work/pkgs" /pkgs \
		chroot "$ov/merged" /usr/bin/env -i \
		LC_ALL=C HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		sh /pkgs/checks.sh "$version" 2>&1) || true
	tally "$suite" checks "no CONFIG_PCI: the build fails with that message" "$out"
	rm -rf --one-file-system "$ov" "$work"/pkgs/*.log

	# The RPM requires shadow-utils (groupadd) for %pre; rpm --nodeps
	# cannot supply it, and roots that create users with systemd-sysusers
	# only (forky) have none: there the RPM check would test the root.
	if [ ! -x "$root/usr/sbin/groupadd" ] && [ ! -x "$root/sbin/groupadd" ]; then
		echo "    $suite: RPM scriptlets not run: the root has no groupadd (shadow-utils)"
		continue
	fi
	apex_stage "$suite: the RPM's scriptlets with this suite's dkms"
	out=$(apex_in_overlay "$root" "$ov" "$work/pkgs" /pkgs bash "$work/rpm-checks.sh" \
		"$ov/merged" "$version" "$upversion" "$work/pkgs" 2>&1) || true
	tally "$suite" "RPM checks" "rpm -e leaves nothing" "$out"
	rm -rf --one-file-system "$ov"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
