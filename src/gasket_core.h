/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Gasket framework: the interface device drivers (apex) build on.
 *
 * A device driver owns its struct pci_driver. Its probe calls
 * gasket_pci_add_device() (PCI enable, BARs, DMA mask), does its own
 * hardware bring-up through the register helpers below, calls
 * gasket_enable_device() (page tables, MSI-X), puts the chip in the state
 * a first open expects, and ends with gasket_publish_device()
 * (/dev/<name>_N and sysfs). Its remove calls gasket_disable_device() then
 * gasket_pci_remove_device().
 * Everything else (open/close, ownership, mmap, the gasket ioctls) is the
 * framework's; the driver hooks in through struct gasket_driver_desc.
 */
#ifndef __GASKET_CORE_H__
#define __GASKET_CORE_H__

#include <linux/bitfield.h>
#include <linux/device.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/types.h>

#include "uapi/gasket.h"
#include "gasket_coherent.h"

#define GASKET_FRAMEWORK_VERSION "1.1.1"

/* Device drivers (class names) the framework serves at the same time. */
#define GASKET_FRAMEWORK_DESC_MAX 2
/* Devices per driver: /dev/<name>_0 .. _255. */
#define GASKET_DEV_MAX 256
#define GASKET_NUM_BARS 6
#define GASKET_MAX_NUM_PAGE_TABLES 1
/* Upper bound of the coherent buffer, in pages. */
#define GASKET_MAX_NUM_COHERENT_PAGES 16
/* Room for "<driver name>_<index>". */
#define GASKET_NAME_MAX 32

/* Device health, as shown in sysfs "status". */
enum gasket_status {
	GASKET_STATUS_DEAD = 0,		/* not initialised or failed */
	GASKET_STATUS_LAMED,		/* hardware fine, some kernel part missing */
	GASKET_STATUS_ALIVE,		/* ready */
	GASKET_STATUS_DRIVER_EXIT,	/* being removed */
};

/* Where an interrupt's MSI-X vector number goes in its INTVECCTL register. */
enum gasket_interrupt_packing {
	GASKET_PACK_0 = 0,	/* bits [w-1:0] of a shared register */
	GASKET_PACK_1,		/* bits [2w-1:w] */
	GASKET_PACK_2,		/* bits [3w-1:2w] */
	GASKET_PACK_3,		/* bits [4w-1:3w] */
	GASKET_UNPACKED,	/* the register holds only this vector */
};

/**
 * struct gasket_interrupt_desc - one device interrupt source
 * @index: interrupt number, also the MSI-X vector it is routed to
 * @reg: offset of its INTVECCTL register in the interrupt BAR
 * @packing: position of the vector number in @reg
 */
struct gasket_interrupt_desc {
	int index;
	u64 reg;
	enum gasket_interrupt_packing packing;
};

/**
 * struct gasket_mappable_region - a BAR range user space may mmap()
 * @start: offset into the BAR, 4 KiB aligned
 * @length_bytes: size, a multiple of 4 KiB
 * @max_page_size: an mmap() maps whole pages, so with pages larger than
 *	the region it also maps what lies around it. The naturally aligned
 *	block of this size around the region holds no register that only
 *	the driver may use: kernels with pages up to this size may map it.
 *	0: only with pages the region fills by itself.
 */
struct gasket_mappable_region {
	u64 start;
	u64 length_bytes;
	u64 max_page_size;
};

/**
 * struct gasket_bar_desc - a PCI BAR the framework maps
 * @size: bytes the driver uses; 0 = BAR not used. Probe fails if the BAR
 *	is smaller.
 * @permissions: VM_READ / VM_WRITE allowed to user mappings
 * @base: mmap() offset at which the BAR appears in the device node
 * @num_mappable_regions: entries in @mappable_regions
 * @mappable_regions: the only parts of the BAR user space may map
 */
struct gasket_bar_desc {
	u64 size;
	unsigned long permissions;
	u64 base;
	int num_mappable_regions;
	const struct gasket_mappable_region *mappable_regions;
};

/**
 * struct gasket_coherent_buffer_desc - the DMA-coherent buffer
 * @size: maximum bytes (at most GASKET_MAX_NUM_COHERENT_PAGES pages);
 *	0 = no coherent buffer
 * @permissions: VM_READ / VM_WRITE allowed to user mappings
 * @base: mmap() offset of the buffer, returned by
 *	GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR
 */
struct gasket_coherent_buffer_desc {
	u64 size;
	unsigned long permissions;
	u64 base;
};

/**
 * struct gasket_page_table_config - one device address translation table
 * @size_reg: BAR offset of the register holding the number of entries
 * @max_entries: most entries the driver expects; the register value must
 *	be a power of two no larger than this
 * @base_reg: BAR offset of entry 0 (64-bit entries follow)
 * @extended_reg: BAR offset of the register holding the number of simple
 *	entries (the first extended entry)
 * @extended_bit: device address bit marking extended addresses
 */
struct gasket_page_table_config {
	u64 size_reg;
	u32 max_entries;
	u64 base_reg;
	u64 extended_reg;
	int extended_bit;
};

struct gasket_dev;

/**
 * struct gasket_driver_desc - what a device driver tells the framework
 * @name: driver name: class /sys/class/@name, nodes /dev/@name_N
 * @driver_version: shown in sysfs driver_version
 * @owner: THIS_MODULE of the device driver (pinned while nodes are open)
 * @bar_descriptions: per BAR
 * @coherent_buffer_description: the coherent buffer, if any
 * @num_page_tables: entries in @page_table_configs
 * @page_table_bar_index: BAR holding the page table registers
 * @page_table_configs: per page table
 * @interrupt_bar_index: BAR holding the INTVECCTL registers
 * @num_interrupts: entries in @interrupts, also MSI-X vectors needed
 * @interrupts: per interrupt, indexed by interrupt number
 * @interrupt_pack_width: bits per vector number in packed registers
 * @sysfs_groups: NULL-terminated extra attribute groups of the class
 *	device, or NULL. Show/store get the device with
 *	gasket_dev_from_device().
 * @device_open_cb: first open of the node, gasket_dev.mutex held
 * @device_close_cb: last close of the node, gasket_dev.mutex held
 * @device_reset_cb: GASKET_IOCTL_RESET and the last writer's close,
 *	gasket_dev.mutex held; the framework then reprograms the interrupt
 *	routing and resets the page tables
 * @device_quiesce_cb: removal, before anything user space mapped or
 *	pinned is released: stop all DMA. gasket_dev.mutex held; the
 *	framework clears bus mastering right after, whatever it returns.
 * @device_restore_cb: the chip lost its state (a function reset, error
 *	recovery, system sleep) and is back: bring it up again, as open
 *	files need it if @in_use, else as for a closed node. gasket_dev.mutex
 *	held; the framework then reprograms the interrupt routing and writes
 *	the page tables back. May be NULL.
 * @device_status_cb: returns an enum gasket_status; may read registers,
 *	may be called with gasket_dev.mutex held, never from the MAP/UNMAP
 *	path (that one uses the status cached by gasket_get_status()).
 *	NULL = ALIVE.
 * @hardware_revision_cb: revision for sysfs, or negative errno; NULL hides
 *	the attribute
 * @interrupt_cb: called for every interrupt before its eventfd is
 *	signalled, in hard-IRQ context (process context for
 *	GASKET_IOCTL_LOOPBACK_INTERRUPT); must not sleep. May be NULL.
 * @ioctl_permissions_cb: replaces the framework's rule for the 0xDC
 *	ioctls (queries need a readable file, the rest a writable one):
 *	return true to allow @cmd. May be NULL.
 * @ioctl_handler_cb: every ioctl whose type is not 0xDC. Checks the
 *	caller itself (gasket_file_is_writer()) and returns -ENOTTY for
 *	unknown numbers. @arg is a kernel copy of the argument, of the size
 *	the number encodes (at most 64 bytes): copied in before the call if
 *	the number says _IOW, copied out after it, on success, if _IOR.
 *	Called with gasket_dev.mutex held, never after
 *	gasket_disable_device(). NULL = all -ENOTTY.
 */
struct gasket_driver_desc {
	const char *name;
	const char *driver_version;
	struct module *owner;

	struct gasket_bar_desc bar_descriptions[GASKET_NUM_BARS];
	struct gasket_coherent_buffer_desc coherent_buffer_description;

	int num_page_tables;
	int page_table_bar_index;
	const struct gasket_page_table_config *page_table_configs;

	int interrupt_bar_index;
	int num_interrupts;
	const struct gasket_interrupt_desc *interrupts;
	int interrupt_pack_width;

	const struct attribute_group **sysfs_groups;

	int (*device_open_cb)(struct gasket_dev *gdev);
	int (*device_close_cb)(struct gasket_dev *gdev);
	int (*device_reset_cb)(struct gasket_dev *gdev);
	int (*device_quiesce_cb)(struct gasket_dev *gdev);
	int (*device_restore_cb)(struct gasket_dev *gdev, bool in_use);
	int (*device_status_cb)(struct gasket_dev *gdev);
	int (*hardware_revision_cb)(struct gasket_dev *gdev);
	void (*interrupt_cb)(struct gasket_dev *gdev, int interrupt);
	bool (*ioctl_permissions_cb)(struct file *filp, unsigned int cmd);
	long (*ioctl_handler_cb)(struct gasket_dev *gdev, struct file *filp,
				 unsigned int cmd, void *arg);
};

/* A mapped BAR. */
struct gasket_bar_data {
	void __iomem *virt_base;	/* NULL if the BAR is not used */
	resource_size_t phys_base;
};

/* Which process may open the node for writing. */
struct gasket_ownership {
	bool is_owned;
	pid_t owner;			/* tgid of the owner */
	unsigned int write_open_count;	/* files open for writing */
};

struct gasket_page_table;
struct gasket_interrupt_data;
struct gasket_class_slot;
struct inode;

/*
 * One device served by the framework. Device drivers may read pci_dev,
 * dev, name, index and desc and use mutex; the rest is the framework's.
 */
struct gasket_dev {
	struct pci_dev *pci_dev;
	struct device *dev;		/* &pci_dev->dev: logging and DMA */
	const struct gasket_driver_desc *desc;
	char name[GASKET_NAME_MAX];	/* "<driver>_<index>" */
	int index;

	struct gasket_class_slot *slot;
	dev_t devt;
	struct device *dev_node;	/* /sys/class/<driver>/<name> */

	struct gasket_bar_data bar_data[GASKET_NUM_BARS];
	int num_page_tables;
	struct gasket_page_table *page_table[GASKET_MAX_NUM_PAGE_TABLES];
	struct gasket_interrupt_data *interrupt_data;

	/*
	 * Protects: ownership, open_count, reset_count, page tables,
	 * enabled, removed, offline, master_off; held around device callbacks. Taken
	 * before mmap_lock (the coherent buffer lookup), never inside it.
	 * Never held while user memory is read, written or pinned: those can
	 * wait as long as user space likes.
	 */
	struct mutex mutex;
	/*
	 * Protects: coherent_buffer; removed is also set under it. Taken
	 * inside mmap_lock (mmap, page faults, vma close) and inside mutex.
	 */
	struct mutex map_lock;
	struct gasket_ownership ownership;
	unsigned int open_count;	/* open files */
	unsigned int reset_count;
	struct gasket_coherent_buffer coherent_buffer;
	bool enabled;			/* gasket_enable_device() succeeded */
	bool removed;			/* gasket_disable_device() ran */
	bool offline;			/* between gasket_offline_device() and _online_ */
	bool master_off;		/* bus mastering cleared after a failed reset */
	/*
	 * enum gasket_status as last computed by gasket_get_status() on a
	 * slow path, or set DEAD by gasket_set_status_dead(); what the
	 * MAP/UNMAP path checks, so it never reads a register.
	 */
	int status;
	atomic_t dead_seq;		/* gasket_set_status_dead() calls */
	/*
	 * Owns the address space every open file of this device uses, so
	 * one unmap_mapping_range() reaches all user mappings, whichever
	 * node they were opened through.
	 */
	struct inode *mapping_inode;
	const struct attribute_group **node_groups; /* framework + driver */

	/*
	 * References: the PCI binding and each open file. The last put
	 * frees the structure, so files may outlive a removed device.
	 */
	struct kref kref;
	void *driver_data;
};

/* Register access: always through the BAR the device driver names. */
static inline u64 gasket_dev_read_64(struct gasket_dev *gdev, int bar, u64 off)
{
	return readq(gdev->bar_data[bar].virt_base + off);
}

static inline void gasket_dev_write_64(struct gasket_dev *gdev, u64 value,
				       int bar, u64 off)
{
	writeq(value, gdev->bar_data[bar].virt_base + off);
}

static inline u32 gasket_dev_read_32(struct gasket_dev *gdev, int bar, u64 off)
{
	return readl(gdev->bar_data[bar].virt_base + off);
}

static inline void gasket_dev_write_32(struct gasket_dev *gdev, u32 value,
				       int bar, u64 off)
{
	writel(value, gdev->bar_data[bar].virt_base + off);
}

/*
 * Read-modify-write: the bits in @mask take those of @value, e.g.
 * gasket_read_modify_write_32(gdev, bar, off, MY_FIELD,
 *			      FIELD_PREP(MY_FIELD, 2));
 */
static inline void gasket_read_modify_write_64(struct gasket_dev *gdev, int bar,
					       u64 off, u64 mask, u64 value)
{
	u64 old = gasket_dev_read_64(gdev, bar, off);

	gasket_dev_write_64(gdev, (old & ~mask) | (value & mask), bar, off);
}

static inline void gasket_read_modify_write_32(struct gasket_dev *gdev, int bar,
					       u64 off, u32 mask, u32 value)
{
	u32 old = gasket_dev_read_32(gdev, bar, off);

	gasket_dev_write_32(gdev, (old & ~mask) | (value & mask), bar, off);
}

static inline void *gasket_dev_get_drvdata(struct gasket_dev *gdev)
{
	return gdev->driver_data;
}

static inline void gasket_dev_set_drvdata(struct gasket_dev *gdev, void *data)
{
	gdev->driver_data = data;
}

/* The gasket device behind a class device (in sysfs show/store). */
static inline struct gasket_dev *gasket_dev_from_device(struct device *dev)
{
	return dev_get_drvdata(dev);
}

/* The gasket device behind an open node (in ioctl_handler_cb). */
static inline struct gasket_dev *gasket_dev_from_file(struct file *filp)
{
	return filp->private_data;
}

/**
 * gasket_pci_add_device() - start serving a PCI function
 * @pci_dev: the function being probed
 * @desc: the device driver's description; must outlive the device
 * @gdev_out: the new device
 *
 * Enables the function and bus mastering, sets the DMA mask (gasket module
 * parameter dma_bit_mask), maps every BAR with a non-zero size in @desc
 * after checking the BAR is large enough, and reserves the node name
 * "<name>_N" with the lowest free N. No node exists yet; the driver can
 * now touch registers to bring the hardware up. pci_get_drvdata() of
 * @pci_dev is the gasket device from here until gasket_pci_remove_device().
 *
 * Context: process context, from the PCI probe.
 * Return: 0 or a negative errno (nothing left to undo).
 */
int gasket_pci_add_device(struct pci_dev *pci_dev,
			  const struct gasket_driver_desc *desc,
			  struct gasket_dev **gdev_out);

/**
 * gasket_pci_remove_device() - stop serving a PCI function
 * @pci_dev: a function gasket_pci_add_device() succeeded on
 *
 * Undoes gasket_pci_add_device(). Call gasket_disable_device() first if
 * the device was enabled. Open files keep the structure (not the
 * hardware) until they are closed.
 *
 * Context: process context, from the PCI remove or a failed probe.
 */
void gasket_pci_remove_device(struct pci_dev *pci_dev);

/**
 * gasket_enable_device() - set up what user space will need
 * @gdev: device from gasket_pci_add_device()
 *
 * Reads the page table sizes from the hardware and sets the tables up
 * (all entries simple), allocates one MSI-X vector per interrupt and
 * routes the interrupts through their INTVECCTL registers. No node exists
 * yet: the driver may still put the chip into its idle state, then calls
 * gasket_publish_device().
 *
 * Context: process context, after the hardware is out of reset.
 * Return: 0 or a negative errno (nothing left to undo).
 */
int gasket_enable_device(struct gasket_dev *gdev);

/**
 * gasket_publish_device() - create the node once the device is ready
 * @gdev: an enabled device
 *
 * Caches the device's status, then creates /dev/<name>_N with the
 * framework's and the driver's sysfs attributes; opens may start as soon
 * as it does. On failure the device stays enabled and unpublished: undo
 * it with gasket_disable_device().
 *
 * Context: process context, the last step of the probe.
 * Return: 0 or a negative errno.
 */
int gasket_publish_device(struct gasket_dev *gdev);

/**
 * gasket_disable_device() - withdraw a device from user space
 * @gdev: an enabled device
 *
 * Removes the node and its sysfs attributes and marks the device removed
 * (open files now get -ENODEV). Then, in this order: device_quiesce_cb
 * stops the chip's DMA and bus mastering is cleared; the interrupts and
 * eventfd references go; every user mapping of the device is zapped, so
 * old pointers fault with SIGBUS; only then are the mapped pages, the
 * coherent buffer and the page tables released. No device callback runs
 * after it returns.
 *
 * Context: process context, from the PCI remove.
 */
void gasket_disable_device(struct gasket_dev *gdev);

/**
 * gasket_offline_device() - the chip is about to lose its state
 * @gdev: an enabled device
 *
 * For a function reset, PCI error recovery or system sleep. Stops the
 * chip's DMA (device_quiesce_cb), then keeps user space off the chip
 * until gasket_online_device(): opens and every ioctl but the page table
 * queries fail with EIO, and sysfs status reads DEAD. Open files, their
 * mappings, mapped buffers and eventfds stay, and work again afterwards;
 * a BAR mapping touched meanwhile reaches a chip in reset.
 *
 * Context: process context; may sleep. Not nested.
 */
void gasket_offline_device(struct gasket_dev *gdev);

/**
 * gasket_online_device() - bring the device back after gasket_offline_device()
 * @gdev: the device
 *
 * Calls device_restore_cb, then reprograms the interrupt routing and
 * writes every page table entry back, so the open files' buffers are
 * where they were. If the chip does not come back, the device stays DEAD
 * with bus mastering off until a GASKET_IOCTL_RESET succeeds.
 *
 * Context: process context; may sleep.
 * Return: 0 or the negative errno of device_restore_cb.
 */
int gasket_online_device(struct gasket_dev *gdev);

/**
 * gasket_reset() - reset the device as GASKET_IOCTL_RESET does
 * @gdev: an enabled device
 *
 * Takes the device mutex and calls gasket_reset_locked().
 *
 * Context: process context; may sleep.
 * Return: 0 or the negative errno of the reset callback.
 */
int gasket_reset(struct gasket_dev *gdev);

/**
 * gasket_reset_locked() - reset with the device mutex already held
 * @gdev: an enabled device
 *
 * Calls device_reset_cb, then reprograms the interrupt routing, unmaps
 * every page table entry and makes all entries simple again, and counts
 * the reset in sysfs reset_count. For use inside device_open_cb and the
 * other callbacks that run with the mutex held.
 *
 * Context: process context, gdev->mutex held.
 * Return: 0 or the negative errno of the reset callback.
 */
int gasket_reset_locked(struct gasket_dev *gdev);

/**
 * gasket_get_status() - current health of the device, freshly computed
 * @gdev: the device
 *
 * DEAD or DRIVER_EXIT if the device is not enabled or being removed,
 * otherwise the worst of device_status_cb, the interrupts and the page
 * tables. The result is cached for the MAP/UNMAP path, unless
 * gasket_set_status_dead() ran meanwhile. The framework calls it at
 * enable, open, reset and close; drivers call it from their own slow
 * paths (a periodic poll, a work item after an interrupt).
 *
 * Context: any process context; does not take the device mutex; may
 * read registers through device_status_cb.
 * Return: an enum gasket_status value.
 */
int gasket_get_status(struct gasket_dev *gdev);

/**
 * gasket_set_status_dead() - the driver learnt the device is dead
 * @gdev: the device
 *
 * Makes the cached status DEAD until the next gasket_get_status() finds
 * the device healthy again (typically after a good reset).
 *
 * Context: any, hard IRQ included.
 */
void gasket_set_status_dead(struct gasket_dev *gdev);

/**
 * gasket_file_is_writer() - was this node opened for writing?
 * @filp: an open gasket node
 *
 * Only the owning process (or CAP_SYS_ADMIN) can hold such a file, so
 * this is the framework's permission for ioctls that change the device.
 *
 * Return: true if @filp may change the device.
 */
bool gasket_file_is_writer(struct file *filp);

/**
 * gasket_page_table_num_entries() - size of a page table
 * @gdev: an enabled device
 * @index: page table index, < desc->num_page_tables
 *
 * Return: total entries, as read from the hardware at enable time.
 */
u32 gasket_page_table_num_entries(struct gasket_dev *gdev, int index);

/**
 * gasket_page_table_num_simple_entries() - simple part of a page table
 * @gdev: an enabled device
 * @index: page table index, < desc->num_page_tables
 *
 * Return: entries currently partitioned as simple entries.
 */
u32 gasket_page_table_num_simple_entries(struct gasket_dev *gdev, int index);

/**
 * gasket_page_table_num_mapped_pages() - pages currently mapped
 * @gdev: an enabled device
 * @index: page table index, < desc->num_page_tables
 *
 * Return: 4 KiB pages the device can reach through this table now.
 */
u32 gasket_page_table_num_mapped_pages(struct gasket_dev *gdev, int index);

#endif /* __GASKET_CORE_H__ */
