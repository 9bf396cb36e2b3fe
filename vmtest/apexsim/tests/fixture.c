// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Model test fixture. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"

static struct fixture fx_shared;

static bool fx_irq(void *opaque, unsigned int vector)
{
	struct fixture *fx = opaque;

	if (!fx->irq_listening)
		return false;
	if (fx->nirq < FX_MAX_IRQS)
		fx->irq[fx->nirq++] = vector;
	return true;
}

struct fixture *fx_setup(void)
{
	struct fixture *fx = &fx_shared;
	int fd;

	memset(fx, 0, sizeof(*fx));
	gmem_init(&fx->gmem);
	fd = memfd_create("apexsim-test-ram", MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, FX_RAM_SIZE) == 0)
		gmem_map(&fx->gmem, FX_RAM_IOVA, FX_RAM_SIZE, fd, 0, true);
	if (fd >= 0)
		close(fd);
	apex_chip_init(&fx->chip, &fx->gmem, 42);
	fx->chip.irq_fn = fx_irq;
	fx->chip.irq_opaque = fx;
	fx->chip.now_ms = 1000;
	fx->chip.bus_master = true;
	fx->irq_listening = true;
	return fx;
}

void fx_teardown(struct fixture *fx)
{
	gmem_fini(&fx->gmem);
}

uint64_t fx_rd(struct fixture *fx, uint32_t off)
{
	return apex_chip_read(&fx->chip, off, apex_chip_reg_width(off));
}

void fx_wr(struct fixture *fx, uint32_t off, uint64_t val)
{
	apex_chip_write(&fx->chip, off, apex_chip_reg_width(off), val);
}

void fx_rmw(struct fixture *fx, uint32_t off, uint64_t val,
	    unsigned int width, unsigned int shift)
{
	uint64_t mask = ((1ull << width) - 1) << shift;
	uint64_t v = fx_rd(fx, off);

	fx_wr(fx, off, (v & ~mask) | ((val << shift) & mask));
}

void fx_setup_interrupts(struct fixture *fx)
{
	unsigned int src;

	for (src = 0; src < APEX_IRQ_SOURCES; src++) {
		uint32_t reg;
		unsigned int slot = 0;
		uint64_t v;

		if (src < 4) {
			reg = APEX_HIB_INSTR_QUEUE_INTVECCTL + 8 * src;
		} else if (src < 8) {
			reg = APEX_HIB_SC_HOST_INTVECCTL;
			slot = src - 4;
		} else if (src < 12) {
			reg = APEX_HIB_TOP_LEVEL_INTVECCTL;
			slot = src - 8;
		} else {
			reg = APEX_HIB_FATAL_ERR_INTVECCTL;
		}
		if (src < 4 || src == 12) {
			v = src;
		} else {
			/* gasket clears 16 bits, not the 7-bit slot. */
			v = fx_rd(fx, reg) & ~(0xffffull << (7 * slot));
			v |= (uint64_t)src << (7 * slot);
		}
		fx_wr(fx, reg, v);
	}
}

/* gasket_wait_with_reschedule: the model settles at once, poll twice. */
static bool fx_wait(struct fixture *fx, uint32_t off, uint64_t mask,
		    uint64_t val)
{
	int i;

	for (i = 0; i < 2; i++)
		if ((fx_rd(fx, off) & mask) == val)
			return true;
	return false;
}

bool fx_enter_reset(struct fixture *fx)
{
	fx_rmw(fx, APEX_IDLEGEN_IDLEREGISTER, 0, 1, 32);
	fx_wr(fx, APEX_USER_HIB_DMA_PAUSE, 1);
	if (!fx_wait(fx, APEX_USER_HIB_DMA_PAUSED, 1, 1))
		return false;
	fx_rmw(fx, APEX_SCU_2, 1, 2, 2);
	fx_rmw(fx, APEX_SCU_2, 1, 2, 18);
	fx_rmw(fx, APEX_SCU_3, 3, 2, 14);
	return fx_wait(fx, APEX_SCU_3, 1 << 6, 1 << 6);
}

bool fx_quit_reset(struct fixture *fx)
{
	fx_rmw(fx, APEX_SCU_3, 0, 2, 14);
	fx_rmw(fx, APEX_SCU_2, 0, 2, 18);
	fx_rmw(fx, APEX_SCU_2, 2, 2, 2);
	if (!fx_wait(fx, APEX_SCU_3, 1 << 6, 0))
		return false;
	if (!fx_wait(fx, APEX_SCU_3, 1 << 4, 0))
		return false;
	fx_rmw(fx, APEX_SCU_3, 2, 2, 26);
	return true;
}

void *fx_ram(struct fixture *fx, uint64_t iova)
{
	return gmem_ptr(&fx->gmem, iova, 1, true);
}

size_t fx_irqs_on(const struct fixture *fx, unsigned int vector)
{
	size_t i, n = 0;

	for (i = 0; i < fx->nirq; i++)
		n += fx->irq[i] == vector;
	return n;
}
