/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * Apex (Coral Edge TPU) ioctls on /dev/apex_N, beside the gasket ones in
 * gasket.h. Layouts and numbers are those existing clients (libedgetpu)
 * already use; they must not change.
 */
#ifndef _UAPI_APEX_H
#define _UAPI_APEX_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* APEX_IOCTL_GATE_CLOCK argument. */
struct apex_gate_clock_ioctl {
	/* in: non-zero gates the GCB clock, zero un-gates it */
	__u64 enable;
	/* in: historical "gate even when busy" request; accepted and ignored */
	__u64 force_idle;
};

/* Performance levels, slowest first. */
enum apex_performance_expectation {
	APEX_PERFORMANCE_LOW = 0,	/* GCB clock 62.5 MHz */
	APEX_PERFORMANCE_MED = 1,	/* 125 MHz */
	APEX_PERFORMANCE_HIGH = 2,	/* 250 MHz */
	APEX_PERFORMANCE_MAX = 3,	/* 500 MHz */
};

/* APEX_IOCTL_PERFORMANCE_EXPECTATION argument (4 bytes: the size is in the number). */
struct apex_performance_expectation_ioctl {
	/* in: one of enum apex_performance_expectation */
	__u32 performance;
};

#define APEX_IOCTL_BASE 0x7F

/* Gate or un-gate the chip clock; a no-op unless allow_sw_clock_gating. */
#define APEX_IOCTL_GATE_CLOCK \
	_IOW(APEX_IOCTL_BASE, 0, struct apex_gate_clock_ioctl)

/* Ask for a clock rate; thermal throttling may still lower it. */
#define APEX_IOCTL_PERFORMANCE_EXPECTATION \
	_IOW(APEX_IOCTL_BASE, 1, struct apex_performance_expectation_ioctl)

#endif /* _UAPI_APEX_H */
