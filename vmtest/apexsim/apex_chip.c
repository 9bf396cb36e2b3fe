// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Apex register model: access handlers, the GCB reset and power sequence,
 * the thermal sensor, interrupt routing and the page-table walk.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "apex_chip.h"
#include "log.h"

#define SCU0_RESET_VALUE	0x941u	/* libedgetpu's ScuCtrl0 reset value */
#define OMC_D4_RESET_VALUE	0x1u
#define ERRORS_LOGGED_MAX	100

static uint32_t field32(uint32_t v, uint32_t mask, unsigned int shift)
{
	return (v & mask) >> shift;
}

/* --- power-on and reset ------------------------------------------------ */

static void chip_reset_registers(struct apex_chip *c)
{
	c->scu0 = SCU0_RESET_VALUE;
	c->scu1 = 0;
	c->scu2 = 0;
	c->scu3 = SCU3_RESET_VALUE;
	c->scu4 = 0;
	c->scu5 = 0;
	c->axi_quiesce = 0;
	/* The chip comes out of power-on reset with the GCB held in reset. */
	c->gcb_in_reset = true;
	c->ram_shut_down = false;

	c->omc_d0 = 0;
	c->omc_d4 = OMC_D4_RESET_VALUE;
	c->omc_d8 = 0;
	c->omc_dc = 0;
	c->warn1_level = false;
	c->warn2_level = false;

	c->simple_entries = APEX_PAGE_TABLE_ENTRIES;
	c->translation_enable = 0;
	memset(c->intvecctl, 0, sizeof(c->intvecctl));
	c->hib_dma_pause = 0;
	c->hib_dma_pause_mask = 0;
	c->status_block_delay = 0;
	c->wire_int_mask = 0;
	memset(c->page_table, 0, sizeof(c->page_table));

	c->user_dma_pause = 0;
	c->user_dma_paused = false;
	c->hib_error = 0;
	c->scalar_error = 0;
	c->idlegen = 0;
	te_reset(&c->te);
}

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void apex_chip_init(struct apex_chip *c, struct guest_mem *gmem,
		    uint64_t id_seed)
{
	uint64_t a, b;

	memset(c, 0, sizeof(*c));
	c->gmem = gmem;
	c->temp_mc = APEX_TEMP_DEFAULT_MC;
	a = splitmix64(&id_seed);
	b = splitmix64(&id_seed);
	c->efuse[0] = (uint32_t)a;
	c->efuse[1] = (uint32_t)(a >> 32);
	c->efuse[2] = (uint32_t)b;
	c->efuse[3] = (uint32_t)(b >> 32);
	chip_reset_registers(c);
}

void apex_chip_reset(struct apex_chip *c)
{
	if (c->te.status & TE_STATUS_BUSY)
		log_msg("chip: reset drops the test engine's copy");
	chip_reset_registers(c);
	c->cnt.function_resets++;
	log_msg("chip: device reset, registers at power-on values");
}

void apex_chip_set_bus_master(struct apex_chip *c, bool on)
{
	c->bus_master = on;
}

/* --- errors and interrupts -------------------------------------------- */

void apex_chip_error(struct apex_chip *c, uint64_t hib_bits,
		     const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	c->hib_error |= hib_bits;
	if (c->errors_logged < ERRORS_LOGGED_MAX)
		log_msg("chip: driver error: %s; hib_error=%#" PRIx64
			", raising FATAL_ERR", what, c->hib_error);
	else if (c->errors_logged == ERRORS_LOGGED_MAX)
		log_msg("chip: more driver errors, no longer logged");
	c->errors_logged++;
	apex_chip_raise(c, APEX_IRQ_FATAL_ERR);
}

unsigned int apex_chip_vector_of(const struct apex_chip *c, unsigned int src)
{
	uint64_t reg;
	unsigned int slot = 0;

	if (src < APEX_IRQ_SC_HOST_0) {
		reg = c->intvecctl[src];
	} else if (src < APEX_IRQ_TOP_LEVEL_0) {
		reg = c->intvecctl[4];
		slot = src - APEX_IRQ_SC_HOST_0;
	} else if (src < APEX_IRQ_FATAL_ERR) {
		reg = c->intvecctl[5];
		slot = src - APEX_IRQ_TOP_LEVEL_0;
	} else {
		reg = c->intvecctl[6];
	}
	return (reg >> (slot * APEX_INTVECCTL_PACK_WIDTH)) &
	       APEX_INTVECCTL_VECTOR_MASK;
}

void apex_chip_raise(struct apex_chip *c, unsigned int src)
{
	unsigned int vec;

	if (src >= APEX_IRQ_SOURCES || c->removed)
		return;
	vec = apex_chip_vector_of(c, src);
	if (vec >= APEX_NUM_VECTORS) {
		log_msg("chip: source %u routed to vector %u, which does not exist",
			src, vec);
		c->hib_error |= HIB_ERR_BAD_VECTOR;
		if (src != APEX_IRQ_FATAL_ERR)
			apex_chip_raise(c, APEX_IRQ_FATAL_ERR);
		return;
	}
	c->cnt.irqs_raised++;
	c->cnt.irq_vector[vec]++;
	log_trace("chip: source %u -> vector %u", src, vec);
	if (!c->irq_fn || !c->irq_fn(c->irq_opaque, vec)) {
		c->cnt.irqs_dropped++;
		log_msg("chip: vector %u (source %u) has no eventfd, interrupt lost",
			vec, src);
	}
}

void apex_chip_inject_fatal(struct apex_chip *c)
{
	c->scalar_error |= SCALAR_ERR_FATAL;
	log_msg("chip: injected scalar core fatal error");
	apex_chip_raise(c, APEX_IRQ_FATAL_ERR);
}

/* --- GCB reset and power sequence -------------------------------------- */

static void gcb_enter_reset(struct apex_chip *c)
{
	if (c->gcb_in_reset)
		return;
	if (c->te.status & TE_STATUS_BUSY)
		log_msg("chip: GCB reset drops the test engine's copy");
	c->gcb_in_reset = true;
	c->cnt.gcb_resets++;
	/* The user HIB is part of the GCB: its registers reset with it. */
	c->user_dma_pause = 0;
	c->user_dma_paused = false;
	c->hib_error = 0;
	c->scalar_error = 0;
	te_reset(&c->te);
	log_msg("chip: GCB enters reset");
}

static void gcb_leave_reset(struct apex_chip *c)
{
	if (!c->gcb_in_reset)
		return;
	if (c->fault.reset_stuck) {
		log_msg("chip: GCB reset release requested, held (fault reset_stuck)");
		return;
	}
	if (c->ram_shut_down) {
		log_msg("chip: GCB reset release requested, held: its RAM is shut down");
		return;
	}
	c->gcb_in_reset = false;
	log_msg("chip: GCB leaves reset");
}

static void ram_set_shut_down(struct apex_chip *c, bool down)
{
	if (c->ram_shut_down == down)
		return;
	if (!down && c->fault.ram_stuck) {
		log_msg("chip: RAM power-up requested, held (fault ram_stuck)");
		return;
	}
	c->ram_shut_down = down;
	log_msg("chip: GCB RAM %s", down ? "shut down" : "powered up");
}

static void dma_pause_update(struct apex_chip *c)
{
	bool want = c->user_dma_pause & USER_DMA_PAUSE_BIT;

	if (want && c->fault.dma_pause_stuck) {
		if (!c->user_dma_paused)
			log_msg("chip: DMA pause requested, never completes (fault dma_pause_stuck)");
		return;
	}
	if (want != c->user_dma_paused)
		log_trace("chip: DMA %s", want ? "paused" : "resumed");
	c->user_dma_paused = want;
}

/* Derive reset, RAM and pause status from the requests and the faults. */
void apex_chip_settle(struct apex_chip *c)
{
	uint32_t rst = field32(c->scu2, SCU2_RG_RST_GCB_MASK,
			       SCU2_RG_RST_GCB_SHIFT);
	uint32_t ram = field32(c->scu3, SCU3_RG_FORCE_RAM_SD_MASK,
			       SCU3_RG_FORCE_RAM_SD_SHIFT);

	/* RAM first: the GCB cannot leave reset while its RAM is down. */
	ram_set_shut_down(c, ram == RAM_SD_FORCE_SHUTDOWN);
	/* rg_rst_gcb 0 leaves the GCB to the hardware: it stays as it is. */
	if (rst == RST_GCB_FORCE_RESET)
		gcb_enter_reset(c);
	else if (rst != 0)
		gcb_leave_reset(c);
	dma_pause_update(c);
}

static bool clock_gated(const struct apex_chip *c)
{
	return field32(c->scu2, SCU2_RG_GATED_GCB_MASK,
		       SCU2_RG_GATED_GCB_SHIFT) == GATED_GCB_FORCE_GATE;
}

bool apex_chip_gcb_running(const struct apex_chip *c)
{
	return !c->gcb_in_reset && !c->ram_shut_down && !clock_gated(c) &&
	       !(c->user_dma_pause & USER_DMA_PAUSE_BIT) &&
	       !(c->axi_quiesce & AXI_QUIESCE_BIT);
}

static uint64_t scu3_read(const struct apex_chip *c)
{
	return (c->scu3 & ~SCU3_STATUS_MASK) | SCU3_PCIE_GEN_INFO |
	       (clock_gated(c) ? SCU3_CUR_GATED_GCB : 0) |
	       (c->gcb_in_reset ? SCU3_CUR_RST_GCB : 0) |
	       (c->ram_shut_down ? SCU3_CUR_GCB_SRAM_SD : 0);
}

static void scu2_write(struct apex_chip *c, uint64_t val64)
{
	uint32_t val = (uint32_t)val64;
	uint32_t old = c->scu2;

	c->scu2 = val;
	if ((old ^ val) & SCU2_RG_GATED_GCB_MASK)
		log_msg("chip: rg_gated_gcb=%u, GCB clock %s",
			field32(val, SCU2_RG_GATED_GCB_MASK,
				SCU2_RG_GATED_GCB_SHIFT),
			clock_gated(c) ? "gated" : "running");
	if ((old ^ val) & SCU2_RG_RST_GCB_MASK)
		log_trace("chip: rg_rst_gcb=%u",
			  field32(val, SCU2_RG_RST_GCB_MASK,
				  SCU2_RG_RST_GCB_SHIFT));
	apex_chip_settle(c);
}

static void scu3_write(struct apex_chip *c, uint64_t val64)
{
	uint32_t val = (uint32_t)val64;
	uint32_t old = c->scu3;

	c->scu3 = val & ~SCU3_STATUS_MASK;
	if ((old ^ c->scu3) & SCU3_RG_PWR_STATE_OVR_MASK)
		log_msg("chip: rg_pwr_state_ovr=%u",
			field32(c->scu3, SCU3_RG_PWR_STATE_OVR_MASK,
				SCU3_RG_PWR_STATE_OVR_SHIFT));
	if ((old ^ c->scu3) & SCU3_RG_GCB_CLKDIV_MASK)
		log_msg("chip: rg_gcb_clkdiv=%u",
			field32(c->scu3, SCU3_RG_GCB_CLKDIV_MASK,
				SCU3_RG_GCB_CLKDIV_SHIFT));
	apex_chip_settle(c);
}

static void axi_quiesce_write(struct apex_chip *c, uint64_t val64)
{
	uint32_t val = (uint32_t)val64;

	if ((c->axi_quiesce ^ val) & AXI_QUIESCE_BIT)
		log_msg("chip: AXI %s", val & AXI_QUIESCE_BIT ?
			"quiesced" : "running");
	c->axi_quiesce = val;
}

/* --- thermal sensor ----------------------------------------------------- */

#define TEMP_CODE_ZERO		662
#define TEMP_MC_PER_CODE	250
#define TEMP_MC_OFFSET		550

unsigned int apex_temp_to_code(int32_t mc)
{
	int64_t num = (int64_t)mc - TEMP_MC_OFFSET;
	int64_t steps, code;

	/* Nearest code: the sensor's resolution is 0.25 degrees. */
	if (num >= 0)
		steps = (num + TEMP_MC_PER_CODE / 2) / TEMP_MC_PER_CODE;
	else
		steps = -((-num + TEMP_MC_PER_CODE / 2) / TEMP_MC_PER_CODE);
	code = TEMP_CODE_ZERO - steps;
	if (code < 0)
		code = 0;
	if (code > OMC_CODE_MASK)
		code = OMC_CODE_MASK;
	return (unsigned int)code;
}

int32_t apex_code_to_temp(unsigned int code)
{
	return (TEMP_CODE_ZERO - (int32_t)code) * TEMP_MC_PER_CODE +
	       TEMP_MC_OFFSET;
}

bool apex_chip_sensor_enabled(const struct apex_chip *c)
{
	return (c->omc_d0 & OMC_D0_THM_CLK_EN) &&
	       (c->omc_d8 & OMC_D8_ENABLE_MASK) == OMC_D8_ENABLE_MASK &&
	       (c->omc_dc & OMC_DC_ENTHMC);
}

/*
 * Hotter means a smaller code: a threshold is reached at code <= it. A
 * comparator that trips latches its status bit and interrupts once; it
 * interrupts again only after the latch was cleared and it tripped anew.
 */
static void thermal_update(struct apex_chip *c)
{
	bool on = apex_chip_sensor_enabled(c);
	unsigned int code = apex_temp_to_code(c->temp_mc);
	bool w1 = on && (c->omc_d4 & OMC_D4_THM_WARN_EN) &&
		  code <= field32(c->omc_d4, OMC_CODE_MASK << 16, 16);
	bool w2 = on && (c->omc_d8 & OMC_D8_SD_EN) &&
		  code <= field32(c->omc_d8, OMC_CODE_MASK << 16, 16);

	if (w1 && !c->warn1_level && !(c->omc_dc & OMC_DC_WARN_O)) {
		c->omc_dc |= OMC_DC_WARN_O;
		log_msg("chip: thermal warning at %d mC", c->temp_mc);
		apex_chip_raise(c, APEX_IRQ_THERMAL_WARNING);
	}
	if (w2 && !c->warn2_level && !(c->omc_dc & OMC_DC_SD_O)) {
		c->omc_dc |= OMC_DC_SD_O;
		log_msg("chip: thermal shutdown alarm at %d mC", c->temp_mc);
		apex_chip_raise(c, APEX_IRQ_THERMAL_SHUTDOWN);
	}
	c->warn1_level = w1;
	c->warn2_level = w2;
}

static uint64_t omc_dc_read(const struct apex_chip *c)
{
	unsigned int code = apex_chip_sensor_enabled(c) ?
			    apex_temp_to_code(c->temp_mc) : OMC_CODE_IDLE;

	return (c->omc_dc & (OMC_DC_ENTHMC | OMC_DC_SD_O | OMC_DC_WARN_O)) |
	       (code << OMC_DC_DATA_SHIFT);
}

static void omc_dc_write(struct apex_chip *c, uint64_t val64)
{
	uint32_t val = (uint32_t)val64;

	c->omc_dc = (c->omc_dc & (OMC_DC_SD_O | OMC_DC_WARN_O)) |
		    (val & OMC_DC_ENTHMC);
	if (val & OMC_DC_SD_CLEAR)
		c->omc_dc &= ~OMC_DC_SD_O;
	if (val & OMC_DC_WARN_CLEAR)
		c->omc_dc &= ~OMC_DC_WARN_O;
	thermal_update(c);
}

static void temp_set(struct apex_chip *c, int32_t mc)
{
	c->temp_mc = mc;
	thermal_update(c);
}

void apex_chip_set_temp(struct apex_chip *c, int32_t mc)
{
	c->ramp.active = false;
	temp_set(c, mc);
	log_msg("chip: temperature %d mC", mc);
}

void apex_chip_ramp(struct apex_chip *c, int32_t from, int32_t to,
		    int32_t step_mc, uint32_t interval_ms)
{
	apex_chip_set_temp(c, from);
	if (from == to || step_mc <= 0 || interval_ms == 0)
		return;
	c->ramp.active = true;
	c->ramp.to_mc = to;
	c->ramp.step_mc = to > from ? step_mc : -step_mc;
	c->ramp.interval_ms = interval_ms;
	c->ramp.next_ms = c->now_ms + interval_ms;
	log_msg("chip: temperature ramp %d -> %d mC, %d mC every %u ms",
		from, to, step_mc, interval_ms);
}

static void ramp_step(struct apex_chip *c)
{
	int64_t t = (int64_t)c->temp_mc + c->ramp.step_mc;

	if ((c->ramp.step_mc > 0 && t >= c->ramp.to_mc) ||
	    (c->ramp.step_mc < 0 && t <= c->ramp.to_mc)) {
		t = c->ramp.to_mc;
		c->ramp.active = false;
		log_msg("chip: temperature ramp reached %d mC", c->ramp.to_mc);
	}
	c->ramp.next_ms += c->ramp.interval_ms;
	temp_set(c, (int32_t)t);
}

/* --- register access ---------------------------------------------------- */

unsigned int apex_chip_reg_width(uint32_t off)
{
	return off >= APEX_REG32_START && off < APEX_REG32_END ? 4 : 8;
}

static bool in_range(uint32_t off, uint32_t base, uint32_t bytes)
{
	return off >= base && off - base < bytes;
}

#define PAGE_TABLE_BYTES	(APEX_PAGE_TABLE_ENTRIES * 8u)
#define INTVECCTL_BYTES		(APEX_HIB_INTVECCTL_COUNT * 8u)
#define EFUSE_BYTES		(APEX_EFUSE_WORDS * 4u)

static void extended_table_write(struct apex_chip *c, uint64_t val)
{
	if (val > APEX_PAGE_TABLE_ENTRIES) {
		apex_chip_error(c, HIB_ERR_BAD_ACCESS,
				"EXTENDED_TABLE %" PRIu64 " > %u entries", val,
				APEX_PAGE_TABLE_ENTRIES);
		return;
	}
	if (val != c->simple_entries)
		log_msg("chip: %" PRIu64 " simple page table entries", val);
	c->simple_entries = val;
}

static uint64_t user_dma_paused_read(const struct apex_chip *c)
{
	return c->user_dma_paused;
}

static void omc_store_write(struct apex_chip *c, uint32_t *reg, uint64_t val)
{
	*reg = (uint32_t)val;
	thermal_update(c);
}

static void omc_d0_write(struct apex_chip *c, uint64_t val)
{
	omc_store_write(c, &c->omc_d0, val);
}

static void omc_d4_write(struct apex_chip *c, uint64_t val)
{
	omc_store_write(c, &c->omc_d4, val);
}

static void omc_d8_write(struct apex_chip *c, uint64_t val)
{
	omc_store_write(c, &c->omc_d8, val);
}

static void user_dma_pause_write(struct apex_chip *c, uint64_t val)
{
	c->user_dma_pause = val;
	dma_pause_update(c);
}

static void hib_error_write(struct apex_chip *c, uint64_t val)
{
	c->hib_error &= ~val;
}

static void scalar_error_write(struct apex_chip *c, uint64_t val)
{
	c->scalar_error &= ~val;
}

/*
 * The single registers, one line each. A register is read through READ,
 * else from its FIELD, else as the constant VALUE; written through WRITE,
 * else into its FIELD, else not at all (read-only, the write is ignored).
 */
enum reg_field { FIELD_NONE, FIELD_U32, FIELD_U64 };

struct reg_desc {
	uint32_t off;
	enum reg_field field;
	size_t field_off;		/* offsetof(struct apex_chip, ...) */
	uint64_t value;			/* no READ, no FIELD */
	uint64_t (*read)(const struct apex_chip *c);
	void (*write)(struct apex_chip *c, uint64_t val);
};

/* offsetof(struct apex_chip, F), refused at compile time unless F has BYTES. */
#define FIELD_OFF(f, bytes)						\
	(offsetof(struct apex_chip, f) +				\
	 0 * sizeof(char[sizeof(((struct apex_chip *)0)->f) == (bytes) ? 1 : -1]))
#define REG_U32(o, f, w)						\
	{ .off = (o), .field = FIELD_U32, .field_off = FIELD_OFF(f, 4),	\
	  .write = (w) }
#define REG_U64(o, f, w)						\
	{ .off = (o), .field = FIELD_U64, .field_off = FIELD_OFF(f, 8),	\
	  .write = (w) }
#define REG_FN(o, r, w)		{ .off = (o), .read = (r), .write = (w) }
#define REG_CONST(o, v)		{ .off = (o), .value = (v) }

static const struct reg_desc regs[] = {
	REG_U32(APEX_SCU_0, scu0, NULL),
	REG_U32(APEX_SCU_1, scu1, NULL),
	REG_U32(APEX_SCU_2, scu2, scu2_write),
	REG_FN(APEX_SCU_3, scu3_read, scu3_write),
	REG_U32(APEX_SCU_4, scu4, NULL),
	REG_U32(APEX_SCU_5, scu5, NULL),
	REG_U32(APEX_SCU_AXI_QUIESCE, axi_quiesce, axi_quiesce_write),
	REG_U32(APEX_OMC0_D0, omc_d0, omc_d0_write),
	REG_U32(APEX_OMC0_D4, omc_d4, omc_d4_write),
	REG_U32(APEX_OMC0_D8, omc_d8, omc_d8_write),
	REG_FN(APEX_OMC0_DC, omc_dc_read, omc_dc_write),
	REG_CONST(APEX_HIB_PAGE_TABLE_SIZE, APEX_PAGE_TABLE_ENTRIES),
	REG_U64(APEX_HIB_EXTENDED_TABLE, simple_entries, extended_table_write),
	REG_U64(APEX_HIB_TRANSLATION_ENABLE, translation_enable, NULL),
	REG_U64(APEX_HIB_DMA_PAUSE, hib_dma_pause, NULL),
	REG_U64(APEX_HIB_DMA_PAUSE_MASK, hib_dma_pause_mask, NULL),
	REG_U64(APEX_HIB_STATUS_BLOCK_DELAY, status_block_delay, NULL),
	REG_CONST(APEX_HIB_MSIX_PBA0, 0),
	REG_CONST(APEX_HIB_MSIX_PBA1, 0),
	REG_CONST(APEX_WIRE_INT_PENDING, 0),
	REG_CONST(APEX_HIB_PAGE_TABLE_INIT, 1),
	REG_CONST(APEX_HIB_MSIX_TABLE_INIT, 1),
	REG_U64(APEX_WIRE_INT_MASK, wire_int_mask, NULL),
	REG_U64(APEX_USER_HIB_DMA_PAUSE, user_dma_pause, user_dma_pause_write),
	REG_FN(APEX_USER_HIB_DMA_PAUSED, user_dma_paused_read, NULL),
	REG_U64(APEX_IDLEGEN_IDLEREGISTER, idlegen, NULL),
	REG_U64(APEX_USER_HIB_ERROR_STATUS, hib_error, hib_error_write),
	REG_U64(APEX_SCALAR_CORE_ERROR_STATUS, scalar_error,
		scalar_error_write),
};

static const struct reg_desc *reg_find(uint32_t off)
{
	size_t i;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (regs[i].off == off)
			return &regs[i];
	return NULL;
}

static uint64_t reg_desc_read(const struct apex_chip *c,
			      const struct reg_desc *r)
{
	const char *field = (const char *)c + r->field_off;

	if (r->read)
		return r->read(c);
	if (r->field == FIELD_U32)
		return *(const uint32_t *)field;
	if (r->field == FIELD_U64)
		return *(const uint64_t *)field;
	return r->value;
}

static void reg_desc_write(struct apex_chip *c, const struct reg_desc *r,
			   uint64_t val)
{
	char *field = (char *)c + r->field_off;

	if (r->write)
		r->write(c, val);
	else if (r->field == FIELD_U32)
		*(uint32_t *)field = (uint32_t)val;
	else if (r->field == FIELD_U64)
		*(uint64_t *)field = val;
	else
		log_trace("chip: write to read-only register %#x ignored",
			  r->off);
}

bool apex_chip_peek(const struct apex_chip *c, uint32_t off, uint64_t *val)
{
	const struct reg_desc *r;

	if (in_range(off, APEX_HIB_PAGE_TABLE, PAGE_TABLE_BYTES)) {
		if (off & 7)
			return false;
		*val = c->page_table[(off - APEX_HIB_PAGE_TABLE) / 8];
		return true;
	}
	if (in_range(off, APEX_HIB_INTVECCTL_BASE, INTVECCTL_BYTES)) {
		if (off & 7)
			return false;
		*val = c->intvecctl[(off - APEX_HIB_INTVECCTL_BASE) / 8];
		return true;
	}
	if (in_range(off, APEX_EFUSE_ID0, EFUSE_BYTES)) {
		if (off & 3)
			return false;
		*val = c->efuse[(off - APEX_EFUSE_ID0) / 4];
		return true;
	}
	if (in_range(off, TE_BASE, TE_PAGE_END - TE_BASE))
		return te_peek(&c->te, off, val);

	r = reg_find(off);
	if (!r)
		return false;
	*val = reg_desc_read(c, r);
	return true;
}

/* Write to a known register at its natural width. */
static void reg_write(struct apex_chip *c, uint32_t off, uint64_t val)
{
	const struct reg_desc *r;

	if (in_range(off, APEX_HIB_PAGE_TABLE, PAGE_TABLE_BYTES)) {
		c->page_table[(off - APEX_HIB_PAGE_TABLE) / 8] = val;
		return;
	}
	if (in_range(off, APEX_HIB_INTVECCTL_BASE, INTVECCTL_BYTES)) {
		c->intvecctl[(off - APEX_HIB_INTVECCTL_BASE) / 8] = val;
		return;
	}
	if (in_range(off, TE_BASE, TE_PAGE_END - TE_BASE)) {
		te_write(c, off, val);
		return;
	}

	r = reg_find(off);
	if (r)
		reg_desc_write(c, r, val);
	else
		/* The eFuse words: read-only, the write has no effect. */
		log_trace("chip: write to read-only register %#x ignored", off);
}

enum access_check { ACCESS_OK, ACCESS_UNKNOWN, ACCESS_BAD };

/* A known register must be accessed whole, at its width and alignment. */
static enum access_check access_check(const struct apex_chip *c, uint32_t off,
				      unsigned int size, uint64_t *cur)
{
	unsigned int width = apex_chip_reg_width(off);
	uint32_t base = off & ~(width - 1);

	if (off >= APEX_BAR2_SIZE || !apex_chip_peek(c, base, cur))
		return ACCESS_UNKNOWN;
	if (size != width || base != off)
		return ACCESS_BAD;
	return ACCESS_OK;
}

static void unknown_access(struct apex_chip *c, uint32_t off,
			   unsigned int size, const char *dir)
{
	uint32_t word = (off % APEX_BAR2_SIZE) / 8;

	c->cnt.unknown_accesses++;
	if (c->unknown_logged[word / 8] & (1u << (word % 8)))
		return;
	c->unknown_logged[word / 8] |= 1u << (word % 8);
	log_msg("chip: %s of unknown register %#x (%u bytes): %s", dir, off,
		size, *dir == 'r' ? "reads as zero" : "ignored");
}

static void bad_access(struct apex_chip *c, uint32_t off, unsigned int size,
		       const char *dir)
{
	c->cnt.bad_accesses++;
	apex_chip_error(c, HIB_ERR_BAD_ACCESS,
			"%u-byte %s at %#x, register is %u bytes wide", size,
			dir, off, apex_chip_reg_width(off));
}

uint64_t apex_chip_read(struct apex_chip *c, uint32_t off, unsigned int size)
{
	uint64_t val = 0;

	c->cnt.reg_reads++;
	/* QEMU forwards guest PBA reads of any size; pending bits are its own. */
	if (in_range(off, APEX_HIB_MSIX_PBA0, 16))
		return 0;
	switch (access_check(c, off, size, &val)) {
	case ACCESS_UNKNOWN:
		unknown_access(c, off, size, "read");
		return 0;
	case ACCESS_BAD:
		bad_access(c, off, size, "read");
		return 0;
	case ACCESS_OK:
		break;
	}
	log_trace("chip: read %#x/%u = %#" PRIx64, off, size, val);
	return val;
}

void apex_chip_write(struct apex_chip *c, uint32_t off, unsigned int size,
		     uint64_t val)
{
	uint64_t cur;

	c->cnt.reg_writes++;
	switch (access_check(c, off, size, &cur)) {
	case ACCESS_UNKNOWN:
		unknown_access(c, off, size, "write");
		return;
	case ACCESS_BAD:
		bad_access(c, off, size, "write");
		return;
	case ACCESS_OK:
		break;
	}
	log_trace("chip: write %#x/%u = %#" PRIx64, off, size, val);
	reg_write(c, off, val);
}

/* --- deferred work ------------------------------------------------------ */

void apex_chip_tick(struct apex_chip *c)
{
	while (c->ramp.active && c->now_ms >= c->ramp.next_ms)
		ramp_step(c);
	if (te_ready(c) && c->now_ms >= c->te.due_ms)
		te_run(c);
}

uint64_t apex_chip_next_deadline(const struct apex_chip *c)
{
	uint64_t d = UINT64_MAX;

	if (c->ramp.active)
		d = c->ramp.next_ms;
	if (te_ready(c) && c->te.due_ms < d)
		d = c->te.due_ms;
	return d;
}

/* --- address translation ----------------------------------------------- */

enum apex_fault apex_chip_translate(const struct apex_chip *c,
				    uint64_t dev_addr, uint64_t *dma_addr)
{
	uint64_t entry;

	if (!(dev_addr & APEX_EXTENDED_BIT)) {
		uint64_t idx = dev_addr >> APEX_PAGE_SHIFT;

		if (dev_addr >> APEX_SIMPLE_ADDR_BITS)
			return APEX_FAULT_ADDR_RANGE;
		if (idx >= c->simple_entries)
			return APEX_FAULT_SIMPLE_INDEX;
		entry = c->page_table[idx];
		if (!(entry & APEX_PTE_VALID))
			return APEX_FAULT_SIMPLE_INVALID;
	} else {
		uint64_t addr = dev_addr & ~APEX_EXTENDED_BIT;
		uint64_t slot, table, l1, l1_addr;
		const void *p;

		if (addr >> APEX_EXTENDED_ADDR_BITS)
			return APEX_FAULT_ADDR_RANGE;
		slot = c->simple_entries + (addr >> APEX_EXT_L0_SHIFT);
		if (slot >= APEX_PAGE_TABLE_ENTRIES)
			return APEX_FAULT_EXT_INDEX;
		table = c->page_table[slot];
		if (!(table & APEX_PTE_VALID))
			return APEX_FAULT_EXT_INVALID;
		l1 = (addr >> APEX_EXT_L1_SHIFT) & (APEX_EXT_L1_ENTRIES - 1);
		l1_addr = (table & APEX_PTE_ADDR_MASK) + 8 * l1;
		p = gmem_ptr(c->gmem, l1_addr, 8, false);
		if (!p)
			return gmem_released(c->gmem, l1_addr, 8) ?
			       APEX_FAULT_RELEASED : APEX_FAULT_EXT_TABLE;
		/* Guest and host are both little endian x86. */
		memcpy(&entry, p, sizeof(entry));
		if (!(entry & APEX_PTE_VALID))
			return APEX_FAULT_EXT_L1_INVALID;
	}
	*dma_addr = (entry & APEX_PTE_ADDR_MASK) |
		    (dev_addr & (APEX_PAGE_SIZE - 1));
	return APEX_FAULT_NONE;
}

enum apex_fault apex_chip_dma_ptr(const struct apex_chip *c,
				  uint64_t dev_addr, uint64_t len, bool write,
				  void **ptr)
{
	uint64_t dma;
	enum apex_fault f;

	/* Table walks and data both travel as DMA over PCIe. */
	if (!c->bus_master)
		return APEX_FAULT_NO_BUS_MASTER;
	f = apex_chip_translate(c, dev_addr, &dma);
	if (f != APEX_FAULT_NONE)
		return f;
	*ptr = c->gmem ? gmem_ptr(c->gmem, dma, len, write) : NULL;
	if (*ptr)
		return APEX_FAULT_NONE;
	return c->gmem && gmem_released(c->gmem, dma, len) ?
	       APEX_FAULT_RELEASED : APEX_FAULT_NOT_RAM;
}

const char *apex_fault_name(enum apex_fault f)
{
	switch (f) {
	case APEX_FAULT_NONE:
		return "none";
	case APEX_FAULT_ADDR_RANGE:
		return "device address out of range";
	case APEX_FAULT_SIMPLE_INDEX:
		return "page index beyond the simple entries";
	case APEX_FAULT_SIMPLE_INVALID:
		return "simple entry not valid";
	case APEX_FAULT_EXT_INDEX:
		return "extended index beyond the page table";
	case APEX_FAULT_EXT_INVALID:
		return "extended entry not valid";
	case APEX_FAULT_EXT_TABLE:
		return "second-level table outside guest RAM";
	case APEX_FAULT_EXT_L1_INVALID:
		return "second-level entry not valid";
	case APEX_FAULT_NOT_RAM:
		return "page outside guest RAM";
	case APEX_FAULT_NO_BUS_MASTER:
		return "PCI bus mastering disabled";
	case APEX_FAULT_RELEASED:
		return "late DMA: the guest has unmapped this memory";
	}
	return "?";
}

void apex_chip_count_valid(const struct apex_chip *c, uint64_t *simple,
			   uint64_t *extended, uint64_t *second_level)
{
	uint64_t i, j;

	*simple = 0;
	*extended = 0;
	*second_level = 0;
	for (i = 0; i < APEX_PAGE_TABLE_ENTRIES; i++) {
		uint64_t e = c->page_table[i];
		const uint64_t *t;

		if (!(e & APEX_PTE_VALID))
			continue;
		if (i < c->simple_entries) {
			(*simple)++;
			continue;
		}
		(*extended)++;
		t = c->gmem ? gmem_ptr(c->gmem, e & APEX_PTE_ADDR_MASK,
				       APEX_PAGE_SIZE, false) : NULL;
		for (j = 0; t && j < APEX_EXT_L1_ENTRIES; j++)
			if (t[j] & APEX_PTE_VALID)
				(*second_level)++;
	}
}
