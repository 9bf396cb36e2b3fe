/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex per-device state shared by the apex_*.c files, and the register
 * accessors they use.
 */
#ifndef __APEX_MAIN_H__
#define __APEX_MAIN_H__

#include <linux/bitfield.h>
#include <linux/types.h>

#include "gasket_core.h"
#include "apex_regs.h"
#include "apex_session.h"
#include "apex_thermal.h"
#include "apex_tunables.h"

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

/*
 * One Apex. Each concern keeps its state, and the lock for it, in its own
 * member: power (apex_session.c), thermal (apex_thermal.c) and tunables
 * (apex_tunables.c).
 *
 * Lock order, outermost first:
 *   gasket_dev.mutex (held around the session callbacks)
 *   -> thermal.lock -> power.lock -> tunables.lock
 * The thermal work programs the clock through apex_session_throttle(), so
 * thermal.lock is never taken inside power.lock. A tunable's changed()
 * callback runs with none of them held.
 */
struct apex_dev {
	struct pci_dev *pdev;
	struct gasket_dev *gdev;
	unsigned long events;		/* enum apex_event bits, atomic bitops */
	/*
	 * No register access: the device is being removed, or is offline
	 * for a function reset, error recovery or system sleep. Set under
	 * power.lock and thermal.lock both, so holding either one is enough
	 * to read it.
	 */
	bool unreachable;

	struct apex_power power;	/* reset, power save, clocks */
	struct apex_thermal thermal;	/* sensor, throttling, alarms */
	struct apex_tunables tunables;	/* per-device tunable values */
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
