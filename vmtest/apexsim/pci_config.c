// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* PCI configuration space of the emulated Apex. */
#include <errno.h>
#include <string.h>

#include "apex_chip.h"
#include "pci_config.h"

#define PCI_COMMAND		0x04
#define   PCI_COMMAND_MASTER	0x4
#define PCI_COMMAND_WMASK	0x0547	/* io, mem, master, parity, serr, intx */
#define PCI_STATUS		0x06
#define   PCI_STATUS_CAP_LIST	0x10
#define PCI_REVISION		0x08
#define PCI_CACHE_LINE		0x0c
#define PCI_LATENCY		0x0d
#define PCI_BAR2		0x18
#define   PCI_BAR_MEM_64	0x4
#define PCI_SUBSYSTEM_VENDOR	0x2c
#define PCI_SUBSYSTEM_ID	0x2e
#define PCI_CAP_PTR		0x34
#define PCI_INTERRUPT_LINE	0x3c
#define PCI_CAP_ID_PM		0x01
#define PCI_CAP_ID_MSIX		0x11
#define PM_PMC_VERSION_1_2	0x0003
#define PM_CTRL			4	/* PMCSR, from the capability */
#define   PM_CTRL_STATE_MASK	0x0003	/* D0..D3hot; No_Soft_Reset clear */
#define MSIX_FLAGS_WMASK	0xc000	/* enable, function mask */
#define MSIX_BIR_BAR2		2

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)v);
	put16(p + 2, (uint16_t)(v >> 16));
}

void pcicfg_init(struct pci_config *cfg)
{
	uint8_t *b = cfg->b;

	memset(cfg, 0, sizeof(*cfg));
	put16(b + 0x00, PCICFG_VENDOR_ID);
	put16(b + 0x02, PCICFG_DEVICE_ID);
	put16(b + PCI_STATUS, PCI_STATUS_CAP_LIST);
	b[PCI_REVISION] = 0;
	b[0x09] = PCICFG_CLASS & 0xff;
	b[0x0a] = (PCICFG_CLASS >> 8) & 0xff;
	b[0x0b] = (PCICFG_CLASS >> 16) & 0xff;
	put32(b + PCI_BAR2, PCI_BAR_MEM_64);
	put16(b + PCI_SUBSYSTEM_VENDOR, PCICFG_VENDOR_ID);
	put16(b + PCI_SUBSYSTEM_ID, PCICFG_DEVICE_ID);
	b[PCI_CAP_PTR] = PCICFG_MSIX_CAP;

	b[PCICFG_MSIX_CAP] = PCI_CAP_ID_MSIX;
	b[PCICFG_MSIX_CAP + 1] = PCICFG_PM_CAP;
	put16(b + PCICFG_MSIX_CAP + 2, APEX_NUM_VECTORS - 1);
	put32(b + PCICFG_MSIX_CAP + 4, PCICFG_MSIX_TABLE | MSIX_BIR_BAR2);
	put32(b + PCICFG_MSIX_CAP + 8, PCICFG_MSIX_PBA | MSIX_BIR_BAR2);

	b[PCICFG_PM_CAP] = PCI_CAP_ID_PM;
	b[PCICFG_PM_CAP + 1] = 0;	/* last capability */
	put16(b + PCICFG_PM_CAP + 2, PM_PMC_VERSION_1_2);

	put16(cfg->wmask + PCI_COMMAND, PCI_COMMAND_WMASK);
	cfg->wmask[PCI_CACHE_LINE] = 0xff;
	cfg->wmask[PCI_LATENCY] = 0xff;
	cfg->wmask[PCI_INTERRUPT_LINE] = 0xff;
	put16(cfg->wmask + PCICFG_MSIX_CAP + 2, MSIX_FLAGS_WMASK);
	put16(cfg->wmask + PCICFG_PM_CAP + PM_CTRL, PM_CTRL_STATE_MASK);
}

static unsigned int pcicfg_power_state(const struct pci_config *cfg)
{
	return cfg->b[PCICFG_PM_CAP + PM_CTRL] & PM_CTRL_STATE_MASK;
}

static bool pcicfg_range_ok(uint64_t off, uint32_t len)
{
	return len > 0 && off < PCICFG_SIZE && len <= PCICFG_SIZE - off;
}

int pcicfg_read(const struct pci_config *cfg, uint64_t off, void *buf,
		uint32_t len)
{
	if (!pcicfg_range_ok(off, len))
		return -EINVAL;
	memcpy(buf, cfg->b + off, len);
	return 0;
}

int pcicfg_write(struct pci_config *cfg, uint64_t off, const void *buf,
		 uint32_t len)
{
	const uint8_t *src = buf;
	unsigned int was = pcicfg_power_state(cfg);
	uint32_t i;

	if (!pcicfg_range_ok(off, len))
		return -EINVAL;
	for (i = 0; i < len; i++) {
		uint8_t m = cfg->wmask[off + i];

		cfg->b[off + i] = (uint8_t)((cfg->b[off + i] & ~m) |
					    (src[i] & m));
	}
	/* No_Soft_Reset is clear: D3hot -> D0 resets the function. */
	return was == PCICFG_D3HOT && pcicfg_power_state(cfg) == 0 ?
	       PCICFG_WRITE_RESET : 0;
}

bool pcicfg_bus_master(const struct pci_config *cfg)
{
	return cfg->b[PCI_COMMAND] & PCI_COMMAND_MASTER;
}
