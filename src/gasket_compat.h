/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel interfaces that moved between 5.10 and 7.x, behind gasket_*
 * wrappers. Which variant a kernel has is decided by the compile probes in
 * compat/probes/ (run by the Makefile against the target headers, results
 * in compat/build/gasket_compat_probed.h), never by version numbers:
 * distribution kernels backport these changes.
 */
#ifndef __GASKET_COMPAT_H__
#define __GASKET_COMPAT_H__

#include <linux/device.h>
#include <linux/dma-buf.h>
#include <linux/eventfd.h>
#include <linux/mm.h>
#include <linux/module.h>

/* Missing? Build through src/Makefile: it runs compat/probe.sh first. */
#include "gasket_compat_probed.h"

/* 6.4: class_create() lost its module argument. */
static inline struct class *gasket_class_create(const char *name)
{
#ifdef GASKET_HAVE_CLASS_CREATE_ONE_ARG
	return class_create(name);
#else
	return class_create(THIS_MODULE, name);
#endif
}

/* 6.8: eventfd_signal() lost its count argument (it was always 1 here). */
static inline void gasket_eventfd_signal(struct eventfd_ctx *ctx)
{
#ifdef GASKET_HAVE_EVENTFD_SIGNAL_ONE_ARG
	eventfd_signal(ctx);
#else
	eventfd_signal(ctx, 1);
#endif
}

/* 6.3: vma->vm_flags may only change through vm_flags_set/clear(). */
static inline void gasket_vm_flags_set(struct vm_area_struct *vma,
				       unsigned long flags)
{
#ifdef GASKET_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

static inline void gasket_vm_flags_clear(struct vm_area_struct *vma,
					 unsigned long flags)
{
#ifdef GASKET_HAVE_VM_FLAGS_SET
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/*
 * 6.13: MODULE_IMPORT_NS() takes a string. dma-buf symbols are in the
 * DMA_BUF namespace since 5.16; importing it earlier is harmless.
 */
#ifdef GASKET_HAVE_MODULE_IMPORT_NS_IDENT
#define GASKET_MODULE_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS(DMA_BUF)
#else
#define GASKET_MODULE_IMPORT_NS_DMA_BUF() MODULE_IMPORT_NS("DMA_BUF")
#endif

/* Long-term pins (held until unmap) keep pages out of movable zones. */
#ifdef GASKET_HAVE_FOLL_LONGTERM
#define GASKET_FOLL_LONGTERM FOLL_LONGTERM
#else
#define GASKET_FOLL_LONGTERM 0
#endif

/* 6.2: dma_buf_map_attachment() expects the reservation lock held. */
static inline struct sg_table *
gasket_dma_buf_map_attachment(struct dma_buf_attachment *attach,
			      enum dma_data_direction dir)
{
#ifdef GASKET_HAVE_DMA_BUF_MAP_ATTACHMENT_UNLOCKED
	return dma_buf_map_attachment_unlocked(attach, dir);
#else
	return dma_buf_map_attachment(attach, dir);
#endif
}

static inline void
gasket_dma_buf_unmap_attachment(struct dma_buf_attachment *attach,
				struct sg_table *sgt,
				enum dma_data_direction dir)
{
#ifdef GASKET_HAVE_DMA_BUF_MAP_ATTACHMENT_UNLOCKED
	dma_buf_unmap_attachment_unlocked(attach, sgt, dir);
#else
	dma_buf_unmap_attachment(attach, sgt, dir);
#endif
}

#endif /* __GASKET_COMPAT_H__ */
