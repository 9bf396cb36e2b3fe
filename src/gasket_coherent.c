// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket coherent buffer: one DMA-coherent allocation per device that
 * user space configures with GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, maps
 * with mmap() at the driver's offset and hands to MAP_BUFFER like any
 * other user memory.
 *
 * Its memory lives while it is configured or mapped: freeing it while a
 * process still maps it would hand freed pages to user space. Only files
 * open for writing may map it, so at the last writer's close nothing does.
 * Removal is the exception: the device (and the DMA API's view of it) is
 * going, so gasket_coherent_remove() frees the memory at once, after the
 * core has zapped every user mapping; the fault handler then refuses to
 * map anything back, and the later munmap() only drops the count.
 * An mmap() that filled its mapping just before removal is linked where
 * the zap finds it only when it returns to the kernel's mmap code, so
 * removal first waits for the mmap_lock of every mm that mapped the buffer.
 */

#include <linux/dma-mapping.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "gasket_coherent.h"
#include "gasket_compat.h"
#include "gasket_core.h"
#include "gasket_page_table.h"

/* An mm that mapped the buffer, held with mmgrab(). */
struct gasket_coherent_mapper {
	struct list_head node;
	struct mm_struct *mm;
};

void gasket_coherent_init(struct gasket_dev *gdev)
{
	INIT_LIST_HEAD(&gdev->coherent_buffer.mappers);
}

static void gasket_coherent_drop_mappers(struct list_head *mappers)
{
	struct gasket_coherent_mapper *m, *next;

	list_for_each_entry_safe(m, next, mappers, node) {
		list_del(&m->node);
		mmdrop(m->mm);
		kfree(m);
	}
}

static int gasket_coherent_add_mapper(struct gasket_coherent_buffer *cb,
				      struct mm_struct *mm)
{
	struct gasket_coherent_mapper *m;

	list_for_each_entry(m, &cb->mappers, node)
		if (m->mm == mm)
			return 0;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	mmgrab(mm);
	m->mm = mm;
	list_add(&m->node, &cb->mappers);
	return 0;
}

static void gasket_coherent_free_memory(struct gasket_dev *gdev)
{
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;

	lockdep_assert_held(&gdev->map_lock);
	if (!cb->virt_base || cb->configured || cb->map_count)
		return;
	dma_free_coherent(gdev->dev, cb->length_bytes, cb->virt_base,
			  cb->phys_base);
	cb->virt_base = NULL;
	cb->phys_base = 0;
	cb->length_bytes = 0;
	gasket_coherent_drop_mappers(&cb->mappers);
}

static void gasket_coherent_vma_open(struct vm_area_struct *vma)
{
	struct gasket_dev *gdev = vma->vm_private_data;

	mutex_lock(&gdev->map_lock);
	gdev->coherent_buffer.map_count++;
	mutex_unlock(&gdev->map_lock);
}

static void gasket_coherent_vma_close(struct vm_area_struct *vma)
{
	struct gasket_dev *gdev = vma->vm_private_data;

	mutex_lock(&gdev->map_lock);
	gdev->coherent_buffer.map_count--;
	gasket_coherent_free_memory(gdev);
	mutex_unlock(&gdev->map_lock);
}

/* The pages are mapped at mmap(); a fault comes only after removal's zap. */
static vm_fault_t gasket_coherent_vma_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct gasket_coherent_vm_ops = {
	.open = gasket_coherent_vma_open,
	.close = gasket_coherent_vma_close,
	.fault = gasket_coherent_vma_fault,
};

bool gasket_coherent_size_ok(struct gasket_dev *gdev, u64 size)
{
	return size && PAGE_ALIGNED(size) &&
	       size <= gdev->desc->coherent_buffer_description.size;
}

int gasket_coherent_alloc(struct gasket_dev *gdev, u64 size)
{
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;
	int ret = 0;

	lockdep_assert_held(&gdev->mutex);
	if (!gasket_coherent_size_ok(gdev, size))
		return -EINVAL;

	mutex_lock(&gdev->map_lock);
	if (cb->virt_base) {
		ret = -EBUSY;
		goto out;
	}
	cb->virt_base = dma_alloc_coherent(gdev->dev, size, &cb->phys_base,
					   GFP_KERNEL);
	if (!cb->virt_base) {
		ret = -ENOMEM;
		goto out;
	}
	cb->length_bytes = size;
	cb->configured = true;
out:
	mutex_unlock(&gdev->map_lock);
	return ret;
}

int gasket_coherent_free(struct gasket_dev *gdev)
{
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;
	int ret = 0;
	int i;

	lockdep_assert_held(&gdev->mutex);
	for (i = 0; i < gdev->num_page_tables; i++)
		if (gasket_page_table_uses_coherent(gdev->page_table[i]))
			return -EBUSY;

	mutex_lock(&gdev->map_lock);
	if (!cb->configured)
		ret = -EINVAL;
	else if (cb->map_count)
		ret = -EBUSY;
	else
		cb->configured = false;
	gasket_coherent_free_memory(gdev);
	mutex_unlock(&gdev->map_lock);
	return ret;
}

void gasket_coherent_release(struct gasket_dev *gdev)
{
	mutex_lock(&gdev->map_lock);
	gdev->coherent_buffer.configured = false;
	gasket_coherent_free_memory(gdev);
	mutex_unlock(&gdev->map_lock);
}

void gasket_coherent_wait_for_mappers(struct gasket_dev *gdev)
{
	struct gasket_coherent_mapper *m;
	LIST_HEAD(mappers);

	/* gdev->removed is set: no mmap() adds a mapper any more. */
	mutex_lock(&gdev->map_lock);
	list_splice_init(&gdev->coherent_buffer.mappers, &mappers);
	mutex_unlock(&gdev->map_lock);

	/* An mmap() holds its mm's mmap_lock until its mapping is linked. */
	list_for_each_entry(m, &mappers, node) {
		mmap_read_lock(m->mm);
		mmap_read_unlock(m->mm);
	}
	gasket_coherent_drop_mappers(&mappers);
}

void gasket_coherent_remove(struct gasket_dev *gdev)
{
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;

	lockdep_assert_held(&gdev->mutex);
	mutex_lock(&gdev->map_lock);
	cb->configured = false;
	if (cb->virt_base)
		dma_free_coherent(gdev->dev, cb->length_bytes, cb->virt_base,
				  cb->phys_base);
	cb->virt_base = NULL;
	cb->phys_base = 0;
	cb->length_bytes = 0;
	gasket_coherent_drop_mappers(&cb->mappers);
	mutex_unlock(&gdev->map_lock);
}

int gasket_coherent_mmap(struct gasket_dev *gdev, struct vm_area_struct *vma)
{
	const struct gasket_coherent_buffer_desc *desc =
		&gdev->desc->coherent_buffer_description;
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (!(vma->vm_file->f_mode & FMODE_WRITE) ||
	    ((vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)) &
	     ~desc->permissions))
		return -EPERM;

	mutex_lock(&gdev->map_lock);
	if (gdev->removed) {
		ret = -ENODEV;
		goto out;
	}
	if (!cb->configured || len > cb->length_bytes) {
		ret = -EINVAL;
		goto out;
	}
	ret = gasket_coherent_add_mapper(cb, vma->vm_mm);
	if (ret)
		goto out;
	/* The offset selected the buffer; the mapping starts at its start. */
	vma->vm_pgoff = 0;
	gasket_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	ret = dma_mmap_coherent(gdev->dev, vma, cb->virt_base, cb->phys_base,
				len);
	if (ret)
		goto out;
	vma->vm_ops = &gasket_coherent_vm_ops;
	vma->vm_private_data = gdev;
	cb->map_count++;
out:
	mutex_unlock(&gdev->map_lock);
	return ret;
}

/**
 * gasket_coherent_is_mapping() - is a user address in a coherent buffer?
 * @host_addr: a user address in the calling process
 *
 * Tells MAP_BUFFER not to pin the pages (they cannot be pinned);
 * gasket_coherent_lookup() checks the mapping again under the device
 * mutex.
 *
 * Context: process context, no device lock needed.
 * Return: true if @host_addr lies in a mapping of any gasket device's
 * coherent buffer.
 */
bool gasket_coherent_is_mapping(u64 host_addr)
{
	struct vm_area_struct *vma;
	bool ret;

	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, host_addr);
	ret = vma && vma->vm_start <= host_addr &&
	      vma->vm_ops == &gasket_coherent_vm_ops;
	mmap_read_unlock(current->mm);
	return ret;
}

/**
 * gasket_coherent_lookup() - the DMA address behind a user address
 * @gdev: the device
 * @host_addr: start of a user buffer in the calling process
 * @size: its length in bytes
 * @dma: set to the DMA address of @host_addr when 1 is returned
 *
 * Context: gdev->mutex held, which keeps the buffer allocated until the
 * caller has written the page table entries.
 * Return: 1 if [host_addr, +size) lies in a mapping of this device's
 * coherent buffer, 0 if it is no coherent mapping (pin it instead),
 * -EINVAL if it only partly is.
 */
int gasket_coherent_lookup(struct gasket_dev *gdev, u64 host_addr, u64 size,
			   dma_addr_t *dma)
{
	struct gasket_coherent_buffer *cb = &gdev->coherent_buffer;
	struct vm_area_struct *vma;
	u64 offset;
	int ret = 0;

	lockdep_assert_held(&gdev->mutex);
	mmap_read_lock(current->mm);
	vma = find_vma(current->mm, host_addr);
	if (!vma || vma->vm_start > host_addr ||
	    vma->vm_ops != &gasket_coherent_vm_ops)
		goto out;
	ret = -EINVAL;
	if (vma->vm_private_data != gdev || size > vma->vm_end - host_addr)
		goto out;

	mutex_lock(&gdev->map_lock);
	offset = ((u64)vma->vm_pgoff << PAGE_SHIFT) + host_addr - vma->vm_start;
	if (cb->virt_base && offset + size <= cb->length_bytes) {
		*dma = cb->phys_base + offset;
		ret = 1;
	}
	mutex_unlock(&gdev->map_lock);
out:
	mmap_read_unlock(current->mm);
	return ret;
}
