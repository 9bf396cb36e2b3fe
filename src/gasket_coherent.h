/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Gasket coherent buffer: the DMA-coherent memory user space configures
 * with GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR and maps with mmap().
 */
#ifndef __GASKET_COHERENT_H__
#define __GASKET_COHERENT_H__

#include <linux/mm_types.h>
#include <linux/types.h>

struct gasket_dev;

/* The coherent buffer of one device; gasket_dev.map_lock protects it. */
struct gasket_coherent_buffer {
	void *virt_base;		/* NULL when not allocated */
	dma_addr_t phys_base;
	size_t length_bytes;
	bool configured;		/* allocated by the ioctl, not yet freed */
	unsigned int map_count;		/* live user mappings */
	/*
	 * The mms that mapped it since it was allocated. mmap() fills a
	 * mapping before the kernel links it where unmap_mapping_range()
	 * looks, so removal waits for those mmap() calls (their mm's
	 * mmap_lock) before it zaps.
	 */
	struct list_head mappers;
};

void gasket_coherent_init(struct gasket_dev *gdev);

/* A size CONFIG_COHERENT_ALLOCATOR accepts: whole pages, within the limit. */
bool gasket_coherent_size_ok(struct gasket_dev *gdev, u64 size);
/* GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR; gdev->mutex held. */
int gasket_coherent_alloc(struct gasket_dev *gdev, u64 size);
int gasket_coherent_free(struct gasket_dev *gdev);
/* Free at last close or removal; deferred while user mappings remain. */
void gasket_coherent_release(struct gasket_dev *gdev);
/*
 * Removal, once gdev->removed is set and before the zap: wait until every
 * mmap() of the buffer has linked its mapping; no device lock held.
 */
void gasket_coherent_wait_for_mappers(struct gasket_dev *gdev);
/*
 * Removal, after every user mapping was zapped: free now, mapped or not;
 * gdev->mutex held.
 */
void gasket_coherent_remove(struct gasket_dev *gdev);
int gasket_coherent_mmap(struct gasket_dev *gdev, struct vm_area_struct *vma);
bool gasket_coherent_is_mapping(u64 host_addr);
int gasket_coherent_lookup(struct gasket_dev *gdev, u64 host_addr, u64 size,
			   dma_addr_t *dma);

#endif /* __GASKET_COHERENT_H__ */
