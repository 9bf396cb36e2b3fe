// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* Guest RAM windows from VFIO_USER_DMA_MAP, and what the guest released. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "guest_mem.h"

/* Released ranges beyond this many are forgotten; merging keeps far fewer. */
#define GMEM_MAX_RELEASED 65536

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
	free(gm->released);
	gmem_init(gm);
}

/* Index of the first window that ends above IOVA (count if none). */
static size_t gmem_find(const struct guest_mem *gm, uint64_t iova)
{
	size_t lo = 0, hi = gm->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (gm->win[mid].iova + gm->win[mid].size <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the first released range that ends above IOVA. */
static size_t released_find(const struct guest_mem *gm, uint64_t iova)
{
	size_t lo = 0, hi = gm->n_released;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (gm->released[mid].end <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Room for one more released range; false once the limit is reached. */
static bool released_reserve(struct guest_mem *gm)
{
	struct gmem_range *n;
	size_t cap;

	if (gm->n_released < gm->released_cap)
		return true;
	if (gm->n_released == GMEM_MAX_RELEASED)
		return false;
	cap = gm->released_cap ? gm->released_cap * 2 : 16;
	n = realloc(gm->released, cap * sizeof(*n));
	if (!n)
		return false;
	gm->released = n;
	gm->released_cap = cap;
	return true;
}

/* Insert [start, end) at index I, shifting the ones after it. */
static void released_insert(struct guest_mem *gm, size_t i, uint64_t start,
			    uint64_t end)
{
	if (!released_reserve(gm))
		return;
	memmove(&gm->released[i + 1], &gm->released[i],
		(gm->n_released - i) * sizeof(*gm->released));
	gm->released[i] = (struct gmem_range){ start, end };
	gm->n_released++;
}

/* Drop the released ranges [i, j). */
static void released_drop(struct guest_mem *gm, size_t i, size_t j)
{
	memmove(&gm->released[i], &gm->released[j],
		(gm->n_released - j) * sizeof(*gm->released));
	gm->n_released -= j - i;
}

/*
 * The guest unmapped [start, end). It was mapped, so it overlaps no
 * released range; it may touch one on either side.
 */
static void released_add(struct guest_mem *gm, uint64_t start, uint64_t end)
{
	size_t i = released_find(gm, start);
	bool prev = i > 0 && gm->released[i - 1].end == start;
	bool next = i < gm->n_released && gm->released[i].start == end;

	if (prev && next) {
		gm->released[i - 1].end = gm->released[i].end;
		released_drop(gm, i, i + 1);
	} else if (prev) {
		gm->released[i - 1].end = end;
	} else if (next) {
		gm->released[i].start = start;
	} else {
		released_insert(gm, i, start, end);
	}
}

/* The guest mapped [start, end) again: none of it is released now. */
static void released_cut(struct guest_mem *gm, uint64_t start, uint64_t end)
{
	size_t i = released_find(gm, start), j;
	struct gmem_range *r;

	if (i == gm->n_released || gm->released[i].start >= end)
		return;
	r = &gm->released[i];
	if (r->start < start && r->end > end) {
		uint64_t tail = r->end;

		r->end = start;
		released_insert(gm, i + 1, end, tail);
		return;
	}
	if (r->start < start) {
		r->end = start;
		i++;
	}
	for (j = i; j < gm->n_released && gm->released[j].end <= end; j++)
		;
	if (j < gm->n_released && gm->released[j].start < end)
		gm->released[j].start = end;
	released_drop(gm, i, j);
}

int gmem_map(struct guest_mem *gm, uint64_t iova, uint64_t size, int fd,
	     uint64_t offset, bool writable)
{
	struct gmem_window w = { .iova = iova, .size = size,
				 .writable = writable };
	size_t i;

	if (size == 0 || iova + size < iova)
		return -EINVAL;
	i = gmem_find(gm, iova);
	if (i < gm->count && gm->win[i].iova < iova + size)
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
	memmove(&gm->win[i + 1], &gm->win[i],
		(gm->count - i) * sizeof(*gm->win));
	gm->win[i] = w;
	gm->count++;
	released_cut(gm, iova, iova + size);
	return 0;
}

int gmem_unmap(struct guest_mem *gm, uint64_t iova, uint64_t size)
{
	uint64_t end = iova + size;
	size_t i, j, k;

	if (size == 0 || end < iova)
		return -EINVAL;
	i = gmem_find(gm, iova);
	for (j = i; j < gm->count && gm->win[j].iova < end; j++)
		if (gm->win[j].iova < iova ||
		    gm->win[j].iova + gm->win[j].size > end)
			return -EINVAL;
	for (k = i; k < j; k++) {
		released_add(gm, gm->win[k].iova,
			     gm->win[k].iova + gm->win[k].size);
		gmem_release(&gm->win[k]);
	}
	memmove(&gm->win[i], &gm->win[j], (gm->count - j) * sizeof(*gm->win));
	gm->count -= j - i;
	return 0;
}

void *gmem_ptr(const struct guest_mem *gm, uint64_t iova, uint64_t len,
	       bool write)
{
	const struct gmem_window *w;
	size_t i;

	if (iova + len < iova)
		return NULL;
	i = gmem_find(gm, iova);
	if (i == gm->count)
		return NULL;
	w = &gm->win[i];
	if (iova < w->iova || iova + len > w->iova + w->size)
		return NULL;
	if (!w->host || (write && !w->writable))
		return NULL;
	return w->host + (iova - w->iova);
}

bool gmem_released(const struct guest_mem *gm, uint64_t iova, uint64_t len)
{
	size_t i = released_find(gm, iova);

	return i < gm->n_released && gm->released[i].start < iova + len;
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
