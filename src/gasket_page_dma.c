// SPDX-License-Identifier: GPL-2.0-only
/*
 * DMA mappings of pinned user pages.
 *
 * A process may map one page at several device addresses: two small
 * buffers in one page, or one buffer twice. The DMA API does not allow two
 * live mappings of memory the device writes. With bounce buffering
 * (swiotlb: confidential VMs, swiotlb=force) each mapping would get its
 * own bounce page, and each unmap would copy its whole bounce page back,
 * over what the device wrote through the other; without cache-coherent
 * DMA, one mapping's cache maintenance can undo the other's data.
 * CONFIG_DMA_API_DEBUG reports it ("overlapping mappings aren't
 * supported"). So a page the device may write is mapped once per page
 * table (Apex has one), DMA_BIDIRECTIONAL because its users may ask for
 * either writable direction, and shared: an earlier user's unmap syncs
 * the page for the CPU, the last one unmaps it. A page the device only
 * reads is mapped once per user, which the DMA API allows.
 *
 * The callers serialise every call (gdev->mutex).
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>

#include "gasket_page_dma.h"

/*
 * A shared mapping is one xarray value, no allocation of its own: the DMA
 * address (4 KiB aligned, as every page-table entry is) above the count
 * of its users. A 64-bit dma_addr_t >> 12 leaves 11 of the value's 63
 * bits, 10 of which count.
 */
#define GASKET_DMA_ADDR_SHIFT 12
#define GASKET_DMA_USER_BITS 10
#define GASKET_DMA_MAX_USERS ((1UL << GASKET_DMA_USER_BITS) - 1)

static void *gasket_shared_entry(dma_addr_t addr, unsigned long users)
{
	return xa_mk_value((unsigned long)(addr >> GASKET_DMA_ADDR_SHIFT) <<
			   GASKET_DMA_USER_BITS | users);
}

static dma_addr_t gasket_shared_addr(void *entry)
{
	return (dma_addr_t)(xa_to_value(entry) >> GASKET_DMA_USER_BITS)
		<< GASKET_DMA_ADDR_SHIFT;
}

static unsigned long gasket_shared_users(void *entry)
{
	return xa_to_value(entry) & GASKET_DMA_MAX_USERS;
}

void gasket_page_dma_init(struct gasket_page_dma *pd, struct device *dev)
{
	BUILD_BUG_ON(BITS_PER_LONG < 64);
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
	unsigned long pfn = page_to_pfn(page), users;
	void *entry;
	int ret;

	if (dir == DMA_TO_DEVICE) {
		*addr = dma_map_page(pd->dev, page, 0, PAGE_SIZE, dir);
		return dma_mapping_error(pd->dev, *addr) ? -ENOMEM : 0;
	}

	entry = xa_load(&pd->shared, pfn);
	if (entry) {
		users = gasket_shared_users(entry);
		if (users == GASKET_DMA_MAX_USERS)
			return -EBUSY;
		*addr = gasket_shared_addr(entry);
		/* Replaces a present value: needs no memory, cannot fail. */
		xa_store(&pd->shared, pfn, gasket_shared_entry(*addr, users + 1),
			 GFP_KERNEL);
		return 0;
	}
	*addr = dma_map_page(pd->dev, page, 0, PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (dma_mapping_error(pd->dev, *addr))
		return -ENOMEM;
	ret = xa_err(xa_store(&pd->shared, pfn, gasket_shared_entry(*addr, 1),
			      GFP_KERNEL_ACCOUNT));
	if (ret) {
		dma_unmap_page(pd->dev, *addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
		return ret;
	}
	return 0;
}

void gasket_page_dma_unmap(struct gasket_page_dma *pd, struct page *page,
			   dma_addr_t addr, enum dma_data_direction dir)
{
	unsigned long pfn = page_to_pfn(page), users;
	void *entry;

	if (dir == DMA_TO_DEVICE) {
		dma_unmap_page(pd->dev, addr, PAGE_SIZE, dir);
		return;
	}

	entry = xa_load(&pd->shared, pfn);
	if (WARN_ON_ONCE(!entry || gasket_shared_addr(entry) != addr))
		return;
	users = gasket_shared_users(entry);
	if (users > 1) {
		xa_store(&pd->shared, pfn, gasket_shared_entry(addr, users - 1),
			 GFP_KERNEL);
		/* What the device wrote for this user is the CPU's to read now. */
		dma_sync_single_for_cpu(pd->dev, addr, PAGE_SIZE,
					DMA_BIDIRECTIONAL);
		return;
	}
	xa_erase(&pd->shared, pfn);
	dma_unmap_page(pd->dev, addr, PAGE_SIZE, DMA_BIDIRECTIONAL);
}
