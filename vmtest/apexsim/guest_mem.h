/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Guest RAM as the device sees it: the DMA windows QEMU announces with
 * VFIO_USER_DMA_MAP, mapped from the memfd descriptors that come with them.
 * Windows without a descriptor are recorded but not accessible.
 */
#ifndef APEXSIM_GUEST_MEM_H
#define APEXSIM_GUEST_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GMEM_MAX_WINDOWS 1024

struct gmem_window {
	uint64_t iova;		/* DMA (guest physical) address */
	uint64_t size;
	uint8_t *host;		/* NULL: announced without a descriptor */
	bool writable;
};

struct guest_mem {
	struct gmem_window *win;
	size_t count;
	size_t cap;
};

void gmem_init(struct guest_mem *gm);
/* Unmap every window (client gone, or teardown). */
void gmem_fini(struct guest_mem *gm);

/*
 * Add a window; fd < 0 records one that cannot be accessed. The descriptor
 * is not kept. Returns 0 or a negative errno (EEXIST on overlap).
 */
int gmem_map(struct guest_mem *gm, uint64_t iova, uint64_t size, int fd,
	     uint64_t offset, bool writable);
/* Remove the window that exactly matches; -ENOENT if there is none. */
int gmem_unmap(struct guest_mem *gm, uint64_t iova, uint64_t size);

/*
 * Host pointer for [iova, iova + len) if it lies inside one accessible
 * window (writable when WRITE is set), else NULL.
 */
void *gmem_ptr(const struct guest_mem *gm, uint64_t iova, uint64_t len,
	       bool write);

/* Bytes of guest RAM that can be reached. */
uint64_t gmem_mapped_bytes(const struct guest_mem *gm);

#endif /* APEXSIM_GUEST_MEM_H */
