// SPDX-License-Identifier: GPL-2.0-only
/*
 * DMA mappings of pinned user pages.
 *
 * A process may map one page at several device addresses: two small
 * buffers in one page, or one buffer twice. The DMA API does not allow two
 * live mappings of memory the device writes: on a system without cache
 * coherent DMA, one mapping's cache maintenance can undo the data of the
 * other (CONFIG_DMA_API_DEBUG reports "overlapping mappings aren't
 * supported"). So a page the device may write is mapped once per page
 * table (Apex has one), DMA_BIDIRECTIONAL because its users may ask for
 * either writable direction, and shared; the last user to go unmaps it. A
 * page the device only reads is mapped once per user, which the DMA API
 * allows.
 *
 * The callers serialise every call (gdev->mutex).
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "gasket_page_dma.h"

/* One shared mapping of a page the device may write. */
struct gasket_page_dma_shared {
	dma_addr_t addr;
	unsigned int users;
};

void gasket_page_dma_init(struct gasket_page_dma *pd, struct device *dev)
{
	pd->dev = dev;
	xa_init(&pd->shared);
}

void gasket_page_dma_fini(struct gasket_page_dma *pd)
{
	/* Every user unmapped first; anything left would be a leaked mapping. */
	WARN_ON(!xa_empty(&pd->shared));
	xa_destroy(&pd->shared);
}

int gasket_page_dma_map(struct gasket_page_dma *pd, struct page *page,
			enum dma_data_direction dir, dma_addr_t *addr)
{
	unsigned long pfn = page_to_pfn(page);
	struct gasket_page_dma_shared *shared;
	int ret;

	if (dir == DMA_TO_DEVICE) {
		*addr = dma_map_page(pd->dev, page, 0, PAGE_SIZE, dir);
		return dma_mapping_error(pd->dev, *addr) ? -ENOMEM : 0;
	}

	shared = xa_load(&pd->shared, pfn);
	if (shared) {
		shared->users++;
		*addr = shared->addr;
		return 0;
	}
	shared = kmalloc(sizeof(*shared), GFP_KERNEL_ACCOUNT);
	if (!shared)
		return -ENOMEM;
	shared->addr = dma_map_page(pd->dev, page, 0, PAGE_SIZE,
				    DMA_BIDIRECTIONAL);
	if (dma_mapping_error(pd->dev, shared->addr)) {
		kfree(shared);
		return -ENOMEM;
	}
	shared->users = 1;
	ret = xa_err(xa_store(&pd->shared, pfn, shared, GFP_KERNEL_ACCOUNT));
	if (ret) {
		dma_unmap_page(pd->dev, shared->addr, PAGE_SIZE,
			       DMA_BIDIRECTIONAL);
		kfree(shared);
		return ret;
	}
	*addr = shared->addr;
	return 0;
}

void gasket_page_dma_unmap(struct gasket_page_dma *pd, struct page *page,
			   dma_addr_t addr, enum dma_data_direction dir)
{
	unsigned long pfn = page_to_pfn(page);
	struct gasket_page_dma_shared *shared;

	if (dir == DMA_TO_DEVICE) {
		dma_unmap_page(pd->dev, addr, PAGE_SIZE, dir);
		return;
	}

	shared = xa_load(&pd->shared, pfn);
	if (WARN_ON_ONCE(!shared || shared->addr != addr))
		return;
	if (--shared->users) {
		/* What the device wrote for this user is the CPU's to read now. */
		dma_sync_single_for_cpu(pd->dev, addr, PAGE_SIZE,
					DMA_BIDIRECTIONAL);
		return;
	}
	xa_erase(&pd->shared, pfn);
	dma_unmap_page(pd->dev, addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
	kfree(shared);
}
