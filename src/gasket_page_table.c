// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket page tables: how the device translates its addresses to host DMA
 * addresses. The device's pages are 4 KiB whatever the kernel's page size.
 *
 * A table has N entries (N read from the chip, a power of two), 64-bit
 * little-endian registers from config->base_reg on. The first num_simple
 * entries ("simple") each hold the DMA address of one page; the others
 * ("extended") each hold the DMA address of a second-level table of 512
 * such entries in host memory. config->extended_reg holds num_simple. Every
 * entry is "DMA address | 1" when valid, 0 when not.
 *
 * Device addresses:
 *   simple:   bits 11:0 offset, bits 12 and up the entry index (< num_simple)
 *   extended: bit extended_bit (63 on Apex) set, bits 20:12 index in the
 *             second-level table, bits 33:21 (for N = 8192) index among the
 *             extended entries, everything else zero.
 *
 * Maps and unmaps work in the kernel's pages: host address, device address
 * and size are multiples of PAGE_SIZE, so on a kernel with 16 KiB pages one
 * host page fills 4 consecutive device entries (a "group"), mapped and
 * unmapped together. The group's first entry (its head) holds the pinned
 * page, its DMA mapping and its charge; the others point into the same
 * page.
 *
 * Entries point at user pages (pinned for as long as they are mapped,
 * DMA-mapped by gasket_page_dma.c), at the coherent buffer
 * (gasket_coherent.c; when the user address lies in its mapping) or at
 * dma-buf pages. A map either fully succeeds or changes nothing: all
 * pages are pinned and DMA-mapped and all second-level tables allocated
 * before the first entry is written. The device sees a second-level table
 * only after its entries are written and ordered before the first-level
 * entry.
 *
 * User pages are pinned by gasket_page_table_pin() before the caller takes
 * gdev->mutex, since pinning can wait on user memory for as long as user
 * space likes (a userfaultfd page nobody serves). They are charged to the
 * mapping process's RLIMIT_MEMLOCK as RDMA does (mm->pinned_vm, shown as
 * VmPin in /proc/PID/status), and each mapped page keeps a reference to
 * that mm, so the charge goes back to it whichever task unmaps. Every
 * other function runs with gdev->mutex held.
 */
#include <linux/capability.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "gasket_coherent.h"
#include "gasket_compat.h"
#include "gasket_core.h"
#include "gasket_page_dma.h"
#include "gasket_page_table.h"

GASKET_MODULE_IMPORT_NS_DMA_BUF();

#define GASKET_PAGE_SHIFT 12
#define GASKET_PAGE_SIZE (1u << GASKET_PAGE_SHIFT)
/* Device entries per kernel page: 1, or 4 with 16 KiB pages. */
#define GASKET_ENTRIES_PER_PAGE (PAGE_SIZE >> GASKET_PAGE_SHIFT)
#define GASKET_PAGES_PER_SUBTABLE 512
#define GASKET_SUBTABLE_BYTES (GASKET_PAGES_PER_SUBTABLE * sizeof(u64))
#define GASKET_SUBTABLE_SHIFT 9		/* log2(GASKET_PAGES_PER_SUBTABLE) */
#define GASKET_EXTENDED_LVL0_SHIFT (GASKET_PAGE_SHIFT + GASKET_SUBTABLE_SHIFT)
#define GASKET_VALID_SLOT_FLAG 1ULL
/* Pages pinned per pin_user_pages_fast() call. */
#define GASKET_PIN_BATCH GASKET_PAGES_PER_SUBTABLE

enum gasket_pte_kind {
	GASKET_PTE_FREE = 0,
	GASKET_PTE_PINNED,	/* pinned user page */
	GASKET_PTE_COHERENT,	/* page of the coherent buffer */
	GASKET_PTE_DMABUF,	/* page of an attached dma-buf */
};

/* Host view of one device page entry (simple or second-level). */
struct gasket_pte {
	struct page *page;		/* GASKET_PTE_PINNED, group head only */
	struct mm_struct *mm;		/* as page: charged, grabbed */
	dma_addr_t dma_addr;
	u8 kind;			/* enum gasket_pte_kind */
	u8 dir;				/* enum dma_data_direction */
};

/* A second-level table behind one extended entry. */
struct gasket_subtable {
	__le64 *slots;			/* what the device reads (coherent) */
	dma_addr_t dma_addr;
	bool published;			/* first-level entry written */
	struct gasket_pte ptes[GASKET_PAGES_PER_SUBTABLE];
};

/* An attached dma-buf and where it is mapped. */
struct gasket_dmabuf_mapping {
	struct list_head list;
	struct dma_buf *dmabuf;		/* holds a reference */
	struct dma_buf_attachment *attach;
	struct sg_table *sgt;
	enum dma_data_direction dir;
	u64 dev_addr;
	u32 num_pages;
};

struct gasket_page_table {
	struct gasket_dev *gdev;
	u64 __iomem *slots;		/* entry registers */
	void __iomem *extended_reg;
	u64 extended_flag;
	u32 total_entries;
	u32 num_simple;
	u32 num_mapped;			/* leaf entries in use */
	u32 num_coherent;		/* of which in the coherent buffer */
	struct gasket_pte *simple;	/* [total_entries] */
	struct gasket_subtable **subtables; /* [total_entries], by extended index */
	struct list_head dmabufs;
	struct gasket_page_dma page_dma; /* of the pinned pages */
};

/* A checked device address range: leaf entries first .. first + count - 1. */
struct gasket_range {
	bool extended;
	u32 first;	/* simple index, or extended page (lvl0 << 9 | lvl1) */
	u32 count;
};

static struct gasket_page_table *gasket_pt(struct gasket_dev *gdev, int index)
{
	return gdev->page_table[index];
}

u32 gasket_page_table_num_entries(struct gasket_dev *gdev, int index)
{
	return gasket_pt(gdev, index) ? gasket_pt(gdev, index)->total_entries : 0;
}
EXPORT_SYMBOL_GPL(gasket_page_table_num_entries);

u32 gasket_page_table_num_simple_entries(struct gasket_dev *gdev, int index)
{
	return gasket_pt(gdev, index) ? READ_ONCE(gasket_pt(gdev, index)->num_simple) : 0;
}
EXPORT_SYMBOL_GPL(gasket_page_table_num_simple_entries);

u32 gasket_page_table_num_mapped_pages(struct gasket_dev *gdev, int index)
{
	return gasket_pt(gdev, index) ? READ_ONCE(gasket_pt(gdev, index)->num_mapped) : 0;
}
EXPORT_SYMBOL_GPL(gasket_page_table_num_mapped_pages);

bool gasket_page_table_uses_coherent(struct gasket_page_table *pt)
{
	return pt->num_coherent;
}

/*
 * Turns (device address, bytes) into leaf entries, or -EINVAL if the
 * address is malformed, not in whole kernel pages, or the range leaves the
 * current partition. Whole kernel pages make whole groups of entries: a
 * group never straddles a second-level table (512 entries, 2 MiB).
 */
static int gasket_pt_range(struct gasket_page_table *pt, u64 dev_addr,
			   u64 size, struct gasket_range *range)
{
	u32 entry_bits = ilog2(pt->total_entries);
	u64 pages, first, limit, addr;

	if (!size || !PAGE_ALIGNED(size) || !PAGE_ALIGNED(dev_addr))
		return -EINVAL;
	pages = size >> GASKET_PAGE_SHIFT;

	range->extended = dev_addr & pt->extended_flag;
	if (range->extended) {
		addr = dev_addr & ~pt->extended_flag;
		if (addr >> (GASKET_EXTENDED_LVL0_SHIFT + entry_bits))
			return -EINVAL;
		first = addr >> GASKET_PAGE_SHIFT;
		limit = (u64)(pt->total_entries - pt->num_simple)
			<< GASKET_SUBTABLE_SHIFT;
	} else {
		if (dev_addr >> (GASKET_PAGE_SHIFT + entry_bits))
			return -EINVAL;
		first = dev_addr >> GASKET_PAGE_SHIFT;
		limit = pt->num_simple;
	}
	if (first >= limit || pages > limit - first)
		return -EINVAL;

	range->first = first;
	range->count = pages;
	return 0;
}

static struct gasket_pte *gasket_pt_pte(struct gasket_page_table *pt,
					const struct gasket_range *range, u32 i)
{
	u32 page = range->first + i;
	struct gasket_subtable *sub;

	if (!range->extended)
		return &pt->simple[page];
	sub = pt->subtables[page >> GASKET_SUBTABLE_SHIFT];
	return sub ? &sub->ptes[page % GASKET_PAGES_PER_SUBTABLE] : NULL;
}

/*
 * Are all leaf entries of @range of @kind? GASKET_PTE_PINNED also accepts
 * coherent pages: both are unmapped by GASKET_IOCTL_UNMAP_BUFFER.
 */
static bool gasket_pt_range_is(struct gasket_page_table *pt,
			       const struct gasket_range *range,
			       enum gasket_pte_kind kind)
{
	struct gasket_pte *pte;
	u8 found;
	u32 i;

	for (i = 0; i < range->count; i++) {
		pte = gasket_pt_pte(pt, range, i);
		found = pte ? pte->kind : GASKET_PTE_FREE;
		if (found != kind &&
		    !(kind == GASKET_PTE_PINNED && found == GASKET_PTE_COHERENT))
			return false;
	}
	return true;
}

static void __iomem *gasket_pt_lvl0_slot(struct gasket_page_table *pt,
					 u32 lvl0)
{
	return pt->slots + pt->num_simple + lvl0;
}

static void gasket_pt_free_subtable(struct gasket_page_table *pt, u32 lvl0)
{
	struct gasket_subtable *sub = pt->subtables[lvl0];

	if (sub->published)
		writeq(0, gasket_pt_lvl0_slot(pt, lvl0));
	dma_free_coherent(pt->gdev->dev, GASKET_SUBTABLE_BYTES, sub->slots,
			  sub->dma_addr);
	kvfree(sub);
	pt->subtables[lvl0] = NULL;
}

/* Undo a failed map: second-level tables the device never saw go. */
static void gasket_pt_free_unpublished(struct gasket_page_table *pt)
{
	u32 lvl0;

	for (lvl0 = 0; lvl0 < pt->total_entries - pt->num_simple; lvl0++)
		if (pt->subtables[lvl0] && !pt->subtables[lvl0]->published)
			gasket_pt_free_subtable(pt, lvl0);
}

static int gasket_pt_alloc_subtables(struct gasket_page_table *pt,
				     const struct gasket_range *range)
{
	u32 lvl0 = range->first >> GASKET_SUBTABLE_SHIFT;
	u32 last = (range->first + range->count - 1) >> GASKET_SUBTABLE_SHIFT;
	struct gasket_subtable *sub;

	for (; lvl0 <= last; lvl0++) {
		if (pt->subtables[lvl0])
			continue;
		/* Charged to the mapping process's memory cgroup. */
		sub = kvzalloc(sizeof(*sub), GFP_KERNEL_ACCOUNT);
		if (!sub)
			goto err_free;
		sub->slots = dma_alloc_coherent(pt->gdev->dev,
						GASKET_SUBTABLE_BYTES,
						&sub->dma_addr,
						GFP_KERNEL_ACCOUNT);
		if (!sub->slots) {
			kvfree(sub);
			goto err_free;
		}
		pt->subtables[lvl0] = sub;
	}
	return 0;

err_free:
	gasket_pt_free_unpublished(pt);
	return -ENOMEM;
}

/*
 * User pages to unpin in one call (pages of one folio, e.g. a hugepage,
 * then cost one reference update), all with the same dirty flag.
 */
struct gasket_unpin_batch {
	struct page **pages;	/* NULL: one page at a time */
	u32 count;
	bool dirty;
};

static void gasket_unpin_batch_init(struct gasket_unpin_batch *batch,
				    u32 pages)
{
	batch->count = 0;
	batch->dirty = false;
	/* Unmapping must not fail: without the array, page by page. */
	batch->pages = pages < 2 ? NULL :
		kmalloc_array(min_t(u32, pages, GASKET_PIN_BATCH),
			      sizeof(*batch->pages), GFP_KERNEL | __GFP_NOWARN);
}

static void gasket_unpin_batch_flush(struct gasket_unpin_batch *batch)
{
	if (batch->count)
		unpin_user_pages_dirty_lock(batch->pages, batch->count,
					    batch->dirty);
	batch->count = 0;
}

static void gasket_unpin_batch_add(struct gasket_unpin_batch *batch,
				   struct page *page, bool dirty)
{
	if (!batch->pages) {
		unpin_user_pages_dirty_lock(&page, 1, dirty);
		return;
	}
	if (batch->count == GASKET_PIN_BATCH ||
	    (batch->count && batch->dirty != dirty))
		gasket_unpin_batch_flush(batch);
	batch->pages[batch->count++] = page;
	batch->dirty = dirty;
}

static void gasket_unpin_batch_finish(struct gasket_unpin_batch *batch)
{
	gasket_unpin_batch_flush(batch);
	kfree(batch->pages);
}

/*
 * Gives back what one leaf entry holds; the device no longer sees it. A
 * group head's pinned page is DMA-unmapped now and unpinned through @batch.
 */
static void gasket_pt_release_pte(struct gasket_page_table *pt,
				  struct gasket_pte *pte,
				  struct gasket_unpin_batch *batch)
{
	switch (pte->kind) {
	case GASKET_PTE_PINNED:
		if (!pte->page)
			break;
		gasket_page_dma_unmap(&pt->page_dma, pte->page, pte->dma_addr,
				      pte->dir);
		gasket_unpin_batch_add(batch, pte->page,
				       pte->dir != DMA_TO_DEVICE);
		atomic64_dec(&pte->mm->pinned_vm);
		mmdrop(pte->mm);
		break;
	case GASKET_PTE_COHERENT:
		pt->num_coherent--;
		break;
	}
	if (pte->kind)
		pt->num_mapped--;
	memset(pte, 0, sizeof(*pte));
}

/* Makes the filled entries of @range visible to the device. */
static void gasket_pt_commit(struct gasket_page_table *pt,
			     const struct gasket_range *range)
{
	struct gasket_subtable *sub;
	struct gasket_pte *pte;
	u32 i, page, lvl0;

	for (i = 0; i < range->count; i++) {
		pte = gasket_pt_pte(pt, range, i);
		page = range->first + i;
		pt->num_mapped++;
		if (pte->kind == GASKET_PTE_COHERENT)
			pt->num_coherent++;
		if (!range->extended) {
			writeq(pte->dma_addr | GASKET_VALID_SLOT_FLAG,
			       &pt->slots[page]);
			continue;
		}
		sub = pt->subtables[page >> GASKET_SUBTABLE_SHIFT];
		sub->slots[page % GASKET_PAGES_PER_SUBTABLE] =
			cpu_to_le64(pte->dma_addr | GASKET_VALID_SLOT_FLAG);
	}
	if (!range->extended)
		return;

	/* Second-level entries reach memory before the device can walk them. */
	wmb();
	lvl0 = range->first >> GASKET_SUBTABLE_SHIFT;
	for (; lvl0 <= (range->first + range->count - 1) >> GASKET_SUBTABLE_SHIFT;
	     lvl0++) {
		sub = pt->subtables[lvl0];
		if (sub->published)
			continue;
		writeq(sub->dma_addr | GASKET_VALID_SLOT_FLAG,
		       gasket_pt_lvl0_slot(pt, lvl0));
		sub->published = true;
	}
}

/* Clears the device's view of @range, then releases its pages. */
static void gasket_pt_clear(struct gasket_page_table *pt,
			    const struct gasket_range *range)
{
	struct gasket_unpin_batch batch;
	struct gasket_pte *pte;
	u32 i, page;

	for (i = 0; i < range->count; i++) {
		page = range->first + i;
		if (!range->extended)
			writeq(0, &pt->slots[page]);
		else
			pt->subtables[page >> GASKET_SUBTABLE_SHIFT]
				->slots[page % GASKET_PAGES_PER_SUBTABLE] = 0;
	}
	if (range->extended)
		wmb(); /* cleared entries reach memory before the pages go */
	gasket_unpin_batch_init(&batch, range->count);
	for (i = 0; i < range->count; i++) {
		pte = gasket_pt_pte(pt, range, i);
		gasket_pt_release_pte(pt, pte, &batch);
	}
	gasket_unpin_batch_finish(&batch);
}

/*
 * Releases entries filled by a map that then failed (never committed).
 * Pinned pages stay with the caller's struct gasket_pin.
 */
static void gasket_pt_unfill(struct gasket_page_table *pt,
			     const struct gasket_range *range, u32 filled)
{
	struct gasket_pte *pte;
	u32 i;

	for (i = 0; i < filled; i++) {
		pte = gasket_pt_pte(pt, range, i);
		if (pte->kind == GASKET_PTE_PINNED && pte->page)
			gasket_page_dma_unmap(&pt->page_dma, pte->page,
					      pte->dma_addr, pte->dir);
		memset(pte, 0, sizeof(*pte));
	}
}

/*
 * If [host_addr, +size) lies in a mapping of this device's coherent
 * buffer, fills @range with its pages: 1 if so, 0 if it is no coherent
 * mapping, -EINVAL if it only partly is.
 */
static int gasket_pt_fill_coherent(struct gasket_page_table *pt,
				   const struct gasket_range *range,
				   u64 host_addr, u64 size,
				   enum dma_data_direction dir)
{
	struct gasket_pte *pte;
	dma_addr_t dma;
	int ret;
	u32 i;

	ret = gasket_coherent_lookup(pt->gdev, host_addr, size, &dma);
	if (ret <= 0)
		return ret;
	for (i = 0; i < range->count; i++) {
		pte = gasket_pt_pte(pt, range, i);
		pte->dma_addr = dma + ((u64)i << GASKET_PAGE_SHIFT);
		pte->kind = GASKET_PTE_COHERENT;
		pte->dir = dir;
	}
	return 1;
}

/*
 * DMA-maps the pinned pages into @range, each into its group of entries.
 * An entry is only written once its page is mapped: a failed mapping
 * leaves no error address behind.
 */
static int gasket_pt_fill_pinned(struct gasket_page_table *pt,
				 const struct gasket_range *range,
				 const struct gasket_pin *pin)
{
	struct gasket_pte *pte;
	struct page *page;
	dma_addr_t dma = 0;
	u32 i, in_page;
	int ret;

	for (i = 0; i < range->count; i++) {
		in_page = i % GASKET_ENTRIES_PER_PAGE;
		page = in_page ? NULL : pin->pages[i / GASKET_ENTRIES_PER_PAGE];
		if (page) {
			ret = gasket_page_dma_map(&pt->page_dma, page, pin->dir,
						  &dma);
			if (ret) {
				gasket_pt_unfill(pt, range, i);
				return ret;
			}
		}
		pte = gasket_pt_pte(pt, range, i);
		pte->dma_addr = dma + in_page * GASKET_PAGE_SIZE;
		pte->page = page;
		pte->kind = GASKET_PTE_PINNED;
		pte->dir = pin->dir;
	}
	return 0;
}

/* The pinned pages now belong to the group heads, each with its charge. */
static void gasket_pt_take_pins(struct gasket_page_table *pt,
				const struct gasket_range *range,
				struct gasket_pin *pin)
{
	struct gasket_pte *pte;
	u32 i;

	for (i = 0; i < range->count; i += GASKET_ENTRIES_PER_PAGE) {
		pte = gasket_pt_pte(pt, range, i);
		mmgrab(pin->mm);
		pte->mm = pin->mm;
	}
	pin->count = 0;
}

/*
 * Charges @pages to the caller's RLIMIT_MEMLOCK, as RDMA does for its
 * long-term pins; CAP_IPC_LOCK lifts the limit.
 */
static int gasket_pin_charge(struct gasket_dev *gdev, struct mm_struct *mm,
			     u32 pages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	s64 pinned = atomic64_add_return(pages, &mm->pinned_vm);

	if ((u64)pinned <= limit || capable(CAP_IPC_LOCK))
		return 0;
	atomic64_sub(pages, &mm->pinned_vm);
	dev_warn_ratelimited(gdev->dev,
			     "%s[%d]: mapping %u KiB would exceed RLIMIT_MEMLOCK (%lu KiB, %lld KiB already pinned); raise it with ulimit -l or LimitMEMLOCK=\n",
			     current->comm, task_tgid_nr(current),
			     pages << (PAGE_SHIFT - 10), limit << (PAGE_SHIFT - 10),
			     (long long)(pinned - pages) << (PAGE_SHIFT - 10));
	return -ENOMEM;
}

int gasket_page_table_pin(struct gasket_dev *gdev, u64 host_addr, u64 size,
			  enum dma_data_direction dir, struct gasket_pin *pin)
{
	/*
	 * Pinned for writing whatever the direction: an entry has no
	 * read-only bit, so without an IOMMU the chip can write every page it
	 * maps. A read-only pin would let it write the shared zero page or
	 * the page cache of a file the process may only read.
	 */
	unsigned int gup_flags = GASKET_FOLL_LONGTERM | FOLL_WRITE;
	u64 max_pages = 0;
	u32 count;
	int got, want, i;
	int ret;

	memset(pin, 0, sizeof(*pin));
	pin->dir = dir;
	if (!size || !PAGE_ALIGNED(size) || !PAGE_ALIGNED(host_addr) ||
	    size > U64_MAX - host_addr)
		return -EINVAL;
	/* No table maps more than all its entries as extended ones. */
	for (i = 0; i < gdev->desc->num_page_tables; i++)
		max_pages = max_t(u64, max_pages,
				  (u64)gdev->desc->page_table_configs[i].max_entries *
				  GASKET_PAGES_PER_SUBTABLE);
	if (size >> PAGE_SHIFT > max_pages)
		return -EINVAL;
	count = size >> PAGE_SHIFT;

	/* Pages of the coherent buffer are not pinned; the map finds them. */
	if (gasket_coherent_is_mapping(host_addr))
		return 0;

	pin->mm = current->mm;
	mmgrab(pin->mm);
	ret = gasket_pin_charge(gdev, pin->mm, count);
	if (ret)
		goto err_mmdrop;
	pin->pages = kvmalloc_array(count, sizeof(*pin->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!pin->pages) {
		ret = -ENOMEM;
		goto err_uncharge;
	}

	while (pin->count < count) {
		want = min_t(u32, count - pin->count, GASKET_PIN_BATCH);
		got = pin_user_pages_fast(host_addr +
					  ((u64)pin->count << PAGE_SHIFT),
					  want, gup_flags,
					  pin->pages + pin->count);
		if (got <= 0) {
			ret = got ? got : -EFAULT;
			goto err_unpin;
		}
		pin->count += got;
	}
	return 0;

err_unpin:
	if (ret == -EFAULT && dir == DMA_TO_DEVICE)
		dev_info_ratelimited(gdev->dev,
				     "%s[%d]: cannot map a buffer for the chip to read: it is not mapped, or the process may not write it (the chip cannot be limited to reading)\n",
				     current->comm, task_tgid_nr(current));
	unpin_user_pages(pin->pages, pin->count);
	kvfree(pin->pages);
err_uncharge:
	atomic64_sub(count, &pin->mm->pinned_vm);
err_mmdrop:
	mmdrop(pin->mm);
	memset(pin, 0, sizeof(*pin));
	return ret;
}

void gasket_page_table_unpin(struct gasket_pin *pin)
{
	if (!pin->mm)
		return;
	if (pin->count) {
		unpin_user_pages(pin->pages, pin->count);
		atomic64_sub(pin->count, &pin->mm->pinned_vm);
	}
	kvfree(pin->pages);
	mmdrop(pin->mm);
	memset(pin, 0, sizeof(*pin));
}

int gasket_page_table_map(struct gasket_page_table *pt, struct gasket_pin *pin,
			  u64 host_addr, u64 dev_addr, u64 size)
{
	struct gasket_range range;
	int ret;

	lockdep_assert_held(&pt->gdev->mutex);

	ret = gasket_pt_range(pt, dev_addr, size, &range);
	if (ret)
		return ret;
	if (!gasket_pt_range_is(pt, &range, GASKET_PTE_FREE))
		return -EBUSY;

	if (range.extended) {
		ret = gasket_pt_alloc_subtables(pt, &range);
		if (ret)
			return ret;
	}

	if (pin->pages) {
		ret = gasket_pt_fill_pinned(pt, &range, pin);
	} else {
		ret = gasket_pt_fill_coherent(pt, &range, host_addr, size,
					      pin->dir);
		/* The coherent mapping went away since it was looked up. */
		if (!ret)
			ret = -EFAULT;
	}
	if (ret < 0) {
		gasket_pt_free_unpublished(pt);
		return ret;
	}

	if (pin->pages)
		gasket_pt_take_pins(pt, &range, pin);
	gasket_pt_commit(pt, &range);
	dev_dbg(pt->gdev->dev, "map: %u %s pages of %s memory at %#llx\n",
		range.count, range.extended ? "extended" : "simple",
		ret ? "coherent" : "user", dev_addr);
	return 0;
}

int gasket_page_table_unmap(struct gasket_page_table *pt, u64 dev_addr,
			    u64 size)
{
	struct gasket_range range;
	int ret;

	lockdep_assert_held(&pt->gdev->mutex);

	ret = gasket_pt_range(pt, dev_addr, size, &range);
	if (ret)
		return ret;
	/* Everything in the range must be mapped, and not from a dma-buf. */
	if (!gasket_pt_range_is(pt, &range, GASKET_PTE_PINNED))
		return -EINVAL;
	gasket_pt_clear(pt, &range);
	dev_dbg(pt->gdev->dev, "unmap: %u pages at %#llx\n", range.count,
		dev_addr);
	return 0;
}

static int gasket_pt_fill_dmabuf(struct gasket_page_table *pt,
				 const struct gasket_range *range,
				 struct sg_table *sgt,
				 enum dma_data_direction dir)
{
	struct sg_dma_page_iter iter;
	struct gasket_pte *pte;
	u32 filled = 0, in_page;

	for_each_sgtable_dma_page(sgt, &iter, 0) {
		if (filled == range->count)
			break;
		for (in_page = 0; in_page < GASKET_ENTRIES_PER_PAGE; in_page++) {
			pte = gasket_pt_pte(pt, range, filled++);
			pte->dma_addr = sg_page_iter_dma_address(&iter) +
					in_page * GASKET_PAGE_SIZE;
			pte->kind = GASKET_PTE_DMABUF;
			pte->dir = dir;
		}
	}
	if (filled < range->count) {
		gasket_pt_unfill(pt, range, filled);
		return -EINVAL;
	}
	return 0;
}

/* gasket_pt_range() for a dma-buf mapping, which counts in kernel pages. */
static int gasket_pt_page_range(struct gasket_page_table *pt, u64 dev_addr,
				u32 num_pages, struct gasket_range *range)
{
	return gasket_pt_range(pt, dev_addr, (u64)num_pages << PAGE_SHIFT,
			       range);
}

/* dma_buf_get(), with "not a dma-buf" reported as a bad descriptor. */
static struct dma_buf *gasket_dmabuf_get(int fd)
{
	struct dma_buf *dmabuf = fd < 0 ? ERR_PTR(-EBADF) : dma_buf_get(fd);

	if (IS_ERR(dmabuf) && PTR_ERR(dmabuf) == -EINVAL)
		return ERR_PTR(-EBADF);
	return dmabuf;
}

int gasket_page_table_map_dmabuf(struct gasket_page_table *pt, int fd,
				 u64 dev_addr, u32 num_pages,
				 enum dma_data_direction dir)
{
	struct gasket_dmabuf_mapping *mapping;
	struct gasket_range range;
	int ret;

	lockdep_assert_held(&pt->gdev->mutex);

	ret = gasket_pt_page_range(pt, dev_addr, num_pages, &range);
	if (ret)
		return ret;
	if (!gasket_pt_range_is(pt, &range, GASKET_PTE_FREE))
		return -EBUSY;

	mapping = kzalloc(sizeof(*mapping), GFP_KERNEL);
	if (!mapping)
		return -ENOMEM;
	mapping->dmabuf = gasket_dmabuf_get(fd);
	if (IS_ERR(mapping->dmabuf)) {
		ret = PTR_ERR(mapping->dmabuf);
		goto err_free;
	}
	if (num_pages > mapping->dmabuf->size >> PAGE_SHIFT) {
		ret = -EINVAL;
		goto err_put;
	}

	mapping->attach = dma_buf_attach(mapping->dmabuf, pt->gdev->dev);
	if (IS_ERR(mapping->attach)) {
		ret = PTR_ERR(mapping->attach);
		goto err_put;
	}
	mapping->sgt = gasket_dma_buf_map_attachment(mapping->attach, dir);
	if (IS_ERR(mapping->sgt)) {
		ret = PTR_ERR(mapping->sgt);
		goto err_detach;
	}

	if (range.extended) {
		ret = gasket_pt_alloc_subtables(pt, &range);
		if (ret)
			goto err_unmap;
	}
	ret = gasket_pt_fill_dmabuf(pt, &range, mapping->sgt, dir);
	if (ret) {
		gasket_pt_free_unpublished(pt);
		goto err_unmap;
	}
	gasket_pt_commit(pt, &range);

	mapping->dir = dir;
	mapping->dev_addr = dev_addr;
	mapping->num_pages = num_pages;
	list_add(&mapping->list, &pt->dmabufs);
	dev_dbg(pt->gdev->dev, "map: %u dma-buf pages (fd %d) at %#llx\n",
		num_pages, fd, dev_addr);
	return 0;

err_unmap:
	gasket_dma_buf_unmap_attachment(mapping->attach, mapping->sgt, dir);
err_detach:
	dma_buf_detach(mapping->dmabuf, mapping->attach);
err_put:
	dma_buf_put(mapping->dmabuf);
err_free:
	kfree(mapping);
	return ret;
}

static void gasket_pt_drop_dmabuf(struct gasket_page_table *pt,
				  struct gasket_dmabuf_mapping *mapping)
{
	struct gasket_range range;

	/* Checked when mapped; the partition cannot change under it. */
	if (!gasket_pt_page_range(pt, mapping->dev_addr, mapping->num_pages,
				  &range))
		gasket_pt_clear(pt, &range);
	gasket_dma_buf_unmap_attachment(mapping->attach, mapping->sgt,
					mapping->dir);
	dma_buf_detach(mapping->dmabuf, mapping->attach);
	dma_buf_put(mapping->dmabuf);
	list_del(&mapping->list);
	kfree(mapping);
}

int gasket_page_table_unmap_dmabuf(struct gasket_page_table *pt, int fd,
				   u64 dev_addr, u32 num_pages)
{
	struct gasket_dmabuf_mapping *mapping;
	struct gasket_range range;
	struct dma_buf *dmabuf;
	int ret;

	lockdep_assert_held(&pt->gdev->mutex);

	ret = gasket_pt_page_range(pt, dev_addr, num_pages, &range);
	if (ret)
		return ret;
	dmabuf = gasket_dmabuf_get(fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);

	ret = -EINVAL;
	list_for_each_entry(mapping, &pt->dmabufs, list) {
		if (mapping->dmabuf == dmabuf && mapping->dev_addr == dev_addr &&
		    mapping->num_pages == num_pages) {
			gasket_pt_drop_dmabuf(pt, mapping);
			dev_dbg(pt->gdev->dev,
				"unmap: %u dma-buf pages (fd %d) at %#llx\n",
				num_pages, fd, dev_addr);
			ret = 0;
			break;
		}
	}
	dma_buf_put(dmabuf);
	return ret;
}

void gasket_page_table_unmap_all(struct gasket_page_table *pt)
{
	struct gasket_dmabuf_mapping *mapping, *next;
	struct gasket_unpin_batch batch;
	struct gasket_range range;
	u32 i, lvl0;

	lockdep_assert_held(&pt->gdev->mutex);

	list_for_each_entry_safe(mapping, next, &pt->dmabufs, list)
		gasket_pt_drop_dmabuf(pt, mapping);

	/* Simple entries in runs of mapped ones, each cleared at once. */
	range.extended = false;
	for (i = 0; i < pt->num_simple; i += range.count) {
		range.first = i;
		range.count = 1;
		if (!pt->simple[i].kind)
			continue;
		while (i + range.count < pt->num_simple &&
		       pt->simple[i + range.count].kind)
			range.count++;
		gasket_pt_clear(pt, &range);
	}

	for (lvl0 = 0; lvl0 < pt->total_entries - pt->num_simple; lvl0++) {
		if (!pt->subtables[lvl0])
			continue;
		/* Unhook the whole table first, then release its pages. */
		if (pt->subtables[lvl0]->published)
			writeq(0, gasket_pt_lvl0_slot(pt, lvl0));
		pt->subtables[lvl0]->published = false;
		gasket_unpin_batch_init(&batch, GASKET_PAGES_PER_SUBTABLE);
		for (i = 0; i < GASKET_PAGES_PER_SUBTABLE; i++)
			gasket_pt_release_pte(pt, &pt->subtables[lvl0]->ptes[i],
					      &batch);
		gasket_unpin_batch_finish(&batch);
		gasket_pt_free_subtable(pt, lvl0);
	}
}

int gasket_page_table_partition(struct gasket_page_table *pt, u64 num_simple)
{
	u32 i;

	lockdep_assert_held(&pt->gdev->mutex);

	if (num_simple > pt->total_entries)
		return -EINVAL;
	/* Moving the split must not move live entries. */
	if (!list_empty(&pt->dmabufs))
		return -EBUSY;
	for (i = 0; i < pt->total_entries - pt->num_simple; i++) {
		if (!pt->subtables[i])
			continue;
		if (memchr_inv(pt->subtables[i]->ptes, 0,
			       sizeof(pt->subtables[i]->ptes)))
			return -EBUSY;
	}
	for (i = num_simple; i < pt->num_simple; i++)
		if (pt->simple[i].kind)
			return -EBUSY;

	/* Only empty second-level tables are left. */
	for (i = 0; i < pt->total_entries - pt->num_simple; i++)
		if (pt->subtables[i])
			gasket_pt_free_subtable(pt, i);

	WRITE_ONCE(pt->num_simple, num_simple);
	writeq(num_simple, pt->extended_reg);
	dev_dbg(pt->gdev->dev, "page table: %llu of %u entries simple\n",
		num_simple, pt->total_entries);
	return 0;
}

void gasket_page_table_reset(struct gasket_page_table *pt)
{
	gasket_page_table_unmap_all(pt);
	WRITE_ONCE(pt->num_simple, pt->total_entries);
	writeq(pt->total_entries, pt->extended_reg);
}

void gasket_page_table_restore(struct gasket_page_table *pt)
{
	struct gasket_subtable *sub;
	struct gasket_pte *pte;
	u32 i;

	lockdep_assert_held(&pt->gdev->mutex);

	writeq(pt->num_simple, pt->extended_reg);
	for (i = 0; i < pt->num_simple; i++) {
		pte = &pt->simple[i];
		writeq(pte->kind ? pte->dma_addr | GASKET_VALID_SLOT_FLAG : 0,
		       &pt->slots[i]);
	}
	/* The second-level tables are in host memory: they were not lost. */
	for (i = 0; i < pt->total_entries - pt->num_simple; i++) {
		sub = pt->subtables[i];
		writeq(sub && sub->published ?
		       sub->dma_addr | GASKET_VALID_SLOT_FLAG : 0,
		       gasket_pt_lvl0_slot(pt, i));
	}
	dev_dbg(pt->gdev->dev, "page table restored: %u pages mapped\n",
		pt->num_mapped);
}

int gasket_page_table_init(struct gasket_dev *gdev, int index)
{
	const struct gasket_driver_desc *desc = gdev->desc;
	const struct gasket_page_table_config *config =
		&desc->page_table_configs[index];
	int bar = desc->page_table_bar_index;
	u64 bar_size = desc->bar_descriptions[bar].size;
	struct gasket_page_table *pt;
	u64 entries;

	BUILD_BUG_ON(GASKET_PAGES_PER_SUBTABLE % GASKET_ENTRIES_PER_PAGE);
	entries = gasket_dev_read_64(gdev, bar, config->size_reg);
	if (!entries || !is_power_of_2(entries) ||
	    entries > config->max_entries ||
	    config->base_reg + entries * sizeof(u64) > bar_size ||
	    config->extended_reg + sizeof(u64) > bar_size ||
	    config->extended_bit < GASKET_EXTENDED_LVL0_SHIFT + ilog2(entries) ||
	    config->extended_bit > 63) {
		dev_err(gdev->dev, "page table %d: unusable size %llu (max %u)\n",
			index, entries, config->max_entries);
		return -ENODEV;
	}

	pt = kzalloc(sizeof(*pt), GFP_KERNEL);
	if (!pt)
		return -ENOMEM;
	pt->simple = kvcalloc(entries, sizeof(*pt->simple), GFP_KERNEL);
	pt->subtables = kvcalloc(entries, sizeof(*pt->subtables), GFP_KERNEL);
	if (!pt->simple || !pt->subtables) {
		kvfree(pt->subtables);
		kvfree(pt->simple);
		kfree(pt);
		return -ENOMEM;
	}
	pt->gdev = gdev;
	pt->slots = gdev->bar_data[bar].virt_base + config->base_reg;
	pt->extended_reg = gdev->bar_data[bar].virt_base + config->extended_reg;
	pt->extended_flag = BIT_ULL(config->extended_bit);
	pt->total_entries = entries;
	INIT_LIST_HEAD(&pt->dmabufs);
	gasket_page_dma_init(&pt->page_dma, gdev->dev);

	/* All entries simple, as after a chip reset. */
	pt->num_simple = entries;
	writeq(entries, pt->extended_reg);

	gdev->page_table[index] = pt;
	return 0;
}

void gasket_page_table_fini(struct gasket_dev *gdev, int index)
{
	struct gasket_page_table *pt = gdev->page_table[index];

	if (!pt)
		return;
	gasket_page_table_unmap_all(pt);
	gasket_page_dma_fini(&pt->page_dma);
	gdev->page_table[index] = NULL;
	kvfree(pt->subtables);
	kvfree(pt->simple);
	kfree(pt);
}
