// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Test-engine access for the guest test programs; see te.h. */
#include <errno.h>
#include <poll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "apexdev.h"
#include "te.h"

int te_map(struct te *te, int fd)
{
	void *p = mmap(NULL, APEX_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       TE_MMAP_OFFSET);

	if (p == MAP_FAILED) {
		te->regs = NULL;
		return errno;
	}
	te->regs = p;
	return 0;
}

void te_unmap(struct te *te)
{
	if (te->regs)
		munmap((void *)te->regs, APEX_PAGE);
	te->regs = NULL;
}

uint64_t te_read(const struct te *te, enum te_reg reg)
{
	return te->regs[reg / 8];
}

void te_write(const struct te *te, enum te_reg reg, uint64_t val)
{
	te->regs[reg / 8] = val;
}

uint64_t efd_drain(int efd)
{
	uint64_t v;

	return read(efd, &v, sizeof(v)) == sizeof(v) ? v : 0;
}

uint64_t efd_wait(int efd, int timeout_ms)
{
	struct pollfd p = { .fd = efd, .events = POLLIN };
	long end = now_ms() + timeout_ms;
	int left;

	for (;;) {
		left = (int)(end - now_ms());
		if (left < 0)
			left = 0;
		if (poll(&p, 1, left) > 0)
			return efd_drain(efd);
		if (!left)
			return 0;
	}
}

int te_copy(const struct te *te, uint64_t src, uint64_t dst, uint64_t len,
	    unsigned int irq, int efd, int timeout_ms, struct te_run *run)
{
	struct timespec pause = { .tv_nsec = 10 * 1000 * 1000 };
	long start, end;

	te_write(te, TE_STATUS, TE_STATUS_DONE | TE_STATUS_ERROR);
	te_write(te, TE_SRC, src);
	te_write(te, TE_DST, dst);
	te_write(te, TE_LEN, len);
	te_write(te, TE_IRQ, irq);
	start = now_ms();
	te_write(te, TE_DOORBELL, 1);

	run->events = efd < 0 ? 0 : efd_wait(efd, timeout_ms);
	run->ms = now_ms() - start;

	/* The status is final before the interrupt; poll only if none came. */
	end = start + timeout_ms;
	while ((run->status = te_read(te, TE_STATUS)) & TE_STATUS_BUSY &&
	       now_ms() < end)
		nanosleep(&pause, NULL);
	run->fault = te_read(te, TE_FAULT_ADDR);
	return run->status & TE_STATUS_BUSY ? -1 : 0;
}
