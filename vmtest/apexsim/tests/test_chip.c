// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Register model: reset and power sequence, faults, interrupts, tables. */
#include <string.h>

#include "fixture.h"
#include "unit.h"

/* The driver's conversions (later gasket-driver, apex_driver.c). */
static int driver_adc_to_millic(int adc)
{
	return (662 - adc) * 250 + 550;
}

static int driver_millic_to_adc(int millic)
{
	return (550 - millic) / 250 + 662;
}

static void test_power_on_values(void)
{
	struct fixture *fx = fx_setup();

	CHECK_EQ(fx_rd(fx, APEX_HIB_PAGE_TABLE_SIZE), 8192);
	CHECK_EQ(fx_rd(fx, APEX_HIB_EXTENDED_TABLE), 8192);
	CHECK_EQ(fx_rd(fx, APEX_HIB_PAGE_TABLE_INIT), 1);
	CHECK_EQ(fx_rd(fx, APEX_HIB_MSIX_TABLE_INIT), 1);
	/* libedgetpu's ScuCtrl3 reset value: GCB in reset. */
	CHECK_EQ(fx_rd(fx, APEX_SCU_3), 0x80050410);
	CHECK_EQ(fx_rd(fx, APEX_SCU_2), 0);
	CHECK_EQ(fx_rd(fx, TE_ID), TE_ID_VALUE);
	CHECK_EQ(fx_rd(fx, APEX_OMC0_DC) >> 16 & 0x3ff, 0x3ff);
	CHECK_EQ(fx_rd(fx, APEX_OMC0_D4), 1);
	CHECK(fx_rd(fx, APEX_EFUSE_ID0) || fx_rd(fx, APEX_EFUSE_ID0 + 4));
	CHECK_EQ(fx->chip.cnt.bad_accesses, 0);
	CHECK_EQ(fx->chip.cnt.unknown_accesses, 0);
	fx_teardown(fx);
}

/* Probe: the GCB is in reset, so apex_reset() only quits reset. */
static void test_probe_reset_sequence(void)
{
	struct fixture *fx = fx_setup();
	uint64_t scu3;

	CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB);
	CHECK(fx_quit_reset(fx));
	scu3 = fx_rd(fx, APEX_SCU_3);
	CHECK(!(scu3 & SCU3_CUR_RST_GCB));
	CHECK(!(scu3 & SCU3_CUR_GCB_SRAM_SD));
	CHECK(!(scu3 & SCU3_CUR_GATED_GCB));
	CHECK_EQ(scu3 >> 26 & 3, 2);		/* HW clock gating allowed */
	CHECK(apex_chip_gcb_running(&fx->chip));
	CHECK_EQ(fx->chip.cnt.bad_accesses, 0);
	fx_teardown(fx);
}

/* Open: toggle reset (enter, then quit); close with power save: enter. */
static void test_open_close_reset_sequence(void)
{
	struct fixture *fx = fx_setup();

	CHECK(fx_quit_reset(fx));
	CHECK(fx_enter_reset(fx));
	CHECK(fx->chip.gcb_in_reset);
	CHECK(fx->chip.ram_shut_down);
	CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_GATED_GCB);
	CHECK_EQ(fx_rd(fx, APEX_IDLEGEN_IDLEREGISTER) >> 32 & 1, 0);
	/* The user HIB reset with the GCB: the DMA pause is gone. */
	CHECK_EQ(fx_rd(fx, APEX_USER_HIB_DMA_PAUSE), 0);
	CHECK_EQ(fx->chip.cnt.gcb_resets, 1);
	CHECK(fx_quit_reset(fx));
	CHECK(apex_chip_gcb_running(&fx->chip));
	CHECK(fx_enter_reset(fx));
	CHECK_EQ(fx->chip.cnt.gcb_resets, 2);
	CHECK(!apex_chip_gcb_running(&fx->chip));
	fx_teardown(fx);
}

static void test_fault_reset_stuck(void)
{
	struct fixture *fx = fx_setup();
	int i;

	fx->chip.fault.reset_stuck = true;
	CHECK(!fx_quit_reset(fx));
	for (i = 0; i < 120; i++)
		CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB);
	/* Lifting the fault completes the pending release. */
	fx->chip.fault.reset_stuck = false;
	apex_chip_settle(&fx->chip);
	CHECK(!(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB));
	fx_teardown(fx);
}

static void test_fault_ram_stuck(void)
{
	struct fixture *fx = fx_setup();

	CHECK(fx_quit_reset(fx));
	fx->chip.fault.ram_stuck = true;
	CHECK(fx_enter_reset(fx));	/* shutting down still works */
	CHECK(!fx_quit_reset(fx));	/* RAM never comes back */
	CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_GCB_SRAM_SD);
	/* Without its RAM the GCB cannot leave reset either. */
	CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB);
	CHECK(!apex_chip_gcb_running(&fx->chip));
	fx->chip.fault.ram_stuck = false;
	apex_chip_settle(&fx->chip);
	CHECK(!(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_GCB_SRAM_SD));
	CHECK(!(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB));
	fx_teardown(fx);
}

static void test_fault_dma_pause_stuck(void)
{
	struct fixture *fx = fx_setup();

	CHECK(fx_quit_reset(fx));
	fx->chip.fault.dma_pause_stuck = true;
	CHECK(!fx_enter_reset(fx));
	CHECK_EQ(fx_rd(fx, APEX_USER_HIB_DMA_PAUSED), 0);
	CHECK(!fx->chip.gcb_in_reset);	/* the driver gave up before */
	fx->chip.fault.dma_pause_stuck = false;
	apex_chip_settle(&fx->chip);
	CHECK_EQ(fx_rd(fx, APEX_USER_HIB_DMA_PAUSED), 1);
	fx_teardown(fx);
}

/* APEX_IOCTL_GATE_CLOCK and APEX_IOCTL_PERFORMANCE_EXPECTATION. */
static void test_clock_gate_and_divider(void)
{
	struct fixture *fx = fx_setup();

	CHECK(fx_quit_reset(fx));
	fx_rmw(fx, APEX_SCU_AXI_QUIESCE, 1, 1, 16);
	fx_rmw(fx, APEX_SCU_2, 1, 2, 18);
	CHECK(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_GATED_GCB);
	CHECK(!apex_chip_gcb_running(&fx->chip));
	fx_rmw(fx, APEX_SCU_2, 0, 2, 18);
	fx_rmw(fx, APEX_SCU_AXI_QUIESCE, 0, 1, 16);
	CHECK(!(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_GATED_GCB));
	CHECK(apex_chip_gcb_running(&fx->chip));
	/* LOW: divider 3, 8051 clock fixed (bit 31), mask 4 bits at 28. */
	fx_rmw(fx, APEX_SCU_3, 3 | 1 << 3, 4, 28);
	CHECK_EQ(fx_rd(fx, APEX_SCU_3) >> 28, 0xb);
	CHECK(!(fx_rd(fx, APEX_SCU_3) & SCU3_CUR_RST_GCB));
	fx_teardown(fx);
}

static void test_access_width_errors(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	fx_wr(fx, APEX_HIB_TRANSLATION_ENABLE, 5);
	/* 32-bit write to a 64-bit register: dropped, error, FATAL_ERR. */
	apex_chip_write(&fx->chip, APEX_HIB_TRANSLATION_ENABLE, 4, 7);
	CHECK_EQ(fx_rd(fx, APEX_HIB_TRANSLATION_ENABLE), 5);
	CHECK(fx->chip.hib_error & HIB_ERR_BAD_ACCESS);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	/* 64-bit read of a 32-bit SCU register, and a misaligned read. */
	CHECK_EQ(apex_chip_read(&fx->chip, APEX_SCU_3, 8), 0);
	CHECK_EQ(apex_chip_read(&fx->chip, APEX_HIB_EXTENDED_TABLE + 4, 4), 0);
	CHECK_EQ(fx->chip.cnt.bad_accesses, 3);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 3);
	/* The error status is write-1-to-clear. */
	fx_wr(fx, APEX_USER_HIB_ERROR_STATUS, HIB_ERR_BAD_ACCESS);
	CHECK_EQ(fx_rd(fx, APEX_USER_HIB_ERROR_STATUS), 0);
	/* PBA reads come at any width and read 0. */
	CHECK_EQ(apex_chip_read(&fx->chip, APEX_HIB_MSIX_PBA0, 4), 0);
	CHECK_EQ(fx->chip.cnt.bad_accesses, 3);
	fx_teardown(fx);
}

static void test_unknown_registers(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	fx->nirq = 0;
	CHECK_EQ(apex_chip_read(&fx->chip, 0x44100, 8), 0);
	apex_chip_write(&fx->chip, 0x44100, 8, 0x1234);
	CHECK_EQ(apex_chip_read(&fx->chip, 0x44100, 8), 0);
	CHECK_EQ(apex_chip_read(&fx->chip, 0x12345, 1), 0);
	CHECK_EQ(fx->chip.cnt.unknown_accesses, 4);
	CHECK(fx->chip.unknown_logged[0x44100 / 64] & 1u << (0x44100 / 8 % 8));
	CHECK_EQ(fx->nirq, 0);		/* unknown is not an error */
	CHECK_EQ(fx->chip.hib_error, 0);
	fx_teardown(fx);
}

static void test_intvecctl_routing(void)
{
	struct fixture *fx = fx_setup();
	unsigned int src;

	fx_setup_interrupts(fx);
	for (src = 0; src < APEX_IRQ_SOURCES; src++)
		CHECK_EQ(apex_chip_vector_of(&fx->chip, src), src);
	/* Packed width 7: SC_HOST slots 0..3 routed to vectors 3, 2, 1, 0. */
	fx_wr(fx, APEX_HIB_SC_HOST_INTVECCTL, 3 | 2 << 7 | 1 << 14 | 0 << 21);
	CHECK_EQ(apex_chip_vector_of(&fx->chip, APEX_IRQ_SC_HOST_0 + 1), 2);
	apex_chip_raise(&fx->chip, APEX_IRQ_SC_HOST_0 + 3);
	CHECK_EQ(fx->nirq, 1);
	CHECK_EQ(fx->irq[0], 0);
	CHECK_EQ(fx->chip.cnt.irq_vector[0], 1);
	fx_teardown(fx);
}

static void test_bad_vector_and_lost_irq(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	fx_wr(fx, APEX_HIB_INSTR_QUEUE_INTVECCTL, 100);
	apex_chip_raise(&fx->chip, APEX_IRQ_INSTR_QUEUE);
	CHECK(fx->chip.hib_error & HIB_ERR_BAD_VECTOR);
	CHECK_EQ(fx->nirq, 1);
	CHECK_EQ(fx->irq[0], APEX_IRQ_FATAL_ERR);
	/* Nobody listening (MSI-X off): counted as dropped. */
	fx->irq_listening = false;
	apex_chip_raise(&fx->chip, APEX_IRQ_PARAM_QUEUE);
	CHECK_EQ(fx->chip.cnt.irqs_dropped, 1);
	fx_teardown(fx);
}

static void test_simple_translation(void)
{
	struct fixture *fx = fx_setup();
	const uint64_t page = FX_RAM_IOVA + 0x5000;
	uint64_t dma;

	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 3, page | 1);
	CHECK_EQ(apex_chip_translate(&fx->chip, 3 * 4096 + 0x123, &dma),
		 APEX_FAULT_NONE);
	CHECK_EQ(dma, page + 0x123);
	CHECK_EQ(apex_chip_translate(&fx->chip, 4 * 4096, &dma),
		 APEX_FAULT_SIMPLE_INVALID);
	CHECK_EQ(apex_chip_translate(&fx->chip, 1ull << 25, &dma),
		 APEX_FAULT_ADDR_RANGE);
	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 3);
	CHECK_EQ(apex_chip_translate(&fx->chip, 3 * 4096, &dma),
		 APEX_FAULT_SIMPLE_INDEX);
	/* An entry pointing outside guest RAM translates, DMA faults. */
	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 8192);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 4, 0x7ff00000ull | 1);
	{
		void *p;

		CHECK_EQ(apex_chip_dma_ptr(&fx->chip, 4 * 4096, 8, false, &p),
			 APEX_FAULT_NOT_RAM);
	}
	fx_teardown(fx);
}

static void test_extended_translation(void)
{
	struct fixture *fx = fx_setup();
	const uint64_t table = FX_RAM_IOVA + 0x10000;
	const uint64_t data = FX_RAM_IOVA + 0x20000;
	uint64_t *l1 = fx_ram(fx, table), dma;
	uint64_t addr = APEX_EXTENDED_BIT | 2ull << 21 | 5ull << 12 | 0x10;
	void *p;

	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 4096);
	CHECK_EQ(apex_chip_translate(&fx->chip, addr, &dma),
		 APEX_FAULT_EXT_INVALID);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (4096 + 2), table | 1);
	CHECK_EQ(apex_chip_translate(&fx->chip, addr, &dma),
		 APEX_FAULT_EXT_L1_INVALID);
	l1[5] = data | 1;
	CHECK_EQ(apex_chip_translate(&fx->chip, addr, &dma), APEX_FAULT_NONE);
	CHECK_EQ(dma, data + 0x10);
	CHECK_EQ(apex_chip_dma_ptr(&fx->chip, addr, 16, true, &p),
		 APEX_FAULT_NONE);
	CHECK(p == fx_ram(fx, data + 0x10));
	/* Level-0 index past the table, and bits above 33. */
	CHECK_EQ(apex_chip_translate(&fx->chip,
				     APEX_EXTENDED_BIT | 4096ull << 21, &dma),
		 APEX_FAULT_EXT_INDEX);
	CHECK_EQ(apex_chip_translate(&fx->chip, APEX_EXTENDED_BIT | 1ull << 34,
				     &dma), APEX_FAULT_ADDR_RANGE);
	/* Extended entry whose second-level table is not guest RAM. */
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * (4096 + 2), 0x40000000ull | 1);
	CHECK_EQ(apex_chip_translate(&fx->chip, addr, &dma),
		 APEX_FAULT_EXT_TABLE);
	fx_teardown(fx);
}

static void test_extended_table_register(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 8193);
	CHECK_EQ(fx_rd(fx, APEX_HIB_EXTENDED_TABLE), 8192);
	CHECK(fx->chip.hib_error & HIB_ERR_BAD_ACCESS);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 0);
	CHECK_EQ(fx->chip.simple_entries, 0);
	fx_teardown(fx);
}

static void test_count_valid(void)
{
	struct fixture *fx = fx_setup();
	const uint64_t table = FX_RAM_IOVA + 0x3000;
	uint64_t *l1 = fx_ram(fx, table), s, e, l2;

	fx_wr(fx, APEX_HIB_EXTENDED_TABLE, 100);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 0, FX_RAM_IOVA | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 99, FX_RAM_IOVA | 1);
	fx_wr(fx, APEX_HIB_PAGE_TABLE + 8 * 100, table | 1);
	l1[0] = FX_RAM_IOVA | 1;
	l1[511] = FX_RAM_IOVA | 1;
	apex_chip_count_valid(&fx->chip, &s, &e, &l2);
	CHECK_EQ(s, 2);
	CHECK_EQ(e, 1);
	CHECK_EQ(l2, 2);
	fx_teardown(fx);
}

/* The probe's sensor enable (later gasket-driver). */
static void enable_sensor(struct fixture *fx)
{
	fx_rmw(fx, APEX_OMC0_D0, 1, 1, 7);
	fx_rmw(fx, APEX_OMC0_D8, 7, 3, 0);
	fx_rmw(fx, APEX_OMC0_DC, 1, 1, 0);
}

static void test_thermal_sensor(void)
{
	struct fixture *fx = fx_setup();
	int mc;

	fx_rmw(fx, APEX_OMC0_D0, 1, 1, 7);
	CHECK_EQ(fx_rd(fx, APEX_OMC0_DC) >> 16 & 0x3ff, 0x3ff);
	enable_sensor(fx);
	CHECK(apex_chip_sensor_enabled(&fx->chip));
	for (mc = -39950; mc <= 149800; mc += 250 * 37) {
		apex_chip_set_temp(&fx->chip, mc);
		CHECK_EQ(driver_adc_to_millic(fx_rd(fx, APEX_OMC0_DC) >> 16 &
					      0x3ff), mc);
	}
	/* Off the 0.25 degree grid: the nearest code. */
	apex_chip_set_temp(&fx->chip, 85000);
	CHECK_EQ(driver_adc_to_millic(fx_rd(fx, APEX_OMC0_DC) >> 16 & 0x3ff),
		 85050);
	CHECK_EQ(apex_temp_to_code(1000000), 0);
	CHECK_EQ(apex_temp_to_code(-1000000), 1023);
	fx_teardown(fx);
}

static void test_thermal_warnings(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	enable_sensor(fx);
	/* hw_temp_warn1 = 100 C enabled, hw_temp_warn2 = 110 C enabled. */
	fx_rmw(fx, APEX_OMC0_D4, driver_millic_to_adc(100000), 10, 16);
	fx_rmw(fx, APEX_OMC0_D8, driver_millic_to_adc(110000), 10, 16);
	fx_rmw(fx, APEX_OMC0_D4, 1, 1, 31);
	fx_rmw(fx, APEX_OMC0_D8, 1, 1, 31);
	/* The threshold code itself warns, one code cooler does not. */
	apex_chip_set_temp(&fx->chip, driver_adc_to_millic(
				   driver_millic_to_adc(100000) + 1));
	CHECK_EQ(fx->nirq, 0);
	apex_chip_set_temp(&fx->chip, driver_adc_to_millic(
				   driver_millic_to_adc(100000)));
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_WARNING), 1);
	CHECK(fx_rd(fx, APEX_OMC0_DC) & OMC_DC_WARN_O);
	/* Still hot after the clear: no new interrupt (edge triggered). */
	fx_rmw(fx, APEX_OMC0_DC, 1, 1, 29);
	CHECK(!(fx_rd(fx, APEX_OMC0_DC) & OMC_DC_WARN_O));
	apex_chip_set_temp(&fx->chip, 101050);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_WARNING), 1);
	apex_chip_set_temp(&fx->chip, 90050);
	apex_chip_set_temp(&fx->chip, 100050);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_WARNING), 2);
	/* Tripping again while still latched: no new interrupt. */
	apex_chip_set_temp(&fx->chip, 90050);
	apex_chip_set_temp(&fx->chip, 100050);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_WARNING), 2);
	fx_rmw(fx, APEX_OMC0_DC, 1, 1, 29);
	apex_chip_set_temp(&fx->chip, 110050);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_SHUTDOWN), 1);
	CHECK(fx_rd(fx, APEX_OMC0_DC) & OMC_DC_SD_O);
	/* The sensor enable bit survives read-modify-write of DC. */
	CHECK(fx_rd(fx, APEX_OMC0_DC) & OMC_DC_ENTHMC);
	/* Disabled warnings stay quiet. */
	fx_rmw(fx, APEX_OMC0_D4, 0, 1, 31);
	apex_chip_set_temp(&fx->chip, 50050);
	apex_chip_set_temp(&fx->chip, 105050);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_THERMAL_WARNING), 2);
	fx_teardown(fx);
}

static void test_temperature_ramp(void)
{
	struct fixture *fx = fx_setup();
	struct apex_chip *c = &fx->chip;

	c->now_ms = 5000;
	apex_chip_ramp(c, 80050, 95050, 5000, 100);
	CHECK_EQ(c->temp_mc, 80050);
	CHECK_EQ(apex_chip_next_deadline(c), 5100);
	c->now_ms = 5099;
	apex_chip_tick(c);
	CHECK_EQ(c->temp_mc, 80050);
	c->now_ms = 5100;
	apex_chip_tick(c);
	CHECK_EQ(c->temp_mc, 85050);
	c->now_ms = 5350;		/* a late tick catches up */
	apex_chip_tick(c);
	CHECK_EQ(c->temp_mc, 95050);
	CHECK(!c->ramp.active);
	CHECK_EQ(apex_chip_next_deadline(c), UINT64_MAX);
	/* Downward, and `temp` stops a ramp. */
	apex_chip_ramp(c, 95050, 60050, 10000, 10);
	c->now_ms += 10;
	apex_chip_tick(c);
	CHECK_EQ(c->temp_mc, 85050);
	apex_chip_set_temp(c, 70050);
	CHECK(!c->ramp.active);
	fx_teardown(fx);
}

static void test_gcb_reset_clears_user_hib(void)
{
	struct fixture *fx = fx_setup();

	CHECK(fx_quit_reset(fx));
	fx->chip.hib_error = HIB_ERR_PAGE_FAULT;
	fx->chip.te.completed = 7;
	fx_wr(fx, TE_SRC, 0x1000);
	CHECK(fx_enter_reset(fx));
	CHECK_EQ(fx_rd(fx, APEX_USER_HIB_ERROR_STATUS), 0);
	CHECK_EQ(fx_rd(fx, TE_SRC), 0);
	CHECK_EQ(fx_rd(fx, TE_COMPLETED), 7);
	fx_teardown(fx);
}

static void test_pci_reset_and_fatal(void)
{
	struct fixture *fx = fx_setup();

	fx_setup_interrupts(fx);
	CHECK(fx_quit_reset(fx));
	fx->chip.fault.ram_stuck = true;
	apex_chip_set_temp(&fx->chip, 70050);
	apex_chip_inject_fatal(&fx->chip);
	CHECK_EQ(fx_rd(fx, APEX_SCALAR_CORE_ERROR_STATUS), SCALAR_ERR_FATAL);
	CHECK_EQ(fx_irqs_on(fx, APEX_IRQ_FATAL_ERR), 1);
	apex_chip_reset(&fx->chip);
	CHECK(fx->chip.gcb_in_reset);
	CHECK_EQ(fx_rd(fx, APEX_SCALAR_CORE_ERROR_STATUS), 0);
	CHECK_EQ(fx_rd(fx, APEX_HIB_FATAL_ERR_INTVECCTL), 0);
	CHECK(fx->chip.fault.ram_stuck);
	CHECK_EQ(fx->chip.temp_mc, 70050);
	fx_teardown(fx);
}

const struct unit_test chip_tests[] = {
	{ "chip: power-on register values", test_power_on_values },
	{ "chip: probe quits the power-on GCB reset", test_probe_reset_sequence },
	{ "chip: open/close reset toggle", test_open_close_reset_sequence },
	{ "chip: fault reset_stuck holds the GCB in reset", test_fault_reset_stuck },
	{ "chip: fault ram_stuck keeps RAM shut down", test_fault_ram_stuck },
	{ "chip: fault dma_pause_stuck never reports paused", test_fault_dma_pause_stuck },
	{ "chip: clock gate, AXI quiesce, clock divider", test_clock_gate_and_divider },
	{ "chip: wrong access width is an error with FATAL_ERR", test_access_width_errors },
	{ "chip: unknown registers read zero, logged once", test_unknown_registers },
	{ "chip: INTVECCTL routing, packed width 7", test_intvecctl_routing },
	{ "chip: bad vector and lost interrupts", test_bad_vector_and_lost_irq },
	{ "chip: simple page table walk", test_simple_translation },
	{ "chip: extended page table walk", test_extended_translation },
	{ "chip: EXTENDED_TABLE bounds", test_extended_table_register },
	{ "chip: valid entry counts", test_count_valid },
	{ "chip: thermal sensor codes", test_thermal_sensor },
	{ "chip: thermal warning and shutdown interrupts", test_thermal_warnings },
	{ "chip: temperature ramp", test_temperature_ramp },
	{ "chip: GCB reset clears the user HIB", test_gcb_reset_clears_user_hib },
	{ "chip: PCI reset and injected fatal error", test_pci_reset_and_fatal },
	{ NULL, NULL },
};
