// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Guest memory windows: many small ones in any order (a guest with an
 * IOMMU maps page by page), unmaps of a range of them, and the record of
 * released ranges.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest_mem.h"
#include "unit.h"

#define PAGE 4096ull

/* Pages mapped in a scattered order land sorted and are all found. */
static void test_many_windows(void)
{
	struct guest_mem gm;
	int fd = memfd_create("gmem-test", MFD_CLOEXEC);
	uint64_t i, n = 4096, base = 0x100000000ull;
	uint8_t *p;

	gmem_init(&gm);
	CHECK(ftruncate(fd, (off_t)(n * PAGE)) == 0);
	for (i = 0; i < n; i++) {
		uint64_t k = (i * 2741) % n;	/* 2741 is prime to 4096 */

		CHECK_EQ(gmem_map(&gm, base + k * PAGE, PAGE, fd, k * PAGE,
				  true), 0);
	}
	close(fd);
	CHECK_EQ(gm.count, n);
	for (i = 1; i < n; i++)
		CHECK(gm.win[i - 1].iova < gm.win[i].iova);
	/* The same memfd page through its window, and nothing across two. */
	p = gmem_ptr(&gm, base + 77 * PAGE + 8, 8, true);
	CHECK(p);
	p[0] = 0x5a;
	CHECK_EQ(*(uint8_t *)gmem_ptr(&gm, base + 77 * PAGE + 8, 1, false),
		 0x5a);
	CHECK(!gmem_ptr(&gm, base + 78 * PAGE - 4, 8, false));
	CHECK(!gmem_ptr(&gm, base - 8, 8, false));
	CHECK(!gmem_ptr(&gm, base + n * PAGE, 8, false));
	CHECK_EQ(gmem_map(&gm, base + 5 * PAGE + 100, 8, -1, 0, true),
		 -EEXIST);
	CHECK_EQ(gmem_mapped_bytes(&gm), n * PAGE);
	gmem_fini(&gm);
}

/*
 * An unmap takes one window, or every window wholly inside its range;
 * one that crosses an end of the range leaves everything as it was.
 */
static void test_unmap_ranges(void)
{
	struct guest_mem gm;
	uint64_t i;

	gmem_init(&gm);
	for (i = 0; i < 8; i++)
		CHECK_EQ(gmem_map(&gm, 0x10000 + i * PAGE, PAGE, -1, 0, true), 0);
	CHECK_EQ(gmem_map(&gm, 0x40000, 2 * PAGE, -1, 0, true), 0);
	CHECK_EQ(gmem_unmap(&gm, 0x10000 + 3 * PAGE, PAGE), 0);
	CHECK_EQ(gm.count, 8);
	/* Nothing there any more: no error, nothing else goes. */
	CHECK_EQ(gmem_unmap(&gm, 0x10000 + 3 * PAGE, PAGE), 0);
	CHECK_EQ(gmem_unmap(&gm, 0x100000000ull, 0x100000000ull), 0);
	CHECK_EQ(gm.count, 8);
	CHECK_EQ(gmem_unmap(&gm, 0x40000, PAGE), -EINVAL);
	CHECK_EQ(gmem_unmap(&gm, 0x3f000, 2 * PAGE), -EINVAL);
	CHECK_EQ(gm.count, 8);
	/* Everything below 0x40000: the seven pages left, not the pair. */
	CHECK_EQ(gmem_unmap(&gm, 0, 0x40000), 0);
	CHECK_EQ(gm.count, 1);
	CHECK_EQ(gm.win[0].iova, 0x40000);
	CHECK_EQ(gmem_unmap(&gm, 0, 0), -EINVAL);
	gmem_fini(&gm);
}

/*
 * What was unmapped is released until it is mapped again; neighbours
 * merge, a map in the middle splits, and never-mapped memory is not
 * released.
 */
static void test_released(void)
{
	struct guest_mem gm;
	uint64_t i, base = 0x200000;

	gmem_init(&gm);
	for (i = 0; i < 4; i++)
		CHECK_EQ(gmem_map(&gm, base + i * PAGE, PAGE, -1, 0, true), 0);
	CHECK(!gmem_released(&gm, base, 4 * PAGE));
	CHECK_EQ(gmem_unmap(&gm, base + PAGE, PAGE), 0);
	CHECK_EQ(gmem_unmap(&gm, base + 3 * PAGE, PAGE), 0);
	CHECK_EQ(gm.n_released, 2);
	CHECK_EQ(gmem_unmap(&gm, base + 2 * PAGE, PAGE), 0);
	CHECK_EQ(gm.n_released, 1);	/* pages 1-3, merged */
	CHECK(gmem_released(&gm, base + 2 * PAGE + 100, 8));
	CHECK(gmem_released(&gm, base + PAGE - 4, 8));	/* its last 4 bytes */
	CHECK(!gmem_released(&gm, base, PAGE));
	CHECK(!gmem_released(&gm, base + 4 * PAGE, PAGE));
	CHECK(!gmem_released(&gm, 0x7fff0000, 8));
	/* Page 2 mapped again: 1 and 3 stay released, 2 is not. */
	CHECK_EQ(gmem_map(&gm, base + 2 * PAGE, PAGE, -1, 0, true), 0);
	CHECK_EQ(gm.n_released, 2);
	CHECK(!gmem_released(&gm, base + 2 * PAGE, PAGE));
	CHECK(gmem_released(&gm, base + PAGE, PAGE));
	CHECK(gmem_released(&gm, base + 3 * PAGE, PAGE));
	/* A map over all of it takes both ranges out. */
	CHECK_EQ(gmem_unmap(&gm, base, 4 * PAGE), 0);
	CHECK_EQ(gm.n_released, 1);
	CHECK_EQ(gmem_map(&gm, base - PAGE, 6 * PAGE, -1, 0, true), 0);
	CHECK_EQ(gm.n_released, 0);
	CHECK(!gmem_released(&gm, base, 4 * PAGE));
	/* A new client forgets it all. */
	CHECK_EQ(gmem_unmap(&gm, base - PAGE, 6 * PAGE), 0);
	CHECK(gmem_released(&gm, base, PAGE));
	gmem_fini(&gm);
	CHECK(!gmem_released(&gm, base, PAGE));
}

const struct unit_test guest_mem_tests[] = {
	{ "guest memory: thousands of page windows, in any order", test_many_windows },
	{ "guest memory: an unmap takes the whole windows in its range, or none", test_unmap_ranges },
	{ "guest memory: what was unmapped stays released until mapped", test_released },
	{ NULL, NULL },
};
