/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * apexsim's own test engine (not part of the real chip): a copy engine in
 * BAR2's first user-mappable page. It copies TE_LEN bytes from device
 * address TE_SRC to TE_DST, translating both through the page tables the
 * driver wrote, then raises interrupt source TE_IRQ. README.md is its spec.
 */
#ifndef APEXSIM_TEST_ENGINE_H
#define APEXSIM_TEST_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

struct apex_chip;

#define TE_BASE			0x40000u
#define TE_PAGE_END		0x41000u
#define TE_ID			0x40000u	/* RO */
#define TE_SRC			0x40008u	/* RW device address */
#define TE_DST			0x40010u	/* RW device address */
#define TE_LEN			0x40018u	/* RW bytes, 1..16 MiB */
#define TE_IRQ			0x40020u	/* RW source 0..12 */
#define TE_DOORBELL		0x40028u	/* WO: 1 starts a copy */
#define TE_STATUS		0x40030u	/* RO busy, W1C done/error */
#define TE_FAULT_ADDR		0x40038u	/* RO */
#define TE_COMPLETED		0x40040u	/* RO */

#define TE_ID_VALUE		0x4150455854450001ull	/* "APEXTE" v1 */
#define TE_STATUS_BUSY		(1ull << 0)
#define TE_STATUS_DONE		(1ull << 1)
#define TE_STATUS_ERROR		(1ull << 2)
#define TE_MAX_LEN		(16u << 20)
/* Copy time: 1 ms + 1 ms per MiB at full clock, doubled per divider step. */
#define TE_LATENCY_MS		1
#define TE_MIB_PER_MS		1
/* With a copy rate set (control `copy-rate`): one step per 4 KiB page. */
#define TE_STEP			4096u
#define TE_RATE_MAX_KIB_S	(1u << 20)

struct te_state {
	uint64_t src, dst, len, irq;
	uint64_t status;
	uint64_t fault_addr;
	uint64_t completed;	/* copies finished since power-on */
	uint64_t due_ms;	/* a BUSY copy completes at or after this */
	struct {		/* descriptor latched by the doorbell */
		uint64_t src, dst, len;	/* what is left to copy */
		unsigned int irq;
	} job;
};

/* Clear descriptor and status (GCB reset); the completion count stays. */
void te_reset(struct te_state *te);
/* Register value for OFF in the engine's page; false if not a register. */
bool te_peek(const struct te_state *te, uint32_t off, uint64_t *val);
void te_write(struct apex_chip *c, uint32_t off, uint64_t val);
/* A copy is waiting and the chip can run it. */
bool te_ready(const struct apex_chip *c);
/*
 * Perform the waiting copy (called when due): all of it, or with a copy
 * rate set, its next step, the rest due later.
 */
void te_run(struct apex_chip *c);

#endif /* APEXSIM_TEST_ENGINE_H */
