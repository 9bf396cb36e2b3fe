// SPDX-License-Identifier: GPL-2.0-only
/*
 * Apex device ioctls: clock gating and performance expectation. The
 * framework handles the gasket (0xDC) ones.
 */

#include <linux/capability.h>
#include <linux/fs.h>

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

/**
 * apex_ioctl() - the gasket framework's ioctl_handler_cb
 * @gdev: the device
 * @filp: the open node
 * @cmd: an ioctl number outside the gasket (0xDC) range
 * @arg: the framework's kernel copy of its argument
 *
 * Return: 0, -ENOTTY for unknown numbers, -EPERM for callers that are
 * neither the owner nor CAP_SYS_ADMIN, -EINVAL for bad arguments.
 */
long apex_ioctl(struct gasket_dev *gdev, struct file *filp, unsigned int cmd,
		void *arg)
{
	struct apex_dev *adev = apex_from_gasket(gdev);
	const struct apex_performance_expectation_ioctl *perf = arg;
	const struct apex_gate_clock_ioctl *gate = arg;

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
		return apex_session_gate_clock(adev, gate->enable);
	if (perf->performance > APEX_PERFORMANCE_MAX)
		return -EINVAL;
	return apex_session_set_performance(adev, perf->performance);
}
