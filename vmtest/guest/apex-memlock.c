// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-memlock: mapped buffers count against RLIMIT_MEMLOCK. Run as an
 * unprivileged member of group apex (no CAP_IPC_LOCK) whose hard limit is
 * at least 1 MiB; it sets its own soft limit to 1 MiB. Then a 16 MiB map
 * fails with ENOMEM, 512 KiB maps, the charge shows as VmPin and comes
 * back at unmap, and at the last close even when another process (a
 * child holding the descriptor) makes it.
 *
 *   apex-memlock [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"

#define KIB 1024UL
#define LIMIT (1024 * KIB)
#define CAP_IPC_LOCK_BIT 14

static const char *dev;

/* Pinned KiB this process is charged for (VmPin), or -1. */
static long long vmpin(void)
{
	return proc_status_num("VmPin");
}

static bool has_cap_ipc_lock(void)
{
	char line[256];
	unsigned long long caps = ~0ULL;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps & (1ULL << CAP_IPC_LOCK_BIT);
}

static bool pinned_is(long long kib)
{
	long long got = vmpin();

	if (got != kib)
		tap_why("VmPin %lld kB, want %lld", got, kib);
	return got == kib;
}

static bool mapped_is(long long pages)
{
	long long got = sysfs_num(dev, "node_0_num_mapped_pages");

	if (got != pages)
		tap_why("node_0_num_mapped_pages %lld, want %lld", got, pages);
	return got == pages;
}

static void expect_map(int fd, void *buf, unsigned int page, size_t size,
		       int want, long long pin_kib, const char *what)
{
	int err = pt_map(fd, buf, apex_simple_addr(page), size);

	if (err != want)
		tap_why("MAP_BUFFER returned %s", errname(err));
	tap_ok(err == want && pinned_is(pin_kib), "%s -> %s, VmPin %lld kB",
	       what, want ? errname(want) : "ok", pin_kib);
}

static void expect_unmap(int fd, void *buf, unsigned int page, size_t size,
			 long long pin_kib, const char *what)
{
	int err = pt_unmap(fd, buf, apex_simple_addr(page), size);

	if (err)
		tap_why("UNMAP_BUFFER returned %s", errname(err));
	tap_ok(!err && pinned_is(pin_kib), "%s, VmPin back to %lld kB", what,
	       pin_kib);
}

/* The last close happens in a child: the charge still goes back here. */
static void test_close_elsewhere(void *buf)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC), status = 0, err;
	int go[2];
	pid_t pid;
	char c = 0;

	err = fd < 0 ? errno : pt_map(fd, buf, apex_simple_addr(0), 512 * KIB);
	if (err)
		tap_why("%s", errname(err));
	if (!tap_ok(!err && pinned_is(512), "map 512 KiB on a new descriptor")) {
		tap_skip_dep("the map", "release of the charge by another process");
		return;
	}
	if (pipe2(go, O_CLOEXEC)) {
		tap_why("pipe: %s", strerror(errno));
		tap_ok(false, "fork a child holding the descriptor");
		return;
	}
	pid = fork();
	if (pid == 0) {
		/* Hold the descriptor until told to close it, then exit. */
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		close(fd);
		_exit(0);
	}
	close(go[0]);
	close(fd);
	tap_ok(pid > 0 && pinned_is(512) && mapped_is(128),
	       "after this process closes it, the child's copy keeps the mapping and the charge");
	if (write(go[1], &c, 1) != 1)
		tap_why("write: %s", strerror(errno));
	close(go[1]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	tap_ok(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status) &&
	       pinned_is(0) && mapped_is(0),
	       "the child's last close unmaps and gives the charge back to this process");
}

int main(int argc, char **argv)
{
	struct rlimit rl;
	void *big, *a, *b;
	int fd, err;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-memlock [DEVICE]\n", stderr);
		return 2;
	}
	dev = apex_dev_path(argc, argv);

	if (geteuid() == 0 || has_cap_ipc_lock())
		tap_why("euid %d: CAP_IPC_LOCK would lift the limit", (int)geteuid());
	if (!tap_ok(geteuid() != 0 && !has_cap_ipc_lock(),
		    "runs unprivileged, without CAP_IPC_LOCK")) {
		tap_skip_dep("an unprivileged user", "memory-lock tests");
		return tap_done();
	}
	err = getrlimit(RLIMIT_MEMLOCK, &rl) ? errno : 0;
	if (!err && rl.rlim_max != RLIM_INFINITY && rl.rlim_max < LIMIT)
		err = EPERM;
	if (!err) {
		rl.rlim_cur = LIMIT;
		err = setrlimit(RLIMIT_MEMLOCK, &rl) ? errno : 0;
	}
	if (err)
		tap_why("hard limit %llu: %s", (unsigned long long)rl.rlim_max,
			errname(err));
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0 && !err)
		tap_why("open: %s", strerror(errno));
	big = buf_alloc(16 * LIMIT);
	a = buf_alloc(1024 * KIB);
	b = buf_alloc(768 * KIB);
	if (!tap_ok(!err && fd >= 0 && big && a && b && pinned_is(0),
		    "RLIMIT_MEMLOCK 1 MiB, %s open read-write, nothing pinned", dev)) {
		tap_skip_dep("the setup", "memory-lock tests");
		return tap_done();
	}

	expect_map(fd, big, 0, 16 * LIMIT, ENOMEM, 0, "map 16 MiB");
	tap_ok(mapped_is(0), "the refused map left no page mapped");
	expect_map(fd, a, 0, 512 * KIB, 0, 512, "map 512 KiB");
	expect_map(fd, b, 256, 768 * KIB, ENOMEM, 512,
		   "map 768 KiB more (1280 KiB in all)");
	expect_map(fd, b, 256, 512 * KIB, 0, 1024,
		   "map 512 KiB more (1024 KiB in all, the limit)");
	expect_unmap(fd, a, 0, 512 * KIB, 512, "unmap the first 512 KiB");
	expect_map(fd, a, 0, 512 * KIB, 0, 1024, "map it again");
	expect_unmap(fd, a, 0, 512 * KIB, 512, "unmap it");
	expect_unmap(fd, b, 256, 512 * KIB, 0, "unmap the second");
	close(fd);

	test_close_elsewhere(a);
	return tap_done();
}
