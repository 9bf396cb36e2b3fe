// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex device ioctls: clock gating and performance expectation. The
 * framework handles the gasket (0xDC) ones.
 */

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "uapi/apex.h"
#include "apex_ioctl.h"
#include "apex_main.h"
#include "apex_session.h"

/*
 * As the 2018 staging driver defined it: the owner (the only process that
 * can hold the node open for writing) or CAP_SYS_ADMIN.
 */
static bool apex_ioctl_permitted(struct file *filp)
{
	return gasket_file_is_writer(filp) || capable(CAP_SYS_ADMIN);
}

static long apex_ioctl_gate_clock(struct apex_dev *adev,
				  struct apex_gate_clock_ioctl __user *argp)
{
	struct apex_gate_clock_ioctl arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	return apex_session_gate_clock(adev, arg.enable);
}

static long
apex_ioctl_performance(struct apex_dev *adev,
		       struct apex_performance_expectation_ioctl __user *argp)
{
	struct apex_performance_expectation_ioctl arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.performance > APEX_PERFORMANCE_MAX)
		return -EINVAL;
	return apex_session_set_performance(adev, arg.performance);
}

/**
 * apex_ioctl() - the gasket framework's ioctl_handler_cb
 * @gdev: the device
 * @filp: the open node
 * @cmd: an ioctl number outside the gasket (0xDC) range
 * @argp: its argument
 *
 * Return: 0, -ENOTTY for unknown numbers, -EPERM for callers that are
 * neither the owner nor CAP_SYS_ADMIN, -EFAULT or -EINVAL for bad
 * arguments, -ENODEV once the device is being removed.
 */
long apex_ioctl(struct gasket_dev *gdev, struct file *filp, unsigned int cmd,
		void __user *argp)
{
	struct apex_dev *adev = apex_from_gasket(gdev);

	switch (cmd) {
	case APEX_IOCTL_GATE_CLOCK:
	case APEX_IOCTL_PERFORMANCE_EXPECTATION:
		break;
	default:
		return -ENOTTY;
	}
	if (!apex_ioctl_permitted(filp))
		return -EPERM;

	if (cmd == APEX_IOCTL_GATE_CLOCK)
		return apex_ioctl_gate_clock(adev, argp);
	return apex_ioctl_performance(adev, argp);
}
