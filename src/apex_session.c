// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex reset and power: the GCB (the TPU core) reset sequence, power save
 * while the node is closed, clock gating and the GCB clock divider.
 */

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/iopoll.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/time64.h>

#include "uapi/apex.h"
#include "apex_main.h"
#include "apex_session.h"
#include "apex_thermal.h"

/* The chip needs well under a second; 12 s is what the vendor allowed. */
#define APEX_RESET_POLL_US	(10 * USEC_PER_MSEC)
#define APEX_RESET_TIMEOUT_MS	12000U
#define APEX_RESET_TIMEOUT_US	(APEX_RESET_TIMEOUT_MS * USEC_PER_MSEC)

APEX_TUNABLE(allow_power_save, APEX_TUN_ALLOW_POWER_SAVE, 1, 0, 1, false,
	     "Hold the chip in its low-power reset state while /dev/apex_N is closed "
	     "(0 or 1, default 1). Read at probe and at every last close.");
APEX_TUNABLE(allow_sw_clock_gating, APEX_TUN_ALLOW_SW_CLOCK_GATING, 0, 0, 1,
	     false,
	     "Let APEX_IOCTL_GATE_CLOCK gate the chip clock (0 or 1, default 0; "
	     "ignored with bypass_top_level). Read at every ioctl.");
APEX_TUNABLE(allow_hw_clock_gating, APEX_TUN_ALLOW_HW_CLOCK_GATING, 1, 0, 1,
	     false,
	     "Let the chip gate its own clock when idle (0 or 1, default 1). "
	     "Applied at every open; a per-device write applies at once.");
APEX_TUNABLE(bypass_top_level, APEX_TUN_BYPASS_TOP_LEVEL, 0, 0, 1, false,
	     "Act as if only the TPU core exists: no reset, power or clock "
	     "programming (0 or 1, default 0). Read at probe and at every open.");

static struct attribute *apex_session_attrs[] = {
	&apex_tun_allow_power_save.dattr.attr,
	&apex_tun_allow_sw_clock_gating.dattr.attr,
	&apex_tun_allow_hw_clock_gating.dattr.attr,
	&apex_tun_bypass_top_level.dattr.attr,
	NULL
};

const struct attribute_group apex_session_group = {
	.attrs = apex_session_attrs,
};

/* LOW..MAX -> GCB clock divider 3..0 (62.5..500 MHz). */
static u32 apex_perf_clkdiv(u32 level)
{
	return APEX_PERFORMANCE_MAX - level;
}

/* Power-state override: whether the chip may gate its clock when idle. */
static void apex_session_apply_hw_gating(struct apex_dev *adev)
{
	bool allow = apex_tunable_get(adev, &apex_tun_allow_hw_clock_gating);

	lockdep_assert_held(&adev->lock);
	if (adev->bypass || !adev->powered)
		return;
	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_PWR_STATE_OVR,
			 allow ? APEX_PWR_STATE_HW_GATING :
				 APEX_PWR_STATE_NO_GATING);
}

/**
 * apex_session_tunable_changed() - a per-device power tunable was written
 * @adev: the device
 * @id: the tunable
 *
 * allow_hw_clock_gating applies at once; the others are read when used.
 *
 * Context: adev->lock held.
 */
void apex_session_tunable_changed(struct apex_dev *adev, enum apex_tunable_id id)
{
	if (id == APEX_TUN_ALLOW_HW_CLOCK_GATING)
		apex_session_apply_hw_gating(adev);
}

static bool apex_session_gcb_in_reset(struct apex_dev *adev)
{
	return apex_read32(adev, APEX_SCU_CTRL_3) & APEX_SCU3_CUR_RST_GCB;
}

static int apex_session_wait32(struct apex_dev *adev, u32 off, u32 mask, u32 want,
			  const char *what)
{
	int ret = gasket_dev_poll_32(adev->gdev, APEX_BAR_INDEX, off, mask, want,
				     APEX_RESET_POLL_US, APEX_RESET_TIMEOUT_US);

	if (ret)
		dev_err(&adev->pdev->dev, "%s within %u ms\n", what,
			APEX_RESET_TIMEOUT_MS);
	return ret;
}

/* Stop the GCB and power its RAM down: the low-power state. */
static int apex_session_enter_reset(struct apex_dev *adev)
{
	int ret;

	lockdep_assert_held(&adev->lock);

	/* Force the GCB idle, then pause its DMA and wait for that. */
	gasket_read_modify_write_64(adev->gdev, APEX_BAR_INDEX,
				    APEX_IDLEGEN_IDLEREGISTER,
				    APEX_IDLEGEN_IDLE_DISABLE, 0);
	apex_write64(adev, APEX_USER_HIB_DMA_PAUSE, 1);
	ret = gasket_dev_poll_64(adev->gdev, APEX_BAR_INDEX,
				 APEX_USER_HIB_DMA_PAUSED, APEX_DMA_PAUSED,
				 APEX_DMA_PAUSED, APEX_RESET_POLL_US,
				 APEX_RESET_TIMEOUT_US);
	if (ret) {
		dev_err(&adev->pdev->dev, "DMA did not pause within %u ms\n",
			APEX_RESET_TIMEOUT_MS);
		return ret;
	}

	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_RST_GCB,
			 APEX_RST_GCB_FORCE_RESET);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
			 APEX_GATED_GCB_FORCE_GATE);
	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_FORCE_RAM_SD,
			 APEX_RAM_SD_FORCE_SHUTDOWN);
	ret = apex_session_wait32(adev, APEX_SCU_CTRL_3, APEX_SCU3_CUR_GCB_SRAM_SD,
			     APEX_SCU3_CUR_GCB_SRAM_SD, "RAM did not shut down");
	if (!ret)
		adev->powered = false;
	return ret;
}

/* The reverse of apex_session_enter_reset(): RAM on, clock on, out of reset. */
static int apex_session_quit_reset(struct apex_dev *adev)
{
	int ret;

	lockdep_assert_held(&adev->lock);

	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_FORCE_RAM_SD,
			 APEX_RAM_SD_HW);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
			 APEX_GATED_GCB_HW);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_RST_GCB,
			 APEX_RST_GCB_FORCE_RUN);
	ret = apex_session_wait32(adev, APEX_SCU_CTRL_3, APEX_SCU3_CUR_GCB_SRAM_SD, 0,
			     "RAM did not power up");
	if (ret)
		return ret;
	ret = apex_session_wait32(adev, APEX_SCU_CTRL_3, APEX_SCU3_CUR_RST_GCB, 0,
			     "GCB did not leave reset");
	if (ret)
		return ret;

	adev->powered = true;
	apex_session_apply_hw_gating(adev);
	return 0;
}

/* Toggle through reset so the GCB re-initialises, as on every open. */
static int apex_session_reset_locked(struct apex_dev *adev)
{
	int ret = 0;

	lockdep_assert_held(&adev->lock);
	if (adev->gone)
		return -ENODEV;

	if (!adev->bypass) {
		if (!apex_session_gcb_in_reset(adev))
			ret = apex_session_enter_reset(adev);
		if (!ret)
			ret = apex_session_quit_reset(adev);
		adev->reset_failed = ret;
		if (ret)
			return ret;
	}

	clear_bit(APEX_EVENT_FATAL, &adev->events);
	apex_session_apply_clocks(adev);
	return 0;
}

/* allow_sw_clock_gating as it applies now, warning once if bypass defeats it. */
static bool apex_session_sw_gating_allowed(struct apex_dev *adev)
{
	bool want = apex_tunable_get(adev, &apex_tun_allow_sw_clock_gating);
	bool conflict = want && adev->bypass;

	lockdep_assert_held(&adev->lock);
	if (conflict && !adev->warned_sw_bypass)
		dev_warn(&adev->pdev->dev,
			 "allow_sw_clock_gating=1 has no effect with bypass_top_level=1, using allow_sw_clock_gating=0\n");
	adev->warned_sw_bypass = conflict;
	return want && !conflict;
}

/* bypass_top_level holds from one probe or open to the next. */
static void apex_session_resolve(struct apex_dev *adev)
{
	lockdep_assert_held(&adev->lock);
	adev->bypass = apex_tunable_get(adev, &apex_tun_bypass_top_level);
	apex_session_sw_gating_allowed(adev);
}

/**
 * apex_session_probe() - first reset of the chip at probe
 * @adev: the device, registers mapped, node not yet created
 *
 * Brings the GCB out of reset and waits for the chip to report its page
 * table and MSI-X table initialised, which gasket_enable_device() needs.
 *
 * Return: 0 or -ETIMEDOUT.
 */
int apex_session_probe(struct apex_dev *adev)
{
	struct device *dev = &adev->pdev->dev;
	u64 pt, msix;
	int ret;

	mutex_lock(&adev->lock);
	apex_session_resolve(adev);
	ret = apex_session_reset_locked(adev);
	mutex_unlock(&adev->lock);
	if (ret)
		return ret;

	ret = read_poll_timeout(apex_read64, pt, pt, APEX_RESET_POLL_US,
				APEX_RESET_TIMEOUT_US, false, adev,
				APEX_HIB_PAGE_TABLE_INIT);
	if (ret) {
		dev_err(dev, "page table init not done within %u ms\n",
			APEX_RESET_TIMEOUT_MS);
		return ret;
	}
	ret = read_poll_timeout(apex_read64, msix, msix, APEX_RESET_POLL_US,
				APEX_RESET_TIMEOUT_US, false, adev,
				APEX_HIB_MSIX_TABLE_INIT);
	if (ret)
		dev_err(dev, "MSI-X table init not done within %u ms\n",
			APEX_RESET_TIMEOUT_MS);
	return ret;
}

/* End of probe: nobody has the node open yet, so save power if allowed. */
void apex_session_idle(struct apex_dev *adev)
{
	mutex_lock(&adev->lock);
	if (apex_tunable_get(adev, &apex_tun_allow_power_save) && !adev->bypass)
		adev->reset_failed = apex_session_enter_reset(adev);
	mutex_unlock(&adev->lock);
}

/* device_open_cb: new session, re-initialise the chip. */
int apex_session_open_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret;

	mutex_lock(&adev->lock);
	apex_session_resolve(adev);
	/* A new session starts at full speed, whatever the last one asked. */
	adev->perf_clkdiv = apex_perf_clkdiv(APEX_PERFORMANCE_MAX);
	mutex_unlock(&adev->lock);

	ret = gasket_reset_locked(gdev);
	if (ret)
		return ret;
	apex_thermal_open(adev);
	return 0;
}

/* device_close_cb: log what the chip reports, then save power if allowed. */
int apex_session_close_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	u64 hib_error, scalar_error;
	int ret = 0;

	mutex_lock(&adev->lock);
	if (adev->gone)
		goto out;

	hib_error = apex_read64(adev, APEX_USER_HIB_ERROR_STATUS);
	scalar_error = apex_read64(adev, APEX_SCALAR_CORE_ERROR_STATUS);
	if (hib_error || scalar_error)
		dev_warn_ratelimited(&adev->pdev->dev,
				     "error status at close: hib 0x%llx scalar core 0x%llx\n",
				     hib_error, scalar_error);

	if (apex_tunable_get(adev, &apex_tun_allow_power_save) && !adev->bypass) {
		ret = apex_session_enter_reset(adev);
		adev->reset_failed = ret;
	}
out:
	mutex_unlock(&adev->lock);
	return ret;
}

/* device_reset_cb: GASKET_IOCTL_RESET and the last writer's close. */
int apex_session_reset_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret;

	mutex_lock(&adev->lock);
	ret = apex_session_reset_locked(adev);
	mutex_unlock(&adev->lock);
	return ret;
}

/*
 * device_status_cb: DEAD after a fatal error interrupt or a failed reset
 * (until the next good reset), or when the chip says the GCB is down
 * although the driver powered it. A chip in power save is ALIVE.
 */
int apex_session_status_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int status = GASKET_STATUS_ALIVE;
	u32 scu3;

	if (test_bit(APEX_EVENT_FATAL, &adev->events))
		return GASKET_STATUS_DEAD;

	mutex_lock(&adev->lock);
	if (adev->gone || adev->reset_failed) {
		status = GASKET_STATUS_DEAD;
	} else if (!adev->bypass) {
		scu3 = apex_read32(adev, APEX_SCU_CTRL_3);
		/* All ones: the device no longer answers on the bus. */
		if (scu3 == U32_MAX ||
		    (adev->powered &&
		     (scu3 & (APEX_SCU3_CUR_RST_GCB | APEX_SCU3_CUR_GCB_SRAM_SD))))
			status = GASKET_STATUS_DEAD;
	}
	mutex_unlock(&adev->lock);
	return status;
}

/**
 * apex_session_gate_clock() - APEX_IOCTL_GATE_CLOCK
 * @adev: the device
 * @gate: true to gate the GCB clock, false to un-gate it
 *
 * Gating needs allow_sw_clock_gating; without it the request is ignored,
 * as it always was. Un-gating is always done, so turning the parameter
 * off can never leave the clock stopped.
 *
 * Return: 0, or -ENODEV once the device is being removed.
 */
int apex_session_gate_clock(struct apex_dev *adev, bool gate)
{
	int ret = 0;

	mutex_lock(&adev->lock);
	if (adev->gone) {
		ret = -ENODEV;
	} else if (adev->bypass) {
		apex_session_sw_gating_allowed(adev);	/* just for its warning */
	} else if (gate) {
		if (apex_session_sw_gating_allowed(adev)) {
			apex_set_field32(adev, APEX_SCU_AXI_QUIESCE,
					 APEX_AXI_QUIESCE, 1);
			apex_set_field32(adev, APEX_SCU_CTRL_2,
					 APEX_SCU2_RG_GATED_GCB,
					 APEX_GATED_GCB_FORCE_GATE);
		}
	} else {
		apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
				 APEX_GATED_GCB_HW);
		apex_set_field32(adev, APEX_SCU_AXI_QUIESCE, APEX_AXI_QUIESCE, 0);
	}
	mutex_unlock(&adev->lock);
	return ret;
}

/**
 * apex_session_set_performance() - APEX_IOCTL_PERFORMANCE_EXPECTATION
 * @adev: the device
 * @level: enum apex_performance_expectation, already range checked
 *
 * Return: 0, or -ENODEV once the device is being removed.
 */
int apex_session_set_performance(struct apex_dev *adev, u32 level)
{
	int ret = 0;

	mutex_lock(&adev->lock);
	if (adev->gone) {
		ret = -ENODEV;
	} else {
		adev->perf_clkdiv = apex_perf_clkdiv(level);
		apex_session_apply_clocks(adev);
	}
	mutex_unlock(&adev->lock);
	return ret;
}

/**
 * apex_session_apply_clocks() - program the GCB clock divider
 * @adev: the device
 *
 * The divider is the slower of what userspace asked for and what the
 * temperature allows. AXI stays at 250 MHz and the unused 8051 at 250 MHz.
 *
 * Context: adev->lock held.
 */
void apex_session_apply_clocks(struct apex_dev *adev)
{
	u32 div = max(adev->perf_clkdiv, adev->thermal_level);

	lockdep_assert_held(&adev->lock);
	if (adev->bypass || adev->gone)
		return;
	gasket_read_modify_write_32(adev->gdev, APEX_BAR_INDEX, APEX_SCU_CTRL_3,
				    APEX_SCU3_CLOCKS,
				    FIELD_PREP(APEX_SCU3_RG_GCB_CLKDIV, div) |
				    APEX_SCU3_RG_8051_CLK_250M);
}
