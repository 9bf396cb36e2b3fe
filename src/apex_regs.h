/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex register map: offsets into BAR2 and the fields the driver touches.
 * Offsets are the chip's, as the 2018 staging driver and the later
 * gasket-driver define them; bit layouts of the SCU and OMC blocks follow
 * libedgetpu's CSR helpers.
 */
#ifndef __APEX_REGS_H__
#define __APEX_REGS_H__

#include <linux/bits.h>

#define APEX_BAR_INDEX		2
#define APEX_BAR_BYTES		0x100000

/* HIB (host interface block), kernel side: 64-bit registers. */
#define APEX_HIB_PAGE_TABLE_SIZE		0x46000
#define APEX_HIB_EXTENDED_TABLE			0x46008
#define APEX_HIB_TRANSLATION_ENABLE		0x46010
#define APEX_HIB_INSTR_QUEUE_INTVECCTL		0x46018
#define APEX_HIB_INPUT_ACTV_QUEUE_INTVECCTL	0x46020
#define APEX_HIB_PARAM_QUEUE_INTVECCTL		0x46028
#define APEX_HIB_OUTPUT_ACTV_QUEUE_INTVECCTL	0x46030
#define APEX_HIB_SC_HOST_INTVECCTL		0x46038
#define APEX_HIB_TOP_LEVEL_INTVECCTL		0x46040
#define APEX_HIB_FATAL_ERR_INTVECCTL		0x46048
#define APEX_HIB_DMA_PAUSE			0x46050
#define APEX_HIB_DMA_PAUSE_MASK			0x46058
#define APEX_HIB_STATUS_BLOCK_DELAY		0x46060
#define APEX_HIB_MSIX_PENDING_BIT_ARRAY0	0x46068
#define APEX_HIB_MSIX_PENDING_BIT_ARRAY1	0x46070
#define APEX_HIB_PAGE_TABLE_INIT		0x46078
#define APEX_HIB_MSIX_TABLE_INIT		0x46080
#define APEX_HIB_WIRE_INT_PENDING_BIT_ARRAY	0x48778
#define APEX_HIB_WIRE_INT_MASK_ARRAY		0x48780
#define APEX_HIB_PAGE_TABLE			0x50000

/* The simple/extended table: 8192 entries, bit 63 marks an extended entry. */
#define APEX_PAGE_TABLE_ENTRIES			8192
#define APEX_EXTENDED_SHIFT			63

/* HIB, user side: DMA pause handshake for the reset sequence (64-bit). */
#define APEX_USER_HIB_DMA_PAUSE			0x486d8
#define APEX_USER_HIB_DMA_PAUSED		0x486e0
#define   APEX_DMA_PAUSED			BIT_ULL(0)

/* Idle generator: clearing this bit forces the GCB idle (64-bit). */
#define APEX_IDLEGEN_IDLEREGISTER		0x4a000
#define   APEX_IDLEGEN_IDLE_DISABLE		BIT_ULL(32)

/* Error status, read for the log at last close (64-bit). */
#define APEX_USER_HIB_ERROR_STATUS		0x086f0
#define APEX_SCALAR_CORE_ERROR_STATUS		0x041a0

/* SCU (system control unit, top level): 32-bit registers. */
#define APEX_SCU_BASE				0x1a300
#define APEX_SCU_CTRL_2				(APEX_SCU_BASE + 0x14)
#define   APEX_SCU2_RG_RST_GCB			GENMASK(3, 2)
#define   APEX_SCU2_RG_GATED_GCB		GENMASK(19, 18)
#define APEX_SCU_CTRL_3				(APEX_SCU_BASE + 0x18)
#define   APEX_SCU3_CUR_GATED_GCB		BIT(3)
#define   APEX_SCU3_CUR_RST_GCB			BIT(4)
#define   APEX_SCU3_CUR_GCB_SRAM_SD		BIT(6)
#define   APEX_SCU3_RG_FORCE_RAM_SD		GENMASK(15, 14)
#define   APEX_SCU3_RG_PWR_STATE_OVR		GENMASK(27, 26)
#define   APEX_SCU3_CLOCKS			GENMASK(31, 28)
#define   APEX_SCU3_RG_GCB_CLKDIV		GENMASK(29, 28)
#define   APEX_SCU3_RG_AXI_CLK_125M		BIT(30)
#define   APEX_SCU3_RG_8051_CLK_250M		BIT(31)
#define APEX_SCU_AXI_QUIESCE			(APEX_SCU_BASE + 0x2c)
#define   APEX_AXI_QUIESCE			BIT(16)

/* rg_rst_gcb and rg_force_ram_sd values: force on, force off, HW control. */
#define APEX_RST_GCB_FORCE_RESET		1
#define APEX_RST_GCB_FORCE_RUN			2
#define APEX_RAM_SD_FORCE_SHUTDOWN		3
#define APEX_RAM_SD_HW				0
#define APEX_GATED_GCB_FORCE_GATE		1
#define APEX_GATED_GCB_HW			0
/* rg_pwr_state_ovr: 2 = inactive allowed (HW clock gating), 3 = never. */
#define APEX_PWR_STATE_HW_GATING		2
#define APEX_PWR_STATE_NO_GATING		3

/* OMC thermal sensor (top level): 32-bit registers. */
#define APEX_OMC0_D0				0x1a0d0
#define   APEX_OMC0_D0_THM_CLK_EN		BIT(7)
#define APEX_OMC0_D4				0x1a0d4
#define   APEX_OMC0_D4_THM_WARN1		GENMASK(25, 16)
#define   APEX_OMC0_D4_THM_WARN_EN		BIT(31)
#define APEX_OMC0_D8				0x1a0d8
#define   APEX_OMC0_D8_ENABLE			GENMASK(2, 0)	/* ENBG ENVR ENAD */
#define   APEX_OMC0_D8_THM_WARN2		GENMASK(25, 16)
#define   APEX_OMC0_D8_SD_EN			BIT(31)
#define APEX_OMC0_DC				0x1a0dc
#define   APEX_OMC0_DC_ENTHMC			BIT(0)
#define   APEX_OMC0_DC_DATA			GENMASK(25, 16)
#define   APEX_OMC0_DC_SD_CLEAR			BIT(28)	/* write 1 to clear */
#define   APEX_OMC0_DC_WARN_CLEAR		BIT(29)	/* write 1 to clear */
#define   APEX_OMC0_DC_SD_O			BIT(30)
#define   APEX_OMC0_DC_WARN_O			BIT(31)

/* eFuse words that make up the chip's unique id (32-bit, read-only). */
#define APEX_EFUSE_ID0				0x1a2dc
#define APEX_EFUSE_ID1				0x1a2e0
#define APEX_EFUSE_ID2				0x1a2e4
#define APEX_EFUSE_ID3				0x1a2e8

/* Sensor code <-> milli-degrees Celsius: the vendor's linear fit (25-100 C). */
#define APEX_TEMP_ADC_MAX			1023
#define APEX_TEMP_ADC_ZERO			662
#define APEX_TEMP_MC_PER_CODE			250
#define APEX_TEMP_MC_OFFSET			550

#endif /* __APEX_REGS_H__ */
