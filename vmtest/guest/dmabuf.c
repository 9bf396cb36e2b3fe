// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Three exporters, because Debian's kernels differ: 6.12 and later have the
 * system dma-heap and udmabuf; 5.10 and 6.1 have neither
 * (CONFIG_DMABUF_HEAPS and CONFIG_UDMABUF are not set), but every one of
 * them builds vgem, the virtual GEM driver meant for sharing buffers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dmabuf.h"

/* An absent device node means the kernel lacks the exporter. */
static int open_exporter(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT || errno == ENODEV ? -ENODEV : -errno;
	return fd;
}

static int heap_alloc(size_t size)
{
	struct dma_heap_allocation_data a = {
		.len = size,
		.fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap = open_exporter("/dev/dma_heap/system"), ret;

	if (heap < 0)
		return heap;
	ret = ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a) ? -errno : (int)a.fd;
	close(heap);
	return ret;
}

/* udmabuf wants a memfd that can no longer shrink. */
static int udmabuf_alloc(size_t size)
{
	struct udmabuf_create create = {
		.flags = UDMABUF_FLAGS_CLOEXEC,
		.size = size,
	};
	int dev = open_exporter("/dev/udmabuf"), memfd, ret;

	if (dev < 0)
		return dev;
	memfd = memfd_create("apex-udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd < 0 || ftruncate(memfd, size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		ret = -errno;
	} else {
		create.memfd = memfd;
		ret = ioctl(dev, UDMABUF_CREATE, &create);
		if (ret < 0)
			ret = -errno;
	}
	if (memfd >= 0)
		close(memfd);
	close(dev);
	return ret;
}

/*
 * The three DRM ioctls vgem needs, as include/uapi/drm/drm.h and
 * drm_mode.h define them (their headers come with libdrm, not libc).
 */
struct drm_version_info {
	int version_major, version_minor, version_patchlevel;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct drm_dumb_buffer {
	uint32_t height, width, bpp, flags;
	uint32_t handle, pitch;
	uint64_t size;
};

struct drm_prime_export {
	uint32_t handle, flags;
	int32_t fd;
};

#define DRM_GET_VERSION _IOWR('d', 0x00, struct drm_version_info)
#define DRM_PRIME_HANDLE_TO_FD _IOWR('d', 0x2d, struct drm_prime_export)
#define DRM_MODE_CREATE_DUMB _IOWR('d', 0xb2, struct drm_dumb_buffer)

/* The DRM card whose driver is vgem (the VGA card may be another). */
static int vgem_open(void)
{
	char path[32], name[16];
	int i, fd;

	for (i = 0; i < 16; i++) {
		struct drm_version_info v = {
			.name_len = sizeof(name) - 1,
			.name = name,
		};

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, DRM_GET_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -ENODEV;
}

static int vgem_alloc(size_t size)
{
	struct drm_dumb_buffer dumb = {
		.width = 1024,
		.bpp = 32,		/* 4096-byte rows */
		.height = size / 4096,
	};
	struct drm_prime_export export = { .flags = O_RDWR | O_CLOEXEC };
	int card = vgem_open(), ret;

	if (card < 0)
		return card;
	if (size % 4096)
		ret = -EINVAL;
	else if (ioctl(card, DRM_MODE_CREATE_DUMB, &dumb))
		ret = -errno;
	else if (dumb.size < size)
		ret = -ENOSPC;
	else {
		export.handle = dumb.handle;
		ret = ioctl(card, DRM_PRIME_HANDLE_TO_FD, &export) ? -errno :
								     export.fd;
	}
	close(card);	/* frees the handle; the dma-buf keeps the object */
	return ret;
}

const struct dmabuf_exporter dmabuf_exporters[] = {
	{ "dma-heap", "/dev/dma_heap/system (CONFIG_DMABUF_HEAPS_SYSTEM)", heap_alloc },
	{ "udmabuf", "/dev/udmabuf (CONFIG_UDMABUF)", udmabuf_alloc },
	{ "vgem", "a vgem card in /dev/dri (CONFIG_DRM_VGEM, modprobe vgem)", vgem_alloc },
};
const size_t dmabuf_exporter_count =
	sizeof(dmabuf_exporters) / sizeof(dmabuf_exporters[0]);

long dmabuf_live_count(void)
{
	FILE *f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "re");
	char line[256];
	long count = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Total %ld objects", &count) == 1)
			break;
	fclose(f);
	return count;
}
