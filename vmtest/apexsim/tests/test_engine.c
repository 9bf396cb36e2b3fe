// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Test engine: copies through simple and extended tables, faults. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fixture.h"
#include "unit.h"

/* A chip out of reset with interrupts routed vector = source. */
static struct fixture *te_setup(void)
{
	struct fixture *fx = fx_setup();

	fx_quit_reset(fx);
	fx_setup_interrupts(fx);
	return fx;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

static void start(struct fixture *fx, uint64_t src, uint64_t dst,
		  uint64_t len, unsigned int irq)
{
	fx_wr(fx, TE_SRC, src);
	fx_wr(fx, TE_DST, dst);
	fx_wr(fx, TE_LEN, len);
	fx_wr(fx, TE_IRQ, irq);
	fx_wr(fx, TE_DOORBELL, 1);
}

/* Run the deferred work as the poll loop would, at the deadline. */
static void run_due(struct fixture *fx)
{
	uint64_t due = apex_chip_next_deadline(&fx->chip);

	if (due != UINT64_MAX) {
		fx->chip.now_ms = due;
		apex_chip_tick(&fx->chip);
	}
}

static void test_simple_copy(void)
{
	struct fixture *fx = te_setup();
	const uint64_t src_ram = FX_RAM_IOVA + 0x40000;
	const uint64_t dst_ram = FX_RAM_IOVA + 0x80000;
	const size_t len = 3 * 4096 - 100;
	uint8_t expect[3 * 4096];
	int i;

	/* Source pages 10..12 in order; destination pages 20..22 reversed. */
	for (i = 0; i < 3; i++) {
		fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (10 + i),
		      (src_ram + 4096 * i) | 1);
		fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (20 + i),
		      (dst_ram + 4096 * (2 - i)) | 1);
	}
	fill(fx_ram(fx, src_ram), 3 * 4096, 1);
	memcpy(expect, fx_ram(fx, src_ram + 50), len);

	start(fx, 10 * 4096 + 50, 20 * 4096 + 50, len, 5);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), 1000 + TE_LATENCY_MS);
	apex_chip_tick(&fx->chip);	/* not due yet */
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_DONE);
	CHECK_EQ(fx_rd(fx, TE_COMPLETED), 1);
	CHECK_EQ(fx->nirq, 1);
	CHECK_EQ(fx->irq[0], 5);
	/* Device page 20 is RAM page 2, 21 is 1, 22 is 0. */
	CHECK(!memcmp(fx_ram(fx, dst_ram + 2 * 4096 + 50), expect, 4096 - 50));
	CHECK(!memcmp(fx_ram(fx, dst_ram + 4096), expect + 4096 - 50, 4096));
	CHECK(!memcmp(fx_ram(fx, dst_ram), expect + 2 * 4096 - 50, 4096 - 50));
	/* DONE is write-1-to-clear. */
	fx_wr(fx, TE_STATUS, TE_STATUS_DONE);
	CHECK_EQ(fx_rd(fx, TE_STATUS), 0);
	fx_teardown(fx);
}

static void test_extended_copy(void)
{
	struct fixture *fx = te_setup();
	const uint64_t table = FX_RAM_IOVA + 0x1000;
	const uint64_t src_ram = FX_RAM_IOVA + 0x100000;
	const uint64_t dst_ram = FX_RAM_IOVA + 0x200000;
	uint64_t *l1 = fx_ram(fx, table);
	const uint64_t ext = APEX_EXTENDED_BIT | 1ull << 21;
	const size_t len = 64 * 1024;
	int i;

	/* 4096 simple entries, extended level-0 entry 1 -> table. */
	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 4096);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (4096 + 1), table | 1);
	for (i = 0; i < 16; i++) {
		l1[i] = (src_ram + 4096 * i) | 1;
		fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (100 + i),
		      (dst_ram + 4096 * i) | 1);
	}
	fill(fx_ram(fx, src_ram), len, 9);
	start(fx, ext, 100 * 4096, len, APEX_IRQ_TOP_LEVEL_0 + 2);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_DONE);
	CHECK(!memcmp(fx_ram(fx, dst_ram), fx_ram(fx, src_ram), len));
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_TOP_LEVEL_0 + 2), 1);
	fx_teardown(fx);
}

static void test_translation_fault(void)
{
	struct fixture *fx = te_setup();
	const uint64_t ram = FX_RAM_IOVA + 0x40000;

	/* Destination page 31 valid, page 32 missing: fault mid-copy. */
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 1, ram | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 2, (ram + 4096) | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 31, (ram + 8192) | 1);
	start(fx, 1 * 4096, 31 * 4096 + 8, 6000, 3);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK_EQ(fx_rd(fx, TE_FAULT_ADDR), 32 * 4096);
	CHECK(fx_rd(fx, APEX_USER_HIB_ERROR_STATUS) & HIB_ERR_PAGE_FAULT);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	CHECK_EQ(fx_irqs_on(fx, 3), 0);
	CHECK_EQ(fx_rd(fx, TE_COMPLETED), 0);
	CHECK_EQ(fx->chip.cnt.te_faults, 1);
	fx_teardown(fx);
}

static void test_fault_outside_ram(void)
{
	struct fixture *fx = te_setup();

	/* Source entry points outside guest RAM; extended dst not valid. */
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 7, 0x7fff0000ull | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 8, FX_RAM_IOVA | 1);
	start(fx, 7 * 4096, 8 * 4096, 16, 0);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_FAULT_ADDR), 7 * 4096);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	fx_wr(fx, TE_STATUS, TE_STATUS_ERROR);
	start(fx, 8 * 4096, APEX_EXTENDED_BIT | 0x123, 16, 0);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_FAULT_ADDR), APEX_EXTENDED_BIT | 0x123);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 2);
	fx_teardown(fx);
}

static void test_bad_descriptor(void)
{
	struct fixture *fx = te_setup();

	start(fx, 0, 0, 0, 0);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	start(fx, 0, 0, TE_MAX_LEN + 1, 0);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	start(fx, 0, 0, 16, APEX_IRQ_SOURCES);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK(fx->chip.hib_error & HIB_ERR_TE_DESCRIPTOR);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 3);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), UINT64_MAX);
	/* Writing the wrong width to the engine is a bad access too. */
	apex_chip_write(&fx->chip, TE_LEN, 4, 16);
	CHECK(fx->chip.hib_error & HIB_ERR_BAD_ACCESS);
	fx_teardown(fx);
}

/* The engine only runs while the GCB runs; a reset drops its copy. */
static void test_waits_for_gcb(void)
{
	struct fixture *fx = te_setup();
	uint64_t *src = fx_ram(fx, FX_RAM_IOVA), *dst;

	fx_wr(fx, APEX_HIB_PAGE_TABLE, FX_RAM_IOVA | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8, (FX_RAM_IOVA + 4096) | 1);
	dst = fx_ram(fx, FX_RAM_IOVA + 4096);
	*src = 0x1122334455667788ull;

	fx_rmw(fx, APEX_SCU_2, 1, 2, 18);	/* clock gated */
	start(fx, 0, 4096, 8, 1);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), UINT64_MAX);
	fx->chip.now_ms += 100;
	apex_chip_tick(&fx->chip);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	/* Doorbell while busy is ignored. */
	fx_wr(fx, TE_DOORBELL, 1);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	fx_rmw(fx, APEX_SCU_2, 0, 2, 18);
	CHECK(apex_chip_next_deadline(&fx->chip) <= fx->chip.now_ms);
	apex_chip_tick(&fx->chip);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_DONE);
	CHECK_EQ(*dst, *src);

	fx_wr(fx, APEX_USER_HIB_DMA_PAUSE, 1);
	start(fx, 0, 4096, 8, 1);
	apex_chip_tick(&fx->chip);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	CHECK(fx_enter_reset(fx));
	CHECK_EQ(fx_rd(fx, TE_STATUS), 0);
	CHECK_EQ(fx_rd(fx, TE_COMPLETED), 1);
	CHECK_EQ(fx_irqs_on(fx, 1), 1);
	fx_teardown(fx);
}

static void test_bus_master_and_speed(void)
{
	struct fixture *fx = te_setup();

	fx_wr(fx, APEX_HIB_PAGE_TABLE, FX_RAM_IOVA | 1);
	fx->chip.bus_master = false;
	start(fx, 0, 0, 8, 1);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	fx->chip.bus_master = true;
	/* 16 MiB at full clock: 1 + 16 ms; at divider 3 eight times that. */
	start(fx, 0, 0, 16 << 20, 1);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), fx->chip.now_ms + 17);
	fx_wr(fx, TE_STATUS, ~0ull);
	CHECK(fx_enter_reset(fx) && fx_quit_reset(fx));
	fx_rmw(fx, APEX_SCU_3, 3, 2, 28);
	start(fx, 0, 0, 8, 1);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), fx->chip.now_ms + 8);
	fx_teardown(fx);
}

/*
 * With a copy rate, a copy moves a 4 KiB step each time it is due: in
 * flight for seconds, stopped where it is by a GCB reset or by bus
 * mastering turned off, and counted in te_bytes.
 */
static void test_copy_rate(void)
{
	struct fixture *fx = te_setup();
	const uint64_t ram = FX_RAM_IOVA + 0x40000;
	uint8_t *src = fx_ram(fx, ram), *dst = fx_ram(fx, ram + 4 * 4096);
	uint64_t t0;
	int i;

	for (i = 0; i < 8; i++)
		fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * i, (ram + 4096 * i) | 1);
	fill(src, 4 * 4096, 3);
	memset(dst, 0, 4 * 4096);
	fx->chip.te_rate_kib_s = 8;	/* 4 KiB every 500 ms */

	/* Three steps, 500 ms apart; DONE and the interrupt after the last. */
	t0 = fx->chip.now_ms;
	start(fx, 0, 4 * 4096, 3 * 4096, 2);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), t0 + 500);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_BUSY);
	CHECK_EQ(fx->chip.cnt.te_bytes, 4096);
	CHECK(!memcmp(dst, src, 4096));
	CHECK_EQ(dst[4096], 0);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), t0 + 1000);
	run_due(fx);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_DONE);
	CHECK_EQ(fx->chip.now_ms, t0 + 1500);
	CHECK(!memcmp(dst, src, 3 * 4096));
	CHECK_EQ(fx_irqs_on(fx, 2), 1);
	CHECK_EQ(fx->chip.cnt.te_bytes, 3 * 4096);

	/* A GCB reset after the first step: nothing more is written. */
	memset(dst, 0, 4 * 4096);
	fx_wr(fx, TE_STATUS, ~0ull);
	start(fx, 0, 4 * 4096, 3 * 4096, 2);
	run_due(fx);
	CHECK(fx_enter_reset(fx));
	CHECK_EQ(fx_rd(fx, TE_STATUS), 0);
	CHECK_EQ(apex_chip_next_deadline(&fx->chip), UINT64_MAX);
	fx->chip.now_ms += 5000;
	apex_chip_tick(&fx->chip);
	CHECK_EQ(fx->chip.cnt.te_bytes, 4 * 4096);
	CHECK_EQ(dst[4096], 0);
	CHECK_EQ(fx_rd(fx, TE_COMPLETED), 1);
	CHECK_EQ(fx_irqs_on(fx, 2), 1);

	/* Bus mastering off mid-copy: the next step faults, writes nothing. */
	CHECK(fx_quit_reset(fx));
	for (i = 0; i < 8; i++)
		fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * i, (ram + 4096 * i) | 1);
	start(fx, 0, 4 * 4096, 3 * 4096, 2);
	run_due(fx);
	fx->chip.bus_master = false;
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK_EQ(fx->chip.cnt.te_faults, 1);
	CHECK_EQ(fx->chip.cnt.te_bytes, 5 * 4096);
	fx_teardown(fx);
}

/*
 * The guest unmaps the destination's second page while the copy is in
 * flight, as a driver that released memory before stopping the chip
 * would: the step into it faults and counts as late DMA. Memory that was
 * never mapped faults without counting.
 */
static void test_late_dma(void)
{
	struct fixture *fx = te_setup();
	const uint64_t ram = FX_RAM_IOVA + 0x40000, page = 0x80000000ull;
	int fd = memfd_create("apexsim-test-page", MFD_CLOEXEC);
	uint8_t *dst;

	CHECK(ftruncate(fd, 2 * 4096) == 0);
	CHECK_EQ(gmem_map(&fx->gmem, page, 4096, fd, 0, true), 0);
	CHECK_EQ(gmem_map(&fx->gmem, page + 4096, 4096, fd, 4096, true), 0);
	close(fd);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 0, ram | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 1, (ram + 4096) | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 2, page | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 3, (page + 4096) | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 4, 0x7fff0000ull | 1);
	fill(fx_ram(fx, ram), 2 * 4096, 9);
	fx->chip.te_rate_kib_s = 8;

	start(fx, 0, 2 * 4096, 2 * 4096, 2);
	run_due(fx);
	dst = gmem_ptr(&fx->gmem, page, 4096, false);
	CHECK(dst && !memcmp(dst, fx_ram(fx, ram), 4096));
	CHECK_EQ(gmem_unmap(&fx->gmem, page + 4096, 4096), 0);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK_EQ(fx_rd(fx, TE_FAULT_ADDR), 3 * 4096);
	CHECK_EQ(fx->chip.cnt.te_faults, 1);
	CHECK_EQ(fx->chip.cnt.late_dma, 1);
	CHECK_EQ(fx->chip.cnt.te_bytes, 4096);

	fx_wr(fx, TE_STATUS, TE_STATUS_ERROR);
	fx->chip.te_rate_kib_s = 0;
	start(fx, 0, 4 * 4096, 16, 2);
	run_due(fx);
	CHECK_EQ(fx_rd(fx, TE_STATUS), TE_STATUS_ERROR);
	CHECK_EQ(fx->chip.cnt.te_faults, 2);
	CHECK_EQ(fx->chip.cnt.late_dma, 1);
	fx_teardown(fx);
}

const struct unit_test engine_tests[] = {
	{ "engine: copy through simple entries", test_simple_copy },
	{ "engine: copy through an extended table", test_extended_copy },
	{ "engine: translation fault mid-copy", test_translation_fault },
	{ "engine: entries outside guest RAM fault", test_fault_outside_ram },
	{ "engine: bad descriptors are errors", test_bad_descriptor },
	{ "engine: waits for the GCB, reset drops the copy", test_waits_for_gcb },
	{ "engine: needs bus mastering, slows with the divider", test_bus_master_and_speed },
	{ "engine: a copy rate keeps a copy in flight, reset stops it", test_copy_rate },
	{ "engine: memory the guest unmapped faults as late DMA", test_late_dma },
	{ NULL, NULL },
};
