/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Apex session callbacks (open, close, reset, quiesce, status) and the reset,
 * power save and clock programming behind them.
 */
#ifndef __APEX_SESSION_H__
#define __APEX_SESSION_H__

#include <linux/mutex.h>
#include <linux/sysfs.h>
#include <linux/types.h>

struct apex_dev;
struct gasket_dev;

/* Power and clock state of one device (apex_dev.power). */
struct apex_power {
	struct mutex lock;	/* Protects: the fields below, SCU programming */
	bool powered;		/* the last reset sequence left the GCB running */
	bool reset_failed;	/* the last reset sequence timed out */
	bool bypass;		/* bypass_top_level as resolved at probe or open */
	bool warned_sw_bypass;	/* sw clock gating vs bypass warning given */
	u32 perf_clkdiv;	/* GCB clock divider userspace asked for */
	u32 thermal_clkdiv;	/* GCB clock divider the temperature allows */
};

void apex_session_init(struct apex_dev *adev);
int apex_session_probe(struct apex_dev *adev);
int apex_session_restore(struct apex_dev *adev, bool in_use);
void apex_session_idle(struct apex_dev *adev);

int apex_session_open_cb(struct gasket_dev *gdev);
int apex_session_close_cb(struct gasket_dev *gdev);
int apex_session_reset_cb(struct gasket_dev *gdev);
int apex_session_quiesce_cb(struct gasket_dev *gdev);
int apex_session_status_cb(struct gasket_dev *gdev);

int apex_session_gate_clock(struct apex_dev *adev, bool gate);
int apex_session_set_performance(struct apex_dev *adev, u32 level);
bool apex_session_throttle(struct apex_dev *adev, u32 level);

extern const struct attribute_group apex_session_group;

#endif /* __APEX_SESSION_H__ */
