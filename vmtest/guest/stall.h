/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * One anonymous page registered with userfaultfd: whoever touches it, the
 * kernel included (an ioctl copying its argument, a pin), waits until the
 * page is served. Needs root: unprivileged userfaultfd handles only user
 * mode faults.
 */
#ifndef APEX_GUEST_STALL_H
#define APEX_GUEST_STALL_H

#include <stdbool.h>

struct stall_page {
	int uffd;
	void *page;
};

/* 0 or the positive errno; stall_page_fini() in either case. */
int stall_page_init(struct stall_page *s);

/* Has a thread faulted on the page (and so is waiting in the kernel)? */
bool stall_page_hit(struct stall_page *s, int ms);

/* The page finally arrives, holding @content (one page). */
int stall_page_serve(struct stall_page *s, const void *content);

void stall_page_fini(struct stall_page *s);

#endif
