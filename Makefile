# SPDX-License-Identifier: GPL-2.0-only
# apex-dkms: entry points. Each target calls the script or sub-make that owns
# the work; `make help` lists them.

KDIR   ?= /lib/modules/$(shell uname -r)/build
SUITE  ?= bookworm
SUITES ?= bullseye bookworm trixie trixie-backports forky
# trixie's arm64 kernels (4 KiB and 16 KiB pages): cross builds in the
# compile matrix, and arm64 guests (QEMU's virt machine) in vmtest-matrix.
ARM64_SUITES ?= trixie-arm64 trixie-arm64-16k
# Guests of vmtest-matrix (and so of make check): the same releases, and
# the guest on the debug kernel (vmtest/debug-kernel). run-matrix.sh runs
# the ones that took longest last time first, and APEX_JOBS of them at a
# time (default 3); never timed, they keep this order: the two longest
# first, the debug kernel's (on a fresh machine its kernel is built from
# source before it boots) and trixie (which also installs and boots a
# second kernel), then the other releases and the arm64 guests.
VM_SUITES ?= debug-kernel trixie $(filter-out trixie,$(SUITES)) $(ARM64_SUITES)

# forky and sid are published with short-lived Release files that the mirror
# here lets expire; accepting them is a deliberate, documented choice.
export APEX_ALLOW_EXPIRED ?= 1

.PHONY: all modules clean help host-deps deb rpm package-check unit \
	probe-check guest-tests compile-matrix packaging-chroot vmtest vmtest-matrix vmtest-arm64 \
	vmtest-debug-kernel demo bench bench-tcg check

all: modules

help:
	@echo "make demo            build the package, boot a guest with the emulated Apex, install it, show it working"
	@echo "make check           every test: unit, packaging, compile matrix, guests of every suite"
	@echo "make modules         build gasket.ko and apex.ko for KDIR (default: running kernel)"
	@echo "make deb | rpm       build the apex-dkms package into build/deb or build/rpm"
	@echo "make package-check   lintian, rpmlint and package content checks"
	@echo "make packaging-chroot  install the .deb, run its kernel hook, run the RPM's scripts in every suite's root"
	@echo "make unit            apexsim model and protocol unit tests"
	@echo "make probe-check     src/compat/probe.sh against probes of the C library"
	@echo "make compile-matrix  W=1 builds against every Debian kernel (SUITES=..., ARM64_SUITES=...)"
	@echo "make vmtest          one guest run (SUITE=$(SUITE))"
	@echo "make vmtest-matrix   guest runs of every suite (VM_SUITES=...)"
	@echo "make vmtest-arm64    the arm64 guests, 4 KiB and 16 KiB pages (ARM64_SUITES=...)"
	@echo "make vmtest-debug-kernel  the guest tests on a KASAN/lockdep/kmemleak/DMA-API/UBSAN kernel"
	@echo "make bench           benchmarks in a guest, numbers under results/bench"
	@echo "make bench-tcg       guest boot and DKMS build time per QEMU setting and guest count"

modules:
	$(MAKE) -C src KDIR=$(KDIR)

clean:
	-$(MAKE) -C src clean
	-$(MAKE) -C vmtest/apexsim clean
	rm -rf build

host-deps:
	tests/host-deps.sh

deb:
	tests/build-deb.sh

rpm:
	tests/build-rpm.sh

package-check: deb rpm
	tests/packaging-check.sh

unit:
	$(MAKE) -C vmtest/apexsim test

probe-check:
	tests/probe-check.sh

# The benchmark's programs share the guest tests' helpers: built here too,
# so that a change to those cannot break make bench unseen.
guest-tests:
	$(MAKE) -C vmtest/guest all check
	$(MAKE) -C vmtest/bench

compile-matrix:
	tests/compile-matrix.sh $(SUITES) $(ARM64_SUITES)

# make check builds both packages once, for package-check, and passes
# PACKAGES_BUILT=1 here.
packaging-chroot: $(if $(PACKAGES_BUILT),,deb rpm)
	tests/packaging-chroot.sh $(SUITES)

vmtest:
	vmtest/run-suite.sh $(SUITE)

vmtest-matrix:
	vmtest/run-matrix.sh $(VM_SUITES)

vmtest-arm64:
	vmtest/run-matrix.sh $(ARM64_SUITES)

vmtest-debug-kernel:
	vmtest/debug-kernel/run.sh

demo: host-deps
	vmtest/demo.sh

bench: host-deps
	vmtest/bench.sh

bench-tcg: host-deps
	vmtest/tcg-bench.sh $(SUITE)

check:
	tests/check.sh
