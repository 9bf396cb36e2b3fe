/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Guest RAM as the device sees it: the DMA windows QEMU announces with
 * VFIO_USER_DMA_MAP, mapped from the memfd descriptors that come with them.
 * Windows without a descriptor are recorded but not accessible.
 *
 * Without an IOMMU in the guest there are a few windows, the guest's RAM.
 * With one (intel-iommu,caching-mode=on) every page the driver maps for the
 * chip is a window of its own, announced when the driver maps it and
 * withdrawn when it unmaps it, so there can be tens of thousands: the
 * windows are kept sorted by address. The ranges withdrawn and not mapped
 * again are kept too: a chip access there is DMA after the guest released
 * the memory, which a driver must never let happen.
 */
#ifndef APEXSIM_GUEST_MEM_H
#define APEXSIM_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* QEMU 11.1's vfio-user client refuses a larger max_dma_maps. */
#define GMEM_MAX_WINDOWS 65535

struct gmem_window {
	uint64_t iova;		/* DMA address (guest physical without IOMMU) */
	uint64_t size;
	uint8_t *host;		/* NULL: announced without a descriptor */
	bool writable;
};

struct gmem_range {
	uint64_t start, end;	/* [start, end) */
};

struct guest_mem {
	struct gmem_window *win;	/* sorted by iova, none overlap */
	size_t count;
	size_t cap;
	struct gmem_range *released;	/* sorted, merged, none overlap */
	size_t n_released;
	size_t released_cap;
};

void gmem_init(struct guest_mem *gm);
/* Unmap every window and forget what was released (client gone, teardown). */
void gmem_fini(struct guest_mem *gm);

/*
 * Add a window; fd < 0 records one that cannot be accessed. The descriptor
 * is not kept. Returns 0 or a negative errno (EEXIST on overlap).
 */
int gmem_map(struct guest_mem *gm, uint64_t iova, uint64_t size, int fd,
	     uint64_t offset, bool writable);
/*
 * Remove every window lying wholly inside [iova, iova + size), none being
 * no error, as VFIO's type1 IOMMU does (QEMU unmaps a whole IOMMU address
 * space in power-of-two pieces, most of them empty). -EINVAL, and nothing
 * removed, if a window crosses an end of the range. The removed ranges
 * count as released.
 */
int gmem_unmap(struct guest_mem *gm, uint64_t iova, uint64_t size);

/*
 * Host pointer for [iova, iova + len) if it lies inside one accessible
 * window (writable when WRITE is set), else NULL.
 */
void *gmem_ptr(const struct guest_mem *gm, uint64_t iova, uint64_t len,
	       bool write);

/* Whether part of [iova, iova + len) was unmapped and not mapped again. */
bool gmem_released(const struct guest_mem *gm, uint64_t iova, uint64_t len);

/* Bytes of guest RAM that can be reached. */
uint64_t gmem_mapped_bytes(const struct guest_mem *gm);

#endif /* APEXSIM_GUEST_MEM_H */
