/* SPDX-License-Identifier: GPL-2.0-only */
/* Apex read-only attributes of /sys/class/apex/apex_N. */
#ifndef __APEX_SYSFS_H__
#define __APEX_SYSFS_H__

#include <linux/sysfs.h>

extern const struct attribute_group apex_sysfs_group;

#endif /* __APEX_SYSFS_H__ */
