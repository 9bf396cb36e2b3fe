// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-mmap: the user-mappable parts of the device and nothing else. The
 * three 4 KiB BAR2 regions (0x40000, 0x44000, 0x48000, at the same offsets
 * in the file) and, once CONFIG_COHERENT_ALLOCATOR enabled it, the coherent
 * buffer at file offset 0x1000000 map; every other offset or length,
 * including the page-table and MSI-X registers, is refused. Lengths and
 * offsets are in the kernel's pages: with 16 KiB pages only the window at
 * 0x40000 maps (apex-pages says why).
 *
 *   apex-mmap [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"
#include "te.h"

#define COHERENT_OFFSET 0x1000000UL
#define COHERENT_SIZE (16 * page)

static const unsigned long regions[] = { 0x40000, 0x44000, 0x48000 };
static size_t page;	/* the kernel's page size */

/* mmap and unmap again; returns 0 or the positive errno. */
static int try_map(int fd, unsigned long off, size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

static void refused(int fd, unsigned long off, size_t len, const char *what)
{
	int err = try_map(fd, off, len, PROT_READ | PROT_WRITE);

	if (!err)
		tap_why("the mapping was accepted");
	tap_ok(err != 0, "mmap %s (offset 0x%lx, %zu bytes) is refused (%s)",
	       what, off, len, errname(err));
}

/* Enable returns the buffer's mmap offset; disable takes it back. */
static int coherent(int fd, bool enable, uint64_t *offset)
{
	struct gasket_coherent_alloc_config_ioctl io = {
		.page_table_index = 0,
		.enable = enable,
		.size = COHERENT_SIZE,
		.dma_address = *offset,
	};
	int err = xioctl(fd, GASKET_IOCTL_CONFIG_COHERENT_ALLOCATOR, &io);

	*offset = io.dma_address;
	return err;
}

static void test_regions(int fd)
{
	volatile uint64_t *p;
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!bar2_window_maps(regions[i], page)) {
			refused(fd, regions[i], page, "a BAR2 region whose page holds more");
			continue;
		}
		p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, (off_t)regions[i]);
		if (p == MAP_FAILED) {
			tap_why("%s", errname(errno));
			tap_ok(false, "mmap BAR2 region 0x%lx read-write",
			       regions[i]);
			continue;
		}
		/* The first region is the test engine: prove it is live. */
		if (i == 0 && p[0] != TE_ID_VALUE)
			tap_why("TE_ID reads 0x%llx", (unsigned long long)p[0]);
		tap_ok(i != 0 || p[0] == TE_ID_VALUE,
		       "mmap BAR2 region 0x%lx read-write%s", regions[i],
		       i == 0 ? ", the test engine answers" : "");
		munmap((void *)p, page);
	}
	i = bar2_window_maps(regions[1], page) ? 1 : 0;
	tap_ok(try_map(fd, regions[i], page, PROT_READ) == 0,
	       "mmap BAR2 region 0x%lx read-only", regions[i]);

	refused(fd, 0, page, "the start of BAR2");
	refused(fd, 0x41000, page, "BAR2 between the regions");
	refused(fd, 0x46000 & ~(page - 1), page,
		"the page-table, interrupt and MSI-X registers");
	refused(fd, 0x50000, page, "the page table");
	refused(fd, 0x40000, 2 * page, "a region plus the page after it");
	refused(fd, 0x40000 - page, 2 * page, "the page before a region plus it");
	refused(fd, 0, 0x100000, "all of BAR2");
	refused(fd, 0x100000, page, "past the end of BAR2");
}

static void test_coherent(int fd)
{
	uint64_t off = 0;
	uint8_t *p;
	int err;

	refused(fd, COHERENT_OFFSET, page,
		"the coherent buffer before it is allocated");
	err = coherent(fd, true, &off);
	if (err)
		tap_why("%s", errname(err));
	else if (off != COHERENT_OFFSET)
		tap_why("mmap offset 0x%llx", (unsigned long long)off);
	if (!tap_ok(!err && off == COHERENT_OFFSET,
		    "CONFIG_COHERENT_ALLOCATOR enables %lu KiB at mmap offset 0x%lx",
		    COHERENT_SIZE / 1024, COHERENT_OFFSET)) {
		tap_skip_dep("CONFIG_COHERENT_ALLOCATOR", "mmap of the coherent buffer");
		return;
	}
	p = mmap(NULL, COHERENT_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 COHERENT_OFFSET);
	if (p == MAP_FAILED) {
		tap_why("%s", errname(errno));
		tap_ok(false, "mmap the coherent buffer");
	} else {
		buf_fill(p, COHERENT_SIZE, 51);
		tap_ok(buf_check(p, COHERENT_SIZE, 51) < 0,
		       "mmap the coherent buffer, write and read it back");
		off = COHERENT_OFFSET;
		err = coherent(fd, false, &off);
		if (err != EBUSY)
			tap_why("got %s", errname(err));
		tap_ok(err == EBUSY,
		       "CONFIG_COHERENT_ALLOCATOR disable while mapped -> EBUSY");
		munmap(p, COHERENT_SIZE);
	}
	refused(fd, COHERENT_OFFSET, 2 * COHERENT_SIZE,
		"more than the coherent buffer");
	refused(fd, COHERENT_OFFSET + COHERENT_SIZE, page,
		"past the coherent buffer");
	off = COHERENT_OFFSET;
	err = coherent(fd, true, &off);
	if (err != EBUSY)
		tap_why("got %s", errname(err));
	tap_ok(err == EBUSY, "CONFIG_COHERENT_ALLOCATOR enable twice -> EBUSY");
	off = 0;
	err = coherent(fd, false, &off);
	if (err != EINVAL)
		tap_why("got %s", errname(err));
	tap_ok(err == EINVAL,
	       "CONFIG_COHERENT_ALLOCATOR disable with a wrong address -> EINVAL");
	off = COHERENT_OFFSET;
	err = coherent(fd, false, &off);
	if (err)
		tap_why("%s", errname(err));
	tap_ok(!err, "CONFIG_COHERENT_ALLOCATOR disables it");
	refused(fd, COHERENT_OFFSET, page,
		"the coherent buffer after it was freed");
}

int main(int argc, char **argv)
{
	const char *dev;
	int fd;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-mmap [DEVICE]\n", stderr);
		return 2;
	}
	dev = apex_dev_path(argc, argv);
	page = kernel_page();
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		tap_why("%s", strerror(errno));
	if (!tap_ok(fd >= 0, "open %s read-write", dev)) {
		tap_skip_dep("opening the device", "mmap tests");
		return tap_done();
	}
	test_regions(fd);
	test_coherent(fd);
	close(fd);
	return tap_done();
}
