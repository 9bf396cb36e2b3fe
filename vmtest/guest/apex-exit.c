// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-exit: the owner exits in the middle of a copy. A child process opens
 * the device, maps a buffer it shares with this process (a memfd) into the
 * page table and starts a long copy (apexsim's copy rate slowed through
 * chip 0's control channel); once the chip has written some of it, the
 * child exits, and its exit is the device's last close. That close must
 * stop the chip before it unmaps and unpins the pages: afterwards the chip
 * writes nothing more and faults nothing, and the destination holds
 * exactly the bytes written before the close. Then the device opens again
 * with nothing mapped.
 *
 *   apex-exit DEVICE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apexdev.h"
#include "inflight.h"
#include "tap.h"
#include "te.h"

/* The child's report on the pipe: the copy is in flight, or why not. */
#define IN_FLIGHT 'y'

/* The child: the owner, which exits with its copy in flight. */
static void owner(const char *dev, uint8_t *buf, const struct inflight *before,
		  int report)
{
	struct te te = { 0 };
	char what = 'n';
	int fd, err;

	fd = open(dev, O_RDWR);
	err = fd < 0 ? errno : te_map(&te, fd);
	if (!err)
		err = pt_map(fd, buf, apex_simple_addr(INFLIGHT_PAGE),
			     INFLIGHT_MAP_SIZE);
	if (err)
		dprintf(STDOUT_FILENO, "# owner: %s\n", errname(err));
	else if (inflight_start(&te, before))
		what = IN_FLIGHT;
	if (write(report, &what, 1) != 1)
		_exit(1);
	/* No unmap, no close: the exit does both, the close last. */
	_exit(0);
}

int main(int argc, char **argv)
{
	struct inflight before = { 0 };
	char what = 0;
	uint8_t *buf;
	int mfd, pipefd[2], status = 0, fd;
	long long pages;
	pid_t pid;

	if (argc != 2 || argv[1][0] != '/') {
		fputs("usage: apex-exit DEVICE\n", stderr);
		return 2;
	}
	setvbuf(stdout, NULL, _IONBF, 0);

	mfd = memfd_create("apex-exit", MFD_CLOEXEC);
	buf = mfd < 0 || ftruncate(mfd, INFLIGHT_MAP_SIZE) ? MAP_FAILED :
	      mmap(NULL, INFLIGHT_MAP_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED,
		   mfd, 0);
	if (buf == MAP_FAILED)
		tap_why("%s", strerror(errno));
	if (!tap_ok(buf != MAP_FAILED, "a 4 MiB memfd shared with the owner") ||
	    !tap_ok(inflight_prepare(&before), "apexsim copy-rate %d KiB/s",
		    INFLIGHT_KIB_S)) {
		tap_skip_dep("the buffer and the rate", "the owner's exit mid-copy");
		inflight_end();
		return tap_done();
	}
	inflight_fill(buf);

	if (pipe(pipefd) || (pid = fork()) < 0) {
		tap_why("%s", strerror(errno));
		tap_ok(false, "fork the owner");
		inflight_end();
		return tap_done();
	}
	if (!pid) {
		close(pipefd[0]);
		owner(argv[1], buf, &before, pipefd[1]);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &what, 1) != 1)
		what = 0;
	waitpid(pid, &status, 0);
	if (!tap_ok(what == IN_FLIGHT && WIFEXITED(status) && !WEXITSTATUS(status),
		    "the owner started a %lu KiB copy, then exited while it was in flight",
		    INFLIGHT_LEN >> 10)) {
		tap_skip_dep("the copy in flight", "what the chip did after the exit");
		inflight_end();
		return tap_done();
	}
	inflight_check_stopped(&before, buf, "the owner's exit");
	tap_ok(!inflight_end(), "apexsim copy-rate 0: full speed again");

	fd = open(argv[1], O_RDWR);
	pages = sysfs_num(argv[1], "node_0_num_mapped_pages");
	if (fd < 0 || pages)
		tap_why("open: %s, %lld pages mapped", fd < 0 ? strerror(errno) : "ok",
			pages);
	tap_ok(fd >= 0 && pages == 0, "%s opens again, nothing mapped", argv[1]);
	if (fd >= 0)
		close(fd);
	munmap(buf, INFLIGHT_MAP_SIZE);
	return tap_done();
}
