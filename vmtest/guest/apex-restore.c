// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-restore: a live session while the chip loses its state (a function
 * reset, system sleep). Opens the device, asks for the lowest clock, maps
 * the test-engine BAR page and the coherent buffer, maps a user buffer at
 * a simple and another at an extended device address, binds an eventfd
 * and runs one copy; then runs COMMAND and waits for it, while a thread
 * maps and unmaps a page on the same file. Afterwards the chip must have
 * been reset (apexsim counts it) and the session must work as before,
 * without mapping anything again: the same BAR mapping answers, copies
 * through both old device addresses land, the interrupt reaches the old
 * eventfd and the clock is still the one asked for. While the chip was
 * away the thread may only see EIO.
 *
 *   apex-restore DEVICE COMMAND [ARG...]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "ctl.h"
#include "tap.h"
#include "te.h"

#define COHERENT_OFFSET 0x1000000UL
#define COHERENT_SIZE (16 * kernel_page())
#define BUF_SIZE (64 * 1024)
#define SIMPLE_ENTRIES 4096
#define TE_IRQ_SRC 4
#define COPY_TIMEOUT_MS 10000
#define SETTLE_TIMEOUT_MS 10000
/* GCB clock divider of APEX_PERFORMANCE_LOW, as apexsim reports it. */
#define LOW_CLK_DIV 3

/* The thread that keeps using the file while the chip goes away. */
struct hammer {
	int fd;
	void *page;
	atomic_bool stop;
	atomic_long ok;		/* calls that succeeded */
	atomic_long eio;	/* calls refused while the chip was away */
	atomic_long other;	/* anything else: a failure */
	atomic_int other_err;
};

static void *hammer_run(void *arg)
{
	struct hammer *h = arg;
	uint64_t dev = apex_simple_addr(200);
	bool mapped = false;
	int err;

	while (!atomic_load(&h->stop) || mapped) {
		err = mapped ? pt_unmap(h->fd, h->page, dev, kernel_page()) :
			       pt_map(h->fd, h->page, dev, kernel_page());
		if (!err) {
			mapped = !mapped;
			atomic_fetch_add(&h->ok, 1);
		} else if (err == EIO) {
			atomic_fetch_add(&h->eio, 1);
			usleep(1000);
		} else {
			atomic_fetch_add(&h->other, 1);
			atomic_store(&h->other_err, err);
			if (mapped)	/* leave nothing behind, then give up */
				pt_unmap(h->fd, h->page, dev, kernel_page());
			break;
		}
	}
	return NULL;
}

static bool status_alive(const char *dev)
{
	char s[32];

	return !sysfs_attr(dev, "status", s, sizeof(s)) &&
	       !strcmp(s, "ALIVE");
}

/* One copy through the test engine, checked against @want. */
static bool copy_ok(const struct te *te, int efd, uint64_t src, uint64_t dst,
		    const void *dst_buf, const void *want, const char *what)
{
	struct te_run run;
	int err = te_copy(te, src, dst, BUF_SIZE, TE_IRQ_SRC, efd,
			  COPY_TIMEOUT_MS, &run);

	if (err || run.status != TE_STATUS_DONE || !run.events)
		tap_why("%s, status 0x%llx, %llu events", errname(err),
			(unsigned long long)run.status,
			(unsigned long long)run.events);
	return tap_ok(!err && run.status == TE_STATUS_DONE && run.events &&
		      !memcmp(dst_buf, want, BUF_SIZE), "%s", what);
}

int main(int argc, char **argv)
{
	struct gasket_coherent_alloc_config_ioctl cc = {
		.page_table_index = 0, .enable = 1, .size = COHERENT_SIZE,
	};
	struct apex_performance_expectation_ioctl perf = {
		.performance = APEX_PERFORMANCE_LOW,
	};
	struct hammer h = { .fd = -1 };
	long long resets_before = -1, resets_after = -1, clk = -1;
	const uint64_t ext = apex_ext_addr(0, 0);
	struct te te = { 0 };
	uint8_t *buf, *ebuf, *coh = MAP_FAILED;
	pthread_t thread;
	long ms = 0, start, ok_then;
	int fd, efd, err;
	bool live, ran, recovered;

	if (argc < 3 || argv[1][0] != '/') {
		fputs("usage: apex-restore DEVICE COMMAND [ARG...]\n", stderr);
		return 2;
	}

	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_why("%s", strerror(errno));
	if (!tap_ok(fd >= 0, "open %s read-write", argv[1])) {
		tap_skip_dep("opening the device", "the session across the reset");
		return tap_done();
	}

	/* The live session. */
	err = xioctl(fd, APEX_IOCTL_PERFORMANCE_EXPECTATION, &perf);
	if (!err)
		err = pt_partition(fd, SIMPLE_ENTRIES);
	if (!err)
		err = te_map(&te, fd);
	if (!err)
		err = xioctl(fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &cc);
	if (!err) {
		coh = mmap(NULL, COHERENT_SIZE, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, COHERENT_OFFSET);
		err = coh == MAP_FAILED ? errno : 0;
	}
	buf = buf_alloc(BUF_SIZE);
	ebuf = buf_alloc(BUF_SIZE);
	h.page = buf_alloc(kernel_page());
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!err && (!buf || !ebuf || !h.page || efd < 0))
		err = ENOMEM;
	if (!err)
		err = pt_map(fd, buf, apex_simple_addr(0), BUF_SIZE);
	if (!err)
		err = pt_map(fd, coh, apex_simple_addr(64), COHERENT_SIZE);
	if (!err)
		err = pt_map(fd, ebuf, ext, BUF_SIZE);
	if (!err)
		err = set_eventfd(fd, TE_IRQ_SRC, efd);
	if (err)
		tap_why("%s", errname(err));
	live = tap_ok(!err,
		      "lowest clock, partition, BAR page, coherent buffer, simple and extended MAP_BUFFER, SET_EVENTFD");
	if (live) {
		buf_fill(buf, BUF_SIZE, 3);
		buf_fill(ebuf, BUF_SIZE, 5);
		live = copy_ok(&te, efd, apex_simple_addr(0),
			       apex_simple_addr(64), coh, buf,
			       "before: a copy from the user buffer into the coherent buffer, with its interrupt");
	}
	if (live)
		live = tap_ok(ctl_get("function_resets", &resets_before) == 0,
			      "before: apexsim counts its function resets");
	if (!live) {
		tap_skip_dep("the live session", "the reset and what the session sees after it");
		return tap_done();
	}

	h.fd = fd;
	if (pthread_create(&thread, NULL, hammer_run, &h)) {
		tap_ok(false, "start a thread that maps and unmaps meanwhile");
		return tap_done();
	}
	ran = run_command(&argv[2], &ms);
	/* The thread must get through twice more, then stop with nothing mapped. */
	ok_then = atomic_load(&h.ok);
	start = now_ms();
	while (atomic_load(&h.ok) < ok_then + 2 && !atomic_load(&h.other) &&
	       now_ms() - start < SETTLE_TIMEOUT_MS)
		usleep(10000);
	recovered = atomic_load(&h.ok) >= ok_then + 2;
	atomic_store(&h.stop, true);
	pthread_join(thread, NULL);
	if (!tap_ok(ran, "run the command while the session is live")) {
		tap_skip_dep("the command", "what the session sees after it");
		return tap_done();
	}
	tap_diag("the command took %ld ms; the thread's maps/unmaps: %ld done, %ld EIO",
		 ms, atomic_load(&h.ok), atomic_load(&h.eio));
	if (atomic_load(&h.other))
		tap_why("%s", errname(atomic_load(&h.other_err)));
	tap_ok(!atomic_load(&h.other),
	       "meanwhile: MAP/UNMAP on the file succeed or fail with EIO, nothing else");
	tap_ok(recovered, "after: MAP/UNMAP on the file work again");

	err = ctl_get("function_resets", &resets_after);
	if (err || resets_after <= resets_before)
		tap_why("%s, function_resets %lld -> %lld", errname(-err),
			resets_before, resets_after);
	tap_ok(!err && resets_after > resets_before,
	       "after: the chip was reset (its registers are at power-on values)");
	tap_ok(status_alive(argv[1]), "after: sysfs status ALIVE");
	tap_ok(te_read(&te, TE_ID) == TE_ID_VALUE,
	       "after: the old BAR mapping answers");
	buf_fill(buf, BUF_SIZE, 9);
	copy_ok(&te, efd, apex_simple_addr(0), apex_simple_addr(64), coh, buf,
		"after: a copy through the old simple mappings, its interrupt on the old eventfd");
	copy_ok(&te, efd, ext, apex_simple_addr(0), buf, ebuf,
		"after: a copy from the old extended mapping");
	err = ctl_get("clk_div", &clk);
	if (err || clk != LOW_CLK_DIV)
		tap_why("%s, clk_div %lld", errname(-err), clk);
	tap_ok(!err && clk == LOW_CLK_DIV,
	       "after: the GCB clock is still the lowest, as the session asked");

	err = pt_unmap(fd, buf, apex_simple_addr(0), BUF_SIZE);
	if (!err)
		err = pt_unmap(fd, coh, apex_simple_addr(64), COHERENT_SIZE);
	if (!err)
		err = pt_unmap(fd, ebuf, ext, BUF_SIZE);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err, "after: UNMAP_BUFFER of the three old mappings");
	te_unmap(&te);
	munmap(coh, COHERENT_SIZE);
	tap_ok(close(fd) == 0, "after: close works");
	close(efd);
	buf_free(buf, BUF_SIZE);
	buf_free(ebuf, BUF_SIZE);
	buf_free(h.page, kernel_page());
	return tap_done();
}
