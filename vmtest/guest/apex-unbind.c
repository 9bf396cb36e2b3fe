// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-unbind: a live session while the driver is unbound. Opens the
 * device, maps the test-engine BAR page and the coherent buffer, maps a
 * user buffer into the page table, binds an eventfd and runs one copy;
 * then starts a long copy (apexsim's copy rate slowed through its control
 * channel, device 0) and, while the chip is in the middle of it, runs
 * COMMAND (the stage's "echo ADDR > .../unbind") and waits for it.
 * Afterwards the chip must have stopped where it was: it writes nothing
 * more, faults nothing, and the destination holds exactly the bytes it
 * wrote before. And the old session must see a device that is gone: both
 * old mappings raise SIGBUS, ioctls and mmap() on the old fd fail with
 * ENODEV, munmap() and close() work, and the module holds no reference.
 *
 * With --remove, COMMAND takes the device off the bus instead (sysfs
 * "remove": the kernel's removal path of a hot-unplug, the PCI device
 * deleted), and the checks say so.
 *
 *   apex-unbind [--remove] DEVICE COMMAND [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "inflight.h"
#include "tap.h"
#include "te.h"

#define COHERENT_OFFSET 0x1000000UL
#define COHERENT_SIZE (16 * kernel_page())
#define BUF_SIZE (64 * 1024)
#define TE_IRQ_SRC 4
#define COPY_TIMEOUT_MS 10000

static sigjmp_buf fault_jmp;
static volatile sig_atomic_t fault_sig;

static void on_fault(int sig)
{
	fault_sig = sig;
	siglongjmp(fault_jmp, 1);
}

/* Read one word at @p: 0 if it read, else the signal it raised. */
static int probe_read(const volatile uint64_t *p, uint64_t *val)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_bus, old_segv;
	int sig = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGSEGV, &sa, &old_segv);
	fault_sig = 0;
	if (!sigsetjmp(fault_jmp, 1))
		*val = *p;
	else
		sig = fault_sig;
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGSEGV, &old_segv, NULL);
	return sig;
}

static const char *sig_name(int sig)
{
	return sig == SIGBUS ? "SIGBUS" : sig == SIGSEGV ? "SIGSEGV" :
	       sig ? "another signal" : "no signal";
}

static long long module_refcnt(const char *mod)
{
	char path[64], buf[32];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", mod);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* What COMMAND does to the device: "unbind" or "removal". */
static const char *event = "unbind";

static void expect_errno(int err, int want, const char *what)
{
	if (err != want)
		tap_why("got %s", errname(err));
	tap_ok(err == want, "after %s: %s -> %s", event, what, errname(want));
}

static int mmap_errno(int fd, unsigned long off)
{
	void *p = mmap(NULL, kernel_page(), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, kernel_page());
	return 0;
}

int main(int argc, char **argv)
{
	struct gasket_coherent_alloc_config_ioctl cc = {
		.page_table_index = 0, .enable = 1, .size = COHERENT_SIZE,
	};
	struct apex_gate_clock_ioctl gate = { .enable = 0 };
	struct te te = { 0 };
	struct te_run run;
	struct inflight before = { 0 };
	uint64_t *coh = MAP_FAILED, val = 0;
	uint8_t *buf, *long_buf;
	long long refs;
	long ms = 0;
	int fd, efd, err, sig;
	bool live, removal = argc > 1 && !strcmp(argv[1], "--remove");

	if (removal) {
		event = "removal";
		argc--;
		argv++;
	}
	if (argc < 3 || argv[1][0] != '/') {
		fputs("usage: apex-unbind [--remove] DEVICE COMMAND [ARG...]\n", stderr);
		return 2;
	}

	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_why("%s", strerror(errno));
	if (!tap_ok(fd >= 0, "open %s read-write", argv[1])) {
		tap_skip_dep("opening the device", "the unbind with a live session");
		return tap_done();
	}

	/* The live session: BAR page, coherent buffer, a mapped buffer, an eventfd. */
	err = te_map(&te, fd);
	if (err)
		tap_why("mmap: %s", errname(err));
	live = tap_ok(!err && te_read(&te, TE_ID) == TE_ID_VALUE,
		      "mmap the test-engine BAR page, it answers");
	err = xioctl(fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &cc);
	if (!err) {
		coh = mmap(NULL, COHERENT_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, COHERENT_OFFSET);
		err = coh == MAP_FAILED ? errno : 0;
	}
	if (!err)
		buf_fill(coh, COHERENT_SIZE, 7);
	if (err)
		tap_why("%s", errname(err));
	live &= tap_ok(!err, "allocate and mmap the coherent buffer");
	buf = buf_alloc(BUF_SIZE);
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = !buf || efd < 0 ? ENOMEM : pt_map(fd, buf, apex_simple_addr(0), BUF_SIZE);
	if (!err)
		err = pt_map(fd, coh, apex_simple_addr(64), COHERENT_SIZE);
	if (!err)
		err = set_eventfd(fd, TE_IRQ_SRC, efd);
	if (err)
		tap_why("%s", errname(err));
	live &= tap_ok(!err, "MAP_BUFFER a user buffer and the coherent buffer, SET_EVENTFD");
	if (live) {
		buf_fill(buf, BUF_SIZE, 3);
		err = te_copy(&te, apex_simple_addr(0), apex_simple_addr(64),
			      BUF_SIZE, TE_IRQ_SRC, efd, COPY_TIMEOUT_MS, &run);
		if (err || run.status != TE_STATUS_DONE || !run.events)
			tap_why("status 0x%llx, %llu events",
				(unsigned long long)run.status,
				(unsigned long long)run.events);
		live = tap_ok(!err && run.status == TE_STATUS_DONE &&
			      run.events && !memcmp(coh, buf, BUF_SIZE),
			      "a copy from the user buffer into the coherent buffer, with its interrupt");
	}
	if (!live) {
		tap_skip_dep("the live session", "the event and what the old session sees");
		return tap_done();
	}

	/* The copy in flight: its source and destination, one buffer. */
	long_buf = buf_alloc(INFLIGHT_MAP_SIZE);
	err = long_buf ? pt_map(fd, long_buf, apex_simple_addr(INFLIGHT_PAGE),
				INFLIGHT_MAP_SIZE) : ENOMEM;
	if (err)
		tap_why("%s", errname(err));
	live = tap_ok(!err, "MAP_BUFFER 4 MiB for a long copy");
	if (live) {
		inflight_fill(long_buf);
		live = tap_ok(inflight_prepare(&before) && inflight_start(&te, &before),
			      "a %lu KiB copy at %d KiB/s (apexsim copy-rate) is in flight",
			      INFLIGHT_LEN >> 10, INFLIGHT_KIB_S);
	}
	if (!live) {
		inflight_end();
		tap_skip_dep("the long copy", "the event and what the old session sees");
		return tap_done();
	}

	if (!tap_ok(run_command(&argv[2], &ms),
		    removal ? "remove the chip from the bus while the session is live" :
			      "unbind the driver while the session is live")) {
		inflight_end();
		tap_skip_dep(event, "what the old session sees");
		return tap_done();
	}
	tap_diag("%s took %ld ms", event, ms);
	inflight_check_stopped(&before, long_buf, event);
	tap_ok(!inflight_end(), "apexsim copy-rate 0: full speed again");
	tap_ok(access(argv[1], F_OK) != 0, "after %s: %s is gone", event, argv[1]);

	sig = probe_read(te.regs, &val);
	if (sig != SIGBUS)
		tap_why("%s, read 0x%llx", sig_name(sig), (unsigned long long)val);
	tap_ok(sig == SIGBUS, "after %s: reading the old BAR mapping raises SIGBUS", event);
	sig = probe_read(coh, &val);
	if (sig != SIGBUS)
		tap_why("%s, read 0x%llx", sig_name(sig), (unsigned long long)val);
	tap_ok(sig == SIGBUS, "after %s: reading the old coherent mapping raises SIGBUS",
	       event);
	tap_ok(buf_check(buf, BUF_SIZE, 3) < 0,
	       "after %s: the user buffer the chip had mapped is intact", event);

	expect_errno(pt_unmap(fd, buf, apex_simple_addr(0), BUF_SIZE), ENODEV,
		     "UNMAP_BUFFER");
	expect_errno(pt_map(fd, buf, apex_simple_addr(0), BUF_SIZE), ENODEV,
		     "MAP_BUFFER");
	expect_errno(set_eventfd(fd, TE_IRQ_SRC, efd), ENODEV, "SET_EVENTFD");
	expect_errno(dev_reset(fd, false), ENODEV, "RESET");
	expect_errno(xioctl(fd, APEX_IOCTL_GATE_CLOCK, &gate), ENODEV,
		     "APEX_IOCTL_GATE_CLOCK");
	expect_errno(mmap_errno(fd, TE_MMAP_OFFSET), ENODEV, "mmap of a BAR page");
	expect_errno(mmap_errno(fd, COHERENT_OFFSET), ENODEV,
		     "mmap of the coherent buffer");

	errno = 0;
	tap_ok(munmap((void *)te.regs, kernel_page()) == 0 &&
	       munmap(coh, COHERENT_SIZE) == 0,
	       "after %s: munmap of both old mappings works", event);
	tap_ok(close(fd) == 0, "after %s: close works", event);
	close(efd);
	/* The file was the module's last user: nothing may hold it now. */
	refs = module_refcnt("apex");
	if (refs != 0)
		tap_why("refcnt %lld", refs);
	tap_ok(refs == 0, "after close: module apex has no references");
	buf_free(buf, BUF_SIZE);
	buf_free(long_buf, INFLIGHT_MAP_SIZE);
	return tap_done();
}
