/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * The apexsim test engine (BAR2 page 0x40000, our own test interface, see
 * vmtest/apexsim/README.md): copies TE_LEN bytes from device address TE_SRC
 * to TE_DST through the page tables the driver wrote, then raises TE_IRQ.
 */
#ifndef APEX_GUEST_TE_H
#define APEX_GUEST_TE_H

#include <stdint.h>

#define TE_MMAP_OFFSET 0x40000
#define TE_ID_VALUE 0x4150455854450001ULL

enum te_reg {
	TE_ID = 0x00,
	TE_SRC = 0x08,
	TE_DST = 0x10,
	TE_LEN = 0x18,
	TE_IRQ = 0x20,
	TE_DOORBELL = 0x28,
	TE_STATUS = 0x30,
	TE_FAULT_ADDR = 0x38,
	TE_COMPLETED = 0x40,
};

#define TE_STATUS_BUSY (1ULL << 0)
#define TE_STATUS_DONE (1ULL << 1)
#define TE_STATUS_ERROR (1ULL << 2)

struct te {
	volatile uint64_t *regs;
};

/* The outcome of one copy. */
struct te_run {
	uint64_t status;	/* TE_STATUS after the copy */
	uint64_t fault;		/* TE_FAULT_ADDR after the copy */
	uint64_t events;	/* eventfd count read (0: no interrupt) */
	long ms;		/* doorbell to interrupt (or timeout) */
};

/* mmap the test-engine page of @fd; returns 0 or the positive errno. */
int te_map(struct te *te, int fd);
void te_unmap(struct te *te);

uint64_t te_read(const struct te *te, enum te_reg reg);
void te_write(const struct te *te, enum te_reg reg, uint64_t val);

/*
 * Start a copy and wait up to @timeout_ms for the interrupt on @efd (the
 * eventfd bound to the source that signals the outcome: @irq when the copy
 * succeeds, the fatal-error source when it faults). Returns 0 when the
 * engine finished (DONE or ERROR), -1 when it is still busy.
 */
int te_copy(const struct te *te, uint64_t src, uint64_t dst, uint64_t len,
	    unsigned int irq, int efd, int timeout_ms, struct te_run *run);

/* Wait for an eventfd (non-blocking fd); returns its count, 0 on timeout. */
uint64_t efd_wait(int efd, int timeout_ms);

/* Read and discard any pending count; returns what was pending. */
uint64_t efd_drain(int efd);

#endif /* APEX_GUEST_TE_H */
