/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * Helpers shared by the guest test programs: errno names, the device's
 * sysfs attributes, page-table ioctls and page-aligned buffers.
 */
#ifndef APEX_GUEST_APEXDEV_H
#define APEX_GUEST_APEXDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gasket.h"
#include "apex.h"

#define APEX_DEV_DEFAULT "/dev/apex_0"
#define APEX_PAGE 4096UL

/* Apex device addresses (the staging driver's page-table layout, 4 KiB pages). */
#define APEX_PT_ENTRIES 8192
#define APEX_EXT_BIT (1ULL << 63)
#define APEX_EXT_LVL0_SHIFT 21
#define APEX_EXT_LVL1_SHIFT 12
#define APEX_EXT_LVL1_ENTRIES 512

static inline uint64_t apex_simple_addr(unsigned int page)
{
	return (uint64_t)page << 12;
}

static inline uint64_t apex_ext_addr(unsigned int lvl0, unsigned int lvl1)
{
	return APEX_EXT_BIT | (uint64_t)lvl0 << APEX_EXT_LVL0_SHIFT |
	       (uint64_t)lvl1 << APEX_EXT_LVL1_SHIFT;
}

/* Interrupt sources of the Apex (enum apex_interrupt of the driver). */
#define APEX_IRQ_COUNT 13
#define APEX_IRQ_FATAL 12

/* MAP_BUFFER_FLAGS flags for each DMA direction; 3 is invalid. */
#define APEX_DMA_FLAGS(dir) ((uint32_t)(dir) << GASKET_PT_FLAGS_DMA_DIRECTION_SHIFT)
#define APEX_DMA_BIDIRECTIONAL APEX_DMA_FLAGS(GASKET_PT_DMA_BIDIRECTIONAL)
#define APEX_DMA_TO_DEVICE APEX_DMA_FLAGS(GASKET_PT_DMA_TO_DEVICE)
#define APEX_DMA_FROM_DEVICE APEX_DMA_FLAGS(GASKET_PT_DMA_FROM_DEVICE)
#define APEX_DMA_NONE APEX_DMA_FLAGS(3)

/* The kernel's page size (getconf PAGESIZE): MAP_BUFFER and mmap() take whole ones. */
size_t kernel_page(void);

/*
 * Whether mmap() of the 4 KiB BAR2 window at @off maps with kernel pages of
 * @page bytes: only where that whole page holds no driver-only register
 * (0x40000 up to 16 KiB pages; 0x44000 and 0x48000 with 4 KiB pages only).
 */
bool bar2_window_maps(unsigned long off, size_t page);

/* "EINVAL" for EINVAL, "0" for success. */
const char *errname(int err);

/* Device path from argv[1], $APEX_DEV or the default. */
const char *apex_dev_path(int argc, char **argv);

/* ioctl() returning 0 or the positive errno. */
int xioctl(int fd, unsigned long req, void *arg);

/* Read /sys/class/apex/<node>/<attr> into @buf without the newline. */
int sysfs_attr(const char *dev, const char *attr, char *buf, size_t len);

/* Write @val to /sys/class/apex/<node>/<attr>; 0 or the positive errno. */
int sysfs_attr_write(const char *dev, const char *attr, const char *val);

/* Write @val to any sysfs file (e.g. a module parameter); 0 or errno. */
int sysfs_write(const char *path, const char *val);

/* The attribute as a number, or -1 when it cannot be read or parsed. */
long long sysfs_num(const char *dev, const char *attr);

/* The MSI-X interrupt count of one source from interrupt_counts, or -1. */
long long sysfs_irq_count(const char *dev, unsigned int irq);

/*
 * Whether the chip's DMA goes through an IOMMU that translates: then it
 * reaches only what the driver mapped, and only in the direction mapped.
 */
bool chip_behind_iommu(const char *dev);

/* Page-table ioctls on table 0; each returns 0 or the positive errno. */
int pt_map(int fd, const void *host, uint64_t dev, size_t size);
int pt_map_flags(int fd, const void *host, uint64_t dev, size_t size,
		 uint32_t flags);
int pt_unmap(int fd, const void *host, uint64_t dev, size_t size);
int pt_partition(int fd, uint64_t simple_entries);
int pt_simple_size(int fd, uint64_t *entries);
int set_eventfd(int fd, uint64_t irq, int efd);

/* GASKET_IOCTL_RESET (_IO) or, @legacy, the 2018 staging driver's _IOW number. */
int dev_reset(int fd, bool legacy);
int clear_eventfd(int fd, uint64_t irq);

/* Anonymous page-aligned memory, or NULL; free with buf_free(). */
void *buf_alloc(size_t size);
void buf_free(void *buf, size_t size);

/* Fill with a pattern derived from @seed; check it (returns bad offset). */
void buf_fill(void *buf, size_t size, uint32_t seed);
long buf_check(const void *buf, size_t size, uint32_t seed);
long buf_check_byte(const void *buf, size_t size, uint8_t byte);

/* A field of /proc/self/status as a number (VmPin: KiB), or -1. */
long long proc_status_num(const char *name);

/* Monotonic milliseconds. */
long now_ms(void);

/*
 * Run argv and wait for it, its duration in *ms; true if it exited with
 * status 0 (otherwise the status goes to tap_why()).
 */
bool run_command(char **argv, long *ms);

#endif /* APEX_GUEST_APEXDEV_H */
