/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * Gasket ioctls, common to every gasket device node (/dev/apex_N).
 *
 * Numbers and layouts are the ones existing clients (libedgetpu) use and
 * must not change. All structures are made of fixed-size fields, so 32-bit
 * and 64-bit processes share them.
 *
 * Errors common to all ioctls:
 *   ENOTTY  unknown ioctl number
 *   EPERM   the ioctl changes the device and the file was not opened for
 *           writing (only the owning process or CAP_SYS_ADMIN can do that)
 *   EFAULT  the argument pointer is not readable/writable; MAP_BUFFER: a
 *           buffer page the process may not write, whatever the direction
 *           (the chip cannot be limited to reading what it maps)
 *   EINVAL  a field is out of range: page table index, interrupt number,
 *           unaligned, empty or wrapping address range, range outside the
 *           current partition, unmapping something not mapped, reserved
 *           bits set, a coherent buffer size that is not a multiple of
 *           the page size (see "Pages" below) or above the device's limit
 *   EBUSY   mapping over a live mapping, repartitioning over live
 *           mappings, reconfiguring the coherent buffer while in use;
 *           MAP_BUFFER of a page the chip may write that is already
 *           mapped at 1023 device addresses
 *   EBADF   a descriptor that is not an eventfd / dma-buf
 *   ENOMEM  MAP_BUFFER: the pages would take the process over its
 *           RLIMIT_MEMLOCK (ulimit -l). Mapped user pages are pinned and
 *           count against that limit (as VmPin in /proc/PID/status) until
 *           unmapped, also by RESET or the last close; CAP_IPC_LOCK lifts
 *           it. The kernel log names the limit. Also: out of memory.
 *   EIO     the device is not alive (see sysfs "status"); RESET still works.
 *           Also, for a moment, every ioctl but the page table queries
 *           (and open() too) while the device is being reset by the
 *           kernel (sysfs "reset", PCI error recovery) or the system
 *           sleeps: the file, its mappings, mapped buffers and eventfds
 *           stay and work again afterwards.
 *   ENODEV  the device was removed while the file was open (mmap() on
 *           such a file fails with ENODEV too, and touching one of its
 *           earlier mappings raises SIGBUS)
 * A failed ioctl leaves the device and all existing mappings as they were.
 *
 * Pages: "page" below means the kernel's page (getconf PAGESIZE): 4 KiB
 * on x86, 4, 16 or 64 KiB on arm64. The device's own pages are always
 * 4 KiB, so with larger kernel pages each one fills several consecutive
 * device entries: PAGE_TABLE_SIZE, SIMPLE_PAGE_TABLE_SIZE and PARTITION
 * count device entries, while MAP/UNMAP host and device addresses and
 * sizes, dma-buf page counts and the coherent buffer size must be
 * multiples of the kernel's page (EINVAL otherwise). The Coral runtime
 * (libedgetpu) aligns everything to 4 KiB only (its kHostPageSize), and
 * it also maps the BAR2 window at 0x44000, which a kernel with 16 KiB
 * pages refuses (mmap() fails with EPERM: that page would also hold the
 * page-table and interrupt registers). It needs a kernel with 4 KiB pages.
 */
#ifndef _UAPI_GASKET_H
#define _UAPI_GASKET_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* GASKET_IOCTL_SET_EVENTFD argument. */
struct gasket_interrupt_eventfd {
	__u64 interrupt;	/* in: interrupt number, 0 .. count - 1 */
	__u64 event_fd;		/* in: an eventfd descriptor */
};

/* Argument of the page-table ioctls; which fields count depends on the ioctl. */
struct gasket_page_table_ioctl {
	__u64 page_table_index;	/* in: page table, 0 .. NUMBER_PAGE_TABLES - 1 */
	/*
	 * in: bytes (map, unmap) or entries (partition);
	 * out: entries (PAGE_TABLE_SIZE, SIMPLE_PAGE_TABLE_SIZE)
	 */
	__u64 size;
	__u64 host_address;	/* in: page-aligned user address (map) */
	__u64 device_address;	/* in: page-aligned device address (map, unmap) */
};

/* Bits of gasket_page_table_ioctl_flags.flags and ..._dmabuf.flags. */
#define GASKET_PT_FLAGS_STATUS_SHIFT		0	/* ignored on input */
#define GASKET_PT_FLAGS_DMA_DIRECTION_SHIFT	1
#define GASKET_PT_FLAGS_DMA_DIRECTION_MASK	(3u << 1)
/*
 * DMA direction values (bits 2:1); 3 is invalid. The direction is a
 * promise of the client's for the DMA API (caches, IOMMU permissions):
 * the chip's page-table entries have no read-only bit, so every buffer
 * must be writable by the process.
 */
#define GASKET_PT_DMA_BIDIRECTIONAL		0
#define GASKET_PT_DMA_TO_DEVICE			1	/* device only reads */
#define GASKET_PT_DMA_FROM_DEVICE		2	/* device only writes */
/* Bits 31:3 are reserved and must be zero. */

/* GASKET_IOCTL_MAP_BUFFER_FLAGS argument. */
struct gasket_page_table_ioctl_flags {
	struct gasket_page_table_ioctl base;	/* in: as for MAP_BUFFER */
	__u32 flags;				/* in: GASKET_PT_FLAGS_* */
	/*
	 * Not read: older headers leave this as implicit padding, so clients
	 * do not all clear it. Keeps the size (40) in the ioctl number.
	 */
	__u32 pad;
};

/*
 * GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR argument. The buffer is then
 * mmap()ed at offset dma_address and can be mapped to the device with
 * MAP_BUFFER like any other user buffer.
 */
struct gasket_coherent_alloc_config_ioctl {
	__u64 page_table_index;	/* in: page table index */
	__u64 enable;		/* in: non-zero allocates, zero frees */
	__u64 size;		/* in: bytes to allocate, whole pages */
	/* in (free): value returned by allocate; out: mmap offset of it */
	__u64 dma_address;
};

/* GASKET_IOCTL_MAP_DMABUF argument. */
struct gasket_page_table_ioctl_dmabuf {
	__u64 page_table_index;	/* in: page table index */
	__u64 device_address;	/* in: page-aligned device address */
	__s32 dmabuf_fd;	/* in: a dma-buf descriptor */
	__u32 num_pages;	/* in: pages to map from the start of the dma-buf */
	__u32 map;		/* in: non-zero maps, zero unmaps */
	__u32 flags;		/* in: GASKET_PT_FLAGS_* (map only) */
};

#define GASKET_IOCTL_BASE 0xDC

/* Reset the device. The argument is not used. */
#define GASKET_IOCTL_RESET _IO(GASKET_IOCTL_BASE, 0)
/* The same, under the number of the original 2018 interface. */
#define GASKET_IOCTL_RESET_LEGACY _IOW(GASKET_IOCTL_BASE, 0, unsigned long)

/* Signal an eventfd whenever the given interrupt fires. */
#define GASKET_IOCTL_SET_EVENTFD \
	_IOW(GASKET_IOCTL_BASE, 1, struct gasket_interrupt_eventfd)

/* Drop the eventfd of an interrupt; the argument is the interrupt number. */
#define GASKET_IOCTL_CLEAR_EVENTFD _IOW(GASKET_IOCTL_BASE, 2, unsigned long)

/*
 * Raise an interrupt by software, as if the device had: its eventfd is
 * signalled and its count goes up. The argument is the interrupt number.
 */
#define GASKET_IOCTL_LOOPBACK_INTERRUPT \
	_IOW(GASKET_IOCTL_BASE, 3, unsigned long)

/* out: number of page tables (a __u64). */
#define GASKET_IOCTL_NUMBER_PAGE_TABLES _IOR(GASKET_IOCTL_BASE, 4, __u64)

/* out .size: total entries of page table .page_table_index. */
#define GASKET_IOCTL_PAGE_TABLE_SIZE \
	_IOWR(GASKET_IOCTL_BASE, 5, struct gasket_page_table_ioctl)

/* out .size: entries of the simple part of page table .page_table_index. */
#define GASKET_IOCTL_SIMPLE_PAGE_TABLE_SIZE \
	_IOWR(GASKET_IOCTL_BASE, 6, struct gasket_page_table_ioctl)

/*
 * Split a page table: .size entries become simple entries, the rest
 * extended ones (each maps 512 device pages through a second-level table).
 */
#define GASKET_IOCTL_PARTITION_PAGE_TABLE \
	_IOW(GASKET_IOCTL_BASE, 7, struct gasket_page_table_ioctl)

/*
 * Map .size bytes at .host_address to .device_address, device may read
 * and write. Device addresses with bit 63 set are extended addresses.
 */
#define GASKET_IOCTL_MAP_BUFFER \
	_IOW(GASKET_IOCTL_BASE, 8, struct gasket_page_table_ioctl)

/* Unmap .size bytes at .device_address (.host_address is not used). */
#define GASKET_IOCTL_UNMAP_BUFFER \
	_IOW(GASKET_IOCTL_BASE, 9, struct gasket_page_table_ioctl)

/* Zero the per-interrupt counters shown in sysfs interrupt_counts. */
#define GASKET_IOCTL_CLEAR_INTERRUPT_COUNTS _IO(GASKET_IOCTL_BASE, 10)

/* Allocate or free the device's DMA-coherent buffer. */
#define GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR \
	_IOWR(GASKET_IOCTL_BASE, 11, struct gasket_coherent_alloc_config_ioctl)

/* MAP_BUFFER with a DMA direction in .flags. */
#define GASKET_IOCTL_MAP_BUFFER_FLAGS \
	_IOW(GASKET_IOCTL_BASE, 12, struct gasket_page_table_ioctl_flags)

/* Map or unmap the first .num_pages pages of a dma-buf. */
#define GASKET_IOCTL_MAP_DMABUF \
	_IOW(GASKET_IOCTL_BASE, 13, struct gasket_page_table_ioctl_dmabuf)

#endif /* _UAPI_GASKET_H */
