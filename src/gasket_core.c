// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket framework core: device lifetime, the character device, ownership
 * of the node and mmap() of BAR regions.
 *
 * Lifetime: the PCI binding holds one reference on a gasket_dev and every
 * open file another, so files may outlive a removed device. Removal sets
 * gdev->removed and releases hardware resources; file operations then fail
 * with -ENODEV and the structure goes with the last reference. An open
 * file also pins the device driver's module, so its callbacks and
 * descriptor stay valid for as long as files use them.
 *
 * User mappings: every open file of a device uses the address space of
 * one inode the device owns (on an internal filesystem, as DRM and VFIO
 * do), so removal can zap all of them with one unmap_mapping_range(),
 * whichever node a process opened. BAR pages are inserted at fault time
 * under map_lock, which also guards gdev->removed: once removal has set
 * it and zapped, no BAR page can come back.
 */
#include <linux/capability.h>
#include <linux/cdev.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/pci.h>
#include <linux/pseudo_fs.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "gasket_coherent.h"
#include "gasket_compat.h"
#include "gasket_core.h"
#include "gasket_interrupt.h"
#include "gasket_ioctl.h"
#include "gasket_page_table.h"
#include "gasket_sysfs.h"

#define GASKET_DMA_BITS_MIN 32
#define GASKET_DMA_BITS_MAX 64

static unsigned int dma_bit_mask = GASKET_DMA_BITS_MAX;
module_param(dma_bit_mask, uint, 0444);
MODULE_PARM_DESC(dma_bit_mask,
		 "Width in bits of the DMA addresses devices may be given, 32..64 "
		 "(default 64; out of range values fall back to 64). Read at "
		 "module load; applies to devices probed afterwards.");

#define GASKET_MINORS (GASKET_FRAMEWORK_DESC_MAX * GASKET_DEV_MAX)

/* One device driver (descriptor) served by the framework: its class. */
struct gasket_class_slot {
	const struct gasket_driver_desc *desc;	/* NULL: slot free */
	struct class *class;
	struct ida ida;				/* device indices N */
	unsigned int num_devices;
	unsigned int first_minor;
};

static DEFINE_MUTEX(gasket_slots_lock); /* Protects: gasket_slots, gasket_devices */
static struct gasket_class_slot gasket_slots[GASKET_FRAMEWORK_DESC_MAX];
/* Enabled devices by minor, for open(). */
static struct gasket_dev *gasket_devices[GASKET_MINORS];

static dev_t gasket_devt;
static struct cdev gasket_cdev;

/* Internal filesystem holding one inode per device, for its mappings. */
#define GASKET_FS_MAGIC 0x6761736b	/* "gask" */
static struct vfsmount *gasket_fs_mnt;
static int gasket_fs_count;	/* devices pinning the mount */

static int gasket_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, GASKET_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * No .owner: the mount lives only while a device does, and every device
 * is freed while its device driver, which depends on this module, is
 * still loaded (its binding or an open file pins it). A module reference
 * here would only show up as one more user of gasket.
 */
static struct file_system_type gasket_fs_type = {
	.name = "gasket",
	.init_fs_context = gasket_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

static int gasket_mapping_init(struct gasket_dev *gdev)
{
	struct inode *inode;
	int ret;

	ret = simple_pin_fs(&gasket_fs_type, &gasket_fs_mnt, &gasket_fs_count);
	if (ret)
		return ret;
	inode = alloc_anon_inode(gasket_fs_mnt->mnt_sb);
	if (IS_ERR(inode)) {
		simple_release_fs(&gasket_fs_mnt, &gasket_fs_count);
		return PTR_ERR(inode);
	}
	gdev->mapping_inode = inode;
	return 0;
}

static void gasket_mapping_fini(struct gasket_dev *gdev)
{
	if (!gdev->mapping_inode)
		return;
	iput(gdev->mapping_inode);
	gdev->mapping_inode = NULL;
	simple_release_fs(&gasket_fs_mnt, &gasket_fs_count);
}

static void gasket_dev_release(struct kref *kref)
{
	struct gasket_dev *gdev = container_of(kref, struct gasket_dev, kref);

	gasket_mapping_fini(gdev);
	pci_dev_put(gdev->pci_dev);
	kfree(gdev);
}

static void gasket_dev_put(struct gasket_dev *gdev)
{
	kref_put(&gdev->kref, gasket_dev_release);
}

static int gasket_compute_status(struct gasket_dev *gdev)
{
	int status = GASKET_STATUS_ALIVE;
	int i;

	if (READ_ONCE(gdev->removed))
		return GASKET_STATUS_DRIVER_EXIT;
	if (!READ_ONCE(gdev->enabled) || READ_ONCE(gdev->offline))
		return GASKET_STATUS_DEAD;

	if (gdev->desc->device_status_cb)
		status = min(status, gdev->desc->device_status_cb(gdev));
	status = min(status, gasket_interrupt_status(gdev));
	for (i = 0; i < gdev->num_page_tables; i++)
		if (!gasket_page_table_num_entries(gdev, i))
			status = min(status, (int)GASKET_STATUS_LAMED);
	return status;
}

int gasket_get_status(struct gasket_dev *gdev)
{
	int seq = atomic_read(&gdev->dead_seq);
	int status;

	smp_rmb();	/* the driver state read below is no older than seq */
	status = gasket_compute_status(gdev);
	WRITE_ONCE(gdev->status, status);
	/*
	 * A gasket_set_status_dead() while we computed may be newer news
	 * than what we read: it wins.
	 */
	smp_mb();
	if (atomic_read(&gdev->dead_seq) != seq)
		WRITE_ONCE(gdev->status, GASKET_STATUS_DEAD);
	return status;
}
EXPORT_SYMBOL_GPL(gasket_get_status);

void gasket_set_status_dead(struct gasket_dev *gdev)
{
	atomic_inc(&gdev->dead_seq);
	smp_mb__after_atomic();
	WRITE_ONCE(gdev->status, GASKET_STATUS_DEAD);
}
EXPORT_SYMBOL_GPL(gasket_set_status_dead);

bool gasket_file_is_writer(struct file *filp)
{
	return filp->f_mode & FMODE_WRITE;
}
EXPORT_SYMBOL_GPL(gasket_file_is_writer);

int gasket_reset_locked(struct gasket_dev *gdev)
{
	int ret = 0;
	int i;

	lockdep_assert_held(&gdev->mutex);

	if (gdev->offline)
		return -EIO;
	if (gdev->desc->device_reset_cb) {
		ret = gdev->desc->device_reset_cb(gdev);
		if (ret) {
			dev_err_ratelimited(gdev->dev, "device reset failed: %d\n",
					    ret);
			gasket_get_status(gdev);
			return ret;
		}
	}
	gasket_interrupt_setup(gdev);
	for (i = 0; i < gdev->num_page_tables; i++)
		gasket_page_table_reset(gdev->page_table[i]);
	/* The chip is idle and its tables empty: it may master the bus again. */
	if (gdev->master_off) {
		pci_set_master(gdev->pci_dev);
		gdev->master_off = false;
	}
	gdev->reset_count++;
	gasket_get_status(gdev);
	dev_dbg(gdev->dev, "reset %u: interrupts rerouted, page tables cleared\n",
		gdev->reset_count);
	return 0;
}
EXPORT_SYMBOL_GPL(gasket_reset_locked);

int gasket_reset(struct gasket_dev *gdev)
{
	int ret;

	mutex_lock(&gdev->mutex);
	ret = gdev->removed ? -ENODEV : gasket_reset_locked(gdev);
	mutex_unlock(&gdev->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(gasket_reset);

/*
 * The last file open for writing is gone: stop the device from using
 * anything that belonged to its owner, then free the device for others.
 */
static void gasket_release_ownership(struct gasket_dev *gdev)
{
	int ret;
	int i;

	if (!gdev->removed) {
		/*
		 * Quiesce DMA before the pages under it are unpinned. An
		 * offline chip was quiesced when it went offline.
		 */
		if (!gdev->offline && gdev->desc->device_reset_cb) {
			ret = gdev->desc->device_reset_cb(gdev);
			if (ret) {
				dev_err_ratelimited(gdev->dev,
						    "reset at last close failed: %d\n",
						    ret);
				/*
				 * The chip may still be doing DMA. Cut it off
				 * the bus rather than keep the pages pinned:
				 * a chip that never stops would hold them
				 * forever. The next good reset lets it master
				 * the bus again.
				 */
				pci_clear_master(gdev->pci_dev);
				gdev->master_off = true;
			}
		}
		for (i = 0; i < gdev->num_page_tables; i++)
			gasket_page_table_unmap_all(gdev->page_table[i]);
		gasket_interrupt_clear_all_eventfds(gdev);
		gasket_coherent_release(gdev);
	}
	gdev->ownership.is_owned = false;
	gdev->ownership.owner = 0;
}

static int gasket_open(struct inode *inode, struct file *filp)
{
	bool writer = filp->f_mode & FMODE_WRITE;
	unsigned int minor = iminor(inode) - MINOR(gasket_devt);
	struct gasket_ownership *own;
	struct gasket_dev *gdev;
	int ret = 0;

	mutex_lock(&gasket_slots_lock);
	gdev = minor < GASKET_MINORS ? gasket_devices[minor] : NULL;
	if (gdev)
		kref_get(&gdev->kref);
	mutex_unlock(&gasket_slots_lock);
	if (!gdev)
		return -ENODEV;

	if (!try_module_get(gdev->desc->owner)) {
		gasket_dev_put(gdev);
		return -ENODEV;
	}

	mutex_lock(&gdev->mutex);
	own = &gdev->ownership;
	if (gdev->removed) {
		ret = -ENODEV;
		goto err_unlock;
	}
	if (gdev->offline) {
		ret = -EIO;
		goto err_unlock;
	}
	if (writer && own->is_owned && own->owner != current->tgid &&
	    !capable(CAP_SYS_ADMIN)) {
		ret = -EPERM;
		goto err_unlock;
	}
	if (!gdev->open_count && gdev->desc->device_open_cb) {
		ret = gdev->desc->device_open_cb(gdev);
		if (ret) {
			dev_err_ratelimited(gdev->dev, "device open failed: %d\n",
					    ret);
			goto err_unlock;
		}
	}
	if (writer) {
		if (!own->is_owned) {
			own->is_owned = true;
			own->owner = current->tgid;
		}
		own->write_open_count++;
	}
	gdev->open_count++;
	gasket_get_status(gdev);
	mutex_unlock(&gdev->mutex);

	filp->private_data = gdev;
	filp->f_mapping = gdev->mapping_inode->i_mapping;
	return nonseekable_open(inode, filp);

err_unlock:
	gasket_get_status(gdev);
	mutex_unlock(&gdev->mutex);
	module_put(gdev->desc->owner);
	gasket_dev_put(gdev);
	return ret;
}

static int gasket_release(struct inode *inode, struct file *filp)
{
	struct gasket_dev *gdev = filp->private_data;
	struct module *owner = gdev->desc->owner;
	int ret;

	mutex_lock(&gdev->mutex);
	if (filp->f_mode & FMODE_WRITE) {
		if (!--gdev->ownership.write_open_count)
			gasket_release_ownership(gdev);
	}
	/* Coming online puts the chip of a closed node in its idle state. */
	if (!--gdev->open_count && !gdev->removed && !gdev->offline &&
	    gdev->desc->device_close_cb) {
		ret = gdev->desc->device_close_cb(gdev);
		if (ret)
			dev_err_ratelimited(gdev->dev, "device close failed: %d\n",
					    ret);
	}
	if (!gdev->removed)
		gasket_get_status(gdev);
	mutex_unlock(&gdev->mutex);

	gasket_dev_put(gdev);
	module_put(owner);
	return 0;
}

/* The pages an mmap() of @r maps: offsets into its BAR. */
static u64 gasket_region_first(const struct gasket_mappable_region *r)
{
	return ALIGN_DOWN(r->start, PAGE_SIZE);
}

static u64 gasket_region_end(const struct gasket_mappable_region *r)
{
	return ALIGN(r->start + r->length_bytes, PAGE_SIZE);
}

/*
 * Can @r be mapped with this kernel's pages without also mapping registers
 * only the driver may use?
 */
static bool gasket_region_mappable(const struct gasket_mappable_region *r)
{
	return (PAGE_ALIGNED(r->start) && PAGE_ALIGNED(r->length_bytes)) ||
	       PAGE_SIZE <= r->max_page_size;
}

/*
 * The user-mappable region of @bar whose pages hold mmap offset @pos, or
 * NULL.
 */
static const struct gasket_mappable_region *
gasket_find_region(const struct gasket_bar_desc *bar, u64 pos)
{
	const struct gasket_mappable_region *r;
	int i;

	for (i = 0; i < bar->num_mappable_regions; i++) {
		r = &bar->mappable_regions[i];
		if (pos >= bar->base + gasket_region_first(r) &&
		    pos < bar->base + gasket_region_end(r))
			return r;
	}
	return NULL;
}

/* The BAR whose mmap window holds offset @pos, or -1. */
static int gasket_find_bar(const struct gasket_driver_desc *desc, u64 pos)
{
	const struct gasket_bar_desc *bar;
	int i;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &desc->bar_descriptions[i];
		if (bar->size && pos >= bar->base && pos - bar->base < bar->size)
			return i;
	}
	return -1;
}

/*
 * A BAR page is inserted when first touched, under map_lock: after removal
 * (which zaps every mapping) the access raises SIGBUS instead.
 */
static vm_fault_t gasket_bar_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gasket_dev *gdev = vma->vm_private_data;
	const struct gasket_mappable_region *region;
	const struct gasket_bar_desc *bar;
	u64 pos = (u64)vmf->pgoff << PAGE_SHIFT;
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int bar_index;

	mutex_lock(&gdev->map_lock);
	bar_index = gasket_find_bar(gdev->desc, pos);
	if (!gdev->removed && bar_index >= 0) {
		bar = &gdev->desc->bar_descriptions[bar_index];
		region = gasket_find_region(bar, pos);
		if (region && gasket_region_mappable(region))
			ret = vmf_insert_pfn(vma, vmf->address,
					     (gdev->bar_data[bar_index].phys_base +
					      pos - bar->base) >> PAGE_SHIFT);
	}
	mutex_unlock(&gdev->map_lock);
	return ret;
}

static const struct vm_operations_struct gasket_bar_vm_ops = {
	.fault = gasket_bar_fault,
};

/*
 * Map [offset, offset + len) of a BAR window. Every page must belong to a
 * user-mappable region that this kernel's pages can map; nothing is mapped
 * unless all of them do.
 */
static int gasket_mmap_bar(struct gasket_dev *gdev, struct vm_area_struct *vma,
			   int bar_index, u64 offset, u64 len)
{
	const struct gasket_bar_desc *bar =
		&gdev->desc->bar_descriptions[bar_index];
	const struct gasket_mappable_region *r;
	u64 pos, region_end;

	if ((vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC)) &
	    ~bar->permissions)
		return -EPERM;

	for (pos = offset; pos < offset + len; pos = region_end) {
		r = gasket_find_region(bar, pos);
		if (!r)
			return -EINVAL;
		if (!gasket_region_mappable(r)) {
			dev_warn_ratelimited(gdev->dev,
					     "%s[%d]: mmap() of BAR%d window %#llx refused: with %lu KiB pages it would also map registers only the driver may use\n",
					     current->comm, task_tgid_nr(current),
					     bar_index, r->start, PAGE_SIZE / SZ_1K);
			return -EPERM;
		}
		region_end = bar->base + gasket_region_end(r);
	}

	gasket_vm_flags_set(vma, VM_IO | VM_PFNMAP | VM_DONTEXPAND |
			    VM_DONTDUMP);
	/* What io_remap_pfn_range() would use. */
	vma->vm_page_prot = pgprot_decrypted(pgprot_noncached(vma->vm_page_prot));
	vma->vm_ops = &gasket_bar_vm_ops;
	vma->vm_private_data = gdev;
	return 0;
}

static int gasket_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct gasket_dev *gdev = filp->private_data;
	const struct gasket_driver_desc *desc = gdev->desc;
	u64 len = vma->vm_end - vma->vm_start;
	u64 offset;
	int bar_index;
	int ret;

	if (vma->vm_pgoff > (U64_MAX >> PAGE_SHIFT) - (len >> PAGE_SHIFT))
		return -EINVAL;
	offset = (u64)vma->vm_pgoff << PAGE_SHIFT;

	/* Private (copy-on-write) mappings of device memory make no sense. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	/* Device memory is never code, not even after mprotect(). */
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	gasket_vm_flags_clear(vma, VM_MAYEXEC);
	/* Readers may never gain write access, not even by mprotect(). */
	if (!(filp->f_mode & FMODE_WRITE)) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		gasket_vm_flags_clear(vma, VM_MAYWRITE);
	}

	if (desc->coherent_buffer_description.size &&
	    offset == desc->coherent_buffer_description.base)
		return gasket_coherent_mmap(gdev, vma);

	bar_index = gasket_find_bar(desc, offset);
	if (bar_index < 0)
		return -EINVAL;

	mutex_lock(&gdev->map_lock);
	ret = gdev->removed ? -ENODEV :
	      gasket_mmap_bar(gdev, vma, bar_index, offset, len);
	mutex_unlock(&gdev->map_lock);
	return ret;
}

static const struct file_operations gasket_fops = {
	.owner = THIS_MODULE,
	.open = gasket_open,
	.release = gasket_release,
	.mmap = gasket_mmap,
	.unlocked_ioctl = gasket_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

/* Checks a descriptor once, so the rest of the framework can trust it. */
static int gasket_desc_check(struct pci_dev *pci_dev,
			     const struct gasket_driver_desc *desc)
{
	const struct gasket_mappable_region *r;
	const struct gasket_bar_desc *bar;
	int i, j;

	if (!desc->name || strlen(desc->name) > GASKET_NAME_MAX - 5)
		goto bad;
	if (desc->num_page_tables < 0 ||
	    desc->num_page_tables > GASKET_MAX_NUM_PAGE_TABLES ||
	    desc->num_interrupts < 0 ||
	    desc->coherent_buffer_description.size >
	    GASKET_MAX_NUM_COHERENT_PAGES * PAGE_SIZE)
		goto bad;
	if (desc->num_page_tables &&
	    (desc->page_table_bar_index < 0 ||
	     desc->page_table_bar_index >= GASKET_NUM_BARS ||
	     !desc->bar_descriptions[desc->page_table_bar_index].size))
		goto bad;
	if (desc->num_interrupts &&
	    (desc->interrupt_bar_index < 0 ||
	     desc->interrupt_bar_index >= GASKET_NUM_BARS ||
	     !desc->bar_descriptions[desc->interrupt_bar_index].size))
		goto bad;
	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &desc->bar_descriptions[i];
		if (!PAGE_ALIGNED(bar->base) || !PAGE_ALIGNED(bar->size))
			goto bad;
		for (j = 0; j < bar->num_mappable_regions; j++) {
			r = &bar->mappable_regions[j];
			if (!IS_ALIGNED(r->start, SZ_4K) ||
			    !IS_ALIGNED(r->length_bytes, SZ_4K) ||
			    !r->length_bytes || r->start > bar->size ||
			    r->length_bytes > bar->size - r->start)
				goto bad;
			/* The block must hold the region, within the BAR. */
			if (r->max_page_size &&
			    (!is_power_of_2(r->max_page_size) ||
			     ALIGN_DOWN(r->start, r->max_page_size) !=
			     ALIGN_DOWN(r->start + r->length_bytes - 1,
					r->max_page_size) ||
			     ALIGN(r->start + 1, r->max_page_size) > bar->size))
				goto bad;
		}
	}
	return 0;

bad:
	dev_err(&pci_dev->dev, "invalid gasket driver description\n");
	return -EINVAL;
}

/*
 * Says once, at probe, which windows this kernel's pages cannot map (with
 * 16 KiB pages, say), so that a client's failing mmap() is explained.
 */
static void gasket_note_unmappable_regions(struct pci_dev *pci_dev,
					   const struct gasket_driver_desc *desc)
{
	const struct gasket_mappable_region *r;
	const struct gasket_bar_desc *bar;
	int i, j;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &desc->bar_descriptions[i];
		for (j = 0; j < bar->num_mappable_regions; j++) {
			r = &bar->mappable_regions[j];
			if (!gasket_region_mappable(r))
				dev_notice(&pci_dev->dev,
					   "BAR%d window %#llx cannot be mapped with %lu KiB pages: its page also holds registers only the driver may use; clients that need it need a kernel with %llu KiB pages\n",
					   i, r->start, PAGE_SIZE / SZ_1K,
					   max_t(u64, r->max_page_size, SZ_4K) / SZ_1K);
		}
	}
}

/* Finds or creates the class slot of @desc and reserves an index in it. */
static int gasket_slot_get(struct gasket_dev *gdev)
{
	const struct gasket_driver_desc *desc = gdev->desc;
	struct gasket_class_slot *slot = NULL;
	struct class *class;
	int i, index;

	mutex_lock(&gasket_slots_lock);
	for (i = 0; i < GASKET_FRAMEWORK_DESC_MAX; i++)
		if (gasket_slots[i].desc == desc)
			slot = &gasket_slots[i];
	for (i = 0; !slot && i < GASKET_FRAMEWORK_DESC_MAX; i++) {
		if (gasket_slots[i].desc)
			continue;
		class = gasket_class_create(desc->name);
		if (IS_ERR(class)) {
			mutex_unlock(&gasket_slots_lock);
			dev_err(gdev->dev, "cannot create class %s: %ld\n",
				desc->name, PTR_ERR(class));
			return PTR_ERR(class);
		}
		slot = &gasket_slots[i];
		slot->desc = desc;
		slot->class = class;
		slot->first_minor = i * GASKET_DEV_MAX;
		ida_init(&slot->ida);
	}
	if (!slot) {
		mutex_unlock(&gasket_slots_lock);
		dev_err(gdev->dev, "more than %d gasket drivers\n",
			GASKET_FRAMEWORK_DESC_MAX);
		return -EBUSY;
	}

	index = ida_alloc_max(&slot->ida, GASKET_DEV_MAX - 1, GFP_KERNEL);
	if (index < 0) {
		mutex_unlock(&gasket_slots_lock);
		dev_err(gdev->dev, "no free %s device index\n", desc->name);
		return index;
	}
	slot->num_devices++;
	gdev->slot = slot;
	gdev->index = index;
	gdev->devt = MKDEV(MAJOR(gasket_devt),
			   MINOR(gasket_devt) + slot->first_minor + index);
	snprintf(gdev->name, sizeof(gdev->name), "%s_%d", desc->name, index);
	mutex_unlock(&gasket_slots_lock);
	return 0;
}

static void gasket_slot_put(struct gasket_dev *gdev)
{
	struct gasket_class_slot *slot = gdev->slot;

	mutex_lock(&gasket_slots_lock);
	ida_free(&slot->ida, gdev->index);
	if (!--slot->num_devices) {
		class_destroy(slot->class);
		ida_destroy(&slot->ida);
		memset(slot, 0, sizeof(*slot));
	}
	mutex_unlock(&gasket_slots_lock);
}

static void gasket_unmap_bars(struct gasket_dev *gdev)
{
	int i;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		if (!gdev->bar_data[i].virt_base)
			continue;
		pci_iounmap(gdev->pci_dev, gdev->bar_data[i].virt_base);
		pci_release_region(gdev->pci_dev, i);
		gdev->bar_data[i].virt_base = NULL;
	}
}

/*
 * Plain (not pcim_*) requests and mappings: the managed PCI helpers
 * changed semantics within the kernels we support.
 */
static int gasket_map_bars(struct gasket_dev *gdev)
{
	struct pci_dev *pci_dev = gdev->pci_dev;
	const struct gasket_bar_desc *bar;
	int ret, i;

	for (i = 0; i < GASKET_NUM_BARS; i++) {
		bar = &gdev->desc->bar_descriptions[i];
		if (!bar->size)
			continue;
		if (!(pci_resource_flags(pci_dev, i) & IORESOURCE_MEM) ||
		    pci_resource_len(pci_dev, i) < bar->size) {
			dev_err(gdev->dev, "BAR %d: need %llu bytes of memory, have %llu\n",
				i, bar->size,
				(u64)pci_resource_len(pci_dev, i));
			ret = -ENODEV;
			goto err_unmap;
		}
		ret = pci_request_region(pci_dev, i, gdev->desc->name);
		if (ret) {
			dev_err(gdev->dev, "BAR %d is busy\n", i);
			goto err_unmap;
		}
		gdev->bar_data[i].virt_base = pci_iomap(pci_dev, i, bar->size);
		if (!gdev->bar_data[i].virt_base) {
			pci_release_region(pci_dev, i);
			dev_err(gdev->dev, "cannot map BAR %d\n", i);
			ret = -ENOMEM;
			goto err_unmap;
		}
		gdev->bar_data[i].phys_base = pci_resource_start(pci_dev, i);
	}
	return 0;

err_unmap:
	gasket_unmap_bars(gdev);
	return ret;
}

int gasket_pci_add_device(struct pci_dev *pci_dev,
			  const struct gasket_driver_desc *desc,
			  struct gasket_dev **gdev_out)
{
	struct gasket_dev *gdev;
	int ret;

	ret = gasket_desc_check(pci_dev, desc);
	if (ret)
		return ret;
	gasket_note_unmappable_regions(pci_dev, desc);

	gdev = kzalloc(sizeof(*gdev), GFP_KERNEL);
	if (!gdev)
		return -ENOMEM;
	kref_init(&gdev->kref);
	mutex_init(&gdev->mutex);
	mutex_init(&gdev->map_lock);
	gasket_coherent_init(gdev);
	gdev->pci_dev = pci_dev_get(pci_dev);
	gdev->dev = &pci_dev->dev;
	gdev->desc = desc;
	gdev->num_page_tables = desc->num_page_tables;
	atomic_set(&gdev->dead_seq, 0);

	ret = gasket_mapping_init(gdev);
	if (ret)
		goto err_put;

	ret = gasket_slot_get(gdev);
	if (ret)
		goto err_put;

	ret = pci_enable_device(pci_dev);
	if (ret) {
		dev_err(gdev->dev, "cannot enable PCI device: %d\n", ret);
		goto err_slot_put;
	}
	pci_set_master(pci_dev);

	ret = dma_set_mask_and_coherent(gdev->dev, DMA_BIT_MASK(dma_bit_mask));
	if (ret) {
		dev_err(gdev->dev, "no usable %u-bit DMA: %d\n", dma_bit_mask,
			ret);
		goto err_disable;
	}

	ret = gasket_map_bars(gdev);
	if (ret)
		goto err_disable;

	pci_set_drvdata(pci_dev, gdev);
	*gdev_out = gdev;
	return 0;

err_disable:
	pci_clear_master(pci_dev);
	pci_disable_device(pci_dev);
err_slot_put:
	gasket_slot_put(gdev);
err_put:
	gasket_dev_put(gdev);
	return ret;
}
EXPORT_SYMBOL_GPL(gasket_pci_add_device);

void gasket_pci_remove_device(struct pci_dev *pci_dev)
{
	struct gasket_dev *gdev = pci_get_drvdata(pci_dev);

	if (gdev->enabled && !gdev->removed)
		gasket_disable_device(gdev);

	pci_set_drvdata(pci_dev, NULL);
	gasket_unmap_bars(gdev);
	pci_clear_master(pci_dev);
	pci_disable_device(pci_dev);
	gasket_slot_put(gdev);
	gasket_dev_put(gdev);
}
EXPORT_SYMBOL_GPL(gasket_pci_remove_device);

/* The framework's attribute group followed by the driver's ones. */
static int gasket_node_groups_init(struct gasket_dev *gdev)
{
	const struct attribute_group **extra = gdev->desc->sysfs_groups;
	int n = 0;

	while (extra && extra[n])
		n++;
	gdev->node_groups = kcalloc(n + 2, sizeof(*gdev->node_groups),
				    GFP_KERNEL);
	if (!gdev->node_groups)
		return -ENOMEM;
	gdev->node_groups[0] = &gasket_sysfs_group;
	if (n)
		memcpy(&gdev->node_groups[1], extra, n * sizeof(*extra));
	return 0;
}

static void gasket_page_tables_fini(struct gasket_dev *gdev, int count)
{
	while (count--)
		gasket_page_table_fini(gdev, count);
}

int gasket_enable_device(struct gasket_dev *gdev)
{
	int ret, i;

	mutex_lock(&gdev->mutex);
	for (i = 0; i < gdev->num_page_tables; i++) {
		ret = gasket_page_table_init(gdev, i);
		if (ret) {
			gasket_page_tables_fini(gdev, i);
			mutex_unlock(&gdev->mutex);
			return ret;
		}
	}
	mutex_unlock(&gdev->mutex);

	ret = gasket_interrupt_init(gdev);
	if (ret)
		goto err_page_tables;

	ret = gasket_node_groups_init(gdev);
	if (ret)
		goto err_interrupts;

	WRITE_ONCE(gdev->enabled, true);
	return 0;

err_interrupts:
	gasket_interrupt_fini(gdev);
err_page_tables:
	mutex_lock(&gdev->mutex);
	gasket_page_tables_fini(gdev, gdev->num_page_tables);
	mutex_unlock(&gdev->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(gasket_enable_device);

static void gasket_unpublish(struct gasket_dev *gdev)
{
	unsigned int minor = MINOR(gdev->devt) - MINOR(gasket_devt);

	mutex_lock(&gasket_slots_lock);
	gasket_devices[minor] = NULL;
	mutex_unlock(&gasket_slots_lock);
}

int gasket_publish_device(struct gasket_dev *gdev)
{
	unsigned int minor = MINOR(gdev->devt) - MINOR(gasket_devt);
	struct device *node;
	int ret;

	gasket_get_status(gdev);
	mutex_lock(&gasket_slots_lock);
	gasket_devices[minor] = gdev;
	mutex_unlock(&gasket_slots_lock);

	node = device_create_with_groups(gdev->slot->class, gdev->dev,
					 gdev->devt, gdev, gdev->node_groups,
					 "%s", gdev->name);
	if (IS_ERR(node)) {
		ret = PTR_ERR(node);
		dev_err(gdev->dev, "cannot create %s: %d\n", gdev->name, ret);
		gasket_unpublish(gdev);
		return ret;
	}
	gdev->dev_node = node;
	dev_dbg(gdev->dev, "/dev/%s ready\n", gdev->name);
	return 0;
}
EXPORT_SYMBOL_GPL(gasket_publish_device);

void gasket_offline_device(struct gasket_dev *gdev)
{
	int ret;

	mutex_lock(&gdev->mutex);
	if (gdev->removed || gdev->offline) {
		mutex_unlock(&gdev->mutex);
		return;
	}
	WRITE_ONCE(gdev->offline, true);
	WRITE_ONCE(gdev->status, GASKET_STATUS_DEAD);
	/* The pages stay mapped for the session: the chip must stop using them. */
	if (gdev->desc->device_quiesce_cb) {
		ret = gdev->desc->device_quiesce_cb(gdev);
		if (ret)
			dev_dbg(gdev->dev, "quiesce before going offline: %d\n",
				ret);
	}
	mutex_unlock(&gdev->mutex);
	dev_dbg(gdev->dev, "offline\n");
}
EXPORT_SYMBOL_GPL(gasket_offline_device);

int gasket_online_device(struct gasket_dev *gdev)
{
	int ret = 0;
	int i;

	mutex_lock(&gdev->mutex);
	if (gdev->removed || !gdev->offline)
		goto out;
	if (gdev->desc->device_restore_cb)
		ret = gdev->desc->device_restore_cb(gdev, gdev->open_count > 0);
	WRITE_ONCE(gdev->offline, false);
	if (ret) {
		/*
		 * A chip in an unknown state must not use the pages still
		 * mapped for the session; GASKET_IOCTL_RESET clears them and
		 * lets it master the bus again.
		 */
		dev_err(gdev->dev, "the device did not come back: %d\n", ret);
		pci_clear_master(gdev->pci_dev);
		gdev->master_off = true;
		gasket_set_status_dead(gdev);
		goto out;
	}
	gasket_interrupt_setup(gdev);
	for (i = 0; i < gdev->num_page_tables; i++)
		gasket_page_table_restore(gdev->page_table[i]);
	gasket_get_status(gdev);
	dev_dbg(gdev->dev, "online again, page tables restored\n");
out:
	mutex_unlock(&gdev->mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(gasket_online_device);

/*
 * Removal with a live session, in the only safe order: the chip stops
 * touching memory, then user space loses its mappings, then the memory
 * goes. Releasing pages first would let a chip still doing DMA write
 * into pages the kernel has handed to someone else.
 */
void gasket_disable_device(struct gasket_dev *gdev)
{
	int ret;

	gasket_unpublish(gdev);
	/* Waits for running sysfs show/store; none start afterwards. */
	if (gdev->dev_node) {
		device_destroy(gdev->slot->class, gdev->devt);
		gdev->dev_node = NULL;
	}

	mutex_lock(&gdev->mutex);
	mutex_lock(&gdev->map_lock);
	WRITE_ONCE(gdev->removed, true);
	mutex_unlock(&gdev->map_lock);
	WRITE_ONCE(gdev->status, GASKET_STATUS_DRIVER_EXIT);

	/* 1. No more DMA: the chip's own sequence, then the bus. */
	if (gdev->desc->device_quiesce_cb) {
		ret = gdev->desc->device_quiesce_cb(gdev);
		if (ret)
			dev_dbg(gdev->dev, "quiesce at removal: %d\n", ret);
	}
	/* Also stops a chip that did not answer the sequence. */
	pci_clear_master(gdev->pci_dev);
	mutex_unlock(&gdev->mutex);

	/* No interrupt can signal an eventfd after this. */
	gasket_interrupt_fini(gdev);

	/* 2. Old pointers fault with SIGBUS; removed keeps them from refaulting. */
	gasket_coherent_wait_for_mappers(gdev);
	unmap_mapping_range(gdev->mapping_inode->i_mapping, 0, 0, 1);

	/* 3. Only now the memory: pinned pages, the coherent buffer. */
	mutex_lock(&gdev->mutex);
	gasket_page_tables_fini(gdev, gdev->num_page_tables);
	gasket_coherent_remove(gdev);
	mutex_unlock(&gdev->mutex);

	kfree(gdev->node_groups);
	gdev->node_groups = NULL;
}
EXPORT_SYMBOL_GPL(gasket_disable_device);

static int __init gasket_init(void)
{
	int ret;

	if (dma_bit_mask < GASKET_DMA_BITS_MIN ||
	    dma_bit_mask > GASKET_DMA_BITS_MAX) {
		pr_warn("gasket: dma_bit_mask=%u out of range %d..%d, using %d\n",
			dma_bit_mask, GASKET_DMA_BITS_MIN, GASKET_DMA_BITS_MAX,
			GASKET_DMA_BITS_MAX);
		dma_bit_mask = GASKET_DMA_BITS_MAX;
	}

	ret = alloc_chrdev_region(&gasket_devt, 0, GASKET_MINORS, "gasket");
	if (ret)
		return ret;

	cdev_init(&gasket_cdev, &gasket_fops);
	gasket_cdev.owner = THIS_MODULE;
	ret = cdev_add(&gasket_cdev, gasket_devt, GASKET_MINORS);
	if (ret) {
		unregister_chrdev_region(gasket_devt, GASKET_MINORS);
		return ret;
	}
	return 0;
}

static void __exit gasket_exit(void)
{
	cdev_del(&gasket_cdev);
	unregister_chrdev_region(gasket_devt, GASKET_MINORS);
}

module_init(gasket_init);
module_exit(gasket_exit);

MODULE_DESCRIPTION("Gasket framework for thin PCI accelerator drivers");
MODULE_VERSION(GASKET_FRAMEWORK_VERSION);
MODULE_LICENSE("GPL");
