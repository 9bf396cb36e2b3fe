/* SPDX-License-Identifier: GPL-2.0-only */
/* Apex device ioctls (base 0x7F). */
#ifndef __APEX_IOCTL_H__
#define __APEX_IOCTL_H__

#include <linux/types.h>

struct file;
struct gasket_dev;

long apex_ioctl(struct gasket_dev *gdev, struct file *filp, unsigned int cmd,
		void *arg);

#endif /* __APEX_IOCTL_H__ */
