// SPDX-License-Identifier: GPL-2.0-only
/*
 * Since 6.2 dma_buf_map_attachment() wants the reservation lock held;
 * importers that do not hold it call the _unlocked variant.
 */
#include <linux/dma-buf.h>

struct sg_table *gasket_probe(struct dma_buf_attachment *attach);
struct sg_table *gasket_probe(struct dma_buf_attachment *attach)
{
	return dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
}
