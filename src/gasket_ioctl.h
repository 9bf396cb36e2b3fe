/* SPDX-License-Identifier: GPL-2.0-only */
/* Gasket ioctl dispatch: argument checks, permissions, then the work. */
#ifndef __GASKET_IOCTL_H__
#define __GASKET_IOCTL_H__

struct file;

long gasket_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);

#endif /* __GASKET_IOCTL_H__ */
