// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * apex-pages: the driver with this kernel's page size (4 KiB on x86, 16 or
 * 64 KiB on arm64) against the device's 4 KiB pages (see "Pages:" in
 * gasket.h). BAR2 windows map only where a whole kernel page holds no
 * driver-only register; MAP/UNMAP_BUFFER take whole kernel pages, each of
 * which fills page/4 KiB consecutive device entries (a group). The test
 * engine copies through single 4 KiB entries inside groups, in the simple
 * and the extended table, to prove each one points at its own 4 KiB, and
 * through one page mapped at two device addresses.
 *
 *   apex-pages [DEVICE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "apexdev.h"
#include "tap.h"
#include "te.h"

#define COPY_TIMEOUT_MS 10000
#define SIMPLE_ENTRIES 4096	/* partition: 4096 simple + 4096 extended */
#define DONE_IRQ 4

static const unsigned long windows[] = { 0x40000, 0x44000, 0x48000 };

struct ctx {
	const char *dev;
	int fd;
	size_t page;		/* the kernel's page size */
	unsigned int kib;	/* the same in KiB, for the test names */
	unsigned int group;	/* 4 KiB device entries per kernel page */
	struct te te;		/* regs NULL when 0x40000 did not map */
	bool te_refused;	/* ... because this page size may not map it */
	int efd_done, efd_fatal;
	long long base;		/* node_0_num_mapped_pages at the start */
};

/* A user buffer and where it is (or was) mapped on the device. */
struct region {
	void *buf;
	size_t size;
	uint64_t dev;
	bool mapped;
};

static long long mapped_pages(const struct ctx *c)
{
	return sysfs_num(c->dev, "node_0_num_mapped_pages");
}

static bool expect_pages(const struct ctx *c, long long want)
{
	long long got = mapped_pages(c);

	if (got != want)
		tap_why("node_0_num_mapped_pages is %lld, want %lld", got, want);
	return got == want;
}

/* What mmap() of BAR2 window @i must give with this page size. */
static int window_want(const struct ctx *c, size_t i)
{
	if (windows[i] % c->page)
		return EINVAL;	/* mmap(2) itself: no page boundary */
	return bar2_window_maps(windows[i], c->page) ? 0 : EPERM;
}

/* Check 1: each window with the runtime's length; the kernel rounds it up. */
static void test_windows(const struct ctx *c)
{
	unsigned long gap = c->page == APEX_PAGE ? 0x41000 :
			    (0x4c000 + c->page - 1) / c->page * c->page;
	volatile uint64_t *p;
	int err, want;
	size_t i;

	for (i = 0; i < 3; i++) {
		want = window_want(c, i);
		p = mmap(NULL, APEX_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			 c->fd, (off_t)windows[i]);
		err = p == MAP_FAILED ? errno : 0;
		if (err != want)
			tap_why("got %s", errname(err));
		else if (!err && i == 0 && p[0] != TE_ID_VALUE)
			tap_why("TE_ID reads 0x%llx", (unsigned long long)p[0]);
		tap_ok(err == want && (err || i || p[0] == TE_ID_VALUE),
		       "%u KiB pages: mmap of BAR2 window 0x%lx (4096 bytes) -> %s%s",
		       c->kib, windows[i], want ? errname(want) : "maps",
		       !want && !i ? ", the test engine answers" : "");
		if (!err)
			munmap((void *)p, APEX_PAGE);
	}
	p = mmap(NULL, APEX_PAGE, PROT_READ, MAP_SHARED, c->fd, (off_t)gap);
	err = p == MAP_FAILED ? errno : 0;
	if (!err)
		munmap((void *)p, APEX_PAGE);
	if (err != EINVAL)
		tap_why("got %s", errname(err));
	tap_ok(err == EINVAL, "%u KiB pages: mmap at 0x%lx, no window, -> EINVAL",
	       c->kib, gap);
}

/* A MAP_BUFFER that must fail with EINVAL and leave nothing mapped. */
static void map_refused(const struct ctx *c, const char *buf, size_t host_off,
			uint64_t dev, size_t size, const char *what)
{
	int err = pt_map(c->fd, buf + host_off, dev, size);

	if (!err)
		pt_unmap(c->fd, buf + host_off, dev, size);
	if (err != EINVAL)
		tap_why("got %s", errname(err));
	tap_ok(err == EINVAL && expect_pages(c, c->base),
	       "%u KiB pages: MAP_BUFFER with %s -> EINVAL, nothing mapped",
	       c->kib, what);
}

/* Check 2: only whole kernel pages map; 4 KiB ones where that is all. */
static void test_alignment(const struct ctx *c)
{
	uint64_t dev = apex_simple_addr(32);
	char *buf = buf_alloc(2 * c->page);
	bool counted;
	int err;

	if (buf && c->page == APEX_PAGE) {
		err = pt_map(c->fd, buf + APEX_PAGE, dev, APEX_PAGE);
		counted = !err && expect_pages(c, c->base + 1);
		if (!err)
			err = pt_unmap(c->fd, buf + APEX_PAGE, dev, APEX_PAGE);
		if (err)
			tap_why("%s", errname(err));
		tap_ok(counted && !err && expect_pages(c, c->base),
		       "4 KiB pages: MAP_BUFFER and UNMAP_BUFFER of one 4 KiB page");
	} else if (buf) {
		map_refused(c, buf, APEX_PAGE, dev, c->page,
			    "a host address 4 KiB- but not page-aligned");
		map_refused(c, buf, 0, dev, APEX_PAGE, "4096 bytes");
		map_refused(c, buf, 0, dev + APEX_PAGE, c->page,
			    "a device address 4 KiB- but not page-aligned");
	} else {
		tap_ok(false, "allocate a buffer for the alignment checks");
	}
	buf_free(buf, 2 * c->page);
}

/* The engine copies @len bytes between device addresses, with no fault. */
static bool engine_copy(const struct ctx *c, uint64_t src, uint64_t dst,
			size_t len)
{
	struct te_run run;

	efd_drain(c->efd_done);
	efd_drain(c->efd_fatal);
	if (te_copy(&c->te, src, dst, len, DONE_IRQ, c->efd_done,
		    COPY_TIMEOUT_MS, &run)) {
		tap_why("engine still busy after %d ms", COPY_TIMEOUT_MS);
		return false;
	}
	if (run.status != TE_STATUS_DONE || !run.events) {
		tap_why("TE_STATUS 0x%llx (fault address 0x%llx), interrupt %s",
			(unsigned long long)run.status,
			(unsigned long long)run.fault,
			run.events ? "received" : "missing");
		return false;
	}
	return true;
}

/*
 * Copy @len bytes at offset @off of @s to the same offset of @d with the
 * engine: they must arrive there and nowhere else in @d.
 */
static bool copy_ok(const struct ctx *c, const struct region *s,
		    const struct region *d, size_t off, size_t len)
{
	const uint8_t *src = s->buf, *dst = d->buf;

	memset(d->buf, 0xa5, d->size);
	if (!engine_copy(c, s->dev + off, d->dev + off, len))
		return false;
	if (memcmp(dst + off, src + off, len)) {
		tap_why("the bytes differ from the source's at host offset 0x%zx",
			off);
		return false;
	}
	if (buf_check_byte(dst, off, 0xa5) >= 0 ||
	    buf_check_byte(dst + off + len, d->size - off - len, 0xa5) >= 0) {
		tap_why("bytes outside the copied range changed");
		return false;
	}
	return true;
}

/*
 * Without the engine, @name is a skip where this page size may not map its
 * window (64 KiB pages), a failure otherwise.
 */
static bool no_engine(const struct ctx *c, const char *name)
{
	if (c->te.regs)
		return false;
	if (c->te_refused)
		tap_skip("the test engine's window does not map with these pages",
			 "%s", name);
	else
		tap_skip_dep("mapping the test engine", "%s", name);
	return true;
}

static void copy_line(const struct ctx *c, const struct region *s,
		      const struct region *d, size_t off, const char *table,
		      const char *what)
{
	char name[200];

	snprintf(name, sizeof(name),
		 "%s table, %u KiB pages: copy 4096 bytes %s (offset 0x%zx)",
		 table, c->kib, what, off);
	if (!no_engine(c, name))
		tap_ok(copy_ok(c, s, d, off, APEX_PAGE), "%s", name);
}

/*
 * Checks 3 and 4: map @s and @d (whole kernel pages) into @table, count
 * the device entries, then copy through entries inside the groups. With
 * @cross, the buffers straddle a second-level table at that offset.
 */
static bool test_table(const struct ctx *c, const char *table,
		       struct region *s, struct region *d, size_t cross)
{
	long long before = mapped_pages(c);
	long long want = before + (long long)((s->size + d->size) / APEX_PAGE);
	int err;

	buf_fill(s->buf, s->size, 0x5a6e + (uint32_t)s->size);
	err = pt_map(c->fd, s->buf, s->dev, s->size);
	s->mapped = !err;
	if (!err) {
		err = pt_map(c->fd, d->buf, d->dev, d->size);
		d->mapped = !err;
	}
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	if (!tap_ok(!err && expect_pages(c, want),
		    "%s table, %u KiB pages: MAP_BUFFER of 2 x %zu kernel pages fills %lld device entries",
		    table, c->kib, s->size / c->page, want - before)) {
		tap_skip_dep("MAP_BUFFER", "%s table: copies in groups", table);
		return false;
	}
	copy_line(c, s, d, c->page - APEX_PAGE, table,
		  "from the last 4 KiB entry of the first kernel page");
	copy_line(c, s, d, c->page - APEX_PAGE / 2, table,
		  "across the kernel-page boundary");
	if (cross)
		copy_line(c, s, d, cross - APEX_PAGE / 2, table,
			  "across the second-level table boundary");
	return true;
}

/* Check 6: a group is unmapped whole or not at all. */
static void test_partial_unmap(const struct ctx *c, const struct region *s,
			       const struct region *d)
{
	int err, err2;

	if (c->page == APEX_PAGE) {
		tap_skip("4 KiB pages make no groups",
			 "UNMAP_BUFFER of part of a group -> EINVAL");
		return;
	}
	err = pt_unmap(c->fd, s->buf, s->dev, APEX_PAGE);
	err2 = pt_unmap(c->fd, s->buf, s->dev + APEX_PAGE, c->page);
	if (err != EINVAL || err2 != EINVAL)
		tap_why("got %s and %s", errname(err), errname(err2));
	tap_ok(err == EINVAL && err2 == EINVAL &&
	       expect_pages(c, c->base + (long long)((s->size + d->size) /
						     APEX_PAGE)) &&
	       (!c->te.regs || copy_ok(c, s, d, APEX_PAGE, APEX_PAGE)),
	       "%u KiB pages: UNMAP_BUFFER of its first 4 KiB, or of a page from its second entry, -> EINVAL, the group still maps",
	       c->kib);
}

/*
 * One kernel page mapped at two device addresses, writable both times (as
 * two small buffers in one page are): the engine's copies through either
 * address land in that page, and unmapping one leaves the other working.
 * The driver DMA-maps such a page once; two mappings of memory the device
 * writes break the DMA API's rules, which the debug kernel reports. @s is
 * mapped, 2 kernel pages, and the copies' source.
 */
static void test_same_page(const struct ctx *c, const struct region *s)
{
	const uint64_t first = apex_simple_addr(256), second = apex_simple_addr(320);
	const size_t half = APEX_PAGE / 2;
	const uint8_t *src = s->buf;
	long long before = mapped_pages(c);
	uint8_t *buf = buf_alloc(c->page);
	bool first_mapped, second_mapped, ok;
	int err;

	if (!tap_ok(buf != NULL, "allocate one kernel page to map twice"))
		return;
	err = pt_map(c->fd, buf, first, c->page);
	first_mapped = !err;
	if (!err)
		err = pt_map_flags(c->fd, buf, second, c->page,
				   APEX_DMA_FROM_DEVICE);
	second_mapped = first_mapped && !err;
	if (err)
		tap_why("MAP_BUFFER: %s", errname(err));
	ok = tap_ok(second_mapped && expect_pages(c, before + 2 * c->group),
		    "%u KiB pages: one page mapped at 0x%llx (bidirectional) and 0x%llx (from device)",
		    c->kib, (unsigned long long)first,
		    (unsigned long long)second);

	if (!no_engine(c, "copies through both addresses land in the one page")) {
		memset(buf, 0xa5, c->page);
		tap_ok(ok && engine_copy(c, s->dev, first, half) &&
		       engine_copy(c, s->dev + half, second + half, half) &&
		       !memcmp(buf, src, APEX_PAGE),
		       "%u KiB pages: copies through both addresses land in the one page",
		       c->kib);
	}

	err = first_mapped ? pt_unmap(c->fd, buf, first, c->page) : EINVAL;
	first_mapped = first_mapped && err;
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	if (!no_engine(c, "after the first address is unmapped, a copy through the second lands")) {
		memset(buf, 0xa5, c->page);
		tap_ok(!err && second_mapped &&
		       engine_copy(c, s->dev + APEX_PAGE, second, half) &&
		       !memcmp(buf, src + APEX_PAGE, half) &&
		       buf_check_byte(buf + half, c->page - half, 0xa5) < 0,
		       "%u KiB pages: after UNMAP_BUFFER of the first address, a copy through the second lands",
		       c->kib);
	}

	err = second_mapped ? pt_unmap(c->fd, buf, second, c->page) : EINVAL;
	second_mapped = second_mapped && err;
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	tap_ok(!err && expect_pages(c, before),
	       "%u KiB pages: UNMAP_BUFFER of the second address, node_0_num_mapped_pages back to %lld",
	       c->kib, before);
	if (first_mapped)
		pt_unmap(c->fd, buf, first, c->page);
	if (second_mapped)
		pt_unmap(c->fd, buf, second, c->page);
	buf_free(buf, c->page);
}

/*
 * The driver counts the users of a shared page up to 1023: one page
 * mapped at 1023 extended addresses maps, the 1024th map gets EBUSY and
 * changes nothing, and all of them unmap.
 */
#define MAX_PAGE_USERS 1023

/* Where test_page_users maps its page the @i-th time: extended tables 16 on. */
static uint64_t page_user_addr(const struct ctx *c, unsigned int i)
{
	unsigned int per_table = APEX_EXT_LVL1_ENTRIES / c->group;

	return apex_ext_addr(16 + i / per_table, (i % per_table) * c->group);
}

static void test_page_users(const struct ctx *c)
{
	long long before = mapped_pages(c);
	unsigned int i, mapped = 0;
	uint8_t *buf = buf_alloc(c->page);
	int err = 0, over;

	if (!tap_ok(buf != NULL, "allocate one kernel page to map %d times",
		    MAX_PAGE_USERS + 1))
		return;
	for (i = 0; i <= MAX_PAGE_USERS && !err; i++) {
		err = pt_map(c->fd, buf, page_user_addr(c, i), c->page);
		if (!err)
			mapped++;
	}
	over = err;
	if (mapped != MAX_PAGE_USERS || over != EBUSY)
		tap_why("%u maps succeeded, then %s", mapped, errname(over));
	tap_ok(mapped == MAX_PAGE_USERS && over == EBUSY &&
	       expect_pages(c, before + (long long)mapped * c->group),
	       "%u KiB pages: one page maps at %d device addresses, the next map -> EBUSY and changes nothing",
	       c->kib, MAX_PAGE_USERS);
	err = 0;
	for (i = 0; i < mapped && !err; i++)
		err = pt_unmap(c->fd, buf, page_user_addr(c, i), c->page);
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	tap_ok(!err && expect_pages(c, before),
	       "%u KiB pages: UNMAP_BUFFER of all %u, node_0_num_mapped_pages back to %lld",
	       c->kib, mapped, before);
	buf_free(buf, c->page);
}

/*
 * Check 5: everything unmapped, and a former group entry faults; the fault
 * kills the device, so RESET it for the programs that run next.
 */
static void test_unmap_all(const struct ctx *c, struct region *r, size_t n)
{
	uint64_t addr = r[0].dev + c->page - APEX_PAGE;
	char status[64] = "?";
	struct te_run run;
	int err = 0, e;
	size_t i;

	for (i = 0; i < n; i++) {
		e = r[i].mapped ? pt_unmap(c->fd, r[i].buf, r[i].dev, r[i].size) : 0;
		r[i].mapped = r[i].mapped && e;
		err = err ? err : e;
	}
	if (err)
		tap_why("UNMAP_BUFFER: %s", errname(err));
	tap_ok(!err && expect_pages(c, c->base),
	       "%u KiB pages: UNMAP_BUFFER of every buffer, node_0_num_mapped_pages back to %lld",
	       c->kib, c->base);
	if (no_engine(c, "copy from an unmapped entry faults"))
		return;
	efd_drain(c->efd_fatal);
	if (te_copy(&c->te, addr, r[1].dev, APEX_PAGE, DONE_IRQ, c->efd_fatal,
		    COPY_TIMEOUT_MS, &run) || !(run.status & TE_STATUS_ERROR) ||
	    run.fault != addr || !run.events)
		tap_why("TE_STATUS 0x%llx, TE_FAULT_ADDR 0x%llx, fatal-error interrupt %s",
			(unsigned long long)run.status,
			(unsigned long long)run.fault,
			run.events ? "received" : "missing");
	tap_ok(run.status & TE_STATUS_ERROR && run.fault == addr && run.events,
	       "%u KiB pages: copy from the unmapped entry 0x%llx faults: ERROR, fatal-error interrupt",
	       c->kib, (unsigned long long)addr);
	err = dev_reset(c->fd, false);
	if (!err)
		sysfs_attr(c->dev, "status", status, sizeof(status));
	if (err || strcmp(status, "ALIVE"))
		tap_why("RESET: %s, status %s", errname(err), status);
	tap_ok(!err && !strcmp(status, "ALIVE") && expect_pages(c, 0),
	       "RESET after the fault: ALIVE, nothing mapped");
}

static bool setup(struct ctx *c, uint64_t *simple)
{
	int err;

	c->fd = open(c->dev, O_RDWR | O_CLOEXEC);
	if (c->fd < 0) {
		tap_why("%s", strerror(errno));
		return false;
	}
	c->base = mapped_pages(c);
	if (c->base < 0) {
		tap_why("node_0_num_mapped_pages cannot be read");
		return false;
	}
	c->efd_done = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	c->efd_fatal = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	err = c->efd_done < 0 || c->efd_fatal < 0 ? errno : 0;
	if (!err)
		err = pt_simple_size(c->fd, simple);
	if (!err)
		err = set_eventfd(c->fd, DONE_IRQ, c->efd_done);
	if (!err)
		err = set_eventfd(c->fd, APEX_IRQ_FATAL, c->efd_fatal);
	if (!err)
		err = pt_partition(c->fd, SIMPLE_ENTRIES);
	if (err)
		tap_why("%s", errname(err));
	return !err;
}

int main(int argc, char **argv)
{
	struct ctx c = { .fd = -1, .efd_done = -1, .efd_fatal = -1 };
	struct region r[4] = { { 0 } };
	uint64_t simple = APEX_PT_ENTRIES, now = 0;
	size_t i;
	int err;

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fputs("usage: apex-pages [DEVICE]\n", stderr);
		return 2;
	}
	c.dev = apex_dev_path(argc, argv);
	c.page = kernel_page();
	c.kib = (unsigned int)(c.page / 1024);
	c.group = (unsigned int)(c.page / APEX_PAGE);
	tap_diag("kernel pages of %u KiB: %u device entries of 4 KiB each",
		 c.kib, c.group);
	if (!tap_ok(setup(&c, &simple),
		    "open %s, read node_0_num_mapped_pages, bind eventfds, partition into %d simple entries",
		    c.dev, SIMPLE_ENTRIES)) {
		tap_skip_dep("opening the device", "page-size tests");
		goto out;
	}
	test_windows(&c);
	err = te_map(&c.te, c.fd);
	c.te_refused = err && err == window_want(&c, 0);
	test_alignment(&c);

	/*
	 * Simple: 2 + 2 kernel pages at entries 64 and 128. Extended: 4 + 4,
	 * each with 2 pages at the end of one second-level table and 2 at the
	 * start of the next.
	 */
	r[0] = (struct region){ .size = 2 * c.page, .dev = apex_simple_addr(64) };
	r[1] = (struct region){ .size = 2 * c.page, .dev = apex_simple_addr(128) };
	r[2] = (struct region){ .size = 4 * c.page,
				.dev = apex_ext_addr(3, 512 - 2 * c.group) };
	r[3] = (struct region){ .size = 4 * c.page,
				.dev = apex_ext_addr(6, 512 - 2 * c.group) };
	for (i = 0; i < 4; i++)
		r[i].buf = buf_alloc(r[i].size);
	if (tap_ok(r[0].buf && r[1].buf && r[2].buf && r[3].buf,
		   "allocate 12 kernel pages of user buffers")) {
		if (test_table(&c, "simple", &r[0], &r[1], 0)) {
			test_partial_unmap(&c, &r[0], &r[1]);
			test_same_page(&c, &r[0]);
		} else {
			tap_skip_dep("MAP_BUFFER", "one page mapped at two addresses");
		}
		test_page_users(&c);
		test_table(&c, "extended", &r[2], &r[3], 2 * c.page);
		test_unmap_all(&c, r, 4);
	}

	/* Leave the partition as found; RESET made it all simple. */
	err = pt_partition(c.fd, simple);
	if (!err)
		err = pt_simple_size(c.fd, &now);
	if (err || now != simple)
		tap_why("%s, %llu simple entries", errname(err),
			(unsigned long long)now);
	tap_ok(!err && now == simple && expect_pages(&c, c.base),
	       "PARTITION_PAGE_TABLE back to %llu simple entries, nothing mapped",
	       (unsigned long long)simple);
out:
	for (i = 0; i < 4; i++)
		buf_free(r[i].buf, r[i].size);
	te_unmap(&c.te);
	if (c.fd >= 0) {
		clear_eventfd(c.fd, DONE_IRQ);
		clear_eventfd(c.fd, APEX_IRQ_FATAL);
		close(c.fd);
	}
	if (c.efd_done >= 0)
		close(c.efd_done);
	if (c.efd_fatal >= 0)
		close(c.efd_fatal);
	return tap_done();
}
