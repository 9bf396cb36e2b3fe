// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-owner: the ownership rules of the 2018 staging driver, run as an
 * unprivileged user in group apex (the stage scripts start it with
 * runuser -u tpuuser): one process owns the device once it opens it for
 * writing; other processes may open it read-only and use the read ioctls,
 * but cannot open it for writing or change anything until the owner
 * closes it or dies.
 *
 *   apex-owner [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"
#include "te.h"

/* What the driver returns to a second process opening for write. */
#define E_OWNED EPERM

static const char *dev;
static size_t page;	/* the kernel's page size: what MAP_BUFFER takes */

/* What a child process does; returns 0 or a positive errno. */
typedef int (*child_fn)(void *arg);

/* Run @fn in a new process (a new tgid, so never the owner). */
static int in_child(child_fn fn, void *arg)
{
	int p[2], result = ECHILD, status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return errno;
	pid = fork();
	if (pid < 0)
		return errno;
	if (!pid) {
		result = fn(arg);
		if (write(p[1], &result, sizeof(result)) != sizeof(result))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &result, sizeof(result)) != sizeof(result))
		result = ECHILD;
	close(p[0]);
	waitpid(pid, &status, 0);
	return result;
}

static int open_errno(int flags)
{
	int fd = open(dev, flags | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int child_open_rw(void *arg)
{
	(void)arg;
	return open_errno(O_RDWR);
}

static int child_open_ro(void *arg)
{
	(void)arg;
	return open_errno(O_RDONLY);
}

/* A request issued by a non-owner through a read-only descriptor. */
struct ro_call {
	const char *name;
	int (*fn)(int fd, void *arg);
	void *arg;
};

static int child_ro_call(void *arg)
{
	const struct ro_call *call = arg;
	int fd = open(dev, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return errno;
	err = call->fn(fd, call->arg);
	close(fd);
	return err;
}

static int do_table_size(int fd, void *arg)
{
	struct gasket_page_table_ioctl io = { .page_table_index = 0 };

	(void)arg;
	return xioctl(fd, GASKET_IOCTL_PAGE_TABLE_SIZE, &io);
}

static int do_map(int fd, void *buf)
{
	return pt_map(fd, buf, apex_simple_addr(100), page);
}

static int do_unmap(int fd, void *buf)
{
	return pt_unmap(fd, buf, apex_simple_addr(16), page);
}

static int do_set_eventfd(int fd, void *arg)
{
	int efd = eventfd(0, EFD_CLOEXEC);

	(void)arg;
	return set_eventfd(fd, 4, efd);
}

static int do_clear_eventfd(int fd, void *arg)
{
	(void)arg;
	return clear_eventfd(fd, 4);
}

static int do_partition(int fd, void *arg)
{
	(void)arg;
	return pt_partition(fd, 2048);
}

static int do_reset(int fd, void *arg)
{
	(void)arg;
	return dev_reset(fd, false);
}

static int do_reset_legacy(int fd, void *arg)
{
	(void)arg;
	return dev_reset(fd, true);
}

static int do_clear_counts(int fd, void *arg)
{
	(void)arg;
	return xioctl(fd, GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS, NULL);
}

static int do_gate_clock(int fd, void *arg)
{
	struct apex_gate_clock_ioctl io = { .enable = 1 };

	(void)arg;
	return xioctl(fd, APEX_IOCTL_GATE_CLOCK, &io);
}

static int do_mmap_write(int fd, void *arg)
{
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       TE_MMAP_OFFSET);

	(void)arg;
	if (p == MAP_FAILED)
		return errno;
	munmap(p, page);
	return 0;
}

/* Open for writing, report the outcome on @ready_fd, hold until killed. */
static void __attribute__((noreturn)) hold_rw(int ready_fd)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	int err = fd < 0 ? errno : 0;

	if (write(ready_fd, &err, sizeof(err)) != sizeof(err))
		_exit(1);
	for (;;)
		pause();
}

static bool owner_is(pid_t pid)
{
	long long owned = sysfs_num(dev, "is_device_owned");
	long long owner = sysfs_num(dev, "device_owner");

	if (owned != (pid ? 1 : 0) || (pid && owner != pid)) {
		tap_why("is_device_owned %lld, device_owner %lld; want %d, %d",
			owned, owner, pid ? 1 : 0, (int)pid);
		return false;
	}
	return true;
}

static void expect(int got, int want, const char *name)
{
	if (got != want)
		tap_why("got %s", errname(got));
	tap_ok(got == want, "%s -> %s", name, want ? errname(want) : "ok");
}

static void test_non_owner(void *buf)
{
	const struct ro_call calls[] = {
		{ "PAGE_TABLE_SIZE", do_table_size, NULL },
		{ "MAP_BUFFER", do_map, buf },
		{ "UNMAP_BUFFER of the owner's mapping", do_unmap, buf },
		{ "SET_EVENTFD", do_set_eventfd, NULL },
		{ "CLEAR_EVENTFD", do_clear_eventfd, NULL },
		{ "PARTITION_PAGE_TABLE", do_partition, NULL },
		{ "RESET", do_reset, NULL },
		{ "RESET (legacy _IOW number)", do_reset_legacy, NULL },
		{ "CLEAR_INTERRUPT_COUNTS", do_clear_counts, NULL },
		{ "APEX_IOCTL_GATE_CLOCK", do_gate_clock, NULL },
		{ "mmap of the test engine read-write", do_mmap_write, NULL },
	};
	char name[128];
	size_t i;

	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		/* Read queries are allowed; everything else is refused. */
		int want = i == 0 ? 0 : i == 10 ? EACCES : EPERM;

		snprintf(name, sizeof(name),
			 "non-owner %s on a read-only descriptor", calls[i].name);
		expect(in_child(child_ro_call, (void *)&calls[i]), want, name);
	}
}

int main(int argc, char **argv)
{
	int fd, fd2, ready[2], err;
	long long pages;
	pid_t holder;
	void *buf;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-owner [DEVICE]\n", stderr);
		return 2;
	}
	dev = apex_dev_path(argc, argv);
	page = kernel_page();
	tap_diag("running as uid %u", (unsigned)getuid());
	tap_ok(getuid() != 0, "runs unprivileged (ownership is only enforced without CAP_SYS_ADMIN)");

	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_why("%s", strerror(errno));
	if (!tap_ok(fd >= 0, "first process opens %s read-write", dev)) {
		tap_skip_dep("the first open", "ownership tests");
		return tap_done();
	}
	tap_ok(owner_is(getpid()), "sysfs shows the device owned by the first process");
	fd2 = open(dev, O_RDWR | O_CLOEXEC);
	if (fd2 < 0)
		tap_why("%s", strerror(errno));
	tap_ok(fd2 >= 0, "the owner opens a second read-write handle");

	buf = buf_alloc(page);
	err = buf ? pt_map(fd, buf, apex_simple_addr(16), page) : ENOMEM;
	expect(err, 0, "owner (unprivileged) MAP_BUFFER");
	pages = sysfs_num(dev, "node_0_num_mapped_pages");

	expect(in_child(child_open_rw, NULL), E_OWNED,
	       "second process opens read-write while owned");
	expect(in_child(child_open_ro, NULL), 0,
	       "second process opens read-only while owned");
	test_non_owner(buf);
	if (sysfs_num(dev, "node_0_num_mapped_pages") != pages)
		tap_why("node_0_num_mapped_pages changed");
	tap_ok(sysfs_num(dev, "node_0_num_mapped_pages") == pages &&
		       owner_is(getpid()),
	       "refused calls left the owner's mapping and ownership alone");
	expect(pt_unmap(fd, buf, apex_simple_addr(16), page), 0,
	       "owner UNMAP_BUFFER");
	expect(dev_reset(fd, false), 0, "owner (unprivileged) RESET");

	close(fd2);
	expect(in_child(child_open_rw, NULL), E_OWNED,
	       "still owned while one of the owner's handles is open");
	close(fd);
	tap_ok(owner_is(0), "closing the last handle releases ownership");
	expect(in_child(child_open_rw, NULL), 0,
	       "second process opens read-write after the owner closed");

	/* An owner that dies without closing must not keep the device. */
	if (pipe2(ready, O_CLOEXEC))
		return tap_done();
	holder = fork();
	if (!holder)
		hold_rw(ready[1]);
	if (read(ready[0], &err, sizeof(err)) != sizeof(err))
		err = ECHILD;
	expect(err, 0, "a holder process opens read-write");
	tap_ok(owner_is(holder), "sysfs shows the holder as owner");
	expect(in_child(child_open_rw, NULL), E_OWNED,
	       "second process opens read-write while the holder lives");
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
	expect(in_child(child_open_rw, NULL), 0,
	       "second process opens read-write after the holder was killed");
	tap_ok(owner_is(0), "no owner left");
	buf_free(buf, page);
	return tap_done();
}
