// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Guest RAM windows from VFIO_USER_DMA_MAP. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "guest_mem.h"

void gmem_init(struct guest_mem *gm)
{
	memset(gm, 0, sizeof(*gm));
}

static void gmem_release(struct gmem_window *w)
{
	if (w->host)
		munmap(w->host, w->size);
	w->host = NULL;
}

void gmem_fini(struct guest_mem *gm)
{
	size_t i;

	for (i = 0; i < gm->count; i++)
		gmem_release(&gm->win[i]);
	free(gm->win);
	gmem_init(gm);
}

static bool gmem_overlaps(const struct gmem_window *w, uint64_t iova,
			  uint64_t size)
{
	return iova < w->iova + w->size && w->iova < iova + size;
}

int gmem_map(struct guest_mem *gm, uint64_t iova, uint64_t size, int fd,
	     uint64_t offset, bool writable)
{
	struct gmem_window w = { .iova = iova, .size = size,
				 .writable = writable };
	size_t i;

	if (size == 0 || iova + size < iova)
		return -EINVAL;
	for (i = 0; i < gm->count; i++)
		if (gmem_overlaps(&gm->win[i], iova, size))
			return -EEXIST;
	if (gm->count == GMEM_MAX_WINDOWS)
		return -ENOSPC;
	if (gm->count == gm->cap) {
		size_t cap = gm->cap ? gm->cap * 2 : 16;
		struct gmem_window *n = realloc(gm->win, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		gm->win = n;
		gm->cap = cap;
	}
	if (fd >= 0) {
		int prot = PROT_READ | (writable ? PROT_WRITE : 0);
		void *p = mmap(NULL, size, prot, MAP_SHARED, fd, (off_t)offset);

		if (p == MAP_FAILED)
			return -errno;
		w.host = p;
	}
	gm->win[gm->count++] = w;
	return 0;
}

int gmem_unmap(struct guest_mem *gm, uint64_t iova, uint64_t size)
{
	size_t i;

	for (i = 0; i < gm->count; i++) {
		if (gm->win[i].iova != iova || gm->win[i].size != size)
			continue;
		gmem_release(&gm->win[i]);
		gm->win[i] = gm->win[--gm->count];
		return 0;
	}
	return -ENOENT;
}

void *gmem_ptr(const struct guest_mem *gm, uint64_t iova, uint64_t len,
	       bool write)
{
	size_t i;

	if (iova + len < iova)
		return NULL;
	for (i = 0; i < gm->count; i++) {
		const struct gmem_window *w = &gm->win[i];

		if (iova < w->iova || iova + len > w->iova + w->size)
			continue;
		if (!w->host || (write && !w->writable))
			return NULL;
		return w->host + (iova - w->iova);
	}
	return NULL;
}

uint64_t gmem_mapped_bytes(const struct guest_mem *gm)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < gm->count; i++)
		if (gm->win[i].host)
			total += gm->win[i].size;
	return total;
}
