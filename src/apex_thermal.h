/* SPDX-License-Identifier: GPL-2.0-only */
/* Apex temperature sensor, throttling and hwmon. */
#ifndef __APEX_THERMAL_H__
#define __APEX_THERMAL_H__

#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct apex_dev;

/* Thermal state of one device (apex_dev.thermal). */
struct apex_thermal {
	struct mutex lock;	/* Protects: the fields below, OMC programming */
	bool warned_trips;	/* trip point order warning given */
	bool warn1_masked;	/* hw_temp_warn1 fired: off until the chip cools */
	u32 level;		/* trip points the chip is throttled for, 0..3 */
	struct delayed_work work;	/* temperature check */
};

void apex_thermal_init(struct apex_dev *adev);
int apex_thermal_probe(struct apex_dev *adev);
void apex_thermal_open(struct apex_dev *adev);
void apex_thermal_interrupt(struct apex_dev *adev, int interrupt);
void apex_thermal_remove(struct apex_dev *adev);

extern const struct attribute_group apex_thermal_group;

#endif /* __APEX_THERMAL_H__ */
