/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Gasket interrupts: one MSI-X vector per device interrupt, routed by the
 * INTVECCTL registers, each optionally signalling a user eventfd.
 */
#ifndef __GASKET_INTERRUPT_H__
#define __GASKET_INTERRUPT_H__

#include <linux/types.h>

struct gasket_dev;

int gasket_interrupt_init(struct gasket_dev *gdev);
void gasket_interrupt_fini(struct gasket_dev *gdev);
/* Program the INTVECCTL registers again (after a device reset). */
void gasket_interrupt_setup(struct gasket_dev *gdev);
int gasket_interrupt_status(struct gasket_dev *gdev);

int gasket_interrupt_set_eventfd(struct gasket_dev *gdev, u64 interrupt,
				 u64 event_fd);
int gasket_interrupt_clear_eventfd(struct gasket_dev *gdev, u64 interrupt);
void gasket_interrupt_clear_all_eventfds(struct gasket_dev *gdev);
int gasket_interrupt_loopback(struct gasket_dev *gdev, u64 interrupt);
void gasket_interrupt_reset_counts(struct gasket_dev *gdev);
u64 gasket_interrupt_count(struct gasket_dev *gdev, int interrupt);

#endif /* __GASKET_INTERRUPT_H__ */
