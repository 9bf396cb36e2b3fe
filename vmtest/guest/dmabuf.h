/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * dma-bufs from the exporters a Debian kernel may have, for the MAP_DMABUF
 * tests. Each exporter closes its own descriptors before it returns, so the
 * dma-buf's descriptor is the only thing that keeps the buffer alive.
 */
#ifndef APEX_GUEST_DMABUF_H
#define APEX_GUEST_DMABUF_H

#include <stddef.h>

struct dmabuf_exporter {
	const char *name;
	const char *needs;	/* what the kernel must have, for a skip */
	/* A read-write dma-buf of @size bytes, or -errno (-ENODEV: absent). */
	int (*alloc)(size_t size);
};

extern const struct dmabuf_exporter dmabuf_exporters[];
extern const size_t dmabuf_exporter_count;

/* How many dma-bufs the kernel has (debugfs dma_buf/bufinfo), or -1. */
long dmabuf_live_count(void);

#endif
