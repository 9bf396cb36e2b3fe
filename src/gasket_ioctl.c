// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket ioctls (type 0xDC): number, permission, argument, then the work,
 * in that order, so a rejected call changes nothing. Other ioctl types go
 * to the device driver. uapi/gasket.h documents the errors.
 */
#include <linux/fs.h>
#include <linux/uaccess.h>

#include "gasket_coherent.h"
#include "gasket_core.h"
#include "gasket_interrupt.h"
#include "gasket_ioctl.h"
#include "gasket_page_table.h"

/* What a gasket ioctl needs from the caller and the device. */
enum gasket_ioctl_need {
	GASKET_NEED_READER,		/* a file open for reading */
	GASKET_NEED_WRITER,		/* a file open for writing */
	GASKET_NEED_WRITER_ALIVE,	/* ... and a healthy device */
};

/*
 * Ioctls passing their argument by value declared it "unsigned long" in
 * the number, so 32-bit and 64-bit processes use different numbers.
 */
static bool gasket_ioctl_by_value(unsigned int cmd, unsigned int nr)
{
	return cmd == _IOW(GASKET_IOCTL_BASE, nr, __u32) ||
	       cmd == _IOW(GASKET_IOCTL_BASE, nr, __u64);
}

/* The ioctl's canonical number and needs; -ENOTTY if it is none of ours. */
static int gasket_ioctl_lookup(unsigned int cmd, unsigned int *canonical,
			       enum gasket_ioctl_need *need)
{
	*canonical = cmd;
	/* RESET also exists as _IOW(.., unsigned long), its 2018 number. */
	if (gasket_ioctl_by_value(cmd, 0))
		*canonical = GASKET_IOCTL_RESET;
	else if (gasket_ioctl_by_value(cmd, 2))
		*canonical = GASKET_IOCTL_CLEAR_EVENTFD;
	else if (gasket_ioctl_by_value(cmd, 3))
		*canonical = GASKET_IOCTL_LOOPBACK_INTERRUPT;

	switch (*canonical) {
	case GASKET_IOCTL_RESET:
	case GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS:
		*need = GASKET_NEED_WRITER;
		return 0;
	case GASKET_IOCTL_NUMBER_PAGE_TABLES:
	case GASKET_IOCTL_PAGE_TABLE_SIZE:
	case GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE:
		*need = GASKET_NEED_READER;
		return 0;
	case GASKET_IOCTL_SET_EVENTFD:
	case GASKET_IOCTL_CLEAR_EVENTFD:
	case GASKET_IOCTL_LOOPBACK_INTERRUPT:
	case GASKET_IOCTL_PARTITION_PAGE_TABLE:
	case GASKET_IOCTL_MAP_BUFFER:
	case GASKET_IOCTL_UNMAP_BUFFER:
	case GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR:
	case GASKET_IOCTL_MAP_BUFFER_FLAGS:
	case GASKET_IOCTL_MAP_DMABUF:
		*need = GASKET_NEED_WRITER_ALIVE;
		return 0;
	default:
		return -ENOTTY;
	}
}

static int gasket_ioctl_check(struct gasket_dev *gdev, struct file *filp,
			      unsigned int cmd, enum gasket_ioctl_need need)
{
	bool allowed;

	if (gdev->desc->ioctl_permissions_cb)
		allowed = gdev->desc->ioctl_permissions_cb(filp, cmd);
	else if (need == GASKET_NEED_READER)
		allowed = filp->f_mode & FMODE_READ;
	else
		allowed = filp->f_mode & FMODE_WRITE;
	if (!allowed)
		return -EPERM;

	/*
	 * The status slow paths cached: a register read here would double
	 * the cost of a small MAP/UNMAP.
	 */
	if (need == GASKET_NEED_WRITER_ALIVE &&
	    READ_ONCE(gdev->status) != GASKET_STATUS_ALIVE)
		return -EIO;
	return 0;
}

/* The page table an argument names, or NULL. */
static struct gasket_page_table *gasket_ioctl_pt(struct gasket_dev *gdev,
						 u64 index)
{
	return index < gdev->num_page_tables ? gdev->page_table[index] : NULL;
}

/*
 * Copies in a struct gasket_page_table_ioctl argument and returns the page
 * table it names, or ERR_PTR(-EFAULT / -EINVAL).
 */
static struct gasket_page_table *
gasket_ioctl_pt_arg(struct gasket_dev *gdev, void __user *argp,
		    struct gasket_page_table_ioctl *ibuf)
{
	struct gasket_page_table *pt;

	if (copy_from_user(ibuf, argp, sizeof(*ibuf)))
		return ERR_PTR(-EFAULT);
	pt = gasket_ioctl_pt(gdev, ibuf->page_table_index);
	return pt ?: ERR_PTR(-EINVAL);
}

static int gasket_ioctl_page_table_size(struct gasket_dev *gdev,
					unsigned int cmd, void __user *argp)
{
	struct gasket_page_table_ioctl ibuf;
	struct gasket_page_table *pt = gasket_ioctl_pt_arg(gdev, argp, &ibuf);

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	if (cmd == GASKET_IOCTL_PAGE_TABLE_SIZE)
		ibuf.size = gasket_page_table_num_entries(gdev,
							  ibuf.page_table_index);
	else
		ibuf.size = gasket_page_table_num_simple_entries(gdev,
								 ibuf.page_table_index);
	return copy_to_user(argp, &ibuf, sizeof(ibuf)) ? -EFAULT : 0;
}

static int gasket_ioctl_partition(struct gasket_dev *gdev, void __user *argp)
{
	struct gasket_page_table_ioctl ibuf;
	struct gasket_page_table *pt = gasket_ioctl_pt_arg(gdev, argp, &ibuf);

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	return gasket_page_table_partition(pt, ibuf.size);
}

/* MAP_BUFFER_FLAGS / MAP_DMABUF flags to a DMA direction, or -EINVAL. */
static int gasket_ioctl_dma_dir(u32 flags, enum dma_data_direction *dir)
{
	u32 known = BIT(GASKET_PT_FLAGS_STATUS_SHIFT) |
		    GASKET_PT_FLAGS_DMA_DIRECTION_MASK;

	if (flags & ~known)
		return -EINVAL;
	switch ((flags & GASKET_PT_FLAGS_DMA_DIRECTION_MASK) >>
		GASKET_PT_FLAGS_DMA_DIRECTION_SHIFT) {
	case GASKET_PT_DMA_BIDIRECTIONAL:
		*dir = DMA_BIDIRECTIONAL;
		return 0;
	case GASKET_PT_DMA_TO_DEVICE:
		*dir = DMA_TO_DEVICE;
		return 0;
	case GASKET_PT_DMA_FROM_DEVICE:
		*dir = DMA_FROM_DEVICE;
		return 0;
	default:
		return -EINVAL;
	}
}

static int gasket_ioctl_map(struct gasket_dev *gdev, unsigned int cmd,
			    void __user *argp)
{
	struct gasket_page_table_ioctl_flags ibuf = { };
	enum dma_data_direction dir;
	struct gasket_page_table *pt;
	size_t len;
	int ret;

	len = cmd == GASKET_IOCTL_MAP_BUFFER_FLAGS ? sizeof(ibuf) :
						     sizeof(ibuf.base);
	if (copy_from_user(&ibuf, argp, len))
		return -EFAULT;
	ret = gasket_ioctl_dma_dir(ibuf.flags, &dir);
	if (ret)
		return ret;
	pt = gasket_ioctl_pt(gdev, ibuf.base.page_table_index);
	if (!pt)
		return -EINVAL;
	return gasket_page_table_map(pt, ibuf.base.host_address,
				     ibuf.base.device_address, ibuf.base.size,
				     dir);
}

static int gasket_ioctl_unmap(struct gasket_dev *gdev, void __user *argp)
{
	struct gasket_page_table_ioctl ibuf;
	struct gasket_page_table *pt = gasket_ioctl_pt_arg(gdev, argp, &ibuf);

	if (IS_ERR(pt))
		return PTR_ERR(pt);
	return gasket_page_table_unmap(pt, ibuf.device_address, ibuf.size);
}

static int gasket_ioctl_map_dmabuf(struct gasket_dev *gdev, void __user *argp)
{
	struct gasket_page_table_ioctl_dmabuf ibuf;
	enum dma_data_direction dir;
	struct gasket_page_table *pt;
	int ret;

	if (copy_from_user(&ibuf, argp, sizeof(ibuf)))
		return -EFAULT;
	pt = gasket_ioctl_pt(gdev, ibuf.page_table_index);
	if (!pt)
		return -EINVAL;
	if (!ibuf.map)
		return gasket_page_table_unmap_dmabuf(pt, ibuf.dmabuf_fd,
						      ibuf.device_address,
						      ibuf.num_pages);
	ret = gasket_ioctl_dma_dir(ibuf.flags, &dir);
	if (ret)
		return ret;
	return gasket_page_table_map_dmabuf(pt, ibuf.dmabuf_fd,
					    ibuf.device_address, ibuf.num_pages,
					    dir);
}

static int gasket_ioctl_coherent(struct gasket_dev *gdev, void __user *argp)
{
	struct gasket_coherent_alloc_config_ioctl ibuf;
	u64 base = gdev->desc->coherent_buffer_description.base;
	int ret;

	if (copy_from_user(&ibuf, argp, sizeof(ibuf)))
		return -EFAULT;
	if (!gasket_ioctl_pt(gdev, ibuf.page_table_index))
		return -EINVAL;

	if (!ibuf.enable)
		return ibuf.dma_address == base ? gasket_coherent_free(gdev) :
						  -EINVAL;

	ret = gasket_coherent_alloc(gdev, ibuf.size);
	if (ret)
		return ret;
	ibuf.dma_address = base;
	if (copy_to_user(argp, &ibuf, sizeof(ibuf))) {
		gasket_coherent_free(gdev);
		return -EFAULT;
	}
	return 0;
}

static long gasket_ioctl_locked(struct gasket_dev *gdev, unsigned int cmd,
				unsigned long arg)
{
	void __user *argp = (void __user *)arg;
	u64 count;

	switch (cmd) {
	case GASKET_IOCTL_RESET:
		return gasket_reset_locked(gdev);
	case GASKET_IOCTL_SET_EVENTFD: {
		struct gasket_interrupt_eventfd die;

		if (copy_from_user(&die, argp, sizeof(die)))
			return -EFAULT;
		return gasket_interrupt_set_eventfd(gdev, die.interrupt,
						    die.event_fd);
	}
	case GASKET_IOCTL_CLEAR_EVENTFD:
		return gasket_interrupt_clear_eventfd(gdev, arg);
	case GASKET_IOCTL_LOOPBACK_INTERRUPT:
		return gasket_interrupt_loopback(gdev, arg);
	case GASKET_IOCTL_NUMBER_PAGE_TABLES:
		count = gdev->num_page_tables;
		return copy_to_user(argp, &count, sizeof(count)) ? -EFAULT : 0;
	case GASKET_IOCTL_PAGE_TABLE_SIZE:
	case GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE:
		return gasket_ioctl_page_table_size(gdev, cmd, argp);
	case GASKET_IOCTL_PARTITION_PAGE_TABLE:
		return gasket_ioctl_partition(gdev, argp);
	case GASKET_IOCTL_MAP_BUFFER:
	case GASKET_IOCTL_MAP_BUFFER_FLAGS:
		return gasket_ioctl_map(gdev, cmd, argp);
	case GASKET_IOCTL_UNMAP_BUFFER:
		return gasket_ioctl_unmap(gdev, argp);
	case GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS:
		gasket_interrupt_reset_counts(gdev);
		return 0;
	case GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR:
		return gasket_ioctl_coherent(gdev, argp);
	case GASKET_IOCTL_MAP_DMABUF:
		return gasket_ioctl_map_dmabuf(gdev, argp);
	default:
		return -ENOTTY;
	}
}

long gasket_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gasket_dev *gdev = filp->private_data;
	enum gasket_ioctl_need need;
	unsigned int canonical;
	long ret;

	if (_IOC_TYPE(cmd) != GASKET_IOCTL_BASE) {
		if (!gdev->desc->ioctl_handler_cb)
			return -ENOTTY;
		mutex_lock(&gdev->mutex);
		ret = gdev->removed ? -ENODEV :
		      gdev->desc->ioctl_handler_cb(gdev, filp, cmd,
						   (void __user *)arg);
		mutex_unlock(&gdev->mutex);
		return ret;
	}

	ret = gasket_ioctl_lookup(cmd, &canonical, &need);
	if (ret)
		return ret;

	mutex_lock(&gdev->mutex);
	if (gdev->removed)
		ret = -ENODEV;
	else
		ret = gasket_ioctl_check(gdev, filp, canonical, need);
	if (!ret)
		ret = gasket_ioctl_locked(gdev, canonical, arg);
	mutex_unlock(&gdev->mutex);
	return ret;
}
