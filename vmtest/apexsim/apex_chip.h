/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Register model of the Apex (Coral Edge TPU, PCI 1ac1:089a), BAR2 only.
 *
 * Offsets and fields are the chip's, as the gasket/apex driver (the 2018
 * staging driver, the later google/gasket-driver) and libedgetpu's CSR
 * helpers use them.
 * Where the public sources say nothing (error status bit layout, what the
 * chip does with a misprogrammed register) the model makes a documented
 * choice; README.md lists them. Registers in the 0x1A000 block (SCU, OMC,
 * eFuse) are 32 bits wide, all others 64 bits.
 *
 * The model is pure state plus functions: no sockets, no clocks. The owner
 * passes the time in (chip->now_ms), provides guest memory and an interrupt
 * callback, and calls apex_chip_tick() when apex_chip_next_deadline() says.
 */
#ifndef APEXSIM_APEX_CHIP_H
#define APEXSIM_APEX_CHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "guest_mem.h"
#include "test_engine.h"

#define APEX_BAR2_SIZE		0x100000u
#define APEX_NUM_VECTORS	13	/* MSI-X vectors, one per source */

/* Interrupt sources, numbered as gasket's apex_interrupt enum. */
enum apex_irq_source {
	APEX_IRQ_INSTR_QUEUE = 0,
	APEX_IRQ_INPUT_ACTV_QUEUE = 1,
	APEX_IRQ_PARAM_QUEUE = 2,
	APEX_IRQ_OUTPUT_ACTV_QUEUE = 3,
	APEX_IRQ_SC_HOST_0 = 4,		/* 4..7 packed in SC_HOST_INTVECCTL */
	APEX_IRQ_TOP_LEVEL_0 = 8,	/* 8..11 packed in TOP_LEVEL_INTVECCTL */
	APEX_IRQ_FATAL_ERR = 12,
	APEX_IRQ_SOURCES = 13,
};

/* Top-level interrupts as libedgetpu numbers them (top level id 0 and 3). */
#define APEX_IRQ_THERMAL_SHUTDOWN	(APEX_IRQ_TOP_LEVEL_0 + 0)
#define APEX_IRQ_THERMAL_WARNING	(APEX_IRQ_TOP_LEVEL_0 + 3)

/* INTVECCTL: vector number per source; packed registers hold four. */
#define APEX_INTVECCTL_PACK_WIDTH	7
#define APEX_INTVECCTL_VECTOR_MASK	0x7fu

/* --- BAR2 register map ------------------------------------------------- */

/* Error status (64-bit, write 1 to clear). */
#define APEX_SCALAR_CORE_ERROR_STATUS	0x041a0u
#define APEX_USER_HIB_ERROR_STATUS	0x086f0u

/* OMC thermal sensor (32-bit). */
#define APEX_OMC0_D0			0x1a0d0u
#define APEX_OMC0_D4			0x1a0d4u
#define APEX_OMC0_D8			0x1a0d8u
#define APEX_OMC0_DC			0x1a0dcu

/* eFuse words holding the chip's unique id (32-bit, read-only). */
#define APEX_EFUSE_ID0			0x1a2dcu	/* ..ID3 at 0x1a2e8 */
#define APEX_EFUSE_WORDS		4

/* SCU, system control unit (32-bit). */
#define APEX_SCU_BASE			0x1a300u
#define APEX_SCU_0			(APEX_SCU_BASE + 0x0c)
#define APEX_SCU_1			(APEX_SCU_BASE + 0x10)
#define APEX_SCU_2			(APEX_SCU_BASE + 0x14)
#define APEX_SCU_3			(APEX_SCU_BASE + 0x18)
#define APEX_SCU_4			(APEX_SCU_BASE + 0x1c)
#define APEX_SCU_5			(APEX_SCU_BASE + 0x20)
#define APEX_SCU_AXI_QUIESCE		(APEX_SCU_BASE + 0x2c)

/* The 32-bit register block. */
#define APEX_REG32_START		0x1a000u
#define APEX_REG32_END			0x1b000u

/* Test engine page 0x40000 (test_engine.h), then the kernel HIB. */
#define APEX_HIB_PAGE_TABLE_SIZE	0x46000u	/* RO: 8192 */
#define APEX_HIB_EXTENDED_TABLE		0x46008u	/* simple entries */
#define APEX_HIB_TRANSLATION_ENABLE	0x46010u
#define APEX_HIB_INTVECCTL_BASE		0x46018u	/* 7 registers */
#define APEX_HIB_INSTR_QUEUE_INTVECCTL	0x46018u
#define APEX_HIB_SC_HOST_INTVECCTL	0x46038u
#define APEX_HIB_TOP_LEVEL_INTVECCTL	0x46040u
#define APEX_HIB_FATAL_ERR_INTVECCTL	0x46048u
#define APEX_HIB_INTVECCTL_COUNT	7
#define APEX_HIB_DMA_PAUSE		0x46050u
#define APEX_HIB_DMA_PAUSE_MASK		0x46058u
#define APEX_HIB_STATUS_BLOCK_DELAY	0x46060u
#define APEX_HIB_MSIX_PBA0		0x46068u	/* RO 0; QEMU forwards */
#define APEX_HIB_MSIX_PBA1		0x46070u
#define APEX_HIB_PAGE_TABLE_INIT	0x46078u	/* RO: 1 */
#define APEX_HIB_MSIX_TABLE_INIT	0x46080u	/* RO: 1 */
#define APEX_MSIX_TABLE			0x46800u	/* emulated by QEMU */
#define APEX_WIRE_INT_PENDING		0x48778u	/* RO 0 */
#define APEX_WIRE_INT_MASK		0x48780u
#define APEX_USER_HIB_DMA_PAUSE		0x486d8u
#define APEX_USER_HIB_DMA_PAUSED	0x486e0u
#define APEX_IDLEGEN_IDLEREGISTER	0x4a000u
#define APEX_HIB_PAGE_TABLE		0x50000u	/* 8192 x 64-bit */

#define APEX_PAGE_TABLE_ENTRIES		8192u
#define APEX_PAGE_SHIFT			12
#define APEX_PAGE_SIZE			(1u << APEX_PAGE_SHIFT)

/*
 * Device addresses. Simple: [24:12] page table index, [11:0] offset, bits
 * 62..25 zero. Extended (bit 63 set): [33:21] level-0 index counted from the
 * first extended entry, [20:12] index in the 4 KiB second-level table in
 * guest RAM, [11:0] offset, bits 62..34 zero. Entries: address | 1 (valid).
 */
#define APEX_EXTENDED_BIT		(1ull << 63)
#define APEX_SIMPLE_ADDR_BITS		25
#define APEX_EXTENDED_ADDR_BITS		34
#define APEX_EXT_L0_SHIFT		21
#define APEX_EXT_L1_SHIFT		12
#define APEX_EXT_L1_ENTRIES		512
#define APEX_PTE_VALID			1ull
#define APEX_PTE_ADDR_MASK		(~0xfffull)

/* Where a translation or DMA access went wrong. */
enum apex_fault {
	APEX_FAULT_NONE = 0,
	APEX_FAULT_ADDR_RANGE,		/* device address bits out of range */
	APEX_FAULT_SIMPLE_INDEX,	/* page index >= simple entries */
	APEX_FAULT_SIMPLE_INVALID,	/* simple entry without valid bit */
	APEX_FAULT_EXT_INDEX,		/* level-0 index beyond the table */
	APEX_FAULT_EXT_INVALID,		/* extended entry without valid bit */
	APEX_FAULT_EXT_TABLE,		/* second-level table not in guest RAM */
	APEX_FAULT_EXT_L1_INVALID,	/* second-level entry without valid bit */
	APEX_FAULT_NOT_RAM,		/* translated page not in guest RAM */
	APEX_FAULT_NO_BUS_MASTER,	/* PCI bus mastering is off */
	APEX_FAULT_RELEASED,		/* memory the guest has unmapped */
};

/* Injected with the control channel's `fault` command. */
struct apex_faults {
	bool reset_stuck;	/* GCB never leaves reset */
	bool ram_stuck;		/* RAM never comes back from shutdown */
	bool dma_pause_stuck;	/* DMA pause never reports paused */
};

struct apex_counters {
	uint64_t reg_reads;		/* guest BAR2 reads */
	uint64_t reg_writes;		/* guest BAR2 writes */
	uint64_t bad_accesses;		/* wrong width or alignment */
	uint64_t unknown_accesses;	/* registers the model does not know */
	uint64_t irqs_raised;		/* interrupts signalled to a vector */
	uint64_t irqs_dropped;		/* vector had no eventfd */
	uint64_t irq_vector[APEX_NUM_VECTORS];
	uint64_t te_faults;
	uint64_t te_bytes;		/* bytes the test engine wrote */
	uint64_t late_dma;		/* accesses to memory the guest released */
	uint64_t gcb_resets;		/* entries into GCB reset */
	uint64_t function_resets;	/* QEMU's device reset, D3hot -> D0 */
};

/* Delivers MSI-X vector VECTOR; false if nobody listens (no eventfd). */
typedef bool (*apex_irq_fn)(void *opaque, unsigned int vector);

struct apex_chip {
	/* --- SCU ----------------------------------------------------------- */
	uint32_t scu0, scu1, scu4, scu5;	/* stored, no behaviour */

	/* SCU_2: reset requests and clock gates. */
	uint32_t scu2;
#define SCU2_RG_RST_GCB_SHIFT		2	/* [3:2] 1 reset, 2/3 run, 0 HW */
#define SCU2_RG_RST_GCB_MASK		(3u << 2)
#define SCU2_RG_GATED_GCB_SHIFT		18	/* [19:18] 1 gate, else HW/off */
#define SCU2_RG_GATED_GCB_MASK		(3u << 18)
#define RST_GCB_FORCE_RESET		1
#define GATED_GCB_FORCE_GATE		1

	/*
	 * SCU_3: bits 31:12 stored here; bits 11:0 are status, computed from
	 * the fields below when read.
	 */
	uint32_t scu3;
#define SCU3_STATUS_MASK		0x00000fffu
#define SCU3_CUR_GATED_GCB		(1u << 3)	/* RO: GCB clock gated */
#define SCU3_CUR_RST_GCB		(1u << 4)	/* RO: GCB in reset */
#define SCU3_CUR_GCB_SRAM_SD		(1u << 6)	/* RO: RAM shut down */
#define SCU3_PCIE_GEN_INFO		(1u << 10)	/* RO: constant */
#define SCU3_RG_FORCE_RAM_SD_SHIFT	14		/* [15:14] 3 shut down */
#define SCU3_RG_FORCE_RAM_SD_MASK	(3u << 14)
#define SCU3_RG_PWR_STATE_OVR_SHIFT	26		/* [27:26] */
#define SCU3_RG_PWR_STATE_OVR_MASK	(3u << 26)
#define SCU3_RG_GCB_CLKDIV_SHIFT	28		/* [29:28] 0 fastest */
#define SCU3_RG_GCB_CLKDIV_MASK		(3u << 28)
#define SCU3_RG_AXI_CLK_125M		(1u << 30)
#define SCU3_RG_8051_CLK_250M		(1u << 31)
#define SCU3_RESET_VALUE		0x80050000u	/* stored bits */
#define RAM_SD_FORCE_SHUTDOWN		3

	/* SCU_BASE + 0x2C. */
	uint32_t axi_quiesce;
#define AXI_QUIESCE_BIT			(1u << 16)

	bool gcb_in_reset;	/* SCU_3.cur_rst_gcb; set at power-on */
	bool ram_shut_down;	/* SCU_3.cur_gcb_sram_sd */

	/* --- OMC thermal sensor ------------------------------------------- */
	uint32_t omc_d0;
#define OMC_D0_THM_CLK_EN		(1u << 7)
	uint32_t omc_d4;			/* reset value 1 (method_sel) */
#define OMC_D4_THM_WARN1_SHIFT		16	/* [25:16] sensor code */
#define OMC_D4_THM_WARN_EN		(1u << 31)
	uint32_t omc_d8;
#define OMC_D8_ENABLE_MASK		0x7u	/* ENBG ENVR ENAD, all needed */
#define OMC_D8_THM_WARN2_SHIFT		16	/* [25:16] sensor code */
#define OMC_D8_SD_EN			(1u << 31)
	uint32_t omc_dc;			/* only the bits below are kept */
#define OMC_DC_ENTHMC			(1u << 0)
#define OMC_DC_DATA_SHIFT		16	/* [25:16] RO: sensor code */
#define OMC_DC_SD_CLEAR			(1u << 28)	/* W1C sd_o */
#define OMC_DC_WARN_CLEAR		(1u << 29)	/* W1C warn_o */
#define OMC_DC_SD_O			(1u << 30)	/* RO latched */
#define OMC_DC_WARN_O			(1u << 31)	/* RO latched */
#define OMC_CODE_MASK			0x3ffu
#define OMC_CODE_IDLE			0x3ffu	/* sensor off: reset value */

	int32_t temp_mc;	/* die temperature, milli-degrees C */
	bool warn1_level;	/* comparator outputs, for edge detection */
	bool warn2_level;

	uint32_t efuse[APEX_EFUSE_WORDS];

	/* --- kernel HIB ----------------------------------------------------- */
	uint64_t simple_entries;	/* EXTENDED_TABLE; 8192 after reset */
	uint64_t translation_enable;	/* stored; translation always on */
	uint64_t intvecctl[APEX_HIB_INTVECCTL_COUNT];
	uint64_t hib_dma_pause;		/* stored */
	uint64_t hib_dma_pause_mask;	/* stored */
	uint64_t status_block_delay;	/* stored */
	uint64_t wire_int_mask;		/* stored */
	uint64_t page_table[APEX_PAGE_TABLE_ENTRIES];

	/* --- user HIB: reset while the GCB is in reset --------------------- */
	uint64_t user_dma_pause;
#define USER_DMA_PAUSE_BIT		1ull
	bool user_dma_paused;		/* USER_HIB_DMA_PAUSED bit 0 */
	uint64_t hib_error;		/* USER_HIB_ERROR_STATUS, model bits: */
#define HIB_ERR_PAGE_FAULT		(1ull << 0)	/* DMA translation */
#define HIB_ERR_BAD_ACCESS		(1ull << 1)	/* width, value */
#define HIB_ERR_BAD_VECTOR		(1ull << 2)	/* INTVECCTL >= 13 */
#define HIB_ERR_TE_DESCRIPTOR		(1ull << 3)	/* bad TE descriptor */
	uint64_t scalar_error;		/* SCALAR_CORE_ERROR_STATUS */
#define SCALAR_ERR_FATAL		(1ull << 0)	/* `raise fatal` */
	uint64_t idlegen;		/* IDLEGEN_IDLEREGISTER, stored */

	struct te_state te;		/* test engine, 0x40000 */

	/* --- outside the register file -------------------------------------- */
	struct apex_faults fault;
	/* Control `copy-rate`: test-engine KiB/s, 0 = the timing model. */
	uint32_t te_rate_kib_s;
	struct {
		bool active;
		int32_t to_mc;
		int32_t step_mc;	/* signed toward to_mc */
		uint32_t interval_ms;
		uint64_t next_ms;
	} ramp;
	struct apex_counters cnt;
	uint64_t errors_logged;		/* driver errors written to the log */
	bool removed;			/* surprise-removed by `remove` */
	bool bus_master;		/* PCI command register: DMA allowed */
	uint64_t now_ms;		/* set by the owner before each call */

	struct guest_mem *gmem;
	apex_irq_fn irq_fn;
	void *irq_opaque;

	/* Unknown 8-byte words already logged (log each once). */
	uint8_t unknown_logged[APEX_BAR2_SIZE / 8 / 8];
};

/* Power-on state; ID_SEED makes the eFuse unique id. */
void apex_chip_init(struct apex_chip *c, struct guest_mem *gmem,
		    uint64_t id_seed);
/* PCI reset: registers back to power-on values (faults, temp kept). */
void apex_chip_reset(struct apex_chip *c);
/* The PCI command register's bus master bit: whether DMA is allowed. */
void apex_chip_set_bus_master(struct apex_chip *c, bool on);

/* Guest BAR2 access; SIZE is 1, 2, 4 or 8. */
uint64_t apex_chip_read(struct apex_chip *c, uint32_t off, unsigned int size);
void apex_chip_write(struct apex_chip *c, uint32_t off, unsigned int size,
		     uint64_t val);
/* Register value without side effects or counting; false if unknown. */
bool apex_chip_peek(const struct apex_chip *c, uint32_t off, uint64_t *val);
/* Natural width of the register at OFF: 4 or 8. */
unsigned int apex_chip_reg_width(uint32_t off);

/* Deferred work: run what is due at chip->now_ms. */
void apex_chip_tick(struct apex_chip *c);
/* Next time (ms) apex_chip_tick() has work, UINT64_MAX if none. */
uint64_t apex_chip_next_deadline(const struct apex_chip *c);

/* Interrupt source SRC through INTVECCTL to its MSI-X vector. */
void apex_chip_raise(struct apex_chip *c, unsigned int src);
/* The vector INTVECCTL routes SRC to (may be >= 13: misprogrammed). */
unsigned int apex_chip_vector_of(const struct apex_chip *c, unsigned int src);
/* Report a driver error: set HIB error bits, log, raise FATAL_ERR. */
void apex_chip_error(struct apex_chip *c, uint64_t hib_bits,
		     const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Device address -> DMA address through the page tables. */
enum apex_fault apex_chip_translate(const struct apex_chip *c,
				    uint64_t dev_addr, uint64_t *dma_addr);
/* Host pointer for LEN bytes at DEV_ADDR (one page at most). */
enum apex_fault apex_chip_dma_ptr(const struct apex_chip *c,
				  uint64_t dev_addr, uint64_t len, bool write,
				  void **ptr);
const char *apex_fault_name(enum apex_fault f);

/* Valid entries: simple, extended first-level, second-level in RAM. */
void apex_chip_count_valid(const struct apex_chip *c, uint64_t *simple,
			   uint64_t *extended, uint64_t *second_level);

/* The GCB runs (test engine may work): out of reset, clock on, no pause. */
bool apex_chip_gcb_running(const struct apex_chip *c);

/* Thermal: sensor code for a temperature, and back (vendor linear fit). */
unsigned int apex_temp_to_code(int32_t mc);
int32_t apex_code_to_temp(unsigned int code);
bool apex_chip_sensor_enabled(const struct apex_chip *c);
void apex_chip_set_temp(struct apex_chip *c, int32_t mc);
/* FROM now, then STEP_MC toward TO every INTERVAL_MS. */
void apex_chip_ramp(struct apex_chip *c, int32_t from, int32_t to,
		    int32_t step_mc, uint32_t interval_ms);

/* Temperatures the sensor can be set to (`temp`, `ramp`), milli-degrees C. */
#define APEX_SENSOR_MIN_MC	-40000
#define APEX_SENSOR_MAX_MC	150000
#define APEX_TEMP_DEFAULT_MC	40050	/* (662 - 504) * 250 + 550 */

/* Control channel: the scalar core reports a fatal error. */
void apex_chip_inject_fatal(struct apex_chip *c);
/* Re-evaluate status bits after chip->fault changed. */
void apex_chip_settle(struct apex_chip *c);

#endif /* APEXSIM_APEX_CHIP_H */
