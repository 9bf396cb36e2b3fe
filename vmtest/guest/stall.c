// SPDX-License-Identifier: GPL-2.0-only OR MIT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apexdev.h"
#include "stall.h"

int stall_page_init(struct stall_page *s)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};

	s->page = MAP_FAILED;
	s->uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (s->uffd < 0)
		return errno;
	if (ioctl(s->uffd, UFFDIO_API, &api))
		return errno;
	s->page = mmap(NULL, kernel_page(), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->page == MAP_FAILED)
		return errno;
	reg.range.start = (uintptr_t)s->page;
	reg.range.len = kernel_page();
	return ioctl(s->uffd, UFFDIO_REGISTER, &reg) ? errno : 0;
}

bool stall_page_hit(struct stall_page *s, int ms)
{
	struct pollfd p = { .fd = s->uffd, .events = POLLIN };
	struct uffd_msg msg;

	if (poll(&p, 1, ms) != 1 || read(s->uffd, &msg, sizeof(msg)) !=
	    (ssize_t)sizeof(msg))
		return false;
	return msg.event == UFFD_EVENT_PAGEFAULT &&
	       (msg.arg.pagefault.address & ~(kernel_page() - 1)) ==
	       (uintptr_t)s->page;
}

int stall_page_serve(struct stall_page *s, const void *content)
{
	struct uffdio_copy copy = {
		.dst = (uintptr_t)s->page,
		.src = (uintptr_t)content,
		.len = kernel_page(),
	};

	return ioctl(s->uffd, UFFDIO_COPY, &copy) ? errno : 0;
}

void stall_page_fini(struct stall_page *s)
{
	if (s->page != MAP_FAILED)
		munmap(s->page, kernel_page());
	if (s->uffd >= 0)
		close(s->uffd);
}
