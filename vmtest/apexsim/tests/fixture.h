/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * A chip with fake guest RAM (a memfd mapped through guest_mem exactly as
 * a DMA_MAP would) and an interrupt recorder, for the model tests.
 */
#ifndef APEXSIM_FIXTURE_H
#define APEXSIM_FIXTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apex_chip.h"
#include "guest_mem.h"

#define FX_RAM_IOVA	0x100000ull		/* guest RAM starts at 1 MiB */
#define FX_RAM_SIZE	(20ull << 20)
#define FX_MAX_IRQS	64

struct fixture {
	struct apex_chip chip;
	struct guest_mem gmem;
	unsigned int irq[FX_MAX_IRQS];	/* vectors, in order */
	size_t nirq;
	bool irq_listening;		/* false: deliveries fail */
};

/* The shared fixture, power-on state, RAM mapped, vectors = sources. */
struct fixture *fx_setup(void);
void fx_teardown(struct fixture *fx);

uint64_t fx_rd(struct fixture *fx, uint32_t off);	/* natural width */
void fx_wr(struct fixture *fx, uint32_t off, uint64_t val);
/* gasket_read_modify_write_32/64: WIDTH bits at SHIFT set to VAL. */
void fx_rmw(struct fixture *fx, uint32_t off, uint64_t val,
	    unsigned int width, unsigned int shift);
/* INTVECCTL as gasket_interrupt_setup() programs it, vector = source. */
void fx_setup_interrupts(struct fixture *fx);
/* The reset sequence of apex_enter_reset()/apex_quit_reset(). */
bool fx_enter_reset(struct fixture *fx);
bool fx_quit_reset(struct fixture *fx);
/* Host pointer to guest RAM at IOVA. */
void *fx_ram(struct fixture *fx, uint64_t iova);
/* Count of recorded interrupts on VECTOR. */
size_t fx_irqs_on(const struct fixture *fx, unsigned int vector);

#endif /* APEXSIM_FIXTURE_H */
