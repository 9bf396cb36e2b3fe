// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex session: the open, close, reset and status callbacks of a session
 * on /dev/apex_N, and what they do to the chip: the GCB (the TPU core)
 * reset sequence, power save while the node is closed, clock gating and
 * the GCB clock divider. State: apex_dev.power, under power.lock.
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
#include "apex_tunables.h"

/* The chip needs well under a second; 12 s is what the vendor allowed. */
#define APEX_RESET_POLL_US	(10 * USEC_PER_MSEC)
#define APEX_RESET_TIMEOUT_MS	12000U
#define APEX_RESET_TIMEOUT_US	(APEX_RESET_TIMEOUT_MS * USEC_PER_MSEC)

static void apex_session_hw_gating_changed(struct apex_dev *adev,
					   const struct apex_tunable *tun);

APEX_TUNABLE(allow_power_save, APEX_TUN_ALLOW_POWER_SAVE, 1, 0, 1, false, NULL,
	     "Hold the chip in its low-power reset state while /dev/apex_N is closed "
	     "(0 or 1, default 1). Read at probe and at every last close.");
APEX_TUNABLE(allow_sw_clock_gating, APEX_TUN_ALLOW_SW_CLOCK_GATING, 0, 0, 1,
	     false, NULL,
	     "Let APEX_IOCTL_GATE_CLOCK gate the chip clock (0 or 1, default 0; "
	     "ignored with bypass_top_level). Read at every ioctl.");
APEX_TUNABLE(allow_hw_clock_gating, APEX_TUN_ALLOW_HW_CLOCK_GATING, 1, 0, 1,
	     false, apex_session_hw_gating_changed,
	     "Let the chip gate its own clock when idle (0 or 1, default 1). "
	     "Applied at every open; a per-device write applies at once.");
APEX_TUNABLE(bypass_top_level, APEX_TUN_BYPASS_TOP_LEVEL, 0, 0, 1, false, NULL,
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

	lockdep_assert_held(&adev->power.lock);
	if (adev->power.bypass || !adev->power.powered)
		return;
	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_PWR_STATE_OVR,
			 allow ? APEX_PWR_STATE_HW_GATING :
				 APEX_PWR_STATE_NO_GATING);
	dev_dbg(&adev->pdev->dev, "hardware clock gating %s\n",
		allow ? "allowed" : "off");
}

/* allow_hw_clock_gating's changed(): a per-device write applies at once. */
static void apex_session_hw_gating_changed(struct apex_dev *adev,
					   const struct apex_tunable *tun)
{
	mutex_lock(&adev->power.lock);
	if (!adev->unreachable)
		apex_session_apply_hw_gating(adev);
	mutex_unlock(&adev->power.lock);
}

static bool apex_session_gcb_in_reset(struct apex_dev *adev)
{
	return apex_read32(adev, APEX_SCU_CTRL_3) & APEX_SCU3_CUR_RST_GCB;
}

static u64 apex_session_read(struct apex_dev *adev, u32 off, bool wide)
{
	return wide ? apex_read64(adev, off) : apex_read32(adev, off);
}

/*
 * Poll a 32- or 64-bit (@wide) register until a bit of @mask is set
 * (@set) or all of them are clear (!@set); log "@what within N ms" if the
 * chip does not get there in time.
 *
 * A read of all ones is what a chip that has left the bus returns (a
 * surprise removal, a dead link), and no register polled here ever holds
 * that value. Stop at once with -ENODEV then, instead of reading a dead
 * chip for the whole timeout.
 */
static int apex_session_wait(struct apex_dev *adev, u32 off, bool wide,
			     u64 mask, bool set, const char *what)
{
	u64 all_ones = wide ? U64_MAX : U32_MAX;
	u64 val;
	int ret = read_poll_timeout(apex_session_read, val,
				    val == all_ones || !!(val & mask) == set,
				    APEX_RESET_POLL_US, APEX_RESET_TIMEOUT_US,
				    false, adev, off, wide);

	if (ret) {
		dev_err(&adev->pdev->dev, "%s within %u ms\n", what,
			APEX_RESET_TIMEOUT_MS);
	} else if (val == all_ones) {
		dev_err(&adev->pdev->dev,
			"%s: the chip does not answer (reads all ones)\n", what);
		ret = -ENODEV;
	}
	return ret;
}

/* Stop the GCB and power its RAM down: the low-power state. */
static int apex_session_enter_reset(struct apex_dev *adev)
{
	int ret;

	lockdep_assert_held(&adev->power.lock);

	/* Force the GCB idle, then pause its DMA and wait for that. */
	gasket_read_modify_write_64(adev->gdev, APEX_BAR_INDEX,
				    APEX_IDLEGEN_IDLEREGISTER,
				    APEX_IDLEGEN_IDLE_DISABLE, 0);
	apex_write64(adev, APEX_USER_HIB_DMA_PAUSE, 1);
	ret = apex_session_wait(adev, APEX_USER_HIB_DMA_PAUSED, true,
				APEX_DMA_PAUSED, true, "DMA did not pause");
	if (ret)
		return ret;

	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_RST_GCB,
			 APEX_RST_GCB_FORCE_RESET);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
			 APEX_GATED_GCB_FORCE_GATE);
	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_FORCE_RAM_SD,
			 APEX_RAM_SD_FORCE_SHUTDOWN);
	ret = apex_session_wait(adev, APEX_SCU_CTRL_3, false,
				APEX_SCU3_CUR_GCB_SRAM_SD, true,
				"RAM did not shut down");
	if (ret)
		return ret;
	adev->power.powered = false;
	dev_dbg(&adev->pdev->dev, "GCB in reset, RAM shut down (low power)\n");
	return 0;
}

/* The reverse of apex_session_enter_reset(): RAM on, clock on, out of reset. */
static int apex_session_quit_reset(struct apex_dev *adev)
{
	int ret;

	lockdep_assert_held(&adev->power.lock);

	apex_set_field32(adev, APEX_SCU_CTRL_3, APEX_SCU3_RG_FORCE_RAM_SD,
			 APEX_RAM_SD_HW);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
			 APEX_GATED_GCB_HW);
	apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_RST_GCB,
			 APEX_RST_GCB_FORCE_RUN);
	ret = apex_session_wait(adev, APEX_SCU_CTRL_3, false,
				APEX_SCU3_CUR_GCB_SRAM_SD, false,
				"RAM did not power up");
	if (ret)
		return ret;
	ret = apex_session_wait(adev, APEX_SCU_CTRL_3, false,
				APEX_SCU3_CUR_RST_GCB, false,
				"GCB did not leave reset");
	if (ret)
		return ret;

	adev->power.powered = true;
	dev_dbg(&adev->pdev->dev, "GCB out of reset, RAM powered\n");
	apex_session_apply_hw_gating(adev);
	return 0;
}

/*
 * Program the GCB clock divider: the slower of what userspace asked for
 * and what the temperature allows. AXI stays at 250 MHz and the unused
 * 8051 at 250 MHz.
 */
static void apex_session_apply_clocks(struct apex_dev *adev)
{
	u32 div = max(adev->power.perf_clkdiv, adev->power.thermal_clkdiv);

	lockdep_assert_held(&adev->power.lock);
	if (adev->power.bypass || adev->unreachable)
		return;
	gasket_read_modify_write_32(adev->gdev, APEX_BAR_INDEX, APEX_SCU_CTRL_3,
				    APEX_SCU3_CLOCKS,
				    FIELD_PREP(APEX_SCU3_RG_GCB_CLKDIV, div) |
				    APEX_SCU3_RG_8051_CLK_250M);
	dev_dbg(&adev->pdev->dev, "GCB clock divider %u (asked %u, thermal %u)\n",
		div, adev->power.perf_clkdiv, adev->power.thermal_clkdiv);
}

/* Toggle through reset so the GCB re-initialises, as on every open. */
static int apex_session_reset_locked(struct apex_dev *adev)
{
	int ret = 0;

	lockdep_assert_held(&adev->power.lock);
	if (adev->unreachable)
		return -ENODEV;

	dev_dbg(&adev->pdev->dev, "reset%s\n",
		adev->power.bypass ? ": bypass_top_level, registers left alone" : "");
	if (!adev->power.bypass) {
		if (!apex_session_gcb_in_reset(adev))
			ret = apex_session_enter_reset(adev);
		if (!ret)
			ret = apex_session_quit_reset(adev);
		adev->power.reset_failed = ret;
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
	bool conflict = want && adev->power.bypass;

	lockdep_assert_held(&adev->power.lock);
	if (conflict && !adev->power.warned_sw_bypass)
		dev_warn(&adev->pdev->dev,
			 "allow_sw_clock_gating=1 has no effect with bypass_top_level=1, using allow_sw_clock_gating=0\n");
	adev->power.warned_sw_bypass = conflict;
	return want && !conflict;
}

/* bypass_top_level holds from one probe or open to the next. */
static void apex_session_resolve(struct apex_dev *adev)
{
	lockdep_assert_held(&adev->power.lock);
	adev->power.bypass = apex_tunable_get(adev, &apex_tun_bypass_top_level);
	apex_session_sw_gating_allowed(adev);
}

/**
 * apex_session_init() - power state of a new device
 * @adev: the device, zeroed
 */
void apex_session_init(struct apex_dev *adev)
{
	mutex_init(&adev->power.lock);
}

/*
 * Bring the GCB out of reset and wait for the chip to report its page
 * table and MSI-X table initialised.
 */
static int apex_session_bring_up(struct apex_dev *adev)
{
	int ret;

	mutex_lock(&adev->power.lock);
	ret = apex_session_reset_locked(adev);
	mutex_unlock(&adev->power.lock);
	if (ret)
		return ret;

	/* Any bit set: the chip finished initialising the table. */
	ret = apex_session_wait(adev, APEX_HIB_PAGE_TABLE_INIT, true, U64_MAX,
				true, "page table init not done");
	if (ret)
		return ret;
	return apex_session_wait(adev, APEX_HIB_MSIX_TABLE_INIT, true, U64_MAX,
				 true, "MSI-X table init not done");
}

/**
 * apex_session_probe() - first reset of the chip at probe
 * @adev: the device, registers mapped, node not yet created
 *
 * Brings the chip up as gasket_enable_device() needs it.
 *
 * Return: 0, -ETIMEDOUT, or -ENODEV if the chip does not answer.
 */
int apex_session_probe(struct apex_dev *adev)
{
	mutex_lock(&adev->power.lock);
	apex_session_resolve(adev);
	mutex_unlock(&adev->power.lock);
	return apex_session_bring_up(adev);
}

/**
 * apex_session_restore() - the chip lost its state; set it up again
 * @adev: the device, reachable again
 * @in_use: the node is open: the chip runs, at the clock the session
 *	asked for; else it goes back to power save, if allowed
 *
 * Return: 0, -ETIMEDOUT, or -ENODEV if the chip does not answer.
 */
int apex_session_restore(struct apex_dev *adev, bool in_use)
{
	int ret;

	mutex_lock(&adev->power.lock);
	adev->power.powered = false;
	mutex_unlock(&adev->power.lock);
	ret = apex_session_bring_up(adev);
	if (!ret && !in_use)
		apex_session_idle(adev);
	return ret;
}

/* End of probe: nobody has the node open yet, so save power if allowed. */
void apex_session_idle(struct apex_dev *adev)
{
	mutex_lock(&adev->power.lock);
	if (apex_tunable_get(adev, &apex_tun_allow_power_save) &&
	    !adev->power.bypass)
		adev->power.reset_failed = apex_session_enter_reset(adev);
	mutex_unlock(&adev->power.lock);
}

/* device_open_cb: new session, re-initialise the chip. */
int apex_session_open_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret;

	mutex_lock(&adev->power.lock);
	apex_session_resolve(adev);
	/* A new session starts at full speed, whatever the last one asked. */
	adev->power.perf_clkdiv = apex_perf_clkdiv(APEX_PERFORMANCE_MAX);
	mutex_unlock(&adev->power.lock);

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

	mutex_lock(&adev->power.lock);
	if (adev->unreachable)
		goto out;

	hib_error = apex_read64(adev, APEX_USER_HIB_ERROR_STATUS);
	scalar_error = apex_read64(adev, APEX_SCALAR_CORE_ERROR_STATUS);
	if (hib_error || scalar_error)
		dev_warn_ratelimited(&adev->pdev->dev,
				     "error status at close: hib 0x%llx scalar core 0x%llx\n",
				     hib_error, scalar_error);

	if (apex_tunable_get(adev, &apex_tun_allow_power_save) &&
	    !adev->power.bypass) {
		ret = apex_session_enter_reset(adev);
		adev->power.reset_failed = ret;
	}
out:
	mutex_unlock(&adev->power.lock);
	return ret;
}

/* device_reset_cb: GASKET_IOCTL_RESET and the last writer's close. */
int apex_session_reset_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret;

	mutex_lock(&adev->power.lock);
	ret = apex_session_reset_locked(adev);
	mutex_unlock(&adev->power.lock);
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

	mutex_lock(&adev->power.lock);
	if (adev->unreachable || adev->power.reset_failed) {
		status = GASKET_STATUS_DEAD;
	} else if (!adev->power.bypass) {
		scu3 = apex_read32(adev, APEX_SCU_CTRL_3);
		/* All ones: the device no longer answers on the bus. */
		if (scu3 == U32_MAX ||
		    (adev->power.powered &&
		     (scu3 & (APEX_SCU3_CUR_RST_GCB | APEX_SCU3_CUR_GCB_SRAM_SD))))
			status = GASKET_STATUS_DEAD;
	}
	mutex_unlock(&adev->power.lock);
	return status;
}

/*
 * device_quiesce_cb: removal. Pause the DMA and hold the GCB in reset, as
 * at a last close, if the chip still answers; -ENODEV if it reads all
 * ones (gone from the bus), and the framework's bus-master clear is then
 * what stops it.
 */
int apex_session_quiesce_cb(struct gasket_dev *gdev)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	int ret = 0;

	mutex_lock(&adev->power.lock);
	if (adev->unreachable || adev->power.bypass)
		goto out;
	if (apex_read32(adev, APEX_SCU_CTRL_3) == U32_MAX)
		ret = -ENODEV;
	else if (!apex_session_gcb_in_reset(adev))
		ret = apex_session_enter_reset(adev);
out:
	mutex_unlock(&adev->power.lock);
	return ret;
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

	mutex_lock(&adev->power.lock);
	if (adev->unreachable) {
		ret = -ENODEV;
	} else if (adev->power.bypass) {
		apex_session_sw_gating_allowed(adev);	/* just for its warning */
	} else if (gate) {
		if (apex_session_sw_gating_allowed(adev)) {
			apex_set_field32(adev, APEX_SCU_AXI_QUIESCE,
					 APEX_AXI_QUIESCE, 1);
			apex_set_field32(adev, APEX_SCU_CTRL_2,
					 APEX_SCU2_RG_GATED_GCB,
					 APEX_GATED_GCB_FORCE_GATE);
			dev_dbg(&adev->pdev->dev, "GCB clock gated\n");
		}
	} else {
		apex_set_field32(adev, APEX_SCU_CTRL_2, APEX_SCU2_RG_GATED_GCB,
				 APEX_GATED_GCB_HW);
		apex_set_field32(adev, APEX_SCU_AXI_QUIESCE, APEX_AXI_QUIESCE, 0);
		dev_dbg(&adev->pdev->dev, "GCB clock un-gated\n");
	}
	mutex_unlock(&adev->power.lock);
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

	mutex_lock(&adev->power.lock);
	if (adev->unreachable) {
		ret = -ENODEV;
	} else {
		adev->power.perf_clkdiv = apex_perf_clkdiv(level);
		apex_session_apply_clocks(adev);
	}
	mutex_unlock(&adev->power.lock);
	return ret;
}

/**
 * apex_session_throttle() - the clock divider the temperature allows
 * @adev: the device, reachable
 * @level: trip points reached, 0..3: the GCB clock is divided by 2^@level
 *
 * Context: the thermal work, thermal.lock held (taken before power.lock).
 * Return: false if bypass_top_level left the clock alone.
 */
bool apex_session_throttle(struct apex_dev *adev, u32 level)
{
	bool programmed;

	mutex_lock(&adev->power.lock);
	adev->power.thermal_clkdiv = level;
	apex_session_apply_clocks(adev);
	programmed = !adev->power.bypass;
	mutex_unlock(&adev->power.lock);
	return programmed;
}

