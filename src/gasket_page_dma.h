/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * DMA mappings of pinned user pages: a page the device may write is mapped
 * once per page table however many entries point at it
 * (gasket_page_dma.c).
 */
#ifndef __GASKET_PAGE_DMA_H__
#define __GASKET_PAGE_DMA_H__

#include <linux/dma-direction.h>
#include <linux/types.h>
#include <linux/xarray.h>

struct device;
struct page;

struct gasket_page_dma {
	struct device *dev;
	struct xarray shared;	/* by pfn: the mappings of writable pages */
};

void gasket_page_dma_init(struct gasket_page_dma *pd, struct device *dev);
void gasket_page_dma_fini(struct gasket_page_dma *pd);
/* -ENOMEM if the page cannot be mapped, -EBUSY if it has 1023 users. */
int gasket_page_dma_map(struct gasket_page_dma *pd, struct page *page,
			enum dma_data_direction dir, dma_addr_t *addr);
/* @addr and @dir as the matching gasket_page_dma_map() gave and took. */
void gasket_page_dma_unmap(struct gasket_page_dma *pd, struct page *page,
			   dma_addr_t addr, enum dma_data_direction dir);

#endif /* __GASKET_PAGE_DMA_H__ */
