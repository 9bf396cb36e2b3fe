/* SPDX-License-Identifier: GPL-2.0-only */
/* Apex temperature sensor, throttling and hwmon. */
#ifndef __APEX_THERMAL_H__
#define __APEX_THERMAL_H__

#include <linux/sysfs.h>

#include "apex_sysfs.h"

struct apex_dev;

int apex_thermal_probe(struct apex_dev *adev);
void apex_thermal_open(struct apex_dev *adev);
void apex_thermal_interrupt(struct apex_dev *adev, int interrupt);
void apex_thermal_tunable_changed(struct apex_dev *adev,
				  enum apex_tunable_id id);
void apex_thermal_remove(struct apex_dev *adev);

extern const struct attribute_group apex_thermal_group;

#endif /* __APEX_THERMAL_H__ */
