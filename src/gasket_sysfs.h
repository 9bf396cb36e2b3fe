/* SPDX-License-Identifier: GPL-2.0-only */
/* Gasket sysfs attributes of /sys/class/<driver>/<driver>_N. */
#ifndef __GASKET_SYSFS_H__
#define __GASKET_SYSFS_H__

#include <linux/sysfs.h>

extern const struct attribute_group gasket_sysfs_group;

#endif /* __GASKET_SYSFS_H__ */
