// SPDX-License-Identifier: GPL-2.0-only
/*
 * Gasket ioctls (type 0xDC): number, permission, argument, then the work,
 * in that order, so a rejected call changes nothing. Other ioctl types go
 * to the device driver. uapi/gasket.h documents the errors.
 *
 * User memory is only touched without gdev->mutex held: arguments are
 * copied in and checked, and MAP_BUFFER's pages pinned, before the lock is
 * taken, results copied out after it is dropped. A thread whose argument
 * never arrives (a userfaultfd page nobody serves, a stalled FUSE file)
 * then holds up nobody else: not another file's ioctls, close or removal.
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

/* Largest argument of a device driver's ioctl (base other than 0xDC). */
#define GASKET_IOCTL_DEVICE_ARG_MAX 64

/* An ioctl argument, in kernel memory. */
union gasket_ioctl_arg {
	struct gasket_interrupt_eventfd eventfd;
	struct gasket_page_table_ioctl pt;
	struct gasket_page_table_ioctl_flags pt_flags;
	struct gasket_coherent_alloc_config_ioctl coherent;
	struct gasket_page_table_ioctl_dmabuf dmabuf;
	u64 count;
	u8 device[GASKET_IOCTL_DEVICE_ARG_MAX];
};

/* One gasket ioctl: what it needs and what it copies in and out. */
struct gasket_ioctl_call {
	unsigned int cmd;		/* canonical number */
	enum gasket_ioctl_need need;
	size_t in;			/* bytes copied in before locking */
	size_t out;			/* bytes copied out after unlocking */
	unsigned long value;		/* by-value argument */
	void __user *argp;
	union gasket_ioctl_arg arg;
	struct gasket_pin pin;		/* MAP_BUFFER(_FLAGS) */
	enum dma_data_direction dir;	/* MAP_BUFFER_FLAGS, MAP_DMABUF */
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

/* The ioctl's canonical number, needs and copies; -ENOTTY if not ours. */
static int gasket_ioctl_lookup(unsigned int cmd, struct gasket_ioctl_call *c)
{
	c->cmd = cmd;
	/* RESET also exists as _IOW(.., unsigned long), its 2018 number. */
	if (gasket_ioctl_by_value(cmd, 0))
		c->cmd = GASKET_IOCTL_RESET;
	else if (gasket_ioctl_by_value(cmd, 2))
		c->cmd = GASKET_IOCTL_CLEAR_EVENTFD;
	else if (gasket_ioctl_by_value(cmd, 3))
		c->cmd = GASKET_IOCTL_LOOPBACK_INTERRUPT;

	switch (c->cmd) {
	case GASKET_IOCTL_RESET:
	case GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS:
		c->need = GASKET_NEED_WRITER;
		return 0;
	case GASKET_IOCTL_NUMBER_PAGE_TABLES:
		c->need = GASKET_NEED_READER;
		c->out = sizeof(c->arg.count);
		return 0;
	case GASKET_IOCTL_PAGE_TABLE_SIZE:
	case GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE:
		c->need = GASKET_NEED_READER;
		c->in = sizeof(c->arg.pt);
		c->out = sizeof(c->arg.pt);
		return 0;
	case GASKET_IOCTL_CLEAR_EVENTFD:
	case GASKET_IOCTL_LOOPBACK_INTERRUPT:
		c->need = GASKET_NEED_WRITER_ALIVE;
		return 0;
	case GASKET_IOCTL_SET_EVENTFD:
		c->in = sizeof(c->arg.eventfd);
		break;
	case GASKET_IOCTL_PARTITION_PAGE_TABLE:
	case GASKET_IOCTL_MAP_BUFFER:
	case GASKET_IOCTL_UNMAP_BUFFER:
		c->in = sizeof(c->arg.pt);
		break;
	case GASKET_IOCTL_MAP_BUFFER_FLAGS:
		c->in = sizeof(c->arg.pt_flags);
		break;
	case GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR:
		c->in = sizeof(c->arg.coherent);
		break;
	case GASKET_IOCTL_MAP_DMABUF:
		c->in = sizeof(c->arg.dmabuf);
		break;
	default:
		return -ENOTTY;
	}
	c->need = GASKET_NEED_WRITER_ALIVE;
	return 0;
}

static bool gasket_ioctl_permitted(struct gasket_dev *gdev, struct file *filp,
				   const struct gasket_ioctl_call *c)
{
	if (gdev->desc->ioctl_permissions_cb)
		return gdev->desc->ioctl_permissions_cb(filp, c->cmd);
	if (c->need == GASKET_NEED_READER)
		return filp->f_mode & FMODE_READ;
	return filp->f_mode & FMODE_WRITE;
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

/*
 * Checks of the copied argument that need no lock (the page table count
 * and the coherent buffer limit are fixed at probe), and the pinning.
 */
static int gasket_ioctl_prepare(struct gasket_dev *gdev,
				struct gasket_ioctl_call *c)
{
	union gasket_ioctl_arg *a = &c->arg;
	u64 base = gdev->desc->coherent_buffer_description.base;

	switch (c->cmd) {
	case GASKET_IOCTL_PAGE_TABLE_SIZE:
	case GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE:
	case GASKET_IOCTL_PARTITION_PAGE_TABLE:
	case GASKET_IOCTL_UNMAP_BUFFER:
		return a->pt.page_table_index < gdev->num_page_tables ?
		       0 : -EINVAL;
	case GASKET_IOCTL_MAP_BUFFER:
	case GASKET_IOCTL_MAP_BUFFER_FLAGS:
		/* MAP_BUFFER leaves flags zero: bidirectional. */
		if (gasket_ioctl_dma_dir(a->pt_flags.flags, &c->dir) ||
		    a->pt.page_table_index >= gdev->num_page_tables)
			return -EINVAL;
		return gasket_page_table_pin(gdev, a->pt.host_address,
					     a->pt.size, c->dir, &c->pin);
	case GASKET_IOCTL_MAP_DMABUF:
		if (a->dmabuf.page_table_index >= gdev->num_page_tables)
			return -EINVAL;
		return a->dmabuf.map ?
		       gasket_ioctl_dma_dir(a->dmabuf.flags, &c->dir) : 0;
	case GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR:
		if (a->coherent.page_table_index >= gdev->num_page_tables)
			return -EINVAL;
		if (!a->coherent.enable)
			return a->coherent.dma_address == base ? 0 : -EINVAL;
		if (!gasket_coherent_size_ok(gdev, a->coherent.size))
			return -EINVAL;
		/*
		 * The only result is the buffer's fixed mmap offset: written
		 * before the allocation, so a fault leaves nothing to undo.
		 */
		a->coherent.dma_address = base;
		return copy_to_user(c->argp, &a->coherent,
				    sizeof(a->coherent)) ? -EFAULT : 0;
	default:
		return 0;
	}
}

/* The work, with gdev->mutex held and the device not removed. */
static long gasket_ioctl_locked(struct gasket_dev *gdev,
				struct gasket_ioctl_call *c)
{
	union gasket_ioctl_arg *a = &c->arg;
	struct gasket_page_table *pt;

	switch (c->cmd) {
	case GASKET_IOCTL_RESET:
		return gasket_reset_locked(gdev);
	case GASKET_IOCTL_SET_EVENTFD:
		return gasket_interrupt_set_eventfd(gdev, a->eventfd.interrupt,
						    a->eventfd.event_fd);
	case GASKET_IOCTL_CLEAR_EVENTFD:
		return gasket_interrupt_clear_eventfd(gdev, c->value);
	case GASKET_IOCTL_LOOPBACK_INTERRUPT:
		return gasket_interrupt_loopback(gdev, c->value);
	case GASKET_IOCTL_NUMBER_PAGE_TABLES:
		a->count = gdev->num_page_tables;
		return 0;
	case GASKET_IOCTL_PAGE_TABLE_SIZE:
		a->pt.size = gasket_page_table_num_entries(gdev,
							   a->pt.page_table_index);
		return 0;
	case GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE:
		a->pt.size = gasket_page_table_num_simple_entries(gdev,
								  a->pt.page_table_index);
		return 0;
	case GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS:
		gasket_interrupt_reset_counts(gdev);
		return 0;
	case GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR:
		return a->coherent.enable ?
		       gasket_coherent_alloc(gdev, a->coherent.size) :
		       gasket_coherent_free(gdev);
	}

	/* The rest work on the page table the argument names. */
	if (c->cmd == GASKET_IOCTL_MAP_DMABUF) {
		pt = gdev->page_table[a->dmabuf.page_table_index];
		if (!a->dmabuf.map)
			return gasket_page_table_unmap_dmabuf(pt, a->dmabuf.dmabuf_fd,
							      a->dmabuf.device_address,
							      a->dmabuf.num_pages);
		return gasket_page_table_map_dmabuf(pt, a->dmabuf.dmabuf_fd,
						    a->dmabuf.device_address,
						    a->dmabuf.num_pages, c->dir);
	}
	pt = gdev->page_table[a->pt.page_table_index];
	switch (c->cmd) {
	case GASKET_IOCTL_PARTITION_PAGE_TABLE:
		return gasket_page_table_partition(pt, a->pt.size);
	case GASKET_IOCTL_MAP_BUFFER:
	case GASKET_IOCTL_MAP_BUFFER_FLAGS:
		return gasket_page_table_map(pt, &c->pin, a->pt.host_address,
					     a->pt.device_address, a->pt.size);
	case GASKET_IOCTL_UNMAP_BUFFER:
		return gasket_page_table_unmap(pt, a->pt.device_address,
					       a->pt.size);
	default:
		return -ENOTTY;
	}
}

/*
 * Ioctls of the device driver: the argument is copied in and out here as
 * its number describes it, so the driver's handler runs under the mutex
 * on kernel memory only.
 */
static long gasket_ioctl_device(struct gasket_dev *gdev, struct file *filp,
				unsigned int cmd, void __user *argp)
{
	union gasket_ioctl_arg a = { };
	size_t size = _IOC_SIZE(cmd);
	long ret;

	if (!gdev->desc->ioctl_handler_cb || size > sizeof(a.device))
		return -ENOTTY;
	if ((_IOC_DIR(cmd) & _IOC_WRITE) && copy_from_user(a.device, argp, size))
		return -EFAULT;

	ret = mutex_lock_killable(&gdev->mutex);
	if (ret)
		return ret;
	if (gdev->removed)
		ret = -ENODEV;
	else if (gdev->offline)
		ret = -EIO;
	else
		ret = gdev->desc->ioctl_handler_cb(gdev, filp, cmd, a.device);
	mutex_unlock(&gdev->mutex);

	if (!ret && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(argp, a.device, size))
		return -EFAULT;
	return ret;
}

long gasket_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct gasket_dev *gdev = filp->private_data;
	struct gasket_ioctl_call c = {
		.value = arg,
		.argp = (void __user *)arg,
	};
	long ret;

	if (_IOC_TYPE(cmd) != GASKET_IOCTL_BASE)
		return gasket_ioctl_device(gdev, filp, cmd, c.argp);

	ret = gasket_ioctl_lookup(cmd, &c);
	if (ret)
		return ret;
	if (!gasket_ioctl_permitted(gdev, filp, &c))
		return -EPERM;
	if (c.in && copy_from_user(&c.arg, c.argp, c.in))
		return -EFAULT;
	ret = gasket_ioctl_prepare(gdev, &c);
	if (ret)
		return ret;

	ret = mutex_lock_killable(&gdev->mutex);
	if (ret)
		goto out_unpin;
	/*
	 * The status the slow paths cached: a register read here would
	 * double the cost of a small MAP/UNMAP.
	 */
	if (gdev->removed)
		ret = -ENODEV;
	else if (gdev->offline && c.need != GASKET_NEED_READER)
		ret = -EIO;
	else if (c.need == GASKET_NEED_WRITER_ALIVE &&
		 READ_ONCE(gdev->status) != GASKET_STATUS_ALIVE)
		ret = -EIO;
	else
		ret = gasket_ioctl_locked(gdev, &c);
	mutex_unlock(&gdev->mutex);

	if (!ret && c.out && copy_to_user(c.argp, &c.arg, c.out))
		ret = -EFAULT;
out_unpin:
	/* Pages a successful map took over are no longer here. */
	gasket_page_table_unpin(&c.pin);
	return ret;
}
