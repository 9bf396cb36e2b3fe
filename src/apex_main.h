/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex per-device state shared by the apex_*.c files, and the register
 * accessors they use.
 */
#ifndef __APEX_MAIN_H__
#define __APEX_MAIN_H__

#include <linux/bitfield.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "gasket_core.h"
#include "apex_regs.h"
#include "apex_sysfs.h"

/* Interrupt sources, also their MSI-X vectors; the framework needs them dense. */
enum apex_interrupt {
	APEX_INTERRUPT_INSTR_QUEUE = 0,
	APEX_INTERRUPT_INPUT_ACTV_QUEUE = 1,
	APEX_INTERRUPT_PARAM_QUEUE = 2,
	APEX_INTERRUPT_OUTPUT_ACTV_QUEUE = 3,
	APEX_INTERRUPT_SC_HOST_0 = 4,
	APEX_INTERRUPT_SC_HOST_1 = 5,
	APEX_INTERRUPT_SC_HOST_2 = 6,
	APEX_INTERRUPT_SC_HOST_3 = 7,
	APEX_INTERRUPT_TOP_LEVEL_0 = 8,	/* thermal shutdown alarm */
	APEX_INTERRUPT_TOP_LEVEL_1 = 9,	/* PCIe error */
	APEX_INTERRUPT_TOP_LEVEL_2 = 10,	/* memory BIST */
	APEX_INTERRUPT_TOP_LEVEL_3 = 11,	/* thermal warning */
	APEX_INTERRUPT_FATAL_ERR = 12,
	APEX_INTERRUPT_COUNT = 13,
};

/* Bits of apex_dev.events, set from interrupt context. */
enum apex_event {
	APEX_EVENT_FATAL,	/* FATAL_ERR raised since the last good reset */
};

struct apex_dev {
	struct pci_dev *pdev;
	struct gasket_dev *gdev;
	unsigned long events;		/* enum apex_event bits, atomic bitops */

	struct mutex lock;	/* Protects: the fields below, SCU and OMC programming */
	bool gone;		/* being removed: no more register access */
	bool powered;		/* the last reset sequence left the GCB running */
	bool reset_failed;	/* the last reset sequence timed out */
	bool bypass;		/* bypass_top_level as resolved at probe or open */
	bool warned_sw_bypass;	/* sw clock gating vs bypass warning given */
	bool warned_trips;	/* trip point order warning given */
	bool warn1_masked;	/* hw_temp_warn1 fired: off until the chip cools */
	u32 perf_clkdiv;	/* GCB clock divider userspace asked for */
	u32 thermal_level;	/* trip points the chip is throttled for, 0..3 */
	struct apex_override ovr[APEX_TUN_COUNT];	/* per-device layer */

	struct delayed_work thermal_work;	/* temperature check */
};

static inline u32 apex_read32(struct apex_dev *adev, u32 off)
{
	return gasket_dev_read_32(adev->gdev, APEX_BAR_INDEX, off);
}

static inline void apex_write32(struct apex_dev *adev, u32 off, u32 val)
{
	gasket_dev_write_32(adev->gdev, val, APEX_BAR_INDEX, off);
}

static inline u64 apex_read64(struct apex_dev *adev, u32 off)
{
	return gasket_dev_read_64(adev->gdev, APEX_BAR_INDEX, off);
}

static inline void apex_write64(struct apex_dev *adev, u32 off, u64 val)
{
	gasket_dev_write_64(adev->gdev, val, APEX_BAR_INDEX, off);
}

/* Set field @mask of a 32-bit register to @val (unshifted). */
#define apex_set_field32(adev, off, mask, val)                                 \
	gasket_read_modify_write_32((adev)->gdev, APEX_BAR_INDEX, off, mask,    \
				    FIELD_PREP(mask, val))

/* The apex device behind a class device (/sys/class/apex/apex_N). */
static inline struct apex_dev *apex_from_device(struct device *dev)
{
	return gasket_dev_get_drvdata(gasket_dev_from_device(dev));
}

static inline struct apex_dev *apex_from_gasket(struct gasket_dev *gdev)
{
	return gasket_dev_get_drvdata(gdev);
}

#endif /* __APEX_MAIN_H__ */
