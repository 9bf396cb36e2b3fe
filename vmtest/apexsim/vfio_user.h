/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * vfio-user server side (QEMU docs/interop/vfio-user.rst), for one client
 * connection: message framing, descriptor passing, and the commands QEMU's
 * vfio-user-pci sends. Device behaviour lives in the chip model; this file
 * only moves bytes between the socket and it.
 */
#ifndef APEXSIM_VFIO_USER_H
#define APEXSIM_VFIO_USER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apex_chip.h"
#include "guest_mem.h"
#include "pci_config.h"

/* Message header, host endian (QEMU and apexsim share the host). */
struct vu_hdr {
	uint16_t id;
	uint16_t cmd;
	uint32_t size;		/* whole message, header included */
	uint32_t flags;
	uint32_t error;		/* errno, in error replies */
};

#define VU_HDR_SIZE		16
#define VU_TYPE_MASK		0xfu
#define VU_TYPE_COMMAND		0x0u
#define VU_TYPE_REPLY		0x1u
#define VU_FLAG_NO_REPLY	0x10u
#define VU_FLAG_ERROR		0x20u

enum vu_command {
	VU_VERSION = 1,
	VU_DMA_MAP = 2,
	VU_DMA_UNMAP = 3,
	VU_DEVICE_GET_INFO = 4,
	VU_DEVICE_GET_REGION_INFO = 5,
	VU_DEVICE_GET_IRQ_INFO = 7,
	VU_DEVICE_SET_IRQS = 8,
	VU_REGION_READ = 9,
	VU_REGION_WRITE = 10,
	VU_DEVICE_RESET = 13,
};

/* Payloads (offsets after the header), as in <linux/vfio.h>. */
struct vu_dma_map {
	uint32_t argsz, flags;		/* flags: 1 read, 2 write */
	uint64_t offset, addr, size;
};

struct vu_dma_unmap {
	uint32_t argsz, flags;		/* flags: 2 unmap all */
	uint64_t addr, size;
};

struct vu_device_info {
	uint32_t argsz, flags, num_regions, num_irqs;
};

struct vu_region_info {
	uint32_t argsz, flags, index, cap_offset;
	uint64_t size, offset;
};

struct vu_irq_info {
	uint32_t argsz, flags, index, count;
};

struct vu_irq_set {
	uint32_t argsz, flags, index, start, count;
};

struct vu_region_rw {
	uint64_t offset;
	uint32_t region, count;
};

#define VU_DMA_FLAG_WRITE		0x2u
#define VU_DMA_UNMAP_ALL		0x2u
#define VU_DEVICE_FLAGS_RESET		0x1u
#define VU_DEVICE_FLAGS_PCI		0x2u
#define VU_NUM_REGIONS			9
#define VU_NUM_IRQS			5
#define VU_REGION_BAR2			2
#define VU_REGION_CONFIG		7
#define VU_REGION_FLAG_READ		0x1u
#define VU_REGION_FLAG_WRITE		0x2u
#define VU_IRQ_INTX			0
#define VU_IRQ_MSIX			2
#define VU_IRQ_INFO_EVENTFD		0x1u
#define VU_IRQ_INFO_NORESIZE		0x8u
#define VU_IRQ_DATA_NONE		0x1u
#define VU_IRQ_DATA_BOOL		0x2u
#define VU_IRQ_DATA_EVENTFD		0x4u
#define VU_IRQ_DATA_MASK		0x7u
#define VU_IRQ_ACTION_MASK		0x8u
#define VU_IRQ_ACTION_UNMASK		0x10u
#define VU_IRQ_ACTION_TRIGGER		0x20u
#define VU_IRQ_ACTIONS			0x38u

#define VU_MAX_FDS		16	/* per message, advertised */
#define VU_MAX_XFER		4096	/* region read/write bytes, advertised */
#define VU_MAX_DMA_MAPS		GMEM_MAX_WINDOWS
#define VU_MAX_MSG		65536	/* larger messages are discarded */
#define VU_PGSIZE		4096	/* the DMA page size, advertised */
#define VU_DISCARD_CHUNK	4096	/* bytes read at a time when discarding */

/* A value above as a string, for the capabilities VERSION advertises. */
#define VU_STR_(x)		#x
#define VU_STR(x)		VU_STR_(x)

struct vu_conn {
	int fd;				/* connected socket, -1 when closed */
	struct apex_chip *chip;
	struct guest_mem *gmem;
	struct pci_config *cfg;
	int irq_fd[APEX_NUM_VECTORS];	/* MSI-X eventfds, -1 = none */
	int intx_fd;

	/* Receive state: a header, then its body or a discard of it. */
	uint8_t hdr_buf[VU_HDR_SIZE];
	size_t hdr_got;
	struct vu_hdr hdr;
	uint8_t *body;
	size_t body_len;
	size_t body_got;
	uint64_t discard_left;
	int fds[VU_MAX_FDS];		/* received with the current message */
	size_t nfds;

	bool versioned;
	uint64_t messages;
	uint64_t errors;
};

void vu_init(struct vu_conn *vu, int fd, struct apex_chip *chip,
	     struct guest_mem *gmem, struct pci_config *cfg);
/*
 * Read what the socket holds and handle each complete message. Returns 1
 * while the connection is open, 0 once the client has closed it.
 */
int vu_handle(struct vu_conn *vu);
/* Signal MSI-X vector VECTOR (the chip's interrupt callback). */
bool vu_raise(void *opaque, unsigned int vector);
/* Close the socket and every descriptor, unmap guest memory. */
void vu_close(struct vu_conn *vu);

#endif /* APEXSIM_VFIO_USER_H */
