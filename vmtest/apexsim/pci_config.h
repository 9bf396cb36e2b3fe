/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * PCI configuration space of the emulated Apex: 1ac1:089a, class 0x088000,
 * BAR2 a 64-bit 1 MiB memory BAR, MSI-X with 13 vectors (table BAR2
 * 0x46800, PBA BAR2 0x46068), power management with D0 and D3hot, where
 * D3hot -> D0 resets the function (No_Soft_Reset clear). QEMU emulates the BARs, the capability chain
 * and MSI-X control on top of what this returns; the ROM BAR reads 0.
 */
#ifndef APEXSIM_PCI_CONFIG_H
#define APEXSIM_PCI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define PCICFG_SIZE		256
#define PCICFG_VENDOR_ID	0x1ac1
#define PCICFG_DEVICE_ID	0x089a
#define PCICFG_CLASS		0x088000	/* system peripheral, other */
#define PCICFG_MSIX_CAP		0x40
#define PCICFG_PM_CAP		0x50
#define PCICFG_D3HOT		3
/* pcicfg_write(): the write reset the function; the caller resets the chip. */
#define PCICFG_WRITE_RESET	1
#define PCICFG_MSIX_TABLE	0x46800
#define PCICFG_MSIX_PBA		0x46068
#define PCICFG_BAR2_BYTES	0x100000

struct pci_config {
	uint8_t b[PCICFG_SIZE];
	uint8_t wmask[PCICFG_SIZE];	/* bits the guest may change */
};

void pcicfg_init(struct pci_config *cfg);
/* Copy LEN bytes at OFF; -EINVAL if out of range. */
int pcicfg_read(const struct pci_config *cfg, uint64_t off, void *buf,
		uint32_t len);
/*
 * Apply LEN bytes at OFF through the write mask: 0, PCICFG_WRITE_RESET,
 * or -EINVAL if out of range.
 */
int pcicfg_write(struct pci_config *cfg, uint64_t off, const void *buf,
		 uint32_t len);
bool pcicfg_bus_master(const struct pci_config *cfg);

#endif /* APEXSIM_PCI_CONFIG_H */
