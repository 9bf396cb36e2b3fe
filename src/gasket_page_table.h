/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Gasket page tables: the device's address translation (simple entries
 * pointing at pages, extended entries pointing at second-level tables in
 * host memory).
 * Every function here but gasket_page_table_pin/unpin runs with
 * gdev->mutex held.
 */
#ifndef __GASKET_PAGE_TABLE_H__
#define __GASKET_PAGE_TABLE_H__

#include <linux/dma-direction.h>
#include <linux/types.h>

struct gasket_dev;
struct gasket_page_table;
struct mm_struct;
struct page;

/*
 * User pages pinned for one MAP_BUFFER, before the device mutex is taken.
 * A successful gasket_page_table_map() takes them over; whatever it did
 * not take, gasket_page_table_unpin() gives back.
 */
struct gasket_pin {
	struct page **pages;		/* NULL: the coherent buffer, not pinned */
	u32 count;			/* pinned pages still held here */
	enum dma_data_direction dir;
	struct mm_struct *mm;		/* charged for them; grabbed */
};

int gasket_page_table_init(struct gasket_dev *gdev, int index);
void gasket_page_table_fini(struct gasket_dev *gdev, int index);

int gasket_page_table_partition(struct gasket_page_table *pt, u64 num_simple);
/* Without gdev->mutex: pinning may wait on user memory. */
int gasket_page_table_pin(struct gasket_dev *gdev, u64 host_addr, u64 size,
			  enum dma_data_direction dir, struct gasket_pin *pin);
void gasket_page_table_unpin(struct gasket_pin *pin);
int gasket_page_table_map(struct gasket_page_table *pt, struct gasket_pin *pin,
			  u64 host_addr, u64 dev_addr, u64 size);
int gasket_page_table_unmap(struct gasket_page_table *pt, u64 dev_addr,
			    u64 size);
int gasket_page_table_map_dmabuf(struct gasket_page_table *pt, int fd,
				 u64 dev_addr, u32 num_pages,
				 enum dma_data_direction dir);
int gasket_page_table_unmap_dmabuf(struct gasket_page_table *pt, int fd,
				   u64 dev_addr, u32 num_pages);
/* Unmap everything and free the second-level tables. */
void gasket_page_table_unmap_all(struct gasket_page_table *pt);
/* unmap_all, then make every entry simple again. */
void gasket_page_table_reset(struct gasket_page_table *pt);
/*
 * Write every entry and the simple/extended split back to a chip that
 * lost its registers (a function reset, a power state change).
 */
void gasket_page_table_restore(struct gasket_page_table *pt);
bool gasket_page_table_uses_coherent(struct gasket_page_table *pt);

#endif /* __GASKET_PAGE_TABLE_H__ */
