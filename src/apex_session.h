/* SPDX-License-Identifier: GPL-2.0-only */
/* Apex reset, power save and clocks. */
#ifndef __APEX_SESSION_H__
#define __APEX_SESSION_H__

#include <linux/sysfs.h>
#include <linux/types.h>

#include "apex_sysfs.h"

struct apex_dev;
struct gasket_dev;

int apex_session_probe(struct apex_dev *adev);
void apex_session_idle(struct apex_dev *adev);

int apex_session_open_cb(struct gasket_dev *gdev);
int apex_session_close_cb(struct gasket_dev *gdev);
int apex_session_reset_cb(struct gasket_dev *gdev);
int apex_session_status_cb(struct gasket_dev *gdev);

int apex_session_gate_clock(struct apex_dev *adev, bool gate);
int apex_session_set_performance(struct apex_dev *adev, u32 level);
void apex_session_apply_clocks(struct apex_dev *adev);
void apex_session_tunable_changed(struct apex_dev *adev, enum apex_tunable_id id);

extern const struct attribute_group apex_session_group;

#endif /* __APEX_SESSION_H__ */
