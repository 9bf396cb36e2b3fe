/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex tunables in three layers, as overlayfs does with metacopy:
 *   built-in default -> module parameter -> per-device sysfs override.
 * A tunable is defined with APEX_TUNABLE() in the file that uses it; that
 * gives the module parameter (validated, MODULE_PARM_DESC) and a writable
 * attribute of the same name in /sys/class/apex/apex_N whose value
 * "default" returns the device to the module parameter.
 */
#ifndef __APEX_SYSFS_H__
#define __APEX_SYSFS_H__

#include <linux/device.h>
#include <linux/moduleparam.h>
#include <linux/sysfs.h>

struct apex_dev;

enum apex_tunable_id {
	APEX_TUN_ALLOW_POWER_SAVE,
	APEX_TUN_ALLOW_SW_CLOCK_GATING,
	APEX_TUN_ALLOW_HW_CLOCK_GATING,
	APEX_TUN_BYPASS_TOP_LEVEL,
	APEX_TUN_TRIP_POINT0_TEMP,
	APEX_TUN_TRIP_POINT1_TEMP,
	APEX_TUN_TRIP_POINT2_TEMP,
	APEX_TUN_HW_TEMP_WARN1,
	APEX_TUN_HW_TEMP_WARN1_EN,
	APEX_TUN_HW_TEMP_WARN2,
	APEX_TUN_HW_TEMP_WARN2_EN,
	APEX_TUN_TEMP_POLL_INTERVAL,
	APEX_TUN_COUNT
};

/* Per-device layer: set = the device does not follow the module parameter. */
struct apex_override {
	bool set;
	int value;
};

struct apex_tunable {
	struct device_attribute dattr;	/* the per-device attribute */
	enum apex_tunable_id id;	/* index into apex_dev.ovr */
	int param;			/* module parameter layer */
	int def, min, max;		/* built-in default and valid range */
	bool is_bool;			/* takes and shows Y/N as well as 1/0 */
};

extern const struct kernel_param_ops apex_tunable_param_ops;

ssize_t apex_tunable_show(struct device *dev, struct device_attribute *attr,
			  char *buf);
ssize_t apex_tunable_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count);

#define APEX_TUNABLE(_name, _id, _def, _min, _max, _bool, _desc)              \
	static struct apex_tunable apex_tun_##_name = {                        \
		.dattr = __ATTR(_name, 0644, apex_tunable_show,                \
				apex_tunable_store),                           \
		.id = _id,                                                     \
		.param = _def,                                                 \
		.def = _def,                                                   \
		.min = _min,                                                   \
		.max = _max,                                                   \
		.is_bool = _bool,                                              \
	};                                                                     \
	module_param_cb(_name, &apex_tunable_param_ops, &apex_tun_##_name,     \
			0644);                                                 \
	MODULE_PARM_DESC(_name, _desc " Per device: /sys/class/apex/apex_N/"   \
			 #_name " (\"default\" = this parameter).")

int apex_tunable_get(struct apex_dev *adev, const struct apex_tunable *tun);

extern const struct attribute_group apex_sysfs_group;

#endif /* __APEX_SYSFS_H__ */
