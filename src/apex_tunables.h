/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex tunables in three layers, as overlayfs does with metacopy:
 *   built-in default -> module parameter -> per-device sysfs override.
 * A tunable is defined with APEX_TUNABLE() in the file that uses it; that
 * gives the module parameter (validated, MODULE_PARM_DESC) and a writable
 * attribute of the same name in /sys/class/apex/apex_N whose value
 * "default" returns the device to the module parameter. The file that
 * declares a tunable also names the callback that applies a per-device
 * write; this layer knows nothing else of its users.
 */
#ifndef __APEX_TUNABLES_H__
#define __APEX_TUNABLES_H__

#include <linux/device.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
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

/* The per-device layer of one device (apex_dev.tunables). */
struct apex_tunables {
	struct mutex lock;	/* Protects: ovr. Innermost apex lock. */
	struct apex_override ovr[APEX_TUN_COUNT];
};

struct apex_tunable {
	struct device_attribute dattr;	/* the per-device attribute */
	enum apex_tunable_id id;	/* index into apex_tunables.ovr */
	int param;			/* module parameter layer */
	int def, min, max;		/* built-in default and valid range */
	bool is_bool;			/* takes and shows Y/N as well as 1/0 */
	/*
	 * Applies a per-device write at once; called with no apex lock
	 * held. NULL: the value is only read when it is used.
	 */
	void (*changed)(struct apex_dev *adev, const struct apex_tunable *tun);
};

extern const struct kernel_param_ops apex_tunable_param_ops;

ssize_t apex_tunable_show(struct device *dev, struct device_attribute *attr,
			  char *buf);
ssize_t apex_tunable_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count);

#define APEX_TUNABLE(_name, _id, _def, _min, _max, _bool, _changed, _desc)    \
	static struct apex_tunable apex_tun_##_name = {                        \
		.dattr = __ATTR(_name, 0644, apex_tunable_show,                \
				apex_tunable_store),                           \
		.id = _id,                                                     \
		.param = _def,                                                 \
		.def = _def,                                                   \
		.min = _min,                                                   \
		.max = _max,                                                   \
		.is_bool = _bool,                                              \
		.changed = _changed,                                           \
	};                                                                     \
	module_param_cb(_name, &apex_tunable_param_ops, &apex_tun_##_name,     \
			0644);                                                 \
	MODULE_PARM_DESC(_name, _desc " Per device: /sys/class/apex/apex_N/"   \
			 #_name " (\"default\" = this parameter).")

void apex_tunables_init(struct apex_tunables *tunables);
int apex_tunable_get(struct apex_dev *adev, const struct apex_tunable *tun);

#endif /* __APEX_TUNABLES_H__ */
