// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Test engine: the doorbell latches the descriptor and marks the engine
 * BUSY; the copy itself runs later from apex_chip_tick(), once it is due
 * and the GCB runs (not in reset, clock not gated, DMA not paused). With a
 * copy rate set, it moves one 4 KiB step at a time, so a copy can be in
 * flight for seconds while the driver unbinds, resets or sleeps.
 */
#include <inttypes.h>
#include <string.h>

#include "apex_chip.h"
#include "log.h"

void te_reset(struct te_state *te)
{
	uint64_t completed = te->completed;

	memset(te, 0, sizeof(*te));
	te->completed = completed;
}

bool te_peek(const struct te_state *te, uint32_t off, uint64_t *val)
{
	switch (off) {
	case TE_ID:
		*val = TE_ID_VALUE;
		break;
	case TE_SRC:
		*val = te->src;
		break;
	case TE_DST:
		*val = te->dst;
		break;
	case TE_LEN:
		*val = te->len;
		break;
	case TE_IRQ:
		*val = te->irq;
		break;
	case TE_DOORBELL:
		*val = 0;
		break;
	case TE_STATUS:
		*val = te->status;
		break;
	case TE_FAULT_ADDR:
		*val = te->fault_addr;
		break;
	case TE_COMPLETED:
		*val = te->completed;
		break;
	default:
		return false;
	}
	return true;
}

/*
 * Until the copy (or, with a copy rate, its next step) is due. A throttled
 * chip (GCB clock divided) copies slower.
 */
static uint64_t te_duration_ms(const struct apex_chip *c, uint64_t len)
{
	unsigned int div = (c->scu3 & SCU3_RG_GCB_CLKDIV_MASK) >>
			   SCU3_RG_GCB_CLKDIV_SHIFT;
	uint64_t ms;

	if (c->te_rate_kib_s)
		ms = (TE_STEP / 1024 * 1000 + c->te_rate_kib_s - 1) /
		     c->te_rate_kib_s;
	else
		ms = TE_LATENCY_MS + (len >> 20) / TE_MIB_PER_MS;
	return ms << div;
}

static void te_start(struct apex_chip *c)
{
	struct te_state *te = &c->te;

	if (te->status & TE_STATUS_BUSY) {
		log_msg("test engine: doorbell while busy, ignored");
		return;
	}
	te->status &= ~(TE_STATUS_DONE | TE_STATUS_ERROR);
	if (te->len == 0 || te->len > TE_MAX_LEN ||
	    te->irq >= APEX_IRQ_SOURCES) {
		te->status |= TE_STATUS_ERROR;
		apex_chip_error(c, HIB_ERR_TE_DESCRIPTOR,
				"test engine descriptor len=%" PRIu64
				" irq=%" PRIu64 " (len 1..%u, irq 0..%u)",
				te->len, te->irq, TE_MAX_LEN,
				APEX_IRQ_SOURCES - 1);
		return;
	}
	te->job.src = te->src;
	te->job.dst = te->dst;
	te->job.len = te->len;
	te->job.irq = (unsigned int)te->irq;
	te->status |= TE_STATUS_BUSY;
	te->due_ms = c->now_ms + te_duration_ms(c, te->len);
	log_trace("test engine: copy %" PRIu64 " bytes %#" PRIx64 " -> %#"
		  PRIx64 ", source %u", te->len, te->src, te->dst,
		  te->job.irq);
}

void te_write(struct apex_chip *c, uint32_t off, uint64_t val)
{
	struct te_state *te = &c->te;

	switch (off) {
	case TE_SRC:
		te->src = val;
		break;
	case TE_DST:
		te->dst = val;
		break;
	case TE_LEN:
		te->len = val;
		break;
	case TE_IRQ:
		te->irq = val;
		break;
	case TE_DOORBELL:
		if (val & 1)
			te_start(c);
		break;
	case TE_STATUS:
		te->status &= ~(val & (TE_STATUS_DONE | TE_STATUS_ERROR));
		break;
	default:
		log_trace("test engine: write to read-only %#x ignored", off);
		break;
	}
}

bool te_ready(const struct apex_chip *c)
{
	return (c->te.status & TE_STATUS_BUSY) && !c->removed &&
	       apex_chip_gcb_running(c);
}

static uint64_t page_left(uint64_t addr)
{
	return APEX_PAGE_SIZE - (addr & (APEX_PAGE_SIZE - 1));
}

static void te_fault(struct apex_chip *c, uint64_t addr, enum apex_fault f,
		     const char *dir)
{
	struct te_state *te = &c->te;

	te->status = (te->status & ~TE_STATUS_BUSY) | TE_STATUS_ERROR;
	te->fault_addr = addr;
	c->cnt.te_faults++;
	if (f == APEX_FAULT_RELEASED)
		c->cnt.late_dma++;
	apex_chip_error(c, HIB_ERR_PAGE_FAULT,
			"test engine %s fault at device address %#" PRIx64
			": %s", dir, addr, apex_fault_name(f));
}

void te_run(struct apex_chip *c)
{
	struct te_state *te = &c->te;
	uint64_t left = te->job.len;

	if (c->te_rate_kib_s && left > TE_STEP)
		left = TE_STEP;
	while (left) {
		uint64_t src = te->job.src, dst = te->job.dst, n = left;
		enum apex_fault f;
		void *s, *d;

		if (n > page_left(src))
			n = page_left(src);
		if (n > page_left(dst))
			n = page_left(dst);
		f = apex_chip_dma_ptr(c, src, n, false, &s);
		if (f != APEX_FAULT_NONE) {
			te_fault(c, src, f, "source");
			return;
		}
		f = apex_chip_dma_ptr(c, dst, n, true, &d);
		if (f != APEX_FAULT_NONE) {
			te_fault(c, dst, f, "destination");
			return;
		}
		memmove(d, s, n);
		c->cnt.te_bytes += n;
		te->job.src += n;
		te->job.dst += n;
		te->job.len -= n;
		left -= n;
	}
	if (te->job.len) {
		te->due_ms = c->now_ms + te_duration_ms(c, te->job.len);
		return;
	}
	te->status = (te->status & ~TE_STATUS_BUSY) | TE_STATUS_DONE;
	te->completed++;
	log_trace("test engine: copy done, raising source %u", te->job.irq);
	apex_chip_raise(c, te->job.irq);
}
