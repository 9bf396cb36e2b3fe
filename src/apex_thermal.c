// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex thermal: the chip's temperature sensor, throttling the GCB clock
 * above the trip points, the chip's own warning and shutdown-alarm
 * thresholds, and a hwmon device so sensors(1) shows the temperature.
 */

#include <linux/delay.h>
#include <linux/hwmon.h>
#include <linux/kernel.h>
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include "apex_main.h"
#include "apex_session.h"
#include "apex_thermal.h"
#include "apex_tunables.h"

#define APEX_TRIP_POINTS	3
/* A level is left only this far below its trip point, so it cannot flap. */
#define APEX_THERMAL_HYST_MC	2000
/* How often a masked warning is rechecked when polling is off. */
#define APEX_THERMAL_RECHECK_MS	1000
/* Range a trip point or alarm threshold may be set to, milli-degrees C. */
#define APEX_THRESHOLD_MIN_MC	0
#define APEX_THRESHOLD_MAX_MC	150000

static void apex_thermal_alarms_changed(struct apex_dev *adev,
					const struct apex_tunable *tun);
static void apex_thermal_trips_changed(struct apex_dev *adev,
				       const struct apex_tunable *tun);

APEX_TUNABLE(trip_point0_temp, APEX_TUN_TRIP_POINT0_TEMP, 85000,
	     APEX_THRESHOLD_MIN_MC, APEX_THRESHOLD_MAX_MC, false,
	     apex_thermal_trips_changed,
	     "Above this the GCB clock is halved (milli-degrees C, 0..150000, "
	     "default 85000; trip points must ascend). Read at every check.");
APEX_TUNABLE(trip_point1_temp, APEX_TUN_TRIP_POINT1_TEMP, 90000,
	     APEX_THRESHOLD_MIN_MC, APEX_THRESHOLD_MAX_MC, false,
	     apex_thermal_trips_changed,
	     "Above this the GCB clock runs at a quarter (milli-degrees C, "
	     "0..150000, default 90000). Read at every check.");
APEX_TUNABLE(trip_point2_temp, APEX_TUN_TRIP_POINT2_TEMP, 95000,
	     APEX_THRESHOLD_MIN_MC, APEX_THRESHOLD_MAX_MC, false,
	     apex_thermal_trips_changed,
	     "Above this the GCB clock runs at an eighth (milli-degrees C, "
	     "0..150000, default 95000). Read at every check.");
APEX_TUNABLE(hw_temp_warn1, APEX_TUN_HW_TEMP_WARN1, 100000,
	     APEX_THRESHOLD_MIN_MC, APEX_THRESHOLD_MAX_MC, false,
	     apex_thermal_alarms_changed,
	     "Chip's own warning threshold, raises an interrupt that makes the "
	     "driver re-check at once (milli-degrees C, 0..150000, default "
	     "100000). Programmed at probe and every open.");
APEX_TUNABLE(hw_temp_warn1_en, APEX_TUN_HW_TEMP_WARN1_EN, 0, 0, 1, true,
	     apex_thermal_alarms_changed,
	     "Enable hw_temp_warn1 (bool, default N). Programmed at probe and "
	     "every open.");
APEX_TUNABLE(hw_temp_warn2, APEX_TUN_HW_TEMP_WARN2, 110000,
	     APEX_THRESHOLD_MIN_MC, APEX_THRESHOLD_MAX_MC, false,
	     apex_thermal_alarms_changed,
	     "Chip's shutdown alarm threshold (milli-degrees C, 0..150000, "
	     "default 110000). Programmed at probe and every open.");
APEX_TUNABLE(hw_temp_warn2_en, APEX_TUN_HW_TEMP_WARN2_EN, 0, 0, 1, true,
	     apex_thermal_alarms_changed,
	     "Enable hw_temp_warn2 (bool, default N). Programmed at probe and "
	     "every open.");
APEX_TUNABLE(temp_poll_interval, APEX_TUN_TEMP_POLL_INTERVAL, 5000, 0, 60000,
	     false, apex_thermal_trips_changed,
	     "Temperature check period for throttling (ms, 0..60000, 0 = off, "
	     "default 5000). Read after every check; restarted at every open.");

static int apex_code_to_mc(u32 code)
{
	return ((int)APEX_TEMP_ADC_ZERO - (int)code) * APEX_TEMP_MC_PER_CODE +
	       APEX_TEMP_MC_OFFSET;
}

static u32 apex_mc_to_code(int mc)
{
	int code = (APEX_TEMP_MC_OFFSET - mc) / APEX_TEMP_MC_PER_CODE +
		   APEX_TEMP_ADC_ZERO;

	return clamp(code, 0, APEX_TEMP_ADC_MAX);
}

static int apex_thermal_read_mc(struct apex_dev *adev)
{
	return apex_code_to_mc(FIELD_GET(APEX_OMC0_DC_DATA,
					 apex_read32(adev, APEX_OMC0_DC)));
}

/* The trip points in force; the built-in ones if the set does not ascend. */
static void apex_thermal_trips(struct apex_dev *adev, int trips[APEX_TRIP_POINTS])
{
	static const struct apex_tunable *const tun[APEX_TRIP_POINTS] = {
		&apex_tun_trip_point0_temp,
		&apex_tun_trip_point1_temp,
		&apex_tun_trip_point2_temp,
	};
	bool bad = false;
	int i;

	lockdep_assert_held(&adev->thermal.lock);
	for (i = 0; i < APEX_TRIP_POINTS; i++) {
		trips[i] = apex_tunable_get(adev, tun[i]);
		if (i && trips[i] < trips[i - 1])
			bad = true;
	}
	if (bad && !adev->thermal.warned_trips)
		dev_warn(&adev->pdev->dev,
			 "trip_point0..2_temp %d, %d, %d do not ascend, using %d, %d, %d\n",
			 trips[0], trips[1], trips[2], tun[0]->def, tun[1]->def,
			 tun[2]->def);
	adev->thermal.warned_trips = bad;
	if (bad)
		for (i = 0; i < APEX_TRIP_POINTS; i++)
			trips[i] = tun[i]->def;
}

/* Trip points reached; one already in force is kept down to trip - hyst. */
static u32 apex_thermal_level(const int trips[APEX_TRIP_POINTS], int mc, u32 cur)
{
	u32 level = 0;
	int i;

	for (i = 0; i < APEX_TRIP_POINTS; i++)
		if (mc >= trips[i] - (i < cur ? APEX_THERMAL_HYST_MC : 0))
			level = i + 1;
	return level;
}

/* Program the chip's warning and shutdown-alarm comparators. */
static void apex_thermal_program(struct apex_dev *adev)
{
	u32 warn1 = apex_mc_to_code(apex_tunable_get(adev, &apex_tun_hw_temp_warn1));
	u32 warn2 = apex_mc_to_code(apex_tunable_get(adev, &apex_tun_hw_temp_warn2));
	bool en1 = apex_tunable_get(adev, &apex_tun_hw_temp_warn1_en) &&
		   !adev->thermal.warn1_masked;
	bool en2 = apex_tunable_get(adev, &apex_tun_hw_temp_warn2_en);

	lockdep_assert_held(&adev->thermal.lock);
	gasket_read_modify_write_32(adev->gdev, APEX_BAR_INDEX, APEX_OMC0_D4,
				    APEX_OMC0_D4_THM_WARN1 | APEX_OMC0_D4_THM_WARN_EN,
				    FIELD_PREP(APEX_OMC0_D4_THM_WARN1, warn1) |
				    (en1 ? APEX_OMC0_D4_THM_WARN_EN : 0));
	gasket_read_modify_write_32(adev->gdev, APEX_BAR_INDEX, APEX_OMC0_D8,
				    APEX_OMC0_D8_THM_WARN2 | APEX_OMC0_D8_SD_EN,
				    FIELD_PREP(APEX_OMC0_D8_THM_WARN2, warn2) |
				    (en2 ? APEX_OMC0_D8_SD_EN : 0));
	dev_dbg(&adev->pdev->dev, "alarm codes: warning %#x%s, shutdown %#x%s\n",
		warn1, en1 ? "" : " (off)", warn2, en2 ? "" : " (off)");
}

/*
 * Acknowledge latched alarms. The warning stays masked until the chip is
 * APEX_THERMAL_HYST_MC below it again, or it would fire without pause.
 */
static void apex_thermal_alarms(struct apex_dev *adev, u32 dc, int mc)
{
	struct device *dev = &adev->pdev->dev;
	u32 ack = 0;

	if (dc & APEX_OMC0_DC_WARN_O) {
		dev_warn_ratelimited(dev, "chip temperature warning at %d mC\n", mc);
		ack |= APEX_OMC0_DC_WARN_CLEAR;
		adev->thermal.warn1_masked = true;
		apex_thermal_program(adev);
	} else if (adev->thermal.warn1_masked &&
		   mc < apex_tunable_get(adev, &apex_tun_hw_temp_warn1) -
			APEX_THERMAL_HYST_MC) {
		adev->thermal.warn1_masked = false;
		apex_thermal_program(adev);
	}
	if (dc & APEX_OMC0_DC_SD_O) {
		dev_crit_ratelimited(dev, "chip thermal shutdown alarm at %d mC\n",
				     mc);
		ack |= APEX_OMC0_DC_SD_CLEAR;
	}
	if (ack)
		apex_write32(adev, APEX_OMC0_DC,
			     (dc & ~(APEX_OMC0_DC_WARN_CLEAR |
				     APEX_OMC0_DC_SD_CLEAR)) | ack);
}

static void apex_thermal_work(struct work_struct *work)
{
	struct apex_dev *adev = container_of(to_delayed_work(work),
					     struct apex_dev, thermal.work);
	int trips[APEX_TRIP_POINTS];
	unsigned int next_ms;
	u32 dc, level, old;
	bool poll;
	int mc;

	mutex_lock(&adev->thermal.lock);
	if (adev->unreachable)
		goto out;

	dc = apex_read32(adev, APEX_OMC0_DC);
	/* All ones: the chip fell off the bus; status reports it DEAD. */
	if (dc == U32_MAX)
		goto out;
	mc = apex_code_to_mc(FIELD_GET(APEX_OMC0_DC_DATA, dc));
	apex_thermal_alarms(adev, dc, mc);

	apex_thermal_trips(adev, trips);
	old = adev->thermal.level;
	level = apex_thermal_level(trips, mc, old);
	if (level != old) {
		dev_dbg(&adev->pdev->dev, "%d mC: thermal level %u -> %u\n", mc,
			old, level);
		adev->thermal.level = level;
		if (!apex_session_throttle(adev, level))
			dev_warn(&adev->pdev->dev,
				 "%d mC: thermal level %u, clock left alone (bypass_top_level=1)\n",
				 mc, level);
		else if (level > old)
			dev_warn(&adev->pdev->dev,
				 "%d mC: throttling, GCB clock divided by %u\n",
				 mc, 1U << level);
		else
			dev_info(&adev->pdev->dev,
				 "%d mC: GCB clock divided by %u\n", mc,
				 1U << level);
	}

	next_ms = apex_tunable_get(adev, &apex_tun_temp_poll_interval);
	if (!next_ms && adev->thermal.warn1_masked)
		next_ms = APEX_THERMAL_RECHECK_MS;
	if (next_ms)
		queue_delayed_work(system_power_efficient_wq,
				   &adev->thermal.work, msecs_to_jiffies(next_ms));
out:
	poll = !adev->unreachable;
	mutex_unlock(&adev->thermal.lock);
	/* A slow path: refresh the status MAP/UNMAP check. */
	if (poll)
		gasket_get_status(adev->gdev);
}

/*
 * Check now; the work re-arms itself with the poll interval. The power
 * efficient queue suits periodic polling and, unlike system_wq, is not
 * being renamed away.
 */
static void apex_thermal_kick(struct apex_dev *adev)
{
	mod_delayed_work(system_power_efficient_wq, &adev->thermal.work, 0);
}

static ssize_t temp_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	struct apex_dev *adev = apex_from_device(dev);
	ssize_t ret = -ENODEV;

	mutex_lock(&adev->thermal.lock);
	if (!adev->unreachable)
		ret = sysfs_emit(buf, "%d\n", apex_thermal_read_mc(adev));
	mutex_unlock(&adev->thermal.lock);
	return ret;
}
static DEVICE_ATTR_RO(temp);

static struct attribute *apex_thermal_attrs[] = {
	&dev_attr_temp.attr,
	&apex_tun_trip_point0_temp.dattr.attr,
	&apex_tun_trip_point1_temp.dattr.attr,
	&apex_tun_trip_point2_temp.dattr.attr,
	&apex_tun_hw_temp_warn1.dattr.attr,
	&apex_tun_hw_temp_warn1_en.dattr.attr,
	&apex_tun_hw_temp_warn2.dattr.attr,
	&apex_tun_hw_temp_warn2_en.dattr.attr,
	&apex_tun_temp_poll_interval.dattr.attr,
	NULL
};

const struct attribute_group apex_thermal_group = {
	.attrs = apex_thermal_attrs,
};

/* The warning and alarm tunables' changed(): reprogram, then check at once. */
static void apex_thermal_alarms_changed(struct apex_dev *adev,
					const struct apex_tunable *tun)
{
	mutex_lock(&adev->thermal.lock);
	if (!adev->unreachable) {
		apex_thermal_program(adev);
		apex_thermal_kick(adev);
	}
	mutex_unlock(&adev->thermal.lock);
}

/* Trip points' and temp_poll_interval's changed(): check at once. */
static void apex_thermal_trips_changed(struct apex_dev *adev,
				       const struct apex_tunable *tun)
{
	mutex_lock(&adev->thermal.lock);
	if (!adev->unreachable)
		apex_thermal_kick(adev);
	mutex_unlock(&adev->thermal.lock);
}

/* hwmon: temp1 with the first and last trip point as max and crit. */
static int apex_hwmon_read(struct device *dev, enum hwmon_sensor_types type,
			   u32 attr, int channel, long *val)
{
	struct apex_dev *adev = dev_get_drvdata(dev);
	int trips[APEX_TRIP_POINTS];
	int ret = 0;

	mutex_lock(&adev->thermal.lock);
	if (adev->unreachable) {
		ret = -ENODEV;
		goto out;
	}
	apex_thermal_trips(adev, trips);
	switch (attr) {
	case hwmon_temp_input:
		*val = apex_thermal_read_mc(adev);
		break;
	case hwmon_temp_max:
		*val = trips[0];
		break;
	case hwmon_temp_max_hyst:
		*val = trips[0] - APEX_THERMAL_HYST_MC;
		break;
	case hwmon_temp_max_alarm:
		*val = adev->thermal.level > 0;
		break;
	case hwmon_temp_crit:
		*val = trips[APEX_TRIP_POINTS - 1];
		break;
	case hwmon_temp_crit_alarm:
		*val = adev->thermal.level == APEX_TRIP_POINTS;
		break;
	case hwmon_temp_emergency:
		*val = apex_tunable_get(adev, &apex_tun_hw_temp_warn2);
		break;
	default:
		ret = -EOPNOTSUPP;
		break;
	}
out:
	mutex_unlock(&adev->thermal.lock);
	return ret;
}

static umode_t apex_hwmon_is_visible(const void *data,
				     enum hwmon_sensor_types type, u32 attr,
				     int channel)
{
	return 0444;
}

static const struct hwmon_ops apex_hwmon_ops = {
	.is_visible = apex_hwmon_is_visible,
	.read = apex_hwmon_read,
};

/* Not "* const": the member gained that const only in later kernels. */
static const struct hwmon_channel_info *apex_hwmon_info[] = {
	HWMON_CHANNEL_INFO(temp, HWMON_T_INPUT | HWMON_T_MAX | HWMON_T_MAX_HYST |
			   HWMON_T_MAX_ALARM | HWMON_T_CRIT |
			   HWMON_T_CRIT_ALARM | HWMON_T_EMERGENCY),
	NULL
};

static const struct hwmon_chip_info apex_hwmon_chip_info = {
	.ops = &apex_hwmon_ops,
	.info = apex_hwmon_info,
};

/**
 * apex_thermal_init() - thermal state of a new device
 * @adev: the device, zeroed
 *
 * Before anything can queue the work, so apex_thermal_remove() is always
 * safe.
 */
void apex_thermal_init(struct apex_dev *adev)
{
	mutex_init(&adev->thermal.lock);
	INIT_DELAYED_WORK(&adev->thermal.work, apex_thermal_work);
}

/**
 * apex_thermal_probe() - switch the sensor on and register with hwmon
 * @adev: the device, registers mapped
 *
 * Return: 0 or a negative errno from hwmon.
 */
int apex_thermal_probe(struct apex_dev *adev)
{
	struct device *hwmon;

	apex_set_field32(adev, APEX_OMC0_D0, APEX_OMC0_D0_THM_CLK_EN, 1);
	apex_set_field32(adev, APEX_OMC0_D8, APEX_OMC0_D8_ENABLE,
			 FIELD_MAX(APEX_OMC0_D8_ENABLE));
	/* The controller may start 100 us after bandgap, regulator and ADC. */
	usleep_range(100, 200);
	gasket_read_modify_write_32(adev->gdev, APEX_BAR_INDEX, APEX_OMC0_DC,
				    APEX_OMC0_DC_ENTHMC | APEX_OMC0_DC_WARN_CLEAR |
				    APEX_OMC0_DC_SD_CLEAR, APEX_OMC0_DC_ENTHMC);

	hwmon = devm_hwmon_device_register_with_info(&adev->pdev->dev, "apex",
						     adev, &apex_hwmon_chip_info,
						     NULL);
	if (IS_ERR(hwmon))
		return PTR_ERR(hwmon);
	dev_dbg(&adev->pdev->dev, "temperature sensor on, hwmon registered\n");
	return 0;
}

/**
 * apex_thermal_open() - program the thresholds and (re)start checking
 * @adev: the device
 *
 * Called at the end of probe and at every open, so module parameter
 * changes reach the chip then.
 */
void apex_thermal_open(struct apex_dev *adev)
{
	mutex_lock(&adev->thermal.lock);
	if (!adev->unreachable) {
		apex_thermal_program(adev);
		apex_thermal_kick(adev);
	}
	mutex_unlock(&adev->thermal.lock);
}

/**
 * apex_thermal_interrupt() - a chip interrupt arrived
 * @adev: the device
 * @interrupt: enum apex_interrupt
 *
 * The thermal warning makes the driver check the temperature at once.
 *
 * Context: hard IRQ.
 */
void apex_thermal_interrupt(struct apex_dev *adev, int interrupt)
{
	if (interrupt == APEX_INTERRUPT_TOP_LEVEL_3)
		apex_thermal_kick(adev);
}

/**
 * apex_thermal_remove() - stop checking
 * @adev: the device, already marked unreachable and without interrupts
 */
void apex_thermal_remove(struct apex_dev *adev)
{
	cancel_delayed_work_sync(&adev->thermal.work);
}
