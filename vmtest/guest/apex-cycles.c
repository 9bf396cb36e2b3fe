// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-cycles N GASKET_KO APEX_KO [DEVICE]: load and unload the driver N
 * times, with a test-engine copy through the device in each cycle:
 * finit_module() of gasket.ko and apex.ko (apex's probe of the present
 * chips runs inside it), open DEVICE, bind an eventfd, map two pages, copy
 * one into the other, check the bytes, close (the last close unmaps), then
 * delete_module() of both. System calls, not modprobe: the debug-kernel
 * guest runs 1000 cycles, and a process start per step under TCG would
 * cost more than the cycle itself. Both modules must be unloaded at the
 * start. Stops at the first failure and names its cycle and step. TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"
#include "te.h"

#define COPY_LEN APEX_PAGE
#define COPY_IRQ 4
#define COPY_TIMEOUT_MS 10000

static int load_module(const char *path)
{
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		err = errno;
	close(fd);
	return err;
}

static int unload_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

/* One copy of @src into @dst through the device; NULL or the failed step. */
static const char *copy_once(const char *dev, const void *src, void *dst,
			     int *err)
{
	const uint64_t from = apex_simple_addr(0), to = apex_simple_addr(1);
	const char *failed = NULL;
	struct te_run run;
	struct te te;
	int fd, efd;

	memset(dst, 0, COPY_LEN);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return "open";
	}
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0) {
		*err = errno;
		failed = "eventfd";
	} else if ((*err = set_eventfd(fd, COPY_IRQ, efd))) {
		failed = "SET_EVENTFD";
	} else if ((*err = te_map(&te, fd))) {
		failed = "mmap of the test engine";
	} else {
		if ((*err = pt_map(fd, src, from, COPY_LEN)) ||
		    (*err = pt_map(fd, dst, to, COPY_LEN)))
			failed = "MAP_BUFFER";
		else if (te_copy(&te, from, to, COPY_LEN, COPY_IRQ, efd,
				 COPY_TIMEOUT_MS, &run) ||
			 run.status != TE_STATUS_DONE || !run.events)
			failed = "the copy (no completion)";
		else if (memcmp(src, dst, COPY_LEN))
			failed = "the copy (wrong bytes)";
		te_unmap(&te);
	}
	if (efd >= 0)
		close(efd);
	close(fd);
	return failed;
}

/* What each step of a cycle costs, summed over the cycles run. */
enum step { LOAD_GASKET, LOAD_APEX, SESSION, UNLOAD_APEX, UNLOAD_GASKET, STEPS };
static const char *const step_name[STEPS] = {
	"load gasket.ko", "load apex.ko (probes included)",
	"open, map, copy, close", "unload apex", "unload gasket",
};
static long step_ms[STEPS];

/* Time a step: returns its error, adds its milliseconds to step_ms. */
#define TIMED(step, call)                                        \
	({                                                       \
		long t_ = now_ms();                              \
		int e_ = (call);                                 \
		step_ms[step] += now_ms() - t_;                  \
		e_;                                              \
	})

int main(int argc, char **argv)
{
	const char *dev, *failed = NULL;
	long n, i, t0, t, ms;
	int err = 0, unload_err, s;
	void *src, *dst;

	if (argc < 4 || argc > 5 || (n = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: apex-cycles N GASKET_KO APEX_KO [DEVICE]\n");
		return 2;
	}
	dev = argc == 5 ? argv[4] : APEX_DEV_DEFAULT;
	src = buf_alloc(COPY_LEN);
	dst = buf_alloc(COPY_LEN);
	if (!src || !dst) {
		perror("apex-cycles: buffers");
		return 1;
	}
	buf_fill(src, COPY_LEN, 7);

	t0 = now_ms();
	for (i = 1; i <= n && !failed; i++) {
		if ((err = TIMED(LOAD_GASKET, load_module(argv[2])))) {
			failed = "loading gasket.ko";
		} else if ((err = TIMED(LOAD_APEX, load_module(argv[3])))) {
			failed = "loading apex.ko";
		} else {
			t = now_ms();
			failed = copy_once(dev, src, dst, &err);
			step_ms[SESSION] += now_ms() - t;
		}
		/* Unload whatever loaded, even after a failure. */
		if ((unload_err = TIMED(UNLOAD_APEX, unload_module("apex"))) && !failed) {
			err = unload_err;
			failed = "unloading apex";
		}
		if ((unload_err = TIMED(UNLOAD_GASKET, unload_module("gasket"))) && !failed) {
			err = unload_err;
			failed = "unloading gasket";
		}
		if (i % 100 == 0)
			tap_diag("%ld cycles, %ld ms", i, now_ms() - t0);
	}
	ms = now_ms() - t0;
	i--;
	if (failed)
		tap_why("cycle %ld: %s: %s", i, failed, errname(err));
	tap_ok(!failed, "%ld cycles: load both modules, a test-engine copy, unload both", n);
	tap_diag("%ld cycles in %ld ms, %ld ms each; of which:", i, ms, ms / i);
	for (s = 0; s < STEPS; s++)
		tap_diag("  %-32s %6ld ms each", step_name[s], step_ms[s] / i);
	buf_free(src, COPY_LEN);
	buf_free(dst, COPY_LEN);
	return tap_done();
}
